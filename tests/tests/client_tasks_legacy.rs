//! The client side of 2025-11-25 tasks (REQUIREMENTS TASK-L01, CAN-03) against the scripted
//! tasks server, over real stdio (every message tapped and validated against the 2025-11-25
//! schema: `task: {ttl}` on `tools/call`, `CreateTaskResult`, `tasks/get|result|list|cancel`,
//! `notifications/tasks/status`) and real HTTP on 127.0.0.1.

use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ClientError, ConnectMode, HttpClientOptions,
    StdioCommand, TaskCallOptions, TaskCallOutcome, TaskStatus, TaskWaitOptions,
};
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::scripted::{json_resp, legacy, raw, sse, Req, Scripted};
use mcpcore_tests::tasks_script::{TaskScript, ELICIT_ID};
use mcpcore_tests::Era;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TAP: &str = env!("CARGO_BIN_EXE_tap");
const SERVER: &str = env!("CARGO_BIN_EXE_task-server");
const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

async fn stdio(b: ClientBuilder, log: &TapLog) -> Client {
    let cmd = StdioCommand::new(TAP).args(tap_args(&log.path, SERVER.as_ref(), &["legacy"]));
    // Legacy mode: no modern probe in the tapped log (it is not a 2025-11-25 message).
    let c = bounded(b.mode(ConnectMode::Legacy).connect_stdio(cmd))
        .await
        .expect("connect");
    assert!(!c.is_modern());
    c
}

fn text(r: &mcpcore::CallToolResult) -> &str {
    r.content[0]["text"].as_str().unwrap_or_default()
}

fn done() -> (TaskCallOptions, TaskWaitOptions) {
    (TaskCallOptions::new(), TaskWaitOptions::new())
}

#[tokio::test]
async fn task_l01_task_param_ttl_and_a_synchronous_answer() {
    let log = TapLog::new("ltasks-optin");
    let c = stdio(Client::builder(), &log).await;
    let plain = bounded(c.call_tool("slow", json!({})))
        .await
        .expect("plain");
    assert_eq!(text(&plain), "sync slow");
    let opts = TaskCallOptions::new().ttl(Duration::from_secs(30));
    let out = bounded(c.call_tool_as_task("sync", json!({}), opts))
        .await
        .expect("sync");
    assert!(
        matches!(&out, TaskCallOutcome::Completed(r) if text(r) == "sync sync"),
        "{out:?}"
    );
    let out = bounded(c.call_tool_as_task("slow", json!({}), TaskCallOptions::new()))
        .await
        .expect("task");
    let TaskCallOutcome::Task(t) = out else {
        panic!("a task: {out:?}")
    };
    assert_eq!((t.ttl_ms, t.poll_interval_ms), (Some(60000), Some(10)));
    let calls = log.client_requests("tools/call");
    assert!(
        calls[0]["params"].get("task").is_none(),
        "a plain call asks for no task"
    );
    assert_eq!(calls[1]["params"]["task"], json!({"ttl": 30000}));
    assert_eq!(calls[2]["params"]["task"], json!({}));
    let e = c.update_task(&t.task_id, serde_json::Map::new()).await;
    assert!(matches!(e, Err(ClientError::InvalidArgument(_))), "{e:?}");
    c.close().await;
    log.validate(Era::Legacy);
}

#[tokio::test]
async fn task_l01_polls_lists_and_reads_the_result() {
    let log = TapLog::new("ltasks-poll");
    let c = stdio(Client::builder(), &log).await;
    let (call, wait) = done();
    let r = bounded(c.call_tool_to_completion("slow", json!({}), call, wait))
        .await
        .expect("done");
    assert_eq!(text(&r), "slow done");
    assert_eq!(log.client_requests("tasks/get").len(), 2);
    assert_eq!(log.client_requests("tasks/result").len(), 1);
    let page = bounded(c.list_tasks(None)).await.expect("list");
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].status, TaskStatus::Completed);
    c.close().await;
    log.validate(Era::Legacy);
}

#[tokio::test]
async fn task_l01_input_required_is_answered_by_the_registered_handler() {
    let log = TapLog::new("ltasks-ask");
    let b = Client::builder().on_elicitation(client_handler_fn(|_| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }));
    let c = stdio(b, &log).await;
    let (call, wait) = done();
    let r = bounded(c.call_tool_to_completion("ask", json!({}), call, wait))
        .await
        .expect("answered");
    assert_eq!(text(&r), "hello Ada");
    let answered = log
        .messages()
        .into_iter()
        .any(|(d, m)| d == 'C' && m["id"] == ELICIT_ID && m["result"]["action"] == "accept");
    assert!(answered, "the elicitation was answered by the handler");
    c.close().await;
    log.validate(Era::Legacy);
}

