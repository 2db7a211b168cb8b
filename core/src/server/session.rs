//! Per-connection state: era lock, legacy handshake data, in-flight requests, pending
//! server→client requests, resource subscriptions (REQUIREMENTS §0.2, LC-*, seeds: era lock,
//! duplicate-id refusal with identity-guarded removal).

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::Outbound;
use super::Server;
use crate::error::ErrorObject;
use crate::jsonrpc::{encode_notification, Id};
use crate::protocol::version::{is_legacy_supported, HTTP_DEFAULT_VERSION};
use crate::protocol::{Era, LoggingLevel};

/// What kind of connection a session serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionKind {
    /// One stdio connection: both eras, locked by the first successful era-distinctive message.
    Stdio,
    /// A legacy Streamable HTTP session (created by `initialize`).
    HttpLegacy,
    /// One modern HTTP request (stateless; never reads or creates legacy state).
    HttpModern,
    /// One legacy Streamable HTTP request served without a session (`HttpOptions::
    /// stateless_legacy`): no `Mcp-Session-Id`, nothing kept between requests. It is initialized
    /// by this mode, at the version the request's transport names, never by a handshake of its
    /// own (see `Server::stateless_legacy_session`).
    HttpStatelessLegacy,
}

/// A connection's era lock (§0.2): open until the first successful era-distinctive message, then
/// fixed for the connection's life. One atomic byte, so reading it on every request takes no lock.
struct EraLock(AtomicU8);

impl EraLock {
    const OPEN: u8 = 0;

    fn encode(era: Era) -> u8 {
        match era {
            Era::Legacy => 1,
            Era::Modern => 2,
        }
    }

    fn new(era: Option<Era>) -> Self {
        Self(AtomicU8::new(era.map_or(Self::OPEN, Self::encode)))
    }

    fn get(&self) -> Option<Era> {
        match self.0.load(Ordering::Acquire) {
            1 => Some(Era::Legacy),
            2 => Some(Era::Modern),
            _ => None,
        }
    }

