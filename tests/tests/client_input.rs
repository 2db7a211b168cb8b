//! Server→client requests answered by registered handlers (legacy) and the `input_required`
//! driver (modern) against our own server over real stdio pipes (REQUIREMENTS JR-05, SAMP-01,
//! ELIC-01, ROOT-01, LC-07, MRTR-01…05). Every exchanged message is validated against its era's
//! schema through the `tap` recorder.

use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ClientError, ConnectMode, StderrMode, StdioCommand,
};
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::Era as SchemaEra;
use serde_json::{json, Value};
use std::time::Duration;

const SERVER: &str = env!("CARGO_BIN_EXE_client-test-server");
const TAP: &str = env!("CARGO_BIN_EXE_tap");
/// Bound on anything a test waits for.
const BOUND: Duration = Duration::from_secs(20);

fn tapped(log: &TapLog, args: &[&str]) -> StdioCommand {
    StdioCommand::new(TAP)
        .args(tap_args(&log.path, SERVER.as_ref(), args))
        .stderr(StderrMode::Null)
}

async fn connect(b: ClientBuilder, log: &TapLog, args: &[&str]) -> Client {
    tokio::time::timeout(BOUND, b.connect_stdio(tapped(log, args)))
        .await
        .expect("connect within the bound")
        .expect("connect")
}

fn with_handlers(b: ClientBuilder) -> ClientBuilder {
    b.on_elicitation(client_handler_fn(|p: Value| async move {
        assert!(p.get("message").is_some());
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }))
    .on_sampling(client_handler_fn(|_p| async move {
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"}))
    }))
    .on_roots(client_handler_fn(|_p| async move {
        Ok(json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}))
    }))
}

#[tokio::test]
async fn server_requests_answered_by_handlers_legacy() {
    let log = TapLog::new("s2c");
    let c = connect(
        with_handlers(Client::builder().mode(ConnectMode::Legacy)),
        &log,
        &[],
    )
    .await;
    for (kind, check) in [
        (
            "elicit",
            json!({"action": "accept", "content": {"name": "Ada"}}),
        ),
        ("sample", json!("sampled")),
        ("roots", json!("file:///tmp")),
        ("ping", json!({})),
    ] {
        let r = c
            .call_tool("ask", json!({"kind": kind}))
            .await
            .expect("ask");
        assert_ne!(r.is_error, Some(true), "{kind}: {:?}", r.content);
        let answer = r.structured_content.expect("sc")["answer"].clone();
        match kind {
            "sample" => assert_eq!(answer["content"]["text"], check),
            "roots" => assert_eq!(answer["roots"][0]["uri"], check),
            _ => assert_eq!(answer, check),
        }
    }
    c.close().await;
    // Capabilities were declared from the registered handlers.
    let init = &log.client_requests("initialize")[0];
    let caps = &init["params"]["capabilities"];
    assert!(
        caps["sampling"].is_object()
            && caps["roots"].is_object()
            && caps["elicitation"].is_object()
    );
    log.validate(SchemaEra::Legacy);
}

#[tokio::test]
async fn unregistered_server_request_gets_32601() {
    let log = TapLog::new("s2c-none");
    let c = connect(Client::builder().mode(ConnectMode::Legacy), &log, &[]).await;
    let r = c
        .call_tool("ask", json!({"kind": "unchecked"}))
        .await
        .expect("ask");
    assert_eq!(r.is_error, Some(true));
    c.close().await;
    let answered = log
        .messages()
        .into_iter()
        .any(|(d, m)| d == 'C' && m["error"]["code"] == -32601);
    assert!(answered, "the client answered roots/list with -32601");
    let init = &log.client_requests("initialize")[0];
    assert_eq!(init["params"]["capabilities"], json!({}));
    log.validate(SchemaEra::Legacy);
}

#[tokio::test]
async fn mrtr04_driver_fulfils_and_retries() {
    let log = TapLog::new("mrtr");
    let c = connect(with_handlers(Client::builder()), &log, &[]).await;
    assert!(c.is_modern());
    for kind in ["elicit", "sample", "roots"] {
        let r = c
            .call_tool("ask", json!({"kind": kind}))
            .await
            .expect("ask");
        let sc = r.structured_content.expect("sc");
        assert_eq!(sc["stateOk"], true, "requestState echoed unchanged");
        assert!(!sc["answer"].is_null());
    }
    c.close().await;
    let calls = log.client_requests("tools/call");
    assert_eq!(calls.len(), 6);
    let answers = log.messages();
    for pair in calls.chunks(2) {
        assert_ne!(pair[0]["id"], pair[1]["id"], "a new id per retry");
        // The server may seal its state: the client echoes whatever it was given, unchanged.
        let given = answers
            .iter()
            .find(|(d, m)| *d == 'S' && m["id"] == pair[0]["id"])
            .map(|(_, m)| m["result"]["requestState"].clone())
            .expect("the first answer");
        assert!(given.is_string());
        assert!(pair[0]["params"].get("inputResponses").is_none());
        assert!(
            pair[1]["params"]["inputResponses"]["q"].is_object(),
            "same key"
        );
        assert_eq!(
            pair[1]["params"]["requestState"], given,
            "state echoed byte for byte"
        );
        assert_eq!(
            pair[0]["params"]["arguments"],
            pair[1]["params"]["arguments"]
        );
    }
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn mrtr_without_handlers_returns_input_required() {
    let log = TapLog::new("mrtr-raw");
    // Declared (so the server may ask) but no handler registered: the caller drives by hand.
    let b = Client::builder().configure(|o| {
        o.extra_capabilities
            .insert("elicitation".into(), json!({"form": {}}));
    });
    let c = connect(b, &log, &[]).await;
    let e = c
        .call_tool("rounds", json!({"n": 1}))
        .await
        .expect_err("input required");
    let ClientError::InputRequired(raw) = e else {
        panic!("{e:?}")
    };
    assert_eq!(raw["resultType"], "input_required");
    assert!(raw["requestState"].is_string());
    let raw = c
        .request(
            "tools/call",
            json!({"name": "rounds", "arguments": {"n": 1}}),
        )
        .await
        .expect("raw");
    assert_eq!(raw["resultType"], "input_required");
    // Driving by hand.
    let done = c
        .request(
            "tools/call",
            json!({"name": "rounds", "arguments": {"n": 1}, "requestState": raw["requestState"], "inputResponses": {"r0": {"action": "accept", "content": {}}}}))
        .await
        .expect("done");
    assert_eq!(done["content"][0]["text"], "done after 1 rounds");
    c.close().await;
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn mrtr_round_limit() {
    let log = TapLog::new("mrtr-limit");
    let c = connect(with_handlers(Client::builder()), &log, &[]).await;
    let r = c
        .call_tool("rounds", json!({"n": 3}))
        .await
        .expect("3 rounds");
    assert_eq!(r.content[0]["text"], "done after 3 rounds");
    let e = c
        .call_tool("rounds", json!({"n": 50}))
        .await
        .expect_err("limit");
    assert!(
        matches!(&e, ClientError::Protocol(m) if m.contains("10 rounds")),
        "{e:?}"
    );
    assert_eq!(log.client_requests("tools/call").len(), 4 + 11);
    c.close().await;

    let c = connect(
        with_handlers(Client::builder()).configure(|o| o.max_mrtr_rounds = 2),
        &log,
        &[],
    )
    .await;
    let e = c
        .call_tool("rounds", json!({"n": 3}))
        .await
        .expect_err("limit 2");
    assert!(
        matches!(&e, ClientError::Protocol(m) if m.contains("2 rounds")),
        "{e:?}"
    );
    c.close().await;
}
