//! The legacy input_required shim over stdio (REQUIREMENTS MRTR-09, ELIC-07, SAMP-02, ROOT-01;
//! seeds: the dual-era authoring shim). Every message is validated against the
//! 2025-11-25 schema, including the server→client requests the shim sends.

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::path::Path;

async fn legacy(args: &[&str], caps: Value) -> StdioPeer {
    let mut p = StdioPeer::spawn(Path::new(env!("CARGO_BIN_EXE_era-server")), args);
    let r = p.initialize("2025-11-25", caps).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    p
}

fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
}

/// A plausible client: accepts elicitations (filling `name`/`ok`/`v`/`context`), samples, lists roots.
fn client(method: &str, _params: &Value) -> Result<Value, Value> {
    Ok(match method {
        "elicitation/create" => {
            json!({"action": "accept", "content": {"name": "Ada", "ok": true, "v": "x", "context": "ctx"}})
        }
        "sampling/createMessage" => {
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"})
        }
        "roots/list" => json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}),
        other => panic!("unexpected server request {other}"),
    })
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

fn methods(legs: &[Value]) -> Vec<&str> {
    legs.iter()
        .map(|l| l["method"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn mrtr09_elicitation_is_fulfilled_with_a_real_request() {
    let mut p = legacy(&[], json!({"elicitation": {}})).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_elicit"}), client)
        .await;
    assert_eq!(text(&r), "Hello, Ada!");
    assert!(r["result"].get("resultType").is_none());
    assert_eq!(methods(&legs), ["elicitation/create"]);
    assert_eq!(legs[0]["params"]["message"], "What is your name?");
}

#[tokio::test]
async fn mrtr09_every_kind_and_in_process_state() {
    let mut p = legacy(&[], all_caps()).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_multi"}), client)
        .await;
    assert_eq!(text(&r), "all three answered");
    let mut m = methods(&legs);
    m.sort_unstable();
    assert_eq!(
        m,
        ["elicitation/create", "roots/list", "sampling/createMessage"]
    );
    // The handler's state round-trips in process, as written (no sealing on this path).
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_state", "arguments": {"q": "x"}}),
            client,
        )
        .await;
    assert_eq!(text(&r), "state=state-ok:x");
    assert_eq!(legs.len(), 1);
    let (r, _) = p
        .call_answering("tools/call", json!({"name": "mrtr_sampling"}), client)
        .await;
    assert_eq!(text(&r), "LLM said: Paris");
    let (r, _) = p
        .call_answering("tools/call", json!({"name": "mrtr_roots"}), client)
        .await;
    assert_eq!(text(&r), "Found 2 root(s)");
}

#[tokio::test]
async fn mrtr09_legacy_wire_cannot_inject_state_or_answers() {
    let mut p = legacy(&[], all_caps()).await;
    // MRTR fields are not part of the legacy wire: a forged state and answer are ignored, so the
    // handler still asks through a real request.
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_state", "arguments": {"q": "x"},
                   "requestState": "state-ok:forged",
                   "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}}),
            client,
        )
        .await;
    assert_eq!(legs.len(), 1);
    assert_eq!(text(&r), "state=state-ok:x");
}

#[tokio::test]
async fn mrtr09_rounds_up_to_the_cap() {
    let mut p = legacy(&[], all_caps()).await;
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_rounds", "arguments": {"n": 3}}),
            client,
        )
        .await;
    assert_eq!(text(&r), "done after 3 rounds");
    assert_eq!(legs.len(), 3);
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_rounds", "arguments": {"n": 8}}),
            client,
        )
        .await;
    assert_eq!(text(&r), "done after 8 rounds");
    assert_eq!(legs.len(), 8);
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_rounds", "arguments": {"n": 9}}),
            client,
        )
        .await;
    assert_eq!(legs.len(), 8);
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("8 rounds"), "{msg}");
}

#[tokio::test]
async fn mrtr09_round_cap_is_configurable() {
    let mut p = legacy(&["--max-rounds", "2"], all_caps()).await;
    let (r, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_rounds", "arguments": {"n": 3}}),
            client,
        )
        .await;
    assert_eq!(legs.len(), 2);
    assert_eq!(r["error"]["code"], -32603);
}

#[tokio::test]
async fn mrtr09_state_only_reruns_without_contacting_the_client() {
    let mut p = legacy(&[], json!({})).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_state_only"}), client)
        .await;
    assert!(legs.is_empty());
    assert_eq!(text(&r), "resumed: retry-token");
}

#[tokio::test]
async fn elic07_url_elicitation_gets_an_elicitation_id() {
    let mut p = legacy(&[], json!({"elicitation": {"url": {}}})).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_url"}), |_, _| {
            Ok(json!({"action": "accept"}))
        })
        .await;
    assert_eq!(text(&r), "url done: \"accept\"");
    let id = legs[0]["params"]["elicitationId"]
        .as_str()
        .unwrap_or_default();
    assert!(!id.is_empty(), "{}", legs[0]);
    // A handler-supplied id rides unchanged.
    let (_, legs) = p
        .call_answering(
            "tools/call",
            json!({"name": "mrtr_url", "arguments": {"elicitation_id": "given-1"}}),
            |_, _| Ok(json!({"action": "decline"})),
        )
        .await;
    assert_eq!(legs[0]["params"]["elicitationId"], "given-1");
}

