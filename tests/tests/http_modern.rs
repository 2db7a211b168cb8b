//! Modern (2026-07-28) Streamable HTTP over a real socket (REQUIREMENTS HTTP-01…16, §0.6, §0.7,
//! PROG-02). Every message is validated against the 2026-07-28 schema by the harness.

use hyper::body::Incoming;
use mcpcore::transport::http::{HttpOptions, HttpService};
use mcpcore::Limits;
use mcpcore_tests::fixture::{self, Counters, Fixture};
use mcpcore_tests::http::{collect, modern_headers, McpHttp, WAIT};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fn call(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = envelope(json!({}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn set(h: &mut Vec<(String, String)>, k: &str, v: Option<&str>) {
    h.retain(|(n, _)| !n.eq_ignore_ascii_case(k));
    if let Some(v) = v {
        h.push((k.to_owned(), v.to_owned()));
    }
}

#[tokio::test]
async fn http09_tools_call_answers_json_without_session() {
    let f = Fixture::start().await;
    let c = f.client();
    let ex = c
        .modern(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
    assert!(!ex.sse, "a request that emits nothing is one JSON body");
    assert_eq!(ex.last()["result"]["content"][0]["text"], "hi");
    assert_eq!(ex.last()["result"]["resultType"], "complete");
    assert!(
        ex.header("mcp-session-id").is_none(),
        "LHTTP-09: modern never gets a session"
    );
    // An Mcp-Session-Id sent by a modern client is ignored (never read, never echoed).
    let mut h = modern_headers("tools/call", Some("echo"));
    h.push(("Mcp-Session-Id".into(), "nonexistent".into()));
    let msg = call(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    let ex = c.post(&h, &msg, Era::Modern).await;
    assert_eq!(ex.status, 200);
    assert!(ex.header("mcp-session-id").is_none());
    assert_eq!(f.listener.service().legacy_session_count(), 0);
}

#[tokio::test]
async fn http05_progress_streams_then_response_then_end() {
    let f = Fixture::start().await;
    let c = f.client();
    let mut params = json!({"name": "slow", "arguments": {"ms": 40}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["progressToken"] = json!("p1");
    let msg = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params});
    let ex = c
        .post(
            &modern_headers("tools/call", Some("slow")),
            &msg,
            Era::Modern,
        )
        .await;
    assert_eq!(ex.status, 200);
    assert!(ex.sse);
    assert_eq!(ex.header("x-accel-buffering"), Some("no"));
    assert_eq!(ex.header("cache-control"), Some("no-cache"));
    let progress: Vec<&Value> = ex
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 4);
    assert_eq!(progress[0]["params"]["progressToken"], "p1");
    assert_eq!(ex.messages.len(), 5, "progress, then exactly one response");
    assert_eq!(ex.last()["id"], 5);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "slept 40 ms");
}

#[tokio::test]
async fn http05_events_arrive_as_they_happen_and_http08_close_cancels() {
    let f = Fixture::start().await;
    let c = f.client();
    let mut params = json!({"name": "hang", "arguments": {}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["progressToken"] = json!(9);
    let msg = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": params});
    let mut r = c
        .post_raw(
            &modern_headers("tools/call", Some("hang")),
            msg.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"));
    // The handler is still waiting, so this event was sent while the request was running.
    let e = r.next_data_event().await.expect("first event");
    let v: Value = serde_json::from_str(&e.data).expect("json");
    mcpcore_tests::http::check(Era::Modern, &v, None);
    assert_eq!(v["method"], "notifications/progress");
    assert!(e.id.is_none(), "HTTP-07: modern streams carry no event ids");
    r.close();
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.counters.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "closing the stream did not cancel the request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn prog02_log_messages_ride_the_request_stream() {
    let f = Fixture::start().await;
    let c = f.client();
    let mut params =
        json!({"name": "log", "arguments": {"level": "warning", "message": "careful"}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let ex = c
        .post(
            &modern_headers("tools/call", Some("log")),
            &msg,
            Era::Modern,
        )
        .await;
    assert!(ex.sse);
    assert_eq!(ex.messages[0]["method"], "notifications/message");
    assert_eq!(ex.messages[0]["params"]["data"], "careful");
    assert_eq!(ex.last()["result"]["content"][0]["text"], "sent");
    // Without logLevel nothing is sent and the answer is plain JSON.
    let ex = c
        .modern(
            2,
            "tools/call",
            json!({"name": "log", "arguments": {"level": "error", "message": "x"}}),
        )
        .await;
    assert!(!ex.sse);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "filtered");
}

#[tokio::test]
async fn http10_header_mismatches_are_400_32020() {
    let f = Fixture::start().await;
    let c = f.client();
    let msg = call(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
    );
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("Mcp-Method", None),
        ("Mcp-Method", Some("tools/list")),
        ("MCP-Protocol-Version", None),
        ("MCP-Protocol-Version", Some("2025-11-25")),
        ("Mcp-Name", None),
        ("Mcp-Name", Some("other")),
        ("Mcp-Name", Some("=?base64?not base64!?=")),
        ("Mcp-Name", Some("=?base64?ZWNobw==")),
    ];
    for (k, v) in cases {
        let mut h = modern_headers("tools/call", Some("echo"));
        set(&mut h, k, v);
        let ex = c.post(&h, &msg, Era::Modern).await;
        assert_eq!(ex.status, 400, "{k}: {v:?}");
        assert_eq!(ex.code(), Some(-32020), "{k}: {v:?}");
    }
    // HTTP-16: a Base64-encoded Mcp-Name is decoded before comparing.
    let mut h = modern_headers("tools/call", None);
    set(&mut h, "Mcp-Name", Some("=?base64?ZWNobw==?="));
    let ex = c.post(&h, &msg, Era::Modern).await;
    assert_eq!(ex.status, 200);
    // resources/read compares the URI; prompts/get the name.
    let ex = c
        .modern(2, "resources/read", json!({"uri": "demo://readme"}))
        .await;
    assert_eq!(ex.status, 200);
    let mut h = modern_headers("resources/read", Some("demo://other"));
    set(&mut h, "Mcp-Name", Some("demo://other"));
    let ex = c
        .post(
            &h,
            &call(3, "resources/read", json!({"uri": "demo://readme"})),
            Era::Modern,
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
    let ex = c
        .modern(
            4,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
}

/// §0.7 order: an envelope error (-32602 / -32022, step 4) is answered before a `Mcp-Name` or
/// `Mcp-Param-*` mismatch (-32020, steps 7 and 9) on the same request.
#[tokio::test]
async fn s07_envelope_errors_precede_header_mismatches() {
    let f = Fixture::start().await;
    let c = f.client();
    let incomplete = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let ex = c
        .post(
            &modern_headers("tools/call", Some("other")),
            &incomplete,
            Era::Modern,
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32602)));
    let unsupported = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "region", "arguments": {"region": "eu"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut h = modern_headers("tools/call", Some("region"));
    set(&mut h, "MCP-Protocol-Version", Some("2099-01-01"));
    let ex = c.post(&h, &unsupported, Era::Modern).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32022)));
    // The same requests with a complete envelope get the header mismatch.
    let ex = c
        .post(
            &modern_headers("tools/call", Some("other")),
            &call(
                3,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "x"}}),
            ),
            Era::Modern,
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
    let ex = c
        .post(
            &modern_headers("tools/call", Some("region")),
            &call(
                4,
                "tools/call",
                json!({"name": "region", "arguments": {"region": "eu"}}),
            ),
            Era::Modern,
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
}

#[tokio::test]
async fn http15_mcp_param_headers_are_verified() {
    let f = Fixture::start().await;
    let c = f.client();
    let args = json!({"name": "region", "arguments": {"region": "z\u{fc}rich", "count": 3}});
    let msg = call(1, "tools/call", args.clone());
    let base = modern_headers("tools/call", Some("region"));
    // "zürich" is not plain ASCII, so it travels Base64-encoded (HTTP-16).
    let mut h = base.clone();
    h.push(("Mcp-Param-Region".into(), "=?base64?esO8cmljaA==?=".into()));
    h.push(("Mcp-Param-Count".into(), "3".into()));
    let ex = c.post(&h, &msg, Era::Modern).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    // Missing header for a present argument.
    let mut h = base.clone();
    h.push(("Mcp-Param-Count".into(), "3".into()));
    let ex = c.post(&h, &msg, Era::Modern).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
    // Integer mismatch.
    let mut h = base.clone();
    h.push(("Mcp-Param-Region".into(), "=?base64?esO8cmljaA==?=".into()));
    h.push(("Mcp-Param-Count".into(), "4".into()));
    let ex = c.post(&h, &msg, Era::Modern).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
    // Absent argument → the header must be absent too.
    let msg2 = call(
        2,
        "tools/call",
        json!({"name": "region", "arguments": {"region": "eu"}}),
    );
    let mut h = base.clone();
    h.push(("Mcp-Param-Region".into(), "eu".into()));
    assert_eq!(c.post(&h, &msg2, Era::Modern).await.status, 200);
    h.push(("Mcp-Param-Count".into(), "1".into()));
    let ex = c.post(&h, &msg2, Era::Modern).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32020)));
}

