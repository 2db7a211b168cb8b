//! Legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25; REQUIREMENTS LHTTP-01…09).
//!
//! `initialize` mints a cryptographically random `Mcp-Session-Id`; each session is one core
//! [`Session`] of kind `HttpLegacy`. Later requests need the id (missing → 400, unknown → 404).
//! POSTed responses and notifications → 202. GET opens the standalone stream (one at a time →
//! 409), which carries the session's unrelated messages. Every SSE event has an id
//! `<stream>_<seq>`; `Last-Event-ID` replays the rest of that stream from a bounded buffer.
//! DELETE ends the session. Idle sessions are reaped; the session count is capped (503).
//! Optional stateless mode: no sessions at all (see `HttpOptions::stateless_legacy`).

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

use super::body::{self, Resp};
use super::headers::{self, get_str, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use super::respond::{self, Era, Pending};
use super::server::Shared;
use super::sse;
use crate::error::{codes, ErrorObject};
use crate::jsonrpc::Id;
use crate::protocol::version::is_legacy_supported;
use crate::server::{lock, Session, SessionKind};
use crate::transport::Outbound;

/// Finished POST streams kept per session for resumption.
const KEPT_FINISHED_STREAMS: usize = 8;

/// One SSE stream of a session: a bounded replay buffer plus, while a client reads it, a live
/// channel. Pushing never blocks: a reader that falls behind is detached and resumes by id.
pub(crate) struct Stream {
    id: u64,
    cap: usize,
    inner: Mutex<StreamInner>,
}

struct StreamInner {
    next_seq: u64,
    buf: VecDeque<(u64, Bytes)>,
    live: Option<mpsc::Sender<Bytes>>,
    finished: bool,
}

impl Stream {
    fn new(id: u64, cap: usize) -> Self {
        Self {
            id,
            cap,
            inner: Mutex::new(StreamInner {
                next_seq: 1,
                buf: VecDeque::new(),
                live: None,
                finished: false,
            }),
        }
    }

    /// Record one message; deliver it live when a reader is attached. `false` when nobody
    /// reads the stream now (the message stays available for replay).
    pub(crate) fn push(&self, frame: &[u8]) -> bool {
        let mut st = lock(&self.inner);
        let seq = st.next_seq;
        st.next_seq += 1;
        let ev = sse::event(Some(&sse::event_id(self.id, seq)), frame);
        if st.buf.len() >= self.cap {
            st.buf.pop_front();
        }
        st.buf.push_back((seq, ev.clone()));
        match &st.live {
            Some(tx) => {
                if tx.try_send(ev).is_ok() {
                    true
                } else {
                    // Closed, or the reader fell behind: detach; it can resume with Last-Event-ID.
                    st.live = None;
                    false
                }
            }
            None => false,
        }
    }

    /// Send a keep-alive comment to the live reader; it is not recorded for replay (HTTP-06).
    /// With `reader`, only when that reader is still the one attached. `false` once there is
    /// no such reader (the keep-alive loop then ends).
    pub(crate) fn ping(&self, reader: Option<&mpsc::WeakSender<Bytes>>) -> bool {
        let mut st = lock(&self.inner);
        let Some(live) = &st.live else {
            return false;
        };
        if let Some(r) = reader {
            if !r.upgrade().is_some_and(|r| r.same_channel(live)) {
                return false;
            }
        }
        match live.try_send(sse::keepalive()) {
            Ok(()) => true,
            // A full queue already proves the stream busy; nothing to add.
            Err(mpsc::error::TrySendError::Full(_)) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => {
                st.live = None;
                false
            }
        }
    }

    /// Drop the live reader (its response ends); the stream stays resumable by event id.
    pub(crate) fn detach(&self) {
        lock(&self.inner).live = None;
    }

    /// The stream is complete: close the live reader once it has drained.
    pub(crate) fn finish(&self) {
        let mut st = lock(&self.inner);
        st.finished = true;
        st.live = None;
    }

    fn is_finished(&self) -> bool {
        lock(&self.inner).finished
    }

    fn has_live(&self) -> bool {
        lock(&self.inner)
            .live
            .as_ref()
            .is_some_and(|t| !t.is_closed())
    }

    /// Attach a reader: replay events after `after`, then stream live until finished.
    /// With `exclusive`, refuse (false) when a live reader is already attached.
    fn attach(
        &self,
        after: Option<u64>,
        priming: Option<u64>,
        tx: mpsc::Sender<Bytes>,
        exclusive: bool,
    ) -> bool {
        let mut st = lock(&self.inner);
        if exclusive && st.live.as_ref().is_some_and(|t| !t.is_closed()) {
            return false;
        }
        if let Some(retry) = priming {
            let last = st.next_seq - 1;
            let _ = tx.try_send(sse::priming(&sse::event_id(self.id, last), retry));
        }
        if let Some(after) = after {
            for (_, ev) in st.buf.iter().filter(|(s, _)| *s > after) {
                let _ = tx.try_send(ev.clone());
            }
        }
        if !st.finished {
            st.live = Some(tx);
        }
        true
    }
}

/// The session's own channel: the standalone GET stream (stream 0).
struct StandaloneSink(Arc<Stream>);

impl Outbound for StandaloneSink {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        self.0.push(&frame)
    }
}

