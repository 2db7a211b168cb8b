//! `demo-server`: a small MCP server speaking both protocol eras over stdio (the default) or
//! Streamable HTTP (`--http 127.0.0.1:PORT`, endpoint `/mcp`; port 0 picks a free port and the
//! bound address is printed on stderr). With `--http`, the legacy session limits can be set:
//! `--max-sessions N`, `--session-idle-secs S`, `--init-timeout-secs S`, `--tls-cert PEM --tls-key PEM`,
//! `--allowed-hosts H,H`, `--auth FILE` or `--auth-jwks FILE_OR_URL --auth-issuer ISS
//! --auth-audience AUD` for an OAuth-protected endpoint, and `--redis URL [--redis-prefix P]
//! --request-state-key [ID:]B64` to run as one worker of several behind a load balancer (see
//! `usage`).
//!
//! Tools: `echo {text}`, `add {a, b}` (structured output), `slow {ms}` (progress, cancellable),
//! `log {level, message}`, `fail` (an internal error the client sees only as -32603),
//! `confirm {question}` (asks the client with an elicitation: an `input_required` round on the
//! modern era, carrying sealed `requestState`), `touch` (announces a tool-list change to every
//! listen stream and legacy session; with `--redis`, on every worker).
//! Prompt: `greet {name}`. Resource: `demo://readme`. Template: `demo://notes/{id}`.

