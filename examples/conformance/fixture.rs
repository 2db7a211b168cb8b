//! The conformance fixture server's tools, resources and prompts (shared/conformance/FIXTURE.md),
//! built on the public mcpcore API only.

use mcpcore::{
    handler_fn, CallToolResult, Content, HandlerError, InputRequired, LoggingLevel, Prompt,
    PromptArgument, Resource, ResourceTemplate, Server, ServerBuilder, Tool,
};
use serde_json::{json, Map, Value};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// 1×1 transparent PNG.
pub const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/// A tiny WAV (RIFF header, no samples).
pub const WAV_EMPTY: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn text(s: impl Into<String>) -> Result<CallToolResult, HandlerError> {
    Ok(CallToolResult::text(s))
}

fn elicit_req(message: &str, props: Value, required: &[&str]) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": props, "required": required}
    }})
}

fn sampling_req(prompt: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens
    }})
}

fn roots_req() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn input_required(reqs: &[(&str, Value)], state: Option<&str>) -> InputRequired {
    let mut m = Map::new();
    for (k, v) in reqs {
        m.insert((*k).to_owned(), v.clone());
    }
    InputRequired {
        input_requests: m,
        request_state: state.map(str::to_owned),
    }
}

/// An answered elicitation under `key` with `accept` and an object `content`.
fn accepted_content<'a>(
    ctx: &'a mcpcore::RequestContext,
    key: &str,
) -> Option<&'a Map<String, Value>> {
    let r = ctx.input_responses()?.get(key)?;
    if r.get("action").and_then(Value::as_str) != Some("accept") {
        return None;
    }
    r.get("content")?.as_object()
}

fn sampled_text(ctx: &mcpcore::RequestContext, key: &str) -> Option<String> {
    let r = ctx.input_responses()?.get(key)?;
    let c = r.get("content")?;
    let t = c.get("text").or_else(|| {
        c.as_array()
            .and_then(|a| a.first())
            .and_then(|b| b.get("text"))
    })?;
    t.as_str().map(str::to_owned)
}

fn roots_count(ctx: &mcpcore::RequestContext, key: &str) -> Option<usize> {
    ctx.input_responses()?
        .get(key)?
        .get("roots")?
        .as_array()
        .map(Vec::len)
}

