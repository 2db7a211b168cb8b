//! The backplane: the state several server processes behind one load balancer share, so that
//! any worker can serve any request (modern era) and any legacy session (LHTTP-02) without
//! sticky routing. Each part is a trait with the in-process default used by a single process;
//! the Redis implementations (feature `redis`) share it through one Redis deployment.
//!
//! - the notification bus ([`bus`]): list changes, resource updates and task changes raised on
//!   one worker reach the `subscriptions/listen` streams and legacy sessions of every worker;
//! - single use of sealed `requestState` across workers (MRTR-06) and, when no key ring is
//!   configured, one request-state key shared through Redis;
//! - the legacy session store and the SSE event store (resumability, LHTTP-04);
//! - the task store ([`crate::tasks::TaskStore`]).
//!
//! While Redis is unreachable, work that needs it is refused as temporarily unavailable
//! ([`UNAVAILABLE_MESSAGE`]; HTTP 503 with `Retry-After`), never served from process-local
//! state.

pub mod bus;
#[cfg(feature = "redis")]
pub mod redis;

use std::fmt;
use std::sync::Arc;

pub use bus::{BusChange, BusMessage, BusReceiver, LocalBus, NotificationBus};
#[cfg(feature = "redis")]
pub use redis::conn::{BackplaneError, DEFAULT_PREFIX};

use crate::error::{codes, ErrorObject};

/// The JSON-RPC message of a request refused because the backplane is unreachable (-32603;
/// over HTTP the status is 503 with `Retry-After`). On stdio it is the only signal.
pub const UNAVAILABLE_MESSAGE: &str = "Service temporarily unavailable; retry later";

/// Default bound on changes waiting to be published while Redis is unreachable.
pub const DEFAULT_BUS_QUEUE: usize = 1024;

/// Seconds a client should wait before retrying work refused while the backplane is down.
pub const RETRY_AFTER_SECS: u64 = 1;

/// The error of a request refused because the backplane is unreachable.
pub(crate) fn unavailable() -> ErrorObject {
    ErrorObject::new(codes::INTERNAL_ERROR, UNAVAILABLE_MESSAGE)
}

/// True for the error [`unavailable`] builds (the HTTP transport answers it with 503).
pub(crate) fn is_unavailable(e: &ErrorObject) -> bool {
    e.code == codes::INTERNAL_ERROR && e.message == UNAVAILABLE_MESSAGE
}

#[derive(Clone)]
enum Kind {
    Local(Arc<LocalBus>),
    #[cfg(feature = "redis")]
    Redis(Arc<RedisParts>),
}

#[cfg(feature = "redis")]
struct RedisParts {
    conn: Arc<redis::conn::RedisConn>,
    queue: usize,
    bus: Arc<redis::bus::RedisBus>,
    replay: Arc<redis::replay::RedisReplayGuard>,
    /// One per backplane: its writer queue keeps each stream's events in order.
    events: Arc<redis::events::RedisEventStore>,
}

#[cfg(feature = "redis")]
impl RedisParts {
    fn new(conn: redis::conn::RedisConn, queue: usize) -> Self {
        let conn = Arc::new(conn);
        Self {
            queue,
            bus: Arc::new(redis::bus::RedisBus::new(conn.clone(), queue)),
            replay: Arc::new(redis::replay::RedisReplayGuard::new(conn.clone())),
            events: Arc::new(redis::events::RedisEventStore::new(conn.clone())),
            conn,
        }
    }
}

/// What the servers of one deployment share. Clone it into every server of a process that
/// should share it; build one per process from the same Redis URL and prefix to share across
/// processes.
#[derive(Clone)]
pub struct Backplane {
    kind: Kind,
}

impl Default for Backplane {
    fn default() -> Self {
        Self::local()
    }
}

impl fmt::Debug for Backplane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Local(_) => f.write_str("Backplane::Local"),
            // Never the URL: it may carry a password.
            #[cfg(feature = "redis")]
            Kind::Redis(p) => f
                .debug_struct("Backplane::Redis")
                .field("prefix", &p.conn.prefix)
                .field("bus", &p.bus)
                .finish(),
        }
    }
}

impl Backplane {
    /// In-process only (the default): what one process serves, it keeps to itself. Servers
    /// built with clones of one local backplane share its notification bus.
    pub fn local() -> Self {
        Self {
            kind: Kind::Local(Arc::new(LocalBus::new())),
        }
    }

    /// Share through the Redis at `url` (`redis://host:port/db`, `rediss://…`, `unix://…`),
    /// keys and channels under [`DEFAULT_PREFIX`]. Only the URL is checked here: the connection
    /// is opened lazily on the tokio runtime and reopened with backoff after a failure.
    ///
    /// # Errors
    /// [`BackplaneError::Url`] for a URL that is not a Redis URL.
    #[cfg(feature = "redis")]
    pub fn redis(url: &str) -> Result<Self, BackplaneError> {
        let conn = redis::conn::RedisConn::new(url, DEFAULT_PREFIX)?;
        Ok(Self {
            kind: Kind::Redis(Arc::new(RedisParts::new(conn, DEFAULT_BUS_QUEUE))),
        })
    }

    /// The same Redis under another key prefix (separate deployments on one Redis); every key
    /// and channel starts with it. A local backplane is returned unchanged.
    #[must_use]
    pub fn with_prefix(self, prefix: &str) -> Self {
        match &self.kind {
            Kind::Local(_) => {
                let _ = prefix;
                self
            }
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Self {
                kind: Kind::Redis(Arc::new(RedisParts::new(
                    p.conn.with_prefix(prefix),
                    p.queue,
                ))),
            },
        }
    }

