//! input_required round trips on the 2026-07-28 wire and sealed requestState (SEP-2322;
//! REQUIREMENTS MRTR-01…08, META-04, ELIC-01, SAMP-02, CACHE-01).

use mcpcore_tests::era::with_envelope;
use mcpcore_tests::{validate_def, Era, StdioPeer};
use serde_json::{json, Value};

const KEY1: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"; // 32 × 0x01
const KEY2: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI"; // 32 × 0x02
const ELICIT: fn() -> Value = || json!({"elicitation": {}});

use mcpcore_tests::era::{era_server as server, text};

/// Check an input_required result strictly (the union validation of the harness is loose).
fn input_required(r: &Value) -> &Value {
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required", "{r}");
    validate_def(Era::Modern, "InputRequiredResult", res).expect("InputRequiredResult");
    if let Some(reqs) = res.get("inputRequests") {
        validate_def(Era::Modern, "InputRequests", reqs).expect("InputRequests");
    }
    assert!(res.get("ttlMs").is_none() && res.get("cacheScope").is_none());
    res
}

fn accept(field: &str, v: Value) -> Value {
    json!({"action": "accept", "content": {field: v}})
}

async fn first_state(p: &mut StdioPeer, q: &str) -> String {
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_state", "arguments": {"q": q}}),
            ELICIT(),
        )
        .await;
    input_required(&r)["requestState"]
        .as_str()
        .expect("state")
        .to_owned()
}

fn retry(name: &str, args: Value, state: Value) -> Value {
    json!({"name": name, "arguments": args, "requestState": state,
           "inputResponses": {"confirm": accept("ok", json!(true))}})
}

async fn invocations(p: &mut StdioPeer) -> u64 {
    let r = p
        .modern("tools/call", json!({"name": "invocations"}), json!({}))
        .await;
    text(&r).parse().expect("count")
}

fn assert_invalid_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
}

#[tokio::test]
async fn mrtr04_elicitation_round_trip() {
    let mut p = server(&[]);
    let r = p
        .modern("tools/call", json!({"name": "mrtr_elicit"}), ELICIT())
        .await;
    let res = input_required(&r);
    assert_eq!(
        res["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    assert!(res.get("requestState").is_none());
    // A wrong key only: asked again (MRTR-07).
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_elicit", "inputResponses": {"wrong_key": accept("name", json!("x"))}}),
            ELICIT(),
        )
        .await;
    input_required(&r);
    // inputResponses: null reads as absent; a non-object is refused.
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_elicit", "inputResponses": null}),
            ELICIT(),
        )
        .await;
    input_required(&r);
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_elicit", "inputResponses": [1]}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    // The answer plus an unknown extra key completes.
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_elicit", "inputResponses": {
                "user_name": accept("name", json!("Ada")), "extra": {"action": "cancel"}}}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(text(&r), "Hello, Ada!");
}

#[tokio::test]
async fn mrtr06_state_is_sealed_and_opened_for_the_handler() {
    let mut p = server(&[]);
    let state = first_state(&mut p, "x").await;
    assert!(state.starts_with("v1."), "{state}");
    assert!(!state.contains("state-ok"), "plaintext visible: {state}");
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_state", json!({"q": "x"}), json!(state)),
            ELICIT(),
        )
        .await;
    assert_eq!(text(&r), "state=state-ok:x");
}

#[tokio::test]
async fn mrtr06_tampered_malformed_and_cross_call_states_never_reach_the_handler() {
    let mut p = server(&[]);
    let state = first_state(&mut p, "x").await;
    let before = invocations(&mut p).await;
    let mut flipped = state.clone().into_bytes();
    let mid = flipped.len() / 2;
    flipped[mid] = if flipped[mid] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ascii");
    let bad_states = [
        json!(format!("{state}-TAMPERED")),
        json!(flipped),
        json!("garbage"),
        json!("v1."),
        json!(""),
        json!(format!("v2.{}", &state[3..])),
        json!(42),
        json!({"state": "x"}),
    ];
    for s in bad_states {
        let r = p
            .modern(
                "tools/call",
                retry("mrtr_state", json!({"q": "x"}), s),
                ELICIT(),
            )
            .await;
        assert_invalid_state(&r);
    }
    // Replayed elsewhere: other arguments, another tool, another method.
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_state", json!({"q": "y"}), json!(state)),
            ELICIT(),
        )
        .await;
    assert_invalid_state(&r);
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_elicit", json!({"q": "x"}), json!(state)),
            ELICIT(),
        )
        .await;
    assert_invalid_state(&r);
    let r = p
        .modern(
            "prompts/get",
            json!({"name": "mrtr_prompt", "requestState": state}),
            ELICIT(),
        )
        .await;
    assert_invalid_state(&r);
    // None of the refused retries ran the handler.
    assert_eq!(invocations(&mut p).await, before);
    // The genuine one still works.
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_state", json!({"q": "x"}), json!(state)),
            ELICIT(),
        )
        .await;
    assert_eq!(text(&r), "state=state-ok:x");
}

