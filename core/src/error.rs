//! Errors that cross the wire (JSON-RPC error objects) and errors that handlers raise, and the
//! one classification of every public error type, [`ErrorKind`].
//!
//! REQUIREMENTS JR-02, JR-08, §0.5. An internal failure never reaches the peer with its detail
//! (CWE-209): it is logged locally and answered with a generic -32603.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Standard and MCP-specific JSON-RPC error codes (REQUIREMENTS §0.5).
pub mod codes {
    /// Unparsable JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid JSON-RPC request or notification.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown or removed method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error (generic message, no details).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A server→client request timed out (SDK convention; legacy era).
    pub const REQUEST_TIMEOUT: i64 = -32001;
    /// Resource not found (legacy era only).
    pub const RESOURCE_NOT_FOUND_LEGACY: i64 = -32002;
    /// Modern HTTP: a standard header is missing, malformed or differs from the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// Modern: the request lacks a client capability the handling needs.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// Modern: the requested protocol version is not served.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// Legacy 2025-11-25: a URL elicitation must complete first.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
}

/// What kind of failure an error is: the one classification bindings map to their own error
/// types (the C ABI's `mcp_status_t`, Python exception classes, Node error codes), so none of
/// them matches on the variants of each error type by hand.
///
/// Every public error type of the crate has a `kind()`: [`HandlerError`],
/// [`crate::client::ClientError`], [`crate::server::PeerError`],
/// [`crate::transport::stdio::StdioError`], [`crate::options::OptionsError`],
/// [`crate::server::BuildError`], [`crate::limits::LimitError`],
/// [`crate::runtime::RuntimeError`], `SealError` (sealing) and the smaller
/// ones. New kinds may be added; map unknown
/// ones to a generic failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The peer answered with a JSON-RPC error; its code, message and data are in the error
    /// (e.g. [`crate::client::ClientError::Rpc`]). A busy server's refusal is one of these
    /// (`data.reason = "busy"`, see [`ErrorObject::server_busy`]).
    Rpc,
    /// A timeout expired (the request was cancelled on the wire where the era allows it).
    Timeout,
    /// The caller, or the request the work belonged to, cancelled it.
    Cancelled,
    /// The connection, client, server or runtime is closed; nothing more can be sent on it.
    Closed,
    /// An I/O, connection or operating-system failure (spawn, socket, HTTP status without a
    /// JSON-RPC body, the OS refusing threads or file descriptors).
    Transport,
    /// An argument or option value was refused before anything was done.
    InvalidArgument,
    /// A JSON argument has the wrong shape: not an object, an unknown key, a wrong type.
    InvalidJson,
    /// The server answered `input_required` and no registered handler could supply the input;
    /// the raw result travels with the error (MRTR-04).
    InputRequired,
    /// A configured limit was crossed (frame size, event size).
    LimitExceeded,
    /// The peer or the era does not support what was asked (a missing client capability, a
    /// server→client request on a 2026-07-28 request).
    Unsupported,
    /// The peer broke the protocol (an invalid response, `structuredContent` that does not
    /// match the tool's output schema).
    Protocol,
    /// A blocking call was made on a runtime thread, where it would deadlock; nothing was done.
    WouldDeadlock,
    /// A failure inside the engine (or a handler's internal failure); no detail reaches a peer.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 13] = [
        Self::Rpc,
        Self::Timeout,
        Self::Cancelled,
        Self::Closed,
        Self::Transport,
        Self::InvalidArgument,
        Self::InvalidJson,
        Self::InputRequired,
        Self::LimitExceeded,
        Self::Unsupported,
        Self::Protocol,
        Self::WouldDeadlock,
        Self::Internal,
    ];

    /// A stable snake_case name (`"rpc"`, `"timeout"`, `"invalid_argument"`, …) for bindings
    /// that expose the kind as a string (an error's `code` in Node, an attribute in Python).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rpc => "rpc",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Closed => "closed",
            Self::Transport => "transport",
            Self::InvalidArgument => "invalid_argument",
            Self::InvalidJson => "invalid_json",
            Self::InputRequired => "input_required",
            Self::LimitExceeded => "limit_exceeded",
            Self::Unsupported => "unsupported",
            Self::Protocol => "protocol",
            Self::WouldDeadlock => "would_deadlock",
            Self::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JSON-RPC error object as it appears on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short, single-sentence description.
    pub message: String,
    /// Optional structured detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// Attach structured `data`.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// -32700.
    pub fn parse_error() -> Self {
        Self::new(codes::PARSE_ERROR, "Parse error")
    }
    /// -32600 with a reason.
    pub fn invalid_request(reason: impl std::fmt::Display) -> Self {
        Self::new(codes::INVALID_REQUEST, format!("Invalid Request: {reason}"))
    }
    /// -32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
    /// -32602 with a precise reason.
    pub fn invalid_params(reason: impl std::fmt::Display) -> Self {
        Self::new(codes::INVALID_PARAMS, format!("Invalid params: {reason}"))
    }
    /// The in-flight cap (`Limits::max_inflight`) is reached: -32603 with a message that says so
    /// and `data.reason = "busy"`. The spec reserves -32000…-32099 and defines no overload code,
    /// so the standard internal-error code carries it; the request was not run and may be retried.
    pub fn server_busy(max_inflight: usize) -> Self {
        Self::new(
            codes::INTERNAL_ERROR,
            format!("Server busy: at most {max_inflight} requests may run at once; retry later"),
        )
        .with_data(serde_json::json!({"reason": "busy", "maxInflight": max_inflight}))
    }
    /// The server stopped before the request finished (its graceful shutdown deadline passed):
    /// -32603 with `data.reason = "shutdown"`. Like [`Self::server_busy`] this uses the standard
    /// internal-error code because the spec defines none for it; the request was cancelled and
    /// its effects are unknown. mcpcore's client reports it as a closed connection.
    pub fn server_shutting_down() -> Self {
        Self::new(
            codes::INTERNAL_ERROR,
            "Server shutting down: the request was cancelled",
        )
        .with_data(serde_json::json!({"reason": "shutdown"}))
    }
    /// True for [`Self::server_shutting_down`].
    pub fn is_server_shutdown(&self) -> bool {
        self.code == codes::INTERNAL_ERROR
            && self
                .data
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                == Some("shutdown")
    }
    /// The generic -32603: never carries internal detail.
    pub fn internal() -> Self {
        Self::new(codes::INTERNAL_ERROR, "Internal error")
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// What a handler may fail with.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// A JSON-RPC error the handler chose; sent to the peer as is.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// An internal failure; its detail is logged and the peer sees a generic -32603.
    #[error("internal error: {0}")]
    Internal(String),
    /// The handler stopped because the request was cancelled. No response goes out for a
    /// cancelled request (CAN-01); should the request not be cancelled after all (the handler
    /// gave up on its own), the peer gets -32603 "Request cancelled".
    #[error("request cancelled")]
    Cancelled,
}

