//! The client's Streamable HTTP transport against our HTTP server on 127.0.0.1, both eras
//! (REQUIREMENTS HTTP-02, HTTP-05, HTTP-08, HTTP-09, HTTP-15, HTTP-16, HTTP-18, LHTTP-02,
//! LHTTP-03, LHTTP-05, LHTTP-08, SUB-02/03, 0.8). The server validates every header the client
//! sends (a missing or wrong one is a 400), so a successful call proves the headers.

use mcpcore::client::{
    client_handler_fn, CallOptions, Client, ClientError, ConnectMode, Era, HttpClientOptions,
};
use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(20);

fn url(f: &Fixture) -> String {
    format!("http://{}/mcp", f.addr())
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

async fn wait_until(mut f: impl FnMut() -> bool, what: &str) {
    let deadline = tokio::time::Instant::now() + BOUND;
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} within the bound"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn http18_auto_adopts_modern_and_calls_work() {
    let f = Fixture::start().await;
    let c = bounded(Client::builder().connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    assert_eq!(
        c.server_implementation().expect("info").name,
        "http-fixture"
    );
    let tools = bounded(c.list_all_tools()).await.expect("tools");
    assert!(tools.iter().any(|t| t.name == "region"));
    let r = bounded(c.call_tool("echo", json!({"text": "hi"})))
        .await
        .expect("echo");
    assert_eq!(r.content[0]["text"], "hi");
    // HTTP-15/16: Mcp-Param-* mirrored (non-ASCII through the base64 sentinel), checked by the server.
    let r = bounded(c.call_tool("region", json!({"region": "Zürich ", "count": 3})))
        .await
        .expect("region");
    assert!(r.content[0]["text"]
        .as_str()
        .expect("text")
        .contains("Zürich"));
    // Mcp-Name for prompts/get and resources/read.
    let p = bounded(c.get_prompt("greet", json!({"name": "Ada"})))
        .await
        .expect("prompt");
    assert_eq!(p.messages[0]["content"]["text"], "Hello Ada");
    let rr = bounded(c.read_resource("demo://readme"))
        .await
        .expect("read");
    assert_eq!(rr.contents[0]["text"], "readme");
    // HTTP-05: an SSE answer with progress, then the response.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let opts = CallOptions::new().on_progress(move |p, _, _| s.lock().expect("lock").push(p));
    let r = bounded(c.call_tool_with("slow", json!({"ms": 40}), opts))
        .await
        .expect("slow");
    assert_eq!(r.content[0]["text"], "slept 40 ms");
    assert_eq!(*seen.lock().expect("lock"), vec![1.0, 2.0, 3.0, 4.0]);
    // -32021 surfaces as the server's error.
    let e = bounded(c.call_tool("needs_elicitation", json!({})))
        .await
        .expect_err("-32021");
    assert_eq!(e.rpc_code(), Some(-32021));
    c.close().await;
    f.listener.shutdown().await;
}

#[tokio::test]
async fn http08_modern_cancel_closes_the_stream() {
    let f = Fixture::start().await;
    let c = bounded(Client::builder().connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("connect");
    let e = bounded(
        c.call_tool_with(
            "hang",
            json!({}),
            CallOptions::new()
                .timeout(Duration::from_millis(300))
                .on_progress(|_, _, _| {}),
        ),
    )
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    let counters = f.counters.clone();
    wait_until(
        || counters.cancelled.load(Ordering::SeqCst) == 1,
        "server saw the cancellation",
    )
    .await;
    let token = CancellationToken::new();
    let t2 = token.clone();
    let opts = CallOptions::new()
        .cancel(token)
        .on_progress(move |_, _, _| t2.cancel());
    let e = bounded(c.call_tool_with("hang", json!({}), opts))
        .await
        .expect_err("cancelled");
    assert!(matches!(e, ClientError::Cancelled), "{e:?}");
    wait_until(
        || counters.cancelled.load(Ordering::SeqCst) == 2,
        "server saw the second cancellation",
    )
    .await;
    bounded(c.call_tool("echo", json!({"text": "after"})))
        .await
        .expect("still works");
    c.close().await;
    f.listener.shutdown().await;
}

#[tokio::test]
async fn lhttp_legacy_session_headers_server_requests_get_stream_and_delete() {
    let f = Fixture::start().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let b = Client::builder()
        .mode(ConnectMode::Legacy)
        .on_sampling(client_handler_fn(|_p: Value| async move {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "from the client"}, "model": "m"}))
        }))
        .on_notification(move |m, _p| {
            let _ = tx.send(m.to_owned());
        });
    let c = bounded(b.connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy));
    assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
    assert_eq!(f.listener.service().legacy_session_count(), 1);
    // LHTTP-08: a sampling request on the POST's SSE stream, answered by a POSTed response.
    let r = bounded(c.call_tool("ask", json!({"prompt": "x"})))
        .await
        .expect("ask");
    assert_eq!(r.content[0]["text"], "from the client");
    // LHTTP-05: unrelated notifications arrive on the GET stream.
    let server = f.server.clone();
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut got = false;
    while tokio::time::Instant::now() < deadline && !got {
        server.notify_tools_list_changed();
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
            got = m == "notifications/tools/list_changed";
        }
    }
    assert!(got, "list_changed reached the callback over the GET stream");
    // Legacy cancellation: notifications/cancelled is POSTed.
    let e = bounded(c.call_tool_with(
        "hang",
        json!({}),
        CallOptions::new().timeout(Duration::from_millis(300)),
    ))
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout));
    let counters = f.counters.clone();
    wait_until(
        || counters.cancelled.load(Ordering::SeqCst) == 1,
        "server saw the cancellation",
    )
    .await;
    c.ping().await.expect("ping");
    // LHTTP-02: DELETE ends the session.
    c.close().await;
    let svc = f.listener.service().clone();
    wait_until(|| svc.legacy_session_count() == 0, "session deleted").await;
    f.listener.shutdown().await;
}

