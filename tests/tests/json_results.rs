//! Results a handler answers as JSON text (`Outcome::CompleteJson`, what a C handler's
//! `mcp_responder_result` makes) follow the same rules as tree results, over real HTTP on
//! 127.0.0.1 in both eras. Every message is validated against its era's official schema by the
//! harness. Covers META-02 (serverInfo in modern `_meta`), TOOL-06 (structured content
//! mirrored), the legacy shapes of built-in results and output-schema checks.

use mcpcore::server::Payload;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, HandlerError, Id, Outcome, Server, Tool};
use mcpcore_tests::http::McpHttp;
use serde_json::value::RawValue;
use serde_json::{json, Value};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A tool answering `text` as written.
fn text_tool(name: &str, text: &'static str) -> (Tool, impl mcpcore::Handler) {
    let h = handler_fn(move |_ctx, _args: Value| async move {
        let raw: Box<RawValue> = serde_json::from_str(text).map_err(HandlerError::internal)?;
        Ok::<_, HandlerError>(Outcome::CompleteJson(raw))
    });
    (Tool::new(name), h)
}

fn server() -> Server {
    let tools = [
        (
            "plain",
            r#"{"content":[{"type":"text","text":"ok"}],"x":{"_meta":1}}"#,
        ),
        ("meta", r#"{"content":[],"_meta":{"mine":true}}"#),
        (
            "stale",
            r#"{"content":[],"resultType":"complete","ttlMs":5,"cacheScope":"public"}"#,
        ),
        ("bare", r#"{"structuredContent":[1,2]}"#),
        ("array", "[1,2,3]"),
        ("empty", "{}"),
    ];
    let mut b = Server::builder("json-results", "1.0.0");
    for (name, text) in tools {
        let (tool, h) = text_tool(name, text);
        b = b.tool(tool, h);
    }
    let (tool, h) = text_tool("typed", r#"{"content":[],"structuredContent":{"n":"one"}}"#);
    let tool = tool.output_schema(
        json!({"type": "object", "properties": {"n": {"type": "number"}},
        "required": ["n"]}),
    );
    b.tool(tool, h).build().expect("server")
}

async fn listen() -> HttpListener {
    let addr = "127.0.0.1:0".parse().expect("addr");
    serve(server(), addr, HttpOptions::default())
        .await
        .expect("listen")
}

/// `tools/call` of `name` on the modern era (`modern`) or the client's legacy session.
async fn call(c: &McpHttp, id: i64, name: &str, modern: bool) -> Value {
    let params = json!({"name": name, "arguments": {}});
    let ex = if modern {
        c.modern(id, "tools/call", params).await
    } else {
        c.legacy(id, "tools/call", params).await
    };
    assert_eq!(ex.status, 200, "{name}");
    ex.last().clone()
}

async fn modern(c: &McpHttp, id: i64, name: &str) -> Value {
    call(c, id, name, true).await
}

async fn legacy(c: &McpHttp, id: i64, name: &str) -> Value {
    call(c, id, name, false).await
}

#[tokio::test]
async fn modern_json_results_are_stamped_like_trees() {
    let l = listen().await;
    let c = McpHttp::new(l.local_addr());
    let r = modern(&c, 1, "plain").await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["_meta"][SERVER_INFO]["name"], "json-results");
    assert_eq!(r["result"]["content"][0]["text"], "ok");
    assert_eq!(
        r["result"]["x"],
        json!({"_meta": 1}),
        "a nested _meta is data"
    );

    // A handler's own _meta is merged, not replaced (META-02).
    let r = modern(&c, 2, "meta").await;
    assert_eq!(r["result"]["_meta"]["mine"], true);
    assert_eq!(r["result"]["_meta"][SERVER_INFO]["version"], "1.0.0");

    let r = modern(&c, 3, "empty").await;
    assert_eq!(
        r["result"]["content"],
        json!([]),
        "missing content becomes []"
    );
    assert_eq!(r["result"]["resultType"], "complete");

    // TOOL-06: non-object structured content with no blocks is mirrored as text.
    let r = modern(&c, 4, "bare").await;
    assert_eq!(r["result"]["content"][0]["text"], "[1,2]");

    for (id, name) in [(5, "array"), (6, "typed")] {
        let r = modern(&c, id, name).await;
        assert_eq!(r["error"]["code"], -32603, "{name}: {r}");
    }
    l.shutdown().await;
}

#[tokio::test]
async fn legacy_json_results_keep_pre_2026_shapes() {
    let l = listen().await;
    let mut c = McpHttp::new(l.local_addr());
    assert_eq!(c.initialize().await.status, 200);
    let r = legacy(&c, 1, "plain").await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "ok"}], "x": {"_meta": 1}}),
        "no resultType or serverInfo on the legacy era"
    );
    let r = legacy(&c, 2, "stale").await;
    assert_eq!(r["result"], json!({"content": []}), "stale members dropped");
    let r = legacy(&c, 3, "typed").await;
    assert_eq!(r["error"]["code"], -32603, "outputSchema still checked");
    l.shutdown().await;
}

/// In process: a plain JSON-text result stays text (no tree is built), and the reply encodes
/// to the same JSON a tree result would.
#[tokio::test]
async fn plain_json_results_pass_through_as_text() {
    use mcpcore::server::SessionKind;
    use mcpcore::transport::NullOutbound;
    use std::sync::Arc;
    let server = server();
    let sink = Arc::new(NullOutbound);
    let s = server.new_session(SessionKind::Stdio, sink.clone());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}});
    s.handle_request(
        Id::Num(0),
        "initialize".into(),
        init.as_object().cloned(),
        sink.clone(),
    )
    .await;
    s.handle_notification("notifications/initialized", None);
    let call = |name: &str| json!({"name": name, "arguments": {}}).as_object().cloned();
    let reply = s
        .handle_request(Id::Num(1), "tools/call".into(), call("plain"), sink.clone())
        .await
        .expect("answered");
    let Ok(Payload::Json(raw)) = &reply.result else {
        panic!("expected text, got {:?}", reply.result);
    };
    assert_eq!(
        raw.get(),
        r#"{"content":[{"type":"text","text":"ok"}],"x":{"_meta":1}}"#
    );
    let wire: Value =
        serde_json::from_slice(&mcpcore::server::encode_reply(&Id::Num(1), &reply)).expect("json");
    assert_eq!(wire["result"]["x"]["_meta"], 1);
    // A result that needs reshaping is a tree.
    let reply = s
        .handle_request(Id::Num(2), "tools/call".into(), call("empty"), sink)
        .await
        .expect("answered");
    assert_eq!(reply.result, Ok(Payload::Value(json!({"content": []}))));
}
