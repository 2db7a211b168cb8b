//! The connections a bridge keeps to its upstream. One, the main one, lists the upstream's items,
//! holds its subscriptions and serves calls by default. More are opened when one connection
//! cannot stand for every client:
//!
//! - **per legacy session** (`mcpcore serve` without `--shared`): each client session gets an
//!   upstream process of its own, declaring that client's capabilities, closed when the session
//!   ends — for stdio servers that keep per-client state;
//! - **per capability set** (asked for: `--per-capabilities`, `per_capabilities = true`), in
//!   front of a legacy upstream: a legacy server hears the client's capabilities once, at
//!   `initialize`, while each 2026-07-28 request declares its own (META-01, SEP-2575). A call
//!   is sent on a connection that declared exactly its caller's `sampling`, `elicitation` and
//!   `roots`, so the server asks only for what the caller can answer and refuses what it needs
//!   and the caller lacks (-32021), as it would directly. Not the default: a server's state
//!   (a stdio process, or an HTTP session) is then split between connections, which servers
//!   that keep state between calls do not expect.
//!
//! Extra connections are bounded ([`Policy::max`]); an idle capability connection is closed
//! after [`IDLE`] or when a new one needs its place.

use mcpcore::client::Client;
use mcpcore::RequestContext;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a capability connection is kept without calls.
pub(crate) const IDLE: Duration = Duration::from_secs(300);

/// The capabilities whose declaration changes what a server asks of its client.
const ASKING: [&str; 3] = ["elicitation", "roots", "sampling"];

/// When a bridge opens connections besides its main one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// One connection (one process, for a stdio server) per legacy client session.
    pub per_session: bool,
    /// One connection per client capability set, in front of a legacy server.
    pub per_capabilities: bool,
    /// The most connections kept besides the main one.
    pub max: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            per_session: false,
            per_capabilities: false,
            max: 16,
        }
    }
}

/// Which connection a call goes on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Main,
    /// A legacy client session (its [`mcpcore::SessionHandle::key`]).
    Session(u64),
    /// The canonical JSON of the asking capabilities.
    Caps(String),
}

/// One downstream call waiting on a connection.
pub(crate) struct Caller {
    pub id: u64,
    pub ctx: RequestContext,
    pub pending: Arc<Mutex<Pending>>,
}

/// What happened to a caller while its call was upstream.
#[derive(Default)]
pub(crate) struct Pending {
    /// Its client was asked for input it has not given yet (2026-07-28): the call must end so
    /// the engine answers `input_required`, and the retry finds the answer.
    pub asked: bool,
}

/// One connection to the upstream and the calls in flight on it.
pub(crate) struct Lane {
    pub key: Key,
    pub client: Mutex<Option<Client>>,
    pub callers: Mutex<Vec<Caller>>,
    next: AtomicU64,
    /// The capabilities it declares.
    pub caps: Value,
    /// Cancelled when the session it serves ended.
    pub ended: Option<CancellationToken>,
    /// When a capability lane last had a call (the others are never idle-closed, so they
    /// keep no clock).
    used: Option<Mutex<Instant>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the main connection declares: every request the bridge can pass on, in every mode.
pub(crate) fn main_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}, "sampling": {}})
}

/// The asking capabilities of `caps`, canonical (keys sorted at every depth).
pub(crate) fn asking(caps: &Value) -> Value {
    let mut m = Map::new();
    for k in ASKING {
        if let Some(v) = caps.get(k).filter(|v| !v.is_null()) {
            m.insert(k.to_owned(), v.clone());
        }
    }
    Value::Object(m)
}

/// `v` as JSON with sorted keys, whatever order its maps keep.
pub(crate) fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", json!(k), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

impl Lane {
    pub fn new(key: Key, caps: Value, ended: Option<CancellationToken>) -> Arc<Self> {
        Arc::new(Self {
            client: Mutex::new(None),
            callers: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            caps,
            ended,
            used: matches!(key, Key::Caps(_)).then(|| Mutex::new(Instant::now())),
            key,
        })
    }

    /// The live connection, if any.
    pub fn live(&self) -> Option<Client> {
        lock(&self.client).clone().filter(|c| !c.is_closed())
    }

