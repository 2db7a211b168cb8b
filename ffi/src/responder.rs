//! The owned responder a handler callback receives: the async-completion path.
//!
//! Rule: each responder ends in exactly one consuming call (`_result`, `_error`,
//! `_input_required`, `_free`). A consuming call consumes the responder *even when it returns an
//! error*, so ownership is never ambiguous. Non-consuming calls (progress, log, server→client
//! requests, cancellation checks) may be made any number of times before that.

use serde_json::{Map, Value};
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

use mcpcore::{ErrorObject, HandlerError, InputRequired, LoggingLevel, Outcome, RequestContext};

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, forbid_runtime_thread, status_guard};
use crate::handle;
use crate::status::mcp_status_t;
use crate::string::{json_arg, opt_json_arg, opt_str_arg, owned_json, raw_json_arg, str_arg};
use crate::trampoline::{mcp_completion_fn, CCallback, Completion};

/// Log levels for `mcp_responder_log` (RFC 5424 order, as in MCP `LoggingLevel`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcp_log_level {
    /// debug
    Debug = 0,
    /// info
    Info = 1,
    /// notice
    Notice = 2,
    /// warning
    Warning = 3,
    /// error
    Error = 4,
    /// critical
    Critical = 5,
    /// alert
    Alert = 6,
    /// emergency
    Emergency = 7,
}

/// The level type (`MCP_LOG_LEVEL_*` values of `mcp_log_level`); functions take it as `int`.
pub type mcp_log_level_t = mcp_log_level;

type Answer = Result<Outcome, HandlerError>;

/// The right and duty to answer one request. Owned by the handler callback that received it; may
/// be moved to and used from any thread (one thread at a time).
pub struct mcp_responder_t {
    tx: oneshot::Sender<Answer>,
    ctx: RequestContext,
    rt: tokio::runtime::Handle,
    // Keeps the handler's user data alive while an answer is still owed.
    _cb: Arc<CCallback>,
}

impl mcp_responder_t {
    /// Must be created on a runtime thread.
    pub(crate) fn new(
        tx: oneshot::Sender<Answer>,
        ctx: RequestContext,
        cb: Arc<CCallback>,
    ) -> Self {
        Self {
            tx,
            ctx,
            rt: tokio::runtime::Handle::current(),
            _cb: cb,
        }
    }

    fn send(self, answer: Answer) -> Result<(), FfiError> {
        // A cancelled request's answer is discarded by the engine whether or not the waiting
        // side is still there; report that deterministically instead of racing the receiver.
        if self.ctx.is_cancelled() {
            let _ = self.tx.send(answer);
            return Err(FfiError::new(
                mcp_status_t::Cancelled,
                "the request was cancelled; the answer was discarded",
            ));
        }
        self.tx.send(answer).map_err(|_| {
            if self.ctx.is_cancelled() {
                FfiError::new(
                    mcp_status_t::Cancelled,
                    "the request was cancelled; the answer was discarded",
                )
            } else {
                FfiError::new(
                    mcp_status_t::Closed,
                    "the request is gone; the answer was discarded",
                )
            }
        })
    }
}

/// One answer owed to the engine, sent at most once: what the server handler's responder and the
/// client handler's responder (`client_responder.rs`) share.
pub(crate) trait OwedAnswer: Sized {
    type Answer;
    /// Deliver the answer; the status says whether anybody was still waiting for it.
    fn send(self, answer: Self::Answer) -> Result<(), FfiError>;
    /// The generic -32603 sent in place of an answer the C side could not express (logged here).
    fn internal(&self, why: &FfiError) -> Self::Answer;
}

/// Consume `responder`, answer with whatever `build` produces, or with -32603 when `build` fails
/// (the caller still gets `build`'s status).
pub(crate) fn consume<R: OwedAnswer>(
    responder: *mut R,
    build: impl FnOnce() -> Result<R::Answer, FfiError>,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: responder is NULL or an owned responder not consumed before (contract).
        let r = unsafe { handle::take(responder) }.ok_or_else(|| FfiError::null("responder"))?;
        match build() {
            Ok(answer) => r.send(answer),
            Err(e) => {
                let answer = r.internal(&e);
                let _ = r.send(answer);
                Err(e)
            }
        }
    })
}

