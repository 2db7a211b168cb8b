//! What a client can make the shared store keep for one legacy session (LHTTP-08 across
//! workers): only answers to server→client requests a worker actually sent are routed, one
//! answer per request, and the bytes routed messages take in Redis per session are capped.
//! Real `redis-server`; the forged answers go through the real HTTP endpoint on 127.0.0.1.

use mcpcore::backplane::{Backplane, RouteLimits};
use mcpcore::security::{KeyRing, SealKey};
use mcpcore::transport::http::HttpOptions;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::McpHttp;
use mcpcore_tests::redis::RedisServer;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::time::Duration;

/// Two fixture workers (the `ask` tool among them) sharing the Redis at `url`, with configured
/// request-state keys.
async fn workers(url: &str) -> Vec<Fixture> {
    let mut out = Vec::new();
    for _ in 0..2 {
        let mut opts = HttpOptions::default();
        opts.legacy_stores.poll = Duration::from_millis(20);
        let bp = Backplane::redis(url).expect("redis url").with_prefix("fa:");
        let ring = KeyRing::new(SealKey::new("k1", [9u8; 32]).expect("key"));
        let f = Fixture::with_server_options(mcpcore::Limits::default(), opts, |o| {
            o.backplane = bp;
            o.request_state.keys = Some(ring);
        })
        .await;
        out.push(f);
    }
    out
}

/// `used_memory` from `INFO memory`, over RESP on a plain socket.
fn used_memory(redis: &RedisServer) -> u64 {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", redis.port())).expect("redis");
    s.write_all(b"*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n")
        .expect("write");
    let mut r = BufReader::new(s);
    let mut head = String::new();
    r.read_line(&mut head).expect("read");
    let len: usize = head
        .trim_start_matches('$')
        .trim()
        .parse()
        .expect("a bulk reply");
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).expect("read");
    let text = String::from_utf8_lossy(&body).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory")
}

/// POST `msg` on `c`'s session; the status.
async fn post_status(c: &McpHttp, msg: &[u8]) -> u16 {
    let mut r = c.post_raw(&c.legacy_headers(), msg).await;
    let _ = r.body().await;
    r.status
}

/// 1,000 forged answers of 1 MB, each with an id naming another "worker" tag, POSTed to a
/// worker of a shared session: each is accepted like any answer to an unknown request (202,
/// LHTTP-08), none is stored, and Redis memory stays flat. A real answer through another worker
/// still reaches the asking handler afterwards.
#[tokio::test]
async fn lhttp08_forged_answers_leave_redis_flat() {
    let redis = RedisServer::start();
    let w = workers(&redis.url(0)).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = a.at(w[1].addr());
    // B holds a replica (and its own tag) before the flood.
    assert_eq!(
        post_status(&b, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await,
        200
    );

    let before = used_memory(&redis);
    let filler = "x".repeat(1 << 20);
    let b = Arc::new(b);
    for batch in 0..125u64 {
        let mut posts = Vec::new();
        for i in 0..8u64 {
            let n = batch * 8 + i + 1;
            let id = (n << 20) | 1;
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"v":"{filler}"}}}}}}"#
            );
            let (b, body) = (b.clone(), body.into_bytes());
            posts.push(tokio::spawn(async move { post_status(&b, &body).await }));
        }
        for p in posts {
            assert_eq!(p.await.expect("post"), 202);
        }
    }
    let after = used_memory(&redis);
    let grown = after.saturating_sub(before);
    assert!(
        grown < 4 << 20,
        "1,000 forged 1 MB answers grew Redis by {grown} bytes ({before} → {after})"
    );

    // Legit routing still works: A asks, the answer goes to B, A's handler gets it.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask", "arguments": {"prompt": "hi", "timeout_ms": 5000}}});
    let mut r = a
        .post_raw(&a.legacy_headers(), call.to_string().as_bytes())
        .await;
    let ask = r.next_data_event().await.expect("the sampling request");
    let req: serde_json::Value = serde_json::from_str(&ask.data).expect("JSON");
    let rid = req["id"].as_i64().expect("numeric id");
    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": {
        "role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"}});
    assert_eq!(post_status(&b, answer.to_string().as_bytes()).await, 202);
    let mut last = serde_json::Value::Null;
    while let Some(e) = r.next_data_event().await {
        last = serde_json::from_str(&e.data).expect("JSON");
    }
    assert_eq!(last["result"]["content"][0]["text"], "pong", "{last}");
}

/// The store routes a message only to a claim another replica holds, consumes an answer's claim
/// (`q:<id>`, one answer per request), and caps the bytes waiting for a session across its
/// replicas: past `max_bytes` messages are dropped until the holder takes its list.
#[tokio::test]
async fn lhttp08_routed_bytes_are_capped_per_session() {
    let redis = RedisServer::start();
    let store = Backplane::redis(&redis.url(0))
        .expect("url")
        .with_prefix("cap:")
        .session_store();
    let sid: Arc<str> = Arc::from("s1");
    let limits = RouteLimits {
        ttl_ms: 60_000,
        max_bytes: 1 << 20,
    };
    let route = |what: &str, msg: String| store.route_to(sid.clone(), what.into(), 8, msg, limits);
    assert!(!route("q:5", "{}".into()).await.expect("redis"), "no claim");
    store
        .claim(sid.clone(), "q:5".into(), 7, 60_000)
        .await
        .expect("redis");
    assert!(
        !store
            .route_to(sid.clone(), "q:5".into(), 7, "{}".into(), limits)
            .await
            .expect("redis"),
        "never to the sender itself"
    );
    assert!(route("q:5", "{\"a\":1}".into()).await.expect("redis"));
    assert!(
        !route("q:5", "{\"a\":2}".into()).await.expect("redis"),
        "claim consumed"
    );

    // A claim that stays (an in-flight request's, for cancels): 100 KB messages until the cap.
    store
        .claim(sid.clone(), "r:1".into(), 7, 60_000)
        .await
        .expect("redis");
    let big = format!("{{\"r\":\"{}\"}}", "y".repeat(100_000));
    let mut routed = 0;
    for _ in 0..50 {
        if route("r:1", big.clone()).await.expect("redis") {
            routed += 1;
        }
    }
    assert_eq!(
        routed, 10,
        "1 MiB holds ten 100 KB messages (and the answer)"
    );
    let taken = store.take_routed(sid.clone(), 7).await.expect("redis");
    assert_eq!(taken.len(), 11);
    assert_eq!(taken[0], "{\"a\":1}");
    // Taken: room again.
    assert!(route("r:1", big).await.expect("redis"));
}
