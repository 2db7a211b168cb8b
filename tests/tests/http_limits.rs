//! HTTP limits and safety over a real socket (REQUIREMENTS HTTP-02, HTTP-03, HTTP-13, §0.6, §0.7,
//! JR-06): body cap (413), JSON depth (400), Origin/Host (403), Accept (406), Content-Type (415),
//! methods (405), path (404), modern-only mode, and graceful shutdown.

use mcpcore::transport::http::{AllowList, HttpOptions};
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{collect, modern_headers, raw_request};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::json;

fn small() -> Limits {
    let mut l = Limits::default();
    l.max_message_bytes = 1024;
    l
}

fn echo(text: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": text}, "_meta": envelope(json!({}))}})
    .to_string()
    .into_bytes()
}

fn hdrs(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    for (k, v) in extra {
        h.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
        if !v.is_empty() {
            h.push((k, v));
        }
    }
    h
}

#[tokio::test]
async fn body_cap_413_by_content_length_and_when_chunked() {
    let f = Fixture::with(small(), HttpOptions::default()).await;
    let big = echo(&"x".repeat(2000));
    let r = raw_request(f.addr(), "POST", "/mcp", &hdrs(&[]), &big).await;
    assert_eq!(r.status, 413);
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Transfer-Encoding", "chunked")]),
        &big,
    )
    .await;
    assert_eq!(r.status, 413);
    // Under the cap, chunked is fine.
    let ok = echo("small");
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Transfer-Encoding", "chunked")]),
        &ok,
    )
    .await;
    let ex = collect(r, Era::Modern, Some("tools/call")).await;
    assert_eq!(ex.status, 200);
}

#[tokio::test]
async fn json_depth_cap_is_400() {
    let f = Fixture::start().await;
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}1{}}}}}",
        "[".repeat(70),
        "]".repeat(70)
    );
    let r = raw_request(f.addr(), "POST", "/mcp", &hdrs(&[]), deep.as_bytes()).await;
    let ex = collect(r, Era::Modern, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)));
}

#[tokio::test]
async fn http03_origin_and_host_allow_lists() {
    let f = Fixture::start().await;
    let body = echo("o");
    for (origin, want) in [
        ("http://localhost:5173", 200),
        ("http://127.0.0.1", 200),
        ("https://evil.example", 403),
        ("null", 403),
    ] {
        let r = raw_request(
            f.addr(),
            "POST",
            "/mcp",
            &hdrs(&[("Origin", origin)]),
            &body,
        )
        .await;
        assert_eq!(r.status, want, "{origin}");
    }
    // DNS rebinding: a foreign Host is refused as well.
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Host", "evil.example")]),
        &body,
    )
    .await;
    assert_eq!(r.status, 403);
    // An explicit allow-list admits that origin.
    let mut opts = HttpOptions::default();
    opts.allowed_origins = AllowList::List(vec!["https://app.example".into()]);
    let g = Fixture::with(Limits::default(), opts).await;
    let r = raw_request(
        g.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Origin", "https://app.example")]),
        &body,
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn accept_406_content_type_415_method_405_path_404() {
    let f = Fixture::start().await;
    let body = echo("a");
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Accept", "text/html")]),
        &body,
    )
    .await;
    assert_eq!(r.status, 406);
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Accept", "application/json")]),
        &body,
    )
    .await;
    assert_eq!(
        r.status, 406,
        "HTTP-02: the client must accept both JSON and SSE"
    );
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Content-Type", "text/plain")]),
        &body,
    )
    .await;
    assert_eq!(r.status, 415);
    let r = raw_request(
        f.addr(),
        "POST",
        "/mcp",
        &hdrs(&[("Content-Type", "")]),
        &body,
    )
    .await;
    assert_eq!(r.status, 415);
    let r = raw_request(f.addr(), "PUT", "/mcp", &hdrs(&[]), &body).await;
    assert_eq!(r.status, 405);
    let r = raw_request(f.addr(), "POST", "/other", &hdrs(&[]), &body).await;
    assert_eq!(r.status, 404);
    // GET without text/event-stream → 406; without a session → 400.
    let r = raw_request(
        f.addr(),
        "GET",
        "/mcp",
        &[("Accept", "application/json")],
        b"",
    )
    .await;
    assert_eq!(r.status, 406);
    let r = raw_request(
        f.addr(),
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream")],
        b"",
    )
    .await;
    assert_eq!(r.status, 400);
    // JR-06: batches are refused; one with a modern element is -32600.
    let batch = format!("[{}]", String::from_utf8_lossy(&body));
    let r = raw_request(f.addr(), "POST", "/mcp", &hdrs(&[]), batch.as_bytes()).await;
    let ex = collect(r, Era::Modern, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)));
}

#[tokio::test]
async fn http13_modern_only_mode() {
    let mut opts = HttpOptions::default();
    opts.legacy = false;
    let f = Fixture::with(Limits::default(), opts).await;
    let r = raw_request(
        f.addr(),
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream")],
        b"",
    )
    .await;
    assert_eq!(r.status, 405);
    let r = raw_request(f.addr(), "DELETE", "/mcp", &[], b"").await;
    assert_eq!(r.status, 405);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let h = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let r = raw_request(f.addr(), "POST", "/mcp", &h, init.to_string().as_bytes()).await;
    let ex = collect(r, Era::Modern, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32022)));
    assert!(ex.last()["error"]["data"]["supported"].is_array());
    // Modern traffic is unaffected.
    let ex = f.client().modern(2, "tools/list", json!({})).await;
    assert_eq!(ex.status, 200);
}

