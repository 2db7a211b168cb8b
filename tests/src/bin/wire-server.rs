//! `wire-server`: the wire tests' fixture server, built on the public `mcpcore` API only.
//!
//! It covers what the demo server cannot: configurable limits and page size, server→client
//! requests (sampling, elicitation, roots, ping), list-change and resource-update announcements,
//! structured-output edge cases, a server that ignores cancellation, and the fault tools (a
//! handler that panics, one that never returns, and the gauge of the latter's live calls).
//!
//! Flags: `--page-size N`, `--max-message-bytes N`, `--grace-ms N`, `--peer-timeout-ms N`,
//! `--max-inflight N`, `--max-outbound-queue N`, `--handler-timeout-ms N`, `--no-list-changed`,
//! `--verbose` (trace logs on stderr).

use mcpcore::transport::stdio::serve_stdio;
use mcpcore::{
    handler_fn, CallToolResult, Content, HandlerError, Limits, LoggingLevel, Prompt,
    PromptArgument, RequestContext, Resource, ResourceTemplate, Server, Tool,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Calls of `forever` whose handler future is still alive (dropped futures are not counted).
static LIVE_FOREVER: AtomicUsize = AtomicUsize::new(0);
/// Calls of `forever` that observed their cancellation token fire.
static SAW_CANCEL: AtomicUsize = AtomicUsize::new(0);

/// Counts one live `forever` call until its future is dropped.
struct Live;

impl Live {
    fn new() -> Self {
        LIVE_FOREVER.fetch_add(1, Ordering::SeqCst);
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE_FOREVER.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The built server, for handlers that announce changes to every session.
static SERVER: OnceLock<Server> = OnceLock::new();

#[derive(Default)]
struct Flags {
    page_size: Option<usize>,
    max_message_bytes: Option<usize>,
    grace_ms: Option<u64>,
    peer_timeout_ms: Option<u64>,
    max_inflight: Option<usize>,
    max_outbound_queue: Option<usize>,
    handler_timeout_ms: Option<u64>,
    no_list_changed: bool,
    verbose: bool,
}

fn parse_flags() -> Result<Flags, String> {
    let mut f = Flags::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("{name} needs a non-negative integer"))
        };
        match a.as_str() {
            "--page-size" => f.page_size = Some(num(&a)? as usize),
            "--max-message-bytes" => f.max_message_bytes = Some(num(&a)? as usize),
            "--grace-ms" => f.grace_ms = Some(num(&a)?),
            "--peer-timeout-ms" => f.peer_timeout_ms = Some(num(&a)?),
            "--max-inflight" => f.max_inflight = Some(num(&a)? as usize),
            "--max-outbound-queue" => f.max_outbound_queue = Some(num(&a)? as usize),
            "--handler-timeout-ms" => f.handler_timeout_ms = Some(num(&a)?),
            "--no-list-changed" => f.no_list_changed = true,
            "--verbose" => f.verbose = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(f)
}

fn u64_arg(args: &Value, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn timeout_arg(args: &Value) -> Option<Duration> {
    u64_arg(args, "timeout_ms").map(Duration::from_millis)
}

/// Input schema shared by the server→client request tools.
fn peer_schema() -> Value {
    json!({"type": "object", "properties": {
        "timeout_ms": {"type": "integer", "minimum": 1},
        "catch": {"type": "boolean"},
        "tools": {"type": "boolean"},
        "mode": {"enum": ["form", "url"]}
    }})
}

/// A server→client request's outcome as a tool result. With `catch`, a failure becomes an
/// `isError` result naming the error (so tests see what the handler saw); otherwise it
/// propagates and the engine maps it (a timeout is -32001).
fn peer_outcome(
    args: &Value,
    r: Result<Value, mcpcore::server::PeerError>,
) -> Result<CallToolResult, HandlerError> {
    match r {
        Ok(v) => {
            let mut out = CallToolResult::text(v.to_string());
            out.structured_content = Some(json!({"answer": v}));
            Ok(out)
        }
        Err(e) if args.get("catch").and_then(Value::as_bool) == Some(true) => {
            Ok(CallToolResult::error(format!("peer error: {e:?}")))
        }
        Err(e) => Err(e.into()),
    }
}

async fn sleep_or_cancel(ctx: &RequestContext, ms: u64) -> bool {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => true,
        () = ctx.cancelled() => false,
    }
}

fn build(flags: &Flags) -> Result<Server, mcpcore::server::BuildError> {
    let mut limits = Limits::default();
    if let Some(n) = flags.max_message_bytes {
        limits.max_message_bytes = n;
    }
    if let Some(n) = flags.max_inflight {
        limits.max_inflight = n;
    }
    if let Some(n) = flags.max_outbound_queue {
        limits.max_outbound_queue = n;
    }
    if let Some(ms) = flags.grace_ms {
        limits.shutdown_grace = Duration::from_millis(ms);
    }
    if let Some(ms) = flags.peer_timeout_ms {
        limits.peer_request_timeout = Duration::from_millis(ms);
    }
    limits.handler_timeout = flags.handler_timeout_ms.map(Duration::from_millis);
    let list_changed = !flags.no_list_changed;
    let builder = Server::builder("wire-server", "1.0.0")
        .instructions("Fixture server for mcpcore wire tests.")
        .limits(limits)
        .page_size(flags.page_size)
        .options(|o| {
            o.tools_list_changed = list_changed;
            o.prompts_list_changed = list_changed;
            o.resources_list_changed = list_changed;
        });
    let builder = tools(builder);
    let builder = fault_tools(builder);
    let builder = peer_tools(builder);
    let builder = prompts_and_resources(builder);
    builder.build()
}

/// Handlers that misbehave: the engine must answer for them (tests/tests/faults.rs).
fn fault_tools(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.tool(
        Tool::new("panic").description("Panics; the peer must get a generic -32603."),
        handler_fn(|_ctx, _args: Value| async move {
            if LIVE_FOREVER.load(Ordering::SeqCst) < usize::MAX {
                panic!("secret panic detail: db password hunter2");
            }
            Ok::<_, HandlerError>(CallToolResult::text("unreachable"))
        }),
    )
    .tool(
        Tool::new("forever")
            .description("Never returns, not even once cancelled; counts itself while alive."),
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            let _live = Live::new();
            ctx.cancelled().await;
            SAW_CANCEL.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
            Ok::<_, HandlerError>(CallToolResult::text("unreachable"))
        }),
    )
    .tool(
        Tool::new("gauge").description("Live `forever` calls and how many saw their cancellation."),
        handler_fn(|_ctx, _args: Value| async move {
            Ok::<_, HandlerError>(CallToolResult::structured(json!({
                "live": LIVE_FOREVER.load(Ordering::SeqCst),
                "sawCancel": SAW_CANCEL.load(Ordering::SeqCst),
            })))
        }),
    )
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn tools(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.tool(
        Tool::new("echo")
            .title("Echo")
            .description("Echo text back.")
            .input_schema(json!({"type": "object", "properties": {"text": {"type": "string", "minLength": 1}}, "required": ["text"], "additionalProperties": false}))
            .annotations(json!({"readOnlyHint": true, "title": "Echo tool"}))
            .icons(json!([{"src": "https://example.com/echo.png", "mimeType": "image/png", "sizes": ["48x48"]}]))
            .meta(json!({"example.com/tier": "free"})),
        handler_fn(|_ctx, args: Value| async move {
            Ok::<_, HandlerError>(CallToolResult::text(str_arg(&args, "text")))
        }),
    )
    .tool(
        Tool::new("wait")
            .description("Sleep `ms`, reporting progress; on cancellation log `wait cancelled`.")
            .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]})),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let ms = u64_arg(&args, "ms").unwrap_or(0);
            for i in 1..=4u32 {
                if !sleep_or_cancel(&ctx, ms / 4).await {
                    ctx.log(LoggingLevel::Warning, Some("wait"), json!("wait cancelled"));
                    return Err(HandlerError::internal("cancelled"));
                }
                ctx.progress(f64::from(i), Some(4.0), Some("waiting"));
            }
            Ok(CallToolResult::text(format!("waited {ms} ms")))
        }),
    )
    .tool(
        Tool::new("stubborn")
            .description("Sleep `ms`, ignoring cancellation.")
            .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}, "required": ["ms"]})),
        handler_fn(|_ctx, args: Value| async move {
            let ms = u64_arg(&args, "ms").unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, HandlerError>(CallToolResult::text(format!("stubborn {ms} ms")))
        }),
    )
    .tool(
        Tool::new("fail").description("Fails internally; the detail stays in the server log."),
        handler_fn(|_ctx, _args: Value| async move {
            Err::<Value, _>(HandlerError::internal("secret detail: db password hunter2"))
        }),
    )
    .tool(
        Tool::new("log")
            .description("Emit a log message at `level`.")
            .input_schema(json!({"type": "object", "properties": {"level": {"type": "string"}, "message": {"type": "string"}}, "required": ["level"]})),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let level = LoggingLevel::parse(str_arg(&args, "level")).unwrap_or(LoggingLevel::Info);
            let sent = ctx.log(level, Some("fixture"), json!(str_arg(&args, "message")));
            Ok::<_, HandlerError>(CallToolResult::text(if sent { "sent" } else { "filtered" }))
        }),
    )
    .tool(
        Tool::new("whoami").description("The client info and capabilities of this session."),
        handler_fn(|ctx: RequestContext, _args: Value| async move {
            let mut r = CallToolResult::text("whoami");
            r.structured_content = Some(json!({
                "clientInfo": ctx.client_info(),
                "capabilities": ctx.client_capabilities(),
                "protocolVersion": ctx.protocol_version(),
            }));
            Ok::<_, HandlerError>(r)
        }),
    )
    .tool(
        Tool::new("structured")
            .description("Return `value` as structuredContent (no output schema); `blocks` adds a text block.")
            .input_schema(json!({"type": "object", "properties": {"value": {}, "blocks": {"type": "boolean"}}, "required": ["value"]})),
        handler_fn(|_ctx, args: Value| async move {
            let blocks = if args.get("blocks").and_then(Value::as_bool) == Some(true) {
                vec![Content::text("explicit")]
            } else {
                Vec::new()
            };
            Ok::<_, HandlerError>(CallToolResult {
                content: blocks,
                structured_content: args.get("value").cloned(),
                ..Default::default()
            })
        }),
    )
    .tool(
        Tool::new("typed")
            .description("Output-schema checks: mode ok | bad | missing | error.")
            .input_schema(json!({"type": "object", "properties": {"mode": {"enum": ["ok", "bad", "missing", "error"]}}, "required": ["mode"]}))
            .output_schema(json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]})),
        handler_fn(|_ctx, args: Value| async move {
            Ok::<_, HandlerError>(match str_arg(&args, "mode") {
                "ok" => CallToolResult::structured(json!({"sum": 3})),
                "bad" => CallToolResult::structured(json!({"sum": "three"})),
                "error" => CallToolResult::error("could not add"),
                _ => CallToolResult::text("no structured content"),
            })
        }),
    )
    .tool(
        Tool::new("choice")
            .description("A root-oneOf output schema: returns a string or a number.")
            .input_schema(json!({"type": "object", "properties": {"kind": {"enum": ["string", "number", "object"]}}, "required": ["kind"]}))
            .output_schema(json!({"oneOf": [{"type": "string"}, {"type": "number"}]})),
        handler_fn(|_ctx, args: Value| async move {
            let v = match str_arg(&args, "kind") {
                "string" => json!("hello"),
                "number" => json!(42),
                _ => json!({"not": "allowed"}),
            };
            Ok::<_, HandlerError>(CallToolResult {
                structured_content: Some(v),
                ..Default::default()
            })
        }),
    )
    .tool(
        Tool::new("content").description("Every content block kind, with annotations and _meta."),
        handler_fn(|_ctx, _args: Value| async move {
            let mut text = Content::text("text block");
            text["annotations"] = json!({"audience": ["user"], "priority": 0.5});
            text["_meta"] = json!({"example.com/k": 1});
            let mut out = CallToolResult {
                content: vec![
                    text,
                    Content::image("iVBORw0KGgo=", "image/png"),
                    Content::audio("UklGRg==", "audio/wav"),
                    Content::resource_link("fix://readme", "readme"),
                    Content::embedded_text("fix://readme", "text/plain", "embedded"),
                ],
                ..Default::default()
            };
            out.meta = Some(json!({"example.com/trace": "abc"}));
            Ok::<_, HandlerError>(out)
        }),
    )
    .tool(
        Tool::new("changed")
            .description("Announce a list change: what = tools | prompts | resources.")
            .input_schema(json!({"type": "object", "properties": {"what": {"enum": ["tools", "prompts", "resources"]}}, "required": ["what"]})),
        handler_fn(|_ctx, args: Value| async move {
            let server = SERVER.get().ok_or_else(|| HandlerError::internal("server not set"))?;
            let n = match str_arg(&args, "what") {
                "tools" => server.notify_tools_list_changed(),
                "prompts" => server.notify_prompts_list_changed(),
                _ => server.notify_resources_list_changed(),
            };
            Ok::<_, HandlerError>(CallToolResult::text(format!("{n}")))
        }),
    )
    .tool(
        Tool::new("touch")
            .description("Announce that resource `uri` changed to its subscribers.")
            .input_schema(json!({"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]})),
        handler_fn(|_ctx, args: Value| async move {
            let server = SERVER.get().ok_or_else(|| HandlerError::internal("server not set"))?;
            let n = server.notify_resource_updated(str_arg(&args, "uri"));
            Ok::<_, HandlerError>(CallToolResult::text(format!("{n}")))
        }),
    )
}

fn peer_tools(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.tool(
        Tool::new("sample")
            .description("sampling/createMessage to the client (`tools` adds tools + toolChoice).")
            .input_schema(peer_schema()),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let mut params = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
                "maxTokens": 16,
            });
            if args.get("tools").and_then(Value::as_bool) == Some(true) {
                params["tools"] = json!([{"name": "lookup", "inputSchema": {"type": "object"}}]);
                params["toolChoice"] = json!({"mode": "auto"});
            }
            let r = ctx.create_message(params, timeout_arg(&args)).await;
            peer_outcome(&args, r)
        }),
    )
    .tool(
        Tool::new("elicit")
            .description("elicitation/create in `mode` form (default) or url.")
            .input_schema(peer_schema()),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let params = if str_arg(&args, "mode") == "url" {
                json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e-1"})
            } else {
                json!({"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
            };
            let r = ctx.elicit(params, timeout_arg(&args)).await;
            peer_outcome(&args, r)
        }),
    )
    .tool(
        Tool::new("roots").description("roots/list to the client.").input_schema(peer_schema()),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let r = ctx.list_roots(timeout_arg(&args)).await;
            peer_outcome(&args, r)
        }),
    )
    .tool(
        Tool::new("ping-client").description("ping the client.").input_schema(peer_schema()),
        handler_fn(|ctx: RequestContext, args: Value| async move {
            let r = ctx.ping_client(timeout_arg(&args)).await;
            peer_outcome(&args, r)
        }),
    )
}

