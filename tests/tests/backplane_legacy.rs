//! Legacy Streamable HTTP sessions shared by several workers through Redis, without sticky
//! routing (REQUIREMENTS LHTTP-02, LHTTP-03, LHTTP-09, LC-01): three servers in this process,
//! each on its own 127.0.0.1 port, share one real `redis-server`; the client sends each request
//! to the next worker. Every message is validated against the 2025-11-25 schema.

use mcpcore_tests::fixture::log_on;
use mcpcore_tests::http::{check, WAIT};
use mcpcore_tests::redis::{workers, RedisServer};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

/// Initialize on A, call a tool on B, set the log level on C: every worker serves the session
/// and sees the level; DELETE on C ends it everywhere (404 on A and B, B's GET stream closes).
#[tokio::test]
async fn lhttp02_a_session_is_served_by_every_worker() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t1:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = a.at(w[1].addr());
    let c = a.at(w[2].addr());

    let ex = b
        .legacy(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(ex.text(), "hi");
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
    assert_eq!(a.at(w[2].addr()).delete().await, 200);
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
    let b = a.at(w[1].addr());
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
    let ex = fresh.at(w[0].addr()).legacy(4, "ping", json!({})).await;
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
    let b = a.at(w[1].addr());
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
    let mut g = a.at(w[2].addr()).get(Some(&prime)).await;
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
    let c = a.at(w[2].addr());
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
