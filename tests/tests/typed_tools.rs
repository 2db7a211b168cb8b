//! Typed tools over real stdio pipes (REQUIREMENTS TOOL-03, TOOL-06, TOOL-07, JSS-01). The demo
//! server declares `echo`, `add` and `fail` with serde types: their schemas are generated (JSON
//! Schema 2020-12), listed in both eras, enforced before the handler runs, and bad arguments get
//! the same `isError` result as any schema failure. Every message is validated against the
//! schema of its era.

use mcpcore_tests::stdio::envelope;
use mcpcore_tests::{Era, StdioPeer};
use serde_json::{json, Value};

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

async fn peer(era: Era) -> StdioPeer {
    let mut p = StdioPeer::demo();
    if era == Era::Legacy {
        let r = p.initialize("2025-11-25", json!({})).await;
        assert!(r.get("result").is_some(), "{r}");
    } else {
        p.era = Era::Modern;
    }
    p
}

async fn request(p: &mut StdioPeer, method: &str, mut params: Value) -> Value {
    if p.era == Era::Modern {
        params["_meta"] = envelope(json!({}));
    }
    p.request(method, params).await
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {list}"))
}

/// TOOL-03, JSS-01: `tools/list` shows the schemas generated from the argument and output types.
#[tokio::test]
async fn typed_schemas_are_generated_and_listed() {
    for era in [Era::Legacy, Era::Modern] {
        let mut p = peer(era).await;
        let list = request(&mut p, "tools/list", json!({})).await;
        let add = tool(&list, "add");
        let input = &add["inputSchema"];
        assert_eq!(input["$schema"], DIALECT, "{era:?}: {add}");
        assert_eq!(input["type"], "object");
        assert_eq!(input["properties"]["a"]["type"], "number");
        assert_eq!(input["properties"]["b"]["type"], "number");
        assert_eq!(input["required"], json!(["a", "b"]));
        let output = &add["outputSchema"];
        assert_eq!(output["$schema"], DIALECT, "{era:?}: {add}");
        assert_eq!(output["type"], "object");
        assert_eq!(output["properties"]["sum"]["type"], "number");
        assert_eq!(output["required"], json!(["sum"]));
        let echo = tool(&list, "echo");
        assert_eq!(
            echo["inputSchema"]["properties"]["text"]["description"],
            "The text to echo."
        );
        assert!(echo.get("outputSchema").is_none(), "text output: {echo}");
        assert_eq!(
            tool(&list, "fail")["inputSchema"],
            json!({"type": "object", "additionalProperties": false}),
            "no arguments: the recommended schema (TOOL-07)"
        );
    }
}

/// TOOL-06: a typed output is `structuredContent` with its JSON mirrored as text; a `String`
/// output is one text block.
#[tokio::test]
async fn typed_calls_answer_structured_and_text() {
    for era in [Era::Legacy, Era::Modern] {
        let mut p = peer(era).await;
        let r = request(
            &mut p,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3.5}}),
        )
        .await;
        assert_eq!(r["result"]["structuredContent"], json!({"sum": 5.5}), "{r}");
        assert_eq!(r["result"]["content"][0]["text"], r#"{"sum":5.5}"#);
        assert!(r["result"].get("isError").is_none(), "{r}");
        let r = request(
            &mut p,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
        assert_eq!(
            r["result"]["content"],
            json!([{"type": "text", "text": "hi"}])
        );
        assert!(r["result"].get("structuredContent").is_none(), "{r}");
    }
}

/// TOOL-07: arguments the generated schema refuses never reach the handler; the answer is the
/// `isError` result every schema failure gets, naming the tool and the failing location.
#[tokio::test]
async fn typed_bad_arguments_are_the_schema_error_result() {
    for era in [Era::Legacy, Era::Modern] {
        let mut p = peer(era).await;
        let r = request(
            &mut p,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": "x"}}),
        )
        .await;
        assert_eq!(r["result"]["isError"], true, "{era:?}: {r}");
        assert_eq!(
            r["result"]["content"],
            json!([{"type": "text", "text": "Invalid arguments for tool add: /b: \"x\" is not of type \"number\""}]),
            "{era:?}: {r}"
        );
        assert!(r["result"].get("structuredContent").is_none(), "{r}");
        let r = request(
            &mut p,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2}}),
        )
        .await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let msg = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            msg.starts_with("Invalid arguments for tool add: ") && msg.contains("\"b\""),
            "{msg}"
        );
        let r = request(
            &mut p,
            "tools/call",
            json!({"name": "fail", "arguments": {"x": 1}}),
        )
        .await;
        assert_eq!(r["result"]["isError"], true, "no-argument tool: {r}");
    }
}