#[tokio::test]
async fn status_ladder_0_6() {
    let f = Fixture::start().await;
    let c = f.client();
    let h = modern_headers("tools/call", Some("echo"));
    // -32700 parse error → 400
    let r = c.post_raw(&h, b"{not json").await;
    let ex = collect(r, Era::Modern, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32700)));
    // -32600 invalid request → 400
    let ex = c
        .post(
            &h,
            &json!({"jsonrpc": "1.0", "id": 1, "method": "tools/call"}),
            Era::Modern,
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)));
    // -32602 from envelope validation → 400
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let ex = c
        .post(&modern_headers("tools/list", None), &msg, Era::Modern)
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32602)));
    // -32022 unsupported version → 400 with data
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut hh = modern_headers("tools/list", None);
    set(&mut hh, "MCP-Protocol-Version", Some("2099-01-01"));
    let ex = c.post(&hh, &msg, Era::Modern).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32022)));
    assert_eq!(ex.last()["error"]["data"]["requested"], "2099-01-01");
    // -32601 unknown or removed method → 404
    let ex = c.modern(2, "no/such", json!({})).await;
    assert_eq!((ex.status, ex.code()), (404, Some(-32601)));
    let ex = c.modern(3, "ping", json!({})).await;
    assert_eq!((ex.status, ex.code()), (404, Some(-32601)));
    // handler-level -32602 (unknown tool) and -32603 (internal) are in-band 200
    let ex = c
        .modern(4, "tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!((ex.status, ex.code()), (200, Some(-32602)));
    let ex = c
        .modern(5, "tools/call", json!({"name": "fail", "arguments": {}}))
        .await;
    assert_eq!((ex.status, ex.code()), (200, Some(-32603)));
    assert!(
        !ex.last().to_string().contains("secret"),
        "internal detail leaked"
    );
    // -32021 is always 400, even raised by a handler
    let ex = c
        .modern(
            6,
            "tools/call",
            json!({"name": "needs_elicitation", "arguments": {}}),
        )
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32021)));
    // a modern header without the envelope never falls back to legacy → 400 -32602
    let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}});
    let ex = c
        .post(&modern_headers("tools/list", None), &msg, Era::Modern)
        .await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32602)));
    // an accepted notification → 202, empty
    let n = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"_meta": envelope(json!({}))}});
    let ex = c
        .post(
            &modern_headers("notifications/roots/list_changed", None),
            &n,
            Era::Modern,
        )
        .await;
    assert_eq!(ex.status, 202);
    assert!(ex.messages.is_empty());
}

