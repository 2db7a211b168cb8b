//! JSON-RPC 2.0 layer over real stdio pipes against the demo server (REQUIREMENTS JR-01…JR-03,
//! JR-06, JR-08). Every bad input gets its precise code and the connection
//! survives: each test ends by showing the server still answers.

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

async fn still_alive(p: &mut StdioPeer) {
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}), "server stopped answering: {r}");
}

/// JR-01: unparsable JSON → -32700 with a null id; the connection survives.
#[tokio::test]
async fn jr01_parse_error_has_null_id() {
    let mut p = StdioPeer::demo();
    for bad in [
        &b"{not json\n"[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\n",
        b"\xff\xfe\n",
    ] {
        p.send_raw(bad).await;
        let m = p.recv().await;
        assert_eq!(m["error"]["code"], -32700, "{m}");
        assert_eq!(m["id"], Value::Null, "{m}");
    }
    still_alive(&mut p).await;
}

/// JR-01: valid JSON that is not an object → -32600 (id null).
#[tokio::test]
async fn jr01_non_object_json_is_invalid_request() {
    let mut p = StdioPeer::demo();
    for bad in ["5", "\"ping\"", "null", "true"] {
        p.send_raw(format!("{bad}\n").as_bytes()).await;
        let m = p.recv().await;
        assert_eq!(m["error"]["code"], -32600, "{bad}: {m}");
        assert_eq!(m["id"], Value::Null, "{bad}: {m}");
    }
    still_alive(&mut p).await;
}

/// JR-01/JR-02: objects that are not valid requests → -32600, echoing the id when readable.
#[tokio::test]
async fn jr01_invalid_request_objects() {
    let mut p = StdioPeer::demo();
    let cases = [
        (json!({"id": 1, "method": "ping"}), json!(1)),
        (
            json!({"jsonrpc": "1.0", "id": 2, "method": "ping"}),
            json!(2),
        ),
        (json!({"jsonrpc": "2.0", "id": 3, "method": 7}), json!(3)),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}),
            json!(4),
        ),
        (json!({"jsonrpc": "2.0", "id": "s5"}), json!("s5")),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0"}), Value::Null),
    ];
    for (bad, id) in cases {
        p.send_raw(format!("{bad}\n").as_bytes()).await;
        let m = p.recv().await;
        assert_eq!(m["error"]["code"], -32600, "{bad}: {m}");
        assert_eq!(m["id"], id, "{bad}: {m}");
    }
    still_alive(&mut p).await;
}

/// JR-06: a batch before any negotiation, and after negotiating 2025-11-25, is one -32600.
#[tokio::test]
async fn jr06_batch_refused_unless_negotiated_2025_03_26() {
    let mut p = StdioPeer::demo();
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]);
    p.send_raw(format!("{batch}\n").as_bytes()).await;
    let m = p.recv().await;
    assert!(m.is_object(), "expected one error, got {m}");
    assert_eq!(m["error"]["code"], -32600);
    assert_eq!(m["id"], Value::Null);

    p.initialize("2025-11-25", json!({})).await;
    p.send_raw(format!("{batch}\n").as_bytes()).await;
    let m = p.recv().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");
    still_alive(&mut p).await;
}

/// JR-06: after negotiating 2025-03-26 a batch gets per-element answers; non-object elements
/// get -32600 each; notifications in it get nothing; an empty batch is -32600.
#[tokio::test]
async fn jr06_batch_answered_per_element_on_2025_03_26() {
    let mut p = StdioPeer::demo();
    let r = p.initialize("2025-03-26", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        5,
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}},
        "str",
        {"jsonrpc": "2.0", "id": "c", "method": "no/such"},
    ]);
    // `send` remembers each element's method, so every answer's result is schema-checked.
    p.send(&batch).await;
    let m = p.recv().await;
    let items = m.as_array().expect("a batch answer is an array");
    assert_eq!(items.len(), 5, "{m}");
    let by_id = |id: Value| items.iter().find(|i| i["id"] == id).cloned();
    assert_eq!(by_id(json!("a")).expect("a")["result"], json!({}));
    assert_eq!(
        by_id(json!("b")).expect("b")["result"]["content"][0]["text"],
        "x"
    );
    assert_eq!(by_id(json!("c")).expect("c")["error"]["code"], -32601);
    let nulls: Vec<_> = items.iter().filter(|i| i["id"].is_null()).collect();
    assert_eq!(nulls.len(), 2, "one -32600 per non-object element: {m}");
    assert!(nulls.iter().all(|i| i["error"]["code"] == -32600));

    p.send_raw(b"[]\n").await;
    let m = p.recv().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");

    // A batch of notifications only is answered with nothing.
    p.send_raw(b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]\n")
        .await;
    p.expect_silence(SETTLE).await;
    still_alive(&mut p).await;
}

/// JR-03: a notification method sent with an id is a request for a method that does not
/// exist as a request → -32601 (and nothing is cancelled).
#[tokio::test]
async fn jr03_notification_method_with_id_is_method_not_found() {
    let mut p = StdioPeer::demo();
    p.initialize("2025-11-25", json!({})).await;
    for method in ["notifications/cancelled", "notifications/initialized"] {
        let r = p.request(method, json!({"requestId": 1})).await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    still_alive(&mut p).await;
}

/// JR-02: an unknown method → -32601 naming it.
#[tokio::test]
async fn jr02_unknown_method() {
    let mut p = StdioPeer::demo();
    p.initialize("2025-11-25", json!({})).await;
    let r = p.request("no/such/method", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    assert!(r["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("no/such/method")));
    still_alive(&mut p).await;
}

/// Nesting deeper than 64 → -32600 (id null), with no stack exhaustion; 64 levels are fine.
#[tokio::test]
async fn jr_nesting_over_64_is_invalid_request() {
    let mut p = StdioPeer::demo();
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":{}1{}}}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    p.send_raw(deep.as_bytes()).await;
    let m = p.recv().await;
    assert_eq!(m["error"]["code"], -32600, "{m}");
    assert_eq!(m["id"], Value::Null);

    // Exactly 64 levels: the outer object, params, then 62 arrays.
    let ok = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{{\"x\":{}1{}}}}}\n",
        "[".repeat(62),
        "]".repeat(62)
    );
    p.send_raw(ok.as_bytes()).await;
    let m = p.recv().await;
    assert_eq!(m["result"], json!({}), "{m}");
    assert_eq!(m["id"], 2);
}

/// JR-08 / CWE-209: a handler's internal failure → -32603 with a generic message, no detail.
#[tokio::test]
async fn jr_internal_failure_is_generic() {
    let mut p = StdioPeer::demo();
    p.initialize("2025-11-25", json!({})).await;
    let r = p.call_tool("fail", json!({})).await;
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["message"], "Internal error");
    assert!(r["error"].get("data").is_none(), "{r}");
    assert!(!r.to_string().contains("hunter2"), "{r}");
    still_alive(&mut p).await;
}

/// JR-02: responses to ids the server never used are ignored (no answer, no crash).
#[tokio::test]
async fn jr02_stray_responses_are_ignored() {
    let mut p = StdioPeer::demo();
    p.initialize("2025-11-25", json!({})).await;
    p.answer(&json!(987_654), json!({})).await;
    p.send(&json!({"jsonrpc": "2.0", "id": "zz", "error": {"code": -1, "message": "m"}}))
        .await;
    p.expect_silence(SETTLE).await;
    still_alive(&mut p).await;
}
