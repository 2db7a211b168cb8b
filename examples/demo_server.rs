//! `demo-server`: a small MCP server speaking both protocol eras over stdio (the default) or
//! Streamable HTTP (`--http 127.0.0.1:PORT`, endpoint `/mcp`; port 0 picks a free port and the
//! bound address is printed on stderr). With `--http`, the legacy session limits can be set:
//! `--max-sessions N`, `--session-idle-secs S`, `--init-timeout-secs S` (see `usage`).
//!
//! Tools: `echo {text}`, `add {a, b}` (structured output), `slow {ms}` (progress, cancellable),
//! `log {level, message}`, `fail` (an internal error the client sees only as -32603).
//! Prompt: `greet {name}`. Resource: `demo://readme`. Template: `demo://notes/{id}`.

use mcpcore::transport::http::{serve, HttpOptions};
use mcpcore::transport::stdio::serve_stdio;
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, LoggingLevel, Prompt, PromptArgument, Resource,
    ResourceTemplate, Server, Tool,
};
use serde_json::{json, Value};
use std::time::Duration;

#[path = "http_flags.rs"]
mod http_flags;

fn build() -> Result<Server, mcpcore::server::BuildError> {
    Server::builder("mcpcore-demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demo server: echo text, add numbers, read notes.")
        .tool(
            Tool::new("echo")
                .description("Echo the given text back.")
                .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
                .annotations(json!({"readOnlyHint": true})),
            handler_fn(|_ctx, args: Value| async move {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(CallToolResult::text(text))
            }),
        )
        .tool(
            Tool::new("add")
                .description("Add two numbers.")
                .input_schema(json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}))
                .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})),
            handler_fn(|_ctx, args: Value| async move {
                let a = args.get("a").and_then(Value::as_f64).unwrap_or_default();
                let b = args.get("b").and_then(Value::as_f64).unwrap_or_default();
                Ok::<_, HandlerError>(CallToolResult::structured(json!({"sum": a + b})))
            }),
        )
        .tool(
            Tool::new("slow")
                .description("Wait `ms` milliseconds, reporting progress; stops early when cancelled.")
                .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000}}, "required": ["ms"]})),
            handler_fn(|ctx, args: Value| async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let steps = 4u64;
                for i in 1..=steps {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms / steps)) => {}
                        () = ctx.cancelled() => return Err(HandlerError::internal("cancelled")),
                    }
                    ctx.progress(i as f64, Some(steps as f64), Some("working"));
                }
                Ok(CallToolResult::text(format!("slept {ms} ms")))
            }),
        )
        .tool(
            Tool::new("log")
                .description("Emit a log message at a level.")
                .input_schema(json!({"type": "object", "properties": {"level": {"type": "string"}, "message": {"type": "string"}}, "required": ["level", "message"]})),
            handler_fn(|ctx, args: Value| async move {
                let level = args.get("level").and_then(Value::as_str).and_then(LoggingLevel::parse).unwrap_or(LoggingLevel::Info);
                let sent = ctx.log(level, Some("demo"), args.get("message").cloned().unwrap_or(Value::Null));
                Ok::<_, HandlerError>(CallToolResult::text(if sent { "sent" } else { "filtered" }))
            }),
        )
        .tool(
            Tool::new("fail").description("Always fails internally (the detail stays in the server log)."),
            handler_fn(|_ctx, _args: Value| async move {
                Err::<Value, _>(HandlerError::internal("database password is hunter2"))
            }),
        )
        .prompt(
            Prompt::new("greet")
                .description("Greet someone by name.")
                .argument(PromptArgument::new("name", true).description("Who to greet")),
            handler_fn(|_ctx, args: Value| async move {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("there").to_owned();
                Ok::<_, HandlerError>(json!({
                    "description": "A greeting",
                    "messages": [{"role": "user", "content": {"type": "text", "text": format!("Say hello to {name}.")}}]
                }))
            }),
        )
        .resource(
            Resource::new("demo://readme", "readme").mime_type("text/plain").description("What this server is."),
            handler_fn(|ctx, _vars: Value| async move {
                let uri = ctx.name().unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "mcpcore demo server"}]}))
            }),
        )
        .resource_template(
            ResourceTemplate::new("demo://notes/{id}", "note").mime_type("text/plain"),
            handler_fn(|ctx, vars: Value| async move {
                let uri = ctx.name().unwrap_or_default().to_owned();
                let id = vars.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": format!("note {id}")}]}))
            }),
        )
        .completion(handler_fn(|_ctx, params: Value| async move {
            let prefix = params.pointer("/argument/value").and_then(Value::as_str).unwrap_or_default().to_owned();
            let values: Vec<&str> = ["alice", "bob", "carol"].into_iter().filter(|n| n.starts_with(&prefix)).collect();
            Ok::<_, HandlerError>(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
        }))
        .build()
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let server = match build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("demo-server: {e}");
            std::process::exit(2);
        }
    };
    let mut opts = HttpOptions::default();
    let (args, session_flags) =
        match http_flags::take(std::env::args().skip(1).collect(), &mut opts) {
            Ok(r) => r,
            Err(e) => usage(&e),
        };
    match args.as_slice() {
        [] if session_flags => usage("the session flags apply to --http only"),
        [] => {}
        [flag, addr] if flag == "--http" => {
            let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
                usage("--http needs an address like 127.0.0.1:8080");
            };
            return serve_http_until_signal(server, addr, opts).await;
        }
        _ => usage("unexpected arguments"),
    }
    if let Err(e) = serve_stdio(&server).await {
        eprintln!("demo-server: {e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "demo-server: {problem}\n\
         usage: demo-server [--http 127.0.0.1:PORT [SESSION FLAGS]]   (default: MCP on stdin/stdout)\n\
         session flags (legacy Streamable HTTP):\n{}",
        http_flags::USAGE
    );
    std::process::exit(2);
}

async fn serve_http_until_signal(server: Server, addr: std::net::SocketAddr, opts: HttpOptions) {
    let listener = match serve(server, addr, opts).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("demo-server: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "demo-server: listening on http://{}/mcp",
        listener.local_addr()
    );
    wait_for_signal().await;
    listener.shutdown().await;
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
