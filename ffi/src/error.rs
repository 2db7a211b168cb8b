//! Detailed errors: the Rust-side [`FfiError`] and the C handle [`mcp_error_t`] it becomes.
//!
//! An error object is immutable after creation and may be read from any thread at once. It
//! carries the status, a message, the JSON-RPC code (when a peer or handler chose one) and the
//! JSON-RPC `data` as JSON text. There is no thread-local "last error".
//!
//! Statuses come from core's classification ([`ErrorKind`]) through [`status_of`], the one place
//! that maps it; no module matches on core's error variants by hand.

use serde_json::Value;
use std::ffi::c_char;

use mcpcore::client::ClientError;
use mcpcore::runtime::RuntimeError;
use mcpcore::server::{BuildError, PeerError};
use mcpcore::transport::stdio::StdioError;
use mcpcore::{ErrorKind, ErrorObject};

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
    /// An error of core's classification `kind`.
    pub(crate) fn of_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::new(status_of(kind), message)
    }
    /// A refused options patch (a shape error is `INVALID_JSON`, a range error
    /// `INVALID_ARGUMENT`); `what` names the argument.
    pub(crate) fn options(what: &str, e: &mcpcore::options::OptionsError) -> Self {
        Self::of_kind(e.kind(), format!("{what}: {e}"))
    }
    /// A JSON-RPC error the peer answered with.
    pub(crate) fn rpc(e: ErrorObject) -> Self {
        Self {
            status: status_of(ErrorKind::Rpc),
            message: e.message,
            jsonrpc_code: e.code,
            data: e.data,
        }
    }
}

/// The one mapping from core's [`ErrorKind`] to C statuses; every core error reaches C through
/// it (the `From` impls below add what a kind carries: the JSON-RPC code and data, the raw
/// `input_required` result).
pub(crate) fn status_of(kind: ErrorKind) -> mcp_status_t {
    match kind {
        // A peer's JSON-RPC error is reported as PROTOCOL with the code in the error object.
        ErrorKind::Rpc | ErrorKind::Protocol => mcp_status_t::Protocol,
        ErrorKind::Timeout => mcp_status_t::Timeout,
        ErrorKind::Cancelled => mcp_status_t::Cancelled,
        ErrorKind::Closed => mcp_status_t::Closed,
        ErrorKind::Transport => mcp_status_t::Transport,
        ErrorKind::InvalidArgument => mcp_status_t::InvalidArgument,
        ErrorKind::InvalidJson => mcp_status_t::InvalidJson,
        ErrorKind::InputRequired => mcp_status_t::InputRequired,
        ErrorKind::LimitExceeded => mcp_status_t::LimitExceeded,
        ErrorKind::Unsupported => mcp_status_t::Unsupported,
        ErrorKind::WouldDeadlock => mcp_status_t::WouldDeadlock,
        // C has no internal-failure status: an engine or OS failure with no peer at fault is
        // reported like the other OS failures (the runtime's thread start has always been
        // TRANSPORT). Kinds added to core later land here too until they get their own status.
        _ => mcp_status_t::Transport,
    }
}

impl From<ClientError> for FfiError {
    fn from(e: ClientError) -> Self {
        let kind = e.kind();
        match e {
            ClientError::Rpc(o) => FfiError::rpc(o),
            ClientError::InputRequired(raw) => {
                let mut f = FfiError::of_kind(
                    kind,
                    "the server requires input no registered handler can give",
                );
                f.data = Some(raw);
                f
            }
            other => FfiError::of_kind(kind, other.to_string()),
        }
    }
}

impl From<PeerError> for FfiError {
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::Rpc(o) => FfiError::rpc(o),
            // The engine's refusal (e.g. -32021 with `requiredCapabilities`): the C handler sees
            // its JSON-RPC code and data, and propagating it sends exactly that error.
            PeerError::Unavailable(o) => FfiError {
                jsonrpc_code: o.code,
                data: o.data.clone(),
                ..FfiError::of_kind(mcpcore::ErrorKind::Unsupported, o.message)
            },
            PeerError::InputRequired(key) => FfiError::of_kind(
                mcpcore::ErrorKind::InputRequired,
                format!(
                    "the client has not answered {key} yet: answer this request with an error; \
                     the engine asks the client and runs the handler again with the answer"
                ),
            ),
            other => FfiError::of_kind(other.kind(), other.to_string()),
        }
    }
}

impl From<StdioError> for FfiError {
    fn from(e: StdioError) -> Self {
        FfiError::of_kind(e.kind(), e.to_string())
    }
}

impl From<BuildError> for FfiError {
    fn from(e: BuildError) -> Self {
        FfiError::of_kind(e.kind(), e.to_string())
    }
}

impl FfiError {
    /// A runtime refusal or failure of the C function `what`.
    pub(crate) fn runtime(what: &str, e: &RuntimeError) -> Self {
        FfiError::of_kind(e.kind(), format!("{what}: {e}"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use mcpcore::ErrorKind as K;

    /// Every kind has a status, and the statuses the C suite and the header document stay.
    #[test]
    fn every_kind_maps_to_its_status() {
        use mcp_status_t as S;
        let expected = [
            (K::Rpc, S::Protocol),
            (K::Timeout, S::Timeout),
            (K::Cancelled, S::Cancelled),
            (K::Closed, S::Closed),
            (K::Transport, S::Transport),
            (K::InvalidArgument, S::InvalidArgument),
            (K::InvalidJson, S::InvalidJson),
            (K::InputRequired, S::InputRequired),
            (K::LimitExceeded, S::LimitExceeded),
            (K::Unsupported, S::Unsupported),
            (K::Protocol, S::Protocol),
            (K::WouldDeadlock, S::WouldDeadlock),
            (K::Internal, S::Transport),
        ];
        assert_eq!(
            expected.len(),
            K::ALL.len(),
            "a new kind needs a decided status"
        );
        for (k, s) in expected {
            assert_eq!(status_of(k), s, "{k}");
        }
    }

    #[test]
    fn core_errors_carry_their_detail_to_c() {
        let rpc = ErrorObject::new(-32602, "bad").with_data(serde_json::json!({"k": 1}));
        let f = FfiError::from(ClientError::Rpc(rpc.clone()));
        assert_eq!(
            (f.status, f.jsonrpc_code, f.message.as_str()),
            (mcp_status_t::Protocol, -32602, "bad")
        );
        assert_eq!(f.data, rpc.data);
        let f = FfiError::from(ClientError::InputRequired(serde_json::json!({"x": 1})));
        assert_eq!(f.status, mcp_status_t::InputRequired);
        assert_eq!(f.data, Some(serde_json::json!({"x": 1})));
        let f = FfiError::from(ClientError::InvalidArgument("url".into()));
        assert_eq!(f.status, mcp_status_t::InvalidArgument);
        assert!(f.message.contains("url"));
        let f = FfiError::from(PeerError::Rpc(rpc));
        assert_eq!((f.status, f.jsonrpc_code), (mcp_status_t::Protocol, -32602));
        let f = FfiError::from(PeerError::MissingCapability("sampling".into()));
        assert_eq!(f.status, mcp_status_t::Unsupported);
        assert_eq!(
            FfiError::from(StdioError::FrameTooLarge(8)).status,
            mcp_status_t::LimitExceeded
        );
        let f = FfiError::runtime("mcp_x", &RuntimeError::WouldDeadlock);
        assert_eq!(f.status, mcp_status_t::WouldDeadlock);
        assert!(f.message.starts_with("mcp_x: "), "{}", f.message);
    }
}
