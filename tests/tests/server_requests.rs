//! Server→client requests on the legacy era over real stdio pipes, with the test acting as the
//! client (REQUIREMENTS SAMP-01, SAMP-02, ELIC-01, ELIC-05, ROOT-01, LC-07, LC-08, CAN-01,
//! CAN-04). For each request type: answered, timed out (short
//! per-request timeout → `notifications/cancelled` + -32001) and cancelled with its parent.

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

struct Case {
    tool: &'static str,
    args: Value,
    caps: Value,
    method: &'static str,
    answer: Value,
}

fn case(kind: &str) -> Case {
    match kind {
        "sampling" => Case {
            tool: "sample",
            args: json!({}),
            caps: json!({"sampling": {}}),
            method: "sampling/createMessage",
            answer: json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m-1", "stopReason": "endTurn"}),
        },
        "elicitation" => Case {
            tool: "elicit",
            args: json!({}),
            // A bare `elicitation: {}` means form mode (ELIC-01).
            caps: json!({"elicitation": {}}),
            method: "elicitation/create",
            answer: json!({"action": "accept", "content": {"name": "Ada"}}),
        },
        "roots" => Case {
            tool: "roots",
            args: json!({}),
            caps: json!({"roots": {"listChanged": true}}),
            method: "roots/list",
            answer: json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
        },
        _ => Case {
            tool: "ping-client",
            args: json!({}),
            caps: json!({}),
            method: "ping",
            answer: json!({}),
        },
    }
}

fn with(args: &Value, extra: Value) -> Value {
    let mut a = args.clone();
    if let (Some(a), Some(e)) = (a.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    a
}

/// The client answers: the handler gets the answer and the tool call completes.
async fn answered(kind: &str) {
    let c = case(kind);
    let mut p = StdioPeer::wire_ready(&[], c.caps.clone()).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": c.tool, "arguments": c.args}),
    )
    .await;
    let (req, _) = p.server_request(c.method).await;
    assert!(req["id"].is_i64() || req["id"].is_string(), "{req}");
    p.answer(&req["id"], c.answer.clone()).await;
    let (r, _) = p.response(&id).await;
    assert_eq!(r["result"]["structuredContent"]["answer"], c.answer, "{r}");
    // A second answer to the same request is ignored.
    p.answer(&req["id"], c.answer.clone()).await;
    p.expect_silence(SETTLE).await;
}

/// No answer within the per-request timeout: the server sends `notifications/cancelled` for
/// its request, the handler sees a timeout, and uncaught it answers -32001. A late answer is
/// ignored (first writer wins).
async fn timed_out(kind: &str) {
    let c = case(kind);
    let mut p = StdioPeer::wire_ready(&[], c.caps.clone()).await;
    for catch in [false, true] {
        let id = p.fresh_id();
        let args = with(&c.args, json!({"timeout_ms": 100, "catch": catch}));
        p.send_request(
            &id,
            "tools/call",
            json!({"name": c.tool, "arguments": args}),
        )
        .await;
        let (req, _) = p.server_request(c.method).await;
        let (cancel, _) = p.notification("notifications/cancelled").await;
        assert_eq!(cancel["params"]["requestId"], req["id"], "{cancel}");
        let (r, others) = p.response(&id).await;
        assert!(others.iter().all(|m| m["method"] != c.method));
        if catch {
            assert_eq!(r["result"]["isError"], true, "{r}");
            let text = r["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                text.contains("Timeout"),
                "the handler saw a timeout: {text}"
            );
        } else {
            assert_eq!(r["error"]["code"], -32001, "{r}");
        }
        p.answer(&req["id"], c.answer.clone()).await;
    }
    p.expect_silence(SETTLE).await;
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
}

