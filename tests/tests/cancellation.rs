//! Cancellation over real stdio pipes (REQUIREMENTS CAN-01, LC-05, LC-08).
//! Nested server→client cancellation is in `server_requests.rs`.

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

async fn start_wait(p: &mut StdioPeer, id: &Value) {
    p.send_request(
        id,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 600_000}, "_meta": {"progressToken": "w"}}),
    )
    .await;
    // A ping answered after the call was read proves the call is in flight.
    p.request("ping", json!({})).await;
}

/// CAN-01: `notifications/cancelled` cancels the handler's token cooperatively and its response
/// is suppressed; nothing else for that id follows.
#[tokio::test]
async fn can01_cancel_suppresses_response() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let id = json!("c1");
    start_wait(&mut p, &id).await;
    p.notify(
        "notifications/cancelled",
        json!({"requestId": "c1", "reason": "user"}),
    )
    .await;
    let (log, others) = p.notification("notifications/message").await;
    assert_eq!(
        log["params"]["data"], "wait cancelled",
        "the handler saw it"
    );
    assert!(others.iter().all(|m| m["id"] != id), "{others:?}");
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    p.expect_silence(SETTLE).await;
    // The id is free again.
    p.send_request(&id, "ping", json!({})).await;
    let (r, _) = p.response(&id).await;
    assert_eq!(r["result"], json!({}));
}

/// CAN-01: unknown, malformed, duplicate and late cancels are ignored (no answer, no effect).
#[tokio::test]
async fn can01_unknown_duplicate_late_cancels_ignored() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for params in [
        json!({"requestId": 424_242}),
        json!({"requestId": "never"}),
        json!({"requestId": null}),
        json!({}),
    ] {
        p.notify("notifications/cancelled", params).await;
    }
    p.expect_silence(SETTLE).await;

    // Duplicate: the second cancel of the same request is a no-op.
    let id = json!("dup");
    start_wait(&mut p, &id).await;
    for _ in 0..2 {
        p.notify("notifications/cancelled", json!({"requestId": "dup"}))
            .await;
    }
    let (log, _) = p.notification("notifications/message").await;
    assert_eq!(log["params"]["data"], "wait cancelled");

    // Late: cancelling a finished request changes nothing.
    p.send_request(
        &json!("late"),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "done"}}),
    )
    .await;
    let (r, _) = p.response(&json!("late")).await;
    assert_eq!(r["result"]["content"][0]["text"], "done");
    p.notify("notifications/cancelled", json!({"requestId": "late"}))
        .await;
    p.expect_silence(SETTLE).await;
    let r = p.call_tool("echo", json!({"text": "alive"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "alive");
}

/// CAN-01: a cancel only touches the named request; others in flight still answer.
#[tokio::test]
async fn can01_cancel_is_scoped_to_its_request() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    start_wait(&mut p, &json!("a")).await;
    p.send_request(
        &json!("b"),
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 200}}),
    )
    .await;
    p.notify("notifications/cancelled", json!({"requestId": "a"}))
        .await;
    let (r, others) = p.response(&json!("b")).await;
    assert_eq!(r["result"]["content"][0]["text"], "waited 200 ms");
    assert!(others.iter().all(|m| m["id"] != "a"), "{others:?}");
}

/// LC-05: `initialize` is never cancellable: a cancel naming it still lets it answer, and the
/// session is initialized afterwards.
#[tokio::test]
async fn lc05_initialize_cancel_ignored() {
    let mut p = StdioPeer::wire(&[]);
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "init"}});
    // One write, so the cancel is read while initialize is still in flight.
    p.send_raw(format!("{init}\n{cancel}\n{cancel}\n").as_bytes())
        .await;
    let (r, _) = p.response(&json!("init")).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    let r = p.request("tools/list", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
}
