//! The legacy session table (REQUIREMENTS LHTTP-02, LHTTP-09, LC-01): one [`Entry`] per
//! `Mcp-Session-Id`, each holding its core [`Session`], the standalone GET stream (stream 0) and
//! its POST streams. The table is capped (`HttpOptions::max_sessions`, 503 past it). A reaper
//! removes idle sessions, and, much sooner, sessions whose client never completed the handshake
//! with `notifications/initialized` (`HttpOptions::uninitialized_session_timeout`): otherwise a peer
//! that only POSTs `initialize` fills the cap with half-open sessions and locks every new client
//! out until the idle timeout.

use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

use super::server::Shared;
use super::stream::Stream;
use crate::server::{lock, Session};
use crate::transport::Outbound;

/// Finished POST streams kept per session for resumption.
const KEPT_FINISHED_STREAMS: usize = 8;

/// The session's own channel: the standalone GET stream (stream 0). With shared stores, a
/// message no local reader takes is relayed to the worker holding the session's live GET
/// stream (see [`super::relay`]).
pub(crate) struct Standalone {
    stream: Arc<Stream>,
    relay: std::sync::OnceLock<super::relay::Relay>,
}

impl Outbound for Standalone {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        if self.stream.push(&frame) {
            return true;
        }
        self.relay.get().is_some_and(|r| r.forward(frame))
    }

    fn try_send_here(&self, frame: Vec<u8>) -> bool {
        self.stream.push(&frame)
    }
}

impl Standalone {
    pub(crate) fn stream(&self) -> &Arc<Stream> {
        &self.stream
    }

    /// Relay what no local reader takes (set once; shared stores only).
    pub(crate) fn set_relay(&self, relay: super::relay::Relay) {
        let _ = self.relay.set(relay);
    }
}

/// A new standalone stream (stream 0) and the sink a new session sends unrelated messages to.
pub(crate) fn standalone(replay: usize) -> (Arc<Standalone>, Arc<dyn Outbound>) {
    let s = Arc::new(Standalone {
        stream: Arc::new(Stream::new(0, replay)),
        relay: std::sync::OnceLock::new(),
    });
    (s.clone(), s)
}

/// One live legacy session.
pub(crate) struct Entry {
    sid: Arc<str>,
    pub session: Arc<Session>,
    standalone: Arc<Standalone>,
    streams: Mutex<StreamTable>,
    last_seen: AtomicU64,
    /// When `initialize` created the session (ms on the service clock).
    created: u64,
    /// The shared record as this worker last read or wrote it (shared stores only): a request
    /// writes back only the fields it changed.
    pub(crate) baseline: Mutex<crate::backplane::SessionRecord>,
    /// This replica's worker tag (shared stores only): its stream numbers and server→client
    /// request ids are `tag << 20` onwards.
    pub(crate) tag: std::sync::OnceLock<u64>,
    /// The shared event store POST streams are mirrored to (shared stores only).
    events: std::sync::OnceLock<(
        Arc<dyn crate::backplane::EventStore>,
        crate::backplane::EventLimits,
    )>,
}

#[derive(Default)]
struct StreamTable {
    next: u64,
    open: HashMap<u64, Arc<Stream>>,
    finished: VecDeque<u64>,
}

impl Entry {
    /// A session that just completed `initialize`, seen at `now` (ms).
    pub(crate) fn new(
        sid: Arc<str>,
        session: Arc<Session>,
        standalone: Arc<Standalone>,
        now: u64,
    ) -> Arc<Self> {
        Arc::new(Self {
            sid,
            session,
            standalone,
            streams: Mutex::new(StreamTable::default()),
            last_seen: AtomicU64::new(now),
            created: now,
            baseline: Mutex::new(crate::backplane::SessionRecord::default()),
            events: std::sync::OnceLock::new(),
            tag: std::sync::OnceLock::new(),
        })
    }

    /// Mirror this replica's POST streams to `store`, numbering them from a random base so
    /// event ids stay unique across the workers serving the session (LHTTP-06).
    pub(crate) fn share_events(
        &self,
        store: Arc<dyn crate::backplane::EventStore>,
        limits: crate::backplane::EventLimits,
    ) {
        let mut b = [0u8; 4];
        if getrandom::fill(&mut b).is_err() {
            // Without randomness two workers could mint the same stream ids: keep local only.
            tracing::error!("the system random number generator failed; streams stay local");
            return;
        }
        // Below 2^53: JavaScript clients parse the ids' numbers exactly. The same tag numbers
        // this replica's server→client requests, so a response POSTed to another worker is
        // routed back here by its id (`id >> 20`).
        let tag = u64::from(u32::from_be_bytes(b) >> 1);
        lock(&self.streams).next = tag << 20;
        // The standalone stream takes the base number itself (POST streams start above it).
        let key = crate::backplane::StreamKey {
            session: self.sid.clone(),
            stream: tag << 20,
        };
        let mirror = super::stream::Mirror {
            store: store.clone(),
            key,
            limits,
        };
        self.standalone.stream().share(tag << 20, mirror);
        self.session
            .set_peer_id_base(i64::from(u32::from_be_bytes(b) >> 1) << 20);
        let _ = self.tag.set(tag);
        let _ = self.events.set((store, limits));
    }

    /// A client notification on this session. The one that completes the handshake (LC-01)
    /// exempts the session from the short pre-initialized timeout.
    pub(crate) fn notification(&self, method: &str, params: Option<&Map<String, Value>>) {
        self.session.handle_notification(method, params);
    }