/// Register everything FIXTURE.md names. `handle` is filled with the built server so trigger tools
/// can announce list changes.
pub fn register(b: ServerBuilder, handle: Arc<OnceLock<Server>>) -> ServerBuilder {
    let b = legacy_tools(b);
    let b = modern_tools(b, handle);
    let b = mrtr_tools(b);
    let b = reconnection_tool(b);
    resources_and_prompts(b)
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn legacy_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        Tool::new("test_simple_text").description("Returns simple text").input_schema(no_args()),
        handler_fn(|_c, _a| async { text("This is a simple text response for testing.") }),
    )
    .tool(
        Tool::new("test_image_content").description("Returns an image").input_schema(no_args()),
        handler_fn(|_c, _a| async {
            Ok(CallToolResult { content: vec![Content::image(PNG_1X1, "image/png")], ..Default::default() })
        }),
    )
    .tool(
        Tool::new("test_audio_content").description("Returns audio").input_schema(no_args()),
        handler_fn(|_c, _a| async {
            Ok(CallToolResult { content: vec![Content::audio(WAV_EMPTY, "audio/wav")], ..Default::default() })
        }),
    )
    .tool(
        Tool::new("test_embedded_resource").description("Returns an embedded resource").input_schema(no_args()),
        handler_fn(|_c, _a| async {
            Ok(CallToolResult {
                content: vec![Content::embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")],
                ..Default::default()
            })
        }),
    )
    .tool(
        Tool::new("test_multiple_content_types").description("Returns text, image and resource").input_schema(no_args()),
        handler_fn(|_c, _a| async {
            Ok(CallToolResult {
                content: vec![
                    Content::text("Multiple content types test:"),
                    Content::image(PNG_1X1, "image/png"),
                    Content::embedded_text("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
                ],
                ..Default::default()
            })
        }),
    )
    .tool(
        Tool::new("test_tool_with_logging").description("Logs during execution").input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            for (i, msg) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(LoggingLevel::Info, Some("conformance"), json!(msg));
            }
            text("Tool with logging executed successfully")
        }),
    )
    .tool(
        Tool::new("test_tool_with_progress").description("Reports progress").input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            for (i, p) in [0.0, 50.0, 100.0].iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.progress(*p, Some(100.0), Some("progress"));
            }
            text("Tool with progress executed successfully")
        }),
    )
    .tool(
        Tool::new("test_error_handling").description("Returns an error result").input_schema(no_args()),
        handler_fn(|_c, _a| async { Ok(CallToolResult::error("This tool intentionally returns an error for testing")) }),
    )
    .tool(
        Tool::new("test_sampling")
            .description("Asks the client's LLM")
            .input_schema(json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})),
        handler_fn(|ctx, a: Value| async move {
            let prompt = a["prompt"].as_str().unwrap_or_default().to_owned();
            let r = ctx
                .create_message(json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}), None)
                .await?;
            let t = r.pointer("/content/text").and_then(Value::as_str).unwrap_or_default();
            text(format!("LLM response: {t}"))
        }),
    )
    .tool(
        Tool::new("test_elicitation")
            .description("Asks the user")
            .input_schema(json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})),
        handler_fn(|ctx, a: Value| async move {
            let message = a["message"].as_str().unwrap_or_default().to_owned();
            let r = ctx
                .elicit(json!({"message": message, "requestedSchema": {"type": "object",
                    "properties": {"response": {"type": "string", "description": "User's response"}}, "required": ["response"]}}), None)
                .await?;
            text(format!("User response: action={}, content={}", r["action"].as_str().unwrap_or("?"), r.get("content").cloned().unwrap_or(Value::Null)))
        }),
    )
    .tool(
        Tool::new("test_elicitation_sep1034_defaults").description("Elicits a form with defaults").input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let r = ctx
                .elicit(json!({"message": "Please review and update the form fields with defaults", "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                }}}), None)
                .await?;
            text(format!("Elicitation completed: action={}, content={}", r["action"].as_str().unwrap_or("?"), r.get("content").cloned().unwrap_or(Value::Null)))
        }),
    )
    .tool(
        Tool::new("test_elicitation_sep1330_enums").description("Elicits the enum schema shapes").input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let r = ctx
                .elicit(json!({"message": "Please select options from the enum fields", "requestedSchema": {"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                        {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}
                }}}), None)
                .await?;
            text(format!("Elicitation completed: action={}, content={}", r["action"].as_str().unwrap_or("?"), r.get("content").cloned().unwrap_or(Value::Null)))
        }),
    )
    .tool(
        Tool::new("json_schema_2020_12_tool")
            .description("Tool with a JSON Schema 2020-12 input schema")
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            })),
        handler_fn(|_c, a: Value| async move { text(format!("Received: {a}")) }),
    )
}

