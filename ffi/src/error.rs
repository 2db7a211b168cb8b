//! Detailed errors: the Rust-side [`FfiError`] and the C handle [`mcp_error_t`] it becomes.
//!
//! An error object is immutable after creation and may be read from any thread at once. It
//! carries the status, a message, the JSON-RPC code (when a peer or handler chose one) and the
//! JSON-RPC `data` as JSON text. There is no thread-local "last error" (issue 8 §4).

use serde_json::Value;
use std::ffi::c_char;

use crate::guard::ffi_guard;
use crate::handle;
use crate::status::mcp_status_t;
use crate::string::NulTerminated;

/// An error on its way to C.
#[derive(Debug, Clone)]
pub(crate) struct FfiError {
    pub status: mcp_status_t,
    pub message: String,
    pub jsonrpc_code: i64,
    pub data: Option<Value>,
}

impl FfiError {
    pub(crate) fn new(status: mcp_status_t, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            jsonrpc_code: 0,
            data: None,
        }
    }
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(mcp_status_t::InvalidArgument, message)
    }
    /// A JSON-RPC error the peer answered with.
    /// A refused options patch: a shape error is `INVALID_JSON`, a range error
    /// `INVALID_ARGUMENT`; `what` names the argument.
    pub(crate) fn options(what: &str, e: &mcpcore::options::OptionsError) -> Self {
        let status = match e {
            mcpcore::options::OptionsError::Range(_) => mcp_status_t::InvalidArgument,
            _ => mcp_status_t::InvalidJson,
        };
        Self::new(status, format!("{what}: {e}"))
    }

    pub(crate) fn rpc(e: mcpcore::ErrorObject) -> Self {
        Self {
            status: mcp_status_t::Protocol,
            message: e.message,
            jsonrpc_code: e.code,
            data: e.data,
        }
    }
}

/// A detailed error. Created by the library, read with the `mcp_error_*` accessors, freed with
/// `mcp_error_free`. Immutable: any number of threads may read one error at once.
pub struct mcp_error_t {
    status: mcp_status_t,
    message: NulTerminated,
    jsonrpc_code: i64,
    data: Option<NulTerminated>,
}

impl From<FfiError> for mcp_error_t {
    fn from(e: FfiError) -> Self {
        Self {
            status: e.status,
            message: NulTerminated::new(e.message.into_bytes()),
            jsonrpc_code: e.jsonrpc_code,
            data: e
                .data
                .map(|d| NulTerminated::new(serde_json::to_vec(&d).unwrap_or_default())),
        }
    }
}

impl mcp_error_t {
    #[cfg(test)]
    pub(crate) fn status(&self) -> mcp_status_t {
        self.status
    }
    #[cfg(test)]
    pub(crate) fn message(&self) -> String {
        String::from_utf8_lossy(self.message.bytes()).into_owned()
    }
}

/// The status this error stands for.
///
/// @param error  the error (may be NULL).
///
/// **Ownership**: borrows `error`.
///
/// **Thread safety**: any thread; errors are immutable.
///
/// **Errors**: returns `MCP_STATUS_NULL_ARGUMENT` when `error` is NULL.
#[no_mangle]
pub extern "C" fn mcp_error_status(error: *const mcp_error_t) -> mcp_status_t {
    ffi_guard(mcp_status_t::Panic, || {
        // SAFETY: error is NULL or a live error handle (contract).
        unsafe { handle::borrow(error, "error") }.map_or(mcp_status_t::NullArgument, |e| e.status)
    })
}

/// The human-readable message: UTF-8, NUL-terminated.
///
/// @param error    the error (may be NULL).
/// @param len_out  if not NULL, receives the message length in bytes (without the NUL).
///
/// **Ownership**: the returned string is borrowed from `error`; do not free it.
///
/// **Lifetime**: valid until `mcp_error_free(error)`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: returns NULL (and leaves `len_out` untouched) when `error` is NULL.
#[no_mangle]
pub extern "C" fn mcp_error_message(
    error: *const mcp_error_t,
    len_out: *mut usize,
) -> *const c_char {
    ffi_guard(std::ptr::null(), || {
        // SAFETY: error is NULL or a live error handle (contract).
        match unsafe { handle::borrow(error, "error") } {
            Ok(e) => e.message.expose(len_out),
            Err(_) => std::ptr::null(),
        }
    })
}

/// The JSON-RPC error code when the error came from a JSON-RPC error object (a peer's answer or
/// a handler's choice), otherwise 0.
///
/// @param error  the error (may be NULL → 0).
///
/// **Ownership**: borrows `error`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_error_jsonrpc_code(error: *const mcp_error_t) -> i64 {
    ffi_guard(0, || {
        // SAFETY: error is NULL or a live error handle (contract).
        unsafe { handle::borrow(error, "error") }.map_or(0, |e| e.jsonrpc_code)
    })
}

/// The JSON-RPC `data` member as JSON text (NUL-terminated), or NULL when there is none.
///
/// @param error    the error (may be NULL → NULL).
/// @param len_out  if not NULL and data exists, receives its length in bytes.
///
/// **Ownership**: borrowed from `error`; do not free it.
///
/// **Lifetime**: valid until `mcp_error_free(error)`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none (NULL when absent).
#[no_mangle]
pub extern "C" fn mcp_error_data_json(
    error: *const mcp_error_t,
    len_out: *mut usize,
) -> *const c_char {
    ffi_guard(std::ptr::null(), || {
        // SAFETY: error is NULL or a live error handle (contract).
        match unsafe { handle::borrow(error, "error") } {
            Ok(e) => e
                .data
                .as_ref()
                .map_or(std::ptr::null(), |d| d.expose(len_out)),
            Err(_) => std::ptr::null(),
        }
    })
}

/// Free an error. NULL is a no-op.
///
/// @param error  an error returned through an `mcp_error_t **error_out`.
///
/// **Ownership**: consumes `error`; strings borrowed from it become invalid. Never free an error
/// passed *borrowed* to a callback.
///
/// **Thread safety**: any thread, but not while another thread still reads the same error.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_error_free(error: *mut mcp_error_t) {
    ffi_guard((), || {
        // SAFETY: error is NULL or an owned error handle (contract).
        drop(unsafe { handle::take(error) });
    });
}
