//! Every call from Rust *into* C goes through this module: handler callbacks (the [`CHandler`]
//! implementation of core's [`mcpcore::Handler`] seam), user-data finalizers and completion
//! callbacks (STYLE "C ABI handle model").
//!
//! A C callback must return normally: it must not unwind (C++ exceptions) or `longjmp` out of the
//! call, because the Rust frames beneath it would be skipped.

use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use tokio::sync::oneshot;

use mcpcore::{BoxFuture, Handler, HandlerError, Outcome, RequestContext};

use crate::error::{mcp_error_t, FfiError};
use crate::handle;
use crate::request::mcp_request_t;
use crate::responder::mcp_responder_t;
use crate::status::mcp_status_t;
use crate::string::NulTerminated;

/// A handler callback.
///
/// Called on a runtime worker thread, possibly concurrently with other calls of the same or other
/// handlers. `request` is borrowed and valid only until the callback returns. `responder` is
/// owned by the callback: it must end in exactly one consuming call (`mcp_responder_result`,
/// `mcp_responder_error`, `mcp_responder_input_required` or `mcp_responder_free`), either before
/// returning or later from any thread. The callback must not block for long (hand slow work to
/// another thread and answer from there) and must not unwind or `longjmp`.
pub type mcp_handler_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request: *const mcp_request_t,
        responder: *mut mcp_responder_t,
    ),
>;

/// Finalizer for `user_data`: called exactly once, when the engine drops what it was registered
/// with (after the last in-flight call and the last outstanding responder of that handler).
pub type mcp_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A completion callback, invoked exactly once on a runtime thread.
///
/// `status` is `MCP_STATUS_OK` with `result_json` (NUL-terminated, `result_len` bytes) on
/// success; otherwise `result_json` is NULL and `error` describes the failure. Both are borrowed
/// and valid only until the callback returns.
pub type mcp_completion_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: mcp_status_t,
        result_json: *const c_char,
        result_len: usize,
        error: *const mcp_error_t,
    ),
>;

/// A `user_data` pointer plus its optional finalizer, run exactly once on drop.
pub(crate) struct UserData {
    ptr: *mut c_void,
    free: mcp_free_fn,
}

// SAFETY: the header requires user data passed to the engine to be usable from any thread (the
// engine calls handlers and the finalizer on its worker threads).
unsafe impl Send for UserData {}
// SAFETY: as above; the engine never dereferences the pointer itself.
unsafe impl Sync for UserData {}

impl UserData {
    pub(crate) fn new(ptr: *mut c_void, free: mcp_free_fn) -> Self {
        Self { ptr, free }
    }
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for UserData {
    fn drop(&mut self) {
        if let Some(f) = self.free.take() {
            // SAFETY: a C finalizer the user registered for exactly this pointer; called once
            // because `take` clears it.
            unsafe { f(self.ptr) };
        }
    }
}

/// A registered C handler: function pointer plus user data.
pub(crate) struct CCallback {
    func: unsafe extern "C" fn(*mut c_void, *const mcp_request_t, *mut mcp_responder_t),
    data: UserData,
}

/// Core's handler seam implemented by calling a C function.
pub(crate) struct CHandler {
    cb: Arc<CCallback>,
}

impl CHandler {
    /// Wrap a C handler. Takes ownership of `data` in every case (its finalizer runs when the
    /// handler is dropped, or right away if `func` is NULL).
    pub(crate) fn new(func: mcp_handler_fn, data: UserData) -> Result<Self, FfiError> {
        let Some(func) = func else {
            drop(data);
            return Err(FfiError::null("handler"));
        };
        Ok(Self {
            cb: Arc::new(CCallback { func, data }),
        })
    }
}

impl Handler for CHandler {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let cb = self.cb.clone();
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            let request = mcp_request_t::new(&ctx, params);
            let responder = handle::into_raw(mcp_responder_t::new(tx, ctx.clone(), cb.clone()));
            // SAFETY: calling the user's C handler with its own user data, a request that lives
            // until after the call, and an owned responder (see `mcp_handler_fn`).
            unsafe { (cb.func)(cb.data.ptr(), &request, responder) };
            drop(request);
            // Biased: the answer first — a handler that answered during the call is then taken
            // without registering a waiter on the cancellation token.
            tokio::select! {
                biased;
                r = rx => r.unwrap_or_else(|_| Err(HandlerError::internal("responder dropped"))),
                () = ctx.cancelled() => Err(HandlerError::internal("request cancelled")),
            }
        })
    }
}

