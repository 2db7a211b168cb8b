//! `NativeContext`: the request context a JavaScript handler gets (wraps core's
//! [`RequestContext`]). `lib/server.js` wraps it as the public `ctx` (with `ctx.signal`).
//!
//! A call hands JavaScript only a number naming it, with its method, name and id as plain
//! values; the `NativeContext` object is made when the handler first asks for something only
//! core knows ([`context_of`]). Making a wrapped class instance per call (`napi_new_instance`,
//! `napi_wrap`, a type tag, then a finalizer) was about a tenth of a stdio call's time, and most
//! handlers never look past their arguments.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use mcpcore::{ErrorKind, HandlerError, LoggingLevel, RequestContext};
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use serde_json::Value;

use crate::reply;

/// The abort callback of one request: weak (it never keeps the process alive), called at most
/// once from the handler's task when core cancels the request.
pub type AbortFn = ThreadsafeFunction<(), (), (), Status, false, true>;

/// What a [`NativeContext`] shares with the handler's task. The task [`Shared::release`]s it
/// when the call ends: the JavaScript object may live on until garbage collection, and a
/// [`RequestContext`] it kept would keep the connection's writer open (a stdio server would
/// then wait at EOF for it).
#[derive(Default)]
pub struct Shared {
    ctx: Mutex<Option<RequestContext>>,
    abort: Mutex<Option<AbortFn>>,
}

impl Shared {
    pub fn new(ctx: RequestContext) -> Arc<Self> {
        Arc::new(Self {
            ctx: Mutex::new(Some(ctx)),
            abort: Mutex::new(None),
        })
    }

    /// Call the registered abort callback, if any (once).
    pub fn abort(&self) {
        let f = self.abort.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(f) = f {
            f.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// The call ended: drop the request context and the abort callback.
    pub fn release(&self) {
        self.ctx.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.abort.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    fn ctx(&self) -> Option<RequestContext> {
        self.ctx.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The calls running a JavaScript handler, by the number JavaScript knows each by. A call is
/// here from its start until its future ends ([`Call`]'s drop).
static CALLS: LazyLock<Mutex<HashMap<u64, Arc<Shared>>>> = LazyLock::new(Mutex::default);
/// Numbers are never reused (2^53 calls before a JavaScript number loses one: not reachable).
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

fn calls() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<Shared>>> {
    CALLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// One running call's entry in the table; removed when dropped.
pub struct Call {
    pub id: u64,
}

impl Call {
    pub fn register(shared: Arc<Shared>) -> Self {
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        calls().insert(id, shared);
        Self { id }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        calls().remove(&self.id);
    }
}

/// The context of call `call` (private: `lib/`'s `Context` asks for it on first use). For a call
/// that has ended (or a number never given out) it is an ended context.
#[napi]
#[cfg_attr(test, allow(dead_code))]
pub fn context_of(call: f64) -> NativeContext {
    let shared = (call.fract() == 0.0 && call >= 1.0)
        .then(|| calls().get(&(call as u64)).cloned())
        .flatten()
        .unwrap_or_default();
    NativeContext { shared }
}

/// The context of one request (private: `lib/` wraps it). After the handler's call ended it
/// reports nothing: `progress`/`log` return false and `requestClient` fails with `closed`.
#[napi]
pub struct NativeContext {
    shared: Arc<Shared>,
}

#[napi]
impl NativeContext {
    /// Register the function called when the request is cancelled (peer cancellation, the
    /// connection ending, shutdown). Returns true when it is cancelled already (the callback is
    /// then not kept: abort at once).
    #[napi]
    pub fn on_cancel(&self, cb: Function<(), ()>) -> napi::Result<bool> {
        let Some(ctx) = self.shared.ctx() else {
            return Ok(true);
        };
        if ctx.is_cancelled() {
            return Ok(true);
        }
        let tsfn = cb
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        *self.shared.abort.lock().unwrap_or_else(|p| p.into_inner()) = Some(tsfn);
        Ok(ctx.is_cancelled())
    }

    /// True once the request is cancelled.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.shared.ctx().is_none_or(|c| c.is_cancelled())
    }

    /// The request's `params._meta` as sent, `{}` when it has none (or the call ended).
    #[napi(getter)]
    pub fn meta(&self) -> Value {
        self.shared
            .ctx()
            .and_then(|c| c.meta().cloned())
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()))
    }

    /// The headers of the HTTP request that carried this request (lower-case name → value,
    /// a repeated header's values joined with ", "; core's `http_headers_json`), null over
    /// stdio (or once the call ended).
    #[napi(getter, ts_return_type = "Record<string, string> | null")]
    pub fn headers(&self) -> Option<Value> {
        self.shared.ctx().and_then(|c| c.http_headers_json())
    }

    /// The W3C trace context of the server span handling this request
    /// (`{ traceparent, tracestate? }`, core's `trace_context`), null once the call ended.
    #[napi(
        getter,
        ts_return_type = "{ traceparent: string; tracestate?: string } | null"
    )]
    pub fn trace_context(&self) -> Option<Value> {
        self.shared.ctx().map(|c| c.trace_context().to_json())
    }

    /// The task this call runs as (its `taskId`), or null for a plain call.
    #[napi(getter)]
    pub fn task_id(&self) -> Option<String> {
        self.shared
            .ctx()
            .and_then(|c| c.task_id().map(str::to_owned))
    }

    /// True on a 2026-07-28 (stateless) request.
    #[napi(getter)]
    pub fn is_modern(&self) -> bool {
        self.shared.ctx().is_some_and(|c| c.is_modern())
    }

    /// The request's protocol version.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.shared.ctx().and_then(|c| c.protocol_version())
    }