#[tokio::test]
async fn modern_only_server_refuses_legacy_and_auto_still_works() {
    let mut opts = HttpOptions::default();
    opts.legacy = false;
    let f = Fixture::with(Limits::default(), opts).await;
    let e = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_http(&url(&f), HttpClientOptions::default()),
    )
    .await
    .expect_err("legacy refused");
    assert_eq!(e.rpc_code(), Some(-32022), "{e:?}");
    let c = bounded(Client::builder().connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("auto");
    assert!(c.is_modern());
    c.close().await;
    f.listener.shutdown().await;
}

#[tokio::test]
async fn sub_listen_over_http() {
    let f = Fixture::start().await;
    let c = bounded(Client::builder().connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("connect");
    let mut sub = bounded(c.listen(json!({"toolsListChanged": true})))
        .await
        .expect("listen");
    assert_eq!(sub.honored()["toolsListChanged"], true);
    let server = f.server.clone();
    let n = bounded(async {
        loop {
            server.notify_tools_list_changed();
            if let Ok(n) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
                break n;
            }
        }
    })
    .await
    .expect("notification");
    assert_eq!(n["method"], "notifications/tools/list_changed");
    sub.close().await;
    let svc = f.listener.service().clone();
    wait_until(|| svc.listen_stream_count() == 0, "listen stream closed").await;
    c.close().await;
    f.listener.shutdown().await;
}

/// A one-shot raw server that records the first request head and answers 404 with no body.
async fn capture_head() -> (String, tokio::task::JoinHandle<Vec<String>>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let mut heads = Vec::new();
        for _ in 0..2 {
            let Ok(Ok((mut s, _))) = tokio::time::timeout(BOUND, l.accept()).await else {
                break;
            };
            let mut buf = vec![0u8; 16 * 1024];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match tokio::time::timeout(BOUND, s.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            heads.push(String::from_utf8_lossy(&got).into_owned());
            let _ = s
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
        heads
    });
    (format!("http://{addr}/mcp"), task)
}

#[tokio::test]
async fn http09_headers_on_the_wire_and_fallback_on_plain_404() {
    let (u, task) = capture_head().await;
    let opts = HttpClientOptions::default().header("Authorization", "Bearer t0k3n");
    let e = bounded(Client::builder().connect_http(&u, opts))
        .await
        .expect_err("nothing there");
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    let heads = bounded(task).await.expect("heads");
    assert_eq!(heads.len(), 2, "probe, then the initialize fallback");
    let probe = heads[0].to_ascii_lowercase();
    assert!(probe.contains("authorization: bearer t0k3n"));
    assert!(probe.contains("mcp-protocol-version: 2026-07-28"));
    assert!(probe.contains("mcp-method: server/discover"));
    assert!(probe.contains("accept: application/json, text/event-stream"));
    let init = heads[1].to_ascii_lowercase();
    assert!(init.contains("authorization: bearer t0k3n"));
    assert!(
        !init.contains("mcp-method"),
        "legacy requests carry no modern headers"
    );
}

