//! Single use of sealed `requestState` across every worker (MRTR-06): the nonce of each opened
//! state is claimed with `SET <prefix>rs:<nonce> 1 NX PXAT <expiry>`, so exactly one worker
//! wins and the key vanishes when the state could no longer open anyway.

use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::conn::RedisConn;
use crate::future::BoxFuture;
use crate::security::replay::{Claim, ReplayGuard};
use crate::security::sealing::NONCE_LEN;

/// The Redis [`ReplayGuard`].
pub(crate) struct RedisReplayGuard {
    conn: Arc<RedisConn>,
}

impl fmt::Debug for RedisReplayGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisReplayGuard")
            .field("conn", &self.conn)
            .finish()
    }
}

impl RedisReplayGuard {
    pub(crate) fn new(conn: Arc<RedisConn>) -> Self {
        Self { conn }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl ReplayGuard for RedisReplayGuard {
    fn claim(&self, nonce: [u8; NONCE_LEN], expires_at: SystemTime) -> BoxFuture<Claim> {
        let conn = self.conn.clone();
        Box::pin(async move {
            let at = expires_at
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0);
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0);
            if at <= now {
                return Claim::Expired;
            }
            let key = conn.key(&format!("rs:{}", hex(&nonce)));
            let cmd = redis::cmd("SET")
                .arg(&key)
                .arg(1)
                .arg("NX")
                .arg("PXAT")
                .arg(at)
                .clone();
            match conn.run::<Option<String>>(&cmd).await {
                Ok(Some(_)) => Claim::First,
                Ok(None) => Claim::Replayed,
                Err(_) => Claim::StoreUnreachable,
            }
        })
    }
}
