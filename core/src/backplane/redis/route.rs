//! Messages routed between the replicas of one legacy session (LHTTP-05, LHTTP-08, CAN-01): a
//! message for whatever a replica claimed in `{prefix}at:{sid}` (see [`super::relay`]) is pushed
//! onto the holder's list `{prefix}route:{sid}:{tag}`, which the holder's worker polls and
//! empties. The check and the push are one script, so a message nobody claimed (an answer to a
//! request no worker sent) never reaches Redis memory. Every list is capped in messages, and
//! the bytes queued in all lists of one session together are capped too: the hash
//! `{prefix}rb:{sid}` counts them per holder tag.

use std::sync::Arc;

use super::conn::RedisConn;
use super::sessions::eval;
use crate::backplane::sessions::{RouteLimits, StoreUnavailable};

/// Messages kept per holder while its worker has not read them (older ones are dropped).
const ROUTE_CAP: usize = 256;

/// Above this size a message is shipped to Redis only after a plain `HGET` found a holder: a
/// forged answer (no claim) then costs Redis one small command, not a copy of its body.
const PRECHECK_BYTES: usize = 4096;

// KEYS[1] = claims, KEYS[2] = bytes queued per holder tag;
// ARGV = field, from, msg, cap, ttl, route list prefix, max bytes.
// 0: nobody (else) holds the field; -1: the session's byte cap is reached; 1: routed.
const ROUTE_TO: &str = r"
local tag = redis.call('HGET', KEYS[1], ARGV[1])
if not tag or tag == ARGV[2] then return 0 end
local total = 0
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do
  if redis.call('EXISTS', ARGV[6] .. held[i]) == 1 then
    total = total + tonumber(held[i + 1])
  else
    redis.call('HDEL', KEYS[2], held[i])
  end
end
if total + #ARGV[3] > tonumber(ARGV[7]) then return -1 end
if string.sub(ARGV[1], 1, 2) == 'q:' then redis.call('HDEL', KEYS[1], ARGV[1]) end
local list = ARGV[6] .. tag
local added = #ARGV[3]
redis.call('RPUSH', list, ARGV[3])
while redis.call('LLEN', list) > tonumber(ARGV[4]) do
  added = added - #redis.call('LPOP', list)
end
redis.call('HINCRBY', KEYS[2], tag, added)
redis.call('PEXPIRE', list, ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1";

// KEYS[1] = list, KEYS[2] = bytes queued per holder tag; ARGV = tag
const TAKE: &str = r"
local all = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return all";

fn bytes_key(conn: &RedisConn, sid: &str) -> String {
    conn.key(&format!("rb:{sid}"))
}

/// Push `msg` onto the list of the replica holding `what` (not `from`, the sender). An answer's
/// claim (`q:<id>`) is consumed: one answer per request is routed.
pub(crate) async fn route_to(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    what: String,
    from: u64,
    msg: String,
    limits: RouteLimits,
) -> Result<bool, StoreUnavailable> {
    let RouteLimits { ttl_ms, max_bytes } = limits;
    let keys = vec![conn.key(&format!("at:{sid}")), bytes_key(&conn, &sid)];
    if msg.len() > PRECHECK_BYTES {
        let mut hget = redis::cmd("HGET");
        hget.arg(&keys[0]).arg(&what);
        let holder: Option<String> = conn.run(&hget).await.map_err(|_| StoreUnavailable)?;
        if holder.is_none_or(|tag| tag == from.to_string()) {
            return Ok(false);
        }
    }
    let args = vec![
        what,
        from.to_string(),
        msg,
        ROUTE_CAP.to_string(),
        ttl_ms.max(1).to_string(),
        conn.key(&format!("route:{sid}:")),
        max_bytes.to_string(),
    ];
    let n: i64 = eval(&conn, ROUTE_TO, &keys, args).await?;
    if n < 0 {
        // Never the session id: it is the client's credential for the session.
        tracing::warn!(
            max_bytes,
            "a legacy session's messages routed between workers reached the byte cap \
             (HttpOptions::max_routed_bytes): message dropped"
        );
    }
    Ok(n == 1)
}

/// Take (and remove) what was routed to the replica tagged `tag`.
pub(crate) async fn take(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    tag: u64,
) -> Result<Vec<String>, StoreUnavailable> {
    let keys = vec![
        conn.key(&format!("route:{sid}:{tag}")),
        bytes_key(&conn, &sid),
    ];
    eval(&conn, TAKE, &keys, vec![tag.to_string()]).await
}
