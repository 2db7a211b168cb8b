//! `era-server`: a stdio fixture for the 2026-07-28 era and the MRTR flows (public API only).
//!
//! Options: `--no-seal`, `--no-shim`, `--no-server-info`, `--state-ttl-ms N`, `--key ID=BASE64`
//! (repeatable; the first seals, all open), `--audience A`, `--cache TTL_MS:public|private`, `--max-rounds N`,
//! `--reusable-state` (single use off), `--replay-capacity N`.
//!
//! Tools: `mrtr_elicit`, `mrtr_url {elicitation_id?}`, `mrtr_sampling {tools?}`, `mrtr_roots`,
//! `mrtr_multi`, `mrtr_state {q}`, `mrtr_rounds {n}`, `mrtr_state_only`, `mrtr_output`,
//! `mrtr_bad`, `mrtr_empty`, `needs_sampling`, `log_all`, `client_caps`, `direct_elicit` (a classic server→client
//! request), `invocations`.
//! Prompt: `mrtr_prompt`. Resources: `mrtr://gated` (MRTR), `era://plain`, `era://override`.

use mcpcore::security::{KeyRing, SealKey};
use mcpcore::transport::stdio::serve_stdio;
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, InputRequired, Limits, LoggingLevel, Outcome, Prompt,
    RequestContext, Resource, Server, Tool,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static STATE_CALLS: AtomicUsize = AtomicUsize::new(0);

type R = Result<Outcome, HandlerError>;

fn text(t: impl Into<String>) -> R {
    Ok(CallToolResult::text(t).into())
}

fn answer<'a>(ctx: &'a RequestContext, key: &str) -> Option<&'a Value> {
    ctx.input_responses().and_then(|m| m.get(key))
}

fn form(message: &str, field: &str, ty: &str) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": ty}}, "required": [field]}})
}

fn accepted<'a>(ctx: &'a RequestContext, key: &str, field: &str) -> Option<&'a Value> {
    answer(ctx, key)
        .filter(|a| a.get("action").and_then(Value::as_str) == Some("accept"))
        .and_then(|a| a.get("content"))
        .and_then(|c| c.get(field))
}

fn sampling_params(question: &str, tools: bool) -> Value {
    let mut p = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
        "maxTokens": 100,
    });
    if tools {
        p["tools"] = json!([{"name": "lookup", "inputSchema": {"type": "object"}}]);
    }
    p
}

fn tool(name: &str) -> Tool {
    Tool::new(name).input_schema(json!({"type": "object"}))
}

struct Args {
    seal: bool,
    shim: bool,
    state_ttl: Option<Duration>,
    keys: Vec<SealKey>,
    audience: Option<String>,
    cache: Option<(u64, bool)>,
    max_rounds: Option<usize>,
    server_info: bool,
    legacy_cache_hints: bool,
    single_use: bool,
    replay_capacity: Option<usize>,
}

