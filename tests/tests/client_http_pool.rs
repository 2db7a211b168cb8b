//! The HTTP client's bounded connection pool against our HTTP server on 127.0.0.1 (REQUIREMENTS
//! HTTP-01, LHTTP-08): keep-alive connections reused, at most `maxConnections` open, calls beyond
//! it waiting (within their timeout) instead of failing, answers to server requests never
//! starved by open requests, and connect errors that name the OS error.
//!
//! Between client and server sits a TCP relay that counts the connections the server sees.

use mcpcore::client::{
    client_handler_fn, CallOptions, Client, ClientBuilder, ClientError, ConnectMode,
    HttpClientOptions,
};
use mcpcore::options::apply_json;
use mcpcore::transport::http::AllowList;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(60);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

/// Connections through the relay: open now, most open at once, accepted in all.
#[derive(Default)]
struct Seen {
    open: AtomicUsize,
    max: AtomicUsize,
    accepted: AtomicUsize,
}

/// The fixture, accepting the relay's `Host` (its own port differs from the relay's).
async fn fixture() -> Fixture {
    let mut o = mcpcore::transport::http::HttpOptions::default();
    o.allowed_hosts = AllowList::Any;
    Fixture::with(Limits::default(), o).await
}

/// A TCP relay to `to` that counts the connections it carries.
async fn relay(to: SocketAddr) -> (String, Arc<Seen>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut down, _)) = l.accept().await {
            s.accepted.fetch_add(1, Ordering::SeqCst);
            let now = s.open.fetch_add(1, Ordering::SeqCst) + 1;
            s.max.fetch_max(now, Ordering::SeqCst);
            let s = s.clone();
            tokio::spawn(async move {
                if let Ok(mut up) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
                }
                s.open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (format!("http://{addr}/mcp"), seen)
}

fn http(patch: Value) -> HttpClientOptions {
    let mut o = HttpClientOptions::default();
    apply_json(&mut o, &patch).expect("options");
    o
}

fn sampling_client(mode: ConnectMode) -> ClientBuilder {
    Client::builder().mode(mode).on_sampling(client_handler_fn(|_p: Value| async move {
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}))
    }))
}

/// 500 concurrent calls (each takes 40 ms on the server, so they overlap) over at most 8
/// connections: every call succeeds, the server never sees more than 8 sockets, and they are
/// reused rather than reopened per call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_calls_share_eight_connections() {
    let f = fixture().await;
    let (url, seen) = relay(f.addr()).await;
    let c = bounded(Client::builder().connect_http(&url, http(json!({"maxConnections": 8}))))
        .await
        .expect("connect");
    let calls = (0..500).map(|i| {
        let c = c.clone();
        tokio::spawn(async move { c.call_tool("slow", json!({"ms": 40 + i % 2})).await })
    });
    for (i, r) in futures_join(calls).await.into_iter().enumerate() {
        let r = r.expect("every call succeeds");
        assert_eq!(r.content[0]["text"], format!("slept {} ms", 40 + i % 2));
    }
    let max = seen.max.load(Ordering::SeqCst);
    assert!(max <= 8, "the server saw {max} connections at once");
    let accepted = seen.accepted.load(Ordering::SeqCst);
    assert!(
        accepted < 100,
        "{accepted} connections for 500 calls: not reused"
    );
    assert!(f.listener.open_connections() <= 8);
    c.close().await;
    f.listener.shutdown().await;
}

/// Spawn every task first, then wait for each.
async fn futures_join<T>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T>
where
    T: Send + 'static,
{
    let handles: Vec<_> = handles.collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(bounded(h).await.expect("join"));
    }
    out
}

/// Legacy: 20 concurrent calls each wait on a sampling request the client answers with a POST.
/// With 3 connections (one the GET stream holds) the answers still get through, because open
/// requests never take the last connection (LHTTP-08).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_to_server_requests_are_never_starved() {
    let f = fixture().await;
    let (url, seen) = relay(f.addr()).await;
    let c = bounded(
        sampling_client(ConnectMode::Legacy).connect_http(&url, http(json!({"maxConnections": 3}))),
    )
    .await
    .expect("connect");
    let calls = (0..20).map(|_| {
        let c = c.clone();
        tokio::spawn(async move { c.call_tool("ask", json!({"prompt": "x"})).await })
    });
    for r in futures_join(calls).await {
        let r = r.expect("every call succeeds");
        assert_eq!(r.content[0]["text"], "ok");
    }
    let max = seen.max.load(Ordering::SeqCst);
    assert!(max <= 3, "the server saw {max} connections at once");
    c.close().await;
    f.listener.shutdown().await;
}

/// A call that finds every connection busy waits for one, bounded by its own timeout (a
/// timeout, not a connect error); once the busy call ends it goes through.
#[tokio::test]
async fn a_call_waits_for_a_free_connection_within_its_timeout() {
    let f = fixture().await;
    let (url, seen) = relay(f.addr()).await;
    let opts = http(json!({"maxConnections": 2, "listenStream": false}));
    let c = bounded(Client::builder().connect_http(&url, opts))
        .await
        .expect("connect");
    let stop = CancellationToken::new();
    let hang = {
        let c = c.clone();
        let o = CallOptions::new().cancel(stop.clone());
        tokio::spawn(async move { c.call_tool_with("hang", json!({}), o).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let e = bounded(c.call_tool_with(
        "echo",
        json!({"text": "late"}),
        CallOptions::new().timeout(Duration::from_millis(300)),
    ))
    .await
    .expect_err("no connection is free while `hang` holds the only one for requests");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    let waiting = {
        let c = c.clone();
        tokio::spawn(async move { c.call_tool("echo", json!({"text": "after"})).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "waits instead of failing");
    stop.cancel();
    let e = bounded(hang).await.expect("join").expect_err("cancelled");
    assert!(matches!(e, ClientError::Cancelled), "{e:?}");
    let r = bounded(waiting).await.expect("join").expect("goes through");
    assert_eq!(r.content[0]["text"], "after");
    assert!(seen.max.load(Ordering::SeqCst) <= 2);
    c.close().await;
    f.listener.shutdown().await;
}

/// A refused connection names the OS error, errno name included.
#[tokio::test]
async fn connect_errors_name_the_os_error() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    drop(l);
    let e = bounded(
        Client::builder().connect_http(&format!("http://{addr}/mcp"), HttpClientOptions::default()),
    )
    .await
    .expect_err("nothing listens there");
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&addr.to_string()), "{msg}");
    assert!(msg.contains("os error"), "{msg}");
    #[cfg(unix)]
    assert!(msg.contains("ECONNREFUSED"), "{msg}");
}