#[tokio::test]
async fn mrtr09_capability_violation_fails_before_any_client_contact() {
    for (caps, tool, args, missing) in [
        (json!({}), "mrtr_elicit", json!({}), "elicitation"),
        (
            json!({"elicitation": {}}),
            "mrtr_url",
            json!({}),
            "elicitation.url",
        ),
        (
            json!({"sampling": {}}),
            "mrtr_sampling",
            json!({"tools": true}),
            "sampling.tools",
        ),
        (
            json!({"elicitation": {}, "sampling": {}}),
            "mrtr_multi",
            json!({}),
            "roots",
        ),
    ] {
        let mut p = legacy(&[], caps).await;
        let (r, legs) = p
            .call_answering(
                "tools/call",
                json!({"name": tool, "arguments": args}),
                client,
            )
            .await;
        assert!(legs.is_empty(), "{tool}: the client was contacted");
        assert_eq!(r["error"]["code"], -32603, "{tool}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(missing), "{tool}: {msg}");
    }
}

#[tokio::test]
async fn mrtr09_client_error_on_a_leg_fails_the_request() {
    let mut p = legacy(&[], all_caps()).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_elicit"}), |_, _| {
            Err(json!({"code": -32600, "message": "user closed the dialog"}))
        })
        .await;
    assert_eq!(legs.len(), 1);
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("user closed the dialog"), "{msg}");
    assert_eq!(r["error"]["data"]["clientError"]["code"], -32600);
}

#[tokio::test]
async fn mrtr09_shim_can_be_turned_off() {
    let mut p = legacy(&["--no-shim"], all_caps()).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "mrtr_elicit"}), client)
        .await;
    assert!(legs.is_empty());
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["message"], "Internal error");
}

#[tokio::test]
async fn mrtr09_prompts_and_resources_through_the_shim() {
    let mut p = legacy(&[], all_caps()).await;
    let (r, legs) = p
        .call_answering("prompts/get", json!({"name": "mrtr_prompt"}), client)
        .await;
    assert_eq!(legs.len(), 1);
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Context: ctx"
    );
    let (r, legs) = p
        .call_answering("resources/read", json!({"uri": "mrtr://gated"}), client)
        .await;
    assert_eq!(legs.len(), 1);
    assert_eq!(r["result"]["contents"][0]["text"], "unlocked");
    assert!(r["result"].get("ttlMs").is_none());
}

#[tokio::test]
async fn mrtr09_output_schema_applies_to_the_final_result() {
    let mut p = legacy(&[], all_caps()).await;
    let (r, _) = p
        .call_answering("tools/call", json!({"name": "mrtr_output"}), client)
        .await;
    assert_eq!(r["result"]["structuredContent"], json!({"name": "Ada"}));
}

#[tokio::test]
async fn legacy_handlers_may_still_send_requests_directly() {
    let mut p = legacy(&[], json!({"elicitation": {}})).await;
    let (r, legs) = p
        .call_answering("tools/call", json!({"name": "direct_elicit"}), client)
        .await;
    assert_eq!(methods(&legs), ["elicitation/create"]);
    assert_eq!(text(&r), "direct: \"accept\"");
}

/// A round's requests are independent (MRTR-04 answers them together), so the shim sends them
/// together: all three arrive before the client answers any. Each names the `inputRequests`
/// key it answers in `_meta["dev.mcpcore/inputKey"]`, so a bridge passing the round on to a
/// 2026-07-28 client keeps the server's keys.
#[tokio::test]
async fn mrtr09_a_rounds_requests_are_sent_together_each_naming_its_key() {
    let mut p = legacy(&[], all_caps()).await;
    let id = p.fresh_id();
    p.send_request(&id, "tools/call", json!({"name": "mrtr_multi"}))
        .await;
    let mut legs = Vec::new();
    while legs.len() < 3 {
        let m = p.recv().await;
        assert!(m.get("method").is_some(), "no answer before the round: {m}");
        legs.push(m);
    }
    let mut keys: Vec<(&str, &str)> = legs
        .iter()
        .map(|l| {
            (
                l["method"].as_str().unwrap_or_default(),
                l["params"]["_meta"]["dev.mcpcore/inputKey"]
                    .as_str()
                    .unwrap_or_default(),
            )
        })
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            ("elicitation/create", "user_name"),
            ("roots/list", "client_roots"),
            ("sampling/createMessage", "greeting"),
        ]
    );
    for l in legs.iter().rev() {
        let method = l["method"].as_str().unwrap_or_default();
        let answer = client(method, &l["params"]).expect("answer");
        p.answer(&l["id"], answer).await;
    }
    let (r, _) = p.response(&id).await;
    assert_eq!(text(&r), "all three answered");
}
