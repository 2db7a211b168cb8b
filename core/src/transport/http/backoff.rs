//! The accept loop's bounded backoff for failing `accept` calls, and the rate limit on its
//! warnings (a peer-triggered condition must not flood the log).

use std::io;
use std::time::Duration;
use tokio::time::Instant;

/// Lets the first occurrence through, then one per interval with the count of those suppressed
/// in between (a peer-triggered condition must not flood the log).
pub(super) struct LogGate {
    interval: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl LogGate {
    pub(super) fn new(interval: Duration) -> Self {
        Self {
            interval,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(suppressed since the last one)` when this occurrence may be logged.
    pub(super) fn allow(&mut self, now: Instant) -> Option<u64> {
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) < self.interval)
        {
            self.suppressed = self.suppressed.saturating_add(1);
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

pub(super) const BACKOFF_MIN: Duration = Duration::from_millis(10);
pub(super) const BACKOFF_MAX: Duration = Duration::from_secs(1);
pub(super) const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// A bounded exponential backoff for failing `accept` calls (EMFILE, ENFILE, ENOBUFS …): the
/// loop must neither spin on an error that persists nor stop serving.
pub(super) struct AcceptBackoff {
    delay: Duration,
    gate: LogGate,
}

impl AcceptBackoff {
    pub(super) fn new() -> Self {
        Self {
            delay: Duration::ZERO,
            gate: LogGate::new(LOG_INTERVAL),
        }
    }

    pub(super) fn succeeded(&mut self) {
        self.delay = Duration::ZERO;
    }

    /// How long to wait before the next accept; `None` for an error that belonged to one peer
    /// (the connection was gone before it was accepted), after which accepting goes on at once.
    pub(super) fn failed(&mut self, e: &io::Error, now: Instant) -> Option<Duration> {
        use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset, Interrupted};
        if matches!(
            e.kind(),
            ConnectionAborted | ConnectionRefused | ConnectionReset | Interrupted
        ) {
            tracing::debug!(error = %e, "a connection failed before it was accepted");
            return None;
        }
        self.delay = (self.delay * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        if let Some(suppressed) = self.gate.allow(now) {
            tracing::warn!(error = %e, suppressed, retry_ms = self.delay.as_millis() as u64,
                "accept failed; backing off");
        }
        Some(self.delay)
    }
}
