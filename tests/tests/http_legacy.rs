//! Legacy Streamable HTTP sessions over a real socket (REQUIREMENTS LHTTP-01…09, LC-*). Every
//! message is validated against the 2025-11-25 schema by the harness.

use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, HttpReply, McpHttp, WAIT};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

async fn next_msg(r: &mut HttpReply) -> (Option<String>, Value) {
    let e = r.next_data_event().await.expect("an SSE event");
    let v: Value = serde_json::from_str(&e.data).expect("JSON event");
    check(Era::Legacy, &v, Some("tools/call"));
    (e.id, v)
}

fn ask(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "ask", "arguments": {"prompt": "2+2?"}}})
}

fn sampling_answer(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}})
}

#[tokio::test]
async fn lhttp02_initialize_mints_a_random_session() {
    let f = Fixture::start().await;
    let mut a = f.client();
    let ex = a.initialize().await;
    assert_eq!(ex.last()["result"]["protocolVersion"], "2025-11-25");
    let sid = a.session.clone().expect("sid");
    assert!(sid.len() >= 32 && sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let mut b = f.client();
    b.initialize().await;
    assert_ne!(a.session, b.session);
    assert_eq!(f.listener.service().legacy_session_count(), 2);
    let ex = a
        .legacy(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "hi");
    // missing session → 400; unknown → 404
    let mut none = a.clone();
    none.session = None;
    assert_eq!(none.legacy(2, "tools/list", json!({})).await.status, 400);
    let mut unknown = a.clone();
    unknown.session = Some("deadbeef".into());
    assert_eq!(unknown.legacy(3, "tools/list", json!({})).await.status, 404);
}

#[tokio::test]
async fn duplicate_initialize_is_400_and_the_session_survives() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)));
    let ex = c.legacy(10, "tools/list", json!({})).await;
    assert_eq!(ex.status, 200);
    assert!(ex.last()["result"]["tools"].is_array());
}

#[tokio::test]
async fn failed_first_initialize_leaves_no_session() {
    let f = Fixture::start().await;
    let c = f.client();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert_eq!(ex.code(), Some(-32602));
    assert!(ex.header("mcp-session-id").is_none());
    assert_eq!(f.listener.service().legacy_session_count(), 0);
}

/// LC-08 over HTTP: a server→client request unanswered within its timeout is
/// cancelled on the originating POST's stream (`notifications/cancelled` naming it), the
/// uncaught timeout answers the tool call with -32001, and a late answer is accepted (202) and
/// ignored; the session keeps working.
#[tokio::test]
async fn lc08_server_request_timeout_over_the_post_stream() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "ask", "arguments": {"prompt": "2+2?", "timeout_ms": 100}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"));
    let (_, req) = next_msg(&mut r).await;
    assert_eq!(req["method"], "sampling/createMessage");
    let (_, cancel) = next_msg(&mut r).await;
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    let (_, resp) = next_msg(&mut r).await;
    assert_eq!(resp["id"], 9);
    assert_eq!(resp["error"]["code"], -32001, "{resp}");
    assert!(r.next_data_event().await.is_none(), "the stream ends");
    let late = c
        .post(
            &c.legacy_headers(),
            &sampling_answer(&req["id"]),
            Era::Legacy,
        )
        .await;
    assert_eq!(late.status, 202);
    assert!(late.messages.is_empty());
    let ex = c.legacy(10, "tools/list", json!({})).await;
    assert_eq!(ex.status, 200);
    assert!(ex.last()["result"]["tools"].is_array());
}

#[tokio::test]
async fn lhttp03_protocol_version_header() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut h = c.legacy_headers();
    h.retain(|(k, _)| k != "MCP-Protocol-Version");
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    assert_eq!(
        c.post(&h, &msg, Era::Legacy).await.status,
        200,
        "missing → assume 2025-03-26"
    );
    h.push(("MCP-Protocol-Version".into(), "1999-01-01".into()));
    assert_eq!(c.post(&h, &msg, Era::Legacy).await.status, 400);
}

fn with_version(c: &McpHttp, v: &str) -> Vec<(String, String)> {
    let mut h = c.legacy_headers();
    h.retain(|(k, _)| k != "MCP-Protocol-Version");
    h.push(("MCP-Protocol-Version".into(), v.into()));
    h
}