/// The client cancels the originating request while the server waits on its nested request:
/// the nested request is cancelled with `notifications/cancelled`, and the originating request
/// gets no response.
async fn cancelled(kind: &str) {
    let c = case(kind);
    let mut p = StdioPeer::wire_ready(&[], c.caps.clone()).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": c.tool, "arguments": c.args}),
    )
    .await;
    let (req, _) = p.server_request(c.method).await;
    p.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    )
    .await;
    let (cancel, others) = p.notification("notifications/cancelled").await;
    assert_eq!(cancel["params"]["requestId"], req["id"], "{cancel}");
    assert!(others.iter().all(|m| m["id"] != id), "{others:?}");
    // A late answer to the cancelled nested request is ignored.
    p.answer(&req["id"], c.answer.clone()).await;
    p.expect_silence(SETTLE).await;
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
}

macro_rules! per_kind {
    ($kind:literal, $answered:ident, $timed_out:ident, $cancelled:ident) => {
        #[tokio::test]
        async fn $answered() {
            answered($kind).await;
        }
        #[tokio::test]
        async fn $timed_out() {
            timed_out($kind).await;
        }
        #[tokio::test]
        async fn $cancelled() {
            cancelled($kind).await;
        }
    };
}

per_kind!(
    "sampling",
    samp01_sampling_answered,
    samp01_sampling_timed_out,
    samp01_sampling_cancelled
);
per_kind!(
    "elicitation",
    elic01_elicitation_answered,
    elic01_elicitation_timed_out,
    elic01_elicitation_cancelled
);
per_kind!(
    "roots",
    root01_roots_answered,
    root01_roots_timed_out,
    root01_roots_cancelled
);
per_kind!(
    "ping",
    lc07_ping_client_answered,
    lc07_ping_client_timed_out,
    lc07_ping_client_cancelled
);

/// Call `tool` with `catch` and return what the handler saw (no request may reach the client).
async fn refused(p: &mut StdioPeer, tool: &str, args: Value, method: &str) -> String {
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": tool, "arguments": with(&args, json!({"catch": true}))}),
    )
    .await;
    let (r, others) = p.response(&id).await;
    assert!(
        others.iter().all(|m| m["method"] != method),
        "{method} must not be sent: {others:?}"
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// SAMP-01/SAMP-02: sampling needs `sampling`; tools/toolChoice need `sampling.tools`.
#[tokio::test]
async fn samp02_sampling_capability_checks() {
    let mut p = StdioPeer::wire_ready(&[], json!({"roots": {}})).await;
    let seen = refused(&mut p, "sample", json!({}), "sampling/createMessage").await;
    assert!(seen.contains("sampling"), "{seen}");
    // Uncaught: -32603 naming the missing capability (as the legacy input_required shim does).
    let r = p.call_tool("sample", json!({})).await;
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Client does not support sampling"})
    );

    let mut p = StdioPeer::wire_ready(&[], json!({"sampling": {}})).await;
    let seen = refused(
        &mut p,
        "sample",
        json!({"tools": true}),
        "sampling/createMessage",
    )
    .await;
    assert!(seen.contains("sampling.tools"), "{seen}");

    let mut p = StdioPeer::wire_ready(&[], json!({"sampling": {"tools": {}}})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "sample", "arguments": {"tools": true}}),
    )
    .await;
    let (req, _) = p.server_request("sampling/createMessage").await;
    assert_eq!(req["params"]["tools"][0]["name"], "lookup");
    assert_eq!(req["params"]["toolChoice"]["mode"], "auto");
    p.answer(&req["id"], case("sampling").answer).await;
    let (r, _) = p.response(&id).await;
    assert!(r.get("result").is_some(), "{r}");
}

/// A client error answer reaches the handler, which (uncaught) passes it on.
#[tokio::test]
async fn samp01_client_error_reaches_handler() {
    let mut p = StdioPeer::wire_ready(&[], json!({"sampling": {}})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "sample", "arguments": {}}),
    )
    .await;
    let (req, _) = p.server_request("sampling/createMessage").await;
    p.send(&json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -1, "message": "User rejected sampling"}}))
        .await;
    let (r, _) = p.response(&id).await;
    assert_eq!(r["error"]["code"], -1, "{r}");
    assert_eq!(r["error"]["message"], "User rejected sampling");
}