impl HandlerError {
    /// A chosen JSON-RPC error.
    pub fn rpc(code: i64, message: impl Into<String>) -> Self {
        Self::Rpc(ErrorObject::new(code, message))
    }
    /// A -32602 invalid-params error.
    pub fn invalid_params(reason: impl std::fmt::Display) -> Self {
        Self::Rpc(ErrorObject::invalid_params(reason))
    }
    /// An internal failure with a detail for the local log only.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Self::Internal(detail.to_string())
    }
    /// The handler stopped because its request was cancelled (see
    /// `RequestContext::cancelled`); the engine sends no response (CAN-01).
    pub fn cancelled() -> Self {
        Self::Cancelled
    }
    /// The error object for the wire: internal details are redacted and logged here.
    pub fn into_wire(self, method: &str) -> ErrorObject {
        match self {
            HandlerError::Rpc(e) => e,
            HandlerError::Internal(detail) => {
                tracing::error!(method, detail = %detail, "handler failed");
                ErrorObject::internal()
            }
            HandlerError::Cancelled => {
                tracing::debug!(method, "handler stopped: request cancelled");
                ErrorObject::new(codes::INTERNAL_ERROR, "Request cancelled")
            }
        }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(e: ErrorObject) -> Self {
        HandlerError::Rpc(e)
    }
}

impl From<serde_json::Error> for HandlerError {
    fn from(e: serde_json::Error) -> Self {
        HandlerError::Internal(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_distinct_and_stable() {
        let names: std::collections::HashSet<_> =
            ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        assert_eq!(ErrorKind::InvalidArgument.to_string(), "invalid_argument");
        assert_eq!(ErrorKind::WouldDeadlock.as_str(), "would_deadlock");
    }
}
