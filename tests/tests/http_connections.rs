//! Connection-level protection of the standalone HTTP listener against hostile or dead peers,
//! over real sockets on 127.0.0.1: header, body, idle and write-stall deadlines, and the
//! connection cap (`HttpOptions::{header_read_timeout, body_read_timeout,
//! connection_idle_timeout, write_stall_timeout, max_connections}`). Every wait is bounded.

use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Limits, Server, Tool};
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, modern_headers};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const LONG: Duration = Duration::from_secs(30);

/// Options with every connection deadline long, edited by `f`.
fn opts(f: impl FnOnce(&mut HttpOptions)) -> HttpOptions {
    let mut o = HttpOptions::default();
    o.header_read_timeout = LONG;
    o.body_read_timeout = LONG;
    o.connection_idle_timeout = LONG;
    o.write_stall_timeout = LONG;
    f(&mut o);
    o
}

async fn connect(addr: SocketAddr) -> TcpStream {
    tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
        .await
        .expect("connect timeout")
        .expect("connect")
}

/// Read until the server closes the connection (EOF or reset), at most `bound`. Returns how long
/// that took and what was read; panics when the connection is still open at `bound`.
async fn until_closed(s: &mut TcpStream, bound: Duration) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let left = bound.saturating_sub(start.elapsed());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => panic!("connection still open after {bound:?}"),
            Ok(Ok(0) | Err(_)) => return (start.elapsed(), got),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

fn echo_request(addr: SocketAddr, text: &str) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": text}, "_meta": envelope(json!({}))}})
    .to_string();
    request_bytes(addr, "echo", &body)
}

fn request_bytes(addr: SocketAddr, tool: &str, body: &str) -> Vec<u8> {
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", addr.port());
    for (k, v) in modern_headers("tools/call", Some(tool)) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    head.into_bytes()
}

/// Read one response with a `Content-Length` body from a kept-alive connection.
async fn read_response(s: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert!(buf.len() < 64 * 1024, "response head too long");
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut byte))
            .await
            .expect("response head timeout")
            .expect("response head");
        assert_eq!(n, 1, "connection closed inside a response head");
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("status");
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("a Content-Length answer");
    let mut body = vec![0u8; len];
    tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut body))
        .await
        .expect("response body timeout")
        .expect("response body");
    (status, body)
}

/// Wait (bounded) until `cond` holds.
async fn eventually(what: &str, bound: Duration, cond: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < bound, "{what}: not within {bound:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    start.elapsed()
}

