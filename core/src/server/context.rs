//! The per-request context handed to every handler.

use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::era::Envelope;
use super::session::{lock, Session};
use super::Outbound;
use crate::error::{codes, ErrorObject, HandlerError};
use crate::jsonrpc::{encode_notification, Id};
use crate::protocol::LoggingLevel;

pub(crate) struct CtxInner {
    pub id: Id,
    pub method: String,
    /// The request's params, as sent: its target name and `_meta` are read from them (kept
    /// whole rather than copied out: a modern request's `_meta` is a tree of a dozen
    /// allocations).
    pub params: Option<Map<String, Value>>,
    pub cancel: CancellationToken,
    pub sink: Arc<dyn Outbound>,
    pub session: Arc<Session>,
    pub envelope: Option<Arc<Envelope>>,
    pub input_responses: Option<Map<String, Value>>,
    pub request_state: Option<String>,
    pub last_progress: Mutex<Option<f64>>,
    /// `request_client` bookkeeping of this run (2026-07-28 requests).
    pub asks: Mutex<super::ask::Asks>,
    /// The task this run serves, when it runs as one (TASK-L01, TASK-M02).
    pub task_id: Option<String>,
    /// The trace context of the server span this run belongs to (set when the span is
    /// recorded, else made on first use).
    pub trace: std::sync::OnceLock<crate::telemetry::TraceContext>,
}

/// The trace slot of a context made now: the running request's span context, if it has one.
pub(crate) fn trace_slot() -> std::sync::OnceLock<crate::telemetry::TraceContext> {
    let slot = std::sync::OnceLock::new();
    if let Ok(tc) = super::dispatch::TRACE.try_with(Clone::clone) {
        let _ = slot.set(tc);
    }
    slot
}

/// Everything a handler may know about and do for the request it serves. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    pub(crate) inner: Arc<CtxInner>,
}

impl RequestContext {
    /// The JSON-RPC id of the request.
    pub fn id(&self) -> &Id {
        &self.inner.id
    }
    /// The method (`tools/call`, …).
    pub fn method(&self) -> &str {
        &self.inner.method
    }
    /// The tool or prompt name, or the resource URI, when the method has one.
    pub fn name(&self) -> Option<&str> {
        crate::telemetry::span::target(&self.inner.method, self.inner.params.as_ref())
    }
    /// The request's `params._meta`, as sent.
    pub fn meta(&self) -> Option<&Value> {
        self.inner.params.as_ref()?.get("_meta")
    }

