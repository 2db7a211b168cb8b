//! Typed views of client results (REQUIREMENTS CACHE-01, PAGE-01, DISC-01). Every view keeps the
//! raw result so nothing the server sent is lost.

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::protocol::Era;

/// What the connection negotiated.
#[derive(Debug, Clone)]
pub struct Negotiated {
    /// The era.
    pub era: Era,
    /// The negotiated (legacy) or adopted (modern) protocol version.
    pub protocol_version: String,
    /// The raw `InitializeResult` or `DiscoverResult`.
    pub raw: Value,
}

/// Cache hints a result carried (CACHE-01): `ttlMs` and `cacheScope` as sent. (The hints a
/// server stamps are configured with [`crate::ServerBuilder::cache_hints`].)
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultCacheHints {
    /// Freshness lifetime in milliseconds.
    pub ttl_ms: Option<i64>,
    /// `"public"` or `"private"`.
    pub cache_scope: Option<String>,
}

impl ResultCacheHints {
    pub(crate) fn of(v: &Value) -> Self {
        Self {
            ttl_ms: v.get("ttlMs").and_then(Value::as_i64),
            cache_scope: v
                .get("cacheScope")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// One page of a list result.
#[derive(Debug, Clone)]
pub struct ListPage<T> {
    /// The items of this page (items that do not parse are dropped with a warning).
    pub items: Vec<T>,
    /// The cursor of the next page; `None` at the end.
    pub next_cursor: Option<String>,
    /// Cache hints.
    pub cache: ResultCacheHints,
    /// The result's `_meta`.
    pub meta: Option<Value>,
    /// The raw result.
    pub raw: Value,
}

impl<T: DeserializeOwned> ListPage<T> {
    pub(crate) fn parse(raw: Value, key: &str) -> Self {
        let items = raw
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| match serde_json::from_value::<T>(v.clone()) {
                        Ok(t) => Some(t),
                        Err(e) => {
                            tracing::warn!(error = %e, key, "dropping an item that does not parse");
                            None
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            items,
            next_cursor: raw
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned),
            cache: ResultCacheHints::of(&raw),
            meta: raw.get("_meta").cloned(),
            raw,
        }
    }
}

/// A `prompts/get` result.
#[derive(Debug, Clone)]
pub struct PromptResult {
    /// Description.
    pub description: Option<String>,
    /// Messages (`{role, content}`).
    pub messages: Vec<Value>,
    /// The raw result.
    pub raw: Value,
}

/// A `resources/read` result.
#[derive(Debug, Clone)]
pub struct ReadResult {
    /// Text or blob contents.
    pub contents: Vec<Value>,
    /// Cache hints.
    pub cache: ResultCacheHints,
    /// The raw result.
    pub raw: Value,
}

/// A `completion/complete` result.
#[derive(Debug, Clone)]
pub struct CompleteResult {
    /// Suggested values (at most 100).
    pub values: Vec<String>,
    /// Total number of matches, when known.
    pub total: Option<u64>,
    /// More values exist.
    pub has_more: Option<bool>,
    /// The raw result.
    pub raw: Value,
}
