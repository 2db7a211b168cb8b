//! The shared Redis connection of a backplane: URL validation, the key prefix, one multiplexed
//! connection opened on the tokio runtime (first by the readiness check of a transport) and
//! reopened after a failure, every command bounded by a timeout, a short bounded wait for a
//! reconnect before a command gives up, and the error type. Redis errors are logged here and
//! never reach a peer (they may name hosts and keys).

use redis::aio::MultiplexedConnection;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::backplane::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_WAIT};
use tokio::sync::Mutex as AsyncMutex;

/// Default key prefix (every key and channel of the backplane starts with it).
pub const DEFAULT_PREFIX: &str = "mcp:";
/// Bound on connecting and on each command.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(2);
/// First pause between reconnect attempts while a command waits (doubling, capped).
const RETRY_MIN: Duration = Duration::from_millis(20);
const RETRY_MAX: Duration = Duration::from_millis(250);

/// A backplane could not be configured or reached.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BackplaneError {
    /// The URL is not a Redis URL.
    #[error("invalid redis URL: {0}")]
    Url(String),
    /// Redis did not answer (down, unreachable, timed out); details are in the log.
    #[error("redis unavailable")]
    Unavailable,
    /// The first connection did not come up within the connect timeout (the URL is shown
    /// without its password).
    #[error("Redis at {0} is unreachable")]
    Unreachable(String),
}

/// `url` without what may be secret: the password of the user info and any query (a `unix://`
/// URL may carry `pass=`).
pub(crate) fn redacted(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(unparsable URL)".into();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..host_end].rfind('@') else {
        return url.to_owned();
    };
    let user = rest[..at].split(':').next().unwrap_or_default();
    let sep = if user.is_empty() { "" } else { "@" };
    format!("{scheme}://{user}{sep}{}", &rest[at + 1..])
}

/// The connection shared by every part of one Redis backplane.
pub(crate) struct RedisConn {
    pub(crate) client: redis::Client,
    pub(crate) url: String,
    pub(crate) prefix: String,
    cached: AsyncMutex<Option<MultiplexedConnection>>,
    /// Last known state: false after a failure until a command succeeds again.
    up: AtomicBool,
    /// Bound on the first connection (readiness).
    pub(crate) connect_timeout: Duration,
    /// Bound a command waits for a reconnect.
    pub(crate) wait: Duration,
}

impl fmt::Debug for RedisConn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the URL: it may carry a password.
        f.debug_struct("RedisConn")
            .field("prefix", &self.prefix)
            .field("up", &self.is_up())
            .finish()
    }
}

impl RedisConn {
    /// Validate `url` (`redis://`, `rediss://`, `unix://`); nothing is connected yet.
    pub(crate) fn new(url: &str, prefix: &str) -> Result<Self, BackplaneError> {
        let client = redis::Client::open(url).map_err(|e| {
            // The URL may hold a password: say what kind of problem, not the URL.
            BackplaneError::Url(format!("{:?}", e.kind()))
        })?;
        Ok(Self {
            client,
            url: url.to_owned(),
            prefix: prefix.to_owned(),
            cached: AsyncMutex::new(None),
            up: AtomicBool::new(true),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            wait: DEFAULT_WAIT,
        })
    }

    /// The same client under another prefix and bounds (not connected yet).
    pub(crate) fn configured(
        &self,
        prefix: &str,
        connect_timeout: Duration,
        wait: Duration,
    ) -> Self {
        Self {
            client: self.client.clone(),
            url: self.url.clone(),
            prefix: prefix.to_owned(),
            cached: AsyncMutex::new(None),
            up: AtomicBool::new(true),
            connect_timeout,
            wait,
        }
    }

    /// The same client under another prefix (not connected yet).
    pub(crate) fn with_prefix(&self, prefix: &str) -> Self {
        self.configured(prefix, self.connect_timeout, self.wait)
    }