/// One live legacy session.
pub(crate) struct Entry {
    sid: Arc<str>,
    pub session: Arc<Session>,
    standalone: Arc<Stream>,
    streams: Mutex<StreamTable>,
    last_seen: AtomicU64,
}

#[derive(Default)]
struct StreamTable {
    next: u64,
    open: HashMap<u64, Arc<Stream>>,
    finished: VecDeque<u64>,
}

impl Entry {
    pub(crate) fn sid(&self) -> &str {
        &self.sid
    }

    fn touch(&self, now: u64) {
        self.last_seen.store(now, Ordering::Relaxed);
    }

    /// A new POST stream with its live channel, primed with an id and `retry` (LHTTP-04).
    pub(crate) fn open_stream(
        &self,
        cap: usize,
        retry_ms: u64,
    ) -> (Arc<Stream>, mpsc::Receiver<Bytes>) {
        let mut t = lock(&self.streams);
        t.next += 1;
        let stream = Arc::new(Stream::new(t.next, cap));
        // Forget streams that finished long ago; keep the newest few for resumption.
        let done: Vec<u64> = t
            .open
            .iter()
            .filter(|(k, s)| !t.finished.contains(k) && s.is_finished())
            .map(|(k, _)| *k)
            .collect();
        t.finished.extend(done);
        while t.finished.len() > KEPT_FINISHED_STREAMS {
            if let Some(old) = t.finished.pop_front() {
                t.open.remove(&old);
            }
        }
        t.open.insert(stream.id, stream.clone());
        drop(t);
        let (tx, rx) = mpsc::channel(cap + 8);
        stream.attach(None, Some(retry_ms), tx, false);
        (stream, rx)
    }

    fn find_stream(&self, id: u64) -> Option<Arc<Stream>> {
        if id == 0 {
            return Some(self.standalone.clone());
        }
        lock(&self.streams).open.get(&id).cloned()
    }

    fn close(&self) {
        self.session.cancel_all();
        self.standalone.finish();
        let streams: Vec<Arc<Stream>> = lock(&self.streams).open.values().cloned().collect();
        for s in streams {
            s.finish();
        }
    }

    fn busy(&self) -> bool {
        self.session.inflight_count() > 0 || self.standalone.has_live()
    }
}

/// The session table.
#[derive(Default)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<Arc<str>, Arc<Entry>>>,
}

impl Sessions {
    pub(crate) fn len(&self) -> usize {
        lock(&self.map).len()
    }

    fn get(&self, sid: &str) -> Option<Arc<Entry>> {
        lock(&self.map).get(sid).cloned()
    }

