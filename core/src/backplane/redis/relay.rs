//! Who holds what of a legacy session across workers (LHTTP-05, LHTTP-08, CAN-01): one hash
//! `{prefix}at:{sid}` per session whose fields name the worker tag holding the session's live
//! standalone GET stream (`get`), each in-flight client request (`r:<id as JSON>`) and each
//! server→client request waiting for the client's answer (`q:<id as JSON>`). A message for one
//! of them (a standalone-stream frame, a client's `notifications/cancelled`, an answer) is
//! pushed, in the same script that checks the claim, onto the holder's route list
//! `{prefix}route:{sid}:{tag}` (see [`super::route`]), which the holder's worker polls. The
//! hash lives as long as the session's record would (its TTL is refreshed on every claim), so a
//! worker that died leaves nothing behind for long.

use std::sync::Arc;

use super::conn::RedisConn;
use super::sessions::eval;
use crate::backplane::sessions::StoreUnavailable;

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
