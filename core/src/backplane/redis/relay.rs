//! Who holds what of a legacy session across workers (LHTTP-05, LHTTP-08, CAN-01): one hash
//! `{prefix}at:{sid}` per session whose fields name the worker tag holding the session's live
//! standalone GET stream (`get`) and each in-flight client request (`r:<id as JSON>`). A message
//! for one of them (a standalone-stream frame, a client's `notifications/cancelled`) is pushed,
//! in the same script, onto the holder's route list `{prefix}route:{sid}:{tag}` (see
//! [`super::route`]), which the holder's worker polls. The hash lives as long as the session's
//! record would (its TTL is refreshed on every claim), so a worker that died leaves nothing
//! behind for long.

use std::sync::Arc;

use super::conn::RedisConn;
use super::sessions::eval;
use crate::backplane::sessions::StoreUnavailable;

/// Messages kept per holder while its worker has not read them (older ones are dropped).
const ROUTE_CAP: usize = 256;

// KEYS[1] = hash; ARGV = field, tag, ttl
const CLAIM: &str = r"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1";

// KEYS[1] = hash; ARGV = field, tag
const RELEASE: &str = r"
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1";

// KEYS[1] = hash; ARGV = field, from, msg, cap, ttl, route list prefix
const ROUTE_TO: &str = r"
local tag = redis.call('HGET', KEYS[1], ARGV[1])
if not tag or tag == ARGV[2] then return 0 end
local list = ARGV[6] .. tag
redis.call('RPUSH', list, ARGV[3])
redis.call('LTRIM', list, -tonumber(ARGV[4]), -1)
redis.call('PEXPIRE', list, ARGV[5])
return 1";

fn hash(conn: &RedisConn, sid: &str) -> Vec<String> {
    vec![conn.key(&format!("at:{sid}"))]
}

pub(crate) async fn claim(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    what: String,
    tag: u64,
    ttl_ms: u64,
) -> Result<(), StoreUnavailable> {
    let args = vec![what, tag.to_string(), ttl_ms.max(1).to_string()];
    let _: i64 = eval(&conn, CLAIM, &hash(&conn, &sid), args).await?;
    Ok(())
}

pub(crate) async fn release(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    what: String,
    tag: u64,
) -> Result<(), StoreUnavailable> {
    let args = vec![what, tag.to_string()];
    let _: i64 = eval(&conn, RELEASE, &hash(&conn, &sid), args).await?;
    Ok(())
}

pub(crate) async fn route_to(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    what: String,
    from: u64,
    msg: String,
    ttl_ms: u64,
) -> Result<bool, StoreUnavailable> {
    let args = vec![
        what,
        from.to_string(),
        msg,
        ROUTE_CAP.to_string(),
        ttl_ms.max(1).to_string(),
        conn.key(&format!("route:{sid}:")),
    ];
    let n: i64 = eval(&conn, ROUTE_TO, &hash(&conn, &sid), args).await?;
    Ok(n == 1)
}
