//! Status codes returned by every fallible entry point (STYLE "C ABI handle model").
//!
//! The numbers are explicit, stable and never reused: a new status gets a new number at the end.

use std::ffi::c_char;

/// The outcome of a call. `MCP_STATUS_OK` (0) is success; every other value is a failure whose
/// detail, when the function takes an `mcp_error_t **error_out`, is in that error object.
///
/// The numbers are part of the ABI: they are stable and never reused.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcp_status {
    /// Success.
    Ok = 0,
    /// A required pointer argument was NULL.
    NullArgument = 1,
    /// An argument is out of range or not acceptable here (also: a registration or option the
    /// engine refused).
    InvalidArgument = 2,
    /// A string argument is not valid UTF-8.
    InvalidUtf8 = 3,
    /// A JSON argument does not parse, or has the wrong shape (e.g. not an object).
    InvalidJson = 4,
    /// The peer broke the protocol, or answered with a JSON-RPC error (see the error object).
    Protocol = 5,
    /// I/O or connection failure.
    Transport = 6,
    /// A timeout expired.
    Timeout = 7,
    /// The request was cancelled.
    Cancelled = 8,
    /// The connection, server or request is closed; nothing more can be sent on it.
    Closed = 9,
    /// A configured limit was exceeded.
    LimitExceeded = 10,
    /// A blocking function was called from a runtime thread (for example inside a callback),
    /// where it would deadlock. Nothing was done.
    WouldDeadlock = 11,
    /// The library panicked internally. The panic was caught and did not cross into C.
    Panic = 12,
    /// The feature is not available in this build or in this protocol era.
    Unsupported = 13,
    /// The server answered `input_required` and no registered client handler can supply the
    /// input: the error's `data_json` holds the raw `input_required` result (client calls).
    /// Server handlers: `mcp_responder_request_client` on a 2026-07-28 request the client has not
    /// answered yet (answer the request with an error; the handler runs again with the answer).
    InputRequired = 14,
}

/// The status type used in every signature (`MCP_STATUS_*` values of `mcp_status`).
pub type mcp_status_t = mcp_status;

// The C names of the statuses, so the constants below read (and are emitted by cbindgen) as the
// enum constants C code knows, `MCP_STATUS_OK` and so on.
use mcp_status::{
    Cancelled as MCP_STATUS_CANCELLED, Closed as MCP_STATUS_CLOSED,
    InputRequired as MCP_STATUS_INPUT_REQUIRED, InvalidArgument as MCP_STATUS_INVALID_ARGUMENT,
    InvalidJson as MCP_STATUS_INVALID_JSON, InvalidUtf8 as MCP_STATUS_INVALID_UTF8,
    LimitExceeded as MCP_STATUS_LIMIT_EXCEEDED, NullArgument as MCP_STATUS_NULL_ARGUMENT,
    Ok as MCP_STATUS_OK, Panic as MCP_STATUS_PANIC, Protocol as MCP_STATUS_PROTOCOL,
    Timeout as MCP_STATUS_TIMEOUT, Transport as MCP_STATUS_TRANSPORT,
    Unsupported as MCP_STATUS_UNSUPPORTED, WouldDeadlock as MCP_STATUS_WOULD_DEADLOCK,
};

/// How many statuses there are (the highest number plus one).
pub const MCP_STATUS_COUNT: usize = 15;

/// Every status in number order, as an array initializer:
/// `static const mcp_status_t all[MCP_STATUS_COUNT] = MCP_STATUS_ALL;`.
pub const MCP_STATUS_ALL: [mcp_status_t; MCP_STATUS_COUNT] = [
    MCP_STATUS_OK,
    MCP_STATUS_NULL_ARGUMENT,
    MCP_STATUS_INVALID_ARGUMENT,
    MCP_STATUS_INVALID_UTF8,
    MCP_STATUS_INVALID_JSON,
    MCP_STATUS_PROTOCOL,
    MCP_STATUS_TRANSPORT,
    MCP_STATUS_TIMEOUT,
    MCP_STATUS_CANCELLED,
    MCP_STATUS_CLOSED,
    MCP_STATUS_LIMIT_EXCEEDED,
    MCP_STATUS_WOULD_DEADLOCK,
    MCP_STATUS_PANIC,
    MCP_STATUS_UNSUPPORTED,
    MCP_STATUS_INPUT_REQUIRED,
];

impl mcp_status {
    /// The status's constant name, NUL-terminated.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Ok => "MCP_STATUS_OK\0",
            Self::NullArgument => "MCP_STATUS_NULL_ARGUMENT\0",
            Self::InvalidArgument => "MCP_STATUS_INVALID_ARGUMENT\0",
            Self::InvalidUtf8 => "MCP_STATUS_INVALID_UTF8\0",
            Self::InvalidJson => "MCP_STATUS_INVALID_JSON\0",
            Self::Protocol => "MCP_STATUS_PROTOCOL\0",
            Self::Transport => "MCP_STATUS_TRANSPORT\0",
            Self::Timeout => "MCP_STATUS_TIMEOUT\0",
            Self::Cancelled => "MCP_STATUS_CANCELLED\0",
            Self::Closed => "MCP_STATUS_CLOSED\0",
            Self::LimitExceeded => "MCP_STATUS_LIMIT_EXCEEDED\0",
            Self::WouldDeadlock => "MCP_STATUS_WOULD_DEADLOCK\0",
            Self::Panic => "MCP_STATUS_PANIC\0",
            Self::Unsupported => "MCP_STATUS_UNSUPPORTED\0",
            Self::InputRequired => "MCP_STATUS_INPUT_REQUIRED\0",
        }
    }
}

/// The name of a status as a static string, e.g. `"MCP_STATUS_INVALID_JSON"`.
///
/// @param status  any integer; values that are not a known status give `"MCP_STATUS_UNKNOWN"`.
///
/// **Ownership**: the returned string is static; never free it.
///
/// **Lifetime**: valid for the life of the program.
///
/// **Thread safety**: may be called from any thread, including inside callbacks.
///
/// **Errors**: none; never returns NULL.
#[no_mangle]
pub extern "C" fn mcp_status_str(status: i32) -> *const c_char {
    crate::guard::ffi_guard(c"MCP_STATUS_UNKNOWN".as_ptr(), || {
        let name = MCP_STATUS_ALL
            .iter()
            .find(|s| **s as i32 == status)
            .map_or("MCP_STATUS_UNKNOWN\0", |s| s.name());
        name.as_ptr().cast()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn numbers_are_stable_and_names_match() {
        for (i, s) in MCP_STATUS_ALL.iter().enumerate() {
            assert_eq!(*s as i32, i as i32, "numbers are dense and in order");
            // SAFETY: mcp_status_str returns a static NUL-terminated string.
            let got = unsafe { CStr::from_ptr(mcp_status_str(*s as i32)) };
            assert_eq!(got.to_bytes_with_nul(), s.name().as_bytes());
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(mcp_status_str(999)) };
        assert_eq!(unknown.to_str().ok(), Some("MCP_STATUS_UNKNOWN"));
    }
}
