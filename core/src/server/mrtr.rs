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

use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

use super::builder::ServerInner;
use super::context::RequestContext;
use super::handler::{InputRequired, Outcome};
use super::methods;
use super::peer::PeerError;
use super::session::Session;
use crate::auth::Principal;
use crate::backplane::SharedKey;
use crate::error::{codes, ErrorObject, HandlerError};
use crate::security::replay::{self, Claim, MemoryReplayGuard, ReplayGuard};
use crate::security::sealing::{self, Claims, KeyError, KeyRing, Sealer};

/// Methods an `inputRequests` entry may carry (MRTR-02).
const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

/// The wire message for every refused `requestState`.
pub const INVALID_STATE_MESSAGE: &str = "Invalid or expired requestState";

/// How `requestState` is protected on the modern wire.
///
/// JSON shape (see [`crate::options`]): `seal`, `ttlMs`, `audience`, `singleUse`,
/// `replayCacheCapacity`, and `keys`: `[{"id": "k2", "key": "<base64 of 32 bytes>"}, …]`, the
/// first sealing and opening, the rest only opening (rotation without downtime). Keys are never
/// serialized back out; a patch without `keys` keeps the ring, as it keeps a shared replay store
/// (which has no JSON form).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct RequestStateOptions {
    /// Seal states (default `true`). When `false` the state crosses the wire exactly as the
    /// handler wrote it and the handler must treat the echo as untrusted input.
    pub seal: bool,
    /// Keys shared by every worker of a deployment (current key first). `None`: a random key of
    /// this process, so states do not survive a restart.
    #[serde(skip_serializing, deserialize_with = "key_ring")]
    pub keys: Option<KeyRing>,
    /// Lifetime of a sealed state (default 300 s; renewed every round).
    #[serde(rename = "ttlMs", with = "crate::options::millis")]
    pub ttl: Duration,
    /// Optional audience bound into every state (e.g. a deployment name).
    pub audience: Option<String>,
    /// Accept each sealed state once (default `true`; MRTR-06 one-time semantics): a state
    /// presented again is refused like a tampered one, so a client re-sending a lost retry must
    /// start the request over. Needs `seal` (an unsealed state has no nonce to claim).
    pub single_use: bool,
    /// Most unexpired states the in-process replay cache remembers (default 100 000, about
    /// 5 MB). When full, retries carrying a new state are refused until entries expire; size it
    /// above the peak of retries per second × `ttl`. Unused when `replay_guard` is set.
    pub replay_cache_capacity: usize,
    /// A replay store shared by every worker (e.g. Redis); `None`: the in-process cache, so single
    /// use holds per process only.
    #[serde(skip)]
    pub replay_guard: Option<Arc<dyn ReplayGuard>>,
}

impl crate::options::JsonOptions for RequestStateOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        let range = |m: &str| Err(crate::options::OptionsError::Range(m.into()));
        if self.ttl.is_zero() {
            return range("requestState ttlMs must be positive");
        }
        if self.replay_cache_capacity == 0 {
            return range("requestState replayCacheCapacity must be positive");
        }
        Ok(())
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        if self.keys.is_none() {
            self.keys = from.keys.clone();
        }
        self.replay_guard = from.replay_guard.clone();
    }
}

/// One entry of `requestState.keys`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KeySpec {
    id: String,
    key: String,
}

/// `keys`: a non-empty list, current key first. Errors name the entry, never the key text.
fn key_ring<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<KeyRing>, D::Error> {
    use serde::de::Error;
    let Some(specs) = Option::<Vec<KeySpec>>::deserialize(d)? else {
        return Ok(None);
    };
    let mut keys = specs.into_iter().enumerate().map(|(i, k)| {
        sealing::SealKey::from_base64(k.id, &k.key)
            .map_err(|e| D::Error::custom(format!("requestState keys[{i}]: {e}")))
    });
    let Some(current) = keys.next() else {
        return Err(D::Error::custom(
            "requestState keys must hold at least one key (the current one first)",
        ));
    };
    let mut ring = KeyRing::new(current?);
    for k in keys {
        ring = ring
            .with_previous(k?)
            .map_err(|e| D::Error::custom(format!("requestState keys: {e}")))?;
    }
    Ok(Some(ring))
}

