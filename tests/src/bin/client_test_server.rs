//! `client-test-server [--page-size N] [--ttl MS] [--report-exit]`: a server built on mcpcore's public API for
//! the client wire tests. Beyond the demo tools it has MRTR tools (modern `input_required`),
//! server→client requests (legacy sampling / elicitation / roots), list-changed and
//! resource-updated notifications, many tools for pagination, and a custom method.

use mcpcore::transport::stdio::serve_stdio;
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, InputRequired, LoggingLevel, Outcome, Prompt,
    PromptArgument, Resource, Server, Tool,
};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use std::time::Duration;

static SERVER: OnceLock<Server> = OnceLock::new();

/// The state echoed by the client on MRTR retries; awkward bytes on purpose.
const STATE: &str = "st\u{e9}te/\"quoted\"+==\\n";

fn input_request(kind: &str) -> (String, Value) {
    match kind {
        "sample" => (
            "sampling/createMessage".into(),
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}),
        ),
        "roots" => ("roots/list".into(), json!({})),
        _ => (
            "elicitation/create".into(),
            json!({"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}),
        ),
    }
}

fn cap_path(kind: &str) -> &'static [&'static str] {
    match kind {
        "sample" => &["sampling"],
        "roots" => &["roots"],
        _ => &["elicitation"],
    }
}

async fn ask(ctx: mcpcore::RequestContext, args: Value) -> Result<Outcome, HandlerError> {
    let kind = args
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("elicit")
        .to_owned();
    let (method, params) = input_request(&kind);
    if ctx.is_modern() {
        ctx.require_client_capability(cap_path(&kind))?;
        if let Some(answer) = ctx.input_responses().and_then(|r| r.get("q")) {
            let state_ok = ctx.request_state() == Some(STATE);
            return Ok(
                CallToolResult::structured(json!({"answer": answer, "stateOk": state_ok})).into(),
            );
        }
        let mut reqs = Map::new();
        reqs.insert("q".into(), json!({"method": method, "params": params}));
        return Ok(Outcome::InputRequired(InputRequired {
            input_requests: reqs,
            request_state: Some(STATE.into()),
        }));
    }
    let r = match kind.as_str() {
        // Bypass the capability check: a client without a handler answers -32601.
        "unchecked" => ctx.peer_request("roots/list", None, None).await,
        "ping" => ctx.ping_client(None).await,
        "sample" => ctx.create_message(params, None).await,
        "roots" => ctx.list_roots(None).await,
        _ => ctx.elicit(params, None).await,
    };
    match r {
        Ok(answer) => {
            Ok(CallToolResult::structured(json!({"answer": answer, "stateOk": true})).into())
        }
        Err(e) => Ok(CallToolResult::error(format!("peer request failed: {e}")).into()),
    }
}

