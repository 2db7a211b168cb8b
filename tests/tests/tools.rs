//! Tools over real stdio pipes (REQUIREMENTS TOOL-01, TOOL-03, TOOL-05…TOOL-07, JSS-01…JSS-03,
//! MISC-03), plus registration-time schema bounds (in process: they are build
//! errors, not wire traffic).

use mcpcore::{handler_fn, HandlerError, Server, Tool};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::{Era, StdioPeer};
use serde_json::{json, Value};

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list}"))
}

/// TOOL-03, MISC-01: title, annotations, icons and `_meta` pass through `tools/list`.
#[tokio::test]
async fn tool03_definitions_pass_through() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let list = p.request("tools/list", json!({})).await;
    let echo = tool(&list, "echo");
    assert_eq!(echo["title"], "Echo");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["annotations"]["title"], "Echo tool");
    assert_eq!(echo["icons"][0]["src"], "https://example.com/echo.png");
    assert_eq!(echo["_meta"]["example.com/tier"], "free");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    assert_eq!(tool(&list, "typed")["outputSchema"]["type"], "object");
    assert!(
        list["result"].get("nextCursor").is_none(),
        "one page by default"
    );
}

/// TOOL-05: a root-`oneOf` output schema is listed verbatim on the modern era (no
/// `type: "object"` injected) and omitted for legacy sessions, whose schema requires an object.
#[tokio::test]
async fn tool05_output_schema_any_shape_per_era() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let list = p.request("tools/list", json!({})).await;
    assert!(
        tool(&list, "choice").get("outputSchema").is_none(),
        "{list}"
    );

    let mut m = StdioPeer::wire(&[]);
    m.era = Era::Modern;
    let list = m
        .request("tools/list", json!({"_meta": envelope(json!({}))}))
        .await;
    let schema = &tool(&list, "choice")["outputSchema"];
    assert_eq!(
        schema,
        &json!({"oneOf": [{"type": "string"}, {"type": "number"}]})
    );
}

/// TOOL-07, SEP-1303: arguments failing the input schema → an `isError` result with an
/// actionable message, not a protocol error.
#[tokio::test]
async fn tool07_invalid_arguments_are_an_error_result() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for args in [
        json!({}),
        json!({"text": 5}),
        json!({"text": ""}),
        json!({"text": "ok", "extra": 1}),
    ] {
        let r = p.call_tool("echo", args.clone()).await;
        let res = &r["result"];
        assert_eq!(res["isError"], true, "{args}: {r}");
        let msg = res["content"][0]["text"].as_str().unwrap_or_default();
        assert!(msg.contains("echo"), "names the tool: {msg}");
        assert!(msg.len() > 20, "actionable: {msg}");
    }
    let r = p.call_tool("echo", json!({"text": 5})).await;
    let msg = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(msg.contains("/text"), "names the failing location: {msg}");
}

/// TOOL-07: unknown tool → -32602; a missing name or non-object arguments → -32602.
#[tokio::test]
async fn tool07_unknown_tool_and_malformed_calls() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.call_tool("nope", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope")));
    for params in [
        json!({}),
        json!({"name": 5}),
        json!({"name": "echo", "arguments": [1]}),
        json!({"name": "echo", "arguments": "text"}),
    ] {
        let r = p.request("tools/call", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
}

/// TOOL-01: an internal failure in a tool → generic -32603.
#[tokio::test]
async fn tool01_internal_failure_is_generic() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.call_tool("fail", json!({})).await;
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Internal error"})
    );
}