#[tokio::test]
async fn task_l01_follows_status_notifications() {
    let log = TapLog::new("ltasks-push");
    let c = stdio(Client::builder(), &log).await;
    let wait = TaskWaitOptions::new()
        .follow_pushes(true)
        .poll_bounds(Duration::from_millis(1), Duration::from_secs(600));
    let r = bounded(c.call_tool_to_completion("push", json!({}), TaskCallOptions::new(), wait))
        .await
        .expect("pushed");
    assert_eq!(text(&r), "pushed");
    assert_eq!(
        log.client_requests("tasks/get").len(),
        1,
        "the push ended the wait"
    );
    c.close().await;
    log.validate(Era::Legacy);
}

#[tokio::test]
async fn can03_cancel_is_tasks_cancel_and_failures_surface() {
    let log = TapLog::new("ltasks-cancel");
    let c = stdio(Client::builder(), &log).await;
    let TaskCallOutcome::Task(t) =
        bounded(c.call_tool_as_task("hold", json!({}), TaskCallOptions::new()))
            .await
            .expect("task")
    else {
        panic!("a task")
    };
    let after = bounded(c.cancel_task(&t.task_id))
        .await
        .expect("cancel")
        .expect("legacy answers the task");
    assert_eq!(after.status, TaskStatus::Cancelled);
    let waited = bounded(c.wait_task(&t.task_id, TaskWaitOptions::new()))
        .await
        .expect("terminal");
    assert_eq!(waited.status, TaskStatus::Cancelled);
    let (call, wait) = done();
    let e = bounded(c.call_tool_to_completion("fail", json!({}), call, wait))
        .await
        .expect_err("failed");
    assert_eq!(e.rpc_code(), Some(-32000), "{e}");
    for (tool, needle) in [("badstatus", "unknown status"), ("malformed", "no taskId")] {
        let e = bounded(c.call_tool_as_task(tool, json!({}), TaskCallOptions::new()))
            .await
            .expect_err(tool);
        assert!(
            matches!(&e, ClientError::Protocol(m) if m.contains(needle)),
            "{tool}: {e}"
        );
    }
    c.close().await;
    assert!(!log
        .messages()
        .iter()
        .any(|(d, m)| *d == 'C' && m["method"] == "notifications/cancelled"));
    assert_eq!(log.client_requests("tasks/cancel").len(), 1);
    // The hostile payloads are not valid messages: validate what came before them only.
}

#[tokio::test]
async fn task_l01_over_http() {
    let script = Arc::new(Mutex::new(TaskScript::new(false)));
    let s = Scripted::start(move |r: &Req| {
        if r.method != "POST" || r.rpc_method() == "initialize" || r.body.get("id").is_none() {
            return legacy(r);
        }
        let out = script.lock().expect("script").handle(&r.body);
        match out.len() {
            0 => raw(202, "", "", b""),
            1 => json_resp(200, &out[0]),
            _ => sse(&out
                .iter()
                .map(|m| format!("data: {m}\n\n"))
                .collect::<String>()),
        }
    })
    .await;
    let c = bounded(Client::builder().connect_http(&s.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    assert!(!c.is_modern());
    let (call, wait) = done();
    let r = bounded(c.call_tool_to_completion("slow", json!({}), call, wait))
        .await
        .expect("slow");
    assert_eq!(text(&r), "slow done");
    let wait = TaskWaitOptions::new()
        .follow_pushes(true)
        .poll_bounds(Duration::from_millis(1), Duration::from_secs(600));
    let r = bounded(c.call_tool_to_completion("push", json!({}), TaskCallOptions::new(), wait))
        .await
        .expect("pushed over HTTP");
    assert_eq!(text(&r), "pushed");
    let TaskCallOutcome::Task(t) =
        bounded(c.call_tool_as_task("hold", json!({}), TaskCallOptions::new()))
            .await
            .expect("task")
    else {
        panic!("a task")
    };
    let info = bounded(c.cancel_task(&t.task_id)).await.expect("cancel");
    assert_eq!(info.map(|i| i.status), Some(TaskStatus::Cancelled));
    assert_eq!(
        bounded(c.list_tasks(None)).await.expect("list").items.len(),
        3
    );
    for r in s.requests() {
        if r.rpc_method().starts_with("tasks/") {
            assert!(r.head.contains("mcp-session-id: s1"), "{}", r.head);
        }
        if r.rpc_method() == "tools/call" {
            assert_eq!(r.body["params"]["task"], json!({}));
        }
    }
    c.close().await;
}
