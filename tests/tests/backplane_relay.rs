//! Messages that must reach the worker holding something of a legacy session (REQUIREMENTS
//! CAN-01, LHTTP-05, TASK-L01 across workers): a client's cancel POSTed to any worker reaches the
//! one running the request, and what a handler sends on the session's standalone stream reaches
//! the GET stream wherever it is open. In-process workers on one real `redis-server`, each
//! request sent to a chosen worker; every message validated against the 2025-11-25 schema.

use mcpcore::backplane::Backplane;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, RequestContext, Server, TaskOptions, TaskSupport,
    Tool,
};
use mcpcore_tests::http::{check, McpHttp, WAIT};
use mcpcore_tests::redis::{workers, RedisServer};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

/// CAN-01 across workers: a client's `notifications/cancelled` POSTed to C cancels the handler
/// running on A (the request was POSTed to A).
#[tokio::test]
async fn can01_a_cancel_posted_to_another_worker_cancels_the_handler() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t6:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let c = a.at(w[2].addr());
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
            .request_state_keys(mcpcore_tests::redis::test_keys())
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
    let (b, c) = (a.at(w[1].local_addr()), a.at(w[2].local_addr()));
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