use mcpcore::transport::http::HttpOptions;
use mcpcore::{
    handler_fn, prompt_fn, schemars, CallToolResult, GetPromptResult, HandlerError, InputRequired,
    LoggingLevel, Outcome, Prompt, PromptArgument, ReadResourceResult, Resource, ResourceTemplate,
    Server, ServerBuilder, Tool,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[path = "auth_flags.rs"]
mod auth_flags;
#[path = "backplane_flags.rs"]
mod backplane_flags;
#[path = "http_flags.rs"]
mod http_flags;

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

/// The sum of `a` and `b`. (A typed output becomes the tool's `outputSchema` and its
/// `structuredContent`; its doc comments become schema descriptions.)
#[derive(Serialize, schemars::JsonSchema)]
struct AddOut {
    sum: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SlowArgs {
    /// How long to work, in milliseconds.
    #[schemars(range(max = 60000))]
    ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct LogArgs {
    /// An RFC 5424 level name (`debug` … `emergency`).
    level: String,
    message: String,
}

#[derive(Deserialize)]
struct GreetArgs {
    name: String,
}

/// Stands in for a dependency that fails with a detail the client must never see.
fn open_database() -> Result<String, String> {
    Err("connection refused: database password is hunter2".into())
}

fn build(
    backplane: Option<backplane_flags::Shared>,
    metrics: bool,
) -> Result<Server, mcpcore::server::BuildError> {
    let handle = Arc::new(OnceLock::new());
    let mut b =
        Server::builder("mcpcore-demo", env!("CARGO_PKG_VERSION")).options(|o| o.metrics = metrics);
    if let Some(shared) = backplane {
        b = shared.apply(b);
    }
    let server = change_tools(core_tools(b), handle.clone()).build()?;
    let _ = handle.set(server.clone());
    Ok(server)
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ConfirmArgs {
    /// What to ask the user.
    question: String,
}

/// The tools the scale-out tests drive across workers (tests/tests/scaleout.rs): an
/// input_required round whose retry may land on another worker (MRTR, sealed requestState), and
/// a change raised on one worker that must reach listen streams on the others.
fn change_tools(b: ServerBuilder, handle: Arc<OnceLock<Server>>) -> ServerBuilder {
    b.tool(
        Tool::typed::<ConfirmArgs, CallToolResult>("confirm").description(
            "Ask the user to confirm `question` (an elicitation), then report the answer.",
        ),
        mcpcore::tool_fn(
            |ctx: mcpcore::RequestContext, args: ConfirmArgs| async move {
                let answer = ctx
                    .input_responses()
                    .and_then(|r| r.get("confirm"))
                    // Modern: the answer counts only with the state this tool sealed (opened by
                    // any worker). Legacy: the shim re-runs the handler with the answers.
                    .filter(|_| {
                        !ctx.is_modern() || ctx.request_state() == Some(args.question.as_str())
                    });
                let Some(answer) = answer else {
                    let ask = InputRequired::new()
                        .elicit(
                            "confirm",
                            json!({"mode": "form", "message": args.question,
                            "requestedSchema": {"type": "object",
                                "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}),
                        )
                        .state(args.question);
                    return Ok(Outcome::from(ask));
                };
                let ok = answer.get("action").and_then(Value::as_str) == Some("accept")
                    && answer.pointer("/content/ok").and_then(Value::as_bool) == Some(true);
                let text = if ok { "confirmed" } else { "declined" };
                Ok(Outcome::from(CallToolResult::text(format!(
                    "{text}: {}",
                    args.question
                ))))
            },
        ),
    )
    .typed_tool(
        "touch",
        "Announce that the tool list changed (to every listen stream and legacy session).",
        move |_ctx, (): ()| {
            let h = handle.clone();
            async move {
                let n = h.get().map_or(0, Server::notify_tools_list_changed);
                Ok(format!("told {n} local peers"))
            }
        },
    )
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn core_tools(b: ServerBuilder) -> ServerBuilder {
    b.instructions("A demo server: echo text, add numbers, read notes.")
        .tool(
            Tool::typed::<EchoArgs, String>("echo")
                .description("Echo the given text back.")
                .annotations(json!({"readOnlyHint": true})),
            mcpcore::tool_fn(|_ctx, args: EchoArgs| async move { Ok(args.text) }),
        )
        .typed_tool(
            "add",
            "Add two numbers.",
            |_ctx, args: AddArgs| async move {
                Ok(AddOut {
                    sum: args.a + args.b,
                })
            },
        )
        .typed_tool(
            "slow",
            "Wait `ms` milliseconds, reporting progress; stops early when cancelled.",
            |ctx, args: SlowArgs| async move {
                let steps = 4u64;
                for i in 1..=steps {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(args.ms / steps)) => {}
                        () = ctx.cancelled() => return Err(HandlerError::cancelled()),
                    }
                    ctx.progress(i as f64, Some(steps as f64), Some("working"));
                }
                Ok(format!("slept {} ms", args.ms))
            },
        )
        .typed_tool(
            "log",
            "Emit a log message at a level.",
            |ctx, args: LogArgs| async move {
                let level = LoggingLevel::parse(&args.level).unwrap_or(LoggingLevel::Info);
                let sent = ctx.log(level, Some("demo"), Value::String(args.message));
                Ok(if sent { "sent" } else { "filtered" })
            },
        )
        .typed_tool(
            "fail",
            "Always fails internally (the detail stays in the server log).",
            |_ctx, (): ()| async move {
                let rows = open_database().map_err(HandlerError::internal)?;
                Ok(rows)
            },
        )
        .prompt(
            Prompt::new("greet")
                .description("Greet someone by name.")
                .argument(PromptArgument::new("name", true).description("Who to greet")),
            prompt_fn(|_ctx, args: GreetArgs| async move {
                Ok(GetPromptResult::new()
                    .description("A greeting")
                    .user(format!("Say hello to {}.", args.name)))
            }),
        )
        .resource(
            Resource::new("demo://readme", "readme")
                .mime_type("text/plain")
                .description("What this server is."),
            handler_fn(|ctx, _vars| async move {
                let uri = ctx.name().unwrap_or_default();
                Ok(ReadResourceResult::text(
                    uri,
                    "text/plain",
                    "mcpcore demo server",
                ))
            }),
        )
        .resource_template(
            ResourceTemplate::new("demo://notes/{id}", "note").mime_type("text/plain"),
            handler_fn(|ctx, vars: Value| async move {
                let uri = ctx.name().unwrap_or_default();
                let id = vars.get("id").and_then(Value::as_str).unwrap_or_default();
                Ok(ReadResourceResult::text(
                    uri,
                    "text/plain",
                    format!("note {id}"),
                ))
            }),
        )
        .completion(handler_fn(|_ctx, params: Value| async move {
            let prefix = params
                .pointer("/argument/value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let values: Vec<&str> = ["alice", "bob", "carol"]
                .into_iter()
                .filter(|n| n.starts_with(prefix))
                .collect();
            Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
        }))
}

#[tokio::main]
async fn main() {
    http_flags::install_memory_trim();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| {
        let found = args.iter().any(|a| a == name);
        args.retain(|a| a != name);
        found
    };
    let (metrics, otlp) = (flag("--metrics"), flag("--otlp"));
    if otlp {
        // Spans exported over OTLP/HTTP as the OTEL_* environment says.
        let mut t = mcpcore::telemetry::TelemetryOptions::default();
        t.otlp = Some(mcpcore::telemetry::OtlpOptions::default());
        if let Err(e) = mcpcore::telemetry::install(&t) {
            eprintln!("demo-server: {e}");
            std::process::exit(2);
        }
    } else {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .init();
    }
    let (args, backplane) = match backplane_flags::take(args) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    let with_backplane = backplane.is_some();
    let server = match build(backplane, metrics) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("demo-server: {e}");
            std::process::exit(2);
        }
    };
    let mut opts = HttpOptions::default();
    if metrics {
        opts.metrics_path = Some("/metrics".into());
    }
    let (args, session_flags) = match http_flags::take(args, &mut opts) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    let (args, auth_flags) = match auth_flags::take(args, &mut opts) {
        Ok(r) => r,
        Err(e) => usage(&e),
    };
    match args.as_slice() {
        [] if session_flags || with_backplane || auth_flags => {
            usage("the HTTP flags apply to --http only")
        }
        [] => {}
        [flag, addr] if flag == "--http" => {
            let Ok(addr) = addr.parse::<std::net::SocketAddr>() else {
                usage("--http needs an address like 127.0.0.1:8080");
            };
            return serve_http_until_signal(server, addr, opts).await;
        }
        _ => usage("unexpected arguments"),
    }
    if let Err(e) = server.serve_stdio().await {
        eprintln!("demo-server: {e}");
        std::process::exit(1);
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "demo-server: {problem}\n\
         usage: demo-server [--metrics] [--otlp] [--http 127.0.0.1:PORT [HTTP FLAGS]]\n\
         (default: MCP on stdin/stdout; --metrics records metrics, served at /metrics over HTTP;\n\
         --otlp exports spans over OTLP/HTTP as OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_*\n\
         variables say)\n\
         HTTP flags (legacy sessions, HTTPS, authorization, scale-out):\n{}\n{}{}",
        http_flags::USAGE,
        auth_flags::USAGE,
        backplane_flags::USAGE
    );
    std::process::exit(2);
}

async fn serve_http_until_signal(server: Server, addr: std::net::SocketAddr, opts: HttpOptions) {
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    let listener = match server.serve_http(addr, opts).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("demo-server: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "demo-server: listening on {scheme}://{}/mcp",
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