#[tokio::test]
async fn discover_keeps_list_changed_and_subscribe_on_http() {
    let f = Fixture::start().await;
    let ex = f.client().modern(1, "server/discover", json!({})).await;
    assert_eq!(ex.status, 200);
    let caps = &ex.last()["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["resources"]["subscribe"], true);
}

#[tokio::test]
async fn bounded_request_queue_drops_and_reports() {
    let mut limits = Limits::default();
    limits.max_outbound_queue = 4;
    let f = Fixture::with(limits, Default::default()).await;
    let mut params = json!({"name": "flood", "arguments": {"n": 200}});
    params["_meta"] = envelope(json!({}));
    params["_meta"]["progressToken"] = json!(1);
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let ex = f
        .client()
        .post(
            &modern_headers("tools/call", Some("flood")),
            &msg,
            Era::Modern,
        )
        .await;
    let queued: usize = ex.last()["result"]["content"][0]["text"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("count");
    assert!(
        queued < 200,
        "the queue must be bounded; all 200 were accepted"
    );
    assert_eq!(
        ex.messages.len(),
        queued + 1,
        "every accepted notification is delivered"
    );
}

#[tokio::test]
async fn demo_server_serves_http_on_port_zero() {
    let (mut child, addr) =
        mcpcore_tests::http::spawn_example("demo-server", &["--http", "127.0.0.1:0"]).await;
    assert_ne!(addr.port(), 0);
    let ex = McpHttp::new(addr)
        .modern(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "over http"}}),
        )
        .await;
    assert_eq!(ex.last()["result"]["content"][0]["text"], "over http");
    let _ = child.start_kill();
    let _ = tokio::time::timeout(WAIT, child.wait()).await;
}

