//! Legacy lifecycle over real stdio pipes (REQUIREMENTS LC-01…LC-03, LC-07):
//! initialize, negotiation, duplicate initialize, requests before initialize, ping,
//! in-flight ids).

use mcpcore_tests::StdioPeer;
use serde_json::json;
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

/// LC-01: the handshake, then service.
#[tokio::test]
async fn lc01_initialize_and_tools_call() {
    let mut p = StdioPeer::demo();
    let r = p.initialize("2025-11-25", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "mcpcore-demo");
    assert!(r["result"]["capabilities"]["tools"].is_object());
    let r = p
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hi");
}

/// LC-01: the result carries capabilities derived from what is registered, serverInfo and
/// instructions; `notifications/initialized` gets no answer.
#[tokio::test]
async fn lc01_result_capabilities_derived_from_registry() {
    let mut p = StdioPeer::demo();
    let r = p.initialize("2025-11-25", json!({})).await;
    let res = &r["result"];
    let caps = &res["capabilities"];
    for cap in ["tools", "prompts", "resources", "completions", "logging"] {
        assert!(caps[cap].is_object(), "missing {cap}: {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true);
    assert!(res["instructions"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(res["serverInfo"]["version"].is_string());
    // `initialize` helper already sent notifications/initialized: nothing comes back.
    p.expect_silence(SETTLE).await;
}

/// LC-01 + seeds: missing initialize fields → -32602 naming each one.
#[tokio::test]
async fn lc01_initialize_missing_fields_named() {
    let mut p = StdioPeer::demo();
    let full = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}});
    for field in ["protocolVersion", "capabilities", "clientInfo"] {
        let mut params = full.clone();
        params.as_object_mut().expect("object").remove(field);
        let r = p.request("initialize", params).await;
        assert_eq!(r["error"]["code"], -32602, "{field}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(field), "{field} not named in {msg:?}");
    }
    let r = p.request("initialize", json!({})).await;
    let msg = r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for field in ["protocolVersion", "capabilities", "clientInfo"] {
        assert!(msg.contains(field), "{field} not named in {msg:?}");
    }
    // Wrong types count as missing too.
    let r = p
        .request(
            "initialize",
            json!({"protocolVersion": 20251125, "capabilities": [], "clientInfo": "c"}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The failed attempts did not initialize the session.
    let r = p.request("tools/list", json!({})).await;
    assert!(r.get("error").is_some(), "{r}");
    let r = p.initialize("2025-11-25", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
}

/// LC-02: every handshake version is echoed; unknown and modern versions get 2025-11-25.
#[tokio::test]
async fn lc02_version_negotiation() {
    for (asked, expected) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("not-a-version", "2025-11-25"),
    ] {
        let mut p = StdioPeer::demo();
        let r = p.initialize(asked, json!({})).await;
        assert_eq!(r["result"]["protocolVersion"], expected, "{asked}: {r}");
    }
}

/// Seeds (duplicate initialize): a second initialize → -32600; the first client info is kept.
#[tokio::test]
async fn lc01_duplicate_initialize_keeps_first_client() {
    let mut p = StdioPeer::wire(&[]);
    let r = p.initialize("2025-06-18", json!({"roots": {}})).await;
    assert!(r.get("result").is_some());
    let r = p
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}, "clientInfo": {"name": "intruder", "version": "9"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let r = p.call_tool("whoami", json!({})).await;
    let sc = &r["result"]["structuredContent"];
    assert_eq!(sc["clientInfo"]["name"], "wire-test", "{r}");
    assert_eq!(sc["capabilities"], json!({"roots": {}}));
    assert_eq!(sc["protocolVersion"], "2025-06-18");
}

/// LC-03: before initialize, only ping is served; everything else is an error, not service.
#[tokio::test]
async fn lc03_requests_before_initialize() {
    let mut p = StdioPeer::demo();
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    for (method, params) in [
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        ("prompts/list", json!({})),
        ("resources/read", json!({"uri": "demo://readme"})),
        ("logging/setLevel", json!({"level": "info"})),
    ] {
        let r = p.request(method, params).await;
        let code = r["error"]["code"].as_i64();
        assert_eq!(code, Some(-32600), "{method} served before initialize: {r}");
    }
    let r = p.initialize("2025-11-25", json!({})).await;
    assert!(r.get("result").is_some());
}

/// LC-07: ping → {} (before and after the handshake, with or without params).
#[tokio::test]
async fn lc07_ping_returns_empty_object() {
    let mut p = StdioPeer::demo();
    p.send(&json!({"jsonrpc": "2.0", "id": "p0", "method": "ping"}))
        .await;
    let (r, _) = p.response(&json!("p0")).await;
    assert_eq!(r["result"], json!({}));
    p.initialize("2025-11-25", json!({})).await;
    let r = p.request("ping", json!({"_meta": {"k": 1}})).await;
    assert_eq!(r["result"], json!({}));
}

/// In-flight ids (seeds): a duplicate id while the first is in flight → -32600; the first
/// request is untouched — its progress and response still arrive.
#[tokio::test]
async fn inflight_duplicate_id_refused_first_untouched() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let id = json!("dup");
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 1200}, "_meta": {"progressToken": "t1"}}),
    )
    .await;
    // Wait for the first progress so the first request is certainly in flight.
    p.notification("notifications/progress").await;
    p.send(&json!({"jsonrpc": "2.0", "id": "dup", "method": "ping"}))
        .await;
    let (err, _) = p.recv_until(|m| m["id"] == "dup").await;
    assert_eq!(err["error"]["code"], -32600, "{err}");
    // The first request's notifications and response still reach the client.
    p.send_request(&id, "tools/call", json!({})).await; // refused again, still untouched
    let mut progress = 0;
    let mut refused = 0;
    let ok = loop {
        let m = p.recv().await;
        if m["method"] == "notifications/progress" {
            assert_eq!(m["params"]["progressToken"], "t1");
            progress += 1;
        } else if m["id"] == "dup" && m.get("error").is_some() {
            assert_eq!(m["error"]["code"], -32600);
            refused += 1;
        } else if m["id"] == "dup" {
            break m;
        }
    };
    assert_eq!(ok["result"]["content"][0]["text"], "waited 1200 ms", "{ok}");
    assert_eq!(refused, 1);
    assert_eq!(progress, 3, "the remaining progress notifications arrive");
}

