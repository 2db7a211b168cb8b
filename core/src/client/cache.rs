//! An optional result cache honouring `ttlMs` / `cacheScope` (REQUIREMENTS CACHE-01…05, MRTR-08).
//!
//! Key = method + the result-affecting params (everything but `_meta`). Fresh while
//! `now < received + ttlMs`; a missing, zero or negative `ttlMs` is never cached. Retried MRTR
//! requests and `input_required` results are never cached. A matching `list_changed` or
//! `resources/updated` notification drops entries at once. One client is one authorization
//! context, so `private` and `public` entries are both kept (never shared across clients).

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::peer::lock;

/// Methods whose results carry cache hints (CACHE-01).
pub const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Most entries kept; the oldest is evicted past it.
const MAX_ENTRIES: usize = 1024;

#[derive(Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<(String, String), (Instant, Value)>>,
}

fn key_params(params: &Map<String, Value>) -> Option<String> {
    if params.contains_key("inputResponses") || params.contains_key("requestState") {
        return None;
    }
    let mut p = params.clone();
    p.remove("_meta");
    // serde_json maps are ordered by key, so this is canonical.
    Some(Value::Object(p).to_string())
}

impl Cache {
    pub fn get(&self, method: &str, params: &Map<String, Value>) -> Option<Value> {
        if !CACHEABLE.contains(&method) {
            return None;
        }
        let k = (method.to_owned(), key_params(params)?);
        let mut map = lock(&self.entries);
        match map.get(&k) {
            Some((exp, v)) if Instant::now() < *exp => Some(v.clone()),
            Some(_) => {
                map.remove(&k);
                None
            }
            None => None,
        }
    }

    pub fn put(&self, method: &str, params: &Map<String, Value>, result: &Value) {
        if !CACHEABLE.contains(&method) {
            return;
        }
        let Some(kp) = key_params(params) else { return };
        let key = (method.to_owned(), kp);
        let ttl = result
            .get("ttlMs")
            .and_then(Value::as_i64)
            .and_then(|t| u64::try_from(t).ok())
            .filter(|t| *t > 0);
        let complete = result.get("resultType").and_then(Value::as_str) != Some("input_required");
        let expiry = ttl
            .filter(|_| complete)
            .and_then(|t| Instant::now().checked_add(Duration::from_millis(t)));
        let mut map = lock(&self.entries);
        // A newer answer that may not be cached replaces whatever was kept for the same key.
        let Some(exp) = expiry else {
            map.remove(&key);
            return;
        };
        if map.len() >= MAX_ENTRIES && !map.contains_key(&key) {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (e, _))| *e)
                .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        map.insert(key, (exp, result.clone()));
    }

    /// Drop entries a notification makes stale (CACHE-05).
    pub fn invalidate(&self, notification: &str, params: &Value) {
        let methods: &[&str] = match notification {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            "notifications/resources/list_changed" => {
                &["resources/list", "resources/templates/list"]
            }
            "notifications/resources/updated" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                lock(&self.entries).retain(|(m, p), _| {
                    if m != "resources/read" {
                        return true;
                    }
                    let cached = serde_json::from_str::<Value>(p)
                        .ok()
                        .and_then(|v| v.get("uri").and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_default();
                    // The updated URI may be a sub-resource of the read one (SUB-04).
                    !(cached == uri || uri.starts_with(&cached))
                });
                return;
            }
            _ => return,
        };
        lock(&self.entries).retain(|(m, _), _| !methods.contains(&m.as_str()));
    }

    pub fn clear(&self) {
        lock(&self.entries).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn cache02_ttl_and_keys() {
        let c = Cache::default();
        let r = json!({"tools": [], "ttlMs": 60000, "cacheScope": "private"});
        c.put("tools/list", &m(json!({"_meta": {"a": 1}})), &r);
        assert_eq!(c.get("tools/list", &m(json!({}))), Some(r.clone()));
        assert!(c.get("tools/list", &m(json!({"cursor": "x"}))).is_none());
        c.put(
            "tools/list",
            &m(json!({})),
            &json!({"tools": [], "ttlMs": 0}),
        );
        assert!(c.get("tools/list", &m(json!({}))).is_none());
        c.put("tools/list", &m(json!({})), &json!({"tools": []}));
        assert!(c.get("tools/list", &m(json!({}))).is_none());
        c.put("tools/call", &m(json!({})), &r);
        assert!(c.get("tools/call", &m(json!({}))).is_none());
    }

    #[test]
    fn cache05_invalidation() {
        let c = Cache::default();
        let r = json!({"ttlMs": 60000});
        c.put("tools/list", &m(json!({})), &r);
        c.put("resources/read", &m(json!({"uri": "a://x"})), &r);
        c.put("resources/read", &m(json!({"uri": "a://y"})), &r);
        c.invalidate("notifications/tools/list_changed", &json!({}));
        assert!(c.get("tools/list", &m(json!({}))).is_none());
        c.invalidate("notifications/resources/updated", &json!({"uri": "a://x"}));
        assert!(c
            .get("resources/read", &m(json!({"uri": "a://x"})))
            .is_none());
        assert!(c
            .get("resources/read", &m(json!({"uri": "a://y"})))
            .is_some());
    }

    #[test]
    fn mrtr08_retries_not_cached() {
        let c = Cache::default();
        let p = m(json!({"uri": "a://x", "requestState": "s"}));
        c.put("resources/read", &p, &json!({"ttlMs": 60000}));
        assert!(c.get("resources/read", &p).is_none());
    }
}
