//! `parity-server`: the feature list of the cross-door parity check (scripts/parity.py), written
//! with the Rust API. The same list is written in C (server.c), Python (server.py) and Node
//! (server.mjs); the four must answer the same requests identically in both eras. Serves stdio.
//!
//! Tools: `echo {text}` (a string), `add {a, b}` (integers; a structured value with an output schema),
//! `blocks` (two text blocks), `pixel` (a PNG image), `refuse` (a tool error: `isError`),
//! `broken` (a JSON-RPC error -32000). Prompt `greet {name}`, resource `parity://readme`,
//! completion of `greet`'s `name`.

use mcpcore::server::{completion_result, media_block};
use mcpcore::{
    handler_fn, CallToolResult, GetPromptResult, HandlerError, Prompt, ReadResourceResult,
    Resource, Server, ServerBuilder, Tool,
};
use serde_json::{json, Value};

const NAMES: [&str; 3] = ["alice", "albert", "bob"];
const PIXEL: [u8; 4] = [0x89, 0x50, 0x4e, 0x47];

fn tool(def: Value) -> Tool {
    match Tool::from_json(def) {
        Ok(t) => t,
        Err(e) => panic!("parity-server: a tool definition is refused: {e}"),
    }
}

fn no_args(name: &str, description: &str) -> Tool {
    tool(json!({"name": name, "description": description, "inputSchema": {"type": "object"}}))
}

fn tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        tool(json!({"name": "echo", "description": "Echo the text back.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]}})),
        handler_fn(|_ctx, args: Value| async move {
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            Ok(CallToolResult::text(text))
        }),
    )
    .tool(
        tool(json!({"name": "add", "description": "Add two numbers.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"},
                "b": {"type": "integer"}}, "required": ["a", "b"]},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}},
                "required": ["sum"]}})),
        handler_fn(|_ctx, args: Value| async move {
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(CallToolResult::structured(json!({"sum": sum})))
        }),
    )
    .tool(
        no_args("blocks", "Two text blocks."),
        handler_fn(|_ctx, _args: Value| async move {
            Ok(json!({"content": [{"type": "text", "text": "one"},
                {"type": "text", "text": "two"}]}))
        }),
    )
    .tool(
        no_args("pixel", "A tiny PNG."),
        handler_fn(|_ctx, _args: Value| async move {
            let block = media_block(&PIXEL, "image/png").map_err(HandlerError::internal)?;
            Ok(json!({"content": [block]}))
        }),
    )
    .tool(
        no_args("refuse", "Fails as a tool (isError)."),
        handler_fn(|_ctx, _args: Value| async move { Ok(CallToolResult::error("no such item")) }),
    )
    .tool(
        no_args("broken", "Fails with a JSON-RPC error."),
        handler_fn(|_ctx, _args: Value| async move {
            Err::<Value, _>(HandlerError::rpc(-32000, "backend unavailable"))
        }),
    )
}

fn build() -> Result<Server, mcpcore::server::BuildError> {
    let greet = Prompt::from_json(json!({"name": "greet", "description": "Greet someone.",
        "arguments": [{"name": "name", "description": "Who to greet", "required": true}]}));
    let readme = Resource::from_json(json!({"uri": "parity://readme", "name": "readme",
        "description": "About this server.", "mimeType": "text/plain"}));
    let (Ok(greet), Ok(readme)) = (greet, readme) else {
        panic!("parity-server: a prompt or resource definition is refused");
    };
    tools(Server::builder("parity", "1.0.0"))
        .prompt(
            greet,
            handler_fn(|_ctx, args: Value| async move {
                let name = args["name"].as_str().unwrap_or_default();
                Ok(GetPromptResult::new().user(format!("Hello, {name}!")))
            }),
        )
        .resource(
            readme,
            handler_fn(|_ctx, _vars: Value| async move {
                Ok(ReadResourceResult::text(
                    "parity://readme",
                    "text/plain",
                    "parity fixture",
                ))
            }),
        )
        .completion(handler_fn(|_ctx, params: Value| async move {
            let prefix = params
                .pointer("/argument/value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let values: Vec<Value> = NAMES
                .iter()
                .filter(|n| n.starts_with(prefix))
                .map(|n| json!(n))
                .collect();
            Ok(completion_result(Value::Array(values)))
        }))
        .build()
}

#[tokio::main]
async fn main() {
    let server = match build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("parity-server: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = server.serve_stdio().await {
        eprintln!("parity-server: {e}");
        std::process::exit(1);
    }
}
