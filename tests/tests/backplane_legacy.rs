//! Legacy Streamable HTTP sessions shared by several workers through Redis, without sticky
//! routing (REQUIREMENTS LHTTP-02, LHTTP-03, LHTTP-09, LC-01): three servers in this process,
//! each on its own 127.0.0.1 port, share one real `redis-server`; the client sends each request
//! to the next worker. Every message is validated against the 2025-11-25 schema.

use mcpcore::backplane::Backplane;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, Limits, RequestContext, Server, TaskOptions,
    TaskSupport, Tool,
};
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, McpHttp, WAIT};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

/// `n` workers sharing `url` under `prefix`.
async fn workers(n: usize, url: &str, prefix: &str, max_sessions: usize) -> Vec<Fixture> {
    let mut out = Vec::new();
    for _ in 0..n {
        let mut opts = HttpOptions::default();
        opts.legacy_stores.sweep = Duration::from_millis(100);
        opts.legacy_stores.poll = Duration::from_millis(20);
        opts.max_sessions = max_sessions;
        let bp = Backplane::redis(url)
            .expect("redis url")
            .with_prefix(prefix);
        out.push(Fixture::with_server_options(Limits::default(), opts, |o| o.backplane = bp).await);
    }
    out
}

/// The same session, addressed to another worker.
fn on(c: &McpHttp, f: &Fixture) -> McpHttp {
    on_addr(c, f.addr())
}

fn on_addr(c: &McpHttp, addr: std::net::SocketAddr) -> McpHttp {
    let mut o = c.clone();
    o.addr = addr;
    o
}

fn text(ex: &mcpcore_tests::http::Exchange) -> String {
    ex.last()
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text result in {:?}", ex.messages))
        .to_owned()
}

async fn log_on(c: &McpHttp, id: i64, level: &str) -> String {
    let ex = c
        .legacy(
            id,
            "tools/call",
            json!({"name": "log", "arguments": {"level": level, "message": "m"}}),
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    text(&ex)
}

/// Initialize on A, call a tool on B, set the log level on C: every worker serves the session
/// and sees the level; DELETE on C ends it everywhere (404 on A and B, B's GET stream closes).
#[tokio::test]
async fn lhttp02_a_session_is_served_by_every_worker() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t1:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = on(&a, &w[1]);
    let c = on(&a, &w[2]);

    let ex = b
        .legacy(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(text(&ex), "hi");
    // LHTTP-03 on a replica: the negotiated version came from the store.
    let mut wrong = b.clone();
    wrong.version = "2025-03-26".into();
    assert_eq!(wrong.legacy(2, "ping", json!({})).await.status, 400);

    assert_eq!(log_on(&a, 3, "info").await, "sent");
    let ex = c
        .legacy(4, "logging/setLevel", json!({"level": "error"}))
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(log_on(&a, 5, "info").await, "filtered", "A sees C's level");
    assert_eq!(log_on(&b, 6, "info").await, "filtered", "B sees C's level");
    assert_eq!(log_on(&b, 7, "error").await, "sent");

    // A session id nobody minted is unknown everywhere.
    let mut stranger = b.clone();
    stranger.session = Some("0123456789abcdef0123456789abcdef".into());
    assert_eq!(stranger.legacy(8, "ping", json!({})).await.status, 404);

    let mut stream = b.get(None).await;
    assert_eq!(stream.status, 200);
    assert_eq!(c.delete().await, 200);
    for x in [&a, &b, &c] {
        let ex = x.legacy(9, "ping", json!({})).await;
        assert_eq!(ex.status, 404, "{:?}", ex.messages);
        assert_eq!(ex.code(), Some(-32600));
    }
    let ended = tokio::time::timeout(WAIT, async {
        while stream.next_data_event().await.is_some() {}
    })
    .await;
    assert!(
        ended.is_ok(),
        "B's GET stream must close once C ended the session"
    );
    assert_eq!(w[0].listener.service().legacy_session_count(), 0);
}

/// LHTTP-09: the session cap counts sessions across workers.
#[tokio::test]
async fn lhttp09_the_cap_counts_every_worker() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t2:", 2).await;
    let mut a = w[0].client();
    a.initialize().await;
    let mut b = w[1].client();
    b.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "third", "version": "1"}}});
    let c = w[2].client();
    let h: Vec<(String, String)> = c
        .legacy_headers()
        .into_iter()
        .filter(|(k, _)| k != "MCP-Protocol-Version")
        .collect();
    let ex = c.post(&h, &msg, Era::Legacy).await;
    assert_eq!(ex.status, 503, "{:?}", ex.messages);
    // Ending one (on another worker than the one that made it) frees a slot.
    assert_eq!(on(&a, &w[2]).delete().await, 200);
    let ex = c.post(&h, &msg, Era::Legacy).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
}

