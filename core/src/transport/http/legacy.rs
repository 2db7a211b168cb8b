//! Legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25; REQUIREMENTS LHTTP-01…09).
//!
//! `initialize` mints a cryptographically random `Mcp-Session-Id`; each session is one core
//! [`Session`](crate::server::Session) of kind `HttpLegacy`. Later requests need the id (missing → 400, unknown → 404).
//! POSTed responses and notifications → 202. GET opens the standalone stream (one reader at a
//! time → 409, whether opened or resumed), which carries the session's unrelated messages. Every
//! SSE event has an id `<stream>_<seq>`; `Last-Event-ID` replays the rest of that stream from a
//! bounded buffer.
//! DELETE ends the session. Idle sessions are reaped; the session count is capped (503).
//! Optional stateless mode: no sessions at all (see `HttpOptions::stateless_legacy` and
//! [`crate::server::SessionKind::HttpStatelessLegacy`]).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc;

use super::body::{self, Resp};
use super::headers::{self, get_str, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use super::replica;
use super::respond::{self, Mode, Pending};
use super::server::Shared;
use super::sessions::{self, new_session_id, Entry};
use super::sse;
use super::stream::Stream;
use crate::auth::Principal;
use crate::error::{codes, ErrorObject};
use crate::jsonrpc::Id;
use crate::protocol::version::is_legacy_supported;
use crate::server::SessionKind;

fn err(status: StatusCode, id: Option<&Id>, code: i64, msg: &str) -> Resp {
    body::rpc_error(status, id, &ErrorObject::new(code, msg.to_owned()))
}

/// Find the session named by the headers, checking `MCP-Protocol-Version` (LHTTP-02, LHTTP-03).
/// With shared stores, the store decides whether the session exists (see [`replica`]).
pub(crate) async fn lookup(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    id: Option<&Id>,
    principal: Option<&Principal>,
) -> Result<Arc<Entry>, Box<Resp>> {
    let Some(sid) = get_str(h, SESSION_ID) else {
        return Err(Box::new(err(
            StatusCode::BAD_REQUEST,
            id,
            codes::INVALID_REQUEST,
            "Mcp-Session-Id header is required",
        )));
    };
    let found = if replica::is_shared(shared) {
        match replica::resolve(shared, sid, principal).await {
            Ok(e) => e,
            Err(_) => return Err(Box::new(replica::unavailable(id))),
        }
    } else {
        shared.sessions.get(sid)
    };
    let Some(entry) = found else {
        return Err(Box::new(err(
            StatusCode::NOT_FOUND,
            id,
            codes::INVALID_REQUEST,
            "Session not found",
        )));
    };
    if let Err(e) = check_session_version(h, entry.session.negotiated_version()) {
        return Err(Box::new(body::rpc_error(StatusCode::BAD_REQUEST, id, &e)));
    }
    entry.touch(shared.now_ms());
    Ok(entry)
}

/// LHTTP-03 on a session: a missing `MCP-Protocol-Version` is fine (the session knows its
/// version), a present one must name the version this session negotiated. A value that is no
/// handshake version at all is "unsupported"; another handshake version is a mismatch (the
/// session cannot switch versions mid-way, and serving it under the negotiated rules would
/// silently answer a different protocol than the client speaks). Both are 400 + -32600: the
/// legacy era defines no code for header errors, and -32020/-32022 are 2026-07-28 codes that a
/// dual-era client reads as proof of a modern server (HTTP-18). `data` names the one version
/// this session accepts, in the shape of the version errors (`{supported, requested}`).
fn check_session_version(h: &HeaderMap, negotiated: Option<String>) -> Result<(), ErrorObject> {
    let Some(raw) = h.get(PROTOCOL_VERSION) else {
        return Ok(());
    };
    let requested = raw.to_str().ok();
    if requested.is_some() && requested == negotiated.as_deref() {
        return Ok(());
    }
    let msg = if requested.is_some_and(is_legacy_supported) {
        "MCP-Protocol-Version does not match the version negotiated for this session"
    } else {
        "Unsupported MCP-Protocol-Version"
    };
    let mut data = serde_json::json!({ "supported": negotiated.into_iter().collect::<Vec<_>>() });
    if let Some(r) = requested {
        data["requested"] = Value::String(r.to_owned());
    }
    Err(ErrorObject::new(codes::INVALID_REQUEST, msg).with_data(data))
}

/// A legacy request POST.
pub(crate) async fn request(
    shared: &Arc<Shared>,
    h: &Arc<HeaderMap>,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
    principal: Option<Arc<crate::auth::Principal>>,
) -> Resp {
    if shared.opts.stateless_legacy {
        return stateless(shared, h, id, method, params, principal).await;
    }
    // LHTTP-02: `initialize` without a session id is what mints a session, bound to the
    // principal that created it (AUTH-06; see `auth::check_session`).
    if method == "initialize" && h.get(SESSION_ID).is_none() {
        // Boxed: once per session, and its future is twice the size of a call's, which every
        // legacy request's future would otherwise carry (and copy into its box).
        return Box::pin(initialize(shared, id, method, params, principal)).await;
    }
    let entry = match lookup(shared, h, Some(&id), principal.as_deref()).await {
        Ok(e) => e,
        Err(r) => return *r,
    };
    let session = entry.session.clone();
    // A duplicate in-flight id → 409 before any stream is registered; the first keeps its routing.
    if session.is_inflight(&id) {
        return err(
            StatusCode::CONFLICT,
            Some(&id),
            codes::INVALID_REQUEST,
            "request id is already in flight",
        );
    }
    let (sink, rx, close) =
        respond::RequestSink::closable(shared.server.limits().max_outbound_queue, Some(h.clone()));
    // The started future is moved into its box before anything is awaited: kept in a match
    // scrutinee across the awaits below, it would double this function's future.
    let fut = match session.start_request(id.clone(), method, params, sink) {
        Err(reply) => {
            if session.is_inflight(&id) {
                return err(
                    StatusCode::CONFLICT,
                    Some(&id),
                    codes::INVALID_REQUEST,
                    "request id is already in flight",
                );
            }
            return respond::json_reply(&id, &reply, &Mode::Legacy(entry));
        }
        Ok(fut) => fut,
    };
    // Shared stores: what the request changed is written back before its answer is
    // released, so the client's next request sees it on any worker.
    let (s2, e2) = (shared.clone(), entry.clone());
    // Shared stores: a cancel POSTed to another worker finds this one (CAN-01).
    let claim = super::relay::claim_request(&entry, &id);
    let p = Pending {
        id,
        // `then`, not an `async` block awaiting `fut`: that would hold the future twice.
        fut: Box::pin(futures_util::FutureExt::then(
            fut,
            move |reply| async move {
                replica::sync(&s2, &e2).await;
                drop(claim);
                reply
            },
        )),
        rx,
        session,
        close: Some(close),
    };
    respond::answer(shared, p, Mode::Legacy(entry)).await
}

async fn initialize(
    shared: &Arc<Shared>,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
    principal: Option<Arc<crate::auth::Principal>>,
) -> Resp {
    if shared.sessions.len() >= shared.opts.max_sessions {
        return err(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&id),
            codes::INTERNAL_ERROR,
            "Too many sessions",
        );
    }
    let (standalone, sink) = sessions::standalone(shared.opts.replay_buffer);
    let session = shared.server.new_session(SessionKind::HttpLegacy, sink);
    session.bind_principal(principal);
    let (tx, _rx) = mpsc::channel::<Vec<u8>>(1);
    let reply = session
        .handle_request(id.clone(), method, params, Arc::new(tx))
        .await;
    let Some(reply) = reply else {
        return body::status(StatusCode::SERVICE_UNAVAILABLE);
    };
    if reply.result.is_err() {
        // A failed first initialize leaves nothing behind (the session is dropped here).
        return body::json(
            respond::legacy_status(&reply),
            crate::server::encode_reply(&id, &reply),
        );
    }
    let Some(sid) = new_session_id() else {
        tracing::error!("the system random number generator failed; cannot mint a session id");
        return err(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(&id),
            codes::INTERNAL_ERROR,
            "Internal error",
        );
    };
    let owner = session.principal().map(|p| p.binding_key());
    let entry = Entry::new(sid.clone(), session, standalone, shared.now_ms());
    if replica::is_shared(shared) {
        replica::share_events(shared, &entry);
        match replica::create(shared, &entry, owner).await {
            Ok(true) => {}
            Ok(false) => {
                return err(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(&id),
                    codes::INTERNAL_ERROR,
                    "Too many sessions",
                )
            }
            Err(_) => return replica::unavailable(Some(&id)),
        }
    }
    if !shared.sessions.insert(entry, shared.opts.max_sessions) {
        return err(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&id),
            codes::INTERNAL_ERROR,
            "Too many sessions",
        );
    }
    shared.ensure_reaper();
    let mut r = body::json(StatusCode::OK, crate::server::encode_reply(&id, &reply));
    if let Ok(v) = HeaderValue::from_str(&sid) {
        r.headers_mut().insert(SESSION_ID, v);
    }
    r
}

