//! `subscriptions/listen` on stdio (SUB-01…05), through the demo server's real pipes: the
//! acknowledgement comes first, the changes asked for are interleaved with the connection's
//! other messages and tagged with their subscription's id, several subscriptions run at once,
//! and `notifications/cancelled` ends one without a response (CAN-01). Discovery on stdio
//! promises `listChanged` again, since it can be kept.

use mcpcore_tests::stdio::envelope;
use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn listen(filter: Value) -> Value {
    json!({"_meta": envelope(json!({})), "notifications": filter})
}

/// Call `touch` (the demo announces a tool list change) and collect every message up to its
/// response.
async fn touch(p: &mut StdioPeer) -> Vec<Value> {
    let id = p.fresh_id();
    let params = json!({"name": "touch", "arguments": {}, "_meta": envelope(json!({}))});
    p.send_request(&id, "tools/call", params).await;
    let (resp, mut before) = p.response(&id).await;
    assert!(resp.get("result").is_some(), "{resp}");
    // A notification queued with the response may follow it on the pipe.
    while let Some(m) = p.try_recv(Duration::from_millis(200)).await {
        before.push(m);
    }
    before
}

fn changes(msgs: &[Value]) -> Vec<(String, Value)> {
    msgs.iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .map(|m| {
            (
                m["method"].as_str().unwrap_or_default().to_owned(),
                m["params"]["_meta"][SUB].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn sub01_to_05_listen_streams_share_the_stdio_connection() {
    let mut p = StdioPeer::demo();
    let d = p
        .request("server/discover", json!({"_meta": envelope(json!({}))}))
        .await;
    assert_eq!(
        d["result"]["capabilities"]["tools"]["listChanged"], true,
        "{d}"
    );

    p.send_request(
        &json!("tools-sub"),
        "subscriptions/listen",
        listen(json!({"toolsListChanged": true})),
    )
    .await;
    let (ack, _) = p
        .notification("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(ack["params"]["_meta"][SUB], "tools-sub");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    p.send_request(
        &json!(7),
        "subscriptions/listen",
        listen(json!({"resourceSubscriptions": ["demo://notes/1"]})),
    )
    .await;
    let (ack, _) = p
        .notification("notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(ack["params"]["_meta"][SUB], 7);

    let seen = touch(&mut p).await;
    assert_eq!(
        changes(&seen),
        [(
            "notifications/tools/list_changed".to_owned(),
            json!("tools-sub")
        )],
        "only the subscription that asked hears the change: {seen:?}"
    );

    // Cancelling the listen request ends it: no response, no more changes.
    p.notify("notifications/cancelled", json!({"requestId": "tools-sub"}))
        .await;
    let seen = touch(&mut p).await;
    assert!(changes(&seen).is_empty(), "{seen:?}");
    assert!(
        !seen
            .iter()
            .any(|m| m.get("id") == Some(&json!("tools-sub"))),
        "a cancelled listen gets no response: {seen:?}"
    );
    // The other subscription is still open: cancel it too, and the server stays quiet.
    p.notify("notifications/cancelled", json!({"requestId": 7}))
        .await;
    p.expect_silence(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn sub01_a_bad_filter_is_refused_at_once() {
    let mut p = StdioPeer::demo();
    let r = p
        .request(
            "subscriptions/listen",
            json!({"_meta": envelope(json!({})), "notifications": {"resourceSubscriptions": "x"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}
