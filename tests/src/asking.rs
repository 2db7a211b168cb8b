//! A server whose handlers ask the client through `RequestContext::request_client`, one call
//! site for both eras (REQUIREMENTS MRTR-01…04, MRTR-09, JR-05; SEP-2322). Served over stdio by
//! the `ask-server` binary and in-process over HTTP by the tests.
//!
//! Tools: `ask_both` (an elicitation, then `roots/list`, each propagated with `?`: two rounds on
//! 2026-07-28), `ask_together` (both asked before either error is propagated: one round),
//! `ask_ping` (`ping_client`). Custom method `custom/ask` (`roots/list` from a method that may not
//! ask on 2026-07-28).

use mcpcore::{handler_fn, CallToolResult, HandlerError, RequestContext, Server, Tool};
use serde_json::{json, Value};

/// The elicitation both tools ask for.
pub fn name_form() -> Value {
    json!({"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

fn answers(elicited: Value, roots: Value) -> CallToolResult {
    CallToolResult::structured(json!({"elicited": elicited, "roots": roots}))
}

async fn ask_both(ctx: RequestContext, _args: Value) -> Result<CallToolResult, HandlerError> {
    let elicited = ctx
        .request_client("elicitation/create", Some(name_form()))
        .await?;
    let roots = ctx.request_client("roots/list", None).await?;
    Ok(answers(elicited, roots))
}

async fn ask_together(ctx: RequestContext, _args: Value) -> Result<CallToolResult, HandlerError> {
    let elicited = ctx
        .request_client("elicitation/create", Some(name_form()))
        .await;
    let roots = ctx.request_client("roots/list", None).await;
    Ok(answers(elicited?, roots?))
}

/// The asking server.
///
/// # Panics
/// Never: the registrations are valid.
pub fn server() -> Server {
    Server::builder("ask-server", "1")
        .tool(Tool::new("ask_both"), handler_fn(ask_both))
        .tool(Tool::new("ask_together"), handler_fn(ask_together))
        .tool(
            Tool::new("ask_ping"),
            handler_fn(|ctx: RequestContext, _a: Value| async move {
                let pong = ctx.ping_client(None).await?;
                Ok::<_, HandlerError>(CallToolResult::structured(json!({"pong": pong})))
            }),
        )
        .method(
            "custom/ask",
            handler_fn(|ctx: RequestContext, _p: Value| async move {
                let roots = ctx.request_client("roots/list", None).await?;
                Ok::<_, HandlerError>(json!({"roots": roots}))
            }),
        )
        .build()
        .expect("the asking server builds")
}
