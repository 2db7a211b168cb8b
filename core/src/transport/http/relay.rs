//! Session-level messages across the workers of a shared legacy session (REQUIREMENTS LHTTP-05,
//! LHTTP-08, CAN-01), without sticky routing:
//!
//! - the standalone stream: a message the session sends outside any request's POST stream (a
//!   legacy task's status, progress, logs and server→client requests) that no local GET reader
//!   takes is relayed to the worker holding the session's live GET stream, which writes it
//!   there. Its server→client request ids carry the sending worker's tag (the session's peer id
//!   base, see `Entry::share_events`), so the client's answer, POSTed anywhere, is routed back
//!   (`replica::route_response`). When no GET stream is open anywhere, a relayed request fails
//!   at once as it does in one process (the handler sees a closed connection).
//! - `notifications/cancelled`: a client's cancel for a request running on another worker is
//!   routed to that worker, which cancels the handler.
//!
//! Each replica claims what it holds in the session store (`SessionStore::claim`: its live GET
//! stream, its in-flight requests); a message is pushed onto the holder's route list, which the
//! holder polls (`replica::spawn_router`). Claims and relayed frames go through one bounded
//! queue per replica, in order; a full queue drops (like a full stream queue in one process).
//! Changes the notification bus carries to every worker (list changes, resource updates) are
//! never relayed (`Outbound::try_send_here`): each worker delivers them itself.

use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use tokio::sync::mpsc;

use super::replica;
use super::server::Shared;
use super::sessions::Entry;
use crate::backplane::{RouteLimits, SessionStore, StoreUnavailable};
use crate::jsonrpc::{Id, Incoming};
use crate::server::Session;

/// Marks a relayed standalone-stream frame on a route list (client messages there are JSON
/// objects, which never start with it).
const FRAME: char = 's';
/// The claim of a session's live standalone GET stream.
const GET: &str = "get";

enum Op {
    Frame(Vec<u8>),
    Claim(String),
    Release(String),
}

/// One replica's relay: the queue to its writer task, and whether it claimed the GET stream.
pub(crate) struct Relay {
    tx: mpsc::Sender<Op>,
    holds_get: AtomicBool,
}

impl Relay {
    /// Relay a standalone-stream frame no local reader took. `false`: the queue is full.
    pub(crate) fn forward(&self, frame: Vec<u8>) -> bool {
        self.send(Op::Frame(frame))
    }

    fn send(&self, op: Op) -> bool {
        let sent = self.tx.try_send(op).is_ok();
        if !sent {
            tracing::warn!("legacy session relay queue full: message dropped");
        }
        sent
    }
}

/// Holds a request's claim while it runs; dropping it releases the claim.
pub(crate) struct Claim {
    tx: mpsc::Sender<Op>,
    what: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = self
            .tx
            .try_send(Op::Release(std::mem::take(&mut self.what)));
    }
}

/// The claim field of client request `id` (its JSON form: `1` and `"1"` are distinct ids).
fn request_field(id: &Id) -> String {
    format!("r:{}", id.to_value())
}

/// The claim field of server→client request `id`: the client's answer to it is expected.
pub(crate) fn answer_field(id: &Id) -> String {
    format!("q:{}", id.to_value())
}

struct Writer {
    store: Arc<dyn SessionStore>,
    sid: Arc<str>,
    tag: u64,
    limits: RouteLimits,
    session: Weak<Session>,
}

impl Writer {
    async fn run(self, mut rx: mpsc::Receiver<Op>) {
        while let Some(op) = rx.recv().await {
            let sid = self.sid.clone();
            // Failures are logged by the store; a lost claim only means a message for it is
            // not routed (cancellation is advisory, CAN-01).
            match op {
                Op::Frame(f) => self.frame(f).await,
                Op::Claim(w) => {
                    let _ = self.store.claim(sid, w, self.tag, self.limits.ttl_ms).await;
                }
                Op::Release(w) => {
                    let _ = self.store.release(sid, w, self.tag).await;
                }
            }
        }
    }

    async fn frame(&self, frame: Vec<u8>) {
        let msg = format!("{FRAME}{}", String::from_utf8_lossy(&frame));
        let routed = self
            .store
            .route_to(self.sid.clone(), GET.into(), self.tag, msg, self.limits)
            .await;
        if matches!(routed, Ok(true)) {
            return;
        }
        // No GET stream open anywhere (or the store is down): as in one process, the message
        // stays in this replica's replay buffer, and a request among them fails now instead of
        // waiting for its timeout.
        let Some(session) = self.session.upgrade() else {
            return;
        };
        if let Ok(v) = serde_json::from_slice::<Value>(&frame) {
            if let Incoming::Request { id, .. } = crate::jsonrpc::classify(v) {
                session.remove_pending(&id);
            }
        }
    }
}

