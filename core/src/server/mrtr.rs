//! Multi round-trip requests (SEP-2322; REQUIREMENTS MRTR-01…09, META-04, ELIC-01, SAMP-01/02,
//! ROOT-01; seeds: InputRequiredResult, request-state security, the legacy shim).
//!
//! `tools/call`, `prompts/get` and `resources/read` handlers may answer [`InputRequired`]. On a
//! modern request the engine checks the embedded requests against THIS request's declared client
//! capabilities (-32021 with the merged `requiredCapabilities` before anything is sent), seals
//! the `requestState` and answers `resultType: "input_required"`. On the retry it opens the echoed
//! state before any handler runs, claims it so it is used once (MRTR-06, [`crate::security::replay`];
//! a refused state is -32602 "Invalid or expired requestState") and hands the handler the plaintext
//! and the `inputResponses`.
//!
//! On a legacy session the same handler is served by the shim: every embedded request becomes a
//! real server→client request on the originating request's stream, the answers are collected under
//! the same keys and the handler re-runs with them (state stays in-process, unsealed), at most
//! `Limits::max_mrtr_rounds` rounds.

use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::builder::ServerInner;
use super::context::RequestContext;
use super::handler::{InputRequired, Outcome};
use super::methods;
use super::peer::PeerError;
use super::session::Session;
use crate::auth::Principal;
use crate::error::{codes, ErrorObject, HandlerError};
use crate::security::replay::Claim;
use crate::security::sealing::{Claims, Sealer};

/// Methods an `inputRequests` entry may carry (MRTR-02).
const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

/// The wire message for every refused `requestState`.
pub const INVALID_STATE_MESSAGE: &str = "Invalid or expired requestState";

pub use super::request_state::RequestStateOptions;
pub(crate) use super::request_state::{build_replay_guard, build_sealer};

/// What a retried modern request carries, after verification.
#[derive(Default)]
pub(crate) struct Retry {
    pub input_responses: Option<Map<String, Value>>,
    pub request_state: Option<String>,
}

fn binding(method: &str, params: Option<&Map<String, Value>>) -> (String, Value) {
    let key = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let target = params
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let args = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => json!({}),
        Some(v) => v.clone(),
    };
    (target, args)
}

/// The audience a state is sealed for: the configured one, joined with the request's principal
/// on a protected endpoint (AUTH-06), so a state minted for one principal never opens for
/// another, nor for an anonymous request, nor the other way round.
fn sealed_audience(inner: &ServerInner, principal: Option<&Principal>) -> Option<String> {
    let configured = inner.options.request_state.audience.clone();
    match principal {
        None => configured,
        Some(p) => Some(format!(
            "{}#principal={}",
            configured.unwrap_or_default(),
            p.binding_key()
        )),
    }
}

pub(crate) fn invalid_state() -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, INVALID_STATE_MESSAGE)
}

/// Open a sealed `requestState` and claim it (single use, MRTR-06). The claim comes after every
/// check of the seal, so only states this deployment issued for this very call can take a slot
/// of the replay cache.
async fn open_state(
    inner: &ServerInner,
    sealer: &Sealer,
    call: (&str, Option<&Map<String, Value>>),
    principal: Option<&Principal>,
    token: &str,
) -> Result<String, ErrorObject> {
    let (method, params) = call;
    let (target, args) = binding(method, params);
    let audience = sealed_audience(inner, principal);
    let claims = Claims {
        method,
        target: &target,
        arguments: &args,
        audience: audience.as_deref(),
    };
    let opened = sealer.open(token, &claims).map_err(|e| {
        tracing::debug!(method, target, reason = %e, "refused requestState");
        invalid_state()
    })?;
    if let Some(guard) = &inner.replay {
        let claim = guard.claim(opened.nonce, opened.expires_at).await;
        if claim == Claim::StoreUnreachable {
            // Not the client's fault and the state is not consumed: retry later (503).
            tracing::warn!(
                method,
                target,
                "requestState not claimed: replay store unreachable"
            );
            return Err(crate::backplane::unavailable());
        }
        if claim != Claim::First {
            // Every refusal is the same wire error: a replay is not told apart from a forgery.
            tracing::debug!(method, target, ?claim, "refused requestState");
            return Err(invalid_state());
        }
    }
    Ok(opened.state)
}

