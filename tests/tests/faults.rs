//! Faulty handlers and peers over the real wire (REQUIREMENTS CAN-01, CAN-04, STDIO-01, STDIO-04;
//! seam rule: internal failures are a generic -32603). A handler that panics, one that never
//! returns, a peer that stops reading our stdout, and shutdown under load: the server answers
//! what it owes, keeps no task alive past its bound, and stays usable or exits cleanly.
//!
//! Peers dying mid-stream are covered beside their transports: `client_faults.rs`
//! (`server_dies_mid_call`), `client_faults_http.rs` (`server_gone_mid_call`, a truncated SSE
//! stream), `http_modern.rs` (a client closing mid-answer cancels, `http08_*`) and
//! `http_legacy_streams.rs` (a legacy disconnect is not cancellation, LHTTP-04).

use mcpcore::transport::http::{serve, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
use mcpcore_tests::http::McpHttp;
use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Generous bound for things that happen "soon" on a loaded 2-core machine.
const SOON: Duration = Duration::from_secs(20);

fn is_internal_error(r: &Value) -> bool {
    r["error"]["code"] == -32603 && r["error"]["message"] == "Internal error"
}

/// The wire-server's `gauge`: (`forever` futures alive, `forever` calls that saw their token).
async fn gauge(p: &mut StdioPeer) -> (u64, u64) {
    let r = p.call_tool("gauge", json!({})).await;
    let s = &r["result"]["structuredContent"];
    (
        s["live"].as_u64().expect("live"),
        s["sawCancel"].as_u64().expect("sawCancel"),
    )
}

/// Poll `gauge` until it reads `want` (bounded).
async fn gauge_reaches(p: &mut StdioPeer, want: (u64, u64)) {
    let until = tokio::time::Instant::now() + SOON;
    loop {
        let g = gauge(p).await;
        if g == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "gauge stuck at {g:?}, want {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A handler that panics: the peer gets a generic -32603 carrying nothing of the panic, the
/// process survives, later calls are served, and the server still exits 0 at EOF.
#[tokio::test]
async fn panicking_handler_is_32603_and_the_server_lives_on() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for _ in 0..3 {
        let r = p.call_tool("panic", json!({})).await;
        assert!(is_internal_error(&r), "{r}");
        let text = r.to_string();
        assert!(
            !text.contains("secret") && !text.contains("hunter2") && !text.contains("panic"),
            "{text}"
        );
        assert!(r["error"].get("data").is_none(), "{r}");
    }
    let r = p.call_tool("echo", json!({"text": "still here"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here");
    p.close_stdin();
    let st = p.wait_exit(SOON).await.expect("exits after EOF");
    assert!(st.success(), "{st}");
}

/// The same over Streamable HTTP, both eras: a legacy session and a modern stateless call each
/// get -32603 with nothing of the panic, and the listener keeps serving.
#[tokio::test]
async fn panicking_handler_over_http_is_32603_in_both_eras() {
    let server = Server::builder("faults", "1")
        .tool(
            Tool::new("panic"),
            handler_fn(|_ctx, _args: Value| async move {
                if Duration::ZERO.is_zero() {
                    panic!("secret panic detail");
                }
                Ok::<_, HandlerError>(CallToolResult::text("unreachable"))
            }),
        )
        .tool(
            Tool::new("echo"),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text("alive"))
            }),
        )
        .build()
        .expect("build");
    let addr = "127.0.0.1:0".parse().expect("addr");
    let listener = serve(server, addr, HttpOptions::default())
        .await
        .expect("listen");
    let mut c = McpHttp::new(listener.local_addr());
    let call = |name: &str| json!({"name": name, "arguments": {}});
    let modern = c.modern(1, "tools/call", call("panic")).await;
    c.initialize().await;
    let legacy = c.legacy(2, "tools/call", call("panic")).await;
    for r in [modern.last(), legacy.last()] {
        assert!(is_internal_error(r), "{r}");
        assert!(!r.to_string().contains("secret"), "{r}");
    }
    let ok = c.modern(3, "tools/call", call("echo")).await;
    assert_eq!(ok.last()["result"]["content"][0]["text"], "alive");
    let ok = c.legacy(4, "tools/call", call("echo")).await;
    assert_eq!(ok.last()["result"]["content"][0]["text"], "alive");
}

/// CAN-01: a handler that never returns, cancelled by the peer, sees its token fire; no answer
/// goes out for it, and — since it ignores the token — the engine drops it once the grace
/// (`--grace-ms`) is over: the live gauge returns to 0 and the server stays usable.
#[tokio::test]
async fn never_returning_handler_cancelled_by_the_peer_is_reaped() {
    let mut p = StdioPeer::wire_ready(&["--grace-ms", "300"], json!({})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "forever", "arguments": {}}),
    )
    .await;
    gauge_reaches(&mut p, (1, 0)).await;
    p.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "test"}),
    )
    .await;
    gauge_reaches(&mut p, (0, 1)).await;
    let r = p.call_tool("echo", json!({"text": "usable"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "usable");
    p.expect_silence(Duration::from_millis(300)).await;
    p.close_stdin();
    assert!(p.wait_exit(SOON).await.expect("exits").success());
}

/// CAN-04: the handler timeout (`Limits::handler_timeout`) fires the handler's token (it sees
/// the cancellation), answers -32603 "Request timed out" at once, and the handler that still
/// does not return is dropped after the grace. Calls in flight beside it are untouched.
#[tokio::test]
async fn handler_timeout_cancels_and_answers() {
    let mut p = StdioPeer::wire_ready(
        &["--handler-timeout-ms", "400", "--grace-ms", "300"],
        json!({}),
    )
    .await;
    let r = p.call_tool("forever", json!({})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], "Request timed out", "{r}");
    gauge_reaches(&mut p, (0, 1)).await;
    // Quick calls finish well inside the limit and are answered normally.
    let r = p.call_tool("wait", json!({"ms": 40})).await;
    assert_eq!(r["result"]["content"][0]["text"], "waited 40 ms", "{r}");
    p.close_stdin();
    assert!(p.wait_exit(SOON).await.expect("exits").success());
}

