//! DNS-rebinding protection with allow-lists derived from the bind address (REQUIREMENTS
//! HTTP-03): on a loopback bind the default accepts the localhost names with the bound port as
//! `Host` and localhost origins on any port; anything else is 403 with a JSON-RPC error
//! without an id. An unspecified bind refuses to start without explicit lists.

use mcpcore::transport::http::{serve, AllowList, HttpOptions};
use mcpcore::Limits;
use mcpcore_tests::fixture::{build, Counters, Fixture};
use mcpcore_tests::http::{collect, modern_headers, raw_request};
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