    /// Lock `era` if the lock is still open; never flips an established era.
    fn lock(&self, era: Era) {
        let _ = self.0.compare_exchange(
            Self::OPEN,
            Self::encode(era),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// Data the legacy handshake established.
#[derive(Debug, Clone, Default)]
pub(crate) struct LegacyState {
    pub protocol_version: Option<String>,
    pub client_capabilities: Value,
    /// `clientInfo` as JSON text: read only when a handler asks, and a parsed object would keep
    /// a map node (about 600 bytes) in every idle session.
    pub client_info: Option<Box<str>>,
    pub log_level: Option<LoggingLevel>,
}

type PendingTx = oneshot::Sender<Result<Value, ErrorObject>>;

/// One connection's state. Created by a transport through [`Server::new_session`].
///
/// Its public methods are the in-process transport seam, for a transport of your own (or a test
/// that skips framing): [`Session::handle_request`] and [`Session::handle_notification`] for what
/// the peer sends, [`Session::deliver_response`] for the peer's answers to server→client
/// requests, and [`Session::cancel_all`] when the connection ends. Encode answers with
/// [`super::encode_reply`]. Everything else (era lock, in-flight bookkeeping, subscriptions) is
/// the engine's.
pub struct Session {
    pub(crate) server: Server,
    kind: SessionKind,
    era: EraLock,
    initialized: AtomicBool,
    /// The client sent `notifications/initialized` (LC-01).
    handshake_complete: AtomicBool,
    pub(crate) legacy: Mutex<LegacyState>,
    inflight: Mutex<HashMap<Id, (u64, CancellationToken), foldhash::fast::RandomState>>,
    seq: AtomicU64,
    next_peer_id: AtomicI64,
    pending: Mutex<HashMap<Id, PendingTx>>,
    subscriptions: Mutex<HashSet<String>>,
    sink: Arc<dyn Outbound>,
    key: u64,
    /// The verified principal of the HTTP request(s) this session serves (AUTH-06); a legacy
    /// session keeps the one that created it.
    principal: std::sync::OnceLock<Arc<crate::auth::Principal>>,
    /// Told about each server→client request (a session shared across workers, LHTTP-08).
    answers: std::sync::OnceLock<Arc<dyn AnswerWatch>>,
    /// When a connection-scoped session began (`mcp.server.session.duration`); set only while
    /// metrics are on.
    began: Option<std::time::Instant>,
    /// Cancelled when the session is gone (its last holder dropped it): what
    /// [`SessionHandle::ended`] watches. Made when a handler first asks for it: most sessions
    /// never do, and an idle session should cost as little as it can.
    ended: std::sync::OnceLock<CancellationToken>,
}

/// A legacy session as a handler may keep per-session state about it, without keeping the
/// session alive: a key unique within its server, and a token cancelled once the session has
/// ended (closed, deleted with `DELETE`, expired, its connection gone) and every request of it
/// has finished. See [`super::RequestContext::legacy_session`].
#[derive(Debug, Clone)]
pub struct SessionHandle {
    /// Unique among the sessions of one server for its lifetime.
    pub key: u64,
    /// Cancelled when the session has ended.
    pub ended: CancellationToken,
}

/// Told about a session's server→client requests by the transport serving it. A transport that
/// shares a legacy session between workers records each request before it is sent, so that the
/// client's answer, POSTed to any worker, is routed back to this one, and so that an answer to
/// a request nobody sent is dropped instead of being stored (LHTTP-08).
pub(crate) trait AnswerWatch: Send + Sync {
    /// Request `id` is about to be sent: resolves once an answer to it can be routed here.
    fn sending(&self, id: &Id) -> crate::future::BoxFuture<()>;
    /// Request `id` no longer waits for an answer (answered, timed out, cancelled, unsent).
    fn done(&self, id: &Id);
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another task panicked while holding it; the data is plain state.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Session {
    pub(crate) fn new(server: Server, kind: SessionKind, sink: Arc<dyn Outbound>) -> Arc<Self> {
        let era = (kind == SessionKind::HttpModern).then_some(Era::Modern);
        let key = server.inner.next_session_key();
        let began = (server.inner.metrics.on()
            && matches!(kind, SessionKind::Stdio | SessionKind::HttpLegacy))
        .then(std::time::Instant::now);
        let s = Arc::new(Self {
            began,
            server,
            kind,
            era: EraLock::new(era),
            initialized: AtomicBool::new(false),
            handshake_complete: AtomicBool::new(false),
            legacy: Mutex::new(LegacyState::default()),
            inflight: Mutex::new(HashMap::default()),
            seq: AtomicU64::new(1),
            next_peer_id: AtomicI64::new(1),
            pending: Mutex::new(HashMap::new()),
            subscriptions: Mutex::new(HashSet::new()),
            sink,
            key,
            principal: std::sync::OnceLock::new(),
            answers: std::sync::OnceLock::new(),
            ended: std::sync::OnceLock::new(),
        });
        if kind != SessionKind::HttpModern {
            s.server.inner.register_session(key, Arc::downgrade(&s));
        }
        s
    }

    /// This session as a [`SessionHandle`] when it is one a client keeps across requests (stdio,
    /// or legacy Streamable HTTP with a session id); `None` for per-request sessions.
    pub(crate) fn handle(&self) -> Option<SessionHandle> {
        matches!(self.kind, SessionKind::Stdio | SessionKind::HttpLegacy).then(|| SessionHandle {
            key: self.key,
            ended: self.ended.get_or_init(CancellationToken::new).clone(),
        })
    }

    /// The verified principal this session serves, on a protected HTTP endpoint.
    pub fn principal(&self) -> Option<&Arc<crate::auth::Principal>> {
        self.principal.get()
    }

    /// Bind `p` to this session (once; later calls keep the first).
    pub(crate) fn bind_principal(&self, p: Option<Arc<crate::auth::Principal>>) {
        if let Some(p) = p {
            let _ = self.principal.set(p);
        }
    }

    /// The connection kind.
    pub fn kind(&self) -> SessionKind {
        self.kind
    }

    /// `network.transport` of the conventions: `pipe` for stdio (and in-process streams),
    /// `tcp` for HTTP.
    pub(crate) fn network_transport(&self) -> &'static str {
        match self.kind {
            SessionKind::Stdio => "pipe",
            _ => "tcp",
        }
    }

    /// The connection's era, once locked (`None` while a stdio connection is still open to both).
    pub(crate) fn era(&self) -> Option<Era> {
        self.era.get()
    }

    /// Lock the era if it is still open; never flips an established era.
    pub(crate) fn lock_era(&self, era: Era) {
        self.era.lock(era);
    }

    /// True once `initialize` succeeded.
    pub(crate) fn is_legacy_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    pub(crate) fn mark_initialized(&self) -> bool {
        self.initialized
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// True once the client sent `notifications/initialized`, completing the handshake (LC-01).
    pub(crate) fn is_handshake_complete(&self) -> bool {
        self.handshake_complete.load(Ordering::Acquire)
    }

    pub(crate) fn mark_handshake_complete(&self) {
        self.handshake_complete.store(true, Ordering::Release);
    }

    /// The negotiated legacy version, once initialized.
    pub(crate) fn negotiated_version(&self) -> Option<String> {
        lock(&self.legacy).protocol_version.clone()
    }

    /// True when the negotiated version allows JSON-RPC batches (2025-03-26 only, JR-06).
    pub(crate) fn allows_batch(&self) -> bool {
        lock(&self.legacy).protocol_version.as_deref()
            == Some(crate::protocol::version::BATCH_VERSION)
    }

    /// Claim `id` as in flight. A duplicate id and the `max_inflight` cap are refused with
    /// different reasons: the first is the peer's mistake (JR-03), the second a load condition
    /// the peer may retry.
    pub(crate) fn register_inflight(&self, id: &Id) -> Result<(u64, CancellationToken), Refused> {
        let mut map = lock(&self.inflight);
        let cap = self.server.inner.options.limits.max_inflight;
        let full = map.len() >= cap;
        // One hash per request: the entry both answers "duplicate?" and takes the id.
        match map.entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => Err(Refused::Duplicate),
            std::collections::hash_map::Entry::Vacant(_) if full => Err(Refused::Busy(cap)),
            std::collections::hash_map::Entry::Vacant(slot) => {
                let seq = self.seq.fetch_add(1, Ordering::Relaxed);
                let token = CancellationToken::new();
                slot.insert((seq, token.clone()));
                Ok((seq, token))
            }
        }
    }

    /// Remove `id` only if this registration still owns it (identity guard).
    pub(crate) fn unregister_inflight(&self, id: &Id, seq: u64) {
        let mut map = lock(&self.inflight);
        // One hash in the usual case; a newer claim of the same id (rare) is put back.
        if let Some((s, token)) = map.remove(id) {
            if s != seq {
                map.insert(id.clone(), (s, token));
            }
        }
    }

    /// True when a request with this id is in flight.
    pub(crate) fn is_inflight(&self, id: &Id) -> bool {
        lock(&self.inflight).contains_key(id)
    }

    /// Cooperatively cancel the in-flight request `id`; unknown ids are ignored.
    pub(crate) fn cancel_request(&self, id: &Id) -> bool {
        let token = lock(&self.inflight).get(id).map(|(_, t)| t.clone());
        token.map(|t| t.cancel()).is_some()
    }

    /// Cancel everything in flight (shutdown).
    pub fn cancel_all(&self) {
        let tokens: Vec<_> = lock(&self.inflight)
            .values()
            .map(|(_, t)| t.clone())
            .collect();
        for t in tokens {
            t.cancel();
        }
    }

    /// How many requests are in flight.
    pub(crate) fn inflight_count(&self) -> usize {
        lock(&self.inflight).len()
    }

    pub(crate) fn next_peer_id(&self) -> Id {
        Id::Num(self.next_peer_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Number this session's server→client requests from `base` (a worker-specific range, so
    /// ids stay unique across the workers serving one shared legacy session).
    pub(crate) fn set_peer_id_base(&self, base: i64) {
        self.next_peer_id.store(base, Ordering::Relaxed);
    }

    /// Watch this session's server→client requests (once; later calls keep the first).
    pub(crate) fn watch_answers(&self, w: Arc<dyn AnswerWatch>) {
        let _ = self.answers.set(w);
    }

    pub(crate) fn answer_watch(&self) -> Option<&Arc<dyn AnswerWatch>> {
        self.answers.get()
    }

    /// Server→client requests awaiting the client's answer.
    pub(crate) fn pending_count(&self) -> usize {
        lock(&self.pending).len()
    }

    pub(crate) fn add_pending(&self, id: Id, tx: PendingTx) {
        lock(&self.pending).insert(id, tx);
    }

    pub(crate) fn remove_pending(&self, id: &Id) -> bool {
        lock(&self.pending).remove(id).is_some()
    }

    /// Deliver the peer's response to a server→client request waiting here, or hand the
    /// outcome back (`Some`) when no request with this id waits on this session.
    pub(crate) fn deliver_response_or_return(
        &self,
        id: &Id,
        outcome: Result<Value, ErrorObject>,
    ) -> Option<Result<Value, ErrorObject>> {
        let tx = lock(&self.pending).remove(id);
        match tx {
            Some(tx) => {
                let _ = tx.send(outcome);
                None
            }
            None => Some(outcome),
        }
    }

    /// Deliver the peer's response to a server→client request; unknown or late ids are ignored.
    pub fn deliver_response(&self, id: &Id, outcome: Result<Value, ErrorObject>) -> bool {
        let tx = lock(&self.pending).remove(id);
        match tx {
            Some(tx) => tx.send(outcome).is_ok(),
            None => {
                tracing::debug!(%id, "ignoring a response to an unknown or finished request");
                false
            }
        }
    }

    /// The session's own channel (not tied to a request).
    pub(crate) fn outbound(&self) -> &Arc<dyn Outbound> {
        &self.sink
    }

    /// Send a notification on the session's own channel (not tied to a request).
    pub(crate) fn notify(&self, method: &str, params: Option<&Value>) -> bool {
        self.sink.try_send(encode_notification(method, params))
    }

    /// Tell the session `uri` changed (SUB-07, a legacy `resources/subscribe`), on its own channel.
    pub(crate) fn notify_resource_updated(&self, uri: &str) -> bool {
        let params = serde_json::json!({ "uri": uri });
        self.notify("notifications/resources/updated", Some(&params))
    }

    /// [`Self::notify`] for a change every worker delivers itself (see
    /// [`Outbound::try_send_here`]).
    pub(crate) fn notify_here(&self, method: &str, params: Option<&Value>) -> bool {
        self.sink.try_send_here(encode_notification(method, params))
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        lock(&self.subscriptions).insert(uri.to_owned());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    /// The subscribed URIs, sorted (the shareable form, see [`crate::backplane::SessionRecord`]).
    pub(crate) fn subscription_list(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.subscriptions).iter().cloned().collect();
        v.sort();
        v
    }

    /// Replace the subscriptions with those another worker recorded.
    pub(crate) fn replace_subscriptions(&self, uris: &[String]) {
        let mut s = lock(&self.subscriptions);
        s.clear();
        s.extend(uris.iter().cloned());
    }

    /// True when the session subscribed to `uri`.
    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }

    /// True when this connection can carry server→client requests tied to a request (stdio and
    /// legacy HTTP sessions; never a modern request).
    pub(crate) fn can_send_requests(&self) -> bool {
        self.kind != SessionKind::HttpModern
    }

    /// The session-wide log level set by `logging/setLevel`.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        lock(&self.legacy).log_level
    }
}

impl Server {
    /// The session for one stateless legacy HTTP request ([`SessionKind::HttpStatelessLegacy`]).
    ///
    /// An `initialize` runs on a fresh session as usual and is forgotten with it. Any other
    /// request runs on a session that this mode initializes at `transport_version` (HTTP-11: a
    /// request without one reads as 2025-03-26): the legacy era, that version, empty client
    /// capabilities and no client info, since no client ever described itself.
    ///
    /// # Errors
    /// -32600 when `transport_version` is not a handshake-era version this server speaks.
    pub(crate) fn stateless_legacy_session(
        &self,
        method: &str,
        transport_version: Option<&str>,
        sink: Arc<dyn Outbound>,
    ) -> Result<Arc<Session>, ErrorObject> {
        if method == "initialize" {
            return Ok(Session::new(
                self.clone(),
                SessionKind::HttpStatelessLegacy,
                sink,
            ));
        }
        let version = transport_version.unwrap_or(HTTP_DEFAULT_VERSION);
        if !is_legacy_supported(version) {
            return Err(ErrorObject::invalid_request(
                "Unsupported MCP-Protocol-Version",
            ));
        }
        let session = Session::new(self.clone(), SessionKind::HttpStatelessLegacy, sink);
        {
            let mut st = lock(&session.legacy);
            st.protocol_version = Some(version.to_owned());
            st.client_capabilities = Value::Object(serde_json::Map::new());
        }
        session.mark_initialized();
        session.lock_era(Era::Legacy);
        Ok(session)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(ended) = self.ended.get() {
            ended.cancel();
        }
        self.server.inner.unregister_session(self.key);
        if let Some(t0) = self.began {
            let transport = self.network_transport();
            self.server
                .inner
                .metrics
                .session_ended(transport, t0.elapsed());
        }
    }
}

/// Why [`Session::register_inflight`] refused a request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The id is already in flight on this session.
    Duplicate,
    /// `Limits::max_inflight` requests are already running (the cap is carried for the message).
    Busy(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::NullOutbound;

    /// The handshake's `clientInfo` (kept as text) reaches a handler as the object the client
    /// sent.
    #[tokio::test]
    async fn a_handler_reads_the_client_info_of_the_handshake() {
        use crate::server::test_support::{legacy_session, request};
        let server = Server::builder("t", "1")
            .tool(
                crate::Tool::new("who"),
                crate::handler_fn(|ctx: crate::RequestContext, _args: Value| async move {
                    Ok::<_, crate::HandlerError>(serde_json::json!({
                        "content": [], "structuredContent": {"info": ctx.client_info()}
                    }))
                }),
            )
            .build()
            .expect("server");
        let s = legacy_session(&server).await;
        let call = serde_json::json!({"name": "who", "arguments": {}});
        let r = request(&s, 1, "tools/call", call).await.expect("ok");
        let want = serde_json::json!({"name": "t", "version": "1"});
        assert_eq!(r["structuredContent"]["info"], want, "{r}");
        // Modern: this request's own `clientInfo`, and none when it sent none.
        let modern = server.new_session(SessionKind::HttpModern, Arc::new(NullOutbound));
        for (id, info) in [
            (1, Some(serde_json::json!({"name": "m", "version": "2"}))),
            (2, None),
        ] {
            let mut meta = serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            });
            if let Some(i) = &info {
                meta["io.modelcontextprotocol/clientInfo"] = i.clone();
            }
            let call = serde_json::json!({"name": "who", "arguments": {}, "_meta": meta});
            let r = request(&modern, id, "tools/call", call).await.expect("ok");
            let got = &r["structuredContent"]["info"];
            assert_eq!(got, &info.unwrap_or(Value::Null), "{r}");
        }
    }

    #[test]
    fn stateless_legacy_sessions_are_initialized_by_mode() {
        let server = Server::builder("t", "1").build().expect("server");
        let s = server
            .stateless_legacy_session("tools/list", Some("2025-06-18"), Arc::new(NullOutbound))
            .expect("session");
        assert_eq!(s.kind(), SessionKind::HttpStatelessLegacy);
        assert!(s.is_legacy_initialized());
        assert_eq!(s.era(), Some(Era::Legacy));
        assert_eq!(s.negotiated_version().as_deref(), Some("2025-06-18"));
        // No handshake happened, so nothing describes the client.
        assert_eq!(lock(&s.legacy).client_info, None);
        // HTTP-11: no version header reads as 2025-03-26 (the batch version).
        let s = server
            .stateless_legacy_session("tools/list", None, Arc::new(NullOutbound))
            .expect("session");
        assert!(s.allows_batch());
        let e = server
            .stateless_legacy_session("tools/list", Some("2026-07-28"), Arc::new(NullOutbound))
            .err()
            .expect("refused");
        assert_eq!(e.code, crate::error::codes::INVALID_REQUEST);
        // `initialize` runs its own handshake on a fresh session.
        let s = server
            .stateless_legacy_session("initialize", Some("bogus"), Arc::new(NullOutbound))
            .expect("session");
        assert!(!s.is_legacy_initialized());
        assert_eq!(s.era(), None);
    }
}