/// LHTTP-03: a session speaks the version it negotiated. Another supported version in
/// `MCP-Protocol-Version` is refused (400 + -32600, naming the session's version), on POST and
/// GET alike; the negotiated one and a missing header are served.
#[tokio::test]
async fn lhttp03_session_refuses_a_version_other_than_the_negotiated_one() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.version = "2025-03-26".into();
    c.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    for v in ["2025-06-18", "2025-11-25", "2024-11-05"] {
        let ex = c.post(&with_version(&c, v), &msg, Era::Legacy).await;
        assert_eq!((ex.status, ex.code()), (400, Some(-32600)), "{v}");
        let e = &ex.last()["error"];
        assert_eq!(
            e["message"],
            "MCP-Protocol-Version does not match the version negotiated for this session"
        );
        assert_eq!(
            e["data"],
            json!({"supported": ["2025-03-26"], "requested": v})
        );
    }
    let mut other = c.clone();
    other.version = "2025-11-25".into();
    let mut g = other.get(None).await;
    assert_eq!(g.status, 400);
    let _ = g.body().await;
    assert_eq!(
        c.post(&c.legacy_headers(), &msg, Era::Legacy).await.status,
        200
    );
    let mut h = c.legacy_headers();
    h.retain(|(k, _)| k != "MCP-Protocol-Version");
    assert_eq!(c.post(&h, &msg, Era::Legacy).await.status, 200);
}

/// §0.1, LHTTP-03: a malformed `MCP-Protocol-Version` names no version, so it never makes an
/// envelope-less request modern ("missing _meta envelope keys"); the session answers it as an
/// unsupported version, for requests and notifications alike.
#[tokio::test]
async fn lhttp03_malformed_version_header_is_unsupported_not_modern() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let note = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    for v in ["bogus", "9999", "2026-07-28x", "2026-13-01"] {
        let h = with_version(&c, v);
        let ex = c.post(&h, &msg, Era::Legacy).await;
        assert_eq!((ex.status, ex.code()), (400, Some(-32600)), "{v}");
        let e = &ex.last()["error"];
        assert_eq!(e["message"], "Unsupported MCP-Protocol-Version", "{v}");
        assert_eq!(
            e["data"],
            json!({"supported": ["2025-11-25"], "requested": v})
        );
        assert_eq!(c.post(&h, &note, Era::Legacy).await.status, 400, "{v}");
    }
    assert_eq!(c.legacy(2, "tools/list", json!({})).await.status, 200);
}

#[tokio::test]
async fn lhttp08_sampling_rides_the_post_stream_and_responses_get_202() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut r = c
        .post_raw(&c.legacy_headers(), ask(7).to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"));
    // LHTTP-04: the priming event has an id, a retry hint and empty data.
    let prime = r.next_event().await.expect("priming event");
    assert!(prime.id.is_some() && prime.data.is_empty() && prime.retry.is_some());
    let (eid, req) = next_msg(&mut r).await;
    assert!(eid.is_some(), "legacy events carry ids");
    assert_eq!(req["method"], "sampling/createMessage");
    // LHTTP: a duplicate in-flight id → 409, and the first keeps its routing.
    let dup = c.legacy(7, "tools/list", json!({})).await;
    assert_eq!(dup.status, 409);
    let ex = c
        .post(
            &c.legacy_headers(),
            &sampling_answer(&req["id"]),
            Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 202);
    assert!(ex.messages.is_empty());
    let (_, resp) = next_msg(&mut r).await;
    assert_eq!(resp["id"], 7);
    assert_eq!(resp["result"]["content"][0]["text"], "4");
    assert!(
        r.next_data_event().await.is_none(),
        "the stream ends after the response"
    );
}

#[tokio::test]
async fn lhttp06_resume_with_last_event_id() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut r = c
        .post_raw(&c.legacy_headers(), ask(8).to_string().as_bytes())
        .await;
    let (eid, req) = next_msg(&mut r).await;
    let eid = eid.expect("event id");
    // Disconnecting is not cancellation (LHTTP-04).
    r.close();
    let ex = c
        .post(
            &c.legacy_headers(),
            &sampling_answer(&req["id"]),
            Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 202);
    let mut g = c.get(Some(&eid)).await;
    assert_eq!(g.status, 200);
    let (_, resp) = next_msg(&mut g).await;
    assert_eq!(
        resp["id"], 8,
        "the response is replayed on the resumed stream"
    );
    assert_eq!(resp["result"]["content"][0]["text"], "4");
    assert!(g.next_data_event().await.is_none());
}