fn modern_tools(b: ServerBuilder, handle: Arc<OnceLock<Server>>) -> ServerBuilder {
    let h2 = handle.clone();
    b.tool(
        Tool::new("test_missing_capability")
            .description("Needs the sampling capability")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            ctx.require_client_capability(&["sampling"])?;
            text("Success")
        }),
    )
    .tool(
        Tool::new("test_streaming_elicitation")
            .description("Streams notifications, then the result")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            ctx.progress(1.0, Some(2.0), Some("streaming"));
            tokio::time::sleep(Duration::from_millis(20)).await;
            ctx.progress(2.0, Some(2.0), Some("done"));
            text("Streaming complete")
        }),
    )
    .tool(
        Tool::new("test_logging_tool")
            .description("Logs only when the request asked for a log level")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            ctx.log(
                LoggingLevel::Info,
                Some("conformance"),
                json!("log from test_logging_tool"),
            );
            text("Logging tool executed")
        }),
    )
    .tool(
        Tool::new("test_trigger_tool_change")
            .description("Announces a tool list change")
            .input_schema(no_args()),
        handler_fn(move |_c, _a| {
            let h = handle.clone();
            async move {
                let n = h.get().map_or(0, Server::notify_tools_list_changed);
                text(format!("Tool list change announced to {n} subscribers"))
            }
        }),
    )
    .tool(
        Tool::new("test_trigger_prompt_change")
            .description("Announces a prompt list change")
            .input_schema(no_args()),
        handler_fn(move |_c, _a| {
            let h = h2.clone();
            async move {
                let n = h.get().map_or(0, Server::notify_prompts_list_changed);
                text(format!("Prompt list change announced to {n} subscribers"))
            }
        }),
    )
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn mrtr_tools(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        Tool::new("test_input_required_result_elicitation")
            .description("MRTR: asks for a name")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let name = accepted_content(&ctx, "user_name")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str);
            match name {
                Some(n) => Ok(mcpcore::Outcome::from(CallToolResult::text(format!(
                    "Hello, {n}!"
                )))),
                None => Ok(input_required(
                    &[(
                        "user_name",
                        elicit_req(
                            "What is your name?",
                            json!({"name": {"type": "string"}}),
                            &["name"],
                        ),
                    )],
                    None,
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_sampling")
            .description("MRTR: asks the LLM")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            match sampled_text(&ctx, "sample_request") {
                Some(t) => Ok(mcpcore::Outcome::from(CallToolResult::text(format!(
                    "Sampling result: {t}"
                )))),
                None => Ok(input_required(
                    &[(
                        "sample_request",
                        sampling_req("What is the capital of France?", 100),
                    )],
                    None,
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_list_roots")
            .description("MRTR: asks for roots")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            match roots_count(&ctx, "roots_request") {
                Some(n) => Ok(mcpcore::Outcome::from(CallToolResult::text(format!(
                    "Found {n} root(s)"
                )))),
                None => Ok(input_required(&[("roots_request", roots_req())], None).into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_request_state")
            .description("MRTR: carries requestState")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let ok = accepted_content(&ctx, "confirm").is_some();
            match (ctx.request_state(), ok) {
                (Some("state-ok"), true) => Ok(mcpcore::Outcome::from(CallToolResult::text(
                    "Confirmed with state-ok",
                ))),
                _ => Ok(input_required(
                    &[(
                        "confirm",
                        elicit_req(
                            "Please confirm",
                            json!({"ok": {"type": "boolean"}}),
                            &["ok"],
                        ),
                    )],
                    Some("state-ok"),
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_multiple_inputs")
            .description("MRTR: three inputs at once")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let name = accepted_content(&ctx, "user_name")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let greeting = sampled_text(&ctx, "greeting");
            let roots = roots_count(&ctx, "client_roots");
            match (name, greeting, roots, ctx.request_state()) {
                (Some(n), Some(g), Some(r), Some("multi")) => Ok(mcpcore::Outcome::from(
                    CallToolResult::text(format!("{g} {n}! ({r} roots)")),
                )),
                _ => Ok(input_required(
                    &[
                        (
                            "user_name",
                            elicit_req(
                                "What is your name?",
                                json!({"name": {"type": "string"}}),
                                &["name"],
                            ),
                        ),
                        ("greeting", sampling_req("Generate a greeting", 50)),
                        ("client_roots", roots_req()),
                    ],
                    Some("multi"),
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_multi_round")
            .description("MRTR: two rounds")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            let step1 = accepted_content(&ctx, "step1").is_some();
            let step2 = accepted_content(&ctx, "step2")
                .and_then(|c| c.get("color"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            match (ctx.request_state(), step1, step2) {
                (Some("round2"), _, Some(color)) => Ok(mcpcore::Outcome::from(
                    CallToolResult::text(format!("Completed after two rounds: {color}")),
                )),
                (Some("round1"), true, _) | (Some("round2"), _, None) => Ok(input_required(
                    &[(
                        "step2",
                        elicit_req(
                            "What is your favourite color?",
                            json!({"color": {"type": "string"}}),
                            &["color"],
                        ),
                    )],
                    Some("round2"),
                )
                .into()),
                _ => Ok(input_required(
                    &[(
                        "step1",
                        elicit_req(
                            "Step 1: what is your name?",
                            json!({"name": {"type": "string"}}),
                            &["name"],
                        ),
                    )],
                    Some("round1"),
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_tampered_state")
            .description("MRTR: integrity-protected state")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            match (ctx.request_state(), accepted_content(&ctx, "confirm")) {
                (Some("trusted"), Some(_)) => Ok(mcpcore::Outcome::from(CallToolResult::text(
                    "State verified",
                ))),
                _ => Ok(input_required(
                    &[(
                        "confirm",
                        elicit_req(
                            "Please confirm",
                            json!({"ok": {"type": "boolean"}}),
                            &["ok"],
                        ),
                    )],
                    Some("trusted"),
                )
                .into()),
            }
        }),
    )
    .tool(
        Tool::new("test_input_required_result_capabilities")
            .description("MRTR: asks only for declared capabilities")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            if ctx.input_responses().is_some_and(|r| !r.is_empty()) {
                return Ok(mcpcore::Outcome::from(CallToolResult::text(
                    "Capabilities respected",
                )));
            }
            let caps = ctx.client_capabilities();
            let mut reqs: Vec<(&str, Value)> = Vec::new();
            if caps.get("elicitation").is_some() {
                reqs.push((
                    "user_name",
                    elicit_req(
                        "What is your name?",
                        json!({"name": {"type": "string"}}),
                        &["name"],
                    ),
                ));
            }
            if caps.get("sampling").is_some() {
                reqs.push(("sample", sampling_req("Say hi", 20)));
            }
            if caps.get("roots").is_some() {
                reqs.push(("roots", roots_req()));
            }
            if reqs.is_empty() {
                return Ok(CallToolResult::text("No input capabilities declared").into());
            }
            Ok(input_required(&reqs, None).into())
        }),
    )
}

// Long by design: one registration per tool or entry, read as a table of what this fixture
// serves; split further it would scatter that table.
fn resources_and_prompts(b: ServerBuilder) -> ServerBuilder {
    b.resource(
        Resource::new("test://static-text", "static-text").mime_type("text/plain").description("A static text resource"),
        handler_fn(|_c, _v| async {
            Ok(json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}]}))
        }),
    )
    .resource(
        Resource::new("test://static-binary", "static-binary").mime_type("image/png").description("A static binary resource"),
        handler_fn(|_c, _v| async {
            Ok(json!({"contents": [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_1X1}]}))
        }),
    )
    .resource(
        Resource::new("test://watched-resource", "watched-resource").mime_type("text/plain").description("A subscribable resource"),
        handler_fn(|_c, _v| async {
            Ok(json!({"contents": [{"uri": "test://watched-resource", "mimeType": "text/plain", "text": "Watched resource content"}]}))
        }),
    )
    .resource_template(
        ResourceTemplate::new("test://template/{id}/data", "template-data").mime_type("application/json").description("Data by id"),
        handler_fn(|ctx, vars: Value| async move {
            let id = vars["id"].as_str().unwrap_or_default().to_owned();
            let uri = ctx.name().unwrap_or_default().to_owned();
            let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": body.to_string()}]}))
        }),
    )
    .prompt(
        Prompt::new("test_simple_prompt").description("A simple prompt"),
        handler_fn(|_c, _a| async {
            Ok(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]}))
        }),
    )
    .prompt(
        Prompt::new("test_prompt_with_arguments")
            .description("A prompt with arguments")
            .argument(PromptArgument::new("arg1", true).description("First argument"))
            .argument(PromptArgument::new("arg2", true).description("Second argument")),
        handler_fn(|_c, a: Value| async move {
            let t = format!("Prompt with arguments: arg1='{}', arg2='{}'", a["arg1"].as_str().unwrap_or_default(), a["arg2"].as_str().unwrap_or_default());
            Ok(json!({"messages": [{"role": "user", "content": {"type": "text", "text": t}}]}))
        }),
    )
    .prompt(
        Prompt::new("test_prompt_with_embedded_resource")
            .description("A prompt with an embedded resource")
            .argument(PromptArgument::new("resourceUri", true).description("URI of the resource to embed")),
        handler_fn(|_c, a: Value| async move {
            let uri = a["resourceUri"].as_str().unwrap_or_default().to_owned();
            Ok(json!({"messages": [
                {"role": "user", "content": {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
            ]}))
        }),
    )
    .prompt(
        Prompt::new("test_prompt_with_image").description("A prompt with an image"),
        handler_fn(|_c, _a| async {
            Ok(json!({"messages": [
                {"role": "user", "content": {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
            ]}))
        }),
    )
    .prompt(
        Prompt::new("test_input_required_result_prompt").description("MRTR on prompts/get"),
        handler_fn(|ctx, _a| async move {
            match accepted_content(&ctx, "user_context").and_then(|c| c.get("context")).and_then(Value::as_str) {
                Some(c) => Ok(mcpcore::Outcome::from(json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("Context: {c}")}}]}))),
                None => Ok(input_required(
                    &[("user_context", elicit_req("What context should the prompt use?", json!({"context": {"type": "string"}}), &["context"]))],
                    None,
                )
                .into()),
            }
        }),
    )
    .completion(handler_fn(|_c, p: Value| async move {
        let prefix = p.pointer("/argument/value").and_then(Value::as_str).unwrap_or_default().to_owned();
        let values: Vec<String> = ["paris", "park", "party"].iter().filter(|v| v.starts_with(&prefix)).map(|s| (*s).to_owned()).collect();
        Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }))
}

/// `test_reconnection`: legacy SSE polling (SEP-1699). The handler closes its response stream
/// mid-call; the client resumes with `Last-Event-ID` and receives the result from the replay.
pub fn reconnection_tool(b: ServerBuilder) -> ServerBuilder {
    b.tool(
        Tool::new("test_reconnection")
            .description("Closes its SSE stream mid-call; the result arrives on the resumed stream")
            .input_schema(no_args()),
        handler_fn(|ctx, _a| async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.close_sse_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            text("Reconnection test completed")
        }),
    )
}