/// Either MRTR field alone, of the wrong type, is refused before any handler runs (-32602): the
/// engine reads a round's fields whenever one of them is present.
#[tokio::test]
async fn mrtr_fields_of_the_wrong_type_are_refused_alone() {
    let mut p = server(&[]);
    let before = invocations(&mut p).await;
    for (field, v) in [
        ("inputResponses", json!("x")),
        ("inputResponses", json!([1])),
        ("requestState", json!(42)),
    ] {
        let r = p
            .modern(
                "tools/call",
                json!({"name": "mrtr_state", "arguments": {"q": "x"}, field: v}),
                ELICIT(),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{field}: {r}");
    }
    // Explicit nulls are absent fields: the call runs as a first round.
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_state", "arguments": {"q": "x"},
                   "inputResponses": null, "requestState": null}),
            ELICIT(),
        )
        .await;
    input_required(&r);
    assert_eq!(invocations(&mut p).await, before + 1);
}

#[tokio::test]
async fn mrtr06_expired_state_is_refused() {
    let mut p = server(&["--state-ttl-ms", "0"]);
    let state = first_state(&mut p, "x").await;
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_state", json!({"q": "x"}), json!(state)),
            ELICIT(),
        )
        .await;
    assert_invalid_state(&r);
}

#[tokio::test]
async fn sealing_can_be_turned_off() {
    let mut p = server(&["--no-seal"]);
    let state = first_state(&mut p, "x").await;
    assert_eq!(state, "state-ok:x");
    let r = p
        .modern(
            "tools/call",
            retry("mrtr_state", json!({"q": "x"}), json!("state-ok:edited")),
            ELICIT(),
        )
        .await;
    assert_eq!(text(&r), "state=state-ok:edited");
}

/// A state for `mrtr_state {q}` sealed by another worker: a separate server process started
/// with `args` (its keys, its audience).
async fn issued_by(args: &[&str], q: &str) -> String {
    let mut worker = server(args);
    first_state(&mut worker, q).await
}

async fn retry_state(p: &mut StdioPeer, q: &str, state: &str) -> Value {
    p.modern(
        "tools/call",
        retry("mrtr_state", json!({"q": q}), json!(state)),
        ELICIT(),
    )
    .await
}

#[tokio::test]
async fn mrtr06_shared_key_ring_rotation_and_wrong_keys() {
    let k1 = format!("k1={KEY1}");
    let k2 = format!("k2={KEY2}");
    // A worker holding k1 accepts what another k1 worker sealed.
    let mut p = server(&["--key", &k1]);
    let from_peer = issued_by(&["--key", &k1], "z").await;
    assert_eq!(
        text(&retry_state(&mut p, "z", &from_peer).await),
        "state=state-ok:z"
    );
    // Same key bytes under another id, or another key: refused.
    for other in [format!("k9={KEY1}"), format!("k1={KEY2}")] {
        let forged = issued_by(&["--key", &other], "z").await;
        assert_invalid_state(&retry_state(&mut p, "z", &forged).await);
    }
    // Rotation: current k2, previous k1. Old tokens still open; new tokens use k2 only.
    let mut p = server(&["--key", &k2, "--key", &k1]);
    let old = issued_by(&["--key", &k1], "z").await;
    assert_eq!(
        text(&retry_state(&mut p, "z", &old).await),
        "state=state-ok:z"
    );
    let issued = first_state(&mut p, "w").await;
    let mut k2_only = server(&["--key", &k2]);
    assert_eq!(
        text(&retry_state(&mut k2_only, "w", &issued).await),
        "state=state-ok:w"
    );
    let mut k1_only = server(&["--key", &k1]);
    assert_invalid_state(&retry_state(&mut k1_only, "w", &issued).await);
}

#[tokio::test]
async fn mrtr06_audience_is_bound() {
    let key = format!("k1={KEY1}");
    let mut a = server(&["--key", &key, "--audience", "deploy-a"]);
    let state = first_state(&mut a, "x").await;
    let mut b = server(&["--key", &key, "--audience", "deploy-b"]);
    assert_invalid_state(&retry_state(&mut b, "x", &state).await);
    // Same key, no audience claimed: refused by the audience-bound server.
    let unbound = issued_by(&["--key", &key], "x").await;
    assert_invalid_state(&retry_state(&mut a, "x", &unbound).await);
    // Another worker of the same deployment (same key and audience): accepted.
    let same_deployment = issued_by(&["--key", &key, "--audience", "deploy-a"], "x").await;
    assert_eq!(
        text(&retry_state(&mut a, "x", &same_deployment).await),
        "state=state-ok:x"
    );
}

