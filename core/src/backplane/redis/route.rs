//! Messages routed between the replicas of one legacy session (LHTTP-08): a client's response
//! to a server→client request, POSTed to any worker, goes to a list
//! `{prefix}route:{sid}:{tag}` read by the worker whose tag the request id carries.

use std::sync::Arc;

use super::conn::RedisConn;
use super::sessions::eval;
use crate::backplane::sessions::StoreUnavailable;

/// Messages kept per replica while its worker has not read them (older ones are dropped).
const ROUTE_CAP: usize = 256;

// KEYS[1] = list; ARGV = msg, cap, ttl
const PUSH: &str = r"
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1";

// KEYS[1] = list
const TAKE: &str = r"
local all = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return all";

fn key(conn: &RedisConn, sid: &str, tag: u64) -> Vec<String> {
    vec![conn.key(&format!("route:{sid}:{tag}"))]
}

pub(crate) async fn route(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    tag: u64,
    msg: String,
    ttl_ms: u64,
) -> Result<(), StoreUnavailable> {
    let args = vec![msg, ROUTE_CAP.to_string(), ttl_ms.max(1).to_string()];
    let _: i64 = eval(&conn, PUSH, &key(&conn, &sid, tag), args).await?;
    Ok(())
}

pub(crate) async fn take(
    conn: Arc<RedisConn>,
    sid: Arc<str>,
    tag: u64,
) -> Result<Vec<String>, StoreUnavailable> {
    eval(&conn, TAKE, &key(&conn, &sid, tag), Vec::new()).await
}
