//! Progress, logging and list-change announcements over real stdio pipes (REQUIREMENTS PROG-01,
//! LOG-01, LOG-03, SUB-06, SUB-07).

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

fn progress(msgs: &[Value]) -> Vec<&Value> {
    msgs.iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect()
}

/// PROG-01: progress goes out against the request's token (string or integer), strictly
/// increasing, before the response.
#[tokio::test]
async fn prog01_progress_with_token() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for token in [json!("tok-1"), json!(99)] {
        let id = p.fresh_id();
        p.send_request(
            &id,
            "tools/call",
            json!({"name": "wait", "arguments": {"ms": 40}, "_meta": {"progressToken": token}}),
        )
        .await;
        let (r, others) = p.response(&id).await;
        assert!(r.get("result").is_some());
        let prog = progress(&others);
        assert_eq!(prog.len(), 4, "{others:?}");
        let mut last = f64::MIN;
        for n in prog {
            assert_eq!(n["params"]["progressToken"], token);
            assert_eq!(n["params"]["total"], 4.0);
            let v = n["params"]["progress"].as_f64().expect("progress");
            assert!(v > last, "progress strictly increases");
            last = v;
        }
    }
}

/// PROG-01: no progress is sent for a request without a token.
#[tokio::test]
async fn prog01_no_token_no_progress() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 40}, "_meta": {}}),
    )
    .await;
    let (r, others) = p.response(&id).await;
    assert!(r.get("result").is_some());
    assert!(progress(&others).is_empty(), "{others:?}");
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 40}}),
    )
    .await;
    let (_, others) = p.response(&id).await;
    assert!(progress(&others).is_empty(), "{others:?}");
}

async fn log(p: &mut StdioPeer, level: &str) -> (String, Vec<Value>) {
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "log", "arguments": {"level": level, "message": format!("at {level}")}}),
    )
    .await;
    let (r, others) = p.response(&id).await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let logs = others
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    (text, logs)
}

/// LOG-01, LOG-03: `logging/setLevel` sets the session's minimum; messages below it are
/// filtered, messages at or above it arrive with level, logger and data.
#[tokio::test]
async fn log03_set_level_filters() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let (text, logs) = log(&mut p, "debug").await;
    assert_eq!(
        (text.as_str(), logs.len()),
        ("sent", 1),
        "no level set: all pass"
    );

    let r = p
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(r["result"], json!({}));
    let (text, logs) = log(&mut p, "info").await;
    assert_eq!((text.as_str(), logs.len()), ("filtered", 0));
    for level in ["warning", "error", "emergency"] {
        let (text, logs) = log(&mut p, level).await;
        assert_eq!(text, "sent");
        assert_eq!(
            logs[0]["params"],
            json!({"level": level, "logger": "fixture", "data": format!("at {level}")})
        );
    }
    let r = p
        .request("logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(r["result"], json!({}));
    let (text, _) = log(&mut p, "info").await;
    assert_eq!(text, "sent");
}

/// LOG-03: an unknown or missing level → -32602 (and the previous level stays).
#[tokio::test]
async fn log03_unknown_level_rejected() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    p.request("logging/setLevel", json!({"level": "error"}))
        .await;
    for params in [
        json!({"level": "loud"}),
        json!({"level": "WARNING"}),
        json!({"level": 3}),
        json!({}),
    ] {
        let r = p.request("logging/setLevel", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    let (text, _) = log(&mut p, "warning").await;
    assert_eq!(text, "filtered", "the level set before stays in force");
}

/// SUB-06/SUB-07: list changes are announced to the live session when `listChanged` is
/// advertised.
#[tokio::test]
async fn sub07_list_changed_announced() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for what in ["tools", "prompts", "resources"] {
        let r = p.call_tool("changed", json!({"what": what})).await;
        assert_eq!(r["result"]["content"][0]["text"], "1", "{what}: {r}");
        let method = format!("notifications/{what}/list_changed");
        let (n, _) = p.notification(&method).await;
        assert!(n.get("id").is_none());
    }
    p.expect_silence(SETTLE).await;
}

/// SUB-06: without `listChanged` advertised, nothing is announced.
#[tokio::test]
async fn sub06_no_list_changed_without_capability() {
    let mut p = StdioPeer::wire(&["--no-list-changed"]);
    let r = p.initialize("2025-11-25", json!({})).await;
    let caps = &r["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], false, "{caps}");
    for what in ["tools", "prompts", "resources"] {
        let id = p.fresh_id();
        p.send_request(
            &id,
            "tools/call",
            json!({"name": "changed", "arguments": {"what": what}}),
        )
        .await;
        let (r, others) = p.response(&id).await;
        assert_eq!(r["result"]["content"][0]["text"], "0");
        assert!(others.is_empty(), "{others:?}");
    }
}