    fn remove(&self, sid: &str) -> Option<Arc<Entry>> {
        lock(&self.map).remove(sid)
    }

    /// Close every session (shutdown).
    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<Entry>> = lock(&self.map).drain().map(|(_, e)| e).collect();
        for e in all {
            e.close();
        }
    }

    /// Remove sessions idle for longer than `idle_ms`.
    fn reap(&self, now: u64, idle_ms: u64) -> usize {
        let stale: Vec<Arc<Entry>> = {
            let mut map = lock(&self.map);
            let keys: Vec<Arc<str>> = map
                .iter()
                .filter(|(_, e)| {
                    now.saturating_sub(e.last_seen.load(Ordering::Relaxed)) > idle_ms && !e.busy()
                })
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        for e in &stale {
            tracing::debug!(session = %e.sid, "reaping idle legacy session");
            e.close();
        }
        stale.len()
    }
}

/// Reap idle sessions until the service is gone.
pub(crate) fn spawn_reaper(shared: &Arc<Shared>) {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let idle = shared.opts.session_idle_timeout;
    let every = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    let stop = shared.stopping.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            let Some(shared) = weak.upgrade() else {
                return;
            };
            shared.sessions.reap(
                shared.now_ms(),
                idle.as_millis().try_into().unwrap_or(u64::MAX),
            );
        }
    });
}

fn new_session_id() -> Option<Arc<str>> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    let mut s = String::with_capacity(32);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    Some(Arc::from(s))
}

fn err(status: StatusCode, id: Option<&Id>, code: i64, msg: &str) -> Resp {
    body::rpc_error(status, id, &ErrorObject::new(code, msg.to_owned()))
}

/// Find the session named by the headers, checking `MCP-Protocol-Version` (LHTTP-02, LHTTP-03).
pub(crate) fn lookup(
    shared: &Shared,
    h: &HeaderMap,
    id: Option<&Id>,
) -> Result<Arc<Entry>, Box<Resp>> {
    let Some(sid) = get_str(h, SESSION_ID) else {
        return Err(Box::new(err(
            StatusCode::BAD_REQUEST,
            id,
            codes::INVALID_REQUEST,
            "Mcp-Session-Id header is required",
        )));
    };
    let Some(entry) = shared.sessions.get(sid) else {
        return Err(Box::new(err(
            StatusCode::NOT_FOUND,
            id,
            codes::INVALID_REQUEST,
            "Session not found",
        )));
    };
    // Missing → assume 2025-03-26 (supported); present → must be a handshake version.
    if let Some(v) = h.get(PROTOCOL_VERSION) {
        if !v.to_str().is_ok_and(is_legacy_supported) {
            return Err(Box::new(err(
                StatusCode::BAD_REQUEST,
                id,
                codes::INVALID_REQUEST,
                "Unsupported MCP-Protocol-Version",
            )));
        }
    }
    entry.touch(shared.now_ms());
    Ok(entry)
}