/// Stateless legacy mode: each request runs on its own session, which the server initializes
/// by mode (see [`crate::server::SessionKind::HttpStatelessLegacy`]); nothing is kept.
async fn stateless(
    shared: &Arc<Shared>,
    h: &Arc<HeaderMap>,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
    principal: Option<Arc<crate::auth::Principal>>,
) -> Resp {
    let session = match shared.server.stateless_legacy_session(
        &method,
        get_str(h, PROTOCOL_VERSION),
        Arc::new(crate::transport::NullOutbound),
    ) {
        Ok(s) => s,
        Err(e) => return body::rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e),
    };
    session.bind_principal(principal);
    let cap = shared.server.limits().max_outbound_queue;
    let (sink, rx) = respond::RequestSink::new(cap, Some(h.clone()));
    // Boxed before anything is awaited (see `request`).
    let fut = match session.start_request(id.clone(), method, params, sink) {
        Err(reply) => return respond::json_reply(&id, &reply, &Mode::LegacyStateless),
        Ok(fut) => Box::pin(fut),
    };
    respond::answer(
        shared,
        Pending::alone(id, fut, rx, session),
        Mode::LegacyStateless,
    )
    .await
}

/// A legacy notification POST → 202.
pub(crate) async fn notification(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    method: &str,
    params: Option<&Map<String, Value>>,
    principal: Option<&Principal>,
) -> Resp {
    if shared.opts.stateless_legacy {
        tracing::debug!(
            method,
            "stateless legacy mode: notification accepted and ignored"
        );
        return body::status(StatusCode::ACCEPTED);
    }
    match lookup(shared, h, None, principal).await {
        Ok(e) => {
            e.notification(method, params);
            // The request may run on another worker (CAN-01 across workers).
            if crate::server::is_cancel(method)
                && super::relay::route_cancel(shared, &e, params)
                    .await
                    .is_err()
            {
                return replica::unavailable(None);
            }
            replica::sync(shared, &e).await;
            body::status(StatusCode::ACCEPTED)
        }
        Err(r) => *r,
    }
}