/// Claims the answers to a replica's server→client requests (LHTTP-08): the claim is written
/// before the request is sent, so another worker receiving the answer finds it, and an answer
/// with an id no worker sent finds none and is dropped there (never stored). It is released,
/// in order after the replica's other claims, once the request stops waiting.
struct Answers {
    store: Arc<dyn SessionStore>,
    sid: Arc<str>,
    tag: u64,
    ttl_ms: u64,
    tx: mpsc::Sender<Op>,
}

impl crate::server::AnswerWatch for Answers {
    fn sending(&self, id: &Id) -> crate::future::BoxFuture<()> {
        let claim = self
            .store
            .claim(self.sid.clone(), answer_field(id), self.tag, self.ttl_ms);
        // Unreachable store: logged there; the answer is then only taken on this worker.
        Box::pin(async move {
            let _ = claim.await;
        })
    }

    fn done(&self, id: &Id) {
        // A full queue leaves the claim to expire with the session's claims hash.
        let _ = self.tx.try_send(Op::Release(answer_field(id)));
    }
}

/// Give `entry` (a replica of a shared session, tagged) its relay.
pub(crate) fn enable(shared: &Shared, entry: &Entry) {
    let Some(tag) = entry.tag.get().copied() else {
        return;
    };
    if !replica::is_shared(shared) || entry.relay().is_some() {
        return;
    }
    let (tx, rx) = mpsc::channel(shared.opts.replay_buffer.max(1));
    let writer = Writer {
        store: shared.opts.legacy_stores.sessions.clone(),
        sid: Arc::from(entry.sid()),
        tag,
        limits: replica::route_limits(shared),
        session: Arc::downgrade(&entry.session),
    };
    entry.session.watch_answers(Arc::new(Answers {
        store: writer.store.clone(),
        sid: writer.sid.clone(),
        tag,
        ttl_ms: writer.limits.ttl_ms,
        tx: tx.clone(),
    }));
    tokio::spawn(writer.run(rx));
    entry.set_relay(Relay {
        tx,
        holds_get: AtomicBool::new(false),
    });
}

/// Claim client request `id` for this replica while it runs (the claim goes with the guard).
pub(crate) fn claim_request(entry: &Entry, id: &Id) -> Option<Claim> {
    let r = entry.relay()?;
    let what = request_field(id);
    r.send(Op::Claim(what.clone())).then(|| Claim {
        tx: r.tx.clone(),
        what,
    })
}

/// Claim the session's GET stream for this replica (a GET just attached its standalone stream):
/// standalone messages of every worker come here from now on.
pub(crate) async fn claim_get(shared: &Shared, entry: &Entry) -> Result<(), StoreUnavailable> {
    let (Some(r), Some(tag)) = (entry.relay(), entry.tag.get().copied()) else {
        return Ok(());
    };
    let store = &shared.opts.legacy_stores.sessions;
    let sid = Arc::from(entry.sid());
    store
        .claim(sid, GET.into(), tag, replica::ttl_ms(shared))
        .await?;
    r.holds_get.store(true, Ordering::Relaxed);
    Ok(())
}

/// Release the GET claim of a replica whose GET reader went away.
async fn release_stale_get(shared: &Shared, entry: &Entry) {
    let (Some(r), Some(tag)) = (entry.relay(), entry.tag.get().copied()) else {
        return;
    };
    if !r.holds_get.load(Ordering::Relaxed) || entry.standalone().has_live() {
        return;
    }
    r.holds_get.store(false, Ordering::Relaxed);
    let store = &shared.opts.legacy_stores.sessions;
    let _ = store.release(Arc::from(entry.sid()), GET.into(), tag).await;
    // A new reader may have attached (and claimed) while the release was on its way.
    if entry.standalone().has_live() {
        let _ = claim_get(shared, entry).await;
    }
}

/// Route a client's `notifications/cancelled` for a request this replica does not run to the
/// worker that does (CAN-01 across workers). Unknown and finished ids stay no-ops.
pub(crate) async fn route_cancel(
    shared: &Shared,
    entry: &Entry,
    params: Option<&Map<String, Value>>,
) -> Result<(), StoreUnavailable> {
    let Some(id) = params
        .and_then(|p| p.get("requestId"))
        .and_then(Id::from_value)
    else {
        return Ok(());
    };
    let Some(tag) = entry.tag.get().copied() else {
        return Ok(());
    };
    if entry.session.is_inflight(&id) {
        return Ok(());
    }
    let params = params.map(|p| Value::Object(p.clone()));
    let msg = crate::server::encode_cancel(params.as_ref());
    let msg = String::from_utf8_lossy(&msg).into_owned();
    let store = &shared.opts.legacy_stores.sessions;
    let sid = Arc::from(entry.sid());
    store
        .route_to(
            sid,
            request_field(&id),
            tag,
            msg,
            replica::route_limits(shared),
        )
        .await
        .map(|_| ())
}