/// ELIC-01/ELIC-05: form needs `elicitation` (bare `{}` or `form`); URL mode needs
/// `elicitation.url`; an undeclared mode is never sent.
#[tokio::test]
async fn elic01_elicitation_mode_checks() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let seen = refused(&mut p, "elicit", json!({}), "elicitation/create").await;
    assert!(seen.contains("elicitation"), "{seen}");

    let mut p = StdioPeer::wire_ready(&[], json!({"elicitation": {}})).await;
    let seen = refused(
        &mut p,
        "elicit",
        json!({"mode": "url"}),
        "elicitation/create",
    )
    .await;
    assert!(
        seen.contains("elicitation.url"),
        "bare {{}} is form only: {seen}"
    );

    let mut p = StdioPeer::wire_ready(&[], json!({"elicitation": {"url": {}}})).await;
    let seen = refused(
        &mut p,
        "elicit",
        json!({"mode": "form"}),
        "elicitation/create",
    )
    .await;
    assert!(seen.contains("elicitation.form"), "{seen}");
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "elicit", "arguments": {"mode": "url"}}),
    )
    .await;
    let (req, _) = p.server_request("elicitation/create").await;
    assert_eq!(req["params"]["mode"], "url");
    assert_eq!(req["params"]["url"], "https://example.com/auth");
    p.answer(&req["id"], json!({"action": "accept"})).await;
    let (r, _) = p.response(&id).await;
    assert_eq!(
        r["result"]["structuredContent"]["answer"]["action"],
        "accept"
    );

    let mut p = StdioPeer::wire_ready(&[], json!({"elicitation": {"form": {}}})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "elicit", "arguments": {}}),
    )
    .await;
    let (req, _) = p.server_request("elicitation/create").await;
    assert_eq!(req["params"]["mode"], "form");
    p.answer(&req["id"], json!({"action": "decline"})).await;
    let (r, _) = p.response(&id).await;
    assert_eq!(
        r["result"]["structuredContent"]["answer"]["action"],
        "decline"
    );
}

/// ROOT-01: roots/list needs the `roots` capability.
#[tokio::test]
async fn root01_roots_capability_check() {
    let mut p = StdioPeer::wire_ready(&[], json!({"sampling": {}})).await;
    let seen = refused(&mut p, "roots", json!({}), "roots/list").await;
    assert!(seen.contains("roots"), "{seen}");
}

/// LC-08 / CAN-04: the default wait comes from `Limits::peer_request_timeout` (configured
/// short here); expiry cancels the request and answers -32001.
#[tokio::test]
async fn lc08_default_peer_timeout_is_configurable() {
    let mut p = StdioPeer::wire_ready(&["--peer-timeout-ms", "150"], json!({})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "ping-client", "arguments": {}}),
    )
    .await;
    let (req, _) = p.server_request("ping").await;
    let (cancel, _) = p.notification("notifications/cancelled").await;
    assert_eq!(cancel["params"]["requestId"], req["id"]);
    let (r, _) = p.response(&id).await;
    assert_eq!(r["error"]["code"], -32001, "{r}");
}

/// Each nested request gets its own id; concurrent ones are answered out of order correctly.
#[tokio::test]
async fn lc_concurrent_server_requests_routed_by_id() {
    let mut p = StdioPeer::wire_ready(&[], json!({"roots": {}})).await;
    let a = p.fresh_id();
    let b = p.fresh_id();
    p.send_request(&a, "tools/call", json!({"name": "roots", "arguments": {}}))
        .await;
    let (ra, _) = p.server_request("roots/list").await;
    p.send_request(
        &b,
        "tools/call",
        json!({"name": "ping-client", "arguments": {}}),
    )
    .await;
    let (rb, _) = p.server_request("ping").await;
    assert_ne!(ra["id"], rb["id"]);
    p.answer(&rb["id"], json!({})).await;
    let (r, _) = p.response(&b).await;
    assert_eq!(r["result"]["structuredContent"]["answer"], json!({}));
    let roots = json!({"roots": [{"uri": "file:///a"}]});
    p.answer(&ra["id"], roots.clone()).await;
    let (r, _) = p.response(&a).await;
    assert_eq!(r["result"]["structuredContent"]["answer"], roots);
}