/// A POSTed response to a server→client request → 202 (LHTTP-08).
pub(crate) async fn response(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    id: &Id,
    outcome: Result<Value, ErrorObject>,
    principal: Option<&Principal>,
) -> Resp {
    if shared.opts.stateless_legacy {
        return body::status(StatusCode::ACCEPTED);
    }
    match lookup(shared, h, None, principal).await {
        Ok(e) => {
            if let Some(outcome) = e.session.deliver_response_or_return(id, outcome) {
                // Not waited for here: the handler may run on another worker (its tag is in
                // the id, see `Entry::share_events`).
                if replica::route_response(shared, &e, id, outcome)
                    .await
                    .is_err()
                {
                    return replica::unavailable(None);
                }
            }
            body::status(StatusCode::ACCEPTED)
        }
        Err(r) => *r,
    }
}

/// GET: the standalone stream, or a resumed stream with `Last-Event-ID` (LHTTP-05, LHTTP-06).
pub(crate) async fn get(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    principal: Option<&Principal>,
) -> Resp {
    if !headers::accepts_sse(h) {
        return body::text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow text/event-stream",
        );
    }
    let entry = match lookup(shared, h, None, principal).await {
        Ok(e) => e,
        Err(r) => return *r,
    };
    let cap = shared.opts.replay_buffer + 8;
    let (tx, rx) = mpsc::channel(cap);
    let reader = tx.downgrade();
    let asked = get_str(h, LAST_EVENT_ID).and_then(sse::parse_event_id);
    if let Some((s, seq)) = asked {
        // LHTTP-04 across workers: a stream this worker does not hold may be another's. Another
        // worker's standalone stream: its missed events, then this worker's standalone stream.
        if s != 0 && entry.find_stream(s).is_none() {
            if super::relay::is_standalone(s) {
                if super::relay::replay_standalone(shared, &entry, s, seq, &tx)
                    .await
                    .is_err()
                {
                    return replica::unavailable(None);
                }
            } else if let Some(r) = replica::resume_shared(shared, &entry, s, seq).await {
                return r;
            }
        }
    }
    let resume = asked.and_then(|(s, seq)| entry.find_stream(s).map(|st| (st, seq)));
    let (stream, after) = match resume {
        Some((stream, seq)) => (stream, Some(seq)),
        None => (entry.standalone().clone(), None),
    };
    // LHTTP-05: the standalone stream has one reader at a time, so resuming it while a reader is
    // attached is refused like a second plain GET; otherwise `Last-Event-ID` would take over
    // the stream (and every later message) from the reader holding it. A POST stream's resume
    // replaces its reader: that stream exists for one request, and a client resumes it after
    // losing the connection, possibly before the server has noticed (LHTTP-04).
    let exclusive = Arc::ptr_eq(&stream, entry.standalone());
    let priming = after.is_none().then_some(shared.opts.sse_retry_ms);
    if !stream.attach(after, priming, tx, exclusive) {
        return body::text(
            StatusCode::CONFLICT,
            "a standalone SSE stream is already open for this session",
        );
    }
    // Shared stores: every worker's standalone messages for the session come here now.
    if exclusive && super::relay::claim_get(shared, &entry).await.is_err() {
        stream.detach();
        return replica::unavailable(None);
    }
    spawn_keepalive(shared, stream, reader);
    body::sse(rx)
}

