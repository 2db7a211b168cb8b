//! HTTPS and HTTP/2 over real sockets on 127.0.0.1: the client's and the server's TLS (rustls,
//! certificates made here with rcgen), ALPN `h2` against HTTP/1.1, both eras over each,
//! multiplexing over one connection, mutual TLS, precise handshake errors, and the handshake
//! deadline (REQUIREMENTS HTTP-01, HTTP-03, HTTP-05, HTTP-06, HTTP-18, LHTTP-01, LHTTP-05, SUB-01).

mod tls_util;

use mcpcore::client::{Client, ClientError, ConnectMode, Era, HttpClientOptions};
use mcpcore::options::apply_json;
use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use serde_json::json;
use std::time::Duration;
use tls_util::{Ca, TempDir};
use tokio::io::AsyncReadExt;

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

/// A TLS fixture: the server's certificate (for `localhost` and 127.0.0.1) signed by `ca`,
/// loaded from PEM files through the options' JSON shape.
async fn tls_fixture(ca: &Ca, dir: &TempDir, extra: serde_json::Value) -> Fixture {
    let leaf = ca.server(&["localhost", "127.0.0.1"]);
    let mut opts = HttpOptions::default();
    let mut tls = json!({
        "certFile": dir.write("chain.pem", &leaf.cert_pem),
        "keyFile": dir.write("key.pem", &leaf.key_pem),
    });
    if let Some(ca) = extra.get("clientCaPem").and_then(|v| v.as_str()) {
        tls["clientCaFile"] = json!(dir.write("client-ca.pem", ca));
    }
    let mut patch = json!({"tls": tls});
    for (k, v) in extra.as_object().expect("object") {
        if k != "clientCaPem" {
            patch[k] = v.clone();
        }
    }
    apply_json(&mut opts, &patch).expect("server options");
    Fixture::with(Limits::default(), opts).await
}

fn https(f: &Fixture) -> String {
    format!("https://127.0.0.1:{}/mcp", f.addr().port())
}

/// Client options trusting only `ca`.
fn trusting(ca: &Ca, extra: serde_json::Value) -> HttpClientOptions {
    let mut o = HttpClientOptions::default();
    apply_json(
        &mut o,
        &json!({"tls": {"caPem": ca.pem(), "platformRoots": false}}),
    )
    .expect("client options");
    apply_json(&mut o, &extra).expect("client options");
    o
}

async fn connect(
    url: &str,
    mode: ConnectMode,
    o: HttpClientOptions,
) -> Result<Client, ClientError> {
    bounded(Client::builder().mode(mode).connect_http(url, o)).await
}

/// Both eras over HTTPS, with HTTP/1.1 (h2 not offered) and with ALPN-negotiated HTTP/2; the
/// server's counter tells which protocol carried the requests.
#[tokio::test]
async fn both_eras_over_https_with_http1_and_h2() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    for h2 in [false, true] {
        for (mode, era) in [
            (ConnectMode::Auto, Era::Modern),
            (ConnectMode::Legacy, Era::Legacy),
        ] {
            let f = tls_fixture(&ca, &dir, json!({})).await;
            let c = connect(&https(&f), mode, trusting(&ca, json!({"http2": h2})))
                .await
                .expect("connect over https");
            assert_eq!(c.era(), Some(era));
            let r = bounded(c.call_tool("echo", json!({"text": "über TLS"})))
                .await
                .expect("echo");
            assert_eq!(r.content[0]["text"], "über TLS");
            // An SSE answer (progress, then the response: HTTP-05).
            let r = bounded(c.call_tool("slow", json!({"ms": 30})))
                .await
                .expect("slow");
            assert!(!r.is_error.unwrap_or(false));
            let served_h2 = f.listener.http2_requests();
            if h2 {
                assert!(served_h2 >= 2, "{era:?}: requests over h2: {served_h2}");
                assert_eq!(
                    f.listener.accepted_connections(),
                    1,
                    "{era:?}: one multiplexed connection (the legacy GET stream included)"
                );
            } else {
                assert_eq!(served_h2, 0, "{era:?}: HTTP/1.1 only");
            }
            c.close().await;
            f.listener.shutdown().await;
        }
    }
}

