//! [`SessionStore`] on Redis: one hash `{prefix}sess:{sid}` per legacy session, with a TTL equal
//! to the idle timeout and refreshed on every use, plus a sorted set `{prefix}sessions` (score:
//! last use, ms) that counts live sessions across workers for the cap (LHTTP-09). Each call is
//! one Lua script, so check-and-write steps are atomic on the server.

use std::sync::Arc;

use super::conn::RedisConn;
use crate::backplane::sessions::{
    unix_ms as now_ms, Created, RouteLimits, SessionRecord, SessionStore, StoreUnavailable,
};
use crate::future::BoxFuture;

/// `EVAL script` with `keys` and `args`, through the shared connection (bounded by its timeout;
/// a failure is logged there and marks the backplane down).
pub(crate) async fn eval<T: redis::FromRedisValue>(
    conn: &RedisConn,
    script: &str,
    keys: &[String],
    args: Vec<String>,
) -> Result<T, StoreUnavailable> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
    conn.run(&cmd).await.map_err(|_| StoreUnavailable)
}

/// Sessions on Redis.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    conn: Arc<RedisConn>,
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
    /// Sessions under the connection's key prefix.
    pub(crate) fn new(conn: Arc<RedisConn>) -> Self {
        Self { conn }
    }

    fn keys(&self, sid: &str) -> Vec<String> {
        vec![
            self.conn.key("sessions"),
            self.conn.key(&format!("sess:{sid}")),
        ]
    }
}

// KEYS[1] = index, KEYS[2] = hash; ARGV = sid
const DELETE: &str = r"
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1";

// KEYS = hashes; returns 1/0 per key
const EXISTING: &str = r"
local out = {}
for i, k in ipairs(KEYS) do out[i] = redis.call('EXISTS', k) end
return out";

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
        let keys = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut args = vec![
                now_ms().to_string(),
                ttl_ms.to_string(),
                max.to_string(),
                sid.to_string(),
            ];
            for (k, v) in rec.fields() {
                args.push(k.to_owned());
                args.push(v);
            }
            let ok: i64 = eval(&conn, CREATE, &keys, args).await?;
            Ok(if ok == 1 { Created::Yes } else { Created::Full })
        })
    }

    fn load(
        &self,
        sid: Arc<str>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<Option<SessionRecord>, StoreUnavailable>> {
        let keys = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let args = vec![now_ms().to_string(), ttl_ms.to_string(), sid.to_string()];
            let got: Option<Vec<(String, String)>> = eval(&conn, LOAD, &keys, args).await?;
            Ok(got.map(|f| SessionRecord::from_fields(f.iter().map(|(k, v)| (&**k, &**v)))))
        })
    }

    fn update(
        &self,
        sid: Arc<str>,
        changes: Vec<(&'static str, String)>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        let keys = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut args = vec![now_ms().to_string(), ttl_ms.to_string(), sid.to_string()];
            for (k, v) in changes {
                args.push(k.to_owned());
                args.push(v);
            }
            let ok: i64 = eval(&conn, UPDATE, &keys, args).await?;
            Ok(ok == 1)
        })
    }

    fn delete(&self, sid: Arc<str>) -> BoxFuture<Result<(), StoreUnavailable>> {
        let keys = self.keys(&sid);
        let conn = self.conn.clone();
        Box::pin(async move {
            let _: i64 = eval(&conn, DELETE, &keys, vec![sid.to_string()]).await?;
            Ok(())
        })
    }

    fn existing(&self, sids: Vec<Arc<str>>) -> BoxFuture<Result<Vec<bool>, StoreUnavailable>> {
        let keys: Vec<String> = sids.iter().map(|s| self.keys(s).swap_remove(1)).collect();
        let conn = self.conn.clone();
        Box::pin(async move {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let got: Vec<i64> = eval(&conn, EXISTING, &keys, Vec::new()).await?;
            Ok(got.into_iter().map(|n| n == 1).collect())
        })
    }

    fn take_routed(
        &self,
        sid: Arc<str>,
        tag: u64,
    ) -> BoxFuture<Result<Vec<String>, StoreUnavailable>> {
        Box::pin(super::route::take(self.conn.clone(), sid, tag))
    }

    fn claim(
        &self,
        sid: Arc<str>,
        what: String,
        tag: u64,
        ttl_ms: u64,
    ) -> BoxFuture<Result<(), StoreUnavailable>> {
        Box::pin(super::relay::claim(
            self.conn.clone(),
            sid,
            what,
            tag,
            ttl_ms,
        ))
    }

    fn release(
        &self,
        sid: Arc<str>,
        what: String,
        tag: u64,
    ) -> BoxFuture<Result<(), StoreUnavailable>> {
        Box::pin(super::relay::release(self.conn.clone(), sid, what, tag))
    }

    fn route_to(
        &self,
        sid: Arc<str>,
        what: String,
        from: u64,
        msg: String,
        limits: RouteLimits,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        Box::pin(super::route::route_to(
            self.conn.clone(),
            sid,
            what,
            from,
            msg,
            limits,
        ))
    }
}