/// Keep-alive comments on a GET stream while this reader stays attached (HTTP-06): proxies keep
/// the connection open, and a vanished peer is noticed by the failing write.
fn spawn_keepalive(shared: &Shared, stream: Arc<Stream>, reader: mpsc::WeakSender<Bytes>) {
    let Some(every) = shared.opts.keepalive else {
        return;
    };
    let stop = shared.stopping.clone();
    // Weak: a session ended by DELETE or reaping frees its streams (and their replay buffers)
    // at once, not one keep-alive period later.
    let stream = Arc::downgrade(&stream);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            match stream.upgrade() {
                Some(s) if s.ping(Some(&reader)) => {}
                _ => return,
            }
        }
    });
}

/// DELETE ends the session and frees everything it held (LHTTP-02).
pub(crate) async fn delete(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    principal: Option<&Principal>,
) -> Resp {
    let entry = match lookup(shared, h, None, principal).await {
        Ok(e) => e,
        Err(r) => return *r,
    };
    // Shared stores: the record goes first, so every worker learns the session ended.
    if replica::delete(shared, entry.sid()).await.is_err() {
        return replica::unavailable(None);
    }
    if let Some(e) = shared.sessions.remove(entry.sid()) {
        e.close();
    }
    body::status(StatusCode::OK)
}