#[tokio::test]
async fn lhttp05_get_stream_single_and_carries_unrelated_messages() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut g = c.get(None).await;
    assert_eq!(g.status, 200);
    assert_eq!(g.header("cache-control"), Some("no-cache"));
    assert_eq!(g.header("x-accel-buffering"), Some("no"));
    let prime = g.next_event().await.expect("priming");
    assert!(prime.id.is_some());
    let mut second = c.get(None).await;
    assert_eq!(second.status, 409);
    let _ = second.body().await;
    assert!(f.server.notify_tools_list_changed() >= 1);
    let (eid, n) = next_msg(&mut g).await;
    assert!(eid.is_some());
    assert_eq!(n["method"], "notifications/tools/list_changed");
    // Progress of a POSTed request goes to that POST's stream, not to GET.
    let msg = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 20}, "_meta": {"progressToken": "t"}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert!(ex.sse);
    assert_eq!(ex.messages.len(), 5);
    assert_eq!(ex.last()["id"], 3);
}

#[tokio::test]
async fn lhttp02_delete_ends_the_session() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut g = c.get(None).await;
    let _ = g.next_event().await;
    assert_eq!(c.delete().await, 200);
    assert_eq!(f.listener.service().legacy_session_count(), 0);
    assert!(
        g.next_data_event().await.is_none(),
        "DELETE closes the GET stream"
    );
    assert_eq!(c.legacy(1, "tools/list", json!({})).await.status, 404);
    assert_eq!(c.delete().await, 404);
}

/// LHTTP-02: DELETE frees everything the session held: its in-flight
/// request is cancelled (the handler sees it), its resource subscription and its
/// list-changed registration reach nobody any more.
#[tokio::test]
async fn lhttp02_delete_cancels_in_flight_work_and_drops_subscriptions() {
    use std::sync::atomic::Ordering::SeqCst;
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let ex = c
        .legacy(1, "resources/subscribe", json!({"uri": "demo://readme"}))
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    // The GET stream carries unrelated notifications (without one there is nowhere to send).
    let mut g = c.get(None).await;
    let _ = g.next_event().await;
    assert_eq!(f.server.notify_resource_updated("demo://readme"), 1);
    let (_, n) = next_msg(&mut g).await;
    assert_eq!(n["method"], "notifications/resources/updated");
    let c2 = c.clone();
    let call = tokio::spawn(async move {
        c2.legacy(
            2,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}}),
        )
        .await
    });
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.counters.started.load(SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "slow never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(c.delete().await, 200);
    while f.counters.cancelled.load(SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "DELETE left the in-flight request running"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(f.server.notify_resource_updated("demo://readme"), 0);
    assert_eq!(f.server.notify_tools_list_changed(), 0);
    assert_eq!(f.listener.service().legacy_session_count(), 0);
    call.abort();
}

#[tokio::test]
async fn idle_sessions_are_reaped() {
    let mut opts = HttpOptions::default();
    opts.session_idle_timeout = Duration::from_millis(100);
    let f = Fixture::with(Limits::default(), opts).await;
    let mut c = f.client();
    // Not `initialize()`: its follow-up notification could itself race the reaper.
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    c.session = ex.header("mcp-session-id").map(str::to_owned);
    assert!(c.session.is_some());
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.listener.service().legacy_session_count() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "idle session never reaped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(c.legacy(1, "tools/list", json!({})).await.status, 404);
}

#[tokio::test]
async fn max_sessions_is_503() {
    let mut opts = HttpOptions::default();
    opts.max_sessions = 2;
    let f = Fixture::with(Limits::default(), opts).await;
    f.client().initialize().await;
    f.client().initialize().await;
    let c = f.client();
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert_eq!(ex.status, 503);
}

fn initialize_only() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
}

/// LC-01, LHTTP-02: a peer that only POSTs `initialize` fills the session cap (503 for every
/// newcomer) only until `uninitialized_session_timeout`, not for the 30-minute idle timeout;
/// a session whose client sent `notifications/initialized` is not touched by that timeout.
#[tokio::test]
async fn half_open_sessions_are_reaped_after_the_short_timeout() {
    let mut opts = HttpOptions::default();
    opts.max_sessions = 5;
    opts.uninitialized_session_timeout = Duration::from_millis(300);
    let f = Fixture::with(Limits::default(), opts).await;
    let c = f.client();
    for _ in 0..5 {
        let ex = c
            .post(&c.legacy_headers(), &initialize_only(), Era::Legacy)
            .await;
        assert_eq!(ex.status, 200);
    }
    let ex = c
        .post(&c.legacy_headers(), &initialize_only(), Era::Legacy)
        .await;
    assert_eq!((ex.status, ex.code()), (503, Some(-32603)));
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.listener.service().legacy_session_count() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "half-open sessions never reaped"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut good = f.client();
    good.initialize().await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(f.listener.service().legacy_session_count(), 1);
    assert_eq!(good.legacy(1, "tools/list", json!({})).await.status, 200);
}