/// Redis down: requests that need the store get 503 + `Retry-After` (never a silent local
/// fallback); once Redis is back, new sessions work again.
#[tokio::test]
async fn redis_down_is_503_then_recovery() {
    let mut redis = RedisServer::start();
    let w = workers(2, &redis.url(0), "t3:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = on(&a, &w[1]);
    assert_eq!(b.legacy(1, "ping", json!({})).await.status, 200);

    redis.stop();
    for x in [&a, &b] {
        let ex = x.legacy(2, "ping", json!({})).await;
        assert_eq!(ex.status, 503, "{:?}", ex.messages);
        assert!(ex.header("retry-after").is_some());
        assert_eq!(ex.code(), Some(-32603));
    }
    let mut fresh = w[1].client();
    let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let h: Vec<(String, String)> = fresh
        .legacy_headers()
        .into_iter()
        .filter(|(k, _)| k != "MCP-Protocol-Version")
        .collect();
    let ex = fresh.post(&h, &msg, Era::Legacy).await;
    assert_eq!(ex.status, 503, "{:?}", ex.messages);
    assert!(ex.header("retry-after").is_some());

    redis.restart();
    // The restarted Redis is empty (no persistence): the old session is gone everywhere.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let st = b.legacy(3, "ping", json!({})).await.status;
        if st == 404 {
            break;
        }
        assert_eq!(st, 503, "only 503 while reconnecting");
        assert!(tokio::time::Instant::now() < deadline, "no recovery");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fresh.initialize().await;
    let ex = on(&fresh, &w[0]).legacy(4, "ping", json!({})).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
}

/// LHTTP-04 + LHTTP-06 across workers: a client that lost A's POST stream mid-call resumes it
/// with `Last-Event-ID` on B and receives the rest, including the response; streams of one
/// session opened on different workers never share event ids.
#[tokio::test]
async fn lhttp04_resume_a_stream_on_another_worker() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t4:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = on(&a, &w[1]);
    let call = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 400}, "_meta": {"progressToken": "p"}}});
    let mut r = a
        .post_raw(&a.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert!(r.content_type().starts_with("text/event-stream"));
    let first = r.next_data_event().await.expect("a progress event");
    let eid = first.id.clone().expect("legacy events carry ids");
    let v: Value = serde_json::from_str(&first.data).expect("JSON");
    check(Era::Legacy, &v, Some("tools/call"));
    assert_eq!(v["method"], "notifications/progress");
    r.close();

    let mut g = b.get(Some(&eid)).await;
    assert_eq!(g.status, 200);
    let mut seen = vec![eid.clone()];
    let mut last = Value::Null;
    while let Some(e) = g.next_data_event().await {
        let v: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &v, Some("tools/call"));
        seen.push(e.id.clone().expect("id"));
        last = v;
    }
    assert_eq!(last["id"], 42, "the response arrives on B: {seen:?}");
    assert_eq!(last["result"]["content"][0]["text"], "slept 400 ms");
    assert!(
        seen.len() >= 3,
        "the rest of the progress, then the response: {seen:?}"
    );
    let mut uniq = seen.clone();
    uniq.dedup();
    assert_eq!(uniq, seen, "no event twice");

    // A finished stream resumes on a third worker from its priming id: everything again.
    let prime = format!("{}_0", eid.split('_').next().expect("stream part"));
    let mut g = on(&a, &w[2]).get(Some(&prime)).await;
    assert_eq!(g.status, 200);
    let mut n = 0;
    while let Some(e) = g.next_data_event().await {
        let v: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &v, Some("tools/call"));
        n += 1;
    }
    assert_eq!(n, seen.len());

    // Two workers' streams of one session: distinct stream numbers, hence distinct ids.
    let mut ids = Vec::new();
    for (i, x) in [&a, &b].into_iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": 50 + i, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"ms": 40}, "_meta": {"progressToken": "q"}}});
        let mut r = x
            .post_raw(&x.legacy_headers(), call.to_string().as_bytes())
            .await;
        let e = r.next_data_event().await.expect("an event");
        ids.push(e.id.expect("id").split('_').next().map(str::to_owned));
        while r.next_data_event().await.is_some() {}
    }
    assert_ne!(ids[0], ids[1]);
}

