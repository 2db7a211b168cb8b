//! An in-process MCP server for HTTP wire tests, served on 127.0.0.1 port 0.
//!
//! Tools: `echo {text}`, `slow {ms}` (progress per quarter, cancellable; counts starts,
//! completions and cancellations),
//! `hang` (one progress event, then waits for cancellation up to 30 s; counts it),
//! `log {level, message}`, `region {region, count}` (both mirrored as `Mcp-Param-*` headers),
//! `needs_elicitation` (-32021 unless declared), `ask {prompt}` (legacy sampling round-trip),
//! `flood {n}` (n progress notifications without yielding; reports how many were queued),
//! `fail` (internal error). Prompt `greet`; resource `demo://readme`.

use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, Limits, LoggingLevel, Prompt, PromptArgument,
    Resource, Server, ServerOptions, Tool,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counters the fixture's handlers update.
#[derive(Default)]
pub struct Counters {
    /// `slow` calls that saw their cancellation.
    pub cancelled: AtomicUsize,
    /// `slow` calls that started.
    pub started: AtomicUsize,
    /// `slow` calls that ran to completion.
    pub completed: AtomicUsize,
}

/// Build the fixture server.
pub fn build(limits: Limits, counters: Arc<Counters>) -> Server {
    build_with(limits, counters, |_| {})
}

/// Build the fixture server, editing its options first.
// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
pub fn build_with(
    limits: Limits,
    counters: Arc<Counters>,
    edit: impl FnOnce(&mut ServerOptions),
) -> Server {
    let c = counters.clone();
    let c2 = counters.clone();
    Server::builder("http-fixture", "1")
        .limits(limits)
        .options(edit)
        .tool(
            Tool::new("echo").input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            handler_fn(|_ctx, args: Value| async move {
                let t = args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(CallToolResult::text(t))
            }),
        )
        .tool(
            Tool::new("slow").input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]})),
            handler_fn(move |ctx, args: Value| {
                let c = c.clone();
                async move {
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                    c.started.fetch_add(1, Ordering::SeqCst);
                    for i in 1..=4u32 {
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_millis(ms / 4)) => {}
                            () = ctx.cancelled() => {
                                c.cancelled.fetch_add(1, Ordering::SeqCst);
                                return Err(HandlerError::internal("cancelled"));
                            }
                        }
                        ctx.progress(f64::from(i), Some(4.0), Some("working"));
                    }
                    c.completed.fetch_add(1, Ordering::SeqCst);
                    Ok(CallToolResult::text(format!("slept {ms} ms")))
                }
            }),
        )
        .tool(
            Tool::new("hang"),
            handler_fn(move |ctx, _args: Value| {
                let c = c2.clone();
                async move {
                    ctx.progress(1.0, None, Some("started"));
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(30)) => {}
                        () = ctx.cancelled() => {
                            c.cancelled.fetch_add(1, Ordering::SeqCst);
                            return Err(HandlerError::internal("cancelled"));
                        }
                    }
                    Ok(CallToolResult::text("done"))
                }
            }),
        )
        .tool(
            Tool::new("log").input_schema(json!({"type": "object", "properties": {"level": {"type": "string"}, "message": {"type": "string"}}, "required": ["level", "message"]})),
            handler_fn(|ctx, args: Value| async move {
                let level = args.get("level").and_then(Value::as_str).and_then(LoggingLevel::parse).unwrap_or(LoggingLevel::Info);
                let sent = ctx.log(level, Some("fixture"), args.get("message").cloned().unwrap_or(Value::Null));
                Ok::<_, HandlerError>(CallToolResult::text(if sent { "sent" } else { "filtered" }))
            }),
        )
        .tool(
            Tool::new("region").input_schema(json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"}
            }, "required": ["region"]})),
            handler_fn(|_ctx, args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text(args.to_string()))
            }),
        )
        .tool(
            Tool::new("needs_elicitation"),
            handler_fn(|ctx, _args: Value| async move {
                ctx.require_client_capability(&["elicitation"])?;
                Ok::<_, HandlerError>(CallToolResult::text("ok"))
            }),
        )
        .tool(
            Tool::new("ask").input_schema(json!({"type": "object", "properties": {"prompt": {"type": "string"}, "timeout_ms": {"type": "integer"}}})),
            handler_fn(|ctx, args: Value| async move {
                let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or("hi").to_owned();
                let wait = args.get("timeout_ms").and_then(Value::as_u64).map_or(Duration::from_secs(10), Duration::from_millis);
                let r = ctx
                    .create_message(
                        json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 10}),
                        Some(wait),
                    )
                    .await?;
                let text = r.pointer("/content/text").and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(CallToolResult::text(text))
            }),
        )
        .tool(
            Tool::new("flood").input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}})),
            handler_fn(|ctx, args: Value| async move {
                let n = args.get("n").and_then(Value::as_u64).unwrap_or(10);
                let mut queued = 0u64;
                for i in 1..=n {
                    if ctx.progress(i as f64, None, None) {
                        queued += 1;
                    }
                }
                Ok::<_, HandlerError>(CallToolResult::text(queued.to_string()))
            }),
        )
        .tool(
            Tool::new("poll"),
            handler_fn(|ctx, _args: Value| async move {
                // SSE polling (LHTTP-04): close the response stream mid-call, answer afterwards.
                let closed = ctx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, HandlerError>(CallToolResult::text(format!("closed={closed}")))
            }),
        )
        .tool(
            Tool::new("fail"),
            handler_fn(|_ctx, _args: Value| async move {
                Err::<Value, _>(HandlerError::internal("secret detail"))
            }),
        )
        .prompt(
            Prompt::new("greet").argument(PromptArgument::new("name", true)),
            handler_fn(|_ctx, args: Value| async move {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("there").to_owned();
                Ok::<_, HandlerError>(json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("Hello {name}")}}]}))
            }),
        )
        .resource(
            Resource::new("demo://readme", "readme").mime_type("text/plain"),
            handler_fn(|ctx, _v: Value| async move {
                let uri = ctx.name().unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(json!({"contents": [{"uri": uri, "text": "readme"}]}))
            }),
        )
        .build()
        .expect("fixture server builds")
}