#[tokio::test]
async fn graceful_shutdown_closes_listen_with_result_and_stops_accepting() {
    let f = Fixture::start().await;
    let c = f.client();
    let mut params =
        json!({"notifications": {"toolsListChanged": true}, "_meta": envelope(json!({}))});
    params["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"name": "t", "version": "1"});
    let msg = json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": params});
    let mut r = c
        .post_raw(
            &modern_headers("subscriptions/listen", None),
            msg.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200);
    let ack = r.next_data_event().await.expect("ack");
    assert!(ack.data.contains("subscriptions/acknowledged"));
    let addr = f.addr();
    let listener = f.listener;
    let shut = tokio::spawn(listener.shutdown());
    let e = r
        .next_data_event()
        .await
        .expect("the listen result before closing");
    let v: serde_json::Value = serde_json::from_str(&e.data).expect("json");
    mcpcore_tests::http::check(Era::Modern, &v, Some("subscriptions/listen"));
    assert_eq!(v["id"], "sub-1");
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(
        v["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert!(r.next_data_event().await.is_none());
    tokio::time::timeout(mcpcore_tests::http::WAIT, shut)
        .await
        .expect("shutdown finishes")
        .expect("join");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still accepting after shutdown"
    );
}

/// Wait (bounded) until `cond` holds.
async fn until(what: &str, cond: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + mcpcore_tests::http::WAIT;
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Graceful shutdown: in-flight work that finishes within
/// `shutdown_deadline` is answered normally before the listener stops.
#[tokio::test]
async fn graceful_shutdown_lets_in_flight_work_finish_within_the_deadline() {
    use std::sync::atomic::Ordering::SeqCst;
    let mut opts = HttpOptions::default();
    opts.shutdown_deadline = std::time::Duration::from_secs(30);
    let f = Fixture::with(Limits::default(), opts).await;
    let c = f.client();
    let call = tokio::spawn(async move {
        c.modern(
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 400}}),
        )
        .await
    });
    let counters = f.counters.clone();
    until("slow started", || counters.started.load(SeqCst) == 1).await;
    let shut = tokio::spawn(f.listener.shutdown());
    let ex = tokio::time::timeout(mcpcore_tests::http::WAIT, call)
        .await
        .expect("the in-flight call is answered")
        .expect("join");
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "slept 400 ms");
    tokio::time::timeout(mcpcore_tests::http::WAIT, shut)
        .await
        .expect("shutdown finishes")
        .expect("join");
    assert_eq!(counters.completed.load(SeqCst), 1);
    assert_eq!(counters.cancelled.load(SeqCst), 0);
}

/// Graceful shutdown: in-flight work still running at `shutdown_deadline` is
/// cancelled: its request token is cancelled and its future dropped, the client gets 503 with a
/// JSON-RPC error for its request (`data.reason = "shutdown"`; or the connection closes) at the
/// deadline rather than when the 60 s handler would finish, and shutdown completes. Both eras.
#[tokio::test]
async fn graceful_shutdown_cancels_in_flight_work_past_the_deadline() {
    use std::sync::atomic::Ordering::SeqCst;
    let mut opts = HttpOptions::default();
    opts.shutdown_deadline = std::time::Duration::from_millis(100);
    let f = Fixture::with(Limits::default(), opts).await;
    let c = f.client();
    let call = tokio::spawn(async move {
        c.modern(
            1,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}}),
        )
        .await
    });
    let mut legacy = f.client();
    legacy.initialize().await;
    let legacy_call = tokio::spawn(async move {
        legacy
            .legacy(
                2,
                "tools/call",
                json!({"name": "slow", "arguments": {"ms": 60_000}}),
            )
            .await
    });
    let counters = f.counters.clone();
    until("slow started", || counters.started.load(SeqCst) == 2).await;
    tokio::time::timeout(mcpcore_tests::http::WAIT, f.listener.shutdown())
        .await
        .expect("shutdown finishes after the deadline");
    let answered = tokio::time::timeout(mcpcore_tests::http::WAIT, call)
        .await
        .expect("the in-flight call ends at the deadline, not when its handler would");
    let legacy_answered = tokio::time::timeout(mcpcore_tests::http::WAIT, legacy_call)
        .await
        .expect("the legacy call ends at the deadline too");
    // A panic in the request task means the connection closed without an answer.
    for (id, ex) in [(1, answered), (2, legacy_answered)] {
        if let Ok(ex) = ex {
            assert_eq!(ex.status, 503, "{:?}", ex.messages);
            let m = ex.last();
            assert_eq!(m["id"], id, "{m}");
            assert_eq!(m["error"]["code"], -32603, "{m}");
            assert_eq!(m["error"]["data"]["reason"], "shutdown", "{m}");
        }
    }
    assert_eq!(counters.completed.load(SeqCst), 0);
}