impl OwedAnswer for mcp_responder_t {
    type Answer = Answer;

    fn send(self, answer: Answer) -> Result<(), FfiError> {
        mcp_responder_t::send(self, answer)
    }

    fn internal(&self, why: &FfiError) -> Answer {
        tracing::error!(method = self.ctx.method(), error = %why.message, "invalid answer from a C handler");
        Err(HandlerError::internal(why.message.clone()))
    }
}

/// Consumes the responder: answer with a result object.
///
/// @param responder    the responder (consumed, even on error).
/// @param result_json  the result as JSON text (UTF-8, `result_len` bytes, no NUL needed), e.g.
///                     a `CallToolResult` `{"content":[...]}` for a tool. Core completes it for
///                     the wire: `resultType`, `_meta` serverInfo and cache hints on the modern
///                     era, output-schema checks for tools. The text is checked to be JSON and,
///                     when it needs no reshaping (a tool result with `content`, no
///                     `structuredContent` and no output schema), sent as written.
/// @param result_len   length of `result_json` in bytes.
///
/// **Ownership**: consumes `responder` in every case; `result_json` is copied.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (the peer then gets a generic -32603 internal error); `MCP_STATUS_CANCELLED` or
/// `MCP_STATUS_CLOSED` when the request was cancelled or its connection is gone (the answer is
/// discarded).
#[no_mangle]
pub extern "C" fn mcp_responder_result(
    responder: *mut mcp_responder_t,
    result_json: *const c_char,
    result_len: usize,
) -> mcp_status_t {
    consume(responder, || {
        // SAFETY: result_json is NULL or valid for result_len bytes (contract).
        let raw = unsafe { raw_json_arg(result_json, result_len, "result_json") }?;
        Ok(Ok(Outcome::CompleteJson(raw)))
    })
}

/// Consumes the responder: answer with a JSON-RPC error of the handler's choosing.
///
/// @param responder    the responder (consumed, even on error).
/// @param code         the JSON-RPC error code (e.g. -32602).
/// @param message      UTF-8 message (`message_len` bytes).
/// @param message_len  length of `message`.
/// @param data_json    optional JSON for the error's `data` member (NULL for none).
/// @param data_len     length of `data_json`.
///
/// **Ownership**: consumes `responder` in every case; strings are copied.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (the peer then gets -32603), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_responder_error(
    responder: *mut mcp_responder_t,
    code: i64,
    message: *const c_char,
    message_len: usize,
    data_json: *const c_char,
    data_len: usize,
) -> mcp_status_t {
    consume(responder, || {
        // SAFETY: pointers are NULL or valid for their lengths (contract).
        let msg = unsafe { str_arg(message, message_len, "message") }?;
        // SAFETY: as above.
        let data = unsafe { opt_json_arg(data_json, data_len, "data_json") }?;
        let mut e = ErrorObject::new(code, msg);
        e.data = data;
        Ok(Err(HandlerError::Rpc(e)))
    })
}

