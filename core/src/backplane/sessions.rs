//! The legacy session store (REQUIREMENTS LHTTP-02, LHTTP-09, LC-01): the shareable part of a
//! legacy Streamable HTTP session, so that any worker behind a load balancer serves a session
//! another worker created, without sticky routing.
//!
//! A worker keeps a local replica of each session it serves (the core `Session`, its streams and
//! in-flight work); the store holds what every replica must agree on: the negotiated version,
//! the client's info and capabilities, whether the handshake completed, the log level and the
//! resource subscriptions. The in-process default, [`LocalSessionStore`], shares nothing: the
//! HTTP session table is then the whole truth, as for a single process.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

use crate::future::BoxFuture;
use crate::protocol::LoggingLevel;

/// The shareable state of one legacy session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionRecord {
    /// The version `initialize` negotiated.
    pub protocol_version: Option<String>,
    /// `clientInfo` from `initialize`.
    pub client_info: Value,
    /// `capabilities` from `initialize`.
    pub client_capabilities: Value,
    /// The client sent `notifications/initialized` (LC-01).
    pub initialized: bool,
    /// The level `logging/setLevel` chose.
    pub log_level: Option<LoggingLevel>,
    /// Resource URIs the client subscribed to, sorted.
    pub subscriptions: Vec<String>,
    /// The binding key of the principal that created the session (AUTH-06), when protected.
    pub owner: Option<String>,
    /// When `initialize` created the session (ms since the Unix epoch).
    pub created_ms: u64,
}

impl SessionRecord {
    /// The record as named fields, each JSON-encoded: stores that keep a hash write only the
    /// fields that changed, so two workers updating different fields never undo each other.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let enc = |v: serde_json::Result<String>| v.unwrap_or_else(|_| "null".to_owned());
        vec![
            ("v", enc(serde_json::to_string(&self.protocol_version))),
            ("info", enc(serde_json::to_string(&self.client_info))),
            (
                "caps",
                enc(serde_json::to_string(&self.client_capabilities)),
            ),
            ("init", enc(serde_json::to_string(&self.initialized))),
            ("level", enc(serde_json::to_string(&self.log_level))),
            ("subs", enc(serde_json::to_string(&self.subscriptions))),
            ("owner", enc(serde_json::to_string(&self.owner))),
            ("created", self.created_ms.to_string()),
        ]
    }

    /// Rebuild a record from [`Self::fields`]; a missing or malformed field keeps its default
    /// (the store is ours, but a partly written hash must not take a worker down).
    pub fn from_fields<'a>(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        fn de<T: serde::de::DeserializeOwned + Default>(s: &str) -> T {
            serde_json::from_str(s).unwrap_or_default()
        }
        let mut r = Self::default();
        for (k, v) in fields {
            match k {
                "v" => r.protocol_version = de(v),
                "info" => r.client_info = de(v),
                "caps" => r.client_capabilities = de(v),
                "init" => r.initialized = de(v),
                "level" => r.log_level = de(v),
                "subs" => r.subscriptions = de(v),
                "owner" => r.owner = de(v),
                "created" => r.created_ms = v.parse().unwrap_or(0),
                _ => {}
            }
        }
        r
    }

    /// The fields of `self` that differ from `before`.
    pub fn changes(&self, before: &Self) -> Vec<(&'static str, String)> {
        let old = before.fields();
        self.fields()
            .into_iter()
            .zip(old)
            .filter(|(n, o)| n.1 != o.1)
            .map(|(n, _)| n)
            .collect()
    }
}

/// Milliseconds since the Unix epoch (the clock records share across workers).
pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX))
}

/// A store that cannot answer now (Redis down): the transport answers 503 + `Retry-After`,
/// never falling back to process-local state. Details are logged, never sent to peers.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the session store is unavailable")]
#[non_exhaustive]
pub struct StoreUnavailable;

/// The outcome of [`SessionStore::create`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// Stored; the session exists for every worker.
    Yes,
    /// The cap on sessions, counted across workers, is reached (503).
    Full,
}

/// Bounds on what [`SessionStore::route_to`] keeps for one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteLimits {
    /// How long an unread message is kept (the session's idle timeout).
    pub ttl_ms: u64,
    /// Most bytes of messages waiting to be read, across all replicas of the session.
    pub max_bytes: u64,
}