    /// `prefix` + `suffix`.
    pub(crate) fn key(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    pub(crate) fn mark(&self, up: bool) {
        if self.up.swap(up, Ordering::Relaxed) != up {
            if up {
                tracing::info!(prefix = %self.prefix, "redis backplane reachable again");
            } else {
                tracing::warn!(prefix = %self.prefix, "redis backplane unreachable");
            }
        }
    }

    async fn connection(&self) -> Result<MultiplexedConnection, BackplaneError> {
        let mut slot = self.cached.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let cfg = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(OP_TIMEOUT))
            .set_response_timeout(Some(OP_TIMEOUT));
        match tokio::time::timeout(
            OP_TIMEOUT,
            self.client
                .get_multiplexed_async_connection_with_config(&cfg),
        )
        .await
        {
            Ok(Ok(c)) => {
                *slot = Some(c.clone());
                Ok(c)
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "redis connect failed");
                self.mark(false);
                Err(BackplaneError::Unavailable)
            }
            Err(_) => {
                tracing::debug!("redis connect timed out");
                self.mark(false);
                Err(BackplaneError::Unavailable)
            }
        }
    }

    /// Run one command, bounded by [`OP_TIMEOUT`]; while Redis cannot be reached it waits up to
    /// the configured `wait` for a reconnect before giving up, so a restart or a failover is
    /// ridden out instead of answered 503 at once.
    pub(crate) async fn run<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, BackplaneError> {
        self.run_within(cmd, self.wait).await
    }

    /// [`Self::run`] with another bound on the wait for a reconnect. Only failures to reach
    /// Redis are retried (refused or dropped connections), never a timeout (the command may
    /// have run) nor an error Redis answered. A command cut off by a dropped connection may
    /// have run before the drop: the commands of the backplane are idempotent or at-least-once
    /// (a replay claim retried after it was written is refused as a replay: fail-closed).
    pub(crate) async fn run_within<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
        bound: Duration,
    ) -> Result<T, BackplaneError> {
        let deadline = Instant::now() + bound;
        let mut pause = RETRY_MIN;
        loop {
            match self.attempt(cmd).await {
                Ok(v) => return Ok(v),
                Err(Attempt::Unreachable) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(BackplaneError::Unavailable);
                    }
                    tokio::time::sleep(pause.min(left)).await;
                    pause = (pause * 2).min(RETRY_MAX);
                }
                Err(Attempt::Failed) => return Err(BackplaneError::Unavailable),
            }
        }
    }

    /// One try; a failure drops the cached connection so the next one reconnects.
    async fn attempt<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, Attempt> {
        let mut c = self.connection().await.map_err(|_| Attempt::Unreachable)?;
        match tokio::time::timeout(OP_TIMEOUT, cmd.query_async::<T>(&mut c)).await {
            Ok(Ok(v)) => {
                self.mark(true);
                Ok(v)
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "redis command failed");
                self.fail().await;
                let unreachable = !e.is_timeout()
                    && (e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal());
                Err(if unreachable {
                    Attempt::Unreachable
                } else {
                    Attempt::Failed
                })
            }
            Err(_) => {
                tracing::warn!("redis command timed out");
                self.fail().await;
                Err(Attempt::Failed)
            }
        }
    }

    async fn fail(&self) {
        *self.cached.lock().await = None;
        self.mark(false);
    }
}

/// How one try of a command failed.
enum Attempt {
    /// Redis could not be reached: worth waiting for a reconnect.
    Unreachable,
    /// Timed out or answered with an error: give up.
    Failed,
}

#[cfg(test)]
mod tests {
    use super::redacted;

    /// The error naming an unreachable Redis never shows its password.
    #[test]
    fn redacted_urls_keep_no_password() {
        assert_eq!(
            redacted("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(redacted("redis://:s3cret@h:1/2"), "redis://h:1/2");
        assert_eq!(redacted("rediss://bob:s3cret@h:1/2"), "rediss://bob@h:1/2");
        assert_eq!(
            redacted("unix:///run/r.sock?db=1&pass=s3cret"),
            "unix:///run/r.sock"
        );
        assert_eq!(redacted("nonsense"), "(unparsable URL)");
    }
}