/// Consumes the responder: answer `input_required` (modern era multi-round-trip; only for
/// `tools/call`, `prompts/get` and `resources/read`). The engine seals `state` and enforces the
/// era: on a legacy request the peer gets -32603.
///
/// @param responder      the responder (consumed, even on error).
/// @param requests_json  optional JSON object: key → `{"method": ..., "params": ...}` for
///                       `elicitation/create`, `sampling/createMessage` or `roots/list`.
/// @param requests_len   length of `requests_json`.
/// @param state          optional opaque UTF-8 state, returned on the retry by
///                       `mcp_request_state`.
/// @param state_len      length of `state`.
///
/// **Ownership**: consumes `responder` in every case; inputs are copied.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_INVALID_ARGUMENT` (both inputs NULL, or a request core refuses: an
/// unknown method, missing params, an unknown elicitation mode; the peer gets -32603),
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON` (not an object), `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_responder_input_required(
    responder: *mut mcp_responder_t,
    requests_json: *const c_char,
    requests_len: usize,
    state: *const c_char,
    state_len: usize,
) -> mcp_status_t {
    consume(responder, || {
        // SAFETY: pointers are NULL or valid for their lengths (contract).
        let requests = unsafe { opt_json_arg(requests_json, requests_len, "requests_json") }?;
        // SAFETY: as above.
        let state = unsafe { opt_str_arg(state, state_len, "state") }?;
        let input_requests = match requests {
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(FfiError::new(
                    mcp_status_t::InvalidJson,
                    "requests_json must be a JSON object",
                ))
            }
        };
        let ir = InputRequired {
            input_requests,
            request_state: state.map(str::to_owned),
        };
        // Core refuses a malformed outcome anyway; asking it here tells the caller why.
        ir.validate().map_err(FfiError::invalid)?;
        Ok(Ok(Outcome::InputRequired(ir)))
    })
}

/// Consumes the responder without answering: the engine answers a generic -32603 internal error
/// and logs that the handler abandoned the request. NULL is a no-op.
///
/// @param responder  the responder.
///
/// **Ownership**: consumes `responder`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_responder_free(responder: *mut mcp_responder_t) {
    ffi_guard((), || {
        // SAFETY: responder is NULL or owned and not yet consumed (contract).
        if let Some(r) = unsafe { handle::take(responder) } {
            let _ = r.send(Err(HandlerError::internal(
                "the C handler freed its responder without answering",
            )));
        }
    });
}

/// True once the request was cancelled (the peer cancelled it, or its connection ended). A
/// handler doing long work should poll this and stop early; answering a cancelled request is
/// allowed (the answer is discarded).
///
/// @param responder  the responder (NULL → false).
///
/// **Ownership**: borrows `responder`.
///
/// **Thread safety**: any thread holding the responder.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_responder_is_cancelled(responder: *const mcp_responder_t) -> bool {
    ffi_guard(false, || {
        // SAFETY: responder is NULL or live (contract).
        unsafe { handle::borrow(responder, "responder") }.is_ok_and(|r| r.ctx.is_cancelled())
    })
}

/// Report progress against the request's `progressToken` (`notifications/progress`).
///
/// @param responder    the responder.
/// @param progress     the progress so far; must increase from call to call.
/// @param total        the total, or a negative / NaN value for "unknown".
/// @param message      optional UTF-8 message (NULL for none).
/// @param message_len  length of `message`.
/// @param sent_out     optional; receives whether a notification was sent (false without a
///                     progress token, after cancellation, when `progress` did not increase, or
///                     when the outbound queue is full). Written only on `MCP_STATUS_OK`.
///
/// **Ownership**: borrows `responder`; `message` is copied.
///
/// **Thread safety**: any thread holding the responder.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_ARGUMENT`
/// (`progress` not finite).
#[no_mangle]
pub extern "C" fn mcp_responder_progress(
    responder: *const mcp_responder_t,
    progress: f64,
    total: f64,
    message: *const c_char,
    message_len: usize,
    sent_out: *mut bool,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: responder is NULL or live (contract).
        let r = unsafe { handle::borrow(responder, "responder") }?;
        // SAFETY: message is NULL or valid for message_len bytes.
        let msg = unsafe { opt_str_arg(message, message_len, "message") }?;
        if !progress.is_finite() {
            return Err(FfiError::invalid("progress must be a finite number"));
        }
        let total = (total.is_finite() && total >= 0.0).then_some(total);
        let sent = r.ctx.progress(progress, total, msg);
        // SAFETY: sent_out is NULL or writable.
        unsafe { handle::write_opt(sent_out, sent) };
        Ok(())
    })
}