/// Read and verify `inputResponses` / `requestState` of a modern MRTR request.
///
/// # Errors
/// -32602 for a non-object `inputResponses` and for any `requestState` that does not open or
/// was used before.
pub(crate) async fn read_retry(
    inner: &ServerInner,
    method: &str,
    params: Option<&Map<String, Value>>,
    principal: Option<&Principal>,
) -> Result<Retry, ErrorObject> {
    let input_responses = match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.clone()),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ))
        }
    };
    let request_state = match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => None,
        Some(Value::String(token)) => match &inner.sealer {
            None => Some(token.clone()),
            Some(sealer) => {
                let call = (method, params);
                Some(open_state(inner, sealer, call, principal, token).await?)
            }
        },
        Some(_) => return Err(invalid_state()),
    };
    Ok(Retry {
        input_responses,
        request_state,
    })
}

/// Why an `InputRequired` cannot be served.
enum Refusal {
    /// A handler bug (bad shape): logged, answered -32603.
    Malformed(String),
    /// The client did not declare what the requests need: the merged requirement and the missing
    /// capability paths.
    Missing(Value, Vec<String>),
}

fn merge(into: &mut Value, frag: Value) {
    match (into, frag) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert_with(|| json!({})), v);
            }
        }
        (slot, v) => *slot = v,
    }
}

/// The client capability one embedded request needs.
fn requirement(req: &Value) -> Result<Value, String> {
    let method = req
        .get("method")
        .and_then(Value::as_str)
        .ok_or("an inputRequests entry has no method")?;
    if !INPUT_METHODS.contains(&method) {
        return Err(format!("inputRequests may not carry {method}"));
    }
    let params = req.get("params");
    match params {
        None if method == "roots/list" => {}
        Some(Value::Object(_)) => {}
        _ => return Err(format!("{method} inputRequests entry needs params")),
    }
    Ok(match method {
        "elicitation/create" => {
            let mode = params
                .and_then(|p| p.get("mode"))
                .and_then(Value::as_str)
                .unwrap_or("form");
            if mode != "form" && mode != "url" {
                return Err(format!("unknown elicitation mode {mode}"));
            }
            json!({"elicitation": {mode: {}}})
        }
        "sampling/createMessage" => {
            let p = params.cloned().unwrap_or(Value::Null);
            let mut r = json!({"sampling": {}});
            if p.get("tools").is_some() || p.get("toolChoice").is_some() {
                merge(&mut r, json!({"sampling": {"tools": {}}}));
            }
            let ctx = p.get("includeContext").and_then(Value::as_str);
            if matches!(ctx, Some("thisServer" | "allServers")) {
                merge(&mut r, json!({"sampling": {"context": {}}}));
            }
            r
        }
        _ => json!({"roots": {}}),
    })
}

/// Paths of `required` the client did not declare (`elicitation: {}` declares form mode).
fn missing_paths(caps: &Value, required: &Value, prefix: &str, out: &mut Vec<String>) {
    let Some(req) = required.as_object() else {
        return;
    };
    for (k, sub) in req {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        let declared = caps
            .get(k)
            .filter(|v| !v.is_null() && **v != Value::Bool(false));
        match declared {
            None => out.push(path),
            Some(d) => {
                let bare_elicitation =
                    path == "elicitation" && d.as_object().is_some_and(Map::is_empty);
                let d = if bare_elicitation {
                    json!({"form": {}})
                } else {
                    d.clone()
                };
                missing_paths(&d, sub, &path, out);
            }
        }
    }
}

/// -32021 naming the missing capabilities, with the merged requirement (META-04, MRTR-03).
fn missing_error(required: Value, missing: &[String]) -> ErrorObject {
    ErrorObject::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", missing.join(", ")),
    )
    .with_data(json!({"requiredCapabilities": required}))
}

/// Check one embedded request (`{method, params}`) against `caps` before it is asked for.
///
/// # Errors
/// -32021 with `data.requiredCapabilities` for an undeclared capability (MRTR-03); -32603 saying
/// why for a request an `inputRequests` entry cannot carry (MRTR-02).
pub(crate) fn check_request(req: &Value, caps: &Value) -> Result<(), ErrorObject> {
    let required = requirement(req).map_err(|why| {
        ErrorObject::new(
            codes::INTERNAL_ERROR,
            format!("Cannot ask the client: {why}"),
        )
    })?;
    let mut missing = Vec::new();
    missing_paths(caps, &required, "", &mut missing);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing_error(required, &missing))
    }
}

