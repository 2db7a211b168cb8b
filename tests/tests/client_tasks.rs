//! The client side of the modern tasks extension (REQUIREMENTS TASK-M01…M04, HTTP-09) against
//! the scripted tasks server, over real stdio (every message tapped and validated) and real
//! HTTP on 127.0.0.1 (headers checked): the per-request opt-in, a synchronous answer despite it,
//! polling at the server's pace, following pushes on a listen stream, `input_required` answered
//! through the registered handlers with `tasks/update`, cancelling with `tasks/cancel` (never
//! `notifications/cancelled`), failed tasks, and hostile payloads as precise errors.

use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ClientError, HttpClientOptions, StdioCommand,
    TaskCallOptions, TaskCallOutcome, TaskStatus, TaskWaitOptions, TASKS_EXTENSION,
};
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::scripted::{json_resp, raw, rpc_result, sse, Req, Scripted};
use mcpcore_tests::tasks_script::TaskScript;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TAP: &str = env!("CARGO_BIN_EXE_tap");
const SERVER: &str = env!("CARGO_BIN_EXE_task-server");
const BOUND: Duration = Duration::from_secs(20);
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

fn asking() -> ClientBuilder {
    Client::builder().on_elicitation(client_handler_fn(|_| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }))
}

async fn stdio(b: ClientBuilder, log: &TapLog) -> Client {
    let cmd = StdioCommand::new(TAP).args(tap_args(&log.path, SERVER.as_ref(), &["modern"]));
    let c = bounded(b.connect_stdio(cmd)).await.expect("connect");
    assert!(c.is_modern());
    c
}