/// Where legacy sessions are shared between workers.
pub trait SessionStore: Send + Sync + 'static {
    /// `false` for the in-process default: the transport's own table is then the whole truth
    /// and the store is never asked.
    fn is_shared(&self) -> bool;

    /// Record a new session, unless `max` live sessions exist across all workers. It lives for
    /// `ttl_ms` past its last use.
    fn create(
        &self,
        sid: Arc<str>,
        rec: SessionRecord,
        max: usize,
        ttl_ms: u64,
    ) -> BoxFuture<Result<Created, StoreUnavailable>>;

    /// The session's record (`None`: unknown or ended), refreshing its lifetime (a use).
    fn load(
        &self,
        sid: Arc<str>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<Option<SessionRecord>, StoreUnavailable>>;

    /// Write `changes` (from [`SessionRecord::changes`]) to a session that still exists;
    /// `false` when it ended meanwhile.
    fn update(
        &self,
        sid: Arc<str>,
        changes: Vec<(&'static str, String)>,
        ttl_ms: u64,
    ) -> BoxFuture<Result<bool, StoreUnavailable>>;

    /// End the session for every worker (DELETE, or a handshake never completed).
    fn delete(&self, sid: Arc<str>) -> BoxFuture<Result<(), StoreUnavailable>>;

    /// Which of `sids` still exist: workers drop replicas (and close their streams) of
    /// sessions ended elsewhere.
    fn existing(&self, sids: Vec<Arc<str>>) -> BoxFuture<Result<Vec<bool>, StoreUnavailable>>;

    /// Take the messages routed to the replica tagged `tag` of session `sid`.
    fn take_routed(
        &self,
        sid: Arc<str>,
        tag: u64,
    ) -> BoxFuture<Result<Vec<String>, StoreUnavailable>> {
        let _ = (sid, tag);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Record that the replica tagged `tag` holds `what` of session `sid` (`"get"`: its live
    /// standalone GET stream; `"r:<id>"`: an in-flight client request; `"q:<id>"`: a
    /// server→client request waiting for the client's answer), so messages for it reach that
    /// worker ([`Self::route_to`]). A later claim replaces an earlier one.
    fn claim(
        &self,
        sid: Arc<str>,
        what: String,
        tag: u64,
        ttl_ms: u64,
    ) -> BoxFuture<Result<(), StoreUnavailable>> {
        let _ = (sid, what, tag, ttl_ms);
        Box::pin(async { Ok(()) })
    }

    /// Forget `what` of session `sid` if the replica tagged `tag` still holds it.
    fn release(
        &self,
        sid: Arc<str>,
        what: String,
        tag: u64,
    ) -> BoxFuture<Result<(), StoreUnavailable>> {
        let _ = (sid, what, tag);
        Box::pin(async { Ok(()) })
    }

    /// Route `msg` to the replica holding `what` of session `sid` (read back with
    /// [`Self::take_routed`]); a `"q:<id>"` claim is consumed by the answer routed to it.
    /// `Ok(false)`: nobody holds it, the replica tagged `from` (the sender) does, or the
    /// session's routed messages waiting to be read would exceed `limits.max_bytes` (then the
    /// message is dropped).
    fn route_to(
        &self,
        sid: Arc<str>,
        what: String,
        from: u64,
        msg: String,
        limits: RouteLimits,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        let _ = (sid, what, from, msg, limits);
        Box::pin(async { Ok(false) })
    }
}

/// The in-process default: nothing is shared (one process serves each session).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalSessionStore;

impl SessionStore for LocalSessionStore {
    fn is_shared(&self) -> bool {
        false
    }
    fn create(
        &self,
        _: Arc<str>,
        _: SessionRecord,
        _: usize,
        _: u64,
    ) -> BoxFuture<Result<Created, StoreUnavailable>> {
        Box::pin(async { Ok(Created::Yes) })
    }
    fn load(
        &self,
        _: Arc<str>,
        _: u64,
    ) -> BoxFuture<Result<Option<SessionRecord>, StoreUnavailable>> {
        Box::pin(async { Ok(None) })
    }
    fn update(
        &self,
        _: Arc<str>,
        _: Vec<(&'static str, String)>,
        _: u64,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        Box::pin(async { Ok(true) })
    }
    fn delete(&self, _: Arc<str>) -> BoxFuture<Result<(), StoreUnavailable>> {
        Box::pin(async { Ok(()) })
    }
    fn existing(&self, sids: Vec<Arc<str>>) -> BoxFuture<Result<Vec<bool>, StoreUnavailable>> {
        Box::pin(async move { Ok(vec![true; sids.len()]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_changes_name_only_what_moved() {
        let a = SessionRecord {
            protocol_version: Some("2025-06-18".into()),
            client_info: serde_json::json!({"name": "c", "version": "1"}),
            client_capabilities: serde_json::json!({"sampling": {}}),
            initialized: true,
            log_level: Some(LoggingLevel::Debug),
            subscriptions: vec!["file:///a".into()],
            owner: None,
            created_ms: 42,
        };
        let f = a.fields();
        let back = SessionRecord::from_fields(f.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, a);
        let mut b = a.clone();
        b.log_level = Some(LoggingLevel::Error);
        let c = b.changes(&a);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].0, "level");
        let junk = SessionRecord::from_fields([("level", "{"), ("created", "x")]);
        assert_eq!(junk, SessionRecord::default());
    }
}