#[tokio::test]
async fn mrtr03_undeclared_capabilities_fail_with_merged_requirements() {
    let mut p = server(&[]);
    let cases = [
        (
            "mrtr_elicit",
            json!({}),
            json!({}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "mrtr_elicit",
            json!({}),
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "mrtr_multi",
            json!({}),
            json!({"sampling": {}}),
            json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
        ),
        (
            "mrtr_url",
            json!({}),
            ELICIT(),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            "mrtr_sampling",
            json!({"tools": true}),
            json!({"sampling": {}}),
            json!({"sampling": {"tools": {}}}),
        ),
        (
            "mrtr_roots",
            json!({}),
            json!({"sampling": {}}),
            json!({"roots": {}}),
        ),
    ];
    for (tool, args, caps, required) in cases {
        let r = p
            .modern("tools/call", json!({"name": tool, "arguments": args}), caps)
            .await;
        assert_eq!(r["error"]["code"], -32021, "{tool}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"], required,
            "{tool}"
        );
    }
    // Declared: served.
    let ok = [
        (
            "mrtr_elicit",
            json!({}),
            json!({"elicitation": {"form": {}}}),
        ),
        ("mrtr_url", json!({}), json!({"elicitation": {"url": {}}})),
        (
            "mrtr_sampling",
            json!({"tools": true}),
            json!({"sampling": {"tools": {}}}),
        ),
        ("mrtr_roots", json!({}), json!({"roots": {}})),
        (
            "mrtr_multi",
            json!({}),
            json!({"elicitation": {}, "sampling": {}, "roots": {}}),
        ),
    ];
    for (tool, args, caps) in ok {
        let r = p
            .modern("tools/call", json!({"name": tool, "arguments": args}), caps)
            .await;
        input_required(&r);
    }
}

#[tokio::test]
async fn mrtr02_malformed_outcomes_are_internal_errors() {
    let mut p = server(&[]);
    for tool in ["mrtr_bad", "mrtr_empty"] {
        let r = p
            .modern("tools/call", json!({"name": tool}), ELICIT())
            .await;
        assert_eq!(r["error"]["code"], -32603, "{tool}: {r}");
        assert_eq!(r["error"]["message"], "Internal error");
    }
}

#[tokio::test]
async fn mrtr_output_schema_validation_skips_input_required() {
    let mut p = server(&[]);
    let r = p
        .modern("tools/call", json!({"name": "mrtr_output"}), ELICIT())
        .await;
    input_required(&r);
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_output", "inputResponses": {"who": accept("name", json!("Bo"))}}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"], json!({"name": "Bo"}));
}

#[tokio::test]
async fn mrtr01_prompts_and_resources_round_trip() {
    let mut p = server(&["--cache", "5000:public"]);
    let r = p
        .modern("prompts/get", json!({"name": "mrtr_prompt"}), ELICIT())
        .await;
    input_required(&r);
    let r = p
        .modern(
            "prompts/get",
            json!({"name": "mrtr_prompt", "inputResponses": {"user_context": accept("context", json!("c1"))}}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "Context: c1");
    assert_eq!(r["result"]["resultType"], "complete");
    // resources/read: the input_required answer carries no cache hints; the completed retry is
    // never cacheable (MRTR-08) even though the server configured public hints.
    let r = p
        .modern("resources/read", json!({"uri": "mrtr://gated"}), ELICIT())
        .await;
    input_required(&r);
    let r = p
        .modern(
            "resources/read",
            json!({"uri": "mrtr://gated", "inputResponses": {"confirm": accept("ok", json!(true))}}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "unlocked");
    assert_eq!(r["result"]["ttlMs"], 0);
    assert_eq!(r["result"]["cacheScope"], "private");
    let r = p
        .modern("resources/read", json!({"uri": "era://plain"}), json!({}))
        .await;
    assert_eq!(r["result"]["ttlMs"], 5000);
}

#[tokio::test]
async fn mrtr_multi_round_and_state_only() {
    let mut p = server(&[]);
    let call = |state: Option<Value>, answer: bool| {
        let mut params = json!({"name": "mrtr_rounds", "arguments": {"n": 2}});
        if let Some(s) = state {
            params["requestState"] = s;
        }
        if answer {
            params["inputResponses"] = json!({"step": accept("v", json!("a"))});
        }
        with_envelope(params, ELICIT())
    };
    let (r, _) = p.call("tools/call", call(None, false)).await;
    let s1 = input_required(&r)["requestState"].clone();
    let (r, _) = p.call("tools/call", call(Some(s1.clone()), true)).await;
    let s2 = input_required(&r)["requestState"].clone();
    assert_ne!(s1, s2);
    let (r, _) = p.call("tools/call", call(Some(s2), true)).await;
    assert_eq!(text(&r), "done after 2 rounds");
    // requestState only (load shedding): retried at once with the state.
    let r = p
        .modern("tools/call", json!({"name": "mrtr_state_only"}), json!({}))
        .await;
    let res = input_required(&r);
    assert!(res.get("inputRequests").is_none());
    let s = res["requestState"].clone();
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_state_only", "requestState": s}),
            json!({}),
        )
        .await;
    assert_eq!(text(&r), "resumed: retry-token");
}
