//! The Lua scripts of [`super::RedisTaskStore`]. Each runs atomically on the Redis server, so
//! the cap (`max_tasks`) and the optimistic version check (TASK-M02: a task is durably created
//! before its id is returned; every write is a compare-and-set) hold across every worker.
//!
//! Key layout (all under the store's prefix `P`):
//! - `Ptasks:{id}`: the record, a hash `v` (version) + `j` (JSON); its Redis TTL is the task's;
//! - `Ptasks.all`: sorted set of live ids scored by expiry (ms since the epoch, `+inf` for none),
//!   the count behind the cap and the reaping order;
//! - `Ptasks.where`: hash id -> `listkey \n member`, so reaping can find an expired id's list
//!   entry after Redis has already dropped the record;
//! - `Ptasks.list:{m|l}:{-|=owner}`: per era and owner, a sorted set of `created:id` members (all
//!   scores 0, lexical order = creation order, id as tie-break) for `tasks/list` paging.
//!
//! The scripts compute record keys from the prefix, so they need a single Redis (or a Sentinel
//! primary), not Redis Cluster.

/// `reap(prefix, all, where, now, n)`: drop up to `n` ids whose expiry is at or before `now`;
/// returns how many. Shared by the create and reap scripts.
const REAP_FN: &str = r"
local function reap(prefix, all, where, now, n)
  local ids = redis.call('ZRANGEBYSCORE', all, '-inf', now, 'LIMIT', 0, n)
  for _, id in ipairs(ids) do
    local w = redis.call('HGET', where, id)
    if w then
      local sep = string.find(w, '\n', 1, true)
      if sep then
        redis.call('ZREM', string.sub(w, 1, sep - 1), string.sub(w, sep + 1))
      end
      redis.call('HDEL', where, id)
    end
    redis.call('ZREM', all, id)
    redis.call('DEL', prefix .. id)
  end
  return #ids
end
";

/// KEYS: record, all, where, list. ARGV: record prefix, now, max, id, json, expiry ('' = none),
/// list member, sweep batch, full-store batch. Returns `ok`, `conflict` or `full`.
const CREATE_BODY: &str = r"
local max = tonumber(ARGV[3])
reap(ARGV[1], KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[8]))
if redis.call('ZCARD', KEYS[2]) >= max then
  reap(ARGV[1], KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[9]))
  if redis.call('ZCARD', KEYS[2]) >= max then return 'full' end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'conflict' end
redis.call('HSET', KEYS[1], 'v', '1', 'j', ARGV[5])
local score = '+inf'
if ARGV[6] ~= '' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[6])
  score = ARGV[6]
end
redis.call('ZADD', KEYS[2], score, ARGV[4])
redis.call('ZADD', KEYS[4], 0, ARGV[7])
redis.call('HSET', KEYS[3], ARGV[4], KEYS[4] .. '\n' .. ARGV[7])
return 'ok'
";

/// KEYS: record, all. ARGV: expected version, new version, json, expiry ('' = none), id,
/// change channel. Returns `ok`, `conflict` or `notfound`; publishes the id on success.
pub(super) const UPDATE: &str = r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return 'notfound' end
if v ~= ARGV[1] then return 'conflict' end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'j', ARGV[3])
if ARGV[4] ~= '' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
else
  redis.call('PERSIST', KEYS[1])
  redis.call('ZADD', KEYS[2], '+inf', ARGV[5])
end
redis.call('PUBLISH', ARGV[6], ARGV[5])
return 'ok'
";

/// KEYS: all, where. ARGV: record prefix, now, batch. Returns how many were dropped.
const REAP_BODY: &str = r"
return reap(ARGV[1], KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[3]))
";

/// KEYS: list, all, where. ARGV: pairs (list member, id) of entries whose record is gone (Redis
/// expired it before a reap ran): `tasks/list` drops them as it meets them.
pub(super) const FORGET: &str = r"
for i = 1, #ARGV, 2 do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i + 1])
  redis.call('HDEL', KEYS[3], ARGV[i + 1])
end
return 0
";

/// The create script's source.
pub(super) fn create() -> String {
    format!("{REAP_FN}{CREATE_BODY}")
}

/// The reap script's source.
pub(super) fn reap() -> String {
    format!("{REAP_FN}{REAP_BODY}")
}
