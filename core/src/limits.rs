//! Every limit the engine enforces, with safe defaults. Each one is configurable.

use std::time::Duration;

/// Default of [`Limits::shutdown_grace`].
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Limits applied by servers (and, where it makes sense, clients).
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): the field names in camelCase, durations
/// as `shutdownGraceMs`, `peerRequestTimeoutMs`, `stdioIdleSpinUs` and `handlerTimeoutMs`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted frame or body, in bytes (default 4 MiB).
    pub max_message_bytes: usize,
    /// Deepest accepted JSON nesting (default 64).
    pub max_json_depth: usize,
    /// Largest accepted batch (legacy 2025-03-26 only; default 100).
    pub max_batch_len: usize,
    /// Most requests in flight on one connection (default 10,000); past it → -32600.
    pub max_inflight: usize,
    /// How long in-flight requests may finish after the peer hangs up (default 2 s).
    #[serde(rename = "shutdownGraceMs", with = "crate::options::millis")]
    pub shutdown_grace: Duration,
    /// Default timeout for server→client requests (default 600 s).
    #[serde(rename = "peerRequestTimeoutMs", with = "crate::options::millis")]
    pub peer_request_timeout: Duration,
    /// Outbound queue per connection or per stream, in messages (default 1,000). On stdio a full
    /// queue stops the reading of input until the peer reads our output (backpressure); request
    /// notifications (progress, logs) that find it full are dropped.
    pub max_outbound_queue: usize,
    /// stdio: queued output, in bytes, at which reading of input pauses until the peer reads
    /// (default 8 MiB). Answers that are ready are always queued, so a stalled peer holds at
    /// most about this much plus what `max_inflight` running requests produce.
    pub max_outbound_bytes: usize,
    /// Most `input_required` rounds the legacy shim fulfils for one request (default 8).
    pub max_mrtr_rounds: usize,
    /// stdio: how long the reader keeps polling stdin (yielding to other tasks) after it runs dry,
    /// before it sleeps (default 50 µs; zero turns it off). A peer working in request/answer turns
    /// then skips a thread wake-up per message; the cost is at most this much CPU per idle period.
    /// Only after a small read (up to 1 KiB, a lone frame): after a pipelined burst the reader
    /// parks at once so the next burst accumulates.
    #[serde(rename = "stdioIdleSpinUs", with = "crate::options::micros")]
    pub stdio_idle_spin: Duration,
    /// Longest a request's handler may run (default none: tools may legitimately run long, and
    /// `max_inflight` already bounds what waits). When it fires the handler's cancellation token
    /// is cancelled, the handler gets `shutdown_grace` more to clean up, and the peer gets -32603
    /// "Request timed out" (CAN-04). JSON: `handlerTimeoutMs` (`null` or `0`: none).
    #[serde(rename = "handlerTimeoutMs", with = "crate::options::opt_millis")]
    pub handler_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_bytes: 4 * 1024 * 1024,
            max_json_depth: 64,
            max_batch_len: 100,
            max_inflight: 10_000,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            peer_request_timeout: Duration::from_secs(600),
            max_outbound_queue: 1000,
            max_outbound_bytes: 8 * 1024 * 1024,
            max_mrtr_rounds: 8,
            stdio_idle_spin: Duration::from_micros(50),
            handler_timeout: None,
        }
    }
}

/// A limit was set to a value that would disable the protection.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid limit {name}: {reason}")]
pub struct LimitError {
    /// The limit's field name.
    pub name: &'static str,
    /// Why the value is refused.
    pub reason: &'static str,
}

impl crate::options::JsonOptions for Limits {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.validate()
            .map_err(|e| crate::options::OptionsError::Range(e.to_string()))
    }
}

impl Limits {
    /// Check that no limit is zero (which would disable or break the protection it gives).
    ///
    /// # Errors
    /// The first limit that is out of range.
    pub fn validate(&self) -> Result<(), LimitError> {
        let positive = [
            ("max_message_bytes", self.max_message_bytes),
            ("max_json_depth", self.max_json_depth),
            ("max_batch_len", self.max_batch_len),
            ("max_inflight", self.max_inflight),
            ("max_outbound_queue", self.max_outbound_queue),
            ("max_outbound_bytes", self.max_outbound_bytes),
            ("max_mrtr_rounds", self.max_mrtr_rounds),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(LimitError {
                    name,
                    reason: "must be positive",
                });
            }
        }
        if self.peer_request_timeout.is_zero() {
            return Err(LimitError {
                name: "peer_request_timeout",
                reason: "must be positive",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Safe defaults: 4 MiB frames, depth 64, 600 s peer wait.
    #[test]
    fn defaults_are_safe_and_zero_is_refused() {
        let l = Limits::default();
        assert_eq!(l.max_message_bytes, 4 * 1024 * 1024);
        assert_eq!(l.max_json_depth, 64);
        assert_eq!(l.peer_request_timeout, Duration::from_secs(600));
        assert!(l.validate().is_ok());
        let z = Limits {
            max_message_bytes: 0,
            ..Limits::default()
        };
        assert_eq!(z.validate().unwrap_err().name, "max_message_bytes");
        let z = Limits {
            peer_request_timeout: Duration::ZERO,
            ..Limits::default()
        };
        assert_eq!(z.validate().unwrap_err().name, "peer_request_timeout");
    }
}
