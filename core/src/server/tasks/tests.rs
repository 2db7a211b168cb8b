//! In-process tests of the task engine: options (Rust and JSON), the JSON tool seam, the store
//! bound on the wire, results outliving the creating session, and cancellation rules.

use serde_json::{json, Value};
use std::sync::Arc;

use super::{TaskOptions, TaskSupport, EXTENSION};
use crate::jsonrpc::Id;
use crate::options::apply_json;
use crate::server::test_support::{legacy_session, request};
use crate::server::{NullOutbound, Outbound, Server, ServerOptions, SessionKind};
use crate::{handler_fn, CallToolResult, HandlerError, RequestContext, Tool};

fn slow() -> impl crate::Handler {
    handler_fn(|ctx: RequestContext, _args: Value| async move {
        let id = ctx.task_id().map(str::to_owned);
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
            () = ctx.cancelled() => return Err(HandlerError::cancelled()),
        }
        Ok(CallToolResult::text(format!("task {id:?}")))
    })
}

fn modern_params(params: Value, caps: Value) -> Option<serde_json::Map<String, Value>> {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    p.as_object().cloned()
}

async fn modern(
    server: &Server,
    id: i64,
    method: &str,
    params: Value,
) -> Result<Value, crate::ErrorObject> {
    let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
    let s = server.new_session(SessionKind::HttpModern, sink.clone());
    let caps = json!({"extensions": {EXTENSION: {}}});
    s.handle_request(
        Id::Num(id),
        method.into(),
        modern_params(params, caps),
        sink,
    )
    .await
    .map_or_else(
        || Err(crate::ErrorObject::internal()),
        |r| r.result.map(crate::server::Payload::into_value),
    )
}

#[test]
fn tasks_options_apply_as_json_and_are_checked() {
    let mut o = ServerOptions::new("n", "1");
    assert!(o.tasks.is_none());
    apply_json(
        &mut o,
        &json!({"tasks": {"defaultTtlMs": 5000, "maxTasks": 7}}),
    )
    .expect("applies");
    let t = o.tasks.clone().expect("on");
    assert_eq!(t.default_ttl.as_millis(), 5000);
    assert_eq!(t.max_tasks, 7);
    assert_eq!(
        t.max_ttl,
        TaskOptions::default().max_ttl,
        "a patch keeps the rest"
    );
    apply_json(&mut o, &json!({"tasks": {"pollIntervalMs": 250}})).expect("nested patch");
    let t = o.tasks.clone().expect("on");
    assert_eq!(
        (t.default_ttl.as_millis(), t.poll_interval.as_millis()),
        (5000, 250)
    );
    for bad in [
        json!({"tasks": {"maxTasks": 0}}),
        json!({"tasks": {"defaultTtlMs": 1, "maxTtlMs": 0}}),
        json!({"tasks": {"nope": 1}}),
    ] {
        assert!(apply_json(&mut o, &bad).is_err(), "{bad}");
    }
    apply_json(&mut o, &json!({"tasks": null})).expect("off");
    assert!(o.tasks.is_none());
}

/// A JSON definition without `inputSchema` is listed with the no-arguments schema, as
/// `Tool::from_json` and `Tool::new` give it (one rule for Rust, C, Python and Node; TOOL-03);
/// a definition that is not a tool is refused with the field named.
#[tokio::test]
async fn tool_json_without_input_schema_takes_no_arguments() {
    let mut b = Server::builder("t", "1");
    b.add_tool_json(json!({"name": "bare"}), Arc::new(slow()))
        .expect("registered");
    let e = b
        .add_tool_json(json!({"name": 7}), Arc::new(slow()))
        .expect_err("a number is no name");
    assert!(e.to_string().contains("tool"), "{e}");
    let server = b.build().expect("build");
    let list = modern(&server, 1, "tools/list", json!({}))
        .await
        .expect("list");
    let from_new = serde_json::to_value(crate::Tool::new("x")).expect("tool");
    assert_eq!(list["tools"][0]["inputSchema"], from_new["inputSchema"]);
    assert_eq!(list["tools"][0]["inputSchema"]["type"], "object");
}