/// Concurrent calls (each an SSE answer held open for a while) share one h2 connection.
#[tokio::test]
async fn concurrent_calls_multiplex_over_one_h2_connection() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let f = tls_fixture(&ca, &dir, json!({})).await;
    let c = connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({})))
        .await
        .expect("connect");
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..12 {
        let c = c.clone();
        calls.spawn(async move { c.call_tool("slow", json!({"ms": 200 + i})).await });
    }
    let results = bounded(calls.join_all()).await;
    for r in results {
        r.expect("call");
    }
    assert_eq!(f.listener.accepted_connections(), 1, "one TCP connection");
    assert!(f.listener.http2_requests() >= 13);
    c.close().await;
    f.listener.shutdown().await;
}

/// A `subscriptions/listen` stream (SUB-01) stays open over h2 next to calls on the same
/// connection, and delivers notifications.
#[tokio::test]
async fn listen_stream_over_h2() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let f = tls_fixture(&ca, &dir, json!({})).await;
    let c = connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({})))
        .await
        .expect("connect");
    let mut sub = bounded(c.listen(json!({"toolsListChanged": true})))
        .await
        .expect("listen");
    let r = bounded(c.call_tool("echo", json!({"text": "beside the stream"})))
        .await
        .expect("a call while the stream is open");
    assert_eq!(r.content[0]["text"], "beside the stream");
    let server = f.server.clone();
    let n = bounded(async {
        loop {
            server.notify_tools_list_changed();
            if let Ok(n) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
                break n;
            }
        }
    })
    .await
    .expect("notification");
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(f.listener.accepted_connections(), 1);
    assert!(f.listener.http2_requests() >= 3);
    sub.close().await;
    c.close().await;
    f.listener.shutdown().await;
}

fn transport_error(r: Result<Client, ClientError>) -> String {
    match r {
        Err(ClientError::Transport(m)) => m,
        Err(other) => panic!("expected a transport error, got {other:?}"),
        Ok(_) => panic!("expected a transport error, connected"),
    }
}

/// A server whose CA the client does not trust, and a certificate for another name, are
/// refused with errors that say so.
#[tokio::test]
async fn unknown_ca_and_wrong_name_are_refused_precisely() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let f = tls_fixture(&ca, &dir, json!({})).await;
    let other = Ca::new("another CA");
    let e =
        transport_error(connect(&https(&f), ConnectMode::Auto, trusting(&other, json!({}))).await);
    assert!(e.contains("TLS handshake with 127.0.0.1:"), "{e}");
    assert!(
        e.contains("not signed by a trusted CA (unknown issuer)"),
        "{e}"
    );
    f.listener.shutdown().await;

    // The right CA, a certificate for another name.
    let leaf = ca.server(&["mcp.example.test"]);
    let opts = HttpOptions::default()
        .with_tls_pem(leaf.cert_pem.as_bytes(), leaf.key_pem.as_bytes())
        .expect("PEM");
    let f = Fixture::with(Limits::default(), opts).await;
    let e = transport_error(connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({}))).await);
    assert!(
        e.contains("does not name \"127.0.0.1\" (name mismatch)"),
        "{e}"
    );
    f.listener.shutdown().await;
}

/// A server that requires client certificates accepts one its CA signed, and refuses a client
/// without one and a client whose certificate another CA signed.
#[tokio::test]
async fn mutual_tls_required() {
    let ca = Ca::new("test CA");
    let client_ca = Ca::new("client CA");
    let dir = TempDir::new();
    let f = tls_fixture(&ca, &dir, json!({"clientCaPem": client_ca.pem()})).await;
    let id = client_ca.client();
    let with_cert = trusting(
        &ca,
        json!({"tls": {"caPem": ca.pem(), "platformRoots": false,
            "certFile": dir.write("client.pem", &id.cert_pem),
            "keyFile": dir.write("client-key.pem", &id.key_pem)}}),
    );
    let c = connect(&https(&f), ConnectMode::Auto, with_cert)
        .await
        .expect("a client with a certificate connects");
    let r = bounded(c.call_tool("echo", json!({"text": "mtls"})))
        .await
        .expect("echo");
    assert_eq!(r.content[0]["text"], "mtls");
    c.close().await;

    let e = transport_error(connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({}))).await);
    assert!(e.contains("requires a client certificate"), "{e}");

    let stranger = ca.client();
    let wrong = trusting(
        &ca,
        json!({"tls": {"caPem": ca.pem(), "platformRoots": false,
            "certPem": stranger.cert_pem, "keyPem": stranger.key_pem}}),
    );
    let e = transport_error(connect(&https(&f), ConnectMode::Auto, wrong).await);
    assert!(e.contains("refused the client certificate"), "{e}");
    f.listener.shutdown().await;
}