impl Default for RequestStateOptions {
    fn default() -> Self {
        Self {
            seal: true,
            keys: None,
            ttl: sealing::DEFAULT_TTL,
            audience: None,
            single_use: true,
            replay_cache_capacity: replay::DEFAULT_CAPACITY,
            replay_guard: None,
        }
    }
}

/// The sealer the options ask for (`None` when sealing is off), or the key shared through a
/// Redis backplane when no key ring is configured (fetched on first need).
pub(crate) fn build_sealer(
    o: &RequestStateOptions,
    backplane: &crate::backplane::Backplane,
) -> Result<(Option<Sealer>, Option<Arc<SharedKey>>), KeyError> {
    if !o.seal {
        return Ok((None, None));
    }
    let ring = match &o.keys {
        Some(r) => r.clone(),
        None => {
            if let Some(shared) = backplane.shared_key(o.ttl) {
                return Ok((None, Some(shared)));
            }
            KeyRing::process_default()?
        }
    };
    Ok((Some(Sealer::new(ring, o.ttl)), None))
}

/// The sealer in force: the configured one, or the shared key once fetched. `Ok(None)`: states
/// are not sealed.
async fn sealer_for_open(inner: &ServerInner) -> Result<Option<&Sealer>, ErrorObject> {
    if let Some(s) = &inner.sealer {
        return Ok(Some(s));
    }
    match &inner.shared_key {
        None => Ok(None),
        Some(k) => k.resolve().await.map(Some).map_err(|_| {
            tracing::warn!("request-state key unavailable (backplane down)");
            crate::backplane::unavailable()
        }),
    }
}

/// The replay guard the options ask for (`None` when states are not sealed or not single use).
pub(crate) fn build_replay_guard(
    o: &RequestStateOptions,
) -> Result<Option<Arc<dyn ReplayGuard>>, String> {
    if !o.seal || !o.single_use {
        return Ok(None);
    }
    if let Some(g) = &o.replay_guard {
        return Ok(Some(g.clone()));
    }
    if o.replay_cache_capacity == 0 {
        return Err("request_state.replay_cache_capacity must be positive".into());
    }
    Ok(Some(Arc::new(MemoryReplayGuard::new(
        o.replay_cache_capacity,
    ))))
}

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
    if let Some(k) = &inner.shared_key {
        // Fetch the shared key before the handler runs, so a round ending in input_required
        // can seal; a failure matters only to a state that must be opened or sealed.
        let _ = k.resolve().await;
    }
    let request_state = match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => None,
        Some(Value::String(token)) => match sealer_for_open(inner).await? {
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
        let sealer = match (&inner.sealer, &inner.shared_key) {
            (Some(s), _) => Some(s),
            // Fetched by `read_retry` before the handler ran; still missing: Redis is down.
            (None, Some(k)) => Some(k.get().ok_or_else(crate::backplane::unavailable)?),
            (None, None) => None,
        };
        let wire = match sealer {
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
/// keyed like the requests.
async fn fulfil_round(
    ctx: &RequestContext,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, ErrorObject> {
    let mut answers = Map::new();
    for (key, req) in requests {
        let (leg, leg_params) = leg_request(&req);
        // A client error on a leg fails the original request; it is reported as -32603 so
        // the client's code is never mistaken for an answer about the original method.
        let answer = match ctx.peer_request(&leg, leg_params, None).await {
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
                name: Some("t".into()),
                meta: None,
                cancel: tokio_util::sync::CancellationToken::new(),
                sink,
                session,
                envelope: None,
                input_responses: None,
                request_state: None,
                last_progress: std::sync::Mutex::new(None),
                asks: std::sync::Mutex::default(),
                task_id: None,
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