    /// The handshake is still half-open `init_ms` after `initialize`.
    fn handshake_overdue(&self, now: u64, init_ms: u64) -> bool {
        !self.session.is_handshake_complete() && now.saturating_sub(self.created) > init_ms
    }

    pub(crate) fn sid(&self) -> &str {
        &self.sid
    }

    /// The standalone GET stream (stream 0).
    pub(crate) fn standalone(&self) -> &Arc<Stream> {
        self.standalone.stream()
    }

    /// The relay of this replica's session-level messages to other workers (shared stores).
    pub(crate) fn relay(&self) -> Option<&super::relay::Relay> {
        self.standalone.relay.get()
    }

    pub(crate) fn set_relay(&self, relay: super::relay::Relay) {
        self.standalone.set_relay(relay);
    }

    pub(crate) fn touch(&self, now: u64) {
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
        let stream = Arc::new(match self.events.get() {
            Some((store, limits)) => Stream::mirrored(
                t.next,
                cap,
                super::stream::Mirror {
                    store: store.clone(),
                    key: crate::backplane::StreamKey {
                        session: self.sid.clone(),
                        stream: t.next,
                    },
                    limits: *limits,
                },
            ),
            None => Stream::new(t.next, cap),
        });
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
        t.open.insert(stream.id(), stream.clone());
        drop(t);
        let (tx, rx) = mpsc::channel(cap + 8);
        stream.attach(None, Some(retry_ms), tx, false);
        (stream, rx)
    }

    pub(crate) fn find_stream(&self, id: u64) -> Option<Arc<Stream>> {
        if id == 0 || id == self.standalone().id() {
            return Some(self.standalone().clone());
        }
        lock(&self.streams).open.get(&id).cloned()
    }

    pub(crate) fn close(&self) {
        self.session.cancel_all();
        self.standalone.stream.finish();
        let streams: Vec<Arc<Stream>> = lock(&self.streams).open.values().cloned().collect();
        for s in streams {
            s.finish();
        }
    }

    fn busy(&self) -> bool {
        self.session.inflight_count() > 0 || self.standalone.stream.has_live()
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

    pub(crate) fn get(&self, sid: &str) -> Option<Arc<Entry>> {
        lock(&self.map).get(sid).cloned()
    }

    /// The ids of every local session (replicas included).
    pub(crate) fn sids(&self) -> Vec<Arc<str>> {
        lock(&self.map).keys().cloned().collect()
    }

    pub(crate) fn remove(&self, sid: &str) -> Option<Arc<Entry>> {
        lock(&self.map).remove(sid)
    }

    /// Add `entry` unless the table already holds `max` sessions (`false`: refused).
    pub(crate) fn insert(&self, entry: Arc<Entry>, max: usize) -> bool {
        let mut map = lock(&self.map);
        if map.len() >= max {
            return false;
        }
        map.insert(entry.sid.clone(), entry);
        true
    }

    /// Close every session (shutdown).
    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<Entry>> = lock(&self.map).drain().map(|(_, e)| e).collect();
        for e in all {
            e.close();
        }
    }

    /// Remove sessions idle (and not busy) for longer than `idle_ms`, and sessions still
    /// without `notifications/initialized` `init_ms` after `initialize`, busy or not: a
    /// half-open session has no business holding streams or work that long.
    /// Returns the ids of the never-initialized ones: with shared stores their records go too
    /// (an idle replica only leaves this worker; the record expires by its own TTL).
    fn reap(&self, now: u64, idle_ms: u64, init_ms: u64) -> Vec<Arc<str>> {
        let stale: Vec<Arc<Entry>> = {
            let mut map = lock(&self.map);
            let keys: Vec<Arc<str>> = map
                .iter()
                .filter(|(_, e)| {
                    e.handshake_overdue(now, init_ms)
                        || (now.saturating_sub(e.last_seen.load(Ordering::Relaxed)) > idle_ms
                            && !e.busy())
                })
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        let mut overdue = Vec::new();
        for e in &stale {
            tracing::debug!(session = %e.sid, "reaping an idle or never-initialized legacy session");
            if e.handshake_overdue(now, init_ms) {
                overdue.push(e.sid.clone());
            }
            e.close();
        }
        overdue
    }
}

/// Run `tick` every `period` until the service stops. The service is held weakly between ticks,
/// so these loops (reaper, shared-session sweeper, response router) never keep it alive.
pub(crate) fn spawn_every<F, Fut>(shared: &Arc<Shared>, period: Duration, tick: F)
where
    F: Fn(Arc<Shared>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let stop = shared.stopping.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(period) => {}
                () = stop.cancelled() => return,
            }
            let Some(shared) = weak.upgrade() else {
                return;
            };
            tick(shared).await;
        }
    });
}

/// Reap idle and never-initialized sessions until the service is gone. It runs four times per
/// shorter timeout, so a session outlives its timeout by at most a quarter of it.
pub(crate) fn spawn_reaper(shared: &Arc<Shared>) {
    let idle = shared.opts.session_idle_timeout;
    let init = shared.opts.uninitialized_session_timeout;
    let every = (idle.min(init) / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    let ms = |d: Duration| -> u64 { d.as_millis().try_into().unwrap_or(u64::MAX) };
    spawn_every(shared, every, move |shared| async move {
        for sid in shared.sessions.reap(shared.now_ms(), ms(idle), ms(init)) {
            // Logged by the store when it fails; the record then expires by its TTL.
            let _ = super::replica::delete(&shared, &sid).await;
        }
    });
}

pub(crate) fn new_session_id() -> Option<Arc<str>> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).ok()?;
    let mut s = String::with_capacity(32);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    Some(Arc::from(s))
}