fn opted_in(params: &Value) -> bool {
    params
        .pointer("/_meta")
        .and_then(|m| m.get(CAPS))
        .and_then(|c| c.pointer("/extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        == Some(&json!({}))
}

fn text(r: &mcpcore::CallToolResult) -> &str {
    r.content[0]["text"].as_str().unwrap_or_default()
}

/// TASK-M03 shapes of what the client sent about tasks: `taskId` a string, the extension
/// listed, `inputResponses` an object on `tasks/update`.
fn check_task_requests(log: &TapLog) {
    for (d, m) in log.messages() {
        let method = m["method"].as_str().unwrap_or_default();
        if d != 'C' || !method.starts_with("tasks/") {
            continue;
        }
        assert!(m["params"]["taskId"].is_string(), "{m}");
        assert!(opted_in(&m["params"]), "{method} opts in: {m}");
        assert!(
            matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel"),
            "{m}"
        );
        if method == "tasks/update" {
            assert!(m["params"]["inputResponses"].is_object(), "{m}");
        }
    }
}

#[tokio::test]
async fn task_m01_opt_in_per_request_and_a_synchronous_answer() {
    let log = TapLog::new("tasks-optin");
    let c = stdio(Client::builder(), &log).await;
    let plain = bounded(c.call_tool("slow", json!({})))
        .await
        .expect("plain");
    assert_eq!(text(&plain), "sync slow", "no opt-in: no task");
    let out = bounded(c.call_tool_as_task("sync", json!({"a": 1}), TaskCallOptions::new()))
        .await
        .expect("sync");
    let TaskCallOutcome::Completed(r) = out else {
        panic!("a synchronous answer despite the opt-in: {out:?}")
    };
    assert_eq!(text(&r), "sync sync");
    let calls = log.client_requests("tools/call");
    assert_eq!(calls.len(), 2);
    assert!(!opted_in(&calls[0]["params"]), "a plain call never opts in");
    assert!(opted_in(&calls[1]["params"]), "a task call opts in");
    assert!(
        calls[1]["params"].get("task").is_none(),
        "no legacy task param"
    );
    c.close().await;
    log.validate(Era::Modern);
}

#[tokio::test]
async fn task_m02_m03_polls_at_the_server_pace_then_reads_the_result() {
    let log = TapLog::new("tasks-poll");
    let c = stdio(Client::builder(), &log).await;
    let out = bounded(c.call_tool_as_task("slow", json!({}), TaskCallOptions::new()))
        .await
        .expect("task");
    let TaskCallOutcome::Task(t) = out else {
        panic!("a task: {out:?}")
    };
    assert_eq!(t.status, TaskStatus::Working);
    assert_eq!((t.poll_interval_ms, t.ttl_ms), (Some(10), Some(60000)));
    let done = bounded(c.wait_task(&t.task_id, TaskWaitOptions::new()))
        .await
        .expect("wait");
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(
        log.client_requests("tasks/get").len(),
        2,
        "polled until done"
    );
    let r = bounded(c.task_result(&t.task_id)).await.expect("result");
    assert_eq!(text(&r), "slow done");
    let r = bounded(c.call_tool_to_completion(
        "slow",
        json!({}),
        TaskCallOptions::new(),
        TaskWaitOptions::new(),
    ))
    .await
    .expect("to completion");
    assert_eq!(text(&r), "slow done");
    assert!(matches!(
        c.list_tasks(None).await,
        Err(ClientError::InvalidArgument(m)) if m.contains("modern")
    ));
    c.close().await;
    check_task_requests(&log);
    log.validate(Era::Modern);
}

#[tokio::test]
async fn task_m03_input_required_is_answered_through_the_handlers() {
    let log = TapLog::new("tasks-ask");
    let c = stdio(asking(), &log).await;
    let r = bounded(c.call_tool_to_completion(
        "ask",
        json!({}),
        TaskCallOptions::new(),
        TaskWaitOptions::new(),
    ))
    .await
    .expect("answered");
    assert_eq!(text(&r), "hello Ada");
    let updates = log.client_requests("tasks/update");
    assert_eq!(updates.len(), 1, "each key answered once");
    assert_eq!(
        updates[0]["params"]["inputResponses"]["name"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    c.close().await;
    check_task_requests(&log);
    log.validate(Era::Modern);

    // Without a handler the caller gets the task's raw state to drive by hand.
    let log = TapLog::new("tasks-ask-none");
    let c = stdio(Client::builder(), &log).await;
    let e = bounded(c.call_tool_to_completion(
        "ask",
        json!({}),
        TaskCallOptions::new(),
        TaskWaitOptions::new(),
    ))
    .await
    .expect_err("no handler");
    let ClientError::InputRequired(raw) = e else {
        panic!("InputRequired: {e}")
    };
    assert_eq!(raw["status"], "input_required");
    assert!(log.client_requests("tasks/update").is_empty());
    c.close().await;
}

#[tokio::test]
async fn task_m04_follows_pushes_on_a_listen_stream() {
    let log = TapLog::new("tasks-push");
    let c = stdio(Client::builder(), &log).await;
    let wait = TaskWaitOptions::new()
        .follow_pushes(true)
        .poll_bounds(Duration::from_millis(1), Duration::from_secs(600));
    let r = bounded(c.call_tool_to_completion("push", json!({}), TaskCallOptions::new(), wait))
        .await
        .expect("pushed");
    assert_eq!(text(&r), "pushed");
    // Polls always say "working": only the push completed the wait.
    assert_eq!(log.client_requests("tasks/get").len(), 1);
    let listens = log.client_requests("subscriptions/listen");
    assert_eq!(listens.len(), 1);
    let id = listens[0]["params"]["notifications"]["taskIds"][0].as_str();
    assert!(id.is_some_and(|i| i.ends_with("-push")), "{}", listens[0]);
    assert!(opted_in(&listens[0]["params"]), "the listen opts in too");
    c.close().await;
    log.validate(Era::Modern);
}

#[tokio::test]
async fn task_m03_cancel_sends_tasks_cancel_and_terminal_failures() {
    let log = TapLog::new("tasks-cancel");
    let c = stdio(Client::builder(), &log).await;
    let TaskCallOutcome::Task(t) =
        bounded(c.call_tool_as_task("hold", json!({}), TaskCallOptions::new()))
            .await
            .expect("task")
    else {
        panic!("a task")
    };
    let e = bounded(c.wait_task(
        &t.task_id,
        TaskWaitOptions::new().timeout(Duration::from_millis(100)),
    ))
    .await
    .expect_err("still working");
    assert!(matches!(e, ClientError::Timeout), "{e}");
    assert_eq!(bounded(c.cancel_task(&t.task_id)).await.expect("ack"), None);
    let after = bounded(c.get_task(&t.task_id)).await.expect("get");
    assert_eq!(after.status, TaskStatus::Cancelled);
    assert_eq!(
        after.status_message.as_deref(),
        Some("cancelled by request")
    );
    let e = bounded(c.task_result(&t.task_id))
        .await
        .expect_err("cancelled");
    assert!(e.to_string().contains("cancelled"), "{e}");
    let e = bounded(c.call_tool_to_completion(
        "fail",
        json!({}),
        TaskCallOptions::new(),
        TaskWaitOptions::new(),
    ))
    .await
    .expect_err("failed");
    assert_eq!(e.rpc_code(), Some(-32000), "{e}");
    c.close().await;
    let msgs = log.messages();
    assert!(
        !msgs
            .iter()
            .any(|(d, m)| *d == 'C' && m["method"] == "notifications/cancelled"),
        "a task is never cancelled with notifications/cancelled"
    );
    assert_eq!(log.client_requests("tasks/cancel").len(), 1);
    check_task_requests(&log);
    log.validate(Era::Modern);
}

#[tokio::test]
async fn hostile_task_payloads_are_precise_errors() {
    let log = TapLog::new("tasks-hostile");
    let c = stdio(Client::builder(), &log).await;
    for (tool, needle) in [
        ("badstatus", "unknown status \"sleeping\""),
        ("malformed", "no taskId"),
    ] {
        let e = bounded(c.call_tool_as_task(tool, json!({}), TaskCallOptions::new()))
            .await
            .expect_err(tool);
        assert!(
            matches!(&e, ClientError::Protocol(m) if m.contains(needle)),
            "{tool}: {e}"
        );
    }
    let e = bounded(c.get_task("nope")).await.expect_err("unknown task");
    assert_eq!(e.rpc_code(), Some(-32602));
    c.close().await;
}

// ---- HTTP ----

/// The scripted tasks server behind a raw HTTP listener: one message per POST, answered as
/// JSON (one response) or SSE (notifications first).
async fn http_server() -> Scripted {
    let script = Arc::new(Mutex::new(TaskScript::new(true)));
    Scripted::start(move |r: &Req| {
        if r.method != "POST" {
            return raw(405, "", "", b"");
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
    .await
}

async fn http(b: ClientBuilder, url: &str) -> Client {
    let c = bounded(b.connect_http(url, HttpClientOptions::default()))
        .await
        .expect("connect");
    assert!(c.is_modern());
    c
}

#[tokio::test]
async fn http09_task_requests_name_the_task_and_everything_works_over_http() {
    let s = http_server().await;
    let c = http(asking(), &s.url).await;
    for (tool, want) in [
        ("slow", "slow done"),
        ("ask", "hello Ada"),
        ("sync", "sync sync"),
    ] {
        let r = bounded(c.call_tool_to_completion(
            tool,
            json!({}),
            TaskCallOptions::new(),
            TaskWaitOptions::new(),
        ))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(text(&r), want);
    }
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
    bounded(c.cancel_task(&t.task_id)).await.expect("cancel");
    let reqs = s.requests();
    let mut seen = std::collections::HashSet::new();
    for r in &reqs {
        let m = r.rpc_method();
        if !m.starts_with("tasks/") {
            continue;
        }
        seen.insert(m.to_owned());
        let tid = r.body["params"]["taskId"].as_str().expect("taskId");
        assert!(
            r.head
                .contains(&format!("mcp-name: {}", tid.to_lowercase())),
            "HTTP-09: {}",
            r.head
        );
        assert!(r.head.contains(&format!("mcp-method: {m}")), "{}", r.head);
        assert!(opted_in(&r.body["params"]), "{}", r.body);
    }
    for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
        assert!(seen.contains(m), "{m} was sent");
    }
    assert!(!reqs
        .iter()
        .any(|r| r.rpc_method() == "notifications/cancelled"));
    c.close().await;
}

#[tokio::test]
async fn task_m01_a_task_the_client_did_not_ask_for_is_refused() {
    // A hostile server answering a plain call with a task (TASK-M01 forbids it).
    let s = Scripted::start(|r: &Req| match r.rpc_method() {
        "tools/call" => json_resp(
            200,
            &rpc_result(
                &r.id(),
                json!({"resultType": "task", "taskId": "t", "status": "working",
                    "createdAt": "x", "lastUpdatedAt": "x", "ttlMs": null}),
            ),
        ),
        _ => {
            let mut script = TaskScript::new(true);
            match script.handle(&r.body).first() {
                Some(m) => json_resp(200, m),
                None => raw(405, "", "", b""),
            }
        }
    })
    .await;
    let c = http(Client::builder(), &s.url).await;
    let e = bounded(c.call_tool("x", json!({})))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, ClientError::Protocol(m) if m.contains("did not opt into")),
        "{e}"
    );
    let out = bounded(c.call_tool_as_task("x", json!({}), TaskCallOptions::new()))
        .await
        .expect("asked for: accepted");
    assert!(matches!(out, TaskCallOutcome::Task(t) if t.ttl_ms.is_none()));
    c.close().await;
}