/// Send a `notifications/message` log entry for this request, filtered by the level the client
/// asked for (legacy `logging/setLevel`; modern: only when the request's envelope set a level).
///
/// @param responder   the responder.
/// @param level       one of `mcp_log_level_t` (passed as `int`).
/// @param logger      optional UTF-8 logger name (NULL for none).
/// @param logger_len  length of `logger`.
/// @param data_json   the log data as JSON text (any JSON value).
/// @param data_len    length of `data_json`.
/// @param sent_out    optional; receives whether the entry was sent (written only on OK).
///
/// **Ownership**: borrows `responder`; inputs are copied.
///
/// **Thread safety**: any thread holding the responder.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_ARGUMENT` (unknown level),
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`.
#[no_mangle]
pub extern "C" fn mcp_responder_log(
    responder: *const mcp_responder_t,
    level: i32,
    logger: *const c_char,
    logger_len: usize,
    data_json: *const c_char,
    data_len: usize,
    sent_out: *mut bool,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: responder is NULL or live (contract).
        let r = unsafe { handle::borrow(responder, "responder") }?;
        let level = log_level(level)?;
        // SAFETY: pointers are NULL or valid for their lengths.
        let logger = unsafe { opt_str_arg(logger, logger_len, "logger") }?;
        // SAFETY: as above.
        let data = unsafe { json_arg(data_json, data_len, "data_json") }?;
        let sent = r.ctx.log(level, logger, data);
        // SAFETY: sent_out is NULL or writable.
        unsafe { handle::write_opt(sent_out, sent) };
        Ok(())
    })
}

pub(crate) fn log_level(level: i32) -> Result<LoggingLevel, FfiError> {
    Ok(match level {
        0 => LoggingLevel::Debug,
        1 => LoggingLevel::Info,
        2 => LoggingLevel::Notice,
        3 => LoggingLevel::Warning,
        4 => LoggingLevel::Error,
        5 => LoggingLevel::Critical,
        6 => LoggingLevel::Alert,
        7 => LoggingLevel::Emergency,
        _ => return Err(FfiError::invalid(format!("unknown log level {level}"))),
    })
}

async fn client_request(
    ctx: RequestContext,
    method: String,
    params: Option<Value>,
    timeout: Option<Duration>,
) -> Result<Value, FfiError> {
    ctx.request_client_with(&method, params, timeout)
        .await
        .map_err(FfiError::from)
}

/// Validated inputs of a server→client request.
///
/// # Safety
/// Pointers are NULL or valid for their lengths.
unsafe fn client_request_args(
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    timeout_ms: u64,
) -> Result<(String, Option<Value>, Option<Duration>), FfiError> {
    // SAFETY: forwarded contract.
    let method = unsafe { str_arg(method, method_len, "method") }?.to_owned();
    // SAFETY: forwarded contract.
    let params = unsafe { opt_json_arg(params_json, params_len, "params_json") }?;
    if params.as_ref().is_some_and(|p| !p.is_object()) {
        return Err(FfiError::new(
            mcp_status_t::InvalidJson,
            "params_json must be a JSON object",
        ));
    }
    let timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
    Ok((method, params, timeout))
}

/// Ask the client from inside a handler and get the answer through a completion callback:
/// `sampling/createMessage`, `elicitation/create`, `roots/list` (each checked against the
/// client's capabilities), `ping`, or any other method.
///
/// Legacy sessions: a real server→client request. 2026-07-28 requests (no server→client
/// requests): the answer the client gave on an earlier round, or `MCP_STATUS_INPUT_REQUIRED` when
/// it has not answered yet. Then answer the request with any error (e.g.
/// `mcp_responder_error`): the engine answers `input_required` asking the client for every such
/// request of this run, and the handler runs again **from the start** when the client retries,
/// this time getting the answer. Work done before the call repeats every round; make the same
/// calls in the same order each run. Only `tools/call`, `prompts/get` and `resources/read` may
/// ask, and only for `sampling/createMessage`, `elicitation/create` and `roots/list`; anything
/// else is `MCP_STATUS_UNSUPPORTED` with the JSON-RPC error the request would get.
///
/// @param responder    the responder of the request being handled (not consumed).
/// @param method       UTF-8 method name.
/// @param method_len   length of `method`.
/// @param params_json  optional JSON object of params (NULL for none).
/// @param params_len   length of `params_json`.
/// @param timeout_ms   timeout in milliseconds; 0 uses the server's `peerRequestTimeoutMs`.
/// @param callback     invoked exactly once on a runtime thread when the function returned
///                     `MCP_STATUS_OK`: with the result JSON, or with a status and error
///                     (`MCP_STATUS_PROTOCOL` + JSON-RPC code when the client answered an error,
///                     `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`,
///                     `MCP_STATUS_INPUT_REQUIRED` (2026-07-28: see above),
///                     `MCP_STATUS_UNSUPPORTED` for a missing capability (2026-07-28: JSON-RPC
///                     code -32021 with `requiredCapabilities` as data) or a request that cannot
///                     be asked here).
/// @param user_data    passed to `callback`.
/// @param error_out    optional detailed error when the call itself fails.
///
/// **Ownership**: borrows `responder`; inputs are copied. The responder may be consumed before
/// the callback runs (the nested request is then cancelled with the parent only if the parent is
/// cancelled).
///
/// **Thread safety**: any thread holding the responder.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`;
/// on any of them `callback` is never invoked.
#[no_mangle]
pub extern "C" fn mcp_responder_request_client(
    responder: *const mcp_responder_t,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    timeout_ms: u64,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: responder is NULL or live (contract).
        let r = unsafe { handle::borrow(responder, "responder") }?;
        let completion = Completion::new(callback, user_data)?;
        // SAFETY: pointers are NULL or valid for their lengths.
        let (method, params, timeout) = unsafe {
            client_request_args(method, method_len, params_json, params_len, timeout_ms)
        }?;
        let ctx = r.ctx.clone();
        r.rt.spawn(async move {
            let outcome = client_request(ctx, method, params, timeout).await;
            completion.complete(outcome);
        });
        Ok(())
    })
}