/// LHTTP-08 across workers: a handler on A asks the client (`sampling/createMessage` on A's
/// POST stream); the client POSTs its response to C, and the handler on A receives it.
#[tokio::test]
async fn lhttp08_a_response_posted_to_another_worker_reaches_the_handler() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t5:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let c = on(&a, &w[2]);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask", "arguments": {"prompt": "hi", "timeout_ms": 5000}}});
    let mut r = a
        .post_raw(&a.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert!(r.content_type().starts_with("text/event-stream"));
    let ask = r.next_data_event().await.expect("the sampling request");
    let req: Value = serde_json::from_str(&ask.data).expect("JSON");
    check(Era::Legacy, &req, None);
    assert_eq!(req["method"], "sampling/createMessage");
    let rid = req["id"].as_i64().expect("numeric id");
    assert!(rid >= 1 << 20, "a worker-tagged id: {rid}");
    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": {
        "role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}});
    check(Era::Legacy, &answer, Some("sampling/createMessage"));
    let posted = c.post(&c.legacy_headers(), &answer, Era::Legacy).await;
    assert_eq!(posted.status, 202);
    let mut last = Value::Null;
    while let Some(e) = r.next_data_event().await {
        let v: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &v, Some("tools/call"));
        last = v;
    }
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "pong", "{last}");
}

/// CAN-01 across workers: a client's `notifications/cancelled` POSTed to C cancels the handler
/// running on A (the request was POSTed to A).
#[tokio::test]
async fn can01_a_cancel_posted_to_another_worker_cancels_the_handler() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t6:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let c = on(&a, &w[2]);
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "hang", "arguments": {}, "_meta": {"progressToken": "h"}}});
    let mut r = a
        .post_raw(&a.legacy_headers(), call.to_string().as_bytes())
        .await;
    let first = r.next_data_event().await.expect("the handler started");
    let v: Value = serde_json::from_str(&first.data).expect("JSON");
    check(Era::Legacy, &v, Some("tools/call"));
    assert_eq!(v["method"], "notifications/progress");

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "changed my mind"}});
    check(Era::Legacy, &cancel, None);
    // Cancels are idempotent (CAN-01): resend until A's handler sees it, so the test does not
    // depend on when A's claim of the request reached Redis.
    let deadline = tokio::time::Instant::now() + WAIT;
    while w[0]
        .counters
        .cancelled
        .load(std::sync::atomic::Ordering::SeqCst)
        == 0
    {
        let ex = c.post(&c.legacy_headers(), &cancel, Era::Legacy).await;
        assert_eq!(ex.status, 202, "{:?}", ex.messages);
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handler on A was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for x in &w[1..] {
        let n = x
            .counters
            .cancelled
            .load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(n, 0, "only the worker running the request cancels");
    }
    // A cancelled request gets no response; its stream ends.
    let ended = tokio::time::timeout(WAIT, async {
        while let Some(e) = r.next_data_event().await {
            let v: Value = serde_json::from_str(&e.data).expect("JSON");
            check(Era::Legacy, &v, Some("tools/call"));
            assert!(v.get("result").is_none(), "no result after the cancel: {v}");
        }
    })
    .await;
    assert!(ended.is_ok(), "A's POST stream must end after the cancel");
}