#[tokio::test]
async fn bad_urls_are_argument_errors() {
    for u in ["ws://127.0.0.1/mcp", "ftp://x", "not a url"] {
        let e = Client::builder()
            .connect_http(u, HttpClientOptions::default())
            .await
            .expect_err("bad");
        assert!(matches!(e, ClientError::InvalidArgument(_)), "{u}: {e:?}");
    }
}

/// Serve `server` on 127.0.0.1 through a tampering front: `tools/list` results get `extra`
/// tool definitions appended. The server itself refuses to register invalid `x-mcp-header`
/// tools (HTTP-14), so this is how a client test meets a non-conforming server.
async fn serve_with_extra_tools(
    server: mcpcore::Server,
    extra: Value,
    injected: Arc<std::sync::atomic::AtomicUsize>,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    use http_body_util::{BodyExt, Either, Full};
    let svc = mcpcore::transport::http::HttpService::new(server, HttpOptions::default())
        .expect("service");
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = l.accept().await {
            let svc = svc.clone();
            let extra = extra.clone();
            let injected = injected.clone();
            let handler =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let svc = svc.clone();
                    let extra = extra.clone();
                    let injected = injected.clone();
                    async move {
                        let (parts, body) = req.into_parts();
                        let bytes = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let is_list = serde_json::from_slice::<Value>(&bytes)
                            .is_ok_and(|v| v["method"] == "tools/list");
                        let resp = svc
                            .handle(http::Request::from_parts(parts, Full::new(bytes)))
                            .await;
                        if !is_list {
                            return Ok::<_, std::convert::Infallible>(resp.map(Either::Left));
                        }
                        let (mut parts, body) = resp.into_parts();
                        let raw = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let mut v: Value = serde_json::from_slice(&raw).expect("tools/list JSON");
                        if let (Some(tools), Some(more)) =
                            (v["result"]["tools"].as_array_mut(), extra.as_array())
                        {
                            tools.extend(more.iter().cloned());
                            injected.fetch_add(1, Ordering::SeqCst);
                        }
                        let out = bytes::Bytes::from(v.to_string());
                        parts.headers.remove(http::header::CONTENT_LENGTH);
                        Ok(http::Response::from_parts(
                            parts,
                            Either::Right(Full::new(out)),
                        ))
                    }
                });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    (addr, task)
}

#[tokio::test]
async fn http14_tools_with_bad_x_mcp_header_are_dropped_from_the_http_view() {
    use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
    let ok = |_ctx, _a: Value| async move { Ok::<_, HandlerError>(CallToolResult::text("ok")) };
    let server = Server::builder("hdr", "1")
        .tool(
            Tool::new("good").input_schema(json!({"type": "object", "properties": {
                "q": {"type": "string", "x-mcp-header": "Q"}}})),
            handler_fn(ok),
        )
        .build()
        .expect("server");
    let bad = json!([
        {"name": "on_number", "inputSchema": {"type": "object", "properties": {
            "n": {"type": "number", "x-mcp-header": "N"}}}},
        {"name": "duplicate", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "X"},
            "b": {"type": "string", "x-mcp-header": "x"}}}},
        {"name": "in_items", "inputSchema": {"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}}
    ]);
    let injected = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (addr, task) = serve_with_extra_tools(server, bad, injected.clone()).await;
    let u = format!("http://{addr}/mcp");
    let c = bounded(Client::builder().connect_http(&u, HttpClientOptions::default()))
        .await
        .expect("connect");
    let tools = bounded(c.list_all_tools()).await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    assert!(
        injected.load(Ordering::SeqCst) >= 1,
        "the bad tools were listed"
    );
    let r = bounded(c.call_tool("good", json!({"q": "x y"})))
        .await
        .expect("mirrored header accepted");
    assert_eq!(r.content[0]["text"], "ok");
    c.close().await;
    task.abort();
}

