//! The era lock of one stdio connection (REQUIREMENTS §0.2 Δ stdio, §0.4, DISC-01/02, VER-01,
//! LC-02; seeds: "first era-distinctive message to SUCCEED locks the era",
//! removed methods decided by the request's own envelope).

use mcpcore_tests::era::with_envelope;
use mcpcore_tests::{Era, StdioPeer};
use serde_json::{json, Value};
use std::path::Path;

fn server(args: &[&str]) -> StdioPeer {
    StdioPeer::spawn(Path::new(env!("CARGO_BIN_EXE_era-server")), args)
}

/// A removed method and a builder of plausible params for it.
type Removed = (&'static str, fn() -> Value);

const REMOVED: [Removed; 5] = [
    (
        "initialize",
        || json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    ),
    ("ping", || json!({})),
    ("logging/setLevel", || json!({"level": "info"})),
    ("resources/subscribe", || json!({"uri": "era://plain"})),
    ("resources/unsubscribe", || json!({"uri": "era://plain"})),
];

fn code(r: &Value) -> i64 {
    r["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {r}"))
}

#[tokio::test]
async fn legacy_lock_refuses_an_envelope_with_invalid_request() {
    let mut p = server(&[]);
    let r = p.initialize("2025-11-25", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = p.modern("tools/list", json!({}), json!({})).await;
    assert_eq!(code(&r), -32600, "{r}");
    let r = p.modern("server/discover", json!({}), json!({})).await;
    assert_eq!(code(&r), -32600, "{r}");
    // The legacy connection keeps working.
    let r = p.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn lc02_handshake_never_negotiates_the_modern_version() {
    let mut p = server(&[]);
    let r = p.initialize("2026-07-28", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = p.request("tools/list", json!({})).await;
    assert!(r["result"].get("resultType").is_none(), "{r}");
    let r = p.modern("tools/list", json!({}), json!({})).await;
    assert_eq!(code(&r), -32600);
}

#[tokio::test]
async fn modern_lock_via_discover_then_legacy_traffic_is_refused() {
    let mut p = server(&[]);
    p.era = Era::Modern;
    let r = p.modern("server/discover", json!({}), json!({})).await;
    assert_eq!(r["result"]["resultType"], "complete");
    // initialize without an envelope after a modern lock: the method does not exist here.
    let (r, _) = p.call("initialize", REMOVED[0].1()).await;
    assert_eq!(code(&r), -32601, "{r}");
    // Any other request without the envelope: -32602 naming the missing keys.
    for m in ["tools/list", "ping", "server/discover"] {
        let (r, _) = p.call(m, json!({})).await;
        assert_eq!(code(&r), -32602, "{m}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            msg.contains("io.modelcontextprotocol/protocolVersion"),
            "{msg}"
        );
        assert!(
            msg.contains("io.modelcontextprotocol/clientCapabilities"),
            "{msg}"
        );
    }
    // Legacy _meta without the claim key is still legacy traffic, hence refused here.
    let (r, _) = p
        .call("tools/list", json!({"_meta": {"progressToken": 1}}))
        .await;
    assert_eq!(code(&r), -32602);
    let r = p.modern("tools/list", json!({}), json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn modern_lock_via_any_enveloped_request() {
    let mut p = server(&[]);
    p.era = Era::Modern;
    let r = p.modern("tools/list", json!({}), json!({})).await;
    assert!(r["result"]["tools"].is_array());
    let (r, _) = p.call("initialize", REMOVED[0].1()).await;
    assert_eq!(code(&r), -32601);
}

#[tokio::test]
async fn disc02_failed_probes_leave_the_era_open() {
    let mut p = server(&[]);
    p.era = Era::Modern;
    // Unsupported version → -32022 with {supported, requested}.
    let mut params = with_envelope(json!({}), json!({}));
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (r, _) = p.call("server/discover", params).await;
    assert_eq!(code(&r), -32022);
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2099-01-01"})
    );
    // Incomplete envelope → -32602; no envelope at all → -32602.
    let (r, _) = p
        .call(
            "server/discover",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(code(&r), -32602);
    let (r, _) = p.call("server/discover", json!({})).await;
    assert_eq!(code(&r), -32602);
    // A failing enveloped call (unknown tool) does not lock either.
    let r = p
        .modern("tools/call", json!({"name": "nope"}), json!({}))
        .await;
    assert_eq!(code(&r), -32602);
    // The client falls back to the handshake, which succeeds.
    let r = p.initialize("2025-11-25", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = p.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn removed_methods_with_an_envelope_before_any_lock() {
    let mut p = server(&[]);
    p.era = Era::Modern;
    for (m, params) in REMOVED {
        let r = p.modern(m, params(), json!({})).await;
        assert_eq!(code(&r), -32601, "{m}: {r}");
    }
    // None of them locked the era or ran the handshake: initialize still succeeds.
    let r = p.initialize("2025-11-25", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn removed_methods_after_a_modern_lock() {
    let mut p = server(&[]);
    p.era = Era::Modern;
    p.modern("server/discover", json!({}), json!({})).await;
    for (m, params) in REMOVED {
        let r = p.modern(m, params(), json!({})).await;
        assert_eq!(code(&r), -32601, "{m}: {r}");
    }
    // Unknown methods are -32601 too.
    let r = p
        .modern(
            "unknown/method",
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        )
        .await;
    assert_eq!(code(&r), -32601, "{r}");
}
