//! The conformance fixture's task tools (the `tasks-*` scenarios of the suite, SEP-2663): `greet`
//! (never a task), `slow_compute`, `failing_job` (task required), `protocol_error_job`,
//! `confirm_delete` and `multi_input` (input while running as a task), `test_tool_with_task`
//! (MRTR rounds on the request, then a task).

use mcpcore::{
    handler_fn, CallToolResult, HandlerError, InputRequired, Outcome, RequestContext,
    ServerBuilder, TaskSupport, Tool,
};
use serde_json::{json, Map, Value};
use std::time::Duration;

fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn elicit(message: &str, props: Value) -> Value {
    json!({"mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": props}})
}

/// The `content` of an accepted elicitation answered under `key`.
fn answer<'a>(ctx: &'a RequestContext, key: &str) -> Option<&'a Map<String, Value>> {
    let r = ctx.input_responses()?.get(key)?;
    (r.get("action").and_then(Value::as_str) == Some("accept"))
        .then(|| r.get("content").and_then(Value::as_object))
        .flatten()
}

/// Sleep `secs`, or stop when the task is cancelled (`tasks/cancel`).
async fn work(ctx: &RequestContext, secs: f64) -> Result<(), HandlerError> {
    let d = Duration::from_secs_f64(secs.clamp(0.0, 600.0));
    tokio::select! {
        () = tokio::time::sleep(d) => Ok(()),
        () = ctx.cancelled() => Err(HandlerError::cancelled()),
    }
}

/// Register the task tools.
pub fn register(b: ServerBuilder) -> ServerBuilder {
    let b = b
        .tool(
            Tool::new("greet")
                .description("Greets by name (never a task).")
                .input_schema(schema(json!({"name": {"type": "string"}}))),
            handler_fn(|_ctx, args: Value| async move {
                let name = args["name"].as_str().unwrap_or("World").to_owned();
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            }),
        )
        .task_tool(
            Tool::new("slow_compute")
                .description("Sleeps `seconds`, then answers; runs as a task when asked.")
                .input_schema(schema(
                    json!({"seconds": {"type": "number"}, "label": {"type": "string"}}),
                )),
            TaskSupport::Optional,
            handler_fn(|ctx: RequestContext, args: Value| async move {
                let secs = args["seconds"].as_f64().unwrap_or(0.0);
                work(&ctx, secs).await?;
                let label = args["label"].as_str().unwrap_or("job");
                Ok(CallToolResult::text(format!("Computed {label} in {secs}s")))
            }),
        )
        .task_tool(
            Tool::new("failing_job")
                .description("A task that ends in a tool error.")
                .input_schema(schema(json!({}))),
            TaskSupport::Required,
            handler_fn(|ctx: RequestContext, _args: Value| async move {
                work(&ctx, 1.0).await?;
                Ok(CallToolResult::error("failing_job failed on purpose"))
            }),
        )
        .task_tool(
            Tool::new("protocol_error_job")
                .description("A task that ends in a protocol error.")
                .input_schema(schema(json!({}))),
            TaskSupport::Optional,
            handler_fn(|_ctx, _args: Value| async move {
                Err::<Value, _>(HandlerError::rpc(
                    -32603,
                    "protocol_error_job failed on purpose",
                ))
            }),
        );
    input_tools(b)
}

fn input_tools(b: ServerBuilder) -> ServerBuilder {
    b.task_tool(
        Tool::new("confirm_delete")
            .description("Asks the client to confirm, then deletes (pretend).")
            .input_schema(schema(json!({"filename": {"type": "string"}}))),
        TaskSupport::Optional,
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let file = args["filename"].as_str().unwrap_or("file").to_owned();
            let Some(c) = answer(&ctx, "confirm") else {
                let ask = elicit(
                    &format!("Delete {file}?"),
                    json!({"confirm": {"type": "boolean"}}),
                );
                return Ok(Outcome::from(InputRequired::new().elicit("confirm", ask)));
            };
            let yes = c.get("confirm").and_then(Value::as_bool) == Some(true);
            let done = if yes { "Deleted" } else { "Kept" };
            Ok(Outcome::from(CallToolResult::text(format!(
                "{done} {file}"
            ))))
        }),
    )
    .task_tool(
        Tool::new("multi_input")
            .description("Asks two questions at once.")
            .input_schema(schema(json!({}))),
        TaskSupport::Optional,
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            let name = |k: &str| {
                answer(&ctx, k)
                    .and_then(|c| c.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let (Some(a), Some(b)) = (name("first"), name("second")) else {
                let q = |m: &str| elicit(m, json!({"name": {"type": "string"}}));
                let ir = InputRequired::new()
                    .elicit("first", q("First name?"))
                    .elicit("second", q("Second name?"));
                return Ok(Outcome::from(ir));
            };
            Ok(Outcome::from(CallToolResult::text(format!(
                "Got {a} and {b}"
            ))))
        }),
    )
    .task_tool_with_gate(
        Tool::new("test_tool_with_task")
            .description("Asks for a name (MRTR), then greets as a task.")
            .input_schema(schema(json!({}))),
        TaskSupport::Required,
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            if answer(&ctx, "user_name").is_some() {
                return Ok(Outcome::Complete(json!({})));
            }
            let ask = elicit("What is your name?", json!({"name": {"type": "string"}}));
            Ok(Outcome::from(InputRequired::new().elicit("user_name", ask)))
        }),
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            work(&ctx, 0.2).await?;
            let name = answer(&ctx, "user_name")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_owned();
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        }),
    )
}