/// Workers serving `ask_task`, a task tool whose handler asks the client for a sampling
/// (waiting up to `ask_ms`) after the request was answered: a legacy task's messages travel on
/// the session's standalone stream (TASK-L01).
async fn task_workers(n: usize, url: &str, prefix: &str) -> Vec<HttpListener> {
    let mut out = Vec::new();
    for _ in 0..n {
        let mut opts = HttpOptions::default();
        opts.legacy_stores.sweep = Duration::from_millis(100);
        opts.legacy_stores.poll = Duration::from_millis(20);
        let bp = Backplane::redis(url)
            .expect("redis url")
            .with_prefix(prefix);
        let server = Server::builder("relay-fixture", "1")
            .backplane(bp)
            .tasks(TaskOptions::default())
            .task_tool(
                Tool::new("ask_task").input_schema(json!({"type": "object",
                    "properties": {"ask_ms": {"type": "integer"}}})),
                TaskSupport::Optional,
                handler_fn(|ctx: RequestContext, args: Value| async move {
                    let wait = Duration::from_millis(args["ask_ms"].as_u64().unwrap_or(10_000));
                    let r = ctx
                        .create_message(
                            json!({"messages": [{"role": "user",
                                "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}),
                            Some(wait),
                        )
                        .await
                        .map_err(HandlerError::from)?;
                    let text = r.pointer("/content/text").and_then(Value::as_str);
                    Ok(CallToolResult::text(text.unwrap_or_default()))
                }),
            )
            .build()
            .expect("server builds");
        let addr = "127.0.0.1:0".parse().expect("addr");
        out.push(serve(server, addr, opts).await.expect("listen"));
    }
    out
}

fn at(c: &McpHttp, l: &HttpListener) -> McpHttp {
    let mut o = c.clone();
    o.addr = l.local_addr();
    o
}

/// The next JSON message on an SSE stream, schema-checked, with its event id; `None` when the
/// stream ended.
async fn next_message(r: &mut mcpcore_tests::http::HttpReply) -> Option<(String, Value)> {
    let e = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("a message in time")?;
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, None);
    Some((e.id.expect("legacy events carry ids"), v))
}

/// Read `r` until task `task`'s `notifications/tasks/status` says `status`; the event ids seen.
async fn until_status(
    r: &mut mcpcore_tests::http::HttpReply,
    task: &str,
    status: &str,
) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let (id, v) = next_message(r).await.expect("the GET stream open");
        ids.push(id);
        let p = &v["params"];
        if v["method"] == "notifications/tasks/status"
            && p["taskId"] == task
            && p["status"] == status
        {
            return ids;
        }
    }
}

fn stream_of(event_id: &str) -> &str {
    event_id.split('_').next().unwrap_or_default()
}

async fn start_task(c: &McpHttp, id: i64, ask_ms: u64) -> String {
    let ex = c
        .legacy(
            id,
            "tools/call",
            json!({"name": "ask_task", "arguments": {"ask_ms": ask_ms}, "task": {}}),
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    let task = ex
        .last()
        .pointer("/result/task/taskId")
        .and_then(Value::as_str);
    task.unwrap_or_else(|| panic!("a task: {:?}", ex.messages))
        .to_owned()
}

/// LHTTP-05 + LHTTP-08 across workers: a handler on A (a legacy task's, after its request was
/// answered) asks the client on the session's standalone stream; the request reaches the GET
/// stream open on B, with an id tagged for A; the answer POSTed to C reaches the handler on A,
/// and the task's final status reaches B's GET stream too. LHTTP-04/06: the GET stream, lost on
/// B, resumes on C with `Last-Event-ID` (event ids never collide between workers) and carries
/// A's next request. With no GET stream open anywhere, the same request fails at once, as in
/// one process (not after its 60 s timeout).
#[tokio::test]
async fn lhttp05_standalone_messages_reach_the_get_stream_on_another_worker() {
    let redis = RedisServer::start();
    let w = task_workers(3, &redis.url(0), "t7:").await;
    let mut a = McpHttp::new(w[0].local_addr());
    a.initialize().await;
    let (b, c) = (at(&a, &w[1]), at(&a, &w[2]));
    let mut get = b.get(None).await;
    assert_eq!(get.status, 200);

    let task = start_task(&a, 1, 10_000).await;
    let (ask_eid, ask) = loop {
        let (id, v) = next_message(&mut get).await.expect("B's GET stream open");
        if v["method"] == "sampling/createMessage" {
            break (id, v);
        }
    };
    assert_ne!(
        stream_of(&ask_eid),
        "0",
        "a worker-specific standalone stream"
    );
    let rid = ask["id"].as_i64().expect("numeric id");
    assert!(rid >= 1 << 20, "a worker-tagged id: {rid}");
    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": {
        "role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}});
    check(Era::Legacy, &answer, Some("sampling/createMessage"));
    let posted = c.post(&c.legacy_headers(), &answer, Era::Legacy).await;
    assert_eq!(posted.status, 202);
    let on_b = until_status(&mut get, &task, "completed").await;
    let ex = c.legacy(2, "tasks/result", json!({"taskId": task})).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(
        ex.last()["result"]["content"][0]["text"],
        "pong",
        "{:?}",
        ex.messages
    );

    // LHTTP-04/06: B's GET connection is lost; the client resumes after the sampling request on
    // C and receives the rest of B's stream (up to the final status), then C's own stream.
    get.close();
    let mut get = c.get(Some(&ask_eid)).await;
    assert_eq!(get.status, 200);
    let on_c = until_status(&mut get, &task, "completed").await;
    assert_eq!(
        on_c, on_b,
        "B's events after the sampling request, once each"
    );
    // The resumed stream is C's standalone stream now: the next request from A arrives here.
    let task = start_task(&a, 3, 10_000).await;
    let (eid, ask) = loop {
        let (id, v) = next_message(&mut get).await.expect("C's GET stream open");
        if v["method"] == "sampling/createMessage" {
            break (id, v);
        }
    };
    assert_ne!(
        stream_of(&eid),
        stream_of(&ask_eid),
        "C numbers its own stream"
    );
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}});
    assert_eq!(
        b.post(&b.legacy_headers(), &answer, Era::Legacy)
            .await
            .status,
        202
    );
    until_status(&mut get, &task, "completed").await;
    get.close();

    // No GET stream anywhere (C notices its reader left and releases the stream).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let task = start_task(&a, 5, 60_000).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let ex = c.legacy(4, "tasks/get", json!({"taskId": task})).await;
        assert_eq!(ex.status, 200, "{:?}", ex.messages);
        let status = ex.last()["result"]["status"].clone();
        if status == "failed" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the request must fail at once with no reader: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A worker whose `confirm {question}` tool answers `input_required` (one form elicitation)