/// META-02 over HTTP: modern results name the server in `_meta`; legacy results do not.
#[tokio::test]
async fn meta02_server_info_on_modern_http_results() {
    const KEY: &str = "io.modelcontextprotocol/serverInfo";
    let f = Fixture::start().await;
    let c = f.client();
    let ex = c
        .modern(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "i"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
    assert_eq!(
        ex.last()["result"]["_meta"][KEY],
        json!({"name": "http-fixture", "version": "1"})
    );
    let ex = c.modern(2, "tools/list", json!({})).await;
    assert_eq!(ex.last()["result"]["_meta"][KEY]["name"], "http-fixture");
    let mut l = f.client();
    l.initialize().await;
    let ex = l.legacy(3, "tools/list", json!({})).await;
    assert!(ex.last()["result"]
        .get("_meta")
        .is_none_or(|m| m.get(KEY).is_none()));
}

/// Send a modern `hang` call on a raw socket and close it before the server has written any
/// byte of the answer (no progress token, no log level: the handler emits nothing).
async fn post_hang_then_close(addr: std::net::SocketAddr, path: &str) {
    use tokio::io::AsyncWriteExt;
    let msg = call(7, "tools/call", json!({"name": "hang", "arguments": {}}));
    let body = msg.to_string();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n",
        addr.port()
    );
    for (k, v) in modern_headers("tools/call", Some("hang")) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(head.as_bytes()).await.expect("write");
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(s);
}

/// Wait until the fixture's `hang` handler has observed its cancellation.
async fn handler_saw_cancellation(counters: &Counters) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while counters.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "closing the connection did not cancel the request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// HTTP-08 before any byte of the answer: a client that closes its connection while the
/// handler has sent nothing yet (no progress token, no log level) still cancels the request,
/// and the handler gets to observe it (it is not just dropped).
#[tokio::test]
async fn http08_close_before_the_first_byte_cancels() {
    let f = Fixture::start().await;
    let c = f.client();
    post_hang_then_close(c.addr, &c.path).await;
    handler_saw_cancellation(&f.counters).await;
}

/// The same through a mounted `HttpService` on a hyper connection the embedder owns.
#[tokio::test]
async fn http08_close_before_the_first_byte_cancels_when_mounted() {
    let counters = Arc::new(Counters::default());
    let server = fixture::build(Limits::default(), counters.clone());
    let svc = HttpService::new(server, HttpOptions::default()).expect("service");
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let accept = tokio::spawn(async move {
        let (stream, _) = l.accept().await.expect("accept");
        let handler = hyper::service::service_fn(move |req: http::Request<Incoming>| {
            let svc = svc.clone();
            async move { Ok::<_, std::convert::Infallible>(svc.handle(req).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
            .await;
    });
    post_hang_then_close(addr, "/mcp").await;
    handler_saw_cancellation(&counters).await;
    accept.abort();
}
