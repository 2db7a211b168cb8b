//! Errors a client call can end in (REQUIREMENTS 0.8, LC-08, CAN-04, MRTR-04, TOOL-06).
//!
//! Every failure is a value: a JSON-RPC error from the server, a local timeout or cancellation,
//! a transport that closed (process died, over-limit frame, HTTP failure), an invalid response, or
//! an argument refused before anything was sent.

use serde_json::Value;

use crate::error::ErrorObject;

/// Why a client operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Rpc(ErrorObject),
    /// No answer within the call's timeout (the request was cancelled on the wire).
    #[error("request timed out")]
    Timeout,
    /// The caller cancelled the request.
    #[error("request cancelled")]
    Cancelled,
    /// The connection is closed (or closed while the call was waiting).
    #[error("connection closed: {0}")]
    Closed(String),
    /// The transport failed (spawn, I/O, HTTP status without a JSON-RPC body).
    #[error("transport error: {0}")]
    Transport(String),
    /// The server sent something the protocol does not allow.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// An argument was refused before anything was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The call ended in `input_required` and no registered handler could fulfil it: the raw
    /// `InputRequiredResult`, to drive by hand (retry with `inputResponses` / `requestState`).
    #[error("the server requires input")]
    InputRequired(Value),
    /// The server ended the legacy HTTP session (HTTP 404 for its `Mcp-Session-Id`, LHTTP-02)
    /// and starting a new one failed. A call that meets the 404 re-initializes once by itself
    /// and is re-sent on the new session; this surfaces only when that did not work.
    #[error("the HTTP session expired: {0}")]
    SessionExpired(String),
    /// `structuredContent` does not match the tool's `outputSchema` (TOOL-06).
    #[error("structuredContent does not match the output schema: {0}")]
    OutputValidation(String),
    /// OAuth authorization failed (REQUIREMENTS §15); [`crate::client::auth::AuthError::kind`]
    /// says at which step. The message never contains a secret.
    #[error("authorization failed: {0}")]
    Auth(crate::client::auth::AuthError),
}

impl ClientError {
    /// The JSON-RPC error code when the server answered with an error.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }
}

impl From<ErrorObject> for ClientError {
    fn from(e: ErrorObject) -> Self {
        ClientError::Rpc(e)
    }
}