/// until the legacy shim re-runs it with the answer.
async fn confirm_worker(url: &str, prefix: &str) -> mcpcore::transport::http::HttpListener {
    let mut opts = HttpOptions::default();
    opts.legacy_stores.poll = Duration::from_millis(20);
    let bp = Backplane::redis(url)
        .expect("redis url")
        .with_prefix(prefix);
    let server = mcpcore::Server::builder("confirm", "1")
        .options(|o| o.backplane = bp)
        .tool(
            mcpcore::Tool::new("confirm").input_schema(json!({"type": "object",
                "properties": {"question": {"type": "string"}}, "required": ["question"]})),
            mcpcore::handler_fn(|ctx: mcpcore::RequestContext, args: Value| async move {
                let q = args["question"].as_str().unwrap_or_default().to_owned();
                let Some(answer) = ctx.input_responses().and_then(|r| r.get("confirm")) else {
                    let ask = mcpcore::InputRequired::new().elicit(
                        "confirm",
                        json!({"mode": "form", "message": q, "requestedSchema": {
                            "type": "object", "properties": {"ok": {"type": "boolean"}}}}),
                    );
                    return Ok::<_, mcpcore::HandlerError>(mcpcore::Outcome::from(ask));
                };
                let ok = answer.pointer("/content/ok") == Some(&json!(true));
                let word = if ok { "confirmed" } else { "declined" };
                Ok(mcpcore::Outcome::from(mcpcore::CallToolResult::text(
                    format!("{word}: {q}"),
                )))
            }),
        )
        .build()
        .expect("server");
    let addr = "127.0.0.1:0".parse().expect("addr");
    mcpcore::transport::http::serve(server, addr, opts)
        .await
        .expect("listen")
}