/// A legacy request POST.
pub(crate) async fn request(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
) -> Resp {
    if shared.opts.stateless_legacy {
        return stateless(shared, h, id, method, params).await;
    }
    if method == "initialize" && h.get(SESSION_ID).is_none() {
        return initialize(shared, id, params).await;
    }
    let entry = match lookup(shared, h, Some(&id)) {
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
        respond::RequestSink::new(shared.server.limits().max_outbound_queue, true);
    match session.start_request(id.clone(), method, params, sink) {
        Err(reply) => {
            if session.is_inflight(&id) {
                return err(
                    StatusCode::CONFLICT,
                    Some(&id),
                    codes::INVALID_REQUEST,
                    "request id is already in flight",
                );
            }
            respond::json_reply(&id, &reply, &Era::Legacy(entry))
        }
        Ok(fut) => {
            let p = Pending {
                id,
                fut: Box::pin(fut),
                rx,
                session,
                close,
            };
            respond::answer(shared, p, Era::Legacy(entry)).await
        }
    }
}

async fn initialize(shared: &Arc<Shared>, id: Id, params: Option<Map<String, Value>>) -> Resp {
    if shared.sessions.len() >= shared.opts.max_sessions {
        return err(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&id),
            codes::INTERNAL_ERROR,
            "Too many sessions",
        );
    }
    let standalone = Arc::new(Stream::new(0, shared.opts.replay_buffer));
    let session = shared.server.new_session(
        SessionKind::HttpLegacy,
        Arc::new(StandaloneSink(standalone.clone())),
    );
    let (tx, _rx) = mpsc::channel::<Vec<u8>>(1);
    let reply = session
        .handle_request(id.clone(), "initialize".into(), params, Arc::new(tx))
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
    let entry = Arc::new(Entry {
        sid: sid.clone(),
        session,
        standalone,
        streams: Mutex::new(StreamTable::default()),
        last_seen: AtomicU64::new(shared.now_ms()),
    });
    {
        let mut map = lock(&shared.sessions.map);
        if map.len() >= shared.opts.max_sessions {
            return err(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(&id),
                codes::INTERNAL_ERROR,
                "Too many sessions",
            );
        }
        map.insert(sid.clone(), entry);
    }
    shared.ensure_reaper();
    let mut r = body::json(StatusCode::OK, crate::server::encode_reply(&id, &reply));
    if let Ok(v) = HeaderValue::from_str(&sid) {
        r.headers_mut().insert(SESSION_ID, v);
    }
    r
}

/// Stateless legacy mode: `initialize` is answered and forgotten; any other request runs on a
/// fresh session whose handshake is replayed from the `MCP-Protocol-Version` header.
async fn stateless(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    id: Id,
    method: String,
    params: Option<Map<String, Value>>,
) -> Resp {
    let session = shared.server.new_session(
        SessionKind::HttpLegacy,
        Arc::new(crate::transport::NullOutbound),
    );
    let (tx, rx) = mpsc::channel(shared.server.limits().max_outbound_queue);
    let sink: Arc<dyn Outbound> = Arc::new(tx);
    if method != "initialize" {
        let version = get_str(h, PROTOCOL_VERSION).unwrap_or("2025-03-26");
        if !is_legacy_supported(version) {
            return err(
                StatusCode::BAD_REQUEST,
                Some(&id),
                codes::INVALID_REQUEST,
                "Unsupported MCP-Protocol-Version",
            );
        }
        let init = serde_json::json!({"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "stateless-http", "version": "0"}});
        let handshake = session
            .handle_request(
                Id::Num(0),
                "initialize".into(),
                init.as_object().cloned(),
                sink.clone(),
            )
            .await;
        if handshake.is_none_or(|r| r.result.is_err()) {
            return err(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(&id),
                codes::INTERNAL_ERROR,
                "Internal error",
            );
        }
    }
    match session.start_request(id.clone(), method, params, sink) {
        Err(reply) => respond::json_reply(&id, &reply, &Era::LegacyStateless),
        Ok(fut) => {
            let p = Pending {
                id,
                fut: Box::pin(fut),
                rx,
                session,
                close: tokio_util::sync::CancellationToken::new(),
            };
            respond::answer(shared, p, Era::LegacyStateless).await
        }
    }
}

/// A legacy notification POST → 202.
pub(crate) fn notification(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Resp {
    if shared.opts.stateless_legacy {
        tracing::debug!(
            method,
            "stateless legacy mode: notification accepted and ignored"
        );
        return body::status(StatusCode::ACCEPTED);
    }
    match lookup(shared, h, None) {
        Ok(e) => {
            e.session.handle_notification(method, params);
            body::status(StatusCode::ACCEPTED)
        }
        Err(r) => *r,
    }
}

/// A POSTed response to a server→client request → 202 (LHTTP-08).
pub(crate) fn response(
    shared: &Arc<Shared>,
    h: &HeaderMap,
    id: &Id,
    outcome: Result<Value, ErrorObject>,
) -> Resp {
    if shared.opts.stateless_legacy {
        return body::status(StatusCode::ACCEPTED);
    }
    match lookup(shared, h, None) {
        Ok(e) => {
            e.session.deliver_response(id, outcome);
            body::status(StatusCode::ACCEPTED)
        }
        Err(r) => *r,
    }
}

/// GET: the standalone stream, or a resumed stream with `Last-Event-ID` (LHTTP-05, LHTTP-06).
pub(crate) fn get(shared: &Arc<Shared>, h: &HeaderMap) -> Resp {
    if !headers::accepts_sse(h) {
        return body::text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow text/event-stream",
        );
    }
    let entry = match lookup(shared, h, None) {
        Ok(e) => e,
        Err(r) => return *r,
    };
    let cap = shared.opts.replay_buffer + 8;
    let (tx, rx) = mpsc::channel(cap);
    let reader = tx.downgrade();
    let resume = get_str(h, LAST_EVENT_ID)
        .and_then(sse::parse_event_id)
        .and_then(|(s, seq)| entry.find_stream(s).map(|st| (st, seq)));
    let stream = match resume {
        Some((stream, seq)) => {
            stream.attach(Some(seq), None, tx, false);
            stream
        }
        None => {
            if !entry
                .standalone
                .attach(None, Some(shared.opts.sse_retry_ms), tx, true)
            {
                return body::text(
                    StatusCode::CONFLICT,
                    "a standalone SSE stream is already open for this session",
                );
            }
            entry.standalone.clone()
        }
    };
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
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            if !stream.ping(Some(&reader)) {
                return;
            }
        }
    });
}

