//! [`SessionStore`] on Redis: one hash `{prefix}sess:{sid}` per legacy session, with a TTL equal
//! to the idle timeout and refreshed on every use, plus a sorted set `{prefix}sessions` (score:
//! last use, ms) that counts live sessions across workers for the cap (LHTTP-09). Each call is
//! one Lua script, so check-and-write steps are atomic on the server.

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::backplane::sessions::{Created, SessionRecord, SessionStore, StoreUnavailable};
use crate::future::BoxFuture;

/// A lazily connected, self-reconnecting Redis connection shared by the legacy stores.
/// Commands fail fast while Redis is unreachable (the transport answers 503), and the manager
/// reconnects with backoff in the background.
#[derive(Clone)]
pub struct RedisConn {
    client: redis::Client,
    cm: Arc<OnceLock<ConnectionManager>>,
}

impl std::fmt::Debug for RedisConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConn").finish_non_exhaustive()
    }
}

impl RedisConn {
    /// Validate `url` (`redis://host:port/db`); nothing connects until the first command.
    ///
    /// # Errors
    /// A malformed URL.
    pub fn open(url: &str) -> Result<Self, redis::RedisError> {
        Ok(Self {
            client: redis::Client::open(url)?,
            cm: Arc::new(OnceLock::new()),
        })
    }

    /// The connection (created on first use, on the caller's tokio runtime).
    pub(crate) fn get(&self) -> Result<ConnectionManager, StoreUnavailable> {
        if let Some(c) = self.cm.get() {
            return Ok(c.clone());
        }
        let cfg = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_secs(2));
        match ConnectionManager::new_lazy_with_config(self.client.clone(), cfg) {
            Ok(c) => Ok(self.cm.get_or_init(|| c).clone()),
            Err(e) => Err(down(&e)),
        }
    }
}

/// Log a Redis failure (never sent to peers) and map it to [`StoreUnavailable`].
pub(crate) fn down(e: &redis::RedisError) -> StoreUnavailable {
    tracing::warn!(error = %e, "redis backplane unavailable");
    StoreUnavailable
}

use crate::backplane::sessions::unix_ms as now_ms;

/// Sessions on Redis.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    conn: RedisConn,
    prefix: Arc<str>,
}

// KEYS[1] = index, KEYS[2] = hash; ARGV = now, ttl, max, sid, field, value, ...
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1";

// KEYS[1] = index, KEYS[2] = hash; ARGV = now, ttl, sid
const LOAD: &str = r"
if redis.call('PEXPIRE', KEYS[2], ARGV[2]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[3])
  return false
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
return redis.call('HGETALL', KEYS[2])";

// KEYS[1] = index, KEYS[2] = hash; ARGV = now, ttl, sid, field, value, ...
const UPDATE: &str = r"
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
if #ARGV > 3 then redis.call('HSET', KEYS[2], unpack(ARGV, 4)) end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
return 1";

impl RedisSessionStore {
    /// Sessions under `prefix` (e.g. `mcp:`) on `conn`.
    pub fn new(conn: RedisConn, prefix: &str) -> Self {
        Self {
            conn,
            prefix: Arc::from(prefix),
        }
    }

    fn keys(&self, sid: &str) -> (String, String) {
        (
            format!("{}sessions", self.prefix),
            format!("{}sess:{sid}", self.prefix),
        )
    }
}

impl SessionStore for RedisSessionStore {
    fn is_shared(&self) -> bool {
        true
    }

    fn create(
        &self,
        sid: Arc<str>,
        rec: SessionRecord,
        max: usize,
        ttl_ms: u64,
    ) -> BoxFuture<Result<Created, StoreUnavailable>> {
        let (idx, key) = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut c = conn.get()?;
            let script = redis::Script::new(CREATE);
            let mut inv = script.key(idx);
            inv.key(key).arg(now_ms()).arg(ttl_ms).arg(max).arg(&*sid);
            for (k, v) in rec.fields() {
                inv.arg(k).arg(v);
            }
            let ok: i64 = inv.invoke_async(&mut c).await.map_err(|e| down(&e))?;
            Ok(if ok == 1 { Created::Yes } else { Created::Full })
        })
    }

    fn load(
        &self,
        sid: Arc<str>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<Option<SessionRecord>, StoreUnavailable>> {
        let (idx, key) = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut c = conn.get()?;
            let got: Option<Vec<(String, String)>> = redis::Script::new(LOAD)
                .key(idx)
                .key(key)
                .arg(now_ms())
                .arg(ttl_ms)
                .arg(&*sid)
                .invoke_async(&mut c)
                .await
                .map_err(|e| down(&e))?;
            Ok(got.map(|f| SessionRecord::from_fields(f.iter().map(|(k, v)| (&**k, &**v)))))
        })
    }

    fn update(
        &self,
        sid: Arc<str>,
        changes: Vec<(&'static str, String)>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        let (idx, key) = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut c = conn.get()?;
            let script = redis::Script::new(UPDATE);
            let mut inv = script.key(idx);
            inv.key(key).arg(now_ms()).arg(ttl_ms).arg(&*sid);
            for (k, v) in changes {
                inv.arg(k).arg(v);
            }
            let ok: i64 = inv.invoke_async(&mut c).await.map_err(|e| down(&e))?;
            Ok(ok == 1)
        })
    }

    fn delete(&self, sid: Arc<str>) -> BoxFuture<Result<(), StoreUnavailable>> {
        let (idx, key) = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut c = conn.get()?;
            redis::pipe()
                .atomic()
                .del(key)
                .ignore()
                .zrem(idx, &*sid)
                .ignore()
                .query_async::<()>(&mut c)
                .await
                .map_err(|e| down(&e))
        })
    }

    fn existing(&self, sids: Vec<Arc<str>>) -> BoxFuture<Result<Vec<bool>, StoreUnavailable>> {
        let keys: Vec<String> = sids.iter().map(|s| self.keys(s).1).collect();
        let conn = self.conn.clone();
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let mut c = conn.get()?;
            let mut p = redis::pipe();
            for k in &keys {
                p.exists(k);
            }
            p.query_async::<Vec<bool>>(&mut c)
                .await
                .map_err(|e| down(&e))
        })
    }
}
