//! Client transports: stdio (a child process), any byte streams (in-memory) and Streamable
//! HTTP (REQUIREMENTS STDIO-*, HTTP-*, LHTTP-*).
//!
//! A transport only moves JSON-RPC messages. Everything it receives goes into one bounded
//! [`Inbound`] channel that the client's peer drains; everything the peer sends goes through
//! [`ClientTransport::send`].

use serde_json::Value;
use tokio::sync::mpsc;

use super::error::ClientError;
use crate::jsonrpc::Id;
/// A boxed future borrowing the transport.
pub(crate) type BoxFut<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

#[cfg(feature = "http-client")]
#[cfg(feature = "http-client")]
mod connect;
#[cfg(feature = "http-client")]
pub mod http;
#[cfg(feature = "http-client")]
pub(crate) mod http_options;
pub(crate) mod io;
#[cfg(feature = "http-client")]
pub(crate) mod pool;
#[cfg(feature = "http-client")]
pub mod sse;
pub mod stdio;
#[cfg(feature = "http-client")]
mod tls;

/// One message from the client to the server.
#[derive(Debug, Clone)]
pub(crate) enum OutMsg {
    /// A request (`params` is always an object or absent).
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    /// A notification.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response to a server→client request.
    Response {
        id: Id,
        result: Result<Value, crate::error::ErrorObject>,
    },
}

impl OutMsg {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            OutMsg::Request { id, method, params } => {
                crate::jsonrpc::encode_request(id, method, params.as_ref())
            }
            OutMsg::Notification { method, params } => {
                crate::jsonrpc::encode_notification(method, params.as_ref())
            }
            OutMsg::Response { id, result } => match result {
                Ok(v) => crate::jsonrpc::encode_result(id, v),
                Err(e) => crate::jsonrpc::encode_error(Some(id), e),
            },
        }
    }
}

/// What a transport hands to the peer.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// One JSON value received (object or not; the peer classifies it).
    Message(Value),
    /// The request `id` failed at the transport level (HTTP status, broken stream).
    // Sent by the HTTP transport only.
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    RequestFailed(Id, ClientError),
    /// The transport is gone; every pending call fails with this reason.
    Closed(String),
}

/// Where a transport delivers what it receives.
pub(crate) type InboundTx = mpsc::Sender<Inbound>;

/// The era-related state a transport needs (HTTP headers).
#[derive(Debug, Clone, Default)]
pub(crate) struct WireState {
    /// True once the modern era is in force.
    pub modern: bool,
    /// The negotiated or adopted version.
    // Read by the HTTP transport only (the protocol version header).
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    pub protocol_version: Option<String>,
}

/// A client transport.
pub(crate) trait ClientTransport: Send + Sync + 'static {
    /// Send one message.
    fn send(&self, msg: OutMsg) -> BoxFut<'_, Result<(), ClientError>>;
    /// Stop waiting for request `id` at the transport level (HTTP: close its stream).
    fn abort(&self, _id: &Id) {}
    /// Whether cancelling a request should send `notifications/cancelled` (stdio, legacy HTTP).
    fn cancel_by_notification(&self, state: &WireState) -> bool;
    /// The era changed (HTTP headers follow it).
    fn set_state(&self, _state: WireState) {}
    /// Close (stdio: close stdin, wait, terminate, kill; HTTP: DELETE the legacy session).
    fn close(&self) -> BoxFut<'_, ()>;
    /// Whether this is an HTTP transport (for the `x-mcp-header` tool filter).
    fn is_http(&self) -> bool {
        false
    }
    /// Remember a tool's `x-mcp-header` declarations (HTTP); `Err` = the tool breaks the rules.
    fn learn_tool(&self, _name: &str, _input_schema: &Value) -> Result<(), String> {
        Ok(())
    }
    /// True when the server ended the current session (legacy HTTP: a 404 for the session id
    /// this transport still uses); the client then starts a new one (LHTTP-02).
    fn session_expired(&self) -> bool {
        false
    }
    /// Forget the ended session (its id, the GET stream) before re-initializing; the expiry
    /// mark stays until an `initialize` succeeds.
    fn reset_session(&self) {}
    /// Captured standard error, when the transport captures it.
    fn captured_stderr(&self) -> Option<String> {
        None
    }
}
