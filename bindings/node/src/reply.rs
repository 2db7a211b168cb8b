//! The one shape native results take towards the JavaScript layer: `{ok: value}` or
//! `{error: {kind, message, code?, data?}}` with `kind` the [`ErrorKind`] name (`rpc` errors
//! carry the JSON-RPC `code` and `data`). `lib/errors.js` turns an `error` into `McpError` or an
//! `Error` with `code = kind`.

use mcpcore::client::ClientError;
use mcpcore::server::PeerError;
use mcpcore::{ErrorKind, ErrorObject};
use serde_json::{json, Value};

/// A success.
pub fn ok(v: Value) -> Value {
    json!({ "ok": v })
}

/// A failure of `kind`.
pub fn err(kind: ErrorKind, message: impl std::fmt::Display) -> Value {
    json!({ "error": { "kind": kind.as_str(), "message": message.to_string() } })
}

/// A JSON-RPC error from the peer.
pub fn rpc(e: &ErrorObject) -> Value {
    let mut o = json!({ "kind": ErrorKind::Rpc.as_str(), "code": e.code, "message": e.message });
    if let Some(d) = &e.data {
        o["data"] = d.clone();
    }
    json!({ "error": o })
}

/// A client call's outcome.
pub fn client(r: Result<Value, ClientError>) -> Value {
    match r {
        Ok(v) => ok(v),
        Err(ClientError::Rpc(e)) => rpc(&e),
        Err(e) => err(e.kind(), &e),
    }
}

/// A server→client request's outcome (`ctx.requestClient`). `InputRequired` (2026-07-28) is
/// passed through as its kind: the handler wrapper lets it propagate, and core answers the
/// request with `input_required`.
pub fn peer(r: Result<Value, PeerError>) -> Value {
    match r {
        Ok(v) => ok(v),
        Err(PeerError::Rpc(e)) => rpc(&e),
        Err(e) => err(e.kind(), &e),
    }
}

/// The `error` of a native reply, as the TypeScript declarations describe it (never built in
/// Rust: [`err`] and [`rpc`] write this shape as JSON).
#[napi_derive::napi(object)]
#[allow(dead_code)]
pub struct NativeError {
    /// The [`ErrorKind`] name (`rpc`, `timeout`, `transport`, …).
    pub kind: String,
    pub message: String,
    /// The JSON-RPC code (kind `rpc`).
    pub code: Option<i64>,
    /// The JSON-RPC error data (kind `rpc`).
    pub data: Option<Value>,
}
