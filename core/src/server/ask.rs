//! [`RequestContext::request_client`]: ask the client for something from one call site, in both
//! eras (REQUIREMENTS JR-05, MRTR-01…09, META-04, SAMP-01/02, ELIC-01, ROOT-01; SEP-2322).
//!
//! **Legacy** (a session after `initialize`): a real server→client request on the originating
//! request's stream ([`RequestContext::peer_request`]), after the capability checks against what
//! the client declared in `initialize`.
//!
//! **2026-07-28**: servers send no requests (JR-05); a handler that needs input answers
//! `input_required` and the client retries (MRTR). `request_client` hides that by deterministic
//! re-execution. Every call in one run of the handler gets a sequential key
//! (`mcpcore.request.0`, `.1`, …). When the answer under that key is known for the same method and
//! params, from this retry's `inputResponses` or carried from earlier rounds, the call returns it
//! at once. Otherwise the call is recorded and fails with [`PeerError::InputRequired`]; when the
//! handler then fails (by propagating that error with `?`, or with any other error) the engine
//! answers `input_required` listing every request the run recorded. Answers of earlier rounds
//! travel in the `requestState`, sealed like any state (MRTR-06), because the client sends only
//! the answers of the latest round (MRTR-04); a handler's own state rides inside it.
//!
//! A request that already had a key — one a legacy mcpcore server sent for a round of its own
//! (the shim names each leg with `_meta["dev.mcpcore/inputKey"]`), passed on by a bridge —
//! keeps that key, so a round crossing eras reaches the client under the names its server
//! chose; the marker itself is not passed on.
//!
//! The handler runs again **from the start** on every round: whatever it does before a
//! `request_client` call happens again each round, so side effects belong after the last call (or
//! must be idempotent), and the calls must come in the same order with the same params on every
//! run (a call whose method or params changed is asked again). Only `tools/call`, `prompts/get`
//! and `resources/read` may answer `input_required` (MRTR-01); elsewhere, and for methods an
//! `inputRequests` entry cannot carry (MRTR-02), the call fails with a precise error at once.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

use super::context::{has_capability, RequestContext};
use super::handler::{InputRequired, Outcome};
use super::mrtr::{self, Retry};
use super::peer::PeerError;
use super::session::lock;
use crate::error::{codes, ErrorObject, HandlerError};
use crate::security::sealing::arguments_digest;

/// Keys of the `inputRequests` entries made by [`RequestContext::request_client`], followed by
/// the call's position in the handler run.
pub(crate) const KEY_PREFIX: &str = "mcpcore.request.";

/// The `_meta` key naming the `inputRequests` key of a server→client request sent for one (the
/// legacy shim sets it; [`RequestContext::request_client`] on a 2026-07-28 request honours it).
/// Its prefix is ours (JR-07: `mcpcore` is no reserved label).
pub(crate) const INPUT_KEY_META: &str = "dev.mcpcore/inputKey";

/// The longest key taken from [`INPUT_KEY_META`]; a longer one gets a sequential key.
const MAX_OWN_KEY: usize = 128;

/// Marks a `requestState` that carries the answers of earlier rounds (never seen by handlers).
const STATE_PREFIX: &str = "mcpcore.requests/1:";

/// The methods that may answer `input_required` (MRTR-01).
const MRTR_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

/// The methods an `inputRequests` entry may carry (MRTR-02).
const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

/// One answer, with the digest of the request it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Answer {
    d: String,
    r: Value,
}

/// What the engine keeps in the `requestState` between rounds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Carried {
    /// Key → answer, for every request answered so far.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    answers: BTreeMap<String, Answer>,
    /// Key → digest of the requests of the latest round (their answers come in `inputResponses`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    asked: BTreeMap<String, String>,
    /// The handler's own state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
}

/// The `request_client` bookkeeping of one handler run (modern requests only).
#[derive(Debug, Default)]
pub(crate) struct Asks {
    /// Calls made so far in this run.
    next: usize,
    /// Answers known for this run.
    answers: BTreeMap<String, Answer>,
    /// Requests of this run without an answer: key → `{method, params}`.
    pending: Map<String, Value>,
    /// Digests of `pending`.
    asked: BTreeMap<String, String>,
    /// Keys given out in this run.
    used: std::collections::BTreeSet<String>,
}