/// `rounds {n}`: asks for input `n` times (state counts the rounds), then completes.
async fn rounds(ctx: mcpcore::RequestContext, args: Value) -> Result<Outcome, HandlerError> {
    let n = args.get("n").and_then(Value::as_u64).unwrap_or(1);
    let done: u64 = ctx
        .request_state()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if done >= n {
        return Ok(CallToolResult::text(format!("done after {done} rounds")).into());
    }
    let mut reqs = Map::new();
    reqs.insert(
        format!("r{done}"),
        json!({"method": "elicitation/create", "params": {"mode": "form", "message": "more?", "requestedSchema": {"type": "object", "properties": {}}}}),
    );
    Ok(Outcome::InputRequired(InputRequired {
        input_requests: reqs,
        request_state: Some((done + 1).to_string()),
    }))
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn build(
    page_size: Option<usize>,
    ttl: Option<u64>,
) -> Result<Server, mcpcore::server::BuildError> {
    let mut b = Server::builder("client-test-server", "1.0.0")
        .instructions("Test server for the client.")
        .page_size(page_size);
    if let Some(t) = ttl {
        b = b
            .cache_hints(t, false)
            .options(|o| o.legacy_cache_hints = true);
    }
    b = b
        .tool(
            Tool::new("echo").input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
            handler_fn(|ctx: mcpcore::RequestContext, args: Value| async move {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                let meta = ctx.meta().cloned().unwrap_or(Value::Null);
                let mut r = CallToolResult::text(text);
                r.structured_content = Some(json!({"meta": meta, "version": ctx.protocol_version(), "caps": ctx.client_capabilities()}));
                Ok::<_, HandlerError>(r)
            }),
        )
        .tool(
            Tool::new("add")
                .input_schema(json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}))
                .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})),
            handler_fn(|_ctx, args: Value| async move {
                let a = args.get("a").and_then(Value::as_f64).unwrap_or_default();
                let b = args.get("b").and_then(Value::as_f64).unwrap_or_default();
                Ok::<_, HandlerError>(CallToolResult::structured(json!({"sum": a + b})))
            }),
        )
        .tool(
            Tool::new("slow").input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}})),
            handler_fn(|ctx: mcpcore::RequestContext, args: Value| async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                for i in 1..=4u64 {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms / 4)) => {}
                        () = ctx.cancelled() => return Err(HandlerError::internal("cancelled")),
                    }
                    ctx.progress(i as f64, Some(4.0), Some("working"));
                }
                Ok(CallToolResult::text(format!("slept {ms} ms")))
            }),
        )
        .tool(
            Tool::new("log").input_schema(json!({"type": "object", "properties": {"level": {"type": "string"}, "message": {"type": "string"}}})),
            handler_fn(|ctx: mcpcore::RequestContext, args: Value| async move {
                let level = args.get("level").and_then(Value::as_str).and_then(LoggingLevel::parse).unwrap_or(LoggingLevel::Info);
                let sent = ctx.log(level, Some("test"), args.get("message").cloned().unwrap_or(Value::Null));
                Ok::<_, HandlerError>(CallToolResult::text(if sent { "sent" } else { "filtered" }))
            }),
        )
        .tool(
            Tool::new("ask").input_schema(json!({"type": "object", "properties": {"kind": {"type": "string"}}})),
            handler_fn(ask),
        )
        .tool(
            Tool::new("rounds").input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}})),
            handler_fn(rounds),
        )
        .tool(
            Tool::new("poke").description("Announce a tool list change and an update of test://res."),
            handler_fn(|_ctx, _args: Value| async move {
                if let Some(s) = SERVER.get() {
                    s.notify_tools_list_changed();
                    s.notify_resource_updated("test://res");
                }
                Ok::<_, HandlerError>(CallToolResult::text("poked"))
            }),
        );
    for i in 0..5 {
        b = b.tool(
            Tool::new(format!("extra{i}")),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text("x"))
            }),
        );
    }
    b.prompt(
        Prompt::new("greet").argument(PromptArgument::new("name", true)),
        handler_fn(|_ctx, args: Value| async move {
            let name = args.get("name").and_then(Value::as_str).unwrap_or("there").to_owned();
            Ok::<_, HandlerError>(json!({"description": "greeting", "messages": [{"role": "user", "content": {"type": "text", "text": format!("Hello {name}")}}]}))
        }),
    )
    .resource(
        Resource::new("test://res", "res").mime_type("text/plain"),
        handler_fn(|ctx: mcpcore::RequestContext, _v: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(json!({"contents": [{"uri": uri, "text": "content"}]}))
        }),
    )
    .completion(handler_fn(|_ctx, params: Value| async move {
        let prefix = params.pointer("/argument/value").and_then(Value::as_str).unwrap_or_default().to_owned();
        let values: Vec<&str> = ["alice", "bob", "alina"].into_iter().filter(|n| n.starts_with(&prefix)).collect();
        Ok::<_, HandlerError>(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }))
    .method(
        "custom/echo",
        handler_fn(|_ctx, params: Value| async move {
            let mut p = params;
            if let Some(o) = p.as_object_mut() {
                o.remove("_meta");
            }
            Ok::<_, HandlerError>(json!({"echo": p}))
        }),
    )
    .build()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut page_size = None;
    let mut ttl = None;
    let mut report_exit = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--page-size" => page_size = args.get(i + 1).and_then(|s| s.parse().ok()),
            "--ttl" => ttl = args.get(i + 1).and_then(|s| s.parse().ok()),
            "--report-exit" => {
                // For the close test: a line on stderr once serving ended by itself (a signal
                // would end the process before it).
                report_exit = true;
                i += 1;
                continue;
            }
            "--print-cwd-env" => {
                // For the spawn test: report cwd and one variable on stderr, then serve.
                eprintln!(
                    "cwd={} env={}",
                    std::env::current_dir()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default(),
                    std::env::var("CLIENT_TEST_VAR").unwrap_or_default()
                );
                i += 1;
                continue;
            }
            _ => {}
        }
        i += 2;
    }
    let server = match build(page_size, ttl) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("client-test-server: {e}");
            std::process::exit(2);
        }
    };
    let _ = SERVER.set(server.clone());
    if let Err(e) = serve_stdio(&server).await {
        eprintln!("client-test-server: {e}");
        std::process::exit(1);
    }
    if report_exit {
        eprintln!("client-test-server: exited on its own");
    }
}