impl InputRequired {
    /// Check the outcome's shape (MRTR-02): it carries requests or state, and every request is
    /// one a client may be asked (`elicitation/create` in a known mode, `sampling/createMessage`
    /// with params, `roots/list`). The engine checks this itself before serving the outcome (a
    /// malformed one becomes -32603 for the peer); a binding may call it to tell its caller why
    /// at once.
    ///
    /// # Errors
    /// What is wrong, naming the offending request.
    pub fn validate(&self) -> Result<(), String> {
        if self.input_requests.is_empty() && self.request_state.is_none() {
            return Err("input_required with neither inputRequests nor requestState".into());
        }
        for (key, req) in &self.input_requests {
            requirement(req).map_err(|e| format!("inputRequests[{key:?}]: {e}"))?;
        }
        Ok(())
    }
}

fn check(ir: &InputRequired, caps: &Value) -> Result<(), Refusal> {
    ir.validate().map_err(Refusal::Malformed)?;
    let mut required = json!({});
    for req in ir.input_requests.values() {
        merge(&mut required, requirement(req).map_err(Refusal::Malformed)?);
    }
    let mut missing = Vec::new();
    missing_paths(caps, &required, "", &mut missing);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Refusal::Missing(required, missing))
    }
}

/// Serve an `input_required` outcome on a modern request: capability gate, sealing, wire shape.
///
/// # Errors
/// -32021 (with `data.requiredCapabilities`) or -32603 for a malformed outcome.
pub(crate) fn modern_result(
    inner: &ServerInner,
    ctx: &RequestContext,
    params: Option<&Map<String, Value>>,
    ir: InputRequired,
) -> Result<Value, ErrorObject> {
    let method = ctx.method();
    match check(&ir, &ctx.client_capabilities()) {
        Ok(()) => {}
        Err(Refusal::Malformed(why)) => {
            tracing::error!(method, %why, "handler returned a malformed input_required outcome");
            return Err(ErrorObject::internal());
        }
        Err(Refusal::Missing(required, missing)) => return Err(missing_error(required, &missing)),
    }
    let mut out = Map::new();
    out.insert("resultType".into(), json!("input_required"));
    if !ir.input_requests.is_empty() {
        out.insert("inputRequests".into(), Value::Object(ir.input_requests));
    }
    if let Some(state) = ir.request_state {
        let wire = match &inner.sealer {
            None => state,
            Some(sealer) => {
                let (target, args) = binding(method, params);
                let audience = sealed_audience(inner, ctx.principal());
                let claims = Claims {
                    method,
                    target: &target,
                    arguments: &args,
                    audience: audience.as_deref(),
                };
                sealer.seal(&claims, &state).map_err(|e| {
                    tracing::error!(method, error = %e, "sealing requestState failed");
                    ErrorObject::internal()
                })?
            }
        };
        out.insert("requestState".into(), Value::String(wire));
    }
    Ok(Value::Object(out))
}

fn synthesize_elicitation_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // Uniqueness within the session is what matters; fall back to a counter-free timestamp.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        return format!("mcpcore-{t:x}");
    }
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("mcpcore-{hex}")
}