impl Asks {
    /// The key of the run's next call: its own when it brought a free one, else the next
    /// sequential key not taken in this run.
    fn key(&mut self, own: Option<String>) -> String {
        let n = self.next;
        self.next += 1;
        let key = match own.filter(|k| !self.used.contains(k)) {
            Some(k) => k,
            None => (n..)
                .map(|i| format!("{KEY_PREFIX}{i}"))
                .find(|k| !self.used.contains(k))
                .unwrap_or_default(),
        };
        self.used.insert(key.clone());
        key
    }

    /// The bookkeeping for a fresh run of a handler with the same known answers (a task's
    /// handler after its gate ran on the request).
    pub(crate) fn for_rerun(mut self) -> Self {
        self.next = 0;
        self.pending.clear();
        self.asked.clear();
        self.used.clear();
        self
    }
}

/// Take the carried answers out of a verified retry: `retry.request_state` becomes the handler's
/// own state again, and the answers of the latest round join the carried ones.
///
/// # Errors
/// -32602 "Invalid or expired requestState" for a carried state that does not parse.
pub(crate) fn from_retry(retry: &mut Retry) -> Result<Asks, ErrorObject> {
    let Some(json) = retry
        .request_state
        .as_deref()
        .and_then(|s| s.strip_prefix(STATE_PREFIX))
    else {
        return Ok(Asks::default());
    };
    let carried: Carried = serde_json::from_str(json).map_err(|_| mrtr::invalid_state())?;
    retry.request_state = carried.state;
    let mut answers = carried.answers;
    if let Some(responses) = &retry.input_responses {
        for (key, d) in carried.asked {
            if let Some(r) = responses.get(&key) {
                answers.insert(key, Answer { d, r: r.clone() });
            }
        }
    }
    Ok(Asks {
        answers,
        ..Asks::default()
    })
}

/// A handler's answer as the method's outcome: an error after unanswered `request_client` calls
/// becomes `input_required` for them (whatever the error; MRTR-07).
///
/// # Errors
/// The handler's error for the wire when nothing was left unanswered.
pub(crate) fn settle(
    ctx: &RequestContext,
    r: Result<Outcome, HandlerError>,
    method: &str,
) -> Result<Outcome, ErrorObject> {
    match r {
        // Only `tools/call` sends a JSON-text result as written; the others reshape theirs.
        Ok(o) if method == "tools/call" => Ok(o),
        Ok(o) => Ok(o.parsed()),
        Err(e) => {
            let pending = lock(&ctx.inner.asks).pending.clone();
            if pending.is_empty() {
                return Err(e.into_wire(method));
            }
            tracing::debug!(method, error = %e, "the handler needs input from the client");
            Ok(Outcome::InputRequired(InputRequired {
                input_requests: pending,
                request_state: None,
            }))
        }
    }
}

/// Complete a modern `input_required` outcome: add the run's unanswered `request_client` calls
/// and wrap the handler's state with the answers so far. A run that never called
/// `request_client` and carries nothing is left as the handler wrote it.
pub(crate) fn finish(ctx: &RequestContext, mut ir: InputRequired) -> InputRequired {
    let asks = lock(&ctx.inner.asks);
    if asks.next == 0 && asks.answers.is_empty() {
        return ir;
    }
    for (key, req) in &asks.pending {
        ir.input_requests
            .entry(key.clone())
            .or_insert_with(|| req.clone());
    }
    let carried = Carried {
        answers: asks.answers.clone(),
        asked: asks.asked.clone(),
        state: ir.request_state.take(),
    };
    match serde_json::to_string(&carried) {
        Ok(json) => ir.request_state = Some(format!("{STATE_PREFIX}{json}")),
        Err(e) => {
            tracing::error!(error = %e, "cannot carry the answers so far; they will be asked again");
            ir.request_state = carried.state;
        }
    }
    ir
}

