//! The shared Redis connection of a backplane: URL validation, the key prefix, one multiplexed
//! connection opened lazily on the tokio runtime and reopened after a failure, every command
//! bounded by a timeout, and the error type. Redis errors are logged here and never reach a
//! peer (they may name hosts and keys).

use redis::aio::MultiplexedConnection;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Mutex as AsyncMutex;

/// Default key prefix (every key and channel of the backplane starts with it).
pub const DEFAULT_PREFIX: &str = "mcp:";
/// Bound on connecting and on each command.
pub(crate) const OP_TIMEOUT: Duration = Duration::from_secs(2);

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
}

/// The connection shared by every part of one Redis backplane.
pub(crate) struct RedisConn {
    pub(crate) client: redis::Client,
    pub(crate) url: String,
    pub(crate) prefix: String,
    cached: AsyncMutex<Option<MultiplexedConnection>>,
    /// Last known state: false after a failure until a command succeeds again.
    up: AtomicBool,
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
        })
    }

    /// The same client under another prefix (not connected yet).
    pub(crate) fn with_prefix(&self, prefix: &str) -> Self {
        Self {
            client: self.client.clone(),
            url: self.url.clone(),
            prefix: prefix.to_owned(),
            cached: AsyncMutex::new(None),
            up: AtomicBool::new(true),
        }
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

    /// Run one command, bounded by [`OP_TIMEOUT`]; a failure drops the cached connection so
    /// the next command reconnects.
    pub(crate) async fn run<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, BackplaneError> {
        let mut c = self.connection().await?;
        match tokio::time::timeout(OP_TIMEOUT, cmd.query_async::<T>(&mut c)).await {
            Ok(Ok(v)) => {
                self.mark(true);
                Ok(v)
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "redis command failed");
                self.fail().await;
                Err(BackplaneError::Unavailable)
            }
            Err(_) => {
                tracing::warn!("redis command timed out");
                self.fail().await;
                Err(BackplaneError::Unavailable)
            }
        }
    }

    async fn fail(&self) {
        *self.cached.lock().await = None;
        self.mark(false);
    }
}
