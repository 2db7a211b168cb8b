//! In-process dispatch for unit tests: a stdio-kind session without a transport, initialized in
//! the legacy era, and one-call helpers returning the JSON-RPC result or error.

use serde_json::{json, Value};
use std::sync::Arc;

use super::{Server, Session, SessionKind};
use crate::error::ErrorObject;
use crate::jsonrpc::Id;
use crate::server::{NullOutbound, Outbound};

/// A session of `server` after a legacy `initialize` / `notifications/initialized`.
pub(crate) async fn legacy_session(server: &Server) -> Arc<Session> {
    let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
    let session = server.new_session(SessionKind::Stdio, sink.clone());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}});
    let r = session
        .handle_request(
            Id::Num(0),
            "initialize".into(),
            init.as_object().cloned(),
            sink,
        )
        .await;
    assert!(r.is_some_and(|r| r.result.is_ok()), "initialize");
    session.handle_notification("notifications/initialized", None);
    session
}

/// Send one request on `session` and return its result or error.
pub(crate) async fn request(
    session: &Arc<Session>,
    id: i64,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
    session
        .handle_request(
            Id::Num(id),
            method.into(),
            params.as_object().cloned(),
            sink,
        )
        .await
        .map_or_else(
            || Err(ErrorObject::internal()),
            |r| r.result.map(super::Payload::into_value),
        )
}

/// `tools/call` of `name` with `args`.
pub(crate) async fn call_tool(
    session: &Arc<Session>,
    id: i64,
    name: &str,
    args: Value,
) -> Result<Value, ErrorObject> {
    request(
        session,
        id,
        "tools/call",
        json!({"name": name, "arguments": args}),
    )
    .await
}