/// What makes two requests the same question: everything but a URL-mode elicitation's
/// `elicitationId`, which a legacy server's shim mints afresh each time it runs the handler
/// (a bridge in front of it would otherwise ask its client again every round).
fn same_question(entry: &Value) -> std::borrow::Cow<'_, Value> {
    let url_mode = entry.pointer("/params/mode").and_then(Value::as_str) == Some("url");
    if !url_mode || entry.pointer("/params/elicitationId").is_none() {
        return std::borrow::Cow::Borrowed(entry);
    }
    let mut e = entry.clone();
    if let Some(p) = e.get_mut("params").and_then(Value::as_object_mut) {
        p.remove("elicitationId");
    }
    std::borrow::Cow::Owned(e)
}

/// Take [`INPUT_KEY_META`] out of a request's params (dropping `_meta` when that was all of
/// it): the key when it is a usable one.
fn take_own_key(params: &mut Value) -> Option<String> {
    let meta = params.get_mut("_meta")?.as_object_mut()?;
    let key = meta.remove(INPUT_KEY_META)?;
    if meta.is_empty() {
        if let Some(p) = params.as_object_mut() {
            p.remove("_meta");
        }
    }
    key.as_str()
        .filter(|k| !k.is_empty() && k.len() <= MAX_OWN_KEY)
        .map(str::to_owned)
}

fn unavailable(message: String) -> PeerError {
    PeerError::Unavailable(ErrorObject::new(codes::INTERNAL_ERROR, message))
}