fn text_contents(uri: &str, text: String) -> Value {
    json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]})
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn prompts_and_resources(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.prompt(
        Prompt::new("greet")
            .description("Greet someone.")
            .argument(PromptArgument::new("name", true))
            .argument(PromptArgument::new("style", false)),
        handler_fn(|_ctx, args: Value| async move {
            let text = format!("Hello {} ({})", str_arg(&args, "name"), str_arg(&args, "style"));
            Ok::<_, HandlerError>(json!({"description": "greeting", "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
        }),
    )
    .prompt(
        Prompt::new("plain").description("No arguments."),
        handler_fn(|_ctx, _args: Value| async move {
            Ok::<_, HandlerError>(json!({"messages": [{"role": "assistant", "content": {"type": "text", "text": "plain"}}]}))
        }),
    )
    .prompt(
        Prompt::new("broken").description("Fails internally."),
        handler_fn(|_ctx, _args: Value| async move {
            Err::<Value, _>(HandlerError::internal("prompt store offline"))
        }),
    )
    .resource(
        Resource::new("fix://readme", "readme").mime_type("text/plain"),
        handler_fn(|ctx: RequestContext, _vars: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(text_contents(&uri, "readme".into()))
        }),
    )
    .resource(
        Resource::new("fix://items/special", "special item").mime_type("text/plain"),
        handler_fn(|ctx: RequestContext, _vars: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(text_contents(&uri, "exact".into()))
        }),
    )
    .resource(
        Resource::new("fix://broken", "broken"),
        handler_fn(|_ctx, _vars: Value| async move {
            Err::<Value, _>(HandlerError::internal("disk on fire"))
        }),
    )
    .resource_template(
        ResourceTemplate::new("fix://items/{id}", "item"),
        handler_fn(|ctx: RequestContext, vars: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(text_contents(&uri, format!("item {}", str_arg(&vars, "id"))))
        }),
    )
    .resource_template(
        ResourceTemplate::new("fix://users/{user}/posts/{post}", "post"),
        handler_fn(|ctx: RequestContext, vars: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            let text = format!("user={} post={}", str_arg(&vars, "user"), str_arg(&vars, "post"));
            Ok::<_, HandlerError>(text_contents(&uri, text))
        }),
    )
    .resource_template(
        ResourceTemplate::new("fix://files/{+path}", "file"),
        handler_fn(|ctx: RequestContext, vars: Value| async move {
            let uri = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(text_contents(&uri, format!("file {}", str_arg(&vars, "path"))))
        }),
    )
    .completion(handler_fn(|_ctx, params: Value| async move {
        let prefix = params.pointer("/argument/value").and_then(Value::as_str).unwrap_or_default().to_owned();
        let pool: &[&str] = match params.pointer("/ref/type").and_then(Value::as_str) {
            Some("ref/prompt") => &["alice", "bob", "carol"],
            _ => &["1", "2", "42"],
        };
        if prefix == "many" {
            // More than CompleteResult's 100 values, no total: core cuts and counts (CMP-01).
            let many: Vec<String> = (0..150).map(|i| format!("many{i}")).collect();
            return Ok(json!({"completion": {"values": many}}));
        }
        let values: Vec<&str> = pool.iter().copied().filter(|v| v.starts_with(&prefix)).collect();
        Ok::<_, HandlerError>(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }))
    .subscription_handlers(
        handler_fn(|ctx: RequestContext, params: Value| async move {
            let uri = str_arg(&params, "uri");
            if uri == "fix://forbidden" {
                return Err(HandlerError::invalid_params("fix://forbidden cannot be subscribed"));
            }
            ctx.log(LoggingLevel::Info, Some("subscriptions"), json!(format!("subscribed {uri}")));
            Ok(json!({}))
        }),
        handler_fn(|ctx: RequestContext, params: Value| async move {
            let uri = str_arg(&params, "uri");
            ctx.log(LoggingLevel::Info, Some("subscriptions"), json!(format!("unsubscribed {uri}")));
            Ok::<_, HandlerError>(json!({}))
        }),
    )
}

#[tokio::main]
async fn main() {
    let flags = match parse_flags() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("wire-server: {e}");
            std::process::exit(2);
        }
    };
    let filter = if flags.verbose { "trace" } else { "warn" };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .init();
    let server = match build(&flags) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wire-server: {e}");
            std::process::exit(2);
        }
    };
    let server = SERVER.get_or_init(|| server);
    if let Err(e) = serve_stdio(server).await {
        eprintln!("wire-server: {e}");
        std::process::exit(1);
    }
}
