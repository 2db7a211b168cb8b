//! Modern (2026-07-28) requests over HTTP: stateless, one fresh `HttpModern` session per POST,
//! never reading or creating legacy state and never answered with `Mcp-Session-Id`
//! (REQUIREMENTS HTTP-01…16, LHTTP-09, §0.7).
//!
//! Check order (§0.7): header version/method vs body (-32020) → envelope (-32602 / -32022) →
//! removed or unknown method (-32601, 404) → `Mcp-Name` (-32020) → `Mcp-Param-*` (-32020) →
//! dispatch. The header comparisons are made here; the envelope and method checks, and the
//! precedence between them and a header mismatch, are core dispatch's.

use http::{HeaderMap, StatusCode};
use serde_json::{Map, Value};
use std::sync::Arc;

use super::body::{self, Resp};
use super::headers;
use super::listen;
use super::respond::{self, Mode, Pending};
use super::server::Shared;
use crate::error::ErrorObject;
use crate::jsonrpc::Id;
use crate::protocol::mcp_header;
use crate::server::SessionKind;
use crate::transport::NullOutbound;

/// A modern request POST.
pub(crate) async fn request(
    shared: &Arc<Shared>,
    h: &Arc<HeaderMap>,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
    principal: Option<Arc<crate::auth::Principal>>,
) -> Resp {
    let bad = |e: ErrorObject| body::rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e);
    if let Err(e) = headers::check_version_and_method(h, &method, params.as_ref()) {
        return bad(e);
    }
    if method == "subscriptions/listen" {
        // The answer is a long-lived stream, not a request/response exchange (SUB-05, HTTP-06).
        return listen::open(shared, id, params.as_ref()).await;
    }
    let mut header_check = headers::check_name(h, &method, params.as_ref());
    if header_check.is_ok() && mcp_header::mirrors_arguments(&method) {
        let p = params.as_ref();
        let decls = p
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .and_then(|n| shared.server.tool_param_headers(n));
        if let Some(decls) = decls {
            header_check = headers::check_params(h, &decls, p.and_then(|p| p.get("arguments")));
        }
    }
    // A header mismatch is answered by the session after its envelope checks (§0.7: -32602 /
    // -32022 come before -32020), so the envelope is parsed in one place, during dispatch.
    let session = shared
        .server
        .new_session(SessionKind::HttpModern, Arc::new(NullOutbound));
    session.bind_principal(principal);
    let cap = shared.server.limits().max_outbound_queue;
    let (sink, rx) = respond::RequestSink::new(cap, Some(h.clone()));
    // Boxed before anything is awaited: kept in a match scrutinee across the await below, the
    // started future would double this function's future (copied into the connection's box
    // per request).
    let fut =
        match session.start_request_checked(id.clone(), method, params, sink, header_check.err()) {
            Err(reply) => return respond::json_reply(&id, &reply, &Mode::Modern),
            Ok(fut) => Box::pin(fut),
        };
    respond::answer(shared, Pending::alone(id, fut, rx, session), Mode::Modern).await
}

/// A modern notification POST: accepted (202) and ignored (HTTP-04: core defines no
/// client→server notification over HTTP; cancellation is closing the stream).
pub(crate) fn notification(method: &str) -> Resp {
    tracing::debug!(method, "ignoring a modern notification POST");
    body::status(StatusCode::ACCEPTED)
}