/// TOOL-06: structured output is validated against the output schema: conforming passes;
/// non-conforming or missing `structuredContent` is a server bug → -32603; an `isError` result
/// is not validated.
#[tokio::test]
async fn tool06_output_schema_validation() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.call_tool("typed", json!({"mode": "ok"})).await;
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 3}));
    assert_eq!(r["result"]["content"][0]["text"], r#"{"sum":3}"#);
    for mode in ["bad", "missing"] {
        let r = p.call_tool("typed", json!({"mode": mode})).await;
        assert_eq!(
            r["error"],
            json!({"code": -32603, "message": "Internal error"}),
            "{mode}"
        );
    }
    let r = p.call_tool("typed", json!({"mode": "error"})).await;
    assert_eq!(r["result"]["isError"], true);
    // A root-oneOf output schema validates too (legacy: the value arrives as mirrored text).
    let r = p.call_tool("choice", json!({"kind": "number"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "42", "{r}");
    let r = p.call_tool("choice", json!({"kind": "object"})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
}

/// TOOL-05/TOOL-06 (legacy): object `structuredContent` passes untouched; a non-object one
/// with no content blocks is mirrored as a text block and, legacy schemas allowing only
/// objects, not sent as `structuredContent`; explicit content is never overwritten.
#[tokio::test]
async fn tool06_structured_content_legacy() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.call_tool("structured", json!({"value": {"a": 1}})).await;
    assert_eq!(r["result"]["structuredContent"], json!({"a": 1}));
    assert_eq!(r["result"]["content"], json!([]), "objects get no fallback");

    for v in [
        json!([1, 2]),
        json!("s"),
        json!(7),
        json!(true),
        Value::Null,
    ] {
        let r = p.call_tool("structured", json!({"value": v})).await;
        assert_eq!(
            r["result"]["content"],
            json!([{"type": "text", "text": v.to_string()}]),
            "{v}"
        );
        assert!(r["result"].get("structuredContent").is_none(), "{r}");
    }
    let r = p
        .call_tool("structured", json!({"value": [1], "blocks": true}))
        .await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "explicit"}])
    );
}

/// TOOL-05/TOOL-06 (modern): `structuredContent` may be any JSON value; without content blocks
/// it is mirrored as text.
#[tokio::test]
async fn tool06_structured_content_modern_any_type() {
    let mut p = StdioPeer::wire(&[]);
    p.era = Era::Modern;
    for v in [json!([1, 2]), json!("s"), json!(7)] {
        let r = p
            .request(
                "tools/call",
                json!({"name": "structured", "arguments": {"value": v}, "_meta": envelope(json!({}))}),
            )
            .await;
        assert_eq!(r["result"]["structuredContent"], v, "{r}");
        assert_eq!(r["result"]["content"][0]["text"], v.to_string());
    }
    let r = p
        .request(
            "tools/call",
            json!({"name": "choice", "arguments": {"kind": "string"}, "_meta": envelope(json!({}))}),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"], "hello", "{r}");
}

/// MISC-03: every content block kind passes through with annotations and `_meta`, and the
/// result's `_meta` too.
#[tokio::test]
async fn misc03_content_blocks_pass_through() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.call_tool("content", json!({})).await;
    let res = &r["result"];
    let kinds: Vec<&str> = res["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["text", "image", "audio", "resource_link", "resource"]
    );
    assert_eq!(res["content"][0]["annotations"]["priority"], 0.5);
    assert_eq!(res["content"][0]["_meta"]["example.com/k"], 1);
    assert_eq!(res["content"][4]["resource"]["text"], "embedded");
    assert_eq!(res["_meta"]["example.com/trace"], "abc");
}