/// MRTR-09 on replicas: `initialize` (declaring elicitation) runs on A,
/// `notifications/initialized` on B, and the `tools/call` of an input_required tool on C, which
/// never saw either. C's shim asks `elicitation/create` on the call's POST stream with a
/// C-tagged id; the answer, POSTed to A, is routed to C's waiting shim and the call completes
/// there. A session that did not declare elicitation is refused on a replica as on its origin
/// (-32603, nothing asked).
#[tokio::test]
async fn mrtr09_the_legacy_shim_asks_from_a_replica() {
    let redis = RedisServer::start();
    let url = redis.url(0);
    let mut w = Vec::new();
    for _ in 0..3 {
        w.push(confirm_worker(&url, "t6:").await);
    }
    let mut a = McpHttp::new(w[0].local_addr());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": a.version, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"}}});
    let h: Vec<(String, String)> = a
        .legacy_headers()
        .into_iter()
        .filter(|(k, _)| k != "MCP-Protocol-Version")
        .collect();
    let ex = a.post(&h, &init, Era::Legacy).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    a.session = ex.header("mcp-session-id").map(str::to_owned);
    let mut b = a.clone();
    b.addr = w[1].local_addr();
    let mut c = a.clone();
    c.addr = w[2].local_addr();
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        b.post(&b.legacy_headers(), &n, Era::Legacy).await.status,
        202
    );

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "confirm", "arguments": {"question": "ship it?"}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    if !r.content_type().starts_with("text/event-stream") {
        let body = r.body().await;
        panic!("nothing asked: {}", String::from_utf8_lossy(&body));
    }
    let ask = r.next_data_event().await.expect("the elicitation request");
    let req: Value = serde_json::from_str(&ask.data).expect("JSON");
    check(Era::Legacy, &req, None);
    assert_eq!(req["method"], "elicitation/create", "{req}");
    assert_eq!(req["params"]["message"], "ship it?");
    assert!(req["id"].as_i64().is_some_and(|id| id >= 1 << 20), "{req}");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"],
        "result": {"action": "accept", "content": {"ok": true}}});
    check(Era::Legacy, &answer, Some("elicitation/create"));
    assert_eq!(
        a.post(&a.legacy_headers(), &answer, Era::Legacy)
            .await
            .status,
        202
    );
    let mut last = Value::Null;
    while let Some(e) = r.next_data_event().await {
        last = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &last, Some("tools/call"));
    }
    assert_eq!(last["id"], 7);
    assert_eq!(
        last["result"]["content"][0]["text"], "confirmed: ship it?",
        "{last}"
    );

    // Without the capability (the default test client declares only sampling and roots).
    let mut plain = McpHttp::new(w[0].local_addr());
    plain.initialize().await;
    let on_b = on_addr(&plain, w[1].local_addr());
    let ex = on_b.post(&on_b.legacy_headers(), &call, Era::Legacy).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(
        ex.messages.len(),
        1,
        "nothing may be asked: {:?}",
        ex.messages
    );
    assert_eq!(ex.code(), Some(-32603));
}

/// JR-06 across workers: what the elements of a 2025-03-26 batch change (the log level, a
/// resource subscription) is written back like a single request's, so the session's next
/// request on another worker sees it.
#[tokio::test]
async fn jr06_a_batch_on_a_replica_writes_back_what_it_changes() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t7:", 100).await;
    let mut a = w[0].client();
    a.version = "2025-03-26".into();
    a.initialize().await;
    let (b, c) = (on(&a, &w[1]), on(&a, &w[2]));
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "error"}},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "demo://readme"}},
    ]);
    let mut r = b
        .post_raw(&b.legacy_headers(), batch.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    let body = r.json().await;
    let answers = body.as_array().expect("a JSON array answer");
    assert_eq!(answers.len(), 2, "{body}");
    let methods = ["logging/setLevel", "resources/subscribe"];
    for x in answers {
        let i = x["id"].as_u64().and_then(|i| i.checked_sub(1)).expect("id");
        check(Era::Legacy, x, methods.get(i as usize).copied());
        assert!(x.get("result").is_some(), "{x}");
    }
    assert_eq!(
        log_on(&c, 3, "info").await,
        "filtered",
        "C sees the batch's level"
    );
    // C's replica, made after the batch, knows the subscription.
    let mut stream = c.get(None).await;
    assert_eq!(stream.status, 200);
    assert!(w[0].server.notify_resource_updated("demo://readme") <= 1);
    let e = tokio::time::timeout(WAIT, stream.next_data_event())
        .await
        .expect("the update in time")
        .expect("an event");
    let n: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &n, None);
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], "demo://readme");
}

/// SUB-07 across workers: B's GET stream (its replica made before the subscription) hears the
/// update of a resource the client subscribed to on A, whichever worker raises it; a resource
/// the session did not subscribe to is not delivered.
#[tokio::test]
async fn sub07_an_update_reaches_a_get_stream_held_by_a_stale_replica() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t8:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = on(&a, &w[1]);
    let mut stream = b.get(None).await;
    assert_eq!(stream.status, 200);
    let sub = a
        .legacy(1, "resources/subscribe", json!({"uri": "demo://readme"}))
        .await;
    assert_eq!(sub.status, 200, "{:?}", sub.messages);
    for (k, f) in [&w[2], &w[1], &w[0]].into_iter().enumerate() {
        f.server.notify_resource_updated("demo://other");
        f.server.notify_resource_updated("demo://readme");
        let e = tokio::time::timeout(WAIT, stream.next_data_event())
            .await
            .unwrap_or_else(|_| panic!("update {k} in time"))
            .expect("an event");
        let n: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &n, None);
        assert_eq!(n["method"], "notifications/resources/updated", "{n}");
        assert_eq!(n["params"]["uri"], "demo://readme", "update {k}: {n}");
    }
}
