//! HTTP/2 without TLS (h2c with prior knowledge, RFC 9113 §3.3) on 127.0.0.1, the per-connection
//! stream cap, and the JSON shape of the TLS and HTTP/2 options on both sides (REQUIREMENTS
//! HTTP-01, HTTP-05, HTTP-18, LHTTP-05, SUB-01).

mod tls_util;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpcore::client::{
    client_handler_fn, CallOptions, Client, ClientError, ConnectMode, Era, HttpClientOptions,
};
use mcpcore::options::{apply_json, OptionsError};
use mcpcore::transport::http::{serve, HttpOptions};
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

fn url(f: &Fixture) -> String {
    format!("http://{}/mcp", f.addr())
}

fn h2c() -> HttpClientOptions {
    let mut o = HttpClientOptions::default();
    apply_json(&mut o, &json!({"http2PriorKnowledge": true})).expect("options");
    o
}

/// Both eras over h2c with prior knowledge: every exchange (the legacy GET stream and session
/// headers included) is a stream of one connection.
#[tokio::test]
async fn both_eras_over_h2c_prior_knowledge() {
    for (mode, era) in [
        (ConnectMode::Auto, Era::Modern),
        (ConnectMode::Legacy, Era::Legacy),
    ] {
        let f = Fixture::start().await;
        let c = bounded(Client::builder().mode(mode).connect_http(&url(&f), h2c()))
            .await
            .expect("connect");
        assert_eq!(c.era(), Some(era));
        let r = bounded(c.call_tool("slow", json!({"ms": 20})))
            .await
            .expect("slow");
        assert!(!r.is_error.unwrap_or(false));
        let r = bounded(c.call_tool("echo", json!({"text": "h2c"})))
            .await
            .expect("echo");
        assert_eq!(r.content[0]["text"], "h2c");
        assert!(f.listener.http2_requests() >= 2, "{era:?}");
        assert_eq!(f.listener.accepted_connections(), 1, "{era:?}");
        c.close().await;
        f.listener.shutdown().await;
    }
}

/// Without prior knowledge a plain `http://` client speaks HTTP/1.1; a server with HTTP/2 off
/// refuses an h2c client, which gets a transport error.
#[tokio::test]
async fn plain_http_stays_http1_and_http2_can_be_turned_off() {
    let f = Fixture::start().await;
    let c = bounded(Client::builder().connect_http(&url(&f), HttpClientOptions::default()))
        .await
        .expect("connect");
    bounded(c.call_tool("echo", json!({"text": "h1"})))
        .await
        .expect("echo");
    assert_eq!(f.listener.http2_requests(), 0);
    c.close().await;
    f.listener.shutdown().await;

    let mut opts = HttpOptions::default();
    apply_json(&mut opts, &json!({"http2": false})).expect("options");
    let f = Fixture::with(Limits::default(), opts).await;
    let e = bounded(Client::builder().connect_http(&url(&f), h2c()))
        .await
        .expect_err("refused");
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    assert_eq!(f.listener.http2_requests(), 0);
    f.listener.shutdown().await;
}

