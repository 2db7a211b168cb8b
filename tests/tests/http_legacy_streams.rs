//! Legacy Streamable HTTP stream lifetime over a real socket (REQUIREMENTS LHTTP-04, LHTTP-05,
//! LHTTP-06, HTTP-06): disconnection is not cancellation, streams are resumable, and long
//! streams carry keep-alive comments. Every message is validated against the 2025-11-25 schema.

use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, McpHttp, WAIT};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Wait (bounded) until `counter` reaches `n`.
async fn wait_for(counter: &AtomicUsize, n: usize, what: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while counter.load(Ordering::SeqCst) < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never happened"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Send a legacy POST on a raw socket and return the socket without reading anything.
async fn post_and_hold(c: &McpHttp, msg: &Value) -> TcpStream {
    let mut s = tokio::time::timeout(WAIT, TcpStream::connect(c.addr))
        .await
        .expect("connect timeout")
        .expect("connect");
    let body = msg.to_string();
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n",
        c.path,
        c.addr.port()
    );
    for (k, v) in c.legacy_headers() {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).await.expect("write head");
    s.write_all(body.as_bytes()).await.expect("write body");
    s
}

/// LHTTP-04: a client that disconnects before the first byte of the answer does not cancel
/// the request; the handler runs to completion (its side effect is observable afterwards).
#[tokio::test]
async fn lhttp04_disconnect_before_the_answer_is_not_cancellation() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 400}}});
    let s = post_and_hold(&c, &call).await;
    wait_for(&f.counters.started, 1, "the slow call starting").await;
    drop(s);
    wait_for(&f.counters.completed, 1, "the slow call completing").await;
    assert_eq!(f.counters.cancelled.load(Ordering::SeqCst), 0);
    // The session is intact and the id is free again.
    let ex = c
        .legacy(
            41,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "after"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "after");
}

/// LHTTP-04 + LHTTP-06: a client that disconnects after an event of the POST stream resumes
/// with `Last-Event-ID` and receives the rest, including the response.
#[tokio::test]
async fn lhttp04_disconnect_mid_stream_then_resume_gets_the_result() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 400}, "_meta": {"progressToken": "p"}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert!(r.content_type().starts_with("text/event-stream"));
    let first = r.next_data_event().await.expect("a progress event");
    let eid = first.id.clone().expect("legacy events carry ids");
    let v: Value = serde_json::from_str(&first.data).expect("JSON");
    check(Era::Legacy, &v, Some("tools/call"));
    assert_eq!(v["method"], "notifications/progress");
    r.close();
    let mut g = c.get(Some(&eid)).await;
    assert_eq!(g.status, 200);
    let mut last = Value::Null;
    while let Some(e) = g.next_data_event().await {
        let v: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &v, Some("tools/call"));
        last = v;
    }
    assert_eq!(last["id"], 42);
    assert_eq!(last["result"]["content"][0]["text"], "slept 400 ms");
    assert_eq!(f.counters.cancelled.load(Ordering::SeqCst), 0);
}

fn short_keepalive() -> HttpOptions {
    let mut o = HttpOptions::default();
    o.keepalive = Some(Duration::from_millis(50));
    o
}

/// HTTP-06 / LHTTP-05: the standalone GET stream carries `:` keep-alive comments.
#[tokio::test]
async fn http06_get_stream_sends_keepalive_comments() {
    let f = Fixture::with(Limits::default(), short_keepalive()).await;
    let mut c = f.client();
    c.initialize().await;
    let mut g = c.get(None).await;
    assert_eq!(g.status, 200);
    let prime = g.next_event().await.expect("priming event");
    assert!(prime.id.is_some() && !prime.comment);
    let ka = g.next_event().await.expect("a keep-alive");
    assert!(ka.comment, "expected a comment line, got {ka:?}");
    // Comments are not replayable events: the next real event still arrives with its id.
    assert!(f.server.notify_tools_list_changed() >= 1);
    let e = g.next_data_event().await.expect("the notification");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, None);
    assert_eq!(v["method"], "notifications/tools/list_changed");
}

/// LHTTP-04 + HTTP-06: a quiet legacy call switches to SSE after one keep-alive interval (the
/// priming event makes it resumable), gets keep-alive comments, and after a disconnect the client
/// resumes with `Last-Event-ID` and receives the result.
#[tokio::test]
async fn lhttp04_quiet_call_is_resumable_and_kept_alive() {
    let f = Fixture::with(Limits::default(), short_keepalive()).await;
    let mut c = f.client();
    c.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 43, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 600}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("text/event-stream"));
    let prime = r.next_event().await.expect("priming event");
    let eid = prime.id.clone().expect("the priming event carries an id");
    assert!(prime.data.is_empty() && prime.retry.is_some());
    let ka = r.next_event().await.expect("a keep-alive");
    assert!(ka.comment, "expected a comment line, got {ka:?}");
    r.close();
    let mut g = c.get(Some(&eid)).await;
    assert_eq!(g.status, 200);
    let e = g.next_data_event().await.expect("the replayed response");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, Some("tools/call"));
    assert_eq!(v["id"], 43);
    assert_eq!(v["result"]["content"][0]["text"], "slept 600 ms");
    assert!(g.next_data_event().await.is_none());
    assert_eq!(f.counters.cancelled.load(Ordering::SeqCst), 0);
}

/// LHTTP-05: the standalone GET stream has one reader at a time. Resuming it with
/// `Last-Event-ID` while a reader is attached is 409, like a second plain GET, and the reader
/// keeps every later message; once that reader is gone the stream resumes with the replay.
#[tokio::test]
async fn lhttp05_resume_cannot_take_over_a_live_standalone_stream() {
    let f = Fixture::start().await;
    let mut c = f.client();
    c.initialize().await;
    let mut g = c.get(None).await;
    assert_eq!(g.status, 200);
    let prime = g.next_event().await.expect("priming event");
    let eid = prime.id.expect("the priming event carries an id");
    let mut second = c.get(Some(&eid)).await;
    assert_eq!(second.status, 409);
    let _ = second.body().await;
    assert!(f.server.notify_tools_list_changed() >= 1);
    let e = g
        .next_data_event()
        .await
        .expect("the first reader keeps the stream");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, None);
    assert_eq!(v["method"], "notifications/tools/list_changed");
    g.close();
    // Closing is noticed asynchronously; the resume succeeds once it is.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut resumed = loop {
        let r = c.get(Some(&eid)).await;
        if r.status == 200 {
            break r;
        }
        assert_eq!(r.status, 409);
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot never freed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let e = resumed.next_data_event().await.expect("the replayed event");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, None);
    assert_eq!(v["method"], "notifications/tools/list_changed");
}