/// A running fixture.
pub struct Fixture {
    /// The server (for `notify_*`).
    pub server: Server,
    /// The listener (address, service, shutdown).
    pub listener: HttpListener,
    /// Handler counters.
    pub counters: Arc<Counters>,
}

impl Fixture {
    /// Start with default limits and options.
    pub async fn start() -> Self {
        Self::with(Limits::default(), HttpOptions::default()).await
    }

    /// Start with these limits and options.
    pub async fn with(limits: Limits, opts: HttpOptions) -> Self {
        Self::with_server_options(limits, opts, |_| {}).await
    }

    /// Start with these limits, HTTP options and server options.
    pub async fn with_server_options(
        limits: Limits,
        opts: HttpOptions,
        edit: impl FnOnce(&mut ServerOptions),
    ) -> Self {
        let counters = Arc::new(Counters::default());
        let server = build_with(limits, counters.clone(), edit);
        let addr = "127.0.0.1:0".parse().expect("addr");
        let listener = serve(server.clone(), addr, opts).await.expect("listen");
        Self {
            server,
            listener,
            counters,
        }
    }

    /// The bound address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.listener.local_addr()
    }

    /// A client for this fixture.
    pub fn client(&self) -> crate::http::McpHttp {
        crate::http::McpHttp::new(self.addr())
    }
}

/// Call the fixture's `log` tool at `level` on a legacy session: `"sent"` or `"filtered"` tells
/// which log level the serving worker sees for the session (LOG-01).
pub async fn log_on(c: &crate::http::McpHttp, id: i64, level: &str) -> String {
    let ex = c
        .legacy(
            id,
            "tools/call",
            json!({"name": "log", "arguments": {"level": level, "message": "m"}}),
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    ex.text()
}
