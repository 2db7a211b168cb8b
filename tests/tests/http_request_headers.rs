//! A handler reads the headers of the HTTP request that carried its request
//! (`RequestContext::http_headers`, `http_headers_json`), over real HTTP on 127.0.0.1 in both eras
//! (a legacy session, stateless legacy and 2026-07-28), and sees none over a byte stream.

use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::transport::stdio::serve_io;
use mcpcore::{handler_fn, CallToolResult, Server, Tool};
use mcpcore_tests::http::McpHttp;
use mcpcore_tests::stdio::envelope;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// `headers`: what the handler saw, as JSON text (`null` when not HTTP).
fn server() -> Server {
    Server::builder("headers", "1")
        .tool(
            Tool::new("headers"),
            handler_fn(|ctx, _args: Value| async move {
                let seen = ctx.http_headers_json().unwrap_or(Value::Null);
                // The typed form agrees with the JSON form.
                let direct = ctx
                    .http_headers()
                    .and_then(|h| h.get("x-tenant"))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                Ok(CallToolResult::structured(
                    json!({"seen": seen, "direct": direct}),
                ))
            }),
        )
        .build()
        .expect("server")
}

async fn listen(stateless_legacy: bool) -> HttpListener {
    let mut o = HttpOptions::default();
    o.stateless_legacy = stateless_legacy;
    serve(server(), "127.0.0.1:0".parse().expect("addr"), o)
        .await
        .expect("listen")
}

fn seen(ex: &mcpcore_tests::http::Exchange) -> Value {
    ex.last()["result"]["structuredContent"].clone()
}

fn with_tenant(mut h: Vec<(String, String)>) -> Vec<(String, String)> {
    h.push(("X-Tenant".into(), "acme".into()));
    // A repeated header: its values are joined with ", " (RFC 9110 §5.3).
    h.push(("X-Trace".into(), "a".into()));
    h.push(("X-Trace".into(), "b".into()));
    h
}

fn call(id: i64, modern: bool) -> Value {
    let mut params = json!({"name": "headers", "arguments": {}});
    if modern {
        params["_meta"] = envelope(json!({}));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn assert_seen(out: &Value) {
    let h = &out["seen"];
    assert_eq!(h["x-tenant"], "acme", "{out}");
    assert_eq!(h["x-trace"], "a, b", "{out}");
    assert!(
        h["host"]
            .as_str()
            .is_some_and(|v| v.starts_with("127.0.0.1")),
        "{out}"
    );
    assert_eq!(out["direct"], "acme", "{out}");
}

#[tokio::test]
async fn a_modern_handler_sees_its_http_request_headers() {
    let l = listen(false).await;
    let c = McpHttp::new(l.local_addr());
    let h = with_tenant(mcpcore_tests::http::modern_headers(
        "tools/call",
        Some("headers"),
    ));
    let ex = c.post(&h, &call(1, true), mcpcore_tests::Era::Modern).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_seen(&seen(&ex));
}

#[tokio::test]
async fn a_legacy_session_handler_sees_the_headers_of_each_request() {
    let l = listen(false).await;
    let mut c = McpHttp::new(l.local_addr());
    c.initialize().await;
    let ex = c
        .post(
            &with_tenant(c.legacy_headers()),
            &call(2, false),
            mcpcore_tests::Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_seen(&seen(&ex));
    // The next request on the same session carries other headers: the handler sees those.
    let ex = c
        .legacy(3, "tools/call", json!({"name": "headers", "arguments": {}}))
        .await;
    let out = seen(&ex);
    assert!(out["seen"].get("x-tenant").is_none(), "{out}");
    assert!(out["seen"]["mcp-session-id"].is_string(), "{out}");
}

#[tokio::test]
async fn a_stateless_legacy_handler_sees_its_http_request_headers() {
    let l = listen(true).await;
    let c = McpHttp::new(l.local_addr());
    let ex = c
        .post(
            &with_tenant(c.legacy_headers()),
            &call(4, false),
            mcpcore_tests::Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_seen(&seen(&ex));
}

#[tokio::test]
async fn over_a_byte_stream_there_are_no_http_headers() {
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let (sr, sw) = tokio::io::split(server_side);
    let s = server();
    tokio::spawn(async move { serve_io(&s, sr, sw).await });
    let (cr, mut cw) = tokio::io::split(client);
    let line = format!("{}\n", call(5, true));
    cw.write_all(line.as_bytes()).await.expect("write");
    let mut lines = BufReader::new(cr).lines();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
        .await
        .expect("answer in time")
        .expect("read")
        .expect("a line");
    let v: Value = serde_json::from_str(&answer).expect("json");
    let out = &v["result"]["structuredContent"];
    assert_eq!(out["seen"], Value::Null, "{v}");
    assert_eq!(out["direct"], Value::Null, "{v}");
}
