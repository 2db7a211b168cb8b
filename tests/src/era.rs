//! Helpers for 2026-07-28 wire tests: enveloped requests and driving server→client requests.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::stdio::{envelope, StdioPeer};

static NEXT: AtomicU64 = AtomicU64::new(1);

/// Spawn the `era-server` fixture (`src/bin/era-server.rs`) with `args`, checked as modern.
pub fn era_server(args: &[&str]) -> StdioPeer {
    let exe = crate::profile_dir().join(format!("era-server{}", std::env::consts::EXE_SUFFIX));
    let mut p = StdioPeer::spawn(&exe, args);
    p.era = crate::Era::Modern;
    p
}

/// The first content block's text of a tool result (panics naming the message otherwise).
pub fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

/// `params` with a modern `_meta` envelope (declaring `caps`) merged in.
pub fn with_envelope(mut params: Value, caps: Value) -> Value {
    let env = envelope(caps);
    if !params.is_object() {
        params = json!({});
    }
    let meta = params
        .as_object_mut()
        .expect("object")
        .entry("_meta")
        .or_insert_with(|| json!({}));
    if let (Some(m), Some(e)) = (meta.as_object_mut(), env.as_object()) {
        for (k, v) in e {
            m.insert(k.clone(), v.clone());
        }
    }
    params
}

impl StdioPeer {
    /// Send a request with a fresh string id; return its response and every message before it.
    pub async fn call(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = json!(format!("era-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(&id).await
    }

    /// A modern request declaring `caps`; returns only the response.
    pub async fn modern(&mut self, method: &str, params: Value, caps: Value) -> Value {
        self.call(method, with_envelope(params, caps)).await.0
    }

    /// Send a request and answer every server→client request with `answer(method, params)`
    /// (`Ok` = result, `Err` = error object). Returns the final response and the requests seen.
    pub async fn call_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&str, &Value) -> Result<Value, Value>,
    ) -> (Value, Vec<Value>) {
        let id = json!(format!("era-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut legs = Vec::new();
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return (m, legs);
            }
            if let (Some(leg_id), Some(leg)) =
                (m.get("id"), m.get("method").and_then(Value::as_str))
            {
                let params = m.get("params").cloned().unwrap_or(Value::Null);
                let reply = match answer(leg, &params) {
                    Ok(r) => json!({"jsonrpc": "2.0", "id": leg_id, "result": r}),
                    Err(e) => json!({"jsonrpc": "2.0", "id": leg_id, "error": e}),
                };
                self.send(&reply).await;
                legs.push(m);
            }
        }
    }
}
