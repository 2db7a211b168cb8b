//! The SSE event store of legacy Streamable HTTP sessions (REQUIREMENTS LHTTP-04, LHTTP-06):
//! the events of each POST stream, so a client that lost the connection resumes with
//! `Last-Event-ID` on any worker, not only the one running the request.
//!
//! Every worker keeps its own bounded replay buffer per stream (the in-process behaviour); a
//! shared store mirrors those events. Appends never wait: they are queued, and a full queue
//! drops (and counts) rather than grows. Event ids stay unique across workers because a
//! replica numbers its streams from a random base (see the HTTP session table).

use bytes::Bytes;
use std::sync::Arc;

use super::sessions::StoreUnavailable;
use crate::future::BoxFuture;

/// One stream of one session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// The `Mcp-Session-Id`.
    pub session: Arc<str>,
    /// The stream number (the first part of its event ids).
    pub stream: u64,
}

/// How much of a stream a shared store keeps, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventLimits {
    /// Events kept per stream (the newest).
    pub cap: usize,
    /// Lifetime of a stream's events after its last write (ms).
    pub ttl_ms: u64,
}

/// What a store holds of a stream.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    /// The store knows the stream (it was opened on some worker and has not expired).
    pub known: bool,
    /// Events after the requested sequence number, in order: `(seq, SSE frame)`.
    pub events: Vec<(u64, Bytes)>,
    /// The stream is complete (its response was sent).
    pub finished: bool,
}

/// Where legacy SSE events are shared between workers.
pub trait EventStore: Send + Sync + 'static {
    /// `false` for the in-process default (each worker's replay buffers are the whole truth).
    fn is_shared(&self) -> bool;
    /// A stream was opened. `false`: dropped (queue full or store down), counted.
    fn open(&self, key: &StreamKey, limits: EventLimits) -> bool;
    /// One event (an encoded SSE frame with its id) of a stream. Never waits.
    fn append(&self, key: &StreamKey, seq: u64, event: Bytes, limits: EventLimits) -> bool;
    /// The stream is complete. Never waits.
    fn finish(&self, key: &StreamKey, limits: EventLimits) -> bool;
    /// The events after `after` (and whether the stream finished).
    fn replay(&self, key: StreamKey, after: u64) -> BoxFuture<Result<Replayed, StoreUnavailable>>;
    /// Writes dropped so far because the queue was full.
    fn dropped(&self) -> u64 {
        0
    }
}

/// The in-process default: nothing is shared.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalEventStore;

impl EventStore for LocalEventStore {
    fn is_shared(&self) -> bool {
        false
    }
    fn open(&self, _: &StreamKey, _: EventLimits) -> bool {
        true
    }
    fn append(&self, _: &StreamKey, _: u64, _: Bytes, _: EventLimits) -> bool {
        true
    }
    fn finish(&self, _: &StreamKey, _: EventLimits) -> bool {
        true
    }
    fn replay(&self, _: StreamKey, _: u64) -> BoxFuture<Result<Replayed, StoreUnavailable>> {
        Box::pin(async { Ok(Replayed::default()) })
    }
}
