//! The request-state key shared through Redis when no key ring is configured: the first worker
//! stores a random 32-byte key with `SET <prefix>rskey <base64> NX`, every worker then reads
//! the same one, so states sealed on one worker open on all of them. Convenient for fixtures
//! and tests; production deployments configure `requestState.keys` (and rotate them) instead.

use base64::Engine;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

use super::conn::{BackplaneError, RedisConn};
use crate::security::sealing::{KeyRing, SealKey, Sealer};

/// The key id of the shared generated key.
pub(crate) const SHARED_KEY_ID: &str = "redis-shared";

/// A sealer whose key is fetched from Redis once, on first need.
#[derive(Debug)]
pub(crate) struct SharedKey {
    conn: Arc<RedisConn>,
    ttl: Duration,
    sealer: OnceCell<Sealer>,
}

impl SharedKey {
    pub(crate) fn new(conn: Arc<RedisConn>, ttl: Duration) -> Self {
        Self {
            conn,
            ttl,
            sealer: OnceCell::new(),
        }
    }

    /// The sealer if the key was fetched already.
    pub(crate) fn get(&self) -> Option<&Sealer> {
        self.sealer.get()
    }

    /// Fetch the key (storing a fresh one if none is there yet).
    pub(crate) async fn resolve(&self) -> Result<&Sealer, BackplaneError> {
        self.sealer
            .get_or_try_init(|| async {
                let mut fresh = [0u8; 32];
                getrandom::fill(&mut fresh).map_err(|_| BackplaneError::Unavailable)?;
                let fresh = base64::engine::general_purpose::STANDARD.encode(fresh);
                let key = self.conn.key("rskey");
                let set = redis::cmd("SET")
                    .arg(&key)
                    .arg(&fresh)
                    .arg("NX")
                    .clone();
                self.conn.run::<Option<String>>(&set).await?;
                let text: Option<String> = self.conn.run(&redis::cmd("GET").arg(&key).clone()).await?;
                let text = text.ok_or(BackplaneError::Unavailable)?;
                let k = SealKey::from_base64(SHARED_KEY_ID, &text).map_err(|e| {
                    tracing::error!(error = %e, "the shared request-state key in redis is not valid");
                    BackplaneError::Unavailable
                })?;
                Ok(Sealer::new(KeyRing::new(k), self.ttl))
            })
            .await
    }
}