    /// Bound the changes waiting to be published while Redis is unreachable (default
    /// [`DEFAULT_BUS_QUEUE`]; at least 1). Past it new changes are dropped, counted
    /// ([`Self::dropped_notifications`]) and logged; the queue never grows.
    #[must_use]
    pub fn with_bus_queue(self, max_queued: usize) -> Self {
        match &self.kind {
            Kind::Local(_) => {
                let _ = max_queued;
                self
            }
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Self {
                kind: Kind::Redis(Arc::new(RedisParts::new(
                    p.conn.with_prefix(&p.conn.prefix),
                    max_queued.max(1),
                ))),
            },
        }
    }

    /// True for a Redis backplane.
    pub fn is_redis(&self) -> bool {
        !matches!(self.kind, Kind::Local(_))
    }

    /// The Redis URL (`None` for a local backplane). It may carry a password: do not log it.
    pub fn redis_url(&self) -> Option<&str> {
        match &self.kind {
            Kind::Local(_) => None,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Some(&p.conn.url),
        }
    }

    /// The key prefix (`None` for a local backplane).
    pub fn prefix(&self) -> Option<&str> {
        match &self.kind {
            Kind::Local(_) => None,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Some(&p.conn.prefix),
        }
    }

    /// False while the shared store is unreachable (always true for a local backplane).
    pub fn is_available(&self) -> bool {
        match &self.kind {
            Kind::Local(_) => true,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => p.bus.is_available(),
        }
    }

    /// Changes dropped because the bus's outbound queue was full while Redis was down.
    pub fn dropped_notifications(&self) -> u64 {
        match &self.kind {
            Kind::Local(_) => 0,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => p.bus.dropped(),
        }
    }

    /// The notification bus.
    pub fn bus(&self) -> Arc<dyn NotificationBus> {
        match &self.kind {
            Kind::Local(b) => b.clone(),
            #[cfg(feature = "redis")]
            Kind::Redis(p) => p.bus.clone(),
        }
    }

    /// Same configuration (a JSON options patch that does not change it keeps the instance).
    pub(crate) fn same_config(&self, other: &Self) -> bool {
        self.redis_url() == other.redis_url() && self.prefix() == other.prefix()
    }

    /// The shared replay guard (`None` for a local backplane: the in-process cache applies).
    pub(crate) fn replay_guard(&self) -> Option<Arc<dyn crate::security::ReplayGuard>> {
        match &self.kind {
            Kind::Local(_) => None,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Some(p.replay.clone()),
        }
    }

    /// Where legacy Streamable HTTP sessions are shared ([`LocalSessionStore`] for a local
    /// backplane: nothing is shared).
    pub fn session_store(&self) -> Arc<dyn SessionStore> {
        match &self.kind {
            Kind::Local(_) => Arc::new(LocalSessionStore),
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Arc::new(redis::sessions::RedisSessionStore::new(p.conn.clone())),
        }
    }

    /// Where legacy SSE events are shared for resumption on any worker ([`LocalEventStore`]
    /// for a local backplane).
    pub fn event_store(&self) -> Arc<dyn EventStore> {
        match &self.kind {
            Kind::Local(_) => Arc::new(LocalEventStore),
            #[cfg(feature = "redis")]
            Kind::Redis(p) => p.events.clone(),
        }
    }

    /// The task store of a Redis backplane, bounded like the in-process one would be (`None`
    /// for a local backplane: the in-process store applies).
    pub(crate) fn task_store(
        &self,
        opts: &crate::server::TaskOptions,
    ) -> Result<Option<Arc<dyn crate::tasks::TaskStore>>, String> {
        match &self.kind {
            Kind::Local(_) => {
                let _ = opts;
                Ok(None)
            }
            #[cfg(feature = "redis")]
            Kind::Redis(p) => {
                let limits = redis::RedisTaskOptions {
                    max_tasks: opts.max_tasks,
                    ..redis::RedisTaskOptions::default()
                };
                redis::RedisTaskStore::from_client(&p.conn.client, &p.conn.prefix, limits)
                    .map(|s| Some(Arc::new(s) as Arc<dyn crate::tasks::TaskStore>))
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// The request-state key shared through Redis (`None` for a local backplane).
    pub(crate) fn shared_key(&self, ttl: std::time::Duration) -> Option<Arc<SharedKey>> {
        match &self.kind {
            Kind::Local(_) => {
                let _ = ttl;
                None
            }
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Some(Arc::new(redis::keys::SharedKey::new(p.conn.clone(), ttl))),
        }
    }
}

#[cfg(feature = "redis")]
pub(crate) use redis::keys::SharedKey;

/// Without Redis there is no shared key; the type exists so the server compiles alike.
#[cfg(not(feature = "redis"))]
#[derive(Debug)]
pub(crate) enum SharedKey {}

#[cfg(not(feature = "redis"))]
impl SharedKey {
    pub(crate) fn get(&self) -> Option<&crate::security::Sealer> {
        match *self {}
    }
    pub(crate) async fn resolve(&self) -> Result<&crate::security::Sealer, ()> {
        match *self {}
    }
}
pub mod events;
pub mod sessions;
pub use events::{EventLimits, EventStore, LocalEventStore, Replayed, StreamKey};
pub use sessions::{LocalSessionStore, RouteLimits, SessionRecord, SessionStore, StoreUnavailable};