fn parse_args() -> Args {
    let mut a = Args {
        seal: true,
        shim: true,
        state_ttl: None,
        keys: Vec::new(),
        audience: None,
        cache: None,
        max_rounds: None,
        server_info: true,
        legacy_cache_hints: false,
        single_use: true,
        replay_capacity: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().expect("option value");
        match arg.as_str() {
            "--no-seal" => a.seal = false,
            "--no-shim" => a.shim = false,
            "--no-server-info" => a.server_info = false,
            "--legacy-cache-hints" => a.legacy_cache_hints = true,
            "--state-ttl-ms" => {
                a.state_ttl = Some(Duration::from_millis(val().parse().expect("ms")))
            }
            "--key" => {
                let v = val();
                let (id, b64) = v.split_once('=').expect("ID=BASE64");
                a.keys.push(SealKey::from_base64(id, b64).expect("key"));
            }
            "--audience" => a.audience = Some(val()),
            "--cache" => {
                let v = val();
                let (ttl, scope) = v.split_once(':').expect("TTL:scope");
                a.cache = Some((ttl.parse().expect("ttl"), scope == "public"));
            }
            "--max-rounds" => a.max_rounds = Some(val().parse().expect("n")),
            "--reusable-state" => a.single_use = false,
            "--replay-capacity" => a.replay_capacity = Some(val().parse().expect("n")),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn tools(b: mcpcore::ServerBuilder) -> mcpcore::ServerBuilder {
    b.tool(
        tool("mrtr_elicit"),
        handler_fn(|ctx, _a: Value| async move {
            if let Some(name) = accepted(&ctx, "user_name", "name").and_then(Value::as_str) {
                return text(format!("Hello, {name}!"));
            }
            Ok(InputRequired::new()
                .elicit("user_name", form("What is your name?", "name", "string"))
                .into())
        }),
    )
    .tool(
        tool("mrtr_url"),
        handler_fn(|ctx, a: Value| async move {
            if let Some(ans) = answer(&ctx, "consent") {
                return text(format!("url done: {}", ans["action"]));
            }
            let mut p = json!({"mode": "url", "message": "Sign in", "url": "https://example.com/authorize"});
            if let Some(id) = a.get("elicitation_id") {
                p["elicitationId"] = id.clone();
            }
            Ok(InputRequired::new().elicit("consent", p).into())
        }),
    )
    .tool(
        tool("mrtr_sampling"),
        handler_fn(|ctx, a: Value| async move {
            if let Some(ans) = answer(&ctx, "sample") {
                let said = ans.pointer("/content/text").and_then(Value::as_str).unwrap_or("?");
                return text(format!("LLM said: {said}"));
            }
            let with_tools = a.get("tools").and_then(Value::as_bool).unwrap_or(false);
            Ok(InputRequired::new()
                .sample("sample", sampling_params("What is the capital of France?", with_tools))
                .into())
        }),
    )
    .tool(
        tool("mrtr_roots"),
        handler_fn(|ctx, _a: Value| async move {
            if let Some(ans) = answer(&ctx, "roots") {
                let n = ans.get("roots").and_then(Value::as_array).map_or(0, Vec::len);
                return text(format!("Found {n} root(s)"));
            }
            Ok(InputRequired::new().list_roots("roots").into())
        }),
    )
    .tool(
        tool("mrtr_multi"),
        handler_fn(|ctx, _a: Value| async move {
            let all = ["user_name", "greeting", "client_roots"]
                .iter()
                .all(|k| answer(&ctx, k).is_some());
            if all && ctx.request_state() == Some("multi") {
                return text("all three answered");
            }
            Ok(InputRequired::new()
                .elicit("user_name", form("Name?", "name", "string"))
                .sample("greeting", sampling_params("Say hi", false))
                .list_roots("client_roots")
                .state("multi")
                .into())
        }),
    )
    .tool(
        tool("mrtr_state").input_schema(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
        handler_fn(|ctx, a: Value| async move {
            STATE_CALLS.fetch_add(1, Ordering::SeqCst);
            let q = a.get("q").and_then(Value::as_str).unwrap_or_default();
            match (ctx.request_state(), accepted(&ctx, "confirm", "ok")) {
                (Some(s), Some(_)) if s.starts_with("state-ok:") => text(format!("state={s}")),
                _ => Ok(InputRequired::new()
                    .elicit("confirm", form("Proceed?", "ok", "boolean"))
                    .state(format!("state-ok:{q}"))
                    .into()),
            }
        }),
    )
    .tool(
        tool("mrtr_rounds").input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
        handler_fn(|ctx, a: Value| async move {
            let n = a.get("n").and_then(Value::as_u64).unwrap_or(1);
            let k: u64 = ctx
                .request_state()
                .and_then(|s| s.strip_prefix("round:"))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if k > 0 && answer(&ctx, "step").is_none() {
                return Err(HandlerError::invalid_params("missing the answer to the last step"));
            }
            if k >= n {
                return text(format!("done after {k} rounds"));
            }
            Ok(InputRequired::new()
                .elicit("step", form(&format!("Step {}", k + 1), "v", "string"))
                .state(format!("round:{}", k + 1))
                .into())
        }),
    )
    .tool(
        tool("mrtr_state_only"),
        handler_fn(|ctx, _a: Value| async move {
            match ctx.request_state() {
                Some(s) => text(format!("resumed: {s}")),
                None => Ok(InputRequired::new().state("retry-token").into()),
            }
        }),
    )
    .tool(
        tool("mrtr_output").output_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})),
        handler_fn(|ctx, _a: Value| async move {
            match accepted(&ctx, "who", "name").and_then(Value::as_str) {
                Some(n) => Ok::<Outcome, HandlerError>(CallToolResult::structured(json!({"name": n})).into()),
                None => Ok(InputRequired::new().elicit("who", form("Who?", "name", "string")).into()),
            }
        }),
    )
    .tool(
        tool("mrtr_bad"),
        handler_fn(|_ctx, _a: Value| async move {
            Ok::<Outcome, HandlerError>(InputRequired::new().request("k", "ping", None).into())
        }),
    )
    .tool(
        tool("mrtr_empty"),
        handler_fn(|_ctx, _a: Value| async move {
            Ok::<Outcome, HandlerError>(InputRequired::new().into())
        }),
    )
    .tool(
        tool("needs_sampling"),
        handler_fn(|ctx, _a: Value| async move {
            ctx.require_client_capability(&["sampling"])?;
            text("Success")
        }),
    )
    .tool(
        tool("log_all"),
        handler_fn(|ctx, _a: Value| async move {
            let sent: Vec<&str> = [
                (LoggingLevel::Debug, "debug"),
                (LoggingLevel::Info, "info"),
                (LoggingLevel::Warning, "warning"),
                (LoggingLevel::Error, "error"),
            ]
            .into_iter()
            .filter(|(l, n)| ctx.log(*l, Some("era"), json!(n)))
            .map(|(_, n)| n)
            .collect();
            text(format!("sent: {}", sent.join(",")))
        }),
    )
    .tool(
        tool("client_caps"),
        handler_fn(|ctx, _a: Value| async move {
            Ok::<Outcome, HandlerError>(
                CallToolResult::text(ctx.client_capabilities().to_string()).into(),
            )
        }),
    )
    .tool(
        tool("direct_elicit"),
        handler_fn(|ctx, _a: Value| async move {
            let r = ctx.elicit(form("Direct?", "name", "string"), None).await?;
            text(format!("direct: {}", r["action"]))
        }),
    )
    .tool(
        tool("invocations"),
        handler_fn(|_ctx, _a: Value| async move {
            text(STATE_CALLS.load(Ordering::SeqCst).to_string())
        }),
    )
}

fn build(a: Args) -> Result<Server, mcpcore::server::BuildError> {
    let mut b = Server::builder("era-server", "1.0.0")
        .instructions("Fixture for the 2026-07-28 era.")
        .seal_request_state(a.seal)
        .options(|o| {
            o.legacy_input_shim = a.shim;
            o.stamp_server_info = a.server_info;
            o.legacy_cache_hints = a.legacy_cache_hints;
            o.extensions
                .insert("io.example/fixture".into(), json!({"flag": true}));
            if let Some(t) = a.state_ttl {
                o.request_state.ttl = t;
            }
            o.request_state.audience = a.audience.clone();
            o.request_state.single_use = a.single_use;
            if let Some(n) = a.replay_capacity {
                o.request_state.replay_cache_capacity = n;
            }
        });
    let mut keys = a.keys.into_iter();
    if let Some(first) = keys.next() {
        let mut ring = KeyRing::new(first);
        for k in keys {
            ring = ring.with_previous(k).expect("key ring");
        }
        b = b.request_state_keys(ring);
    }
    if let Some((ttl, public)) = a.cache {
        b = b.cache_hints(ttl, public);
    }
    if let Some(n) = a.max_rounds {
        let mut l = Limits::default();
        l.max_mrtr_rounds = n;
        b = b.limits(l);
    }
    tools(b)
        .prompt(
            Prompt::new("mrtr_prompt").description("Asks for context first."),
            handler_fn(|ctx, _a: Value| async move {
                match accepted(&ctx, "user_context", "context").and_then(Value::as_str) {
                    Some(c) => Ok(Outcome::Complete(json!({"messages": [
                        {"role": "user", "content": {"type": "text", "text": format!("Context: {c}")}}]}))),
                    None => Ok::<Outcome, HandlerError>(InputRequired::new()
                        .elicit("user_context", form("Context?", "context", "string"))
                        .into()),
                }
            }),
        )
        .resource(
            Resource::new("mrtr://gated", "gated").mime_type("text/plain"),
            handler_fn(|ctx, _a: Value| async move {
                if accepted(&ctx, "confirm", "ok").is_some() {
                    return Ok::<Outcome, HandlerError>(Outcome::Complete(json!({"contents": [
                        {"uri": "mrtr://gated", "mimeType": "text/plain", "text": "unlocked"}]})));
                }
                Ok(InputRequired::new()
                    .elicit("confirm", form("Unlock?", "ok", "boolean"))
                    .into())
            }),
        )
        .resource(
            Resource::new("era://plain", "plain").mime_type("text/plain"),
            handler_fn(|_ctx, _a: Value| async move {
                Ok::<Value, HandlerError>(json!({"contents": [
                    {"uri": "era://plain", "mimeType": "text/plain", "text": "plain"}]}))
            }),
        )
        .resource(
            Resource::new("era://override", "override").mime_type("text/plain"),
            handler_fn(|_ctx, _a: Value| async move {
                Ok::<Value, HandlerError>(json!({"ttlMs": 60000, "cacheScope": "public", "contents": [
                    {"uri": "era://override", "mimeType": "text/plain", "text": "override"}]}))
            }),
        )
        .build()
}

#[tokio::main]
async fn main() {
    let server = build(parse_args()).expect("valid fixture");
    if let Err(e) = serve_stdio(&server).await {
        eprintln!("era-server: {e}");
        std::process::exit(1);
    }
}