/// A completion callback with its user data; invoked at most once.
pub(crate) struct Completion {
    func: unsafe extern "C" fn(*mut c_void, mcp_status_t, *const c_char, usize, *const mcp_error_t),
    user_data: *mut c_void,
}

// SAFETY: the header states completion callbacks run on runtime threads; the user data must be
// usable there.
unsafe impl Send for Completion {}

impl Completion {
    pub(crate) fn new(func: mcp_completion_fn, user_data: *mut c_void) -> Result<Self, FfiError> {
        let func = func.ok_or_else(|| FfiError::null("callback"))?;
        Ok(Self { func, user_data })
    }

    /// Deliver the outcome (consumes the completion, so it runs once).
    pub(crate) fn complete(self, outcome: Result<Value, FfiError>) {
        match outcome {
            Ok(v) => {
                let text = NulTerminated::json(&v);
                // SAFETY: the user's completion callback; `text` outlives the call.
                unsafe {
                    (self.func)(
                        self.user_data,
                        mcp_status_t::Ok,
                        text.bytes().as_ptr().cast(),
                        text.bytes().len(),
                        std::ptr::null(),
                    )
                };
            }
            Err(e) => {
                let status = e.status;
                let err = mcp_error_t::from(e);
                // SAFETY: the user's completion callback; `err` outlives the call.
                unsafe { (self.func)(self.user_data, status, std::ptr::null(), 0, &err) };
            }
        }
    }
}

// ---- client side: handlers for server→client requests, notifications, progress ----

/// A client handler callback: answers one server→client request (`sampling/createMessage`,
/// `elicitation/create`, `roots/list`, or any method registered with
/// `mcp_client_builder_on_request`), for a legacy server request and for a modern
/// `input_required` round alike.
///
/// Called on a runtime worker thread, possibly concurrently. `method` and `params_json` are
/// borrowed (NUL-terminated, with lengths) and valid only until the callback returns.
/// `responder` is owned by the callback and must end in exactly one consuming call
/// (`mcp_client_responder_result`, `mcp_client_responder_error` or `mcp_client_responder_free`),
/// before returning or later from any thread. Must not unwind or `longjmp`.
pub type mcp_client_handler_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        method: *const c_char,
        method_len: usize,
        params_json: *const c_char,
        params_len: usize,
        responder: *mut crate::client_responder::mcp_client_responder_t,
    ),
>;

/// A notification callback: every server notification except progress (which goes to the call's
/// progress callback) and `subscriptions/listen` streams, e.g. `notifications/message`,
/// `notifications/tools/list_changed`, `notifications/resources/updated`.
///
/// Called on a runtime thread, in the order the notifications arrived; must return quickly and
/// must not call a `..._blocking` function (it would get `MCP_STATUS_WOULD_DEADLOCK`).
/// `method` and `params_json` are borrowed until the callback returns.
pub type mcp_notification_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        method: *const c_char,
        method_len: usize,
        params_json: *const c_char,
        params_len: usize,
    ),
>;

/// A progress callback for one call: `total` is NaN when unknown; `message` is NULL when the
/// server sent none (else borrowed until the callback returns). Called on a runtime thread while
/// the call is pending; must return quickly.
pub type mcp_progress_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        progress: f64,
        total: f64,
        message: *const c_char,
        message_len: usize,
    ),
>;

type ClientHandlerFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_char,
    usize,
    *const c_char,
    usize,
    *mut crate::client_responder::mcp_client_responder_t,
);

