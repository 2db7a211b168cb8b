//! The MCP endpoint mounted in axum (`examples/axum_server.rs`: `Router::route_service("/mcp",
//! svc)` beside a `/health` route of its own), over a real socket: the application's own route
//! answers, mcpcore's client reaches the endpoint in both eras, and refusals are exactly those
//! of the built-in listener (REQUIREMENTS HTTP-01, §0.7).

use mcpcore::client::{Client, ConnectMode, Era, HttpClientOptions};
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{modern_headers, raw_request, spawn_example, HttpReply, WAIT};
use serde_json::json;
use std::net::SocketAddr;

type Headers = Vec<(String, String)>;

/// Status, media type and body of a reply read to the end.
async fn settled(mut r: HttpReply) -> (u16, String, String) {
    let body = tokio::time::timeout(WAIT, r.body())
        .await
        .expect("body in time");
    (
        r.status,
        r.content_type().to_owned(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

async fn post(
    addr: SocketAddr,
    headers: &[(String, String)],
    body: &[u8],
) -> (u16, String, String) {
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    settled(raw_request(addr, "POST", "/mcp", &h, body).await).await
}

/// The application's route answers beside the endpoint, and mcpcore's client calls a tool
/// through the mounted endpoint in each mode.
#[tokio::test]
async fn axum_serves_its_route_and_the_endpoint_in_both_eras() {
    let (_child, addr) = spawn_example("axum-server", &[]).await;
    let health = settled(raw_request(addr, "GET", "/health", &[], b"").await).await;
    assert_eq!((health.0, health.2.as_str()), (200, "ok"), "{health:?}");
    let url = format!("http://{addr}/mcp");
    for (mode, era) in [
        (ConnectMode::Auto, Era::Modern),
        (ConnectMode::Modern, Era::Modern),
        (ConnectMode::Legacy, Era::Legacy),
    ] {
        let c = tokio::time::timeout(
            WAIT,
            Client::builder()
                .mode(mode)
                .connect_http(&url, HttpClientOptions::default()),
        )
        .await
        .expect("connect in time")
        .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(c.era(), Some(era), "{mode:?}");
        let r = tokio::time::timeout(WAIT, c.call_tool("echo", json!({"text": "via axum"})))
            .await
            .expect("call in time")
            .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(r.content[0]["text"], "via axum", "{mode:?}");
        c.close().await;
    }
}

/// Bad requests get the same status, media type and body through axum as from the built-in
/// listener: a malformed body is 400 with a -32700 error, a request whose `Accept` refuses JSON
/// is 406, a wrong `Content-Type` is 415.
#[tokio::test]
async fn axum_refuses_bad_requests_as_the_built_in_listener_does() {
    let (_child, axum) = spawn_example("axum-server", &[]).await;
    let builtin = Fixture::start().await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": mcpcore_tests::stdio::envelope(json!({}))}})
    .to_string();
    let modern = modern_headers("tools/list", None);
    let swap = |name: &str, value: &str| -> Vec<(String, String)> {
        modern
            .iter()
            .map(|(k, v)| {
                let v = if k == name { value } else { v.as_str() };
                (k.clone(), v.to_owned())
            })
            .collect()
    };
    let html = swap("Accept", "text/html");
    let text = swap("Content-Type", "text/plain");
    let cases: [(&str, &Headers, &[u8], u16); 3] = [
        ("malformed JSON", &modern, b"{\"jsonrpc\": \"2.0\", ", 400),
        ("Accept: text/html", &html, list.as_bytes(), 406),
        ("text/plain", &text, list.as_bytes(), 415),
    ];
    for (what, headers, body, status) in cases {
        let mounted = post(axum, headers, body).await;
        let own = post(builtin.addr(), headers, body).await;
        assert_eq!(
            mounted, own,
            "{what}: axum and the built-in listener differ"
        );
        assert_eq!(mounted.0, status, "{what}: {mounted:?}");
    }
    let parse = post(axum, &modern, b"{\"jsonrpc\": \"2.0\", ").await;
    let v: serde_json::Value = serde_json::from_str(&parse.2).expect("a JSON-RPC error");
    assert_eq!(v["error"]["code"], -32700, "{parse:?}");
    assert_eq!(v["id"], serde_json::Value::Null);
}
