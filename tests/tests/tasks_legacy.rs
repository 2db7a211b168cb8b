//! The 2025-11-25 experimental tasks (TASK-L01, CAN-03, PROG-03) over real stdio pipes and real
//! HTTP sessions, every message checked against the 2025-11-25 schema (which defines the task
//! types).

use mcpcore_tests::tasks::{terminal, Conn};
use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const CAPS: fn() -> Value = || json!({"elicitation": {}, "sampling": {}});

async fn session(args: &[&str]) -> StdioPeer {
    let mut p = StdioPeer::spawn(&mcpcore_tests::tasks::bin(), args);
    let init = p.initialize("2025-11-25", CAPS()).await;
    let tasks = &init["result"]["capabilities"]["tasks"];
    assert!(
        tasks["list"].is_object() && tasks["cancel"].is_object(),
        "{init}"
    );
    assert!(tasks["requests"]["tools"]["call"].is_object());
    p
}

fn created(r: &Value) -> String {
    let task = &r["result"]["task"];
    assert_eq!(task["status"], "working", "{r}");
    assert!(task["ttl"].as_u64().is_some_and(|t| t > 0));
    task["taskId"].as_str().expect("taskId").to_owned()
}

/// TASK-L01: `task` in params makes a task; `notifications/tasks/status` follows its changes;
/// `tasks/result` answers the original result with the related-task `_meta`; `tasks/list` pages;
/// a task-required tool without `task` is -32601; `execution.taskSupport` is listed.
#[tokio::test]
async fn l01_task_lifecycle_over_stdio() {
    let mut p = session(&[]).await;
    let tools = p.request("tools/list", json!({})).await;
    let listed = |n: &str| {
        tools["result"]["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == n))
            .map(|t| t["execution"]["taskSupport"].clone())
    };
    assert_eq!(listed("failing_job"), Some(json!("required")));
    assert_eq!(listed("greet"), Some(Value::Null));
    let e = p
        .request("tools/call", json!({"name": "failing_job"}))
        .await;
    assert_eq!(e["error"]["code"], -32601, "{e}");
    let plain = p
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}}),
        )
        .await;
    assert!(plain["result"]["content"].is_array(), "{plain}");
    let r = p
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "l"},
                "task": {"ttl": 60000}}),
        )
        .await;
    let id = created(&r);
    let result = p.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "Computed l in 0.1s");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let (status, _) = p
        .recv_until(|m| {
            m["method"] == "notifications/tasks/status" && m["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(status["params"]["taskId"], id.as_str());
    let got = p.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "completed");
    let list = p.request("tasks/list", json!({})).await;
    assert!(list["result"]["tasks"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["taskId"] == id.as_str())));
    let failed = p
        .request(
            "tools/call",
            json!({"name": "protocol_error_job", "task": {}}),
        )
        .await;
    let fid = created(&failed);
    let r = p.request("tasks/result", json!({"taskId": fid})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let r = p.request("tasks/get", json!({"taskId": "unknown"})).await;
    assert_eq!(r["error"]["code"], -32602);
    // The modern-only method does not exist here.
    let r = p
        .request("tasks/update", json!({"taskId": id, "inputResponses": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32601);
}

/// CAN-03: `notifications/cancelled` never cancels a task; `tasks/cancel` does and answers the
/// task. PROG-03: the original progress token keeps working after the CreateTaskResult.
#[tokio::test]
async fn can03_prog03_cancel_and_progress() {
    let mut p = session(&[]).await;
    let r = p
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 30}, "task": {}}),
        )
        .await;
    let id = created(&r);
    p.notify(
        "notifications/cancelled",
        json!({"requestId": r["id"].clone()}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got = p.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "working");
    let c = p.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(c["result"]["status"], "cancelled", "{c}");
    let again = p.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(again["error"]["code"], -32602, "terminal: {again}");
    let r = p
        .request(
            "tools/call",
            json!({"name": "progress_job", "arguments": {"steps": 3}, "task": {},
                "_meta": {"progressToken": "tok"}}),
        )
        .await;
    let id = created(&r);
    let (last, _) = p
        .recv_until(|m| m["method"] == "notifications/progress" && m["params"]["progress"] == 3.0)
        .await;
    assert_eq!(last["params"]["progressToken"], "tok");
    let done = Conn::Stdio(p).legacy_until(&id, terminal).await;
    assert_eq!(done["status"], "completed");
}

/// A legacy task whose handler needs input goes to `input_required` and asks the client with a
/// real request on the session (the MRTR shim); the answer completes it.
#[tokio::test]
async fn l01_input_inside_a_legacy_task() {
    let mut p = session(&[]).await;
    let r = p
        .request(
            "tools/call",
            json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "task": {}}),
        )
        .await;
    let id = created(&r);
    let (ask, before) = p.server_request("elicitation/create").await;
    let saw_input_required = before.iter().any(|m| {
        m["method"] == "notifications/tasks/status" && m["params"]["status"] == "input_required"
    });
    assert!(saw_input_required, "{before:?}");
    p.answer(
        &ask["id"],
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    let result = p.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "Deleted a.txt");
}

/// A requested TTL is honoured (clamped to the maximum); past it the task is not found.
#[tokio::test]
async fn l01_ttl_expiry() {
    let mut p = session(&[]).await;
    let r = p
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": {"ttl": 250}}),
        )
        .await;
    assert_eq!(r["result"]["task"]["ttl"], 250);
    let id = created(&r);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = p.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["error"]["code"], -32602, "{got}");
    let huge = p
        .request(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": {"ttl": u64::MAX}}),
        )
        .await;
    assert_eq!(huge["result"]["task"]["ttl"], 24 * 3600 * 1000);
}

/// Over HTTP: the session that created a task ends (DELETE) while it runs; a new session reads
/// the result by taskId (results survive the connection, the handler keeps running).
#[tokio::test]
async fn l01_result_survives_the_session_over_http() {
    let mut c = Conn::http(&[]).await;
    c.initialize(CAPS()).await;
    let r = c
        .legacy(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "h"}, "task": {}}),
        )
        .await;
    let id = created(&r);
    let deleted = c.http_client().delete().await;
    assert!((200..300).contains(&deleted), "DELETE answered {deleted}");
    let h = c.http_client();
    h.session = None;
    c.initialize(CAPS()).await;
    let result = c.legacy("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "Computed h in 0.3s");
}