/// A peer that connects and sends nothing is disconnected after `header_read_timeout`.
#[tokio::test]
async fn silent_connection_is_closed_after_header_read_timeout() {
    let f = Fixture::with(
        Limits::default(),
        opts(|o| o.header_read_timeout = Duration::from_millis(300)),
    )
    .await;
    let mut s = connect(f.addr()).await;
    let (took, got) = until_closed(&mut s, Duration::from_secs(5)).await;
    assert!(got.is_empty(), "nothing is answered to nothing");
    assert!(
        took >= Duration::from_millis(200),
        "closed too early: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "closed too late: {took:?}");
    eventually("slot released", Duration::from_secs(3), || {
        f.listener.open_connections() == 0
    })
    .await;
}

/// Half a header, even trickled a line at a time (each line well inside the timeout), is cut
/// off once the whole head has taken `header_read_timeout`: the deadline is for the head, not
/// for each read.
#[tokio::test]
async fn trickled_half_header_is_closed_after_header_read_timeout() {
    let f = Fixture::with(
        Limits::default(),
        opts(|o| o.header_read_timeout = Duration::from_millis(500)),
    )
    .await;
    let s = connect(f.addr()).await;
    let (mut r, mut w) = s.into_split();
    let writer = tokio::spawn(async move {
        let _ = w.write_all(b"POST /mcp HTTP/1.1\r\n").await;
        for i in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if w.write_all(format!("X-Slow-{i}: x\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        w
    });
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    let closed = loop {
        match tokio::time::timeout(Duration::from_secs(5), r.read(&mut buf)).await {
            Err(_) => break false,
            Ok(Ok(0) | Err(_)) => break true,
            Ok(Ok(_)) => {}
        }
    };
    let took = start.elapsed();
    writer.abort();
    assert!(closed, "a trickled head held the connection");
    assert!(
        took >= Duration::from_millis(400),
        "closed too early: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "closed too late: {took:?}");
}

/// A body that stops arriving (Content-Length larger than what is sent) is answered 408 with
/// a JSON-RPC -32600 error after `body_read_timeout`, and the connection is closed.
#[tokio::test]
async fn half_body_is_answered_408_and_closed() {
    let f = Fixture::with(
        Limits::default(),
        opts(|o| o.body_read_timeout = Duration::from_millis(400)),
    )
    .await;
    let mut s = connect(f.addr()).await;
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n",
        f.addr().port()
    );
    for (k, v) in modern_headers("tools/call", Some("echo")) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Content-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",");
    s.write_all(head.as_bytes()).await.expect("write");
    let (took, got) = until_closed(&mut s, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "got {text:?}");
    assert!(text
        .to_ascii_lowercase()
        .contains("\r\nconnection: close\r\n"));
    let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or_default();
    let v: Value = serde_json::from_str(body).expect("a JSON-RPC error body");
    check(Era::Modern, &v, None);
    assert_eq!(v["error"]["code"], -32600);
    assert!(
        took >= Duration::from_millis(300),
        "answered too early: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "answered too late: {took:?}");
}

/// After a complete exchange, a kept-alive connection with nothing more to do is closed after
/// `connection_idle_timeout` (the header deadline, much longer here, does not decide it).
#[tokio::test]
async fn idle_keep_alive_connection_is_closed_after_idle_timeout() {
    let f = Fixture::with(
        Limits::default(),
        opts(|o| o.connection_idle_timeout = Duration::from_millis(500)),
    )
    .await;
    let mut s = connect(f.addr()).await;
    s.write_all(&echo_request(f.addr(), "hi"))
        .await
        .expect("write");
    let (status, body) = read_response(&mut s).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let (took, got) = until_closed(&mut s, Duration::from_secs(5)).await;
    assert!(got.is_empty());
    // The server's idle clock starts as the answer leaves, a little before the client has
    // read it: allow for that.
    assert!(
        took >= Duration::from_millis(250),
        "closed too early: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "closed too late: {took:?}");
}

/// The idle time between keep-alive requests is governed by `connection_idle_timeout`, not by
/// the (shorter) header deadline: a client that pauses longer than the header timeout between
/// two requests on one connection is still served.
#[tokio::test]
async fn pause_between_requests_is_not_cut_by_header_timeout() {
    let f = Fixture::with(
        Limits::default(),
        opts(|o| {
            o.header_read_timeout = Duration::from_millis(300);
            o.connection_idle_timeout = Duration::from_secs(5);
        }),
    )
    .await;
    let mut s = connect(f.addr()).await;
    for text in ["one", "two"] {
        s.write_all(&echo_request(f.addr(), text))
            .await
            .expect("write");
        let (status, body) = read_response(&mut s).await;
        assert_eq!(status, 200);
        let v: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(v["result"]["content"][0]["text"], text);
        tokio::time::sleep(Duration::from_millis(800)).await;
    }
}

const BIG: usize = 8 * 1024 * 1024;

/// A server whose `big` tool answers with `BIG` bytes of text.
async fn big_answer_server(o: HttpOptions) -> HttpListener {
    let server = Server::builder("big", "1")
        .tool(
            Tool::new("big"),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text("x".repeat(BIG)))
            }),
        )
        .build()
        .expect("server");
    serve(server, "127.0.0.1:0".parse().expect("addr"), o)
        .await
        .expect("listen")
}

/// A peer that asks for a large answer and never reads it (its receive window fills up) is
/// cut off after `write_stall_timeout`: the connection ends and its slot (and the answer it
/// pinned) is released, although the client never closed anything. Draining afterwards yields
/// only part of the answer, then EOF or reset.
#[tokio::test]
async fn stalled_reader_is_cut_off_after_write_stall_timeout() {
    let l = big_answer_server(opts(|o| o.write_stall_timeout = Duration::from_millis(500))).await;
    let addr = l.local_addr();
    let sock = TcpSocket::new_v4().expect("socket");
    // A small receive buffer (set before connecting, so the window stays small) makes the
    // server's writes stall long before the answer is sent.
    sock.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    let mut s = tokio::time::timeout(Duration::from_secs(5), sock.connect(addr))
        .await
        .expect("connect timeout")
        .expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "big", "arguments": {}, "_meta": envelope(json!({}))}})
    .to_string();
    s.write_all(&request_bytes(addr, "big", &body))
        .await
        .expect("write");
    eventually("connection open", Duration::from_secs(3), || {
        l.open_connections() == 1
    })
    .await;
    let took = eventually("stalled connection cut off", Duration::from_secs(8), || {
        l.open_connections() == 0
    })
    .await;
    assert!(
        took >= Duration::from_millis(400),
        "cut too early: {took:?}"
    );
    let (_, got) = until_closed(&mut s, Duration::from_secs(5)).await;
    assert!(
        got.len() < BIG,
        "the whole answer arrived ({} bytes): nothing was cut",
        got.len()
    );
    l.shutdown().await;
}

