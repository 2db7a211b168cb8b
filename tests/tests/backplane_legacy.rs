//! Legacy Streamable HTTP sessions shared by several workers through Redis, without sticky
//! routing (REQUIREMENTS LHTTP-02, LHTTP-03, LHTTP-09, LC-01): three servers in this process,
//! each on its own 127.0.0.1 port, share one real `redis-server`; the client sends each request
//! to the next worker. Every message is validated against the 2025-11-25 schema.

use mcpcore::backplane::Backplane;
use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{McpHttp, WAIT};
use mcpcore_tests::redis::RedisServer;
use serde_json::{json, Value};
use std::time::Duration;

/// `n` workers sharing `url` under `prefix`.
async fn workers(n: usize, url: &str, prefix: &str, max_sessions: usize) -> Vec<Fixture> {
    let mut out = Vec::new();
    for _ in 0..n {
        let mut opts = HttpOptions::default();
        opts.legacy_stores.sweep = Duration::from_millis(100);
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
    let mut o = c.clone();
    o.addr = f.addr();
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
    let ex = c.post(&h, &msg, mcpcore_tests::Era::Legacy).await;
    assert_eq!(ex.status, 503, "{:?}", ex.messages);
    // Ending one (on another worker than the one that made it) frees a slot.
    assert_eq!(on(&a, &w[2]).delete().await, 200);
    let ex = c.post(&h, &msg, mcpcore_tests::Era::Legacy).await;
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
    let ex = fresh.post(&h, &msg, mcpcore_tests::Era::Legacy).await;
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