/// DELETE ends the session and frees everything it held (LHTTP-02).
pub(crate) fn delete(shared: &Arc<Shared>, h: &HeaderMap) -> Resp {
    let entry = match lookup(shared, h, None) {
        Ok(e) => e,
        Err(r) => return *r,
    };
    if let Some(e) = shared.sessions.remove(&entry.sid) {
        e.close();
    }
    body::status(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(String::from_utf8_lossy(&b).into_owned());
        }
        out
    }

    #[test]
    fn lhttp06_replay_after_an_event_id_from_a_bounded_buffer() {
        let s = Stream::new(3, 2);
        for m in ["a", "b", "c"] {
            assert!(!s.push(m.as_bytes()), "nobody reads yet");
        }
        let (tx, mut rx) = mpsc::channel(8);
        assert!(s.attach(Some(1), None, tx, false));
        // seq 1 ("a") was evicted by the cap of 2; after 1 → b, c.
        assert_eq!(
            drain(&mut rx),
            vec!["id: 3_2\ndata: b\n\n", "id: 3_3\ndata: c\n\n"]
        );
        assert!(s.push(b"d"));
        assert_eq!(drain(&mut rx), vec!["id: 3_4\ndata: d\n\n"]);
        s.finish();
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn exclusive_attach_refuses_a_second_live_reader() {
        let s = Stream::new(0, 4);
        let (tx1, _rx1) = mpsc::channel(4);
        let (tx2, _rx2) = mpsc::channel(4);
        assert!(s.attach(None, Some(1000), tx1, true));
        assert!(!s.attach(None, Some(1000), tx2, true));
        let (tx3, _rx3) = mpsc::channel(4);
        drop(_rx1);
        assert!(
            s.attach(None, Some(1000), tx3, true),
            "a closed reader frees the slot"
        );
    }

    #[test]
    fn a_reader_that_falls_behind_is_detached() {
        let s = Stream::new(1, 16);
        let (tx, mut rx) = mpsc::channel(1);
        s.attach(None, None, tx, false);
        assert!(s.push(b"x"));
        assert!(!s.push(b"y"), "full: detached instead of blocking");
        assert_eq!(drain(&mut rx).len(), 1);
        assert!(rx.try_recv().is_err());
    }
}
