//! The embedder's seam, `HttpService::exchange`: one request in plain parts (method, target,
//! headers, body chunks), the answer as a head and body chunks. Every rule is the service's own:
//! the body cap (413, §0.6), `Origin` (403, HTTP-03), a body cut short (400), SSE streaming of
//! progress (HTTP-06), and dropping the exchange cancels a modern request (HTTP-08).

use mcpcore::transport::http::{Exchange, HttpOptions, HttpService};
use mcpcore::Limits;
use mcpcore_tests::fixture::{build, Counters};
use mcpcore_tests::http::{modern_headers, WAIT};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

fn service(limits: Limits) -> (HttpService, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let server = build(limits, counters.clone());
    let svc = server
        .http_service(HttpOptions::default())
        .expect("service");
    (svc, counters)
}

fn call(name: &str, args: Value, progress: bool) -> Vec<u8> {
    let mut meta = mcpcore_tests::stdio::envelope(json!({}));
    if progress {
        meta["progressToken"] = json!("p1");
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": name, "arguments": args, "_meta": meta}})
    .to_string()
    .into_bytes()
}

fn headers(name: &str) -> Vec<(String, String)> {
    let mut h = modern_headers("tools/call", Some(name));
    h.push(("Host".into(), "127.0.0.1".into()));
    h
}

async fn body_of(x: &mut Exchange) -> String {
    let mut out = Vec::new();
    while let Some(c) = tokio::time::timeout(WAIT, x.next_chunk())
        .await
        .expect("chunk in time")
    {
        out.extend_from_slice(&c);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A body pushed in three pieces is one request; the JSON answer comes back whole.
#[tokio::test]
async fn a_request_fed_in_pieces_is_answered_with_json() {
    let (svc, _) = service(Limits::default());
    let body = call("echo", json!({"text": "fed"}), false);
    let (mut feed, mut x) = svc.exchange("POST", "/mcp", headers("echo"));
    for piece in body.chunks(body.len() / 3 + 1) {
        assert!(feed.push(piece));
    }
    feed.end();
    let head = tokio::time::timeout(WAIT, x.head()).await.expect("head");
    assert_eq!(head.status, 200, "{head:?}");
    assert!(head
        .headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("application/json")));
    let v: Value = serde_json::from_str(&body_of(&mut x).await).expect("json");
    assert_eq!(v["result"]["content"][0]["text"], "fed", "{v}");
}

/// Over the cap: the feed stops taking bytes and the answer is 413; a foreign `Origin` is 403;
/// a body that never completes (the peer left) is 400; a malformed header is 400.
#[tokio::test]
async fn refusals_are_the_services_own() {
    let mut limits = Limits::default();
    limits.max_message_bytes = 1024;
    let (svc, _) = service(limits);
    let (mut feed, mut x) = svc.exchange("POST", "/mcp", headers("echo"));
    assert!(feed.push(&[b' '; 1000]));
    assert!(!feed.push(&[b' '; 1000]), "the feed refuses past the cap");
    feed.end();
    assert_eq!(x.head().await.status, 413);

    let mut h = headers("echo");
    h.push(("Origin".into(), "https://evil.example".into()));
    let (mut feed, mut x) = svc.exchange("POST", "/mcp", h);
    feed.push(&call("echo", json!({"text": "x"}), false));
    feed.end();
    assert_eq!(x.head().await.status, 403);

    let (mut feed, mut x) = svc.exchange("POST", "/mcp", headers("echo"));
    feed.push(b"{\"jsonrpc\":");
    feed.abort();
    assert_eq!(x.head().await.status, 400);

    let (_, mut x) = svc.exchange("POST", "/mcp", [("bad header", "v")]);
    assert_eq!(x.head().await.status, 400);
    let (_, mut x) = svc.exchange("PUT", "/mcp", headers("echo"));
    let head = x.head().await;
    assert_eq!(head.status, 405);
    assert!(head
        .headers
        .contains(&("allow".into(), "GET, POST, DELETE".into())));
}

/// Progress streams as SSE events before the result (HTTP-06), and dropping the exchange
/// mid-stream — the embedder's client disconnecting — cancels the handler (HTTP-08).
#[tokio::test]
async fn sse_streams_and_a_dropped_exchange_cancels_the_handler() {
    let (svc, counters) = service(Limits::default());
    let (mut feed, mut x) = svc.exchange("POST", "/mcp", headers("slow"));
    feed.push(&call("slow", json!({"ms": 200}), true));
    feed.end();
    let head = x.head().await;
    assert_eq!(head.status, 200);
    assert!(
        head.headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "text/event-stream"),
        "{head:?}"
    );
    let text = body_of(&mut x).await;
    let progress = text.find("notifications/progress").expect("progress event");
    let result = text.find("slept 200 ms").expect("result event");
    assert!(progress < result, "{text}");

    let (mut feed, mut x) = svc.exchange("POST", "/mcp", headers("hang"));
    feed.push(&call("hang", json!({}), true));
    feed.end();
    assert_eq!(x.head().await.status, 200);
    let first = tokio::time::timeout(WAIT, x.next_chunk())
        .await
        .expect("event");
    assert!(first.is_some());
    drop(x);
    let deadline = tokio::time::Instant::now() + WAIT;
    while counters.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "handler not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
