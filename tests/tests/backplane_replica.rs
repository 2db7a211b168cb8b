//! Legacy session state on replicas (REQUIREMENTS LHTTP-02, MRTR-09, JR-06, SUB-07 across
//! workers): the legacy input_required shim asks from a worker that did not run `initialize`,
//! a batch writes back what it changes, and a resource update reaches a GET stream held by a
//! replica whose subscription list is stale. In-process workers on one real `redis-server`;
//! every message validated against its era's schema.

use mcpcore::backplane::Backplane;
use mcpcore::transport::http::HttpOptions;
use mcpcore_tests::fixture::log_on;
use mcpcore_tests::http::{check, McpHttp, WAIT};
use mcpcore_tests::redis::{workers, RedisServer};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

/// A worker whose `confirm {question}` tool answers `input_required` (one form elicitation)
/// until the legacy shim re-runs it with the answer.
async fn confirm_worker(url: &str, prefix: &str) -> mcpcore::transport::http::HttpListener {
    let mut opts = HttpOptions::default();
    opts.legacy_stores.poll = Duration::from_millis(20);
    let bp = Backplane::redis(url)
        .expect("redis url")
        .with_prefix(prefix);
    let server = mcpcore::Server::builder("confirm", "1")
        .options(|o| o.backplane = bp)
        .request_state_keys(mcpcore_tests::redis::test_keys())
        .tool(
            mcpcore::Tool::new("confirm").input_schema(json!({"type": "object",
                "properties": {"question": {"type": "string"}}, "required": ["question"]})),
            mcpcore::handler_fn(|ctx: mcpcore::RequestContext, args: Value| async move {
                let q = args["question"].as_str().unwrap_or_default().to_owned();
                let Some(answer) = ctx.input_responses().and_then(|r| r.get("confirm")) else {
                    let ask = mcpcore::InputRequired::new().elicit(
                        "confirm",
                        json!({"mode": "form", "message": q, "requestedSchema": {
                            "type": "object", "properties": {"ok": {"type": "boolean"}}}}),
                    );
                    return Ok::<_, mcpcore::HandlerError>(mcpcore::Outcome::from(ask));
                };
                let ok = answer.pointer("/content/ok") == Some(&json!(true));
                let word = if ok { "confirmed" } else { "declined" };
                Ok(mcpcore::Outcome::from(mcpcore::CallToolResult::text(
                    format!("{word}: {q}"),
                )))
            }),
        )
        .build()
        .expect("server");
    let addr = "127.0.0.1:0".parse().expect("addr");
    mcpcore::transport::http::serve(server, addr, opts)
        .await
        .expect("listen")
}

/// MRTR-09 on replicas: `initialize` (declaring elicitation) runs on A,
/// `notifications/initialized` on B, and the `tools/call` of an input_required tool on C, which
/// never saw either. C's shim asks `elicitation/create` on the call's POST stream with a
/// C-tagged id; the answer, POSTed to A, is routed to C's waiting shim and the call completes
/// there. A session that did not declare elicitation is refused on a replica as on its origin
/// (-32603, nothing asked).
#[tokio::test]
async fn mrtr09_the_legacy_shim_asks_from_a_replica() {
    let redis = RedisServer::start();
    let url = redis.url(0);
    let mut w = Vec::new();
    for _ in 0..3 {
        w.push(confirm_worker(&url, "t6:").await);
    }
    let mut a = McpHttp::new(w[0].local_addr());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": a.version, "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c", "version": "1"}}});
    let h: Vec<(String, String)> = a
        .legacy_headers()
        .into_iter()
        .filter(|(k, _)| k != "MCP-Protocol-Version")
        .collect();
    let ex = a.post(&h, &init, Era::Legacy).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    a.session = ex.header("mcp-session-id").map(str::to_owned);
    let mut b = a.clone();
    b.addr = w[1].local_addr();
    let mut c = a.clone();
    c.addr = w[2].local_addr();
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        b.post(&b.legacy_headers(), &n, Era::Legacy).await.status,
        202
    );

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "confirm", "arguments": {"question": "ship it?"}}});
    let mut r = c
        .post_raw(&c.legacy_headers(), call.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    if !r.content_type().starts_with("text/event-stream") {
        let body = r.body().await;
        panic!("nothing asked: {}", String::from_utf8_lossy(&body));
    }
    let ask = r.next_data_event().await.expect("the elicitation request");
    let req: Value = serde_json::from_str(&ask.data).expect("JSON");
    check(Era::Legacy, &req, None);
    assert_eq!(req["method"], "elicitation/create", "{req}");
    assert_eq!(req["params"]["message"], "ship it?");
    assert!(req["id"].as_i64().is_some_and(|id| id >= 1 << 20), "{req}");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"],
        "result": {"action": "accept", "content": {"ok": true}}});
    check(Era::Legacy, &answer, Some("elicitation/create"));
    assert_eq!(
        a.post(&a.legacy_headers(), &answer, Era::Legacy)
            .await
            .status,
        202
    );
    let mut last = Value::Null;
    while let Some(e) = r.next_data_event().await {
        last = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &last, Some("tools/call"));
    }
    assert_eq!(last["id"], 7);
    assert_eq!(
        last["result"]["content"][0]["text"], "confirmed: ship it?",
        "{last}"
    );

    // Without the capability (the default test client declares only sampling and roots).
    let mut plain = McpHttp::new(w[0].local_addr());
    plain.initialize().await;
    let on_b = plain.at(w[1].local_addr());
    let ex = on_b.post(&on_b.legacy_headers(), &call, Era::Legacy).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(
        ex.messages.len(),
        1,
        "nothing may be asked: {:?}",
        ex.messages
    );
    assert_eq!(ex.code(), Some(-32603));
}

