//! The owned responder a C client handler receives for a server→client request (sampling,
//! elicitation, roots or any registered method): the client-side twin of `mcp_responder_t`
//! (REQUIREMENTS JR-05, SAMP-*, ELIC-*, ROOT-01, MRTR-01).
//!
//! Same rule as on the server: each responder ends in exactly one consuming call
//! (`_result`, `_error`, `_free`), and a consuming call consumes *even when it returns an error*.
//! The answer goes to a legacy server as the JSON-RPC response, or into the `inputResponses` of a
//! modern `input_required` retry; core does that routing.

use serde_json::Value;
use std::ffi::c_char;
use std::sync::Arc;
use tokio::sync::oneshot;

use mcpcore::ErrorObject;

use crate::error::FfiError;
use crate::guard::ffi_guard;
use crate::handle;
use crate::responder::{consume, OwedAnswer};
use crate::status::mcp_status_t;
use crate::string::{json_arg, opt_json_arg, str_arg};
use crate::trampoline::CClientCallback;

type Answer = Result<Value, ErrorObject>;

/// The right and duty to answer one server→client request. Owned by the client handler callback
/// that received it; may be moved to and used from any thread (one thread at a time).
pub struct mcp_client_responder_t {
    tx: oneshot::Sender<Answer>,
    // Keeps the handler's user data alive while an answer is still owed.
    _cb: Arc<CClientCallback>,
}

impl mcp_client_responder_t {
    pub(crate) fn new(tx: oneshot::Sender<Answer>, cb: Arc<CClientCallback>) -> Self {
        Self { tx, _cb: cb }
    }

    fn send(self, answer: Answer) -> Result<(), FfiError> {
        self.tx.send(answer).map_err(|_| {
            FfiError::new(
                mcp_status_t::Closed,
                "the request is gone (connection closed or call cancelled); the answer was discarded",
            )
        })
    }
}

impl OwedAnswer for mcp_client_responder_t {
    type Answer = Answer;

    fn send(self, answer: Answer) -> Result<(), FfiError> {
        mcp_client_responder_t::send(self, answer)
    }

    fn internal(&self, why: &FfiError) -> Answer {
        tracing::error!(error = %why.message, "invalid answer from a C client handler");
        Err(ErrorObject::internal())
    }
}

/// Consumes the responder: answer with a result object (e.g. a `CreateMessageResult`, an
/// `ElicitResult` `{"action":"accept","content":{...}}` or a `ListRootsResult`).
///
/// @param responder    the responder (consumed, even on error).
/// @param result_json  the result as a JSON object (UTF-8, `result_len` bytes, no NUL needed).
/// @param result_len   length of `result_json`.
///
/// **Ownership**: consumes `responder` in every case; `result_json` is copied.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (not JSON or not an object; the server then gets a generic -32603), `MCP_STATUS_CLOSED` (the
/// request is gone: connection closed or the call that needed the input ended).
#[no_mangle]
pub extern "C" fn mcp_client_responder_result(
    responder: *mut mcp_client_responder_t,
    result_json: *const c_char,
    result_len: usize,
) -> mcp_status_t {
    consume(responder, || {
        // SAFETY: result_json is NULL or valid for result_len bytes (contract).
        let v = unsafe { json_arg(result_json, result_len, "result_json") }?;
        if !v.is_object() {
            return Err(FfiError::new(
                mcp_status_t::InvalidJson,
                "result_json must be a JSON object",
            ));
        }
        Ok(Ok(v))
    })
}

/// Consumes the responder: answer with a JSON-RPC error (e.g. -1 "user rejected sampling").
///
/// @param responder    the responder (consumed, even on error).
/// @param code         the JSON-RPC error code.
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
/// (the server then gets -32603), `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_responder_error(
    responder: *mut mcp_client_responder_t,
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
        Ok(Err(e))
    })
}

/// Consumes the responder without answering: the server gets a generic -32603 internal error and
/// the abandonment is logged. NULL is a no-op.
///
/// @param responder  the responder.
///
/// **Ownership**: consumes `responder`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_client_responder_free(responder: *mut mcp_client_responder_t) {
    ffi_guard((), || {
        // SAFETY: responder is NULL or owned and not yet consumed (contract).
        if let Some(r) = unsafe { handle::take(responder) } {
            tracing::error!("a C client handler freed its responder without answering");
            let _ = r.send(Err(ErrorObject::internal()));
        }
    });
}
