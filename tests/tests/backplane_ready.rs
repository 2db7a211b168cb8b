//! A Redis-backed worker is ready when its listen call returns, and rides out a brief Redis
//! restart: real HTTP on 127.0.0.1, a real redis-server.
//!
//! - `serve` returns only once the backplane's connection and bus subscription are up, so a
//!   `subscriptions/listen` opened at once on one worker hears a change raised on another
//!   (SUB-04), and the first request is not refused as unavailable;
//! - with no Redis at the URL, `serve` fails within the connect timeout, naming the URL without
//!   its password;
//! - a request that finds Redis restarting waits (up to `with_wait`) for the reconnect and
//!   succeeds instead of being answered 503 (the 503 for a longer outage is
//!   `backplane_bus::redis_down_is_503_with_retry_after_then_recovers`).

use mcpcore::backplane::Backplane;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, InputRequired, Outcome, Server, Tool};
use mcpcore_tests::http::{check, modern_headers, Exchange, HttpReply, McpHttp};
use mcpcore_tests::redis::{test_keys, RedisServer};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

/// A server with one MRTR tool (`round`: asks once, then answers with its state) on `bp`.
fn server(bp: Backplane) -> Server {
    Server::builder("ready", "1")
        .backplane(bp)
        .request_state_keys(test_keys())
        .tool(
            Tool::new("round").input_schema(json!({"type": "object"})),
            handler_fn(|ctx, _args: Value| async move {
                Ok::<Outcome, HandlerError>(match ctx.request_state() {
                    Some(s) => CallToolResult::text(format!("done:{s}")).into(),
                    None => InputRequired::new().state("r1").into(),
                })
            }),
        )
        .build()
        .expect("server")
}

async fn start(bp: Backplane) -> (Server, HttpListener) {
    let s = server(bp);
    let l = serve(
        s.clone(),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    (s, l)
}

async fn round(c: &McpHttp, id: i64, state: Option<&str>) -> Exchange {
    let mut params = json!({"name": "round", "arguments": {}});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    c.modern(id, "tools/call", params).await
}

async fn listen(c: &McpHttp) -> HttpReply {
    let params = mcpcore_tests::era::with_envelope(
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let msg = json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": params});
    c.post_raw(
        &modern_headers("subscriptions/listen", None),
        msg.to_string().as_bytes(),
    )
    .await
}

async fn next(r: &mut HttpReply) -> Value {
    let e = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("an event in time")
        .expect("an event");
    let v: Value = serde_json::from_str(&e.data).expect("json");
    check(Era::Modern, &v, None);
    v
}

/// Right after `serve` returns (no polling for availability), a listen stream on worker B is
/// accepted and hears a change raised on worker A.
#[tokio::test]
async fn a_worker_is_ready_when_serve_returns() {
    let redis = RedisServer::start();
    let bp = || {
        Backplane::redis(&redis.url(0))
            .expect("url")
            .with_prefix("ready1:")
    };
    let (a, _la) = start(bp()).await;
    let (b, lb) = start(bp()).await;
    assert!(b.backplane_available(), "connected before serve returned");
    let mut s = listen(&McpHttp::new(lb.local_addr())).await;
    assert_eq!(s.status, 200, "a listen right after serve is not refused");
    let ack = next(&mut s).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    a.notify_tools_list_changed();
    assert_eq!(
        next(&mut s).await["method"],
        "notifications/tools/list_changed"
    );
}

/// No Redis at the URL: `serve` fails within the connect timeout with an error naming the URL,
/// without the password it carries, and binds nothing.
#[tokio::test]
async fn serve_fails_clearly_when_redis_is_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/0");
    let bp = Backplane::redis(&url)
        .expect("url")
        .with_connect_timeout(Duration::from_millis(300));
    let s = server(bp);
    let r = tokio::time::timeout(
        WAIT,
        serve(
            s,
            "127.0.0.1:0".parse().expect("addr"),
            HttpOptions::default(),
        ),
    )
    .await
    .expect("serve gives up within its bound");
    let e = r.err().expect("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected);
    assert_eq!(
        e.to_string(),
        format!("Redis at redis://127.0.0.1:{port}/0 is unreachable")
    );
}

fn state_of(ex: &Exchange) -> String {
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    ex.last()["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned()
}

fn assert_done(ex: &Exchange) {
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(
        ex.last()["result"]["content"][0]["text"],
        "done:r1",
        "{:?}",
        ex.messages
    );
}

/// Redis restarted: a retry opening a sealed state (its single-use claim needs Redis) and a new
/// listen stream that arrive while it is down wait for the reconnect and succeed, instead of
/// 503; so does the first command after Redis is back, whose connection died with the old
/// process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_during_a_brief_redis_restart_wait_and_succeed() {
    let mut redis = RedisServer::start();
    let bp = Backplane::redis(&redis.url(0))
        .expect("url")
        .with_prefix("ready3:")
        .with_wait(WAIT);
    let (s, l) = start(bp).await;
    let c = McpHttp::new(l.local_addr());
    // A first claim opens the shared connection the later ones reuse.
    let state = state_of(&round(&c, 1, None).await);
    assert_done(&round(&c, 2, Some(&state)).await);

    // Redis goes and comes back between two requests: the connection held is dead.
    let state = state_of(&round(&c, 3, None).await);
    redis.restart();
    assert_done(&round(&c, 4, Some(&state)).await);

    // Requests arriving while Redis is down (the restart blocks this thread only).
    let state = state_of(&round(&c, 5, None).await);
    redis.stop();
    let deadline = tokio::time::Instant::now() + WAIT;
    while s.backplane_available() {
        assert!(tokio::time::Instant::now() < deadline, "never saw Redis go");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let retry = tokio::spawn({
        let c = c.clone();
        async move { round(&c, 6, Some(&state)).await }
    });
    let stream = tokio::spawn({
        let c = c.clone();
        async move { listen(&c).await }
    });
    redis.restart();
    assert_done(&retry.await.expect("retry task"));
    let mut st = stream.await.expect("listen task");
    assert_eq!(st.status, 200, "a listen during the restart waited for it");
    let _ack = next(&mut st).await;
    s.notify_tools_list_changed();
    assert_eq!(
        next(&mut st).await["method"],
        "notifications/tools/list_changed"
    );
}
