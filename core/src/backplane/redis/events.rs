//! [`EventStore`] on Redis: one capped list `{prefix}ev:{sid}:{stream}` per stream, with a TTL
//! (the session idle timeout) refreshed by every write. Each entry is the sequence number
//! (8 bytes, big-endian) followed by the SSE frame; sequence 0 marks the stream's opening and
//! `u64::MAX` its end. One writer task per store applies the queued writes in order, so a
//! stream's events are stored in the order they were sent.

use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc;

use super::conn::RedisConn;
use crate::backplane::events::{EventLimits, EventStore, Replayed, StreamKey};
use crate::backplane::sessions::StoreUnavailable;
use crate::future::BoxFuture;

/// Writes queued per worker while Redis is slow or down; past it they are dropped and counted.
const QUEUE: usize = 4096;
const FINISHED: u64 = u64::MAX;

// KEYS[1] = list; ARGV = entry, cap, ttl
const APPEND: &str = r"
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1";

struct Write {
    key: String,
    entry: Vec<u8>,
    limits: EventLimits,
}

/// Legacy SSE events on Redis.
pub(crate) struct RedisEventStore {
    conn: Arc<RedisConn>,
    queue: OnceLock<mpsc::Sender<Write>>,
    dropped: Arc<AtomicU64>,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("dropped", &self.dropped.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl RedisEventStore {
    pub(crate) fn new(conn: Arc<RedisConn>) -> Self {
        Self {
            conn,
            queue: OnceLock::new(),
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    fn key(&self, k: &StreamKey) -> String {
        self.conn.key(&format!("ev:{}:{}", k.session, k.stream))
    }

    /// The writer queue, started on first use (it needs the tokio runtime).
    fn queue(&self) -> Option<&mpsc::Sender<Write>> {
        if let Some(q) = self.queue.get() {
            return Some(q);
        }
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let (tx, mut rx) = mpsc::channel::<Write>(QUEUE);
        let conn = self.conn.clone();
        let dropped = self.dropped.clone();
        rt.spawn(async move {
            while let Some(w) = rx.recv().await {
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(APPEND)
                    .arg(1)
                    .arg(&w.key)
                    .arg(w.entry)
                    .arg(w.limits.cap.max(1))
                    .arg(w.limits.ttl_ms.max(1));
                if conn.run::<i64>(&cmd).await.is_err() {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Some(self.queue.get_or_init(|| tx))
    }

    fn push(&self, key: &StreamKey, seq: u64, frame: &[u8], limits: EventLimits) -> bool {
        let mut entry = Vec::with_capacity(frame.len() + 8);
        entry.extend_from_slice(&seq.to_be_bytes());
        entry.extend_from_slice(frame);
        let w = Write {
            key: self.key(key),
            entry,
            limits,
        };
        let sent = self.queue().is_some_and(|q| q.try_send(w).is_ok());
        if !sent {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        sent
    }
}

impl EventStore for RedisEventStore {
    fn is_shared(&self) -> bool {
        true
    }
    fn open(&self, key: &StreamKey, limits: EventLimits) -> bool {
        self.push(key, 0, b"", limits)
    }
    fn append(&self, key: &StreamKey, seq: u64, event: Bytes, limits: EventLimits) -> bool {
        self.push(key, seq, &event, limits)
    }
    fn finish(&self, key: &StreamKey, limits: EventLimits) -> bool {
        self.push(key, FINISHED, b"", limits)
    }
    fn replay(&self, key: StreamKey, after: u64) -> BoxFuture<Result<Replayed, StoreUnavailable>> {
        let k = self.key(&key);
        let conn = self.conn.clone();
        Box::pin(async move {
            let mut cmd = redis::cmd("LRANGE");
            cmd.arg(k).arg(0).arg(-1);
            let raw: Vec<Vec<u8>> = conn.run(&cmd).await.map_err(|_| StoreUnavailable)?;
            let mut out = Replayed {
                known: !raw.is_empty(),
                ..Replayed::default()
            };
            for e in raw {
                let Some((head, frame)) = e.split_first_chunk::<8>() else {
                    continue;
                };
                match u64::from_be_bytes(*head) {
                    FINISHED => out.finished = true,
                    seq if seq > after => out.events.push((seq, Bytes::copy_from_slice(frame))),
                    _ => {}
                }
            }
            Ok(out)
        })
    }
    fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
