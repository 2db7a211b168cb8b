//! Single use of sealed `requestState` over stdio and Streamable HTTP (REQUIREMENTS MRTR-06
//! "one-time semantics must be enforced server-side", §0.6 statuses; SEP-2322).

use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, InputRequired, Outcome, Server, Tool};
use mcpcore_tests::http::{Exchange, McpHttp};
use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const ELICIT: fn() -> Value = || json!({"elicitation": {}});

use mcpcore_tests::era::{era_server as server, text};

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

/// A server with one state-only MRTR tool (`gate {q}`), served over HTTP, counting handler runs.
async fn http_server() -> (HttpListener, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let server = Server::builder("replay", "1")
        .tool(
            Tool::new("gate").input_schema(json!({"type": "object"})),
            handler_fn(move |ctx, args: Value| {
                r.fetch_add(1, Ordering::SeqCst);
                async move {
                    let q = args.get("q").cloned().unwrap_or(Value::Null);
                    Ok::<Outcome, HandlerError>(match ctx.request_state() {
                        Some(s) => CallToolResult::text(format!("{s}:{q}")).into(),
                        None => InputRequired::new().state("resume").into(),
                    })
                }
            }),
        )
        .build()
        .expect("server");
    let addr = "127.0.0.1:0".parse().expect("addr");
    let listener = serve(server, addr, HttpOptions::default())
        .await
        .expect("listen");
    (listener, runs)
}

async fn gate(c: &McpHttp, id: i64, state: Option<&str>) -> Exchange {
    let mut params = json!({"name": "gate", "arguments": {"q": 1}});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    c.modern(id, "tools/call", params).await
}

fn assert_refused_400(ex: &Exchange) {
    assert_eq!(ex.status, 400, "{:?}", ex.messages);
    assert!(!ex.sse);
    assert_invalid_state(ex.last());
}

#[tokio::test]
async fn mrtr06_a_sealed_state_is_accepted_once_over_http() {
    let (listener, runs) = http_server().await;
    let c = McpHttp::new(listener.local_addr());
    let ex = gate(&c, 1, None).await;
    assert_eq!(ex.status, 200);
    let state = ex.last()["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let ex = gate(&c, 2, Some(&state)).await;
    assert_eq!(ex.status, 200);
    assert_eq!(text(ex.last()), "resume:1");
    let before = runs.load(Ordering::SeqCst);
    assert_refused_400(&gate(&c, 3, Some(&state)).await);
    assert_eq!(runs.load(Ordering::SeqCst), before, "the handler ran");
    // A fresh round works.
    let ex = gate(&c, 4, None).await;
    let fresh = ex.last()["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    assert_eq!(text(gate(&c, 5, Some(&fresh)).await.last()), "resume:1");
}

#[tokio::test]
async fn http_refused_request_state_is_400() {
    let (listener, runs) = http_server().await;
    let c = McpHttp::new(listener.local_addr());
    let ex = gate(&c, 1, None).await;
    let state = ex.last()["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let before = runs.load(Ordering::SeqCst);
    for bad in [format!("{state}-TAMPERED"), "garbage".into(), String::new()] {
        assert_refused_400(&gate(&c, 2, Some(&bad)).await);
    }
    // The same gate refuses a malformed `inputResponses`, also before any handler: 400 too.
    let params = json!({"name": "gate", "arguments": {"q": 1}, "inputResponses": [1]});
    let ex = c.modern(2, "tools/call", params).await;
    assert_eq!(
        (ex.status, ex.code()),
        (400, Some(-32602)),
        "{:?}",
        ex.messages
    );
    assert_eq!(runs.load(Ordering::SeqCst), before, "the handler ran");
    // The untouched state still completes, in-band with 200.
    let ex = gate(&c, 3, Some(&state)).await;
    assert_eq!(ex.status, 200);
    assert_eq!(text(ex.last()), "resume:1");
}
