//! `axum-server [PORT]`: an axum application that serves a route of its own (`GET /health`) and
//! mounts the MCP endpoint (both eras) at `/mcp` with `Router::route_service`, on 127.0.0.1
//! (port 0, the default, picks a free one). It prints the endpoint's URL on stderr and runs until
//! Ctrl-C, then shuts the endpoint down gracefully (listen streams get their result, in-flight
//! requests finish within the deadline).
//!
//! Tool: `echo {text}`.

use axum::routing::get;
use axum::Router;
use mcpcore::transport::http::HttpOptions;
use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
use serde_json::{json, Value};

fn build() -> Result<Server, mcpcore::server::BuildError> {
    Server::builder("axum-server", "0.1.0")
        .tool(
            Tool::new("echo")
                .description("Echo the text back")
                .input_schema(json!({"type": "object",
                    "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            handler_fn(|_ctx, args: Value| async move {
                let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
                Ok::<_, HandlerError>(CallToolResult::text(text))
            }),
        )
        .build()
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("axum-server: {what}: {e}");
    std::process::exit(2);
}

#[tokio::main]
async fn main() {
    let port = match std::env::args().nth(1) {
        None => 0,
        Some(p) => p
            .parse::<u16>()
            .unwrap_or_else(|e| fail("usage: axum-server [PORT]", e)),
    };
    let server = build().unwrap_or_else(|e| fail("building the server", e));
    // The endpoint checks Host and Origin itself (HTTP-03): mounted, it has no bound address to
    // resolve `Auto` against, so it allows loopback names, which is what this example binds.
    let mcp = server
        .http_service(HttpOptions::default())
        .unwrap_or_else(|e| fail("HTTP options", e));
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp.clone());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| fail("binding", e));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| fail("local address", e));
    eprintln!("axum-server: listening on http://{addr}/mcp");
    let stop = async move {
        let _ = tokio::signal::ctrl_c().await;
        mcp.shutdown().await;
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
    {
        fail("serving", e);
    }
}
