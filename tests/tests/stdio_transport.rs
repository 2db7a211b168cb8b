//! The stdio server transport over real pipes (REQUIREMENTS STDIO-01, STDIO-04, LC-06):
//! concurrency, the frame cap, a final frame without a newline, EOF grace, logs on stderr.

use mcpcore_tests::{wire_server_bin, StdioPeer};
use serde_json::{json, Value};
use std::time::Duration;

const EXIT_WAIT: Duration = Duration::from_secs(10);

/// Requests run concurrently: a slow tool never delays a ping.
#[tokio::test]
async fn stdio_slow_tool_never_delays_ping() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    p.send_request(
        &json!("slow"),
        "tools/call",
        json!({"name": "stubborn", "arguments": {"ms": 60_000}}),
    )
    .await;
    for i in 0..3 {
        let id = json!(format!("ping{i}"));
        p.send_request(&id, "ping", json!({})).await;
        let (r, others) = p.response(&id).await;
        assert_eq!(r["result"], json!({}));
        assert!(others.iter().all(|m| m["id"] != "slow"), "{others:?}");
    }
    // Other tools are served meanwhile too.
    let r = p.call_tool("echo", json!({"text": "meanwhile"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "meanwhile");
}

/// STDIO-01 + seeds: an over-limit frame is reported (-32600, id null) and the connection is
/// closed; a frame exactly at the limit is served.
#[tokio::test]
async fn stdio01_over_limit_frame_reported_and_closed() {
    let mut p = StdioPeer::wire(&["--max-message-bytes", "512"]);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let at_limit = format!("{ping}{}\n", " ".repeat(512 - ping.len()));
    p.send_raw(at_limit.as_bytes()).await;
    let m = p.recv().await;
    assert_eq!(
        m["result"],
        json!({}),
        "a 512-byte frame is within the limit: {m}"
    );

    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "x".repeat(4096)
    );
    p.send_raw(big.as_bytes()).await;
    let m = p.recv().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");
    assert_eq!(m["id"], Value::Null);
    assert!(m["error"]["message"]
        .as_str()
        .is_some_and(|s| s.contains("512")));
    // The connection is closed: stdout ends and the process exits (non-zero: an error stop).
    assert!(p.try_recv(EXIT_WAIT).await.is_none(), "stdout must close");
    let status = p.wait_exit(EXIT_WAIT).await.expect("server exits");
    assert!(!status.success());
}

/// The frame cap must be positive: a zero limit is refused at construction.
#[tokio::test]
async fn stdio01_zero_frame_limit_rejected_at_construction() {
    let mut p = StdioPeer::wire(&["--max-message-bytes", "0"]);
    let status = p.wait_exit(EXIT_WAIT).await.expect("server exits");
    assert_eq!(status.code(), Some(2), "build must fail");
    assert!(p.try_recv(Duration::from_secs(1)).await.is_none());
}

/// A final frame without a trailing newline is accepted and answered, then the server exits.
#[tokio::test]
async fn stdio01_final_frame_without_newline_answered() {
    let mut p = StdioPeer::wire(&[]);
    p.send_raw(br#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#)
        .await;
    p.close_stdin();
    let m = p.recv().await;
    assert_eq!(m["id"], "last");
    assert_eq!(m["result"], json!({}));
    let status = p.wait_exit(EXIT_WAIT).await.expect("server exits");
    assert!(status.success());
}

/// STDIO-04: on EOF the server stops reading, lets in-flight requests finish within the grace
/// period, flushes their responses and exits.
#[tokio::test]
async fn stdio04_eof_grace_lets_inflight_finish() {
    let mut p = StdioPeer::wire(&["--grace-ms", "5000"]);
    p.initialize("2025-11-25", json!({})).await;
    p.send_request(
        &json!("inflight"),
        "tools/call",
        json!({"name": "stubborn", "arguments": {"ms": 200}}),
    )
    .await;
    p.close_stdin();
    let (r, _) = p.response(&json!("inflight")).await;
    assert_eq!(r["result"]["content"][0]["text"], "stubborn 200 ms");
    let status = p.wait_exit(EXIT_WAIT).await.expect("server exits");
    assert!(status.success());
}

/// STDIO-04: past the (configurable) grace period in-flight requests are cancelled — the
/// handler sees the cancellation, no response is sent for it — and the server exits.
#[tokio::test]
async fn stdio04_eof_grace_then_cancel() {
    let mut p = StdioPeer::wire(&["--grace-ms", "100"]);
    p.initialize("2025-11-25", json!({})).await;
    p.send_request(
        &json!("long"),
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 600_000}}),
    )
    .await;
    p.request("ping", json!({})).await; // the call is certainly in flight now
    p.close_stdin();
    let (log, others) = p.notification("notifications/message").await;
    assert_eq!(log["params"]["data"], "wait cancelled");
    assert!(others.iter().all(|m| m["id"] != "long"), "{others:?}");
    assert!(
        p.try_recv(EXIT_WAIT).await.is_none(),
        "no response after cancel"
    );
    let status = p.wait_exit(EXIT_WAIT).await.expect("server exits");
    assert!(status.success());
}

/// STDIO-01: stdout carries only MCP messages (the harness rejects any non-JSON line); logs
/// and internal-failure details go to stderr.
#[tokio::test]
async fn stdio01_logs_only_on_stderr() {
    let mut p = StdioPeer::spawn_with(&wire_server_bin(), &["--verbose"], true);
    p.initialize("2025-11-25", json!({})).await;
    let r = p.call_tool("fail", json!({})).await;
    assert_eq!(r["error"]["code"], -32603);
    assert!(!r.to_string().contains("hunter2"));
    p.request("tools/list", json!({})).await;
    p.close_stdin();
    assert!(p.try_recv(EXIT_WAIT).await.is_none());
    let stderr = p.stderr_text(EXIT_WAIT).await;
    assert!(
        stderr.contains("hunter2"),
        "the internal detail is logged locally: {stderr}"
    );
}
