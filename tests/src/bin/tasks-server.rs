//! `tasks-server`: the conformance fixture's task tools (examples/conformance/tasks.rs) plus a few
//! for the wire tests, over stdio (default) or Streamable HTTP (`--http 127.0.0.1:0`, the address
//! printed on stderr). `--ttl-ms N` sets the default task TTL, `--max-tasks N` the store bound.
//!
//! Extra tools: `progress_job {steps}` (reports progress while running as a task, PROG-03),
//! `ask_job` (`request_client` for a name, then greets: input inside a task).

#[path = "../../../examples/conformance/tasks.rs"]
mod tasks;

use mcpcore::{
    handler_fn, CallToolResult, HandlerError, RequestContext, Server, TaskOptions, TaskSupport,
    Tool,
};
use serde_json::{json, Value};
use std::time::Duration;

fn options(args: &[String]) -> TaskOptions {
    let mut o = TaskOptions::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let n = it.clone().next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), n) {
            ("--ttl-ms", Some(ms)) => o.default_ttl = Duration::from_millis(ms),
            ("--max-tasks", Some(n)) => o.max_tasks = usize::try_from(n).unwrap_or(1),
            _ => {}
        }
    }
    o
}

fn extra_tools(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.task_tool(
        Tool::new("progress_job")
            .input_schema(json!({"type": "object", "properties": {"steps": {"type": "integer"}}})),
        TaskSupport::Optional,
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let steps = args["steps"].as_u64().unwrap_or(3);
            for i in 1..=steps {
                tokio::time::sleep(Duration::from_millis(30)).await;
                ctx.progress(i as f64, Some(steps as f64), None);
            }
            Ok(CallToolResult::text(format!("done in {steps} steps")))
        }),
    )
    .task_tool(
        Tool::new("ask_job").input_schema(json!({"type": "object"})),
        TaskSupport::Optional,
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx
                .request_client(
                    "elicitation/create",
                    Some(json!({"mode": "form", "message": "Name?", "requestedSchema": schema})),
                )
                .await
                .map_err(HandlerError::from)?;
            let name = answer["content"]["name"].as_str().unwrap_or("?").to_owned();
            Ok(CallToolResult::text(format!("Hi {name}")))
        }),
    )
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let builder = Server::builder("tasks-server", "1").tasks(options(&args));
    let server = match extra_tools(tasks::register(builder)).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tasks-server: {e}");
            std::process::exit(2);
        }
    };
    let http = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1))
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok());
    if let Some(addr) = http {
        let opts = mcpcore::transport::http::HttpOptions::default();
        let listener = match server.serve_http(addr, opts).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("tasks-server: {e}");
                std::process::exit(1);
            }
        };
        eprintln!(
            "tasks-server: listening on http://{}/mcp",
            listener.local_addr()
        );
        std::future::pending::<()>().await;
    }
    if let Err(e) = server.serve_stdio().await {
        eprintln!("tasks-server: {e}");
        std::process::exit(1);
    }
}