/// A registered C client handler: function, method name, user data.
pub(crate) struct CClientCallback {
    func: ClientHandlerFn,
    method: NulTerminated,
    data: UserData,
}

/// Core's [`mcpcore::client::ClientHandler`] implemented by calling a C function.
pub(crate) struct CClientHandler(Arc<CClientCallback>);

impl CClientHandler {
    /// Takes ownership of `data` in every case (released at once when `func` is NULL).
    pub(crate) fn new(
        func: mcp_client_handler_fn,
        method: &str,
        data: UserData,
    ) -> Result<Self, FfiError> {
        let Some(func) = func else {
            drop(data);
            return Err(FfiError::null("handler"));
        };
        Ok(Self(Arc::new(CClientCallback {
            func,
            method: NulTerminated::new(method.as_bytes().to_vec()),
            data,
        })))
    }
}

type ClientAnswer = Result<Value, mcpcore::ErrorObject>;

/// Call the C handler with an owned responder; the answer arrives on the returned channel.
fn invoke_client_handler(
    cb: &Arc<CClientCallback>,
    params: &Value,
) -> oneshot::Receiver<ClientAnswer> {
    let (tx, rx) = oneshot::channel();
    let text = NulTerminated::json(params);
    let responder = handle::into_raw(crate::client_responder::mcp_client_responder_t::new(
        tx,
        cb.clone(),
    ));
    let m = cb.method.bytes();
    let p = text.bytes();
    // SAFETY: the user's C handler with its own user data; `method` and `text` outlive the call;
    // the responder is owned by the callee (see `mcp_client_handler_fn`).
    unsafe {
        (cb.func)(
            cb.data.ptr(),
            m.as_ptr().cast(),
            m.len(),
            p.as_ptr().cast(),
            p.len(),
            responder,
        )
    };
    rx
}

impl mcpcore::client::ClientHandler for CClientHandler {
    fn call(&self, params: Value) -> BoxFuture<ClientAnswer> {
        let cb = self.0.clone();
        Box::pin(async move {
            let rx = invoke_client_handler(&cb, &params);
            rx.await.unwrap_or_else(|_| {
                tracing::error!("a C client handler dropped its responder");
                Err(mcpcore::ErrorObject::internal())
            })
        })
    }
}

/// A notification closure for core's client calling the C callback.
pub(crate) fn notification_closure(
    func: mcp_notification_fn,
    data: UserData,
) -> Result<impl Fn(&str, &Value) + Send + Sync + 'static, FfiError> {
    let Some(func) = func else {
        drop(data);
        return Err(FfiError::null("callback"));
    };
    Ok(move |method: &str, params: &Value| {
        let m = NulTerminated::new(method.as_bytes().to_vec());
        let p = NulTerminated::json(params);
        // SAFETY: the user's notification callback; both strings outlive the call.
        unsafe {
            func(
                data.ptr(),
                m.bytes().as_ptr().cast(),
                m.bytes().len(),
                p.bytes().as_ptr().cast(),
                p.bytes().len(),
            )
        };
    })
}

/// A progress closure for core's `CallOptions` calling the C callback.
pub(crate) fn progress_closure(
    func: mcp_progress_fn,
    data: UserData,
) -> Result<mcpcore::client::ProgressFn, FfiError> {
    let Some(func) = func else {
        drop(data);
        return Err(FfiError::null("callback"));
    };
    Ok(Arc::new(
        move |progress: f64, total: Option<f64>, message: Option<String>| {
            let msg = message.map(|m| NulTerminated::new(m.into_bytes()));
            let (mp, ml) = msg.as_ref().map_or((std::ptr::null(), 0), |m| {
                (m.bytes().as_ptr().cast::<c_char>(), m.bytes().len())
            });
            // SAFETY: the user's progress callback; `msg` outlives the call.
            unsafe { func(data.ptr(), progress, total.unwrap_or(f64::NAN), mp, ml) };
        },
    ))
}