/// LHTTP-04 SSE polling from the client side: the server closes the POST stream after the
/// priming event (event id + `retry`); the client waits `retry`, resumes with GET +
/// `Last-Event-ID`, and takes the response from the resumed stream.
#[tokio::test]
async fn lhttp04_client_resumes_a_closed_stream_with_last_event_id() {
    let mut opts = HttpOptions::default();
    opts.sse_retry_ms = 50;
    let f = Fixture::with(Limits::default(), opts).await;
    let c = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_http(&url(&f), HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    let r = bounded(c.call_tool("poll", json!({})))
        .await
        .expect("the response arrives on the resumed stream");
    assert_eq!(r.content[0]["text"], "closed=true");
    c.close().await;
}

/// LHTTP-02: the server ends the session (here: idle reaping); the next call meets a 404, the
/// client starts a new session without the old id and re-sends the call, once for concurrent
/// callers.
#[tokio::test]
async fn lhttp02_404_on_the_session_reinitializes_and_resends() {
    let mut opts = HttpOptions::default();
    opts.session_idle_timeout = Duration::from_millis(200);
    let f = Fixture::with(Limits::default(), opts).await;
    let mut http = HttpClientOptions::default();
    // No GET stream: it would keep the session busy (never idle).
    http.listen_stream = false;
    let c = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_http(&url(&f), http),
    )
    .await
    .expect("connect");
    bounded(c.call_tool("echo", json!({"text": "one"})))
        .await
        .expect("first session");
    let svc = f.listener.service().clone();
    wait_until(|| svc.legacy_session_count() == 0, "the session was reaped").await;
    let (a, b) = bounded(async {
        tokio::join!(
            c.call_tool("echo", json!({"text": "a"})),
            c.call_tool("echo", json!({"text": "b"})),
        )
    })
    .await;
    assert_eq!(
        a.expect("re-sent on the new session").content[0]["text"],
        "a"
    );
    assert_eq!(
        b.expect("re-sent on the new session").content[0]["text"],
        "b"
    );
    assert_eq!(svc.legacy_session_count(), 1, "one new session for both");
    assert_eq!(c.era(), Some(Era::Legacy));
    c.close().await;
    wait_until(|| svc.legacy_session_count() == 0, "session deleted").await;
    f.listener.shutdown().await;
}

/// CACHE-05 on the modern era: a notification arriving on a listen stream invalidates cached
/// results (the same invalidation as legacy list_changed/updated, tested in client_stdio.rs).
#[tokio::test]
async fn cache05_modern_listen_notifications_invalidate() {
    use mcpcore::{handler_fn, HandlerError, Resource, Server};
    use std::sync::atomic::AtomicUsize;
    let reads = Arc::new(AtomicUsize::new(0));
    let r2 = reads.clone();
    let server = Server::builder("cache", "1")
        .cache_hints(60_000, false)
        .resource(
            Resource::new("demo://counter", "counter"),
            handler_fn(move |_ctx, _v: Value| {
                let n = r2.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    Ok::<_, HandlerError>(
                        json!({"contents": [{"uri": "demo://counter", "text": n.to_string()}]}),
                    )
                }
            }),
        )
        .build()
        .expect("server");
    let listener = mcpcore::transport::http::serve(
        server.clone(),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let u = format!("http://{}/mcp", listener.local_addr());
    let c = bounded(
        Client::builder()
            .configure(|o| o.cache = true)
            .connect_http(&u, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    assert!(c.is_modern());
    let mut sub = bounded(c.listen(json!({"resourceSubscriptions": ["demo://counter"]})))
        .await
        .expect("listen");
    let read = || async {
        let r = bounded(c.read_resource("demo://counter"))
            .await
            .expect("read");
        assert_eq!(r.cache.ttl_ms, Some(60_000));
        r.contents[0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(read().await, "1");
    assert_eq!(read().await, "1", "served from the cache");
    assert_eq!(reads.load(Ordering::SeqCst), 1);
    server.notify_resource_updated("demo://counter");
    let n = bounded(sub.next()).await.expect("a notification");
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(read().await, "2", "the update dropped the cached read");
    sub.close().await;
    c.close().await;
    listener.shutdown().await;
}

/// A call still running when the server's shutdown deadline passes ends as `Closed`, in both
/// eras: the server answers 503 with a JSON-RPC error marked `data.reason = "shutdown"` for it
/// (not a bare 503, which the client could only report as a transport failure).
#[tokio::test]
async fn a_call_cut_by_server_shutdown_is_closed() {
    for mode in [ConnectMode::Modern, ConnectMode::Legacy] {
        let mut opts = HttpOptions::default();
        opts.shutdown_deadline = Duration::from_millis(100);
        let f = Fixture::with(Limits::default(), opts).await;
        let c = bounded(
            Client::builder()
                .mode(mode)
                .connect_http(&url(&f), HttpClientOptions::default()),
        )
        .await
        .expect("connect");
        let c = Arc::new(c);
        let busy = c.clone();
        let call = tokio::spawn(async move { busy.call_tool("slow", json!({"ms": 60_000})).await });
        let counters = f.counters.clone();
        wait_until(
            || counters.started.load(Ordering::SeqCst) == 1,
            "slow started",
        )
        .await;
        bounded(f.listener.shutdown()).await;
        let e = bounded(call).await.expect("join").expect_err("cut short");
        assert!(matches!(e, ClientError::Closed(_)), "{mode:?}: {e:?}");
        c.close().await;
    }
}