/// In-flight ids: a duplicate refused, then cancelling the id cancels the FIRST request.
#[tokio::test]
async fn inflight_duplicate_then_cancel_reaches_first() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    p.send_request(
        &json!(7),
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 60_000}, "_meta": {"progressToken": 7}}),
    )
    .await;
    p.send_request(&json!(7), "ping", json!({})).await;
    let (err, _) = p.recv_until(|m| m["id"] == 7).await;
    assert_eq!(err["error"]["code"], -32600, "{err}");
    p.notify(
        "notifications/cancelled",
        json!({"requestId": 7, "reason": "test"}),
    )
    .await;
    let (log, others) = p.notification("notifications/message").await;
    assert_eq!(log["params"]["data"], "wait cancelled");
    assert!(others.iter().all(|m| m.get("id").is_none()), "{others:?}");
    p.expect_silence(SETTLE).await;
}

/// In-flight ids: an id may be reused once its request finished.
#[tokio::test]
async fn inflight_id_reuse_after_completion() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for round in 0..3 {
        p.send_request(
            &json!(42),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": format!("r{round}")}}),
        )
        .await;
        let (r, _) = p.response(&json!(42)).await;
        assert_eq!(r["result"]["content"][0]["text"], format!("r{round}"));
    }
    p.send_request(&json!(42), "ping", json!({})).await;
    let (r, _) = p.response(&json!(42)).await;
    assert_eq!(r["result"], json!({}));
}
