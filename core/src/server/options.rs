//! The JSON shape of [`ServerOptions`] (see [`crate::options`]): the server's identity and
//! capability switches as flat keys, `limits` and `requestState` as nested patches, so the C
//! ABI and the bindings configure a server with the same object a Rust program can apply.
//!
//! ```
//! use mcpcore::{options::apply_json, Server};
//! let mut bad = None;
//! let server = Server::builder("demo", "1.0")
//!     .options(|o| {
//!         let patch = serde_json::json!({"title": "Demo", "pageSize": 50,
//!             "maxConcurrency": 4, "limits": {"maxInflight": 256}});
//!         bad = apply_json(o, &patch).err();
//!     })
//!     .build()?;
//! assert!(bad.is_none());
//! assert_eq!(server.limits().max_inflight, 256);
//! # Ok::<(), mcpcore::server::BuildError>(())
//! ```

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::time::Duration;

use super::builder::{CacheHints, ServerOptions};
use super::mrtr::RequestStateOptions;
use crate::backplane::{Backplane, DEFAULT_CONNECT_TIMEOUT, DEFAULT_WAIT};
use crate::limits::Limits;
use crate::options::{JsonOptions, OptionsError};
use crate::protocol::Implementation;

/// The keys, in the order the documentation lists them.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Shape {
    name: String,
    version: String,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    icons: Option<Value>,
    instructions: Option<String>,
    page_size: Option<usize>,
    logging: bool,
    tools_list_changed: bool,
    prompts_list_changed: bool,
    resources_list_changed: bool,
    resources_subscribe: bool,
    cache_ttl_ms: u64,
    cache_scope: String,
    legacy_cache_hints: bool,
    extensions: Map<String, Value>,
    /// `null` or `0`: unlimited.
    max_concurrency: Option<usize>,
    legacy_input_shim: bool,
    stamp_server_info: bool,
    limits: Limits,
    request_state: RequestStateOptions,
    /// `null`: tasks off.
    tasks: Option<super::tasks::TaskOptions>,
    /// `null`: no backplane (in-process only); else the Redis URL.
    redis: Option<String>,
    /// Key prefix of the Redis backplane.
    redis_prefix: String,
    dynamic: bool,
    /// Bound on the first connection to Redis before a transport serves (positive).
    redis_connect_timeout_ms: u64,
    /// Bound a request waits for a Redis reconnect before it is refused (0: at once).
    redis_wait_ms: u64,
    metrics: bool,
    /// Positive.
    metrics_max_series: usize,
}

impl From<&ServerOptions> for Shape {
    fn from(o: &ServerOptions) -> Self {
        let info = o.server_info.clone();
        let bounds = o
            .backplane
            .redis_bounds()
            .unwrap_or((DEFAULT_CONNECT_TIMEOUT, DEFAULT_WAIT));
        let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        Self {
            name: info.name,
            version: info.version,
            title: info.title,
            description: info.description,
            website_url: info.website_url,
            icons: info.icons,
            instructions: o.instructions.clone(),
            page_size: o.page_size,
            logging: o.logging,
            tools_list_changed: o.tools_list_changed,
            prompts_list_changed: o.prompts_list_changed,
            resources_list_changed: o.resources_list_changed,
            resources_subscribe: o.resources_subscribe,
            cache_ttl_ms: o.cache_hints.ttl_ms,
            cache_scope: o.cache_hints.scope.to_owned(),
            legacy_cache_hints: o.legacy_cache_hints,
            extensions: o.extensions.clone(),
            max_concurrency: o.max_concurrency,
            legacy_input_shim: o.legacy_input_shim,
            stamp_server_info: o.stamp_server_info,
            limits: o.limits.clone(),
            request_state: o.request_state.clone(),
            tasks: o.tasks.clone(),
            redis: o.backplane.redis_url().map(str::to_owned),
            redis_prefix: o
                .backplane
                .prefix()
                .unwrap_or(DEFAULT_REDIS_PREFIX)
                .to_owned(),
            dynamic: o.dynamic,
            redis_connect_timeout_ms: millis(bounds.0),
            redis_wait_ms: millis(bounds.1),
            metrics: o.metrics,
            metrics_max_series: o.metrics_max_series,
        }
    }
}

