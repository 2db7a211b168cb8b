//! JSON-RPC batches over legacy Streamable HTTP (REQUIREMENTS JR-06, LHTTP-01): answered per
//! element only on sessions that negotiated 2025-03-26; refused with 400 + -32600 otherwise.
//! Every message is validated against the legacy schema.

use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, collect, McpHttp};
use mcpcore_tests::Era;
use serde_json::{json, Value};

async fn session(f: &Fixture, version: &str) -> McpHttp {
    let mut c = f.client();
    c.version = version.into();
    let ex = c.initialize().await;
    assert_eq!(ex.last()["result"]["protocolVersion"], version);
    c
}

async fn post_batch(c: &McpHttp, batch: &Value) -> mcpcore_tests::http::HttpReply {
    c.post_raw(&c.legacy_headers(), batch.to_string().as_bytes())
        .await
}

fn method_of(batch: &Value, id: &Value) -> Option<String> {
    batch.as_array()?.iter().find(|m| &m["id"] == id)?["method"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test]
async fn jr06_batch_on_a_2025_03_26_session_is_answered_per_element_as_json() {
    let f = Fixture::start().await;
    let c = session(&f, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "a"}}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
        5
    ]);
    let mut r = post_batch(&c, &batch).await;
    assert_eq!(r.status, 200);
    assert!(r.content_type().starts_with("application/json"));
    let body = r.json().await;
    let answers = body.as_array().expect("a JSON array answer");
    assert_eq!(
        answers.len(),
        4,
        "one answer per request or bad element: {body}"
    );
    for a in answers {
        check(Era::Legacy, a, method_of(&batch, &a["id"]).as_deref());
    }
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).expect("answer");
    assert_eq!(by_id(json!(1))["result"]["content"][0]["text"], "a");
    assert!(by_id(json!(2))["result"]["tools"].is_array());
    assert_eq!(by_id(json!(3))["error"]["code"], -32601);
    assert_eq!(by_id(Value::Null)["error"]["code"], -32600);
    // Only notifications → 202, no body.
    let n = json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]);
    let ex = collect(post_batch(&c, &n).await, Era::Legacy, None).await;
    assert_eq!(ex.status, 202);
    assert!(ex.messages.is_empty());
}

#[tokio::test]
async fn jr06_batch_with_related_messages_streams_each_response() {
    let f = Fixture::start().await;
    let c = session(&f, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"ms": 40}, "_meta": {"progressToken": "p"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}}
    ]);
    let r = post_batch(&c, &batch).await;
    assert_eq!(r.status, 200);
    let ex = collect(r, Era::Legacy, Some("tools/call")).await;
    assert!(ex.sse, "progress before the answers switches to SSE");
    let progress = ex
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 4);
    let responses: Vec<&Value> = ex
        .messages
        .iter()
        .filter(|m| m.get("id").is_some())
        .collect();
    assert_eq!(responses.len(), 2);
    assert!(responses
        .iter()
        .any(|m| m["id"] == 1 && m["result"]["content"][0]["text"] == "slept 40 ms"));
    assert!(responses
        .iter()
        .any(|m| m["id"] == 2 && m["result"]["content"][0]["text"] == "b"));
}

#[tokio::test]
async fn jr06_batch_refused_on_later_versions_and_when_malformed() {
    let f = Fixture::start().await;
    let c = session(&f, "2025-11-25").await;
    let one = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]);
    let ex = collect(post_batch(&c, &one).await, Era::Legacy, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)));
    assert!(ex.last().get("id").is_none_or(Value::is_null));
    let old = session(&f, "2025-03-26").await;
    let ex = collect(post_batch(&old, &json!([])).await, Era::Legacy, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32600)), "empty batch");
    // Without a session the batch cannot be served (LHTTP-02: 400).
    let mut none = old.clone();
    none.session = None;
    let ex = collect(post_batch(&none, &one).await, Era::Legacy, None).await;
    assert_eq!(ex.status, 400);
    // The session still works after the refusals.
    let ex = c.legacy(9, "tools/list", json!({})).await;
    assert_eq!(ex.status, 200);
}
