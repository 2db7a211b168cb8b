//! The backplane: the state several server processes behind one load balancer share, so that
//! any worker can serve any request (modern era) and any legacy session (LHTTP-02) without
//! sticky routing. Each part is a trait with the in-process default used by a single process;
//! the Redis implementations (feature `redis`) share it through one Redis deployment.
//!
//! - the notification bus ([`bus`]): list changes, resource updates and task changes raised on
//!   one worker reach the `subscriptions/listen` streams and legacy sessions of every worker;
//! - single use of sealed `requestState` across workers (MRTR-06); the sealing keys themselves
//!   are configured on every worker, never kept in Redis (anyone who can read Redis could
//!   otherwise forge states), so a Redis-backed server refuses to build without them;
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

/// Default bound on the first connection to Redis a transport waits for before it serves
/// ([`Backplane::with_connect_timeout`], JSON `redisConnectTimeoutMs`).
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Default bound a request waits for a Redis reconnect before it is refused as unavailable
/// ([`Backplane::with_wait`], JSON `redisWaitMs`): long enough to ride out a Redis restart or a
/// failover, short enough that a longer outage is still answered 503 promptly.
pub const DEFAULT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

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

/// The bounds of a Redis backplane, as [`Backplane::reconfigured`] edits them.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
struct Bounds {
    connect_timeout: std::time::Duration,
    wait: std::time::Duration,
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
    /// is opened on the tokio runtime by [`Self::ready`] (which `serve_http` and `serve_stdio`
    /// await before serving) and reopened with backoff after a failure.
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

    /// Bound how long `Backplane::ready` (so `serve_http` and `serve_stdio`) waits for the first
    /// connection to Redis and the bus subscription (default [`DEFAULT_CONNECT_TIMEOUT`]; at
    /// least 1 ms). A local backplane is returned unchanged.
    #[must_use]
    pub fn with_connect_timeout(self, bound: std::time::Duration) -> Self {
        self.reconfigured(|c| c.connect_timeout = bound.max(std::time::Duration::from_millis(1)))
    }

    /// Bound how long a request that finds Redis unreachable waits for a reconnect before it is
    /// refused as temporarily unavailable (default [`DEFAULT_WAIT`]; zero: refused at once).
    /// A local backplane is returned unchanged.
    #[must_use]
    pub fn with_wait(self, bound: std::time::Duration) -> Self {
        self.reconfigured(|c| c.wait = bound)
    }

    /// The connect timeout and the wait for a reconnect (`None` for a local backplane).
    pub fn redis_bounds(&self) -> Option<(std::time::Duration, std::time::Duration)> {
        match &self.kind {
            Kind::Local(_) => None,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => Some((p.conn.connect_timeout, p.conn.wait)),
        }
    }

    /// A Redis backplane rebuilt with its bounds edited by `f` (before anything connected).
    fn reconfigured(self, f: impl FnOnce(&mut Bounds)) -> Self {
        match &self.kind {
            Kind::Local(_) => {
                let _ = f;
                self
            }
            #[cfg(feature = "redis")]
            Kind::Redis(p) => {
                let mut b = Bounds {
                    connect_timeout: p.conn.connect_timeout,
                    wait: p.conn.wait,
                };
                f(&mut b);
                let conn = p.conn.configured(&p.conn.prefix, b.connect_timeout, b.wait);
                Self {
                    kind: Kind::Redis(Arc::new(RedisParts::new(conn, p.queue))),
                }
            }
        }
    }

    /// Wait until the backplane can serve: for Redis, the shared connection answers and the bus
    /// subscription is established (so a listen stream opened next hears every later change),
    /// within the connect timeout. Transports await it before they serve, so a worker is ready
    /// when its listen call returns. Immediate for a local backplane.
    ///
    /// # Errors
    /// [`BackplaneError::Unreachable`] (naming the URL without its password) when Redis did not
    /// come up within the bound.
    #[cfg(feature = "redis")]
    pub async fn ready(&self) -> Result<(), BackplaneError> {
        let Kind::Redis(p) = &self.kind else {
            return Ok(());
        };
        let bound = p.conn.connect_timeout;
        let up = async {
            let ping = ::redis::cmd("PING");
            p.conn.run_within::<String>(&ping, bound).await.is_ok()
                && p.bus.wait_subscribed(bound).await
        };
        // One overall bound (a single connect attempt alone may take its own timeout).
        if tokio::time::timeout(bound, up).await == Ok(true) {
            return Ok(());
        }
        Err(BackplaneError::Unreachable(redis::conn::redacted(
            &p.conn.url,
        )))
    }

    /// [`Self::ready`] for the transports, whatever the features: the error's message.
    pub(crate) async fn ensure_ready(&self) -> Result<(), String> {
        #[cfg(feature = "redis")]
        return self.ready().await.map_err(|e| e.to_string());
        #[cfg(not(feature = "redis"))]
        Ok(())
    }

    /// True once the backplane can serve work that needs it, waiting up to the configured wait
    /// for a reconnect while Redis is unreachable (at once for a local backplane).
    pub(crate) async fn wait_available(&self) -> bool {
        match &self.kind {
            Kind::Local(_) => true,
            #[cfg(feature = "redis")]
            Kind::Redis(p) => p.bus.wait_subscribed(p.conn.wait).await,
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
        self.redis_url() == other.redis_url()
            && self.prefix() == other.prefix()
            && self.redis_bounds() == other.redis_bounds()
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
}

pub mod events;
pub mod sessions;
pub use events::{EventLimits, EventStore, LocalEventStore, Replayed, StreamKey};
pub use sessions::{LocalSessionStore, RouteLimits, SessionRecord, SessionStore, StoreUnavailable};