impl TryFrom<Shape> for ServerOptions {
    type Error = String;
    fn try_from(j: Shape) -> Result<Self, String> {
        let scope = match j.cache_scope.as_str() {
            "public" => "public",
            "private" => "private",
            other => {
                return Err(format!(
                    "cacheScope must be \"public\" or \"private\", got {other:?}"
                ))
            }
        };
        let mut server_info = Implementation::new(j.name, j.version);
        server_info.title = j.title;
        server_info.description = j.description;
        server_info.website_url = j.website_url;
        server_info.icons = j.icons;
        let mut o = ServerOptions::new("", "");
        o.server_info = server_info;
        o.instructions = j.instructions;
        o.page_size = j.page_size;
        o.logging = j.logging;
        o.tools_list_changed = j.tools_list_changed;
        o.prompts_list_changed = j.prompts_list_changed;
        o.resources_list_changed = j.resources_list_changed;
        o.resources_subscribe = j.resources_subscribe;
        o.cache_hints = CacheHints {
            ttl_ms: j.cache_ttl_ms,
            scope,
        };
        o.legacy_cache_hints = j.legacy_cache_hints;
        o.extensions = j.extensions;
        o.max_concurrency = j.max_concurrency.filter(|&n| n > 0);
        o.legacy_input_shim = j.legacy_input_shim;
        o.stamp_server_info = j.stamp_server_info;
        o.limits = j.limits;
        o.request_state = j.request_state;
        o.tasks = j.tasks;
        o.dynamic = j.dynamic;
        o.metrics = j.metrics;
        if j.metrics_max_series == 0 {
            return Err("metricsMaxSeries must be positive".into());
        }
        o.metrics_max_series = j.metrics_max_series;
        if j.redis_connect_timeout_ms == 0 {
            return Err("redisConnectTimeoutMs must be positive".into());
        }
        let bounds = (
            Duration::from_millis(j.redis_connect_timeout_ms),
            Duration::from_millis(j.redis_wait_ms),
        );
        o.backplane = backplane(j.redis.as_deref(), &j.redis_prefix, bounds)?;
        Ok(o)
    }
}

/// The default `redisPrefix` (also without the `redis` feature, so the shape is the same).
const DEFAULT_REDIS_PREFIX: &str = "mcp:";

#[cfg(feature = "redis")]
fn backplane(
    url: Option<&str>,
    prefix: &str,
    (connect_timeout, wait): (Duration, Duration),
) -> Result<Backplane, String> {
    match url {
        None => Ok(Backplane::local()),
        Some(url) => Backplane::redis(url)
            .map(|b| {
                b.with_prefix(prefix)
                    .with_connect_timeout(connect_timeout)
                    .with_wait(wait)
            })
            .map_err(|e| format!("redis: {e}")),
    }
}

#[cfg(not(feature = "redis"))]
fn backplane(
    url: Option<&str>,
    _prefix: &str,
    _bounds: (Duration, Duration),
) -> Result<Backplane, String> {
    match url {
        None => Ok(Backplane::local()),
        Some(_) => {
            Err("redis: this build of mcpcore has no Redis support (feature `redis`)".into())
        }
    }
}