/// The legacy shim (MRTR-09): fulfil `inputRequests` with real server→client requests and
/// re-run the handler until it completes, at most `max_mrtr_rounds` rounds.
///
/// # Errors
/// -32603 when the shim is off, the session cannot carry requests, the client lacks a
/// capability (checked before any client contact), the rounds run out, or the outcome is
/// malformed; a client error on a leg fails the request with that error.
pub(crate) async fn legacy_shim(
    session: &Arc<Session>,
    ctx: &RequestContext,
    params: Option<&Map<String, Value>>,
    first: InputRequired,
) -> Result<Value, ErrorObject> {
    let method = ctx.method().to_owned();
    let inner = &session.server.inner;
    if !inner.options.legacy_input_shim {
        tracing::error!(
            method,
            "input_required outcome on a legacy request and the legacy shim is off"
        );
        return Err(ErrorObject::internal());
    }
    if !session.can_send_requests() {
        tracing::error!(
            method,
            "input_required outcome on a legacy request without a session"
        );
        return Err(ErrorObject::internal());
    }
    let max = inner.options.limits.max_mrtr_rounds;
    let caps = ctx.client_capabilities();
    let mut ir = first;
    let mut rounds = 0usize;
    loop {
        shim_check(&method, &ir, &caps)?;
        if rounds >= max {
            return Err(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("Input was still required after {max} rounds; giving up"),
            ));
        }
        rounds += 1;
        let answers = fulfil_round(ctx, std::mem::take(&mut ir.input_requests)).await?;
        let responses = (!answers.is_empty()).then_some(answers);
        let next = ctx.with_inputs(responses, ir.request_state.take());
        match methods::run_mrtr(&method, next, params).await? {
            Outcome::Complete(v) => return Ok(v),
            Outcome::CompleteJson(raw) => return Ok(super::Payload::Json(raw).into_value()),
            Outcome::InputRequired(n) => ir = n,
        }
    }
}

/// The shim's capability check of one round: the client must support every request before any
/// of them is sent.
fn shim_check(method: &str, ir: &InputRequired, caps: &Value) -> Result<(), ErrorObject> {
    match check(ir, caps) {
        Ok(()) => Ok(()),
        Err(Refusal::Malformed(why)) => {
            tracing::error!(method, %why, "handler returned a malformed input_required outcome");
            Err(ErrorObject::internal())
        }
        Err(Refusal::Missing(_, missing)) => Err(ErrorObject::new(
            codes::INTERNAL_ERROR,
            format!("Client does not support {}", missing.join(", ")),
        )),
    }
}

/// Send one round's `inputRequests` to the client as real requests and collect the answers,
/// keyed like the requests. The requests of one round are independent of each other (MRTR-04
/// answers them together), so they are sent together: a person sees every question at once,
/// and a bridge passing them on to a 2026-07-28 client gathers the whole round. Each names its
/// key in `_meta` ([`super::ask::INPUT_KEY_META`]) so such a bridge keeps it.
async fn fulfil_round(
    ctx: &RequestContext,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, ErrorObject> {
    let legs = requests.into_iter().map(|(key, req)| async move {
        let (leg, mut leg_params) = leg_request(&req);
        name_leg(&mut leg_params, &key);
        let r = ctx.peer_request(&leg, leg_params, None).await;
        (key, leg, r)
    });
    let mut answers = Map::new();
    for (key, leg, r) in futures_util::future::join_all(legs).await {
        // A client error on a leg fails the original request; it is reported as -32603 so
        // the client's code is never mistaken for an answer about the original method.
        let answer = match r {
            Ok(v) => v,
            Err(PeerError::Rpc(e)) => {
                return Err(ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("The client refused {leg} for input {key}: {}", e.message),
                )
                .with_data(json!({"clientError": e})))
            }
            Err(e) => return Err(HandlerError::from(e).into_wire(&leg)),
        };
        answers.insert(key, answer);
    }
    Ok(answers)
}

/// Name the `inputRequests` key a leg answers in its `_meta`.
fn name_leg(params: &mut Option<Value>, key: &str) {
    let p = params.get_or_insert_with(|| json!({}));
    if let Some(p) = p.as_object_mut() {
        let meta = p.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(super::ask::INPUT_KEY_META.into(), json!(key));
        }
    }
}