/// Blocking twin of `mcp_responder_request_client`, for a thread the handler handed its
/// responder to. Refused inside callbacks and on runtime threads (`MCP_STATUS_WOULD_DEADLOCK`).
///
/// @param responder    the responder (not consumed).
/// @param method       UTF-8 method name.
/// @param method_len   length of `method`.
/// @param params_json  optional JSON object of params.
/// @param params_len   length of `params_json`.
/// @param timeout_ms   timeout in milliseconds; 0 uses the server default.
/// @param result_out   receives the result JSON on success (free with `mcp_string_free`).
/// @param error_out    optional detailed error on failure.
///
/// **Ownership**: borrows `responder`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread holding the responder.
///
/// **Errors**: as `mcp_responder_request_client`'s callback, plus `MCP_STATUS_WOULD_DEADLOCK`.
#[no_mangle]
pub extern "C" fn mcp_responder_request_client_blocking(
    responder: *const mcp_responder_t,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    timeout_ms: u64,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: responder is NULL or live (contract).
        let r = unsafe { handle::borrow(responder, "responder") }?;
        handle::require_out(result_out, "result_out")?;
        forbid_runtime_thread("mcp_responder_request_client_blocking")?;
        // SAFETY: pointers are NULL or valid for their lengths.
        let (method, params, timeout) = unsafe {
            client_request_args(method, method_len, params_json, params_len, timeout_ms)
        }?;
        let v =
            r.rt.block_on(client_request(r.ctx.clone(), method, params, timeout))?;
        // SAFETY: result_out is non-NULL (checked) and writable.
        unsafe { result_out.write(owned_json(&v)) };
        Ok(())
    })
}