fn build_with(input: Value, output: Option<Value>) -> Result<(), String> {
    let mut t = Tool::new("t").input_schema(input);
    if let Some(o) = output {
        t = t.output_schema(o);
    }
    Server::builder("s", "1")
        .tool(
            t,
            handler_fn(|_c, _a: Value| async move { Ok::<_, HandlerError>(json!({})) }),
        )
        .build()
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn refused(input: Value, output: Option<Value>) -> String {
    let mut t = Tool::new("t").input_schema(input);
    if let Some(o) = output {
        t = t.output_schema(o);
    }
    match Server::builder("s", "1")
        .tool(
            t,
            handler_fn(|_c, _a: Value| async move { Ok::<_, HandlerError>(json!({})) }),
        )
        .build()
    {
        Ok(_) => panic!("schema was accepted"),
        Err(e) => e.to_string(),
    }
}

/// JSS-01…JSS-03: schemas are checked once at registration; deep, huge, externally
/// referencing, invalid or non-object-root input schemas are refused with a clear error.
#[test]
fn jss_schema_bounds_rejected_at_registration() {
    let mut deep = json!({"type": "string"});
    for _ in 0..70 {
        deep = json!({"type": "array", "items": deep});
    }
    let e = refused(json!({"type": "object", "properties": {"x": deep}}), None);
    assert!(e.contains("tool t") && e.contains("nesting"), "{e}");

    let props: serde_json::Map<String, Value> = (0..10_001)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let e = refused(json!({"type": "object", "properties": props}), None);
    assert!(e.contains("subschemas"), "{e}");

    for r in [
        json!({"$ref": "https://example.com/s.json"}),
        json!({"$ref": "other.json#/x"}),
        json!({"$dynamicRef": "https://example.com/s.json#meta"}),
    ] {
        let e = refused(json!({"type": "object", "properties": {"x": r}}), None);
        assert!(e.contains("same-document"), "{e}");
    }
    let e = refused(
        json!({"type": "object"}),
        Some(json!({"$ref": "https://example.com/out.json"})),
    );
    assert!(e.contains("same-document"), "{e}");

    let e = refused(
        json!({"type": "object", "properties": {"a": {"type": 5}}}),
        None,
    );
    assert!(e.contains("not valid JSON Schema"), "{e}");
    // JSS-01: an unknown dialect is refused (nothing is fetched to find out what it is).
    let e = refused(
        json!({"$schema": "https://example.com/my-dialect", "type": "object"}),
        None,
    );
    assert!(e.contains("tool t"), "{e}");
    let e = refused(json!({"type": "string"}), None);
    assert!(e.contains("object"), "{e}");

    // Accepted: same-document refs, composition below an object root, any output schema.
    build_with(
        json!({"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/n"}, "y": {"oneOf": [{"type": "string"}, {"type": "null"}]}}}),
        Some(json!({"oneOf": [{"type": "string"}, {"type": "array"}]})),
    )
    .expect("valid schemas are accepted");
    build_with(json!({"type": "object"}), Some(json!({"enum": [1, 2]}))).expect("enum root");
}

/// HTTP-14: invalid `x-mcp-header` declarations are refused when the tool is registered, with a
/// builder error naming the tool and the offending declaration; valid ones are accepted.
#[test]
fn http14_invalid_x_mcp_header_declarations_are_refused_at_registration() {
    let obj = |props: Value| json!({"type": "object", "properties": props});
    assert_eq!(
        build_with(
            obj(json!({
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "nested": {"type": "object", "properties": {"on": {"type": "boolean", "x-mcp-header": "On"}}}
            })),
            None
        ),
        Ok(())
    );
    for (schema, why) in [
        (
            obj(json!({"r": {"type": "string", "x-mcp-header": "Bad Name"}})),
            "token",
        ),
        (
            obj(json!({"r": {"type": "string", "x-mcp-header": ""}})),
            "token",
        ),
        (
            obj(json!({"r": {"type": "number", "x-mcp-header": "R"}})),
            "string, integer or boolean",
        ),
        (
            obj(json!({"a": {"type": "string", "x-mcp-header": "Dup"},
                       "b": {"type": "string", "x-mcp-header": "dup"}})),
            "more than once",
        ),
        (
            obj(
                json!({"l": {"type": "array", "items": {"type": "object", "properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}}}),
            ),
            "nested `properties`",
        ),
        (
            json!({"type": "object", "oneOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
            "nested `properties`",
        ),
    ] {
        let e = refused(schema.clone(), None);
        assert!(
            e.contains("tool t: invalid x-mcp-header declaration") && e.contains(why),
            "{schema} → {e}"
        );
    }
}
