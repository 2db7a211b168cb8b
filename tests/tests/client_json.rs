//! The JSON-level client call (`Client::request`, the seam the bindings use) keeps what the typed
//! calls learn (REQUIREMENTS HTTP-14, HTTP-15, HTTP-16, TOOL-06, LOG-03): `x-mcp-header`
//! declarations from a JSON `tools/list` become `Mcp-Param-*` headers of a JSON `tools/call` over
//! HTTP (the server refuses a missing one, so success proves the headers), output schemas
//! validate `structuredContent`, and `logging/setLevel` on 2026-07-28 sets the per-request level.

use mcpcore::client::{Client, ClientError, Era, HttpClientOptions, StderrMode, StdioCommand};
use mcpcore_tests::fixture::Fixture;
use serde_json::{json, Value};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-server");
const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

async fn http_client(f: &Fixture) -> Client {
    let url = format!("http://{}/mcp", f.addr());
    let c = bounded(Client::builder().connect_http(&url, HttpClientOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    c
}

async fn request(c: &Client, method: &str, params: Value) -> Result<Value, ClientError> {
    bounded(c.request(method, params)).await
}

#[tokio::test]
async fn http15_json_tools_list_teaches_the_json_tools_call_its_mcp_param_headers() {
    let f = Fixture::start().await;
    let c = http_client(&f).await;
    let call = json!({"name": "region", "arguments": {"region": "eu west", "count": 3}});
    // Before any listing the client knows no declarations: the server refuses the call.
    let e = request(&c, "tools/call", call.clone())
        .await
        .expect_err("headers missing");
    assert_eq!(e.rpc_code(), Some(-32020), "{e:?}");
    let listed = request(&c, "tools/list", json!({})).await.expect("list");
    assert!(
        listed["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "region")),
        "{listed}"
    );
    let r = request(&c, "tools/call", call).await.expect("headers sent");
    assert_ne!(r["isError"], true, "{r}");
    let echoed: Value =
        serde_json::from_str(r["content"][0]["text"].as_str().unwrap_or_default()).expect("args");
    assert_eq!(echoed, json!({"region": "eu west", "count": 3}));
    c.close().await;
}

#[tokio::test]
async fn tool06_json_tools_call_validates_structured_content_after_a_json_listing() {
    let cmd = StdioCommand::new(FAKE).stderr(StderrMode::Null);
    let c = bounded(Client::builder().connect_stdio(cmd))
        .await
        .expect("connect");
    let typed = json!({"name": "typed", "arguments": {}});
    request(&c, "tools/call", typed.clone())
        .await
        .expect("no schema known yet");
    request(&c, "tools/list", json!({})).await.expect("list");
    let e = request(&c, "tools/call", typed).await.expect_err("invalid");
    assert!(
        matches!(&e, ClientError::OutputValidation(m) if m.contains("/n")),
        "{e:?}"
    );
    c.close().await;
}

#[tokio::test]
async fn log03_json_set_level_on_modern_sets_the_per_request_level() {
    let f = Fixture::start().await;
    let c = http_client(&f).await;
    let log = json!({"name": "log", "arguments": {"level": "debug", "message": "m"}});
    let r = request(&c, "tools/call", log.clone()).await.expect("log");
    assert_eq!(r["content"][0]["text"], "filtered", "no level yet: {r}");
    let r = request(&c, "logging/setLevel", json!({"level": "debug"}))
        .await
        .expect("set level");
    assert_eq!(r, json!({}));
    let r = request(&c, "tools/call", log).await.expect("log");
    assert_eq!(r["content"][0]["text"], "sent", "{r}");
    let e = request(&c, "logging/setLevel", json!({"level": "loud"}))
        .await
        .expect_err("unknown level");
    assert!(matches!(e, ClientError::InvalidArgument(_)), "{e:?}");
    c.close().await;
}

/// HTTP-14, PAGE-01: the list calls for bindings (`list_page_json`, `list_all_json`) return the
/// list's JSON result and teach the client like the typed calls: after a JSON page of tools, the
/// `region` tool's `Mcp-Param-*` headers are sent.
#[tokio::test]
async fn page01_json_lists_return_the_result_and_teach_the_client() {
    use mcpcore::client::{CallOptions, ListKind};
    let f = Fixture::start().await;
    let c = http_client(&f).await;
    let page = bounded(c.list_page_json(ListKind::Tools, None, CallOptions::new()))
        .await
        .expect("page");
    let tools = page["tools"].as_array().expect("tools array");
    assert!(tools.iter().any(|t| t["name"] == "region"), "{page}");
    let all = bounded(c.list_all_json(ListKind::Tools, CallOptions::new()))
        .await
        .expect("all");
    assert_eq!(
        all["tools"].as_array().map(Vec::len),
        Some(tools.len()),
        "{all}"
    );
    let templates = bounded(c.list_all_json(ListKind::ResourceTemplates, CallOptions::new()))
        .await
        .expect("templates");
    assert!(templates["resourceTemplates"].is_array(), "{templates}");
    let call = json!({"name": "region", "arguments": {"region": "eu", "count": 1}});
    let r = request(&c, "tools/call", call).await.expect("headers sent");
    assert_ne!(r["isError"], true, "{r}");
    c.close().await;
}