/// Graceful shutdown under load loses no answer it owes (STDIO-04): 16 slow calls in flight,
/// then EOF; every call is answered, then the server exits 0.
#[tokio::test]
async fn eof_under_load_answers_every_call_in_flight() {
    let mut p = StdioPeer::wire_ready(&["--grace-ms", "10000"], json!({})).await;
    let ids: Vec<Value> = (0..16).map(|_| p.fresh_id()).collect();
    for id in &ids {
        p.send_request(
            id,
            "tools/call",
            json!({"name": "wait", "arguments": {"ms": 400}}),
        )
        .await;
    }
    p.close_stdin();
    let mut answered = Vec::new();
    while answered.len() < ids.len() {
        let m = p
            .try_recv(SOON)
            .await
            .expect("every call answered before exit");
        if m.get("method").is_none() {
            assert_eq!(m["result"]["content"][0]["text"], "waited 400 ms", "{m}");
            answered.push(m["id"].clone());
        }
    }
    answered.sort_by_key(|v| v.as_i64());
    assert_eq!(answered, ids);
    assert!(p.wait_exit(SOON).await.expect("exits").success());
}

/// STDIO-01 write errors: the peer closes its end of our stdout (EPIPE on the next write) while
/// keeping stdin open. The server notices, stops, and exits on its own without a panic and
/// without spinning.
#[tokio::test]
async fn closed_stdout_is_a_clean_exit() {
    let mut child = tokio::process::Command::new(mcpcore_tests::wire_server_bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn wire-server");
    let mut stdin = child.stdin.take().expect("stdin");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("write");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    tokio::time::timeout(SOON, stdout.read_exact(&mut first))
        .await
        .expect("the server answered")
        .expect("read");
    drop(stdout);
    // Every answer from now on hits a closed pipe; keep asking so the server has to write.
    let call = |id: u64| {
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x".repeat(4096)}}})
        )
    };
    let exited = async {
        for id in 2.. {
            if stdin.write_all(call(id).as_bytes()).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        child.wait().await.expect("wait")
    };
    let status = tokio::time::timeout(SOON, exited)
        .await
        .expect("the server exits once its stdout is gone");
    assert!(status.code().is_some(), "killed by a signal: {status}");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = tokio::time::timeout(SOON, e.read_to_string(&mut err)).await;
    }
    assert!(!err.contains("panicked"), "{err}");
}