    /// The request's params, as sent.
    pub(crate) fn params(&self) -> Option<&Map<String, Value>> {
        self.inner.params.as_ref()
    }
    /// The W3C trace context of the server span handling this request: in the caller's trace
    /// when the request carried one (`_meta.traceparent`, or over HTTP the `traceparent`
    /// header), else a new trace. A handler starts its own spans as children of it
    /// (Python and Node hand it to OpenTelemetry's propagators as `{"traceparent": …}`).
    pub fn trace_context(&self) -> &crate::telemetry::TraceContext {
        self.inner.trace.get_or_init(|| {
            let from_header = || {
                let h = self.http_headers()?;
                let tp = h.get(crate::telemetry::TRACEPARENT)?.to_str().ok()?;
                let ts = h
                    .get(crate::telemetry::TRACESTATE)
                    .and_then(|v| v.to_str().ok());
                crate::telemetry::TraceContext::parse(tp, ts)
            };
            let parent =
                crate::telemetry::TraceContext::from_meta(self.meta()).or_else(from_header);
            crate::telemetry::TraceContext::child_of(parent.as_ref())
        })
    }
    /// The headers of the HTTP request that carried this request (Streamable HTTP; names in lower
    /// case), `None` over stdio and in-process transports. Every header is here, `Authorization`
    /// included: prefer [`Self::principal`] for who is calling, and never pass the client's token
    /// on to another service (the spec's token-passthrough rule, AUTH-06).
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.inner.sink.http_headers()
    }
    /// [`Self::http_headers`] as a JSON object, name → value, the values of a repeated header
    /// joined with `", "` (RFC 9110 §5.3) and bytes that are not UTF-8 replaced: the form the
    /// bindings hand to Python, Node and C.
    pub fn http_headers_json(&self) -> Option<Value> {
        let h = self.http_headers()?;
        let mut out = Map::new();
        for (name, value) in h {
            let v = String::from_utf8_lossy(value.as_bytes());
            match out.get_mut(name.as_str()) {
                Some(Value::String(prev)) => {
                    prev.push_str(", ");
                    prev.push_str(&v);
                }
                _ => {
                    out.insert(name.as_str().to_owned(), Value::String(v.into_owned()));
                }
            }
        }
        Some(Value::Object(out))
    }
    /// The cancellation token: cancelled when the peer cancels or the connection ends.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.cancel
    }
    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }
    /// Resolves when the request is cancelled.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.inner.cancel.cancelled()
    }
    /// True when this request uses the modern (2026-07-28) envelope.
    pub fn is_modern(&self) -> bool {
        self.inner.envelope.is_some()
    }
    /// The protocol version of this request (modern: from the envelope; legacy: negotiated).
    pub fn protocol_version(&self) -> Option<String> {
        match &self.inner.envelope {
            Some(e) => Some(e.protocol_version.clone()),
            None => self.inner.session.negotiated_version(),
        }
    }
    /// The client's capabilities (modern: from THIS request only; legacy: from `initialize`).
    pub fn client_capabilities(&self) -> Value {
        match &self.inner.envelope {
            Some(e) => e.client_capabilities.clone(),
            None => lock(&self.inner.session.legacy).client_capabilities.clone(),
        }
    }
    /// The client's implementation info, when known.
    pub fn client_info(&self) -> Option<Value> {
        // Modern: read from this request's `_meta` (checked by the envelope parser) when asked,
        // not copied for every request.
        match &self.inner.envelope {
            Some(_) => self
                .meta()
                .and_then(|m| m.get(crate::protocol::envelope::KEY_CLIENT_INFO))
                .cloned(),
            None => lock(&self.inner.session.legacy)
                .client_info
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
        }
    }
    /// `inputResponses` of a retried modern request (or the legacy shim's collected answers).
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.inner.input_responses.as_ref()
    }
    /// The verified principal of the request's access token, on an HTTP endpoint protected by
    /// [`crate::auth::AuthOptions`] (AUTH-06); `None` elsewhere.
    pub fn principal(&self) -> Option<&crate::auth::Principal> {
        self.inner.session.principal().map(|p| &**p)
    }
    /// The legacy session this request belongs to (stdio, or Streamable HTTP with an
    /// `Mcp-Session-Id`), for state a handler keeps per session: its key, and a token cancelled
    /// when the session ends, so the state can go with it. `None` for 2026-07-28 requests, which
    /// belong to no session (SEP-2575), and for legacy requests served without one.
    pub fn legacy_session(&self) -> Option<super::SessionHandle> {
        if self.is_modern() {
            return None;
        }
        self.inner.session.handle()
    }
    /// The verified, unsealed `requestState` of a retried request.
    pub fn request_state(&self) -> Option<&str> {
        self.inner.request_state.as_deref()
    }
    /// The id of the task this handler runs as (`None` for a plain request). A task's
    /// cancellation token is cancelled by `tasks/cancel`, never by `notifications/cancelled`
    /// nor by the connection that created it ending (CAN-03, TASK-M03).
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task_id.as_deref()
    }

    /// Require a client capability by path (e.g. `["elicitation", "url"]`).
    ///
    /// # Errors
    /// -32021 with `data.requiredCapabilities` when this request did not declare it (META-04).
    /// Legacy requests get the same code; it is the precise answer in either era.
    pub fn require_client_capability(&self, path: &[&str]) -> Result<(), HandlerError> {
        let caps = self.client_capabilities();
        if has_capability(&caps, path) {
            return Ok(());
        }
        Err(HandlerError::Rpc(missing_capability(path)))
    }

    /// Report progress against the request's `progressToken`. Returns `false` (and sends nothing)
    /// without a token, after cancellation, when `progress` does not increase, or when the
    /// outbound queue is full.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = self.meta().and_then(|m| m.get("progressToken")) else {
            return false;
        };
        if self.is_cancelled() {
            return false;
        }
        {
            let mut last = lock(&self.inner.last_progress);
            if last.is_some_and(|l| progress <= l) {
                return false;
            }
            *last = Some(progress);
        }
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(t) = total {
            params["total"] = json!(t);
        }
        if let Some(m) = message {
            params["message"] = json!(m);
        }
        self.notify("notifications/progress", params)
    }

    /// The lowest level a [`Self::log`] call on this request delivers: the envelope's `logLevel`
    /// (2026-07-28), or the session's `logging/setLevel` (legacy; every level until it is set).
    /// `None` when nothing is delivered: logging is off, or a 2026-07-28 request asked for no
    /// logs (LOG-02). A proxy asks the server behind it for the same.
    pub fn log_threshold(&self) -> Option<LoggingLevel> {
        if !self.inner.session.server.inner.options.logging {
            return None;
        }
        match &self.inner.envelope {
            Some(e) => e.log_level,
            None => Some(
                self.inner
                    .session
                    .log_level()
                    .unwrap_or(LoggingLevel::Debug),
            ),
        }
    }

    /// Send a `notifications/message` log entry, filtered by the client's level: modern requests
    /// get logs only when their envelope set `logLevel`; legacy sessions by `logging/setLevel`.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.inner.session.server.inner.options.logging {
            return false;
        }
        let min = match &self.inner.envelope {
            Some(e) => match e.log_level {
                Some(l) => Some(l),
                None => return false,
            },
            None => self.inner.session.log_level(),
        };
        if min.is_some_and(|m| level < m) {
            return false;
        }
        let mut params = json!({"level": level, "data": data});
        if let Some(l) = logger {
            params["logger"] = json!(l);
        }
        self.notify("notifications/message", params)
    }

    /// Send a request-related notification on this request's stream.
    pub fn notify(&self, method: &str, params: Value) -> bool {
        self.inner
            .sink
            .try_send(encode_notification(method, Some(&params)))
    }

    /// A context for re-running the same request with other input (the legacy MRTR shim).
    pub(crate) fn with_inputs(
        &self,
        input_responses: Option<Map<String, Value>>,
        request_state: Option<String>,
    ) -> RequestContext {
        let i = &self.inner;
        RequestContext {
            inner: Arc::new(CtxInner {
                id: i.id.clone(),
                method: i.method.clone(),
                params: i.params.clone(),
                cancel: i.cancel.clone(),
                sink: i.sink.clone(),
                session: i.session.clone(),
                envelope: i.envelope.clone(),
                input_responses,
                request_state,
                last_progress: Mutex::new(*lock(&i.last_progress)),
                asks: Mutex::default(),
                task_id: i.task_id.clone(),
                trace: trace_slot(),
            }),
        }
    }

    /// The context a task's handler runs with: its own cancellation token and sink, the
    /// creating request's identity and envelope, and the inputs of this round.
    pub(crate) fn for_task(
        &self,
        task_id: &str,
        cancel: CancellationToken,
        sink: Arc<dyn Outbound>,
        retry: super::mrtr::Retry,
        asks: super::ask::Asks,
    ) -> RequestContext {
        let i = &self.inner;
        RequestContext {
            inner: Arc::new(CtxInner {
                id: i.id.clone(),
                method: i.method.clone(),
                params: i.params.clone(),
                cancel,
                sink,
                session: i.session.clone(),
                envelope: i.envelope.clone(),
                input_responses: retry.input_responses,
                request_state: retry.request_state,
                last_progress: Mutex::new(*lock(&i.last_progress)),
                asks: Mutex::new(asks),
                task_id: Some(task_id.to_owned()),
                // A task's rounds belong to the trace of the request that created it.
                trace: i.trace.clone(),
            }),
        }
    }

    /// Take this run's `request_client` bookkeeping (a task's first round keeps what the
    /// creating request's retry carried).
    pub(crate) fn take_asks(&self) -> super::ask::Asks {
        std::mem::take(&mut *lock(&self.inner.asks))
    }

    /// Legacy Streamable HTTP only: close this request's SSE stream now while the request keeps
    /// running; the client reconnects with `Last-Event-ID` and receives the rest (SSE polling,
    /// LHTTP-04). Returns `false` (and does nothing) on transports without such a stream.
    pub fn close_sse_stream(&self) -> bool {
        self.inner.sink.close_stream()
    }

    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.inner.session
    }
    pub(crate) fn sink(&self) -> &Arc<dyn Outbound> {
        &self.inner.sink
    }
}

/// True when `caps` declares the capability at `path` (an object or `true` at the end).
pub(crate) fn has_capability(caps: &Value, path: &[&str]) -> bool {
    let mut cur = caps;
    for key in path {
        match cur.get(*key) {
            Some(v) if !v.is_null() && v != &Value::Bool(false) => cur = v,
            _ => return false,
        }
    }
    true
}

/// -32021 naming the missing capability as a ClientCapabilities fragment.
pub(crate) fn missing_capability(path: &[&str]) -> ErrorObject {
    let mut frag = json!({});
    for key in path.iter().rev() {
        frag = json!({ *key: frag });
    }
    ErrorObject::new(
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", path.join(".")),
    )
    .with_data(json!({"requiredCapabilities": frag}))
}
