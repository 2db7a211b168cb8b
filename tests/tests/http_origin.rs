//! DNS-rebinding protection with allow-lists derived from the bind address (REQUIREMENTS
//! HTTP-03, RFC 9112 §3.2): on a loopback bind the default accepts the localhost names with the
//! bound port as `Host` and `http(s)` localhost origins on any port; anything else is 403 with a
//! JSON-RPC error without an id. A missing or malformed `Host` is 400, and an absolute-form
//! target must name an allowed host too. An unspecified bind refuses to start without explicit
//! lists.

use mcpcore::transport::http::{serve, AllowList, HttpOptions};
use mcpcore::Limits;
use mcpcore_tests::fixture::{build, Counters, Fixture};
use mcpcore_tests::http::{collect, modern_headers, raw_bytes, raw_request};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::Arc;

fn call() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo",
        "arguments": {"text": "x"}, "_meta": mcpcore_tests::stdio::envelope(json!({}))}})
    .to_string()
    .into_bytes()
}

async fn status(f: &Fixture, extra: &[(&str, &str)]) -> (u16, Option<Value>) {
    let owned = modern_headers("tools/call", Some("echo"));
    let mut h: Vec<(&str, &str)> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    h.extend_from_slice(extra);
    let r = raw_request(f.addr(), "POST", "/mcp", &h, &call()).await;
    let ex = collect(r, Era::Modern, Some("tools/call")).await;
    (ex.status, ex.messages.last().cloned())
}

#[tokio::test]
async fn http03_default_allow_list_follows_the_loopback_bind() {
    let f = Fixture::start().await;
    let port = f.addr().port();
    let host_ok = format!("localhost:{port}");
    let v6_ok = format!("[::1]:{port}");
    for host in [host_ok.as_str(), v6_ok.as_str()] {
        assert_eq!(status(&f, &[("Host", host)]).await.0, 200, "{host}");
    }
    let other_port = format!("localhost:{}", port.wrapping_add(1).max(1));
    let rebound = format!("evil.example:{port}");
    for host in [
        other_port.as_str(),
        rebound.as_str(),
        "localhost.evil.example",
    ] {
        let (st, msg) = status(&f, &[("Host", host)]).await;
        assert_eq!(st, 403, "{host}");
        let msg = msg.expect("a JSON-RPC error body");
        assert_eq!(msg["error"]["code"], -32600);
        assert!(msg.get("id").is_none_or(Value::is_null));
    }
    // A local web UI on another port may call; a foreign page may not.
    assert_eq!(
        status(&f, &[("Origin", "http://localhost:6274")]).await.0,
        200
    );
    assert_eq!(
        status(&f, &[("Origin", &format!("http://evil.example:{port}"))])
            .await
            .0,
        403
    );
}

#[tokio::test]
async fn http03_explicit_lists_replace_the_derived_ones() {
    let mut opts = HttpOptions::default();
    opts.allowed_hosts = AllowList::List(vec!["mcp.example".into()]);
    let f = Fixture::with(Limits::default(), opts).await;
    assert_eq!(status(&f, &[("Host", "mcp.example")]).await.0, 200);
    assert_eq!(status(&f, &[("Host", "other.example")]).await.0, 403);
}

#[tokio::test]
async fn http03_unspecified_bind_needs_explicit_lists() {
    let server = build(Limits::default(), Arc::new(Counters::default()));
    // Refused before anything is bound (tests never bind beyond 127.0.0.1).
    let err = serve(
        server,
        "0.0.0.0:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .err()
    .expect("Auto allow-lists on 0.0.0.0 are refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("allowed_origins"), "{err}");
}

/// HTTP-03: only a well-formed `http(s)` origin can match the localhost rule; another scheme or
/// a port that is not a number in range is 403.
#[tokio::test]
async fn http03_malformed_or_non_http_origins_are_403() {
    let f = Fixture::start().await;
    for origin in [
        "ftp://localhost",
        "http://localhost:abc",
        "http://localhost:70000",
        "file://localhost",
        "http://localhost/app",
    ] {
        let (st, msg) = status(&f, &[("Origin", origin)]).await;
        assert_eq!(st, 403, "{origin}");
        let msg = msg.expect("a JSON-RPC error body");
        assert_eq!(msg["error"]["code"], -32600);
    }
    assert_eq!(
        status(&f, &[("Origin", "https://localhost:8443")]).await.0,
        200
    );
}

/// A whole request as bytes: the tools/call of [`call`] with `target` in the request line,
/// `version` and the given header lines (no `Host` unless given).
fn request_bytes(target: &str, version: &str, extra: &[String]) -> Vec<u8> {
    let body = call();
    let mut head = format!("POST {target} {version}\r\n");
    for (k, v) in modern_headers("tools/call", Some("echo")) {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    for l in extra {
        head.push_str(&format!("{l}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut out = head.into_bytes();
    out.extend_from_slice(&body);
    out
}

/// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, or with a malformed one, is 400 (as is an
/// HTTP/1.0 request naming no host: the allow-list has nothing to check). An absolute-form
/// target is the effective host (RFC 9112 §3.2.2): naming a host off the allow-list is 403 even
/// with an allowed `Host`.
#[tokio::test]
async fn rfc9112_missing_host_is_400_and_absolute_form_targets_are_checked() {
    let f = Fixture::start().await;
    let port = f.addr().port();
    let host = format!("Host: 127.0.0.1:{port}");
    let addr = f.addr();
    let answer = |bytes: Vec<u8>| async move {
        let r = raw_bytes(addr, &bytes).await;
        let ex = collect(r, Era::Modern, Some("tools/call")).await;
        (ex.status, ex.messages.last().cloned())
    };
    for (bytes, what) in [
        (request_bytes("/mcp", "HTTP/1.1", &[]), "no Host"),
        (
            request_bytes("/mcp", "HTTP/1.0", &[]),
            "HTTP/1.0 without Host",
        ),
        (
            request_bytes("/mcp", "HTTP/1.1", &["Host: localhost:abc".into()]),
            "malformed Host",
        ),
    ] {
        let (st, msg) = answer(bytes).await;
        assert_eq!(st, 400, "{what}");
        let msg = msg.expect("a JSON-RPC error body");
        assert_eq!(msg["error"]["code"], -32600, "{what}");
        assert!(msg.get("id").is_none_or(Value::is_null));
    }
    let evil = request_bytes(
        "http://evil.example/mcp",
        "HTTP/1.1",
        std::slice::from_ref(&host),
    );
    assert_eq!(answer(evil).await.0, 403);
    let evil_port = format!("http://evil.example:{port}/mcp");
    assert_eq!(
        answer(request_bytes(
            &evil_port,
            "HTTP/1.1",
            std::slice::from_ref(&host)
        ))
        .await
        .0,
        403
    );
    let own = format!("http://127.0.0.1:{port}/mcp");
    let (st, msg) = answer(request_bytes(&own, "HTTP/1.1", &[host])).await;
    assert_eq!(st, 200, "{msg:?}");
}