    /// Record a call on this lane; returns its id and its pending slot.
    pub fn enter(&self, ctx: &RequestContext) -> (u64, Arc<Mutex<Pending>>) {
        let pending = Arc::new(Mutex::new(Pending::default()));
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.callers).push(Caller {
            id,
            ctx: ctx.clone(),
            pending: pending.clone(),
        });
        self.touch();
        (id, pending)
    }

    pub fn leave(&self, id: u64) {
        lock(&self.callers).retain(|c| c.id != id);
        self.touch();
    }

    fn touch(&self) {
        if let Some(u) = &self.used {
            *lock(u) = Instant::now();
        }
    }

    /// A capability lane with no call in flight for `idle`.
    pub fn idle_for(&self, idle: Duration) -> bool {
        self.used
            .as_ref()
            .is_some_and(|u| lock(&self.callers).is_empty() && lock(u).elapsed() >= idle)
    }

    /// Whether this lane is done with: its session ended, its connection died, or (a capability
    /// lane) it has been idle for [`IDLE`].
    pub fn spent(&self) -> bool {
        self.ended
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
            || lock(&self.client).as_ref().is_some_and(Client::is_closed)
            || self.idle_for(IDLE)
    }
}

/// The extra lanes of one upstream.
#[derive(Default)]
pub(crate) struct Lanes {
    pub open: Mutex<HashMap<Key, Arc<Lane>>>,
    /// One lane opened at a time, so two calls of a new session share one.
    pub opening: tokio::sync::Mutex<()>,
}

impl Lanes {
    pub fn get(&self, key: &Key) -> Option<Arc<Lane>> {
        lock(&self.open).get(key).cloned()
    }

    /// Take out the lanes that are done with (to be closed).
    pub fn sweep(&self) -> Vec<Arc<Lane>> {
        let mut open = lock(&self.open);
        let spent: Vec<Key> = open
            .iter()
            .filter(|(_, l)| l.spent())
            .map(|(k, _)| k.clone())
            .collect();
        spent.iter().filter_map(|k| open.remove(k)).collect()
    }

    /// Make room for one more lane under `max`: the longest-idle capability lane goes.
    /// `Err` when every lane is busy or serves a session.
    pub fn make_room(&self, max: usize) -> Result<Option<Arc<Lane>>, ()> {
        let mut open = lock(&self.open);
        if open.len() < max {
            return Ok(None);
        }
        let victim = open
            .iter()
            .filter(|(_, l)| l.idle_for(Duration::ZERO))
            .min_by_key(|(_, l)| l.used.as_ref().map(|u| *lock(u)))
            .map(|(k, _)| k.clone());
        match victim {
            Some(k) => Ok(open.remove(&k)),
            None => Err(()),
        }
    }

    pub fn remove(&self, lane: &Lane) {
        let mut open = lock(&self.open);
        if open
            .get(&lane.key)
            .is_some_and(|l| std::ptr::eq(&**l, lane))
        {
            open.remove(&lane.key);
        }
    }

    pub fn drain(&self) -> Vec<Arc<Lane>> {
        lock(&self.open).drain().map(|(_, l)| l).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_sets_compare_whatever_their_order() {
        let a = json!({"sampling": {}, "elicitation": {"url": {}, "form": {}}, "x": 1});
        let b = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}});
        assert_eq!(canonical(&asking(&a)), canonical(&asking(&b)));
        assert_ne!(
            canonical(&asking(&a)),
            canonical(&asking(&json!({"sampling": {}})))
        );
        assert_eq!(
            canonical(&json!({"b": [1, {"d": 2, "c": 3}], "a": "x"})),
            r#"{"a":"x","b":[1,{"c":3,"d":2}]}"#
        );
    }

    /// At the bound, the idle capability lane makes room; session lanes never do, so with only
    /// those the bridge refuses.
    #[test]
    fn make_room_evicts_only_idle_capability_lanes() {
        let lanes = Lanes::default();
        let session = Lane::new(Key::Session(1), json!({}), Some(CancellationToken::new()));
        lock(&lanes.open).insert(session.key.clone(), session);
        assert!(
            lanes.make_room(1).is_err(),
            "a session lane is never evicted"
        );
        assert!(matches!(lanes.make_room(2), Ok(None)), "room left");
        let caps = Lane::new(Key::Caps("{}".into()), json!({}), None);
        lock(&lanes.open).insert(caps.key.clone(), caps);
        let evicted = lanes.make_room(2).expect("the idle capability lane goes");
        assert_eq!(evicted.map(|l| l.key.clone()), Some(Key::Caps("{}".into())));
        assert_eq!(lock(&lanes.open).len(), 1);
        assert!(!Lane::new(Key::Main, json!({}), None).idle_for(Duration::ZERO));
    }
}