impl Serialize for ServerOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Shape::from(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for ServerOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ServerOptions::try_from(Shape::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Limits out of range (a zero limit, `pageSize` 0) are reported by
/// [`super::ServerBuilder::build`], so a C caller learns of them where a Rust caller does;
/// `requestState` is checked at once.
impl JsonOptions for ServerOptions {
    fn check(&self) -> Result<(), OptionsError> {
        self.request_state.check()?;
        self.tasks.as_ref().map_or(Ok(()), JsonOptions::check)
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        self.request_state.keep_unrepresented(&from.request_state);
        // A patch that leaves `redis`/`redisPrefix` alone keeps the very backplane (a local one
        // shares its bus only with its clones; a Redis one keeps its connection).
        if self.backplane.same_config(&from.backplane) {
            self.backplane = from.backplane.clone();
        }
        if let (Some(t), Some(f)) = (self.tasks.as_mut(), from.tasks.as_ref()) {
            t.keep_unrepresented(f);
        }
    }
    const NESTED: &'static [&'static str] = &["limits", "requestState", "tasks"];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::apply_json;
    use serde_json::json;
    use std::time::Duration;

    fn defaults() -> ServerOptions {
        ServerOptions::new("n", "1")
    }

    /// Every documented key applies, nested objects are patches, and the defaults round-trip.
    #[test]
    fn every_key_applies_and_nested_objects_patch() {
        let mut o = defaults();
        let all = serde_json::to_value(&o).expect("serialize");
        apply_json(&mut o, &all).expect("the full shape applies");
        apply_json(
            &mut o,
            &json!({"title": "T", "description": "D", "websiteUrl": "https://x", "icons": [],
                "instructions": "I", "pageSize": 3, "logging": false, "toolsListChanged": false,
                "promptsListChanged": false, "resourcesListChanged": false,
                "resourcesSubscribe": false, "cacheTtlMs": 5, "cacheScope": "public",
                "legacyCacheHints": true, "extensions": {"a/b": {}}, "maxConcurrency": 2,
                "legacyInputShim": false, "stampServerInfo": false,
                "limits": {"maxInflight": 7}, "requestState": {"ttlMs": 1000}}),
        )
        .expect("applies");
        apply_json(&mut o, &json!({"limits": {"maxJsonDepth": 9}})).expect("applies");
        assert_eq!(o.server_info.title.as_deref(), Some("T"));
        assert_eq!(o.server_info.name, "n", "kept");
        assert_eq!(o.page_size, Some(3));
        assert!(!o.logging && !o.resources_subscribe && o.legacy_cache_hints);
        assert_eq!(
            o.cache_hints,
            CacheHints {
                ttl_ms: 5,
                scope: "public"
            }
        );
        assert_eq!(o.max_concurrency, Some(2));
        assert_eq!(
            o.limits.max_inflight, 7,
            "a nested patch keeps what it does not name"
        );
        assert_eq!(o.limits.max_json_depth, 9);
        assert_eq!(o.request_state.ttl, Duration::from_secs(1));
        assert!(!o.legacy_input_shim && !o.stamp_server_info);
        apply_json(&mut o, &json!({"maxConcurrency": 0})).expect("0 = unlimited");
        assert_eq!(o.max_concurrency, None);
    }

    #[test]
    fn refusals_change_nothing_and_name_the_key() {
        let mut o = defaults();
        for (bad, key, shape) in [
            (json!({"pageSiz": 3}), "pageSiz", true),
            (json!({"limits": {"maxInflite": 1}}), "maxInflite", true),
            (json!({"cacheScope": "world"}), "cacheScope", false),
            (json!({"requestState": {"ttlMs": 0}}), "ttlMs", false),
            (json!({"limits": {"maxOutboundBytes": -1}}), "-1", false),
        ] {
            let e = apply_json(&mut o, &bad).expect_err("refused");
            assert!(e.to_string().contains(key), "{e}");
            assert_eq!(matches!(e, OptionsError::Shape(_)), shape, "{e}");
        }
        assert_eq!(o.cache_hints.scope, "private");
        assert_eq!(o.limits.max_inflight, Limits::default().max_inflight);
    }

    /// Keys and a shared replay store have no JSON form: a patch keeps them.
    #[test]
    fn a_patch_keeps_the_key_ring() {
        let mut o = defaults();
        let key = crate::security::SealKey::new("k1", [7; 32]).expect("key");
        o.request_state.keys = Some(crate::security::KeyRing::new(key));
        apply_json(&mut o, &json!({"requestState": {"singleUse": false}})).expect("applies");
        assert!(o.request_state.keys.is_some());
        assert!(!o.request_state.single_use);
    }

    fn b64(byte: u8) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode([byte; 32])
    }

    /// `requestState.keys`: current key first, the rest only open; never serialized back out;
    /// refusals name the entry, never the key text.
    #[test]
    fn request_state_keys_from_json() {
        let mut o = defaults();
        let keys = json!([{"id": "k2", "key": b64(2)}, {"id": "k1", "key": b64(1)}]);
        apply_json(&mut o, &json!({"requestState": {"keys": keys}})).expect("applies");
        let ring = o.request_state.keys.clone().expect("a ring");
        assert_eq!(ring.current().id(), "k2");
        assert_eq!(ring.ids().collect::<Vec<_>>(), ["k2", "k1"]);
        let out = serde_json::to_string(&o).expect("serialize");
        assert!(!out.contains(&b64(2)) && !out.contains("\"k2\""), "{out}");
        apply_json(&mut o, &json!({"requestState": {"ttlMs": 5000}})).expect("applies");
        assert_eq!(
            o.request_state
                .keys
                .as_ref()
                .map(|r| r.current().id().to_owned()),
            Some("k2".into()),
            "a patch without keys keeps the ring"
        );
        for (bad, says) in [
            (json!([]), "at least one key"),
            (json!([{"id": "k", "key": "c2hvcnQ="}]), "keys[0]"),
            (
                json!([{"id": "a", "key": b64(1)}, {"id": "b", "key": "bm9wZQ"}]),
                "keys[1]",
            ),
            (json!([{"id": "", "key": b64(1)}]), "keys[0]"),
            (json!([{"id": "a"}]), "key"),
            (json!("k"), "invalid type"),
        ] {
            let e =
                apply_json(&mut o, &json!({"requestState": {"keys": bad}})).expect_err("refused");
            assert!(e.to_string().contains(says), "{e}");
            assert!(!e.to_string().contains("bm9wZQ"), "{e}");
        }
        assert_eq!(o.request_state.keys.map(|r| r.ids().count()), Some(2));
    }

    /// `redis` and `redisPrefix` build a Redis backplane (connected lazily); a patch that does
    /// not change them keeps the very instance; `null` goes back to the local one.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_backplane_from_json() {
        let mut o = defaults();
        assert!(!o.backplane.is_redis());
        apply_json(
            &mut o,
            &json!({"redis": "redis://127.0.0.1:1/3", "redisPrefix": "app:"}),
        )
        .expect("applies");
        assert!(o.backplane.is_redis());
        assert_eq!(o.backplane.prefix(), Some("app:"));
        assert_eq!(o.backplane.redis_url(), Some("redis://127.0.0.1:1/3"));
        let bus = o.backplane.bus();
        apply_json(&mut o, &json!({"pageSize": 2})).expect("applies");
        assert!(
            std::sync::Arc::ptr_eq(&bus, &o.backplane.bus()),
            "the instance is kept"
        );
        let e = apply_json(&mut o, &json!({"redis": "http://x"})).expect_err("refused");
        assert!(e.to_string().contains("redis"), "{e}");
        assert_eq!(o.backplane.prefix(), Some("app:"), "unchanged");
        apply_json(&mut o, &json!({"redis": null})).expect("applies");
        assert!(!o.backplane.is_redis());
    }

    /// `redisConnectTimeoutMs` and `redisWaitMs` bound the readiness wait and a request's wait
    /// for a reconnect; a zero connect timeout is refused, a zero wait means "refuse at once".
    #[cfg(feature = "redis")]
    #[test]
    fn redis_bounds_from_json() {
        let mut o = defaults();
        apply_json(&mut o, &json!({"redis": "redis://127.0.0.1:1/3"})).expect("applies");
        assert_eq!(
            o.backplane.redis_bounds(),
            Some((DEFAULT_CONNECT_TIMEOUT, DEFAULT_WAIT))
        );
        apply_json(
            &mut o,
            &json!({"redisConnectTimeoutMs": 300, "redisWaitMs": 0}),
        )
        .expect("applies");
        assert_eq!(
            o.backplane.redis_bounds(),
            Some((Duration::from_millis(300), Duration::ZERO))
        );
        let e = apply_json(&mut o, &json!({"redisConnectTimeoutMs": 0})).expect_err("refused");
        assert!(e.to_string().contains("redisConnectTimeoutMs"), "{e}");
    }

    /// A Redis-backed server that seals states needs the shared keys: building without them is
    /// refused with a message naming the option in both doors, never a key kept in Redis.
    #[cfg(feature = "redis")]
    #[test]
    fn redis_backplane_without_request_state_keys_is_refused() {
        let build = |patch: Value| {
            crate::Server::builder("n", "1")
                .options(|o| apply_json(o, &patch).expect("applies"))
                .build()
        };
        let e = build(json!({"redis": "redis://127.0.0.1:1/0"}))
            .err()
            .expect("refused");
        let msg = e.to_string();
        assert!(msg.contains("ServerBuilder::request_state_keys"), "{msg}");
        assert!(msg.contains("requestState.keys"), "{msg}");
        let keys = json!([{"id": "k1", "key": b64(7)}]);
        build(json!({"redis": "redis://127.0.0.1:1/0", "requestState": {"keys": keys}}))
            .expect("with keys it builds");
        build(json!({"redis": "redis://127.0.0.1:1/0", "requestState": {"seal": false}}))
            .expect("nothing to seal, nothing to share");
        build(json!({})).expect("a local server keeps its per-process key");
    }

    #[cfg(not(feature = "redis"))]
    #[test]
    fn redis_needs_the_feature() {
        let mut o = defaults();
        let e = apply_json(&mut o, &json!({"redis": "redis://127.0.0.1/0"})).expect_err("refused");
        assert!(e.to_string().contains("feature"), "{e}");
    }
}