/// A peer that connects and never starts the handshake is dropped at the header deadline, and
/// its connection slot is freed.
#[tokio::test]
async fn tls_handshake_is_bounded_by_the_header_deadline() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let f = tls_fixture(&ca, &dir, json!({"headerReadTimeoutMs": 300})).await;
    let started = std::time::Instant::now();
    let mut silent = tokio::net::TcpStream::connect(f.addr())
        .await
        .expect("connect");
    let mut buf = [0u8; 64];
    let n = bounded(silent.read(&mut buf)).await.unwrap_or(0);
    assert_eq!(n, 0, "the server closes without a byte");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    let deadline = tokio::time::Instant::now() + BOUND;
    while f.listener.open_connections() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "slot freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A real client still gets through afterwards.
    let c = connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({})))
        .await
        .expect("connect");
    c.close().await;
    f.listener.shutdown().await;
}

/// The demo server's `--tls-cert` / `--tls-key` flags serve HTTPS; a missing key is refused.
#[tokio::test]
async fn demo_server_serves_https_from_flags() {
    use tokio::io::AsyncBufReadExt;
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let leaf = ca.server(&["localhost", "127.0.0.1"]);
    let cert = dir.write("chain.pem", &leaf.cert_pem);
    let key = dir.write("key.pem", &leaf.key_pem);
    let bin = mcpcore_tests::example_bin("demo-server");
    let mut child = tokio::process::Command::new(&bin)
        .args([
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the demo server");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let line = bounded(lines.next_line())
        .await
        .expect("read")
        .expect("address line");
    let url = line
        .split_once("listening on ")
        .map(|(_, u)| u.trim().to_owned())
        .expect("url in line");
    assert!(url.starts_with("https://127.0.0.1:"), "{line}");
    let c = connect(&url, ConnectMode::Auto, trusting(&ca, json!({})))
        .await
        .expect("connect");
    let r = bounded(c.call_tool("echo", json!({"text": "demo over TLS"})))
        .await
        .expect("echo");
    assert_eq!(r.content[0]["text"], "demo over TLS");
    c.close().await;
    let _ = child.start_kill();
    let _ = bounded(child.wait()).await;

    let out = tokio::process::Command::new(&bin)
        .args(["--http", "127.0.0.1:0", "--tls-cert", &cert])
        .stdin(std::process::Stdio::null())
        .output();
    let out = bounded(out).await.expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--tls-cert and --tls-key go together"),
        "{err}"
    );
}

/// The idle deadline closes a quiet h2 connection over TLS (the client's WINDOW_UPDATEs after
/// an answer do not count as a new request), and the client then opens a new one.
#[tokio::test]
async fn idle_h2_connection_is_closed_and_the_client_reconnects() {
    let ca = Ca::new("test CA");
    let dir = TempDir::new();
    let f = tls_fixture(
        &ca,
        &dir,
        json!({"connectionIdleTimeoutMs": 400, "headerReadTimeoutMs": 5000}),
    )
    .await;
    let c = connect(&https(&f), ConnectMode::Auto, trusting(&ca, json!({})))
        .await
        .expect("connect");
    bounded(c.call_tool("echo", json!({"text": "one"})))
        .await
        .expect("echo");
    assert_eq!(f.listener.open_connections(), 1);
    let started = std::time::Instant::now();
    let deadline = tokio::time::Instant::now() + BOUND;
    while f.listener.open_connections() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "idle connection closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "by the idle deadline, not the header one"
    );
    let r = bounded(c.call_tool("echo", json!({"text": "two"})))
        .await
        .expect("a new connection");
    assert_eq!(r.content[0]["text"], "two");
    assert_eq!(f.listener.accepted_connections(), 2);
    c.close().await;
    f.listener.shutdown().await;
}
