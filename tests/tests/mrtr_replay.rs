//! Single use of sealed `requestState` (REQUIREMENTS MRTR-06 "one-time semantics must be
//! enforced server-side"; SEP-2322).

use mcpcore_tests::{Era, StdioPeer};
use serde_json::{json, Value};
use std::path::Path;

const ELICIT: fn() -> Value = || json!({"elicitation": {}});

fn server(args: &[&str]) -> StdioPeer {
    let mut p = StdioPeer::spawn(Path::new(env!("CARGO_BIN_EXE_era-server")), args);
    p.era = Era::Modern;
    p
}

fn text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
}

fn assert_invalid_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
}

async fn first_state(p: &mut StdioPeer, q: &str) -> String {
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_state", "arguments": {"q": q}}),
            ELICIT(),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned()
}

async fn retry(p: &mut StdioPeer, q: &str, state: &str) -> Value {
    let params = json!({"name": "mrtr_state", "arguments": {"q": q}, "requestState": state,
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
    p.modern("tools/call", params, ELICIT()).await
}

async fn invocations(p: &mut StdioPeer) -> u64 {
    let r = p
        .modern("tools/call", json!({"name": "invocations"}), json!({}))
        .await;
    text(&r).parse().expect("count")
}

#[tokio::test]
async fn mrtr06_a_sealed_state_is_accepted_once_over_stdio() {
    let mut p = server(&[]);
    let state = first_state(&mut p, "x").await;
    assert_eq!(text(&retry(&mut p, "x", &state).await), "state=state-ok:x");
    let before = invocations(&mut p).await;
    // The very same retry again (a client re-sending a retry it thinks was lost): refused before
    // the handler runs, with the error of a tampered state.
    for _ in 0..2 {
        assert_invalid_state(&retry(&mut p, "x", &state).await);
    }
    assert_eq!(invocations(&mut p).await, before);
    // Starting over yields a fresh state, which works once in turn.
    let fresh = first_state(&mut p, "x").await;
    assert_ne!(fresh, state);
    assert_eq!(text(&retry(&mut p, "x", &fresh).await), "state=state-ok:x");
    assert_invalid_state(&retry(&mut p, "x", &fresh).await);
}

#[tokio::test]
async fn mrtr06_each_round_of_a_multi_round_flow_has_its_own_state() {
    let mut p = server(&[]);
    let call = |state: Option<&Value>| {
        let mut params = json!({"name": "mrtr_rounds", "arguments": {"n": 2}});
        if let Some(s) = state {
            params["requestState"] = s.clone();
            params["inputResponses"] = json!({"step": {"action": "accept", "content": {"v": "a"}}});
        }
        params
    };
    let r = p.modern("tools/call", call(None), ELICIT()).await;
    let s1 = r["result"]["requestState"].clone();
    let r = p.modern("tools/call", call(Some(&s1)), ELICIT()).await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let s2 = r["result"]["requestState"].clone();
    // Round 1's state is spent; round 2's is not.
    assert_invalid_state(&p.modern("tools/call", call(Some(&s1)), ELICIT()).await);
    let r = p.modern("tools/call", call(Some(&s2)), ELICIT()).await;
    assert_eq!(text(&r), "done after 2 rounds");
}

#[tokio::test]
async fn mrtr06_refused_states_do_not_consume_a_cache_slot() {
    // One slot: anything claimed before full verification would take it from the genuine retry.
    let mut p = server(&["--replay-capacity", "1"]);
    let state = first_state(&mut p, "x").await;
    let mut flipped = state.clone().into_bytes();
    // A character inside the tag: the nonce (the first 16 characters after `v1.`) stays intact,
    // the token still decodes, and only authentication fails.
    let at = flipped.len() - 5;
    flipped[at] = if flipped[at] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).expect("ascii");
    for forged in [
        flipped.as_str(),
        "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ] {
        assert_invalid_state(&retry(&mut p, "x", forged).await);
    }
    // Genuine but presented for other arguments: opens, fails its claims, is not claimed.
    assert_invalid_state(&retry(&mut p, "y", &state).await);
    assert_eq!(text(&retry(&mut p, "x", &state).await), "state=state-ok:x");
    // The one slot is now taken by a live state: a second genuine state is refused (fail
    // closed) rather than evicting the first, which stays a replay.
    let second = first_state(&mut p, "z").await;
    assert_invalid_state(&retry(&mut p, "z", &second).await);
    assert_invalid_state(&retry(&mut p, "x", &state).await);
}

#[tokio::test]
async fn single_use_can_be_turned_off() {
    let mut p = server(&["--reusable-state"]);
    let state = first_state(&mut p, "x").await;
    for _ in 0..3 {
        assert_eq!(text(&retry(&mut p, "x", &state).await), "state=state-ok:x");
    }
}