/// The method and params of one input request as sent to the client; a URL-mode elicitation
/// without an `elicitationId` gets one.
fn leg_request(req: &Value) -> (String, Option<Value>) {
    let leg = req
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut leg_params = req.get("params").cloned();
    if leg == "elicitation/create" {
        if let Some(p) = leg_params.as_mut().and_then(Value::as_object_mut) {
            let url_mode = p.get("mode").and_then(Value::as_str) == Some("url");
            if url_mode && !p.contains_key("elicitationId") {
                p.insert("elicitationId".into(), json!(synthesize_elicitation_id()));
            }
        }
    }
    (leg, leg_params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ir(reqs: Value) -> InputRequired {
        InputRequired {
            input_requests: reqs.as_object().cloned().unwrap_or_default(),
            request_state: None,
        }
    }

    fn missing(reqs: Value, caps: Value) -> Option<(Value, Vec<String>)> {
        match check(&ir(reqs), &caps) {
            Ok(()) => None,
            Err(Refusal::Missing(r, m)) => Some((r, m)),
            Err(Refusal::Malformed(w)) => panic!("malformed: {w}"),
        }
    }

    #[test]
    fn mrtr03_capability_mapping() {
        let form = json!({"k": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}}});
        assert!(missing(form.clone(), json!({"elicitation": {}})).is_none());
        assert!(missing(form.clone(), json!({"elicitation": {"form": {}}})).is_none());
        let (req, miss) = missing(form, json!({"elicitation": {"url": {}}})).unwrap();
        assert_eq!(req, json!({"elicitation": {"form": {}}}));
        assert_eq!(miss, ["elicitation.form"]);
        let url = json!({"k": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}}});
        assert!(missing(url.clone(), json!({"elicitation": {}})).is_some());
        assert!(missing(url, json!({"elicitation": {"url": {}}})).is_none());
        let tools = json!({"k": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1, "tools": []}}});
        let (req, _) = missing(tools.clone(), json!({"sampling": {}})).unwrap();
        assert_eq!(req, json!({"sampling": {"tools": {}}}));
        assert!(missing(tools, json!({"sampling": {"tools": {}}})).is_none());
        let roots = json!({"k": {"method": "roots/list"}});
        assert!(missing(roots.clone(), json!({"roots": {}})).is_none());
        assert!(missing(roots, json!({})).is_some());
    }

    #[test]
    fn mrtr03_merged_requirement() {
        let all = json!({
            "a": {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}},
            "b": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}},
            "c": {"method": "roots/list", "params": {}},
        });
        let (req, miss) = missing(all, json!({"sampling": {}})).unwrap();
        assert_eq!(
            req,
            json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}})
        );
        assert_eq!(miss, ["elicitation", "roots"]);
    }

    fn ctx_on(kind: super::super::SessionKind, shim: bool) -> RequestContext {
        use super::super::context::CtxInner;
        let server = crate::Server::builder("t", "1")
            .options(|o| o.legacy_input_shim = shim)
            .build()
            .unwrap();
        let sink: Arc<dyn crate::server::Outbound> = Arc::new(crate::server::NullOutbound);
        let session = server.new_session(kind, sink.clone());
        RequestContext {
            inner: Arc::new(CtxInner {
                id: crate::Id::Num(1),
                method: "tools/call".into(),
                params: json!({"name": "t"}).as_object().cloned(),
                cancel: tokio_util::sync::CancellationToken::new(),
                sink,
                session,
                envelope: None,
                input_responses: None,
                request_state: None,
                last_progress: std::sync::Mutex::new(None),
                asks: std::sync::Mutex::default(),
                task_id: None,
                trace: crate::server::context::trace_slot(),
            }),
        }
    }

    #[tokio::test]
    async fn mrtr09_shim_needs_a_session_and_can_be_off() {
        use super::super::SessionKind;
        let first = || InputRequired::new().state("s");
        for (kind, shim) in [(SessionKind::HttpModern, true), (SessionKind::Stdio, false)] {
            let ctx = ctx_on(kind, shim);
            let session = ctx.session().clone();
            let e = legacy_shim(&session, &ctx, None, first())
                .await
                .unwrap_err();
            assert_eq!(e.code, -32603);
            assert_eq!(e.message, "Internal error");
        }
    }

    #[test]
    fn mrtr02_malformed_outcomes() {
        for bad in [
            json!({"k": {"method": "ping", "params": {}}}),
            json!({"k": {"params": {}}}),
            json!({"k": {"method": "elicitation/create"}}),
            json!({"k": {"method": "elicitation/create", "params": {"mode": "telepathy"}}}),
        ] {
            assert!(matches!(
                check(&ir(bad), &json!({})),
                Err(Refusal::Malformed(_))
            ));
        }
        assert!(matches!(
            check(&InputRequired::default(), &json!({})),
            Err(Refusal::Malformed(_))
        ));
        let e = ir(json!({"k": {"method": "ping", "params": {}}}))
            .validate()
            .expect_err("ping");
        assert!(e.contains("\"k\"") && e.contains("ping"), "{e}");
        assert!(InputRequired::new().state("s").validate().is_ok());
        assert!(InputRequired::new().list_roots("r").validate().is_ok());
    }
}