/// JR-06 across workers: what the elements of a 2025-03-26 batch change (the log level, a
/// resource subscription) is written back like a single request's, so the session's next
/// request on another worker sees it.
#[tokio::test]
async fn jr06_a_batch_on_a_replica_writes_back_what_it_changes() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t7:", 100).await;
    let mut a = w[0].client();
    a.version = "2025-03-26".into();
    a.initialize().await;
    let (b, c) = (a.at(w[1].addr()), a.at(w[2].addr()));
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "error"}},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "demo://readme"}},
    ]);
    let mut r = b
        .post_raw(&b.legacy_headers(), batch.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 200);
    let body = r.json().await;
    let answers = body.as_array().expect("a JSON array answer");
    assert_eq!(answers.len(), 2, "{body}");
    let methods = ["logging/setLevel", "resources/subscribe"];
    for x in answers {
        let i = x["id"].as_u64().and_then(|i| i.checked_sub(1)).expect("id");
        check(Era::Legacy, x, methods.get(i as usize).copied());
        assert!(x.get("result").is_some(), "{x}");
    }
    assert_eq!(
        log_on(&c, 3, "info").await,
        "filtered",
        "C sees the batch's level"
    );
    // C's replica, made after the batch, knows the subscription.
    let mut stream = c.get(None).await;
    assert_eq!(stream.status, 200);
    assert!(w[0].server.notify_resource_updated("demo://readme") <= 1);
    let e = tokio::time::timeout(WAIT, stream.next_data_event())
        .await
        .expect("the update in time")
        .expect("an event");
    let n: Value = serde_json::from_str(&e.data).expect("JSON");
    check(Era::Legacy, &n, None);
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], "demo://readme");
}

/// SUB-07 across workers: B's GET stream (its replica made before the subscription) hears the
/// update of a resource the client subscribed to on A, whichever worker raises it; a resource
/// the session did not subscribe to is not delivered.
#[tokio::test]
async fn sub07_an_update_reaches_a_get_stream_held_by_a_stale_replica() {
    let redis = RedisServer::start();
    let w = workers(3, &redis.url(0), "t8:", 100).await;
    let mut a = w[0].client();
    a.initialize().await;
    let b = a.at(w[1].addr());
    let mut stream = b.get(None).await;
    assert_eq!(stream.status, 200);
    let sub = a
        .legacy(1, "resources/subscribe", json!({"uri": "demo://readme"}))
        .await;
    assert_eq!(sub.status, 200, "{:?}", sub.messages);
    for (k, f) in [&w[2], &w[1], &w[0]].into_iter().enumerate() {
        f.server.notify_resource_updated("demo://other");
        f.server.notify_resource_updated("demo://readme");
        let e = tokio::time::timeout(WAIT, stream.next_data_event())
            .await
            .unwrap_or_else(|_| panic!("update {k} in time"))
            .expect("an event");
        let n: Value = serde_json::from_str(&e.data).expect("JSON");
        check(Era::Legacy, &n, None);
        assert_eq!(n["method"], "notifications/resources/updated", "{n}");
        assert_eq!(n["params"]["uri"], "demo://readme", "update {k}: {n}");
    }
}