/// An independent HTTP/2 client (hyper) sees an HTTP/2 answer from the server on plain TCP.
#[tokio::test]
async fn server_answers_h2c_preface_with_http2() {
    let f = Fixture::start().await;
    let tcp = tokio::net::TcpStream::connect(f.addr())
        .await
        .expect("connect");
    let (mut tx, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": mcpcore_tests::stdio::envelope(json!({}))}});
    let req = http::Request::post(format!("http://{}/mcp", f.addr()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let resp = bounded(tx.send_request(req)).await.expect("response");
    assert_eq!(resp.version(), http::Version::HTTP_2);
    assert_eq!(resp.status(), 200);
    let bytes = bounded(resp.into_body().collect())
        .await
        .expect("body")
        .to_bytes();
    let v: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(v["id"], 1);
    assert!(v["result"].is_object(), "{v}");
    f.listener.shutdown().await;
}

/// With at most 2 streams per connection, 4 concurrent 300 ms calls over one h2 connection all
/// succeed, in two waves.
#[tokio::test]
async fn the_stream_cap_bounds_concurrency_per_connection() {
    let mut opts = HttpOptions::default();
    apply_json(&mut opts, &json!({"maxConcurrentStreams": 2})).expect("options");
    let f = Fixture::with(Limits::default(), opts).await;
    let c = bounded(Client::builder().connect_http(&url(&f), h2c()))
        .await
        .expect("connect");
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let c = c.clone();
        calls.spawn(async move { c.call_tool("slow", json!({"ms": 300})).await });
    }
    for r in bounded(calls.join_all()).await {
        r.expect("call");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(600),
        "two waves, took {took:?}"
    );
    assert_eq!(f.listener.accepted_connections(), 1);
    c.close().await;
    f.listener.shutdown().await;
}

/// The server's TLS and HTTP/2 options in JSON: round trip, unknown keys and zero caps refused,
/// missing files named when serving; a Rust-only rustls config survives JSON patches.
#[tokio::test]
async fn server_options_json_shape() {
    let mut o = HttpOptions::default();
    let patch = json!({"tls": {"certFile": "/nonexistent/c.pem", "keyFile": "/nonexistent/k.pem",
        "clientCaFile": "/nonexistent/ca.pem"}, "http2": false, "maxConcurrentStreams": 7});
    apply_json(&mut o, &patch).expect("applies");
    let tls = o.tls.clone().expect("tls");
    assert_eq!(tls.cert_file, "/nonexistent/c.pem");
    assert_eq!(tls.client_ca_file.as_deref(), Some("/nonexistent/ca.pem"));
    assert!(!o.http2);
    assert_eq!(o.max_concurrent_streams, 7);
    let all = serde_json::to_value(&o).expect("serialize");
    assert_eq!(all["tls"], patch["tls"]);
    let mut again = HttpOptions::default();
    apply_json(&mut again, &all).expect("the full shape applies");
    assert_eq!(serde_json::to_value(&again).expect("serialize"), all);
    for (bad, shape) in [
        (
            json!({"tls": {"certFile": "a", "keyFile": "b", "certfile": "c"}}),
            true,
        ),
        (json!({"tls": "on"}), true),
        (json!({"http2": "yes"}), true),
        (json!({"maxConcurrentStreams": 0}), false),
    ] {
        let e = apply_json(&mut o, &bad).expect_err("refused");
        assert_eq!(matches!(e, OptionsError::Shape(_)), shape, "{bad}: {e}");
    }
    let e = serve(
        mcpcore_tests::fixture::build(Limits::default(), Arc::default()),
        "127.0.0.1:0".parse().expect("addr"),
        o.clone(),
    )
    .await
    .err()
    .expect("missing files refused");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        e.to_string()
            .contains("cannot read the TLS certificate file \"/nonexistent/c.pem\""),
        "{e}"
    );

    let ca = tls_util::Ca::new("test CA");
    let leaf = ca.server(&["localhost"]);
    let mut o = HttpOptions::default()
        .with_tls_pem(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes())
        .expect("PEM");
    apply_json(&mut o, &json!({"maxConcurrentStreams": 10})).expect("patch");
    assert!(
        o.tls_config.is_some(),
        "a JSON patch keeps the rustls config"
    );
    let e = HttpOptions::default()
        .with_tls_pem(leaf.cert_pem.as_bytes(), b"not a key")
        .expect_err("no key");
    assert!(e.contains("holds no private key"), "{e}");
}

/// The client's TLS and HTTP/2 options in JSON: round trip, unknown keys refused, a bad PEM
/// named at connect time as an argument error.
#[tokio::test]
async fn client_options_json_shape() {
    let mut o = HttpClientOptions::default();
    let patch = json!({"http2": false, "http2PriorKnowledge": true,
        "tls": {"caFile": "/etc/ca.pem", "caPem": null, "certFile": "/c.pem", "keyFile": "/k.pem",
            "certPem": null, "keyPem": null, "platformRoots": false}});
    apply_json(&mut o, &patch).expect("applies");
    assert!(!o.http2);
    assert!(o.http2_prior_knowledge);
    assert_eq!(o.tls.ca_file.as_deref(), Some("/etc/ca.pem"));
    assert!(!o.tls.platform_roots);
    let all = serde_json::to_value(&o).expect("serialize");
    assert_eq!(all["tls"], patch["tls"]);
    let mut again = HttpClientOptions::default();
    apply_json(&mut again, &all).expect("the full shape applies");
    assert_eq!(serde_json::to_value(&again).expect("serialize"), all);
    for bad in [
        json!({"tls": {"caFiles": []}}),
        json!({"tls": {"platformRoots": "no"}}),
        json!({"http2prior": true}),
    ] {
        let e = apply_json(&mut o, &bad).expect_err("refused");
        assert!(matches!(e, OptionsError::Shape(_)), "{bad}: {e}");
    }
    let mut bad_ca = HttpClientOptions::default();
    apply_json(
        &mut bad_ca,
        &json!({"tls": {"caPem": "not PEM", "platformRoots": false}}),
    )
    .expect("applies");
    let e = Client::builder()
        .connect_http("https://127.0.0.1:1/mcp", bad_ca)
        .await
        .expect_err("refused");
    match e {
        ClientError::InvalidArgument(m) => {
            assert!(m.contains("TLS CA holds no certificate"), "{m}")
        }
        other => panic!("expected an argument error, got {other:?}"),
    }
}

/// HTTP-08 over h2: a modern call abandoned by the client resets only its stream; the server
/// sees the cancellation and the connection carries the next call.
#[tokio::test]
async fn abandoned_call_resets_only_its_stream() {
    let f = Fixture::start().await;
    let c = bounded(Client::builder().connect_http(&url(&f), h2c()))
        .await
        .expect("connect");
    let e = bounded(
        c.call_tool_with(
            "hang",
            json!({}),
            CallOptions::new()
                .timeout(Duration::from_millis(300))
                .on_progress(|_, _, _| {}),
        ),
    )
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    let deadline = Instant::now() + BOUND;
    while f.counters.cancelled.load(Ordering::SeqCst) != 1 {
        assert!(Instant::now() < deadline, "server saw the cancellation");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = bounded(c.call_tool("echo", json!({"text": "after"})))
        .await
        .expect("still works");
    assert_eq!(r.content[0]["text"], "after");
    assert_eq!(f.listener.accepted_connections(), 1, "the same connection");
    c.close().await;
    f.listener.shutdown().await;
}

/// The legacy era over h2c: a server request on a call's SSE stream answered by a POST on the
/// same connection (LHTTP-08), notifications on the GET stream (LHTTP-05), a stream the server
/// closes mid-call resumed with `Last-Event-ID` (LHTTP-04), and DELETE on close (LHTTP-02).
#[tokio::test]
async fn legacy_streams_and_server_requests_over_h2c() {
    let f = Fixture::start().await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let b = Client::builder()
        .mode(ConnectMode::Legacy)
        .on_sampling(client_handler_fn(|_p: Value| async move {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "over h2"}, "model": "m"}))
        }))
        .on_notification(move |m, _p| {
            let _ = tx.send(m.to_owned());
        });
    let c = bounded(b.connect_http(&url(&f), h2c()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy));
    let r = bounded(c.call_tool("ask", json!({"prompt": "x"})))
        .await
        .expect("ask");
    assert_eq!(r.content[0]["text"], "over h2");
    let server = f.server.clone();
    let got = bounded(async {
        loop {
            server.notify_tools_list_changed();
            if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await {
                if m == "notifications/tools/list_changed" {
                    break true;
                }
            }
        }
    })
    .await;
    assert!(got);
    let r = bounded(c.call_tool("poll", json!({})))
        .await
        .expect("resumed");
    assert_eq!(r.content[0]["text"], "closed=true");
    assert_eq!(f.listener.accepted_connections(), 1);
    assert!(f.listener.http2_requests() >= 6);
    c.close().await;
    let svc = f.listener.service().clone();
    let deadline = Instant::now() + BOUND;
    while svc.legacy_session_count() > 0 {
        assert!(Instant::now() < deadline, "DELETE ended the session");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    f.listener.shutdown().await;
}