/// The example servers take the session limits from their command line: a cap of one is full
/// after one `initialize`, and `--init-timeout-secs 1` frees it again; bad values exit 2.
#[tokio::test]
async fn example_servers_take_session_limits_from_the_command_line() {
    for bin in ["demo-server", "conformance-server"] {
        let bad = tokio::process::Command::new(mcpcore_tests::example_bin(bin))
            .args(["--http", "127.0.0.1:0", "--max-sessions", "0"])
            .stdin(std::process::Stdio::null())
            .output();
        let bad = tokio::time::timeout(WAIT, bad)
            .await
            .expect("exits")
            .expect("ran");
        assert_eq!(bad.status.code(), Some(2), "{bin}");
        assert!(String::from_utf8_lossy(&bad.stderr).contains("--init-timeout-secs S"));
        let args = [
            "--http",
            "127.0.0.1:0",
            "--max-sessions",
            "1",
            "--init-timeout-secs",
            "1",
            "--session-idle-secs",
            "600",
        ];
        let (mut child, addr) = mcpcore_tests::http::spawn_example(bin, &args).await;
        let c = McpHttp::new(addr);
        let init = |c: &McpHttp| {
            let c = c.clone();
            async move {
                c.post(&c.legacy_headers(), &initialize_only(), Era::Legacy)
                    .await
            }
        };
        assert_eq!(init(&c).await.status, 200, "{bin}");
        assert_eq!(init(&c).await.status, 503, "{bin}");
        let deadline = tokio::time::Instant::now() + WAIT;
        while init(&c).await.status != 200 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{bin}: slot never freed"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = child.start_kill();
        let _ = tokio::time::timeout(WAIT, child.wait()).await;
    }
}

#[tokio::test]
async fn notifications_and_unknown_responses_are_202() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let n = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    assert_eq!(
        c.post(&c.legacy_headers(), &n, Era::Legacy).await.status,
        202
    );
    let r = json!({"jsonrpc": "2.0", "id": 999, "result": {}});
    assert_eq!(
        c.post(&c.legacy_headers(), &r, Era::Legacy).await.status,
        202
    );
    // A notification without a session → 400.
    let bare = McpHttp::new(f.addr());
    assert_eq!(
        bare.post(&bare.legacy_headers(), &n, Era::Legacy)
            .await
            .status,
        400
    );
}

#[tokio::test]
async fn stateless_legacy_mode_keeps_no_sessions() {
    let mut opts = HttpOptions::default();
    opts.stateless_legacy = true;
    let f = Fixture::with(Limits::default(), opts).await;
    let c = f.client();
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert_eq!(ex.status, 200);
    assert!(ex.header("mcp-session-id").is_none());
    let ex = c
        .legacy(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "s"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "s");
    let msg = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 8}, "_meta": {"progressToken": 1}}});
    let ex = c.post(&c.legacy_headers(), &msg, Era::Legacy).await;
    assert!(ex.sse);
    assert_eq!(ex.messages.len(), 5);
    assert_eq!(f.listener.service().legacy_session_count(), 0);
    let r = mcpcore_tests::http::raw_request(
        f.addr(),
        "GET",
        "/mcp",
        &[("Accept", "text/event-stream")],
        b"",
    )
    .await;
    assert_eq!(r.status, 405);
}

/// LHTTP-04 SSE polling: a handler closes its response stream mid-call (after the priming
/// event); the client resumes with `Last-Event-ID` and gets the response from the replay.
#[tokio::test]
async fn lhttp04_handler_closes_stream_and_client_resumes() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 31, "method": "tools/call", "params": {"name": "poll", "arguments": {}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"));
    let priming = tokio::time::timeout(WAIT, r.next_event())
        .await
        .expect("priming in time")
        .expect("priming event");
    let eid = priming.id.clone().expect("the priming event carries an id");
    assert!(priming.data.is_empty(), "the priming event has empty data");
    assert!(priming.retry.is_some(), "the priming event carries retry");
    // The server ends the stream without the response.
    let rest = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("stream ends in time");
    assert!(
        rest.is_none(),
        "the stream closed before the response: {rest:?}"
    );
    let mut g = c.get(Some(&eid)).await;
    assert_eq!(g.status, 200);
    let (_, resp) = next_msg(&mut g).await;
    assert_eq!(resp["id"], 31);
    assert_eq!(resp["result"]["content"][0]["text"], "closed=true");
}

/// On modern HTTP there is no resumable stream: the hook reports `false` and the answer is JSON.
#[tokio::test]
async fn close_sse_stream_is_a_no_op_on_modern_requests() {
    let f = Fixture::start().await;
    let c = f.client();
    let ex = c
        .modern(5, "tools/call", json!({"name": "poll", "arguments": {}}))
        .await;
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "closed=false");
}