fn sse_quiet_opts(keepalive: Option<Duration>) -> HttpOptions {
    opts(|o| {
        o.header_read_timeout = Duration::from_millis(300);
        o.connection_idle_timeout = Duration::from_millis(300);
        o.write_stall_timeout = Duration::from_millis(300);
        o.keepalive = keepalive;
    })
}

/// An open `subscriptions/listen` stream with nothing to say (no keep-alives either) is a
/// request in progress: no header, idle or write-stall deadline closes it, and a change long
/// after those deadlines still arrives.
#[tokio::test]
async fn idle_listen_stream_outlives_every_connection_deadline() {
    let f = Fixture::with(Limits::default(), sse_quiet_opts(None)).await;
    let msg = json!({"jsonrpc": "2.0", "id": "l1", "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true}, "_meta": envelope(json!({}))}});
    let c = f.client();
    let mut r = c
        .post_raw(
            &modern_headers("subscriptions/listen", None),
            msg.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200);
    let ack = r.next_data_event().await.expect("the acknowledgement");
    assert!(ack
        .data
        .contains("notifications/subscriptions/acknowledged"));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(f.listener.open_connections(), 1);
    assert!(f.server.notify_tools_list_changed() >= 1);
    let e = r
        .next_data_event()
        .await
        .expect("the change, after the pause");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Modern, &v, Some("subscriptions/listen"));
    assert_eq!(v["method"], "notifications/tools/list_changed");
}

/// A legacy GET stream that is read (keep-alive comments flow) stays open well past the write
/// stall, header and idle deadlines and still delivers a later notification.
#[tokio::test]
async fn read_legacy_get_stream_outlives_every_connection_deadline() {
    let f = Fixture::with(
        Limits::default(),
        sse_quiet_opts(Some(Duration::from_millis(100))),
    )
    .await;
    let mut c = f.client();
    c.initialize().await;
    let mut g = c.get(None).await;
    assert_eq!(g.status, 200);
    let start = Instant::now();
    let mut comments = 0;
    while start.elapsed() < Duration::from_millis(1200) && comments < 100 {
        let e = g.next_event().await.expect("the stream stays open");
        comments += usize::from(e.comment);
    }
    assert!(comments >= 3, "keep-alives flowed: {comments}");
    assert!(f.server.notify_tools_list_changed() >= 1);
    let e = g.next_data_event().await.expect("the notification");
    let v: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &v, None);
    assert_eq!(v["method"], "notifications/tools/list_changed");
}

/// With `max_connections` = 2 and two idle connections open, a third, well-behaved request is
/// not served (it waits in the backlog) until one of them closes; then it is, and the listener
/// goes on serving.
#[tokio::test]
async fn connection_cap_defers_new_connections_until_one_closes() {
    let f = Fixture::with(Limits::default(), opts(|o| o.max_connections = 2)).await;
    let addr = f.addr();
    let idle_a = connect(addr).await;
    let _idle_b = connect(addr).await;
    eventually("two connections open", Duration::from_secs(3), || {
        f.listener.open_connections() == 2
    })
    .await;
    let third = tokio::spawn(async move {
        let mut s = connect(addr).await;
        s.write_all(&echo_request(addr, "third"))
            .await
            .expect("write");
        read_response(&mut s).await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!third.is_finished(), "served past the connection cap");
    assert_eq!(f.listener.open_connections(), 2);
    drop(idle_a);
    let (status, body) = tokio::time::timeout(Duration::from_secs(5), third)
        .await
        .expect("served once a slot freed")
        .expect("task");
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(v["result"]["content"][0]["text"], "third");
    // Still accepting afterwards.
    let ex = f
        .client()
        .modern(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "after"}}),
        )
        .await;
    assert_eq!(ex.status, 200);
}