    /// The client's capabilities as this request declares them.
    #[napi(getter)]
    pub fn client_capabilities(&self) -> Value {
        self.shared
            .ctx()
            .map_or(Value::Null, |c| c.client_capabilities())
    }

    /// The client's implementation info (`clientInfo`), when known.
    #[napi(getter)]
    pub fn client_info(&self) -> Option<Value> {
        self.shared.ctx().and_then(|c| c.client_info())
    }

    /// The verified access-token principal on an OAuth-protected HTTP endpoint (AUTH-06):
    /// `{subject, issuer, scopes, clientId, expiresAt, claims}`, else null.
    #[napi(getter)]
    pub fn principal(&self) -> Option<Value> {
        self.shared
            .ctx()
            .and_then(|c| c.principal().and_then(|p| serde_json::to_value(p).ok()))
    }

    /// The `inputResponses` of a retried 2026-07-28 request (or the answers core's legacy
    /// shim collected), when there are any.
    #[napi(getter)]
    pub fn input_responses(&self) -> Option<Value> {
        self.shared
            .ctx()
            .and_then(|c| c.input_responses().cloned().map(Value::Object))
    }

    /// The verified, unsealed `requestState` of a retried request.
    #[napi(getter)]
    pub fn request_state(&self) -> Option<String> {
        self.shared
            .ctx()
            .and_then(|c| c.request_state().map(str::to_owned))
    }

    /// Core's `require_client_capability` for `path` (e.g. `["elicitation", "url"]`):
    /// `{ok: null}`, or the -32021 error naming the capability (META-04) as `{error}`.
    #[napi]
    pub fn require_client_capability(&self, path: Vec<String>) -> Value {
        let Some(ctx) = self.shared.ctx() else {
            return reply::err(ErrorKind::Closed, "the request has ended");
        };
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        match ctx.require_client_capability(&path) {
            Ok(()) => reply::ok(Value::Null),
            Err(HandlerError::Rpc(e)) => reply::rpc(&e),
            Err(e) => reply::err(ErrorKind::Internal, e),
        }
    }

    /// Legacy Streamable HTTP: close this request's SSE stream now (the client resumes with
    /// `Last-Event-ID`, LHTTP-04); false on transports without such a stream.
    #[napi]
    pub fn close_sse_stream(&self) -> bool {
        self.shared.ctx().is_some_and(|c| c.close_sse_stream())
    }

    /// Report progress; false when nothing was sent (no token, not increasing, cancelled).
    #[napi]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.shared
            .ctx()
            .is_some_and(|c| c.progress(progress, total, message.as_deref()))
    }

    /// Send a log notification at `level` (`"debug"` … `"emergency"`), filtered by the
    /// client's level; false when filtered or not sent.
    #[napi]
    pub fn log(&self, level: String, data: Value, logger: Option<String>) -> napi::Result<bool> {
        let level: LoggingLevel = serde_json::from_value(Value::String(level.clone()))
            .map_err(|_| napi::Error::from_reason(format!("unknown logging level {level:?}")))?;
        Ok(self
            .shared
            .ctx()
            .is_some_and(|c| c.log(level, logger.as_deref(), data)))
    }

    /// Ask the client (`elicitation/create`, `sampling/createMessage`, `roots/list`): a legacy
    /// server→client request or an `input_required` round on 2026-07-28 (core decides).
    /// Resolves to `{ok}` / `{error}` (see `reply`).
    #[napi]
    pub async fn request_client(&self, method: String, params: Option<Value>) -> Value {
        if method.is_empty() {
            return reply::err(ErrorKind::InvalidArgument, "method must not be empty");
        }
        let Some(ctx) = self.shared.ctx() else {
            return reply::err(ErrorKind::Closed, "the request has ended");
        };
        reply::peer(ctx.request_client(&method, params).await)
    }
}