impl RequestContext {
    /// Ask the client: `sampling/createMessage`, `elicitation/create`, `roots/list`, `ping` or
    /// any method, from one call site in either era.
    ///
    /// - **Legacy** sessions: a real server→client request (with the server's
    ///   `peer_request_timeout`), after checking the capabilities the client declared.
    /// - **2026-07-28** requests (no server→client requests, JR-05): deterministic re-execution
    ///   over `input_required` (MRTR). The n-th call of a handler run has the key
    ///   `mcpcore.request.<n>`. If the client already answered that key for the same method and
    ///   params, the call returns the answer at once; otherwise it fails with
    ///   [`PeerError::InputRequired`]. Propagate it with `?`: a handler that fails after such a
    ///   call (with any error) is answered `input_required` listing every unanswered call of the
    ///   run, the client retries, and the handler **runs again from the start** with the answers
    ///   (earlier rounds' answers travel in the sealed `requestState`). Work done before a call
    ///   is repeated every round, so put side effects after the last call or make them
    ///   idempotent, and make the same calls in the same order on every run. To ask several
    ///   things in one round, make the calls before propagating the first error. Only
    ///   `tools/call`, `prompts/get` and `resources/read` may ask (MRTR-01), and only for
    ///   `elicitation/create`, `sampling/createMessage` and `roots/list` (MRTR-02); anything
    ///   else fails at once with [`PeerError::Unavailable`] saying so.
    ///
    /// # Errors
    /// See [`PeerError`]. A capability the client did not declare is
    /// [`PeerError::MissingCapability`] on legacy sessions and [`PeerError::Unavailable`] with
    /// -32021 and `data.requiredCapabilities` on 2026-07-28 requests (META-04, MRTR-03), before
    /// anything is sent.
    pub async fn request_client(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, PeerError> {
        self.request_client_with(method, params, None).await
    }

    /// [`RequestContext::request_client`] with a timeout for the legacy request (`None`: the
    /// server's `peer_request_timeout`; modern requests do not wait).
    ///
    /// # Errors
    /// As [`RequestContext::request_client`].
    pub async fn request_client_with(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        if self.is_cancelled() {
            return Err(PeerError::Cancelled);
        }
        if self.is_modern() {
            return self.ask_modern(method, params);
        }
        self.require_legacy_capability(method, params.as_ref())?;
        self.peer_request(method, params, timeout).await
    }

    /// The capability checks of a legacy server→client request (SAMP-01/02, ELIC-01, ROOT-01):
    /// `sampling` (and `sampling.tools` when tools are used), `elicitation` in the request's
    /// mode (a bare `elicitation: {}` means form), `roots`.
    fn require_legacy_capability(
        &self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), PeerError> {
        let caps = self.client_capabilities();
        let need = |path: &[&str]| {
            if has_capability(&caps, path) {
                Ok(())
            } else {
                Err(PeerError::MissingCapability(path.join(".")))
            }
        };
        let param = |k: &str| params.and_then(|p| p.get(k));
        match method {
            "sampling/createMessage" => {
                need(&["sampling"])?;
                if param("tools").is_some() || param("toolChoice").is_some() {
                    need(&["sampling", "tools"])?;
                }
                Ok(())
            }
            "elicitation/create" => {
                let Some(el) = caps.get("elicitation").filter(|v| v.is_object()) else {
                    return Err(PeerError::MissingCapability("elicitation".into()));
                };
                let mode = param("mode").and_then(Value::as_str).unwrap_or("form");
                let declared = el
                    .as_object()
                    .is_some_and(|o| o.is_empty() && mode == "form")
                    || el.get(mode).is_some_and(|v| !v.is_null());
                if declared {
                    Ok(())
                } else {
                    Err(PeerError::MissingCapability(format!("elicitation.{mode}")))
                }
            }
            "roots/list" => need(&["roots"]),
            _ => Ok(()),
        }
    }

    /// The 2026-07-28 half: a recorded answer, or a new `inputRequests` entry.
    fn ask_modern(&self, method: &str, params: Option<Value>) -> Result<Value, PeerError> {
        let during = self.method();
        if !MRTR_METHODS.contains(&during) {
            return Err(unavailable(format!(
                "{method} cannot be asked of the client during {during} on a 2026-07-28 request: \
                 only tools/call, prompts/get and resources/read may require input (MRTR-01)"
            )));
        }
        if !INPUT_METHODS.contains(&method) {
            return Err(unavailable(format!(
                "{method} cannot be sent to the client on a 2026-07-28 request: servers send no \
                 requests (JR-05) and input requests carry only elicitation/create, \
                 sampling/createMessage and roots/list (MRTR-02)"
            )));
        }
        let mut params = params;
        let own = params.as_mut().and_then(take_own_key);
        let mut entry = Map::new();
        entry.insert("method".into(), Value::String(method.to_owned()));
        if let Some(p) = params {
            entry.insert("params".into(), p);
        }
        let entry = Value::Object(entry);
        mrtr::check_request(&entry, &self.client_capabilities()).map_err(PeerError::Unavailable)?;
        let digest = arguments_digest(&same_question(&entry));
        let mut asks = lock(&self.inner.asks);
        let key = asks.key(own);
        if let Some(a) = asks.answers.get(&key).filter(|a| a.d == digest) {
            return Ok(a.r.clone());
        }
        asks.asked.insert(key.clone(), digest);
        asks.pending.insert(key.clone(), entry);
        Err(PeerError::InputRequired(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answered(key: &str, d: &str, r: Value) -> Carried {
        let mut c = Carried::default();
        c.answers.insert(key.into(), Answer { d: d.into(), r });
        c
    }

    #[test]
    fn a_plain_state_is_the_handlers() {
        let mut retry = Retry {
            input_responses: None,
            request_state: Some("mine".into()),
        };
        let asks = from_retry(&mut retry).expect("plain");
        assert!(asks.answers.is_empty());
        assert_eq!(retry.request_state.as_deref(), Some("mine"));
    }

    #[test]
    fn carried_answers_join_the_latest_round() {
        let mut c = answered("k0", "d0", json!({"a": 0}));
        c.asked.insert("k1".into(), "d1".into());
        c.asked.insert("k2".into(), "d2".into());
        c.state = Some("mine".into());
        let mut responses = Map::new();
        responses.insert("k1".into(), json!({"a": 1}));
        responses.insert("other".into(), json!(true));
        let mut retry = Retry {
            input_responses: Some(responses),
            request_state: Some(format!(
                "{STATE_PREFIX}{}",
                serde_json::to_string(&c).expect("json")
            )),
        };
        let asks = from_retry(&mut retry).expect("carried");
        assert_eq!(retry.request_state.as_deref(), Some("mine"));
        let keys: Vec<&str> = asks.answers.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["k0", "k1"],
            "k2 was not answered, other was not asked"
        );
        assert_eq!(asks.answers["k1"].d, "d1");
    }

    fn modern_ctx(method: &str, asks: Asks) -> RequestContext {
        use super::super::context::CtxInner;
        use std::sync::{Arc, Mutex};
        let server = crate::Server::builder("t", "1").build().expect("server");
        let sink: Arc<dyn crate::transport::Outbound> = Arc::new(crate::transport::NullOutbound);
        let session = server.new_session(super::super::SessionKind::Stdio, sink.clone());
        let envelope = crate::server::era::Envelope {
            protocol_version: "2026-07-28".into(),
            client_capabilities: json!({"elicitation": {}, "roots": {}}),
            log_level: None,
        };
        RequestContext {
            inner: Arc::new(CtxInner {
                id: crate::Id::Num(1),
                method: method.into(),
                params: json!({"name": "t"}).as_object().cloned(),
                cancel: tokio_util::sync::CancellationToken::new(),
                sink,
                session,
                envelope: Some(Arc::new(envelope)),
                input_responses: None,
                request_state: None,
                last_progress: Mutex::new(None),
                asks: Mutex::new(asks),
                task_id: None,
                trace: crate::server::context::trace_slot(),
            }),
        }
    }

    fn form(message: &str) -> Option<Value> {
        Some(json!({"message": message, "requestedSchema": {"type": "object"}}))
    }

    /// Deterministic re-execution: a known answer is returned only to the same request at the
    /// same position; anything else is asked (again), and every round carries all answers.
    #[tokio::test]
    async fn mrtr01_answers_are_bound_to_position_method_and_params() {
        let ctx = modern_ctx("tools/call", Asks::default());
        let e = ctx.request_client("elicitation/create", form("a")).await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.0"));
        let e = ctx.request_client("roots/list", None).await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.1"));
        let ir = finish(&ctx, InputRequired::new().state("mine"));
        assert_eq!(ir.input_requests.len(), 2);
        let mut retry = Retry {
            input_responses: Some(
                json!({"mcpcore.request.0": {"action": "decline"}, "mcpcore.request.1": {"roots": []}})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            request_state: ir.request_state,
        };
        let asks = from_retry(&mut retry).expect("carried");
        assert_eq!(retry.request_state.as_deref(), Some("mine"));
        // The re-run asks something else first: not answered by the recorded answer.
        let ctx = modern_ctx("tools/call", asks);
        let e = ctx.request_client("elicitation/create", form("b")).await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.0"));
        let r = ctx.request_client("roots/list", None).await.expect("known");
        assert_eq!(r, json!({"roots": []}));
        let ir = finish(&ctx, InputRequired::new());
        let keys: Vec<&String> = ir.input_requests.keys().collect();
        assert_eq!(keys, ["mcpcore.request.0"]);
        assert!(ir.request_state.is_some(), "the known answers are carried");
    }

    fn named(key: &str, message: &str) -> Option<Value> {
        let mut p = form(message)?;
        p["_meta"] = json!({ INPUT_KEY_META: key });
        Some(p)
    }

    /// A request that names its key (a legacy mcpcore server's round passed on by a bridge)
    /// keeps it, without the marker; a key already given out in the run, or an unusable one,
    /// gets a sequential key instead, and sequential keys skip the named ones.
    #[tokio::test]
    async fn mrtr01_a_named_request_keeps_its_key() {
        let ctx = modern_ctx("tools/call", Asks::default());
        let e = ctx
            .request_client("elicitation/create", named("user_name", "a"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "user_name"));
        let e = ctx
            .request_client("elicitation/create", named("user_name", "b"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.1"));
        let e = ctx
            .request_client("elicitation/create", named("mcpcore.request.3", "c"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.3"));
        let e = ctx
            .request_client("elicitation/create", named("", "d"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.4"));
        let e = ctx.request_client("elicitation/create", form("e")).await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.5"));
        let long = "k".repeat(MAX_OWN_KEY + 1);
        let e = ctx
            .request_client("elicitation/create", named(&long, "f"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(k)) if k == "mcpcore.request.6"));
        let ir = finish(&ctx, InputRequired::new());
        assert_eq!(
            ir.input_requests["user_name"]["params"],
            form("a").expect("form")
        );

        // The retry answers under the kept key.
        let mut retry = Retry {
            input_responses: json!({"user_name": {"action": "decline"}})
                .as_object()
                .cloned(),
            request_state: ir.request_state,
        };
        let ctx = modern_ctx("tools/call", from_retry(&mut retry).expect("carried"));
        let r = ctx
            .request_client("elicitation/create", named("user_name", "a"))
            .await;
        assert_eq!(r.expect("known"), json!({"action": "decline"}));
    }

    /// LOG-02: a 2026-07-28 request without `logLevel` receives no logs, so a proxy asks for
    /// none on its behalf.
    #[test]
    fn log02_the_threshold_of_a_modern_request_is_its_envelopes() {
        let ctx = modern_ctx("tools/call", Asks::default());
        assert_eq!(ctx.log_threshold(), None);
        let mut env = (**ctx.inner.envelope.as_ref().expect("modern")).clone();
        env.log_level = Some(crate::LoggingLevel::Warning);
        let mut inner = modern_ctx("tools/call", Asks::default());
        if let Some(i) = std::sync::Arc::get_mut(&mut inner.inner) {
            i.envelope = Some(std::sync::Arc::new(env));
        }
        assert_eq!(inner.log_threshold(), Some(crate::LoggingLevel::Warning));
    }

    /// A modern `tools/call` context whose client declares URL-mode elicitation.
    fn url_ctx(asks: Asks) -> RequestContext {
        let mut ctx = modern_ctx("tools/call", asks);
        let mut env = (**ctx.inner.envelope.as_ref().expect("modern")).clone();
        env.client_capabilities = json!({"elicitation": {"url": {}}});
        if let Some(i) = std::sync::Arc::get_mut(&mut ctx.inner) {
            i.envelope = Some(std::sync::Arc::new(env));
        }
        ctx
    }

    /// A URL-mode elicitation asked again with a fresh `elicitationId` (a legacy shim's rerun
    /// behind a bridge) is the same question: the round's answer is found; another URL is not.
    #[tokio::test]
    async fn mrtr01_a_url_elicitation_is_the_same_question_under_a_new_id() {
        let url = |id: &str, to: &str| {
            Some(json!({"mode": "url", "message": "Sign in", "url": to, "elicitationId": id}))
        };
        let ctx = url_ctx(Asks::default());
        let e = ctx
            .request_client("elicitation/create", url("a", "https://x.test/1"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(_))));
        let ir = finish(&ctx, InputRequired::new());
        let mut retry = Retry {
            input_responses: json!({"mcpcore.request.0": {"action": "accept"}})
                .as_object()
                .cloned(),
            request_state: ir.request_state,
        };
        let ctx = url_ctx(from_retry(&mut retry).expect("carried"));
        let r = ctx
            .request_client("elicitation/create", url("b", "https://x.test/1"))
            .await;
        assert_eq!(r.expect("the same question"), json!({"action": "accept"}));
        let e = ctx
            .request_client("elicitation/create", url("c", "https://x.test/2"))
            .await;
        assert!(matches!(&e, Err(PeerError::InputRequired(_))), "{e:?}");
    }

    #[tokio::test]
    async fn mrtr01_only_mrtr_methods_and_input_methods_may_ask() {
        let ctx = modern_ctx("completion/complete", Asks::default());
        let e = ctx.request_client("roots/list", None).await;
        assert!(matches!(&e, Err(PeerError::Unavailable(o)) if o.code == codes::INTERNAL_ERROR));
        let ctx = modern_ctx("tools/call", Asks::default());
        for m in ["ping", "custom/thing"] {
            let e = ctx.request_client(m, None).await;
            assert!(matches!(&e, Err(PeerError::Unavailable(o)) if o.message.contains("JR-05")));
        }
        let e = ctx
            .request_client(
                "sampling/createMessage",
                Some(json!({"messages": [], "maxTokens": 1})),
            )
            .await;
        let Err(PeerError::Unavailable(o)) = e else {
            panic!("{e:?}")
        };
        assert_eq!(o.code, codes::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            o.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );
        let r = settle(&ctx, Err(HandlerError::internal("x")), "tools/call");
        assert!(
            matches!(r, Err(ref e) if e.message == "Internal error"),
            "refusals are not pending: {r:?}"
        );
    }

    #[test]
    fn an_unreadable_carried_state_is_refused() {
        let mut retry = Retry {
            input_responses: None,
            request_state: Some(format!("{STATE_PREFIX}{{not json")),
        };
        let e = from_retry(&mut retry).expect_err("refused");
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert_eq!(e.message, mrtr::INVALID_STATE_MESSAGE);
    }
}