/// True for the number of a shared replica's standalone stream (`tag << 20`; its POST streams
/// are numbered above it).
pub(crate) fn is_standalone(stream: u64) -> bool {
    stream != 0 && stream & ((1 << 20) - 1) == 0
}

/// LHTTP-04 for the standalone stream of another worker (its GET connection was lost): queue
/// that stream's events after `after`, as the shared event store holds them, on `tx`; the
/// caller then attaches this worker's standalone stream behind them.
pub(crate) async fn replay_standalone(
    shared: &Shared,
    entry: &Entry,
    stream: u64,
    after: u64,
    tx: &mpsc::Sender<bytes::Bytes>,
) -> Result<(), StoreUnavailable> {
    let store = &shared.opts.legacy_stores.events;
    if !store.is_shared() {
        return Ok(());
    }
    let key = crate::backplane::StreamKey {
        session: Arc::from(entry.sid()),
        stream,
    };
    for (_, ev) in store.replay(key, after).await?.events {
        // The channel holds a full replay buffer; the store keeps no more than that.
        let _ = tx.try_send(ev);
    }
    Ok(())
}

/// Whether messages routed to this replica may be waiting (the router then reads its list):
/// answers to its server→client requests, cancels of its requests, frames for its GET stream.
/// A GET claim whose reader went away is released first.
pub(crate) async fn expects(shared: &Shared, entry: &Entry) -> bool {
    release_stale_get(shared, entry).await;
    entry.session.pending_count() > 0
        || (entry.relay().is_some()
            && (entry.session.inflight_count() > 0 || entry.standalone().has_live()))
}

/// Hand one routed message to this replica: a relayed standalone frame to its GET stream, a
/// response to the waiting handler, a cancel to the running request.
pub(crate) fn deliver(entry: &Entry, msg: &str) {
    if let Some(frame) = msg.strip_prefix(FRAME) {
        // Not taken live (the reader just left): kept in the replay buffer like any message.
        entry.standalone().push(frame.as_bytes());
        return;
    }
    let Ok(v) = serde_json::from_str(msg) else {
        return;
    };
    match crate::jsonrpc::classify(v) {
        Incoming::Response { id, outcome } => {
            entry.session.deliver_response(&id, outcome);
        }
        Incoming::Notification { method, params } if crate::server::is_cancel(&method) => {
            entry.session.handle_notification(&method, params.as_ref());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay(cap: usize) -> (Relay, mpsc::Receiver<Op>) {
        let (tx, rx) = mpsc::channel(cap);
        let r = Relay {
            tx,
            holds_get: AtomicBool::new(false),
        };
        (r, rx)
    }

    fn frame(op: Option<Op>) -> Option<Vec<u8>> {
        match op {
            Some(Op::Frame(f)) => Some(f),
            _ => None,
        }
    }

    #[test]
    fn lhttp05_only_unread_session_messages_are_relayed_and_the_queue_is_bounded() {
        let (st, sink) = super::super::sessions::standalone(8);
        let (r, mut rx) = relay(2);
        st.set_relay(r);
        assert!(
            sink.try_send(b"{\"n\":1}".to_vec()),
            "no reader here: relayed"
        );
        assert!(
            !sink.try_send_here(b"{\"n\":2}".to_vec()),
            "a bus change is every worker's own: never relayed"
        );
        assert_eq!(frame(rx.try_recv().ok()), Some(b"{\"n\":1}".to_vec()));
        assert!(rx.try_recv().is_err());

        // A live reader here takes everything; nothing is relayed.
        let (tx, mut live) = mpsc::channel(8);
        assert!(st.stream().attach(None, None, tx, true));
        assert!(sink.try_send(b"{\"n\":3}".to_vec()));
        assert!(live.try_recv().is_ok());
        assert!(rx.try_recv().is_err());
        drop(live);

        // The relay queue is bounded: past it, the message is refused (the caller learns it).
        assert!(sink.try_send(b"{\"n\":4}".to_vec()));
        assert!(sink.try_send(b"{\"n\":5}".to_vec()));
        assert!(!sink.try_send(b"{\"n\":6}".to_vec()));
    }
}