/// The JSON seam: `taskSupport` on a tool definition makes a generic handler task-capable.
#[tokio::test]
async fn tool_json_task_support_and_task_id() {
    let mut b = Server::builder("t", "1");
    b.add_tool_json(
        json!({"name": "j", "inputSchema": {"type": "object"}, "taskSupport": "required"}),
        Arc::new(slow()),
    )
    .expect("registered");
    assert!(b
        .add_tool_json(
            json!({"name": "k", "inputSchema": {"type": "object"}, "taskSupport": "often"}),
            Arc::new(slow())
        )
        .is_err());
    let server = b.build().expect("build");
    let list = modern(&server, 1, "tools/list", json!({}))
        .await
        .expect("list");
    assert_eq!(list["tools"][0]["execution"]["taskSupport"], "required");
    let created = modern(&server, 2, "tools/call", json!({"name": "j"}))
        .await
        .expect("task");
    let id = created["taskId"].as_str().expect("id").to_owned();
    let mut done = Value::Null;
    for _ in 0..100 {
        done = modern(&server, 3, "tasks/get", json!({"taskId": id}))
            .await
            .expect("get");
        if done["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("task Some({id:?})")
    );
}

/// A full store refuses a new task with -32603 saying so (the bound is configurable).
#[tokio::test]
async fn a_full_store_refuses_on_the_wire() {
    let server = Server::builder("t", "1")
        .tasks(TaskOptions {
            max_tasks: 1,
            ..TaskOptions::default()
        })
        .task_tool(Tool::new("s"), TaskSupport::Optional, slow())
        .build()
        .expect("build");
    modern(&server, 1, "tools/call", json!({"name": "s"}))
        .await
        .expect("first");
    let e = modern(&server, 2, "tools/call", json!({"name": "s"}))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32603);
    assert!(e.message.contains("task store is full"), "{}", e.message);
}

/// A legacy session that created a task goes away (connection end cancels its requests); the
/// handler keeps running and a new session reads the result. A `notifications/cancelled` for the
/// creating request id never reaches the task (CAN-03).
#[tokio::test]
async fn results_outlive_the_session_and_ignore_notifications_cancelled() {
    let server = Server::builder("t", "1")
        .task_tool(Tool::new("s"), TaskSupport::Optional, slow())
        .build()
        .expect("build");
    let first = legacy_session(&server).await;
    let r = request(
        &first,
        5,
        "tools/call",
        json!({"name": "s", "task": {"ttl": 60000}}),
    )
    .await
    .expect("created");
    let id = r["task"]["taskId"].as_str().expect("id").to_owned();
    first.handle_notification(
        "notifications/cancelled",
        json!({"requestId": 5}).as_object(),
    );
    first.cancel_all();
    drop(first);
    let second = legacy_session(&server).await;
    let result = request(&second, 1, "tasks/result", json!({"taskId": id}))
        .await
        .expect("result");
    assert_eq!(result["content"][0]["text"], format!("task Some({id:?})"));
    assert_eq!(result["_meta"][super::RELATED_TASK]["taskId"], id.as_str());
}

/// The guide's example (docs/src/tasks-apps.md) builds as shown.
#[test]
fn readme_example_builds() {
    use std::time::Duration;
    let server = Server::builder("jobs", "1.0")
        .tasks(TaskOptions {
            default_ttl: Duration::from_secs(600),
            ..TaskOptions::default()
        })
        .task_tool(
            Tool::new("render").description("Renders for a while"),
            TaskSupport::Optional,
            handler_fn(|ctx: RequestContext, _args: Value| async move {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(30)) => {}
                    () = ctx.cancelled() => return Err(HandlerError::cancelled()),
                }
                Ok(CallToolResult::text(format!(
                    "rendered by task {:?}",
                    ctx.task_id()
                )))
            }),
        )
        .build();
    assert!(server.is_ok());
}
