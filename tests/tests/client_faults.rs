//! The client against scripted, misbehaving stdio servers (REQUIREMENTS DISC-02, DISC-03, LC-02,
//! STDIO-01, JR-04, TOOL-06, PAGE-01, SUB-02/03, CAN-01). Every case ends in a clear error or the
//! right fallback within a bound, never a hang.

use mcpcore::client::{
    CallOptions, Client, ClientBuilder, ClientError, ConnectMode, Era, StderrMode, StdioCommand,
    DEFAULT_PROBE_TIMEOUT,
};
use serde_json::{json, Value};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-server");
const BOUND: Duration = Duration::from_secs(20);

fn fake(args: &[&str]) -> StdioCommand {
    StdioCommand::new(FAKE)
        .args(args.iter().copied())
        .stderr(StderrMode::Null)
}

async fn try_connect(b: ClientBuilder, args: &[&str]) -> Result<Client, ClientError> {
    tokio::time::timeout(BOUND, b.connect_stdio(fake(args)))
        .await
        .expect("connect must end within the bound")
}

async fn connect(b: ClientBuilder, args: &[&str]) -> Client {
    try_connect(b, args).await.expect("connect")
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

#[tokio::test]
async fn disc02_falls_back_on_any_discovery_failure() {
    for d in [
        "-32601",
        "-32602",
        "-32600",
        "-32000",
        "-32603",
        "12345",
        "malformed",
        "legacy-versions",
    ] {
        let arg = format!("discover={d}");
        let c = connect(Client::builder(), &[&arg]).await;
        assert_eq!(c.era(), Some(Era::Legacy), "discover={d}");
        assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
        assert_eq!(c.server_implementation().expect("info").name, "fake");
        let r = bounded(c.call_tool("echo", json!({}))).await.expect("call");
        assert_eq!(r.content[0]["text"], "ok");
        c.close().await;
    }
}

#[tokio::test]
async fn disc02_silent_probe_is_bounded_then_falls_back() {
    assert_eq!(DEFAULT_PROBE_TIMEOUT, Duration::from_secs(5));
    let b = Client::builder().configure(|o| o.probe_timeout = Duration::from_millis(300));
    let c = connect(b, &["discover=silent"]).await;
    assert_eq!(c.era(), Some(Era::Legacy));
    c.close().await;
    // A request timeout, when set, bounds the probe instead.
    let b = Client::builder().configure(|o| o.request_timeout = Some(Duration::from_millis(300)));
    let c = connect(b, &["discover=silent"]).await;
    assert_eq!(c.era(), Some(Era::Legacy));
    c.close().await;
}

#[tokio::test]
async fn modern_mode_never_falls_back() {
    let e = try_connect(
        Client::builder().mode(ConnectMode::Modern),
        &["discover=-32601"],
    )
    .await
    .expect_err("modern");
    assert_eq!(e.rpc_code(), Some(-32601));
    let e = try_connect(
        Client::builder().mode(ConnectMode::Modern),
        &["discover=legacy-versions"],
    )
    .await
    .expect_err("no mutual");
    assert!(matches!(e, ClientError::Protocol(_)), "{e:?}");
    // An explicit modern version in auto mode propagates the probe failure.
    let e = try_connect(
        Client::builder().protocol_version("2026-07-28"),
        &["discover=-32602"],
    )
    .await
    .expect_err("pinned");
    assert_eq!(e.rpc_code(), Some(-32602));
}

/// DISC-03 / HTTP-18: `initialize` refused with a modern error (-32022 naming versions), or not
/// known at all (-32601, which no legacy server answers), is modern evidence: one re-probe.
#[tokio::test]
async fn disc03_initialize_refused_as_modern_reprobes_once() {
    for (init, code) in [("init-32022", -32022), ("init-32601", -32601)] {
        let c = connect(Client::builder(), &["discover=fail-once", init]).await;
        assert_eq!(c.era(), Some(Era::Modern), "{init}");
        assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
        c.close().await;
        // Without a working discovery the refusal is the answer.
        let e = try_connect(Client::builder(), &["discover=-32601", init])
            .await
            .expect_err("no era works");
        assert_eq!(e.rpc_code(), Some(code), "{init}: {e:?}");
    }
}

#[tokio::test]
async fn disc02_garbage_or_an_unaddressed_error_answering_the_probe_falls_back() {
    for d in ["garbage", "null-id"] {
        let arg = format!("discover={d}");
        let b = Client::builder().configure(|o| o.probe_timeout = Duration::from_millis(300));
        let c = connect(b, &[&arg]).await;
        assert_eq!(c.era(), Some(Era::Legacy), "discover={d}");
        let r = bounded(c.call_tool("echo", json!({}))).await.expect("call");
        assert_eq!(r.content[0]["text"], "ok");
        c.close().await;
    }
}

#[tokio::test]
async fn over_limit_frame_answering_the_probe_is_a_clear_error() {
    let e = try_connect(Client::builder(), &["discover=oversize"])
        .await
        .expect_err("the transport closed");
    assert!(
        matches!(&e, ClientError::Closed(m) if m.contains("exceeded")),
        "{e:?}"
    );
}

#[tokio::test]
async fn server_dying_during_the_probe_is_a_clear_error() {
    let e = try_connect(Client::builder(), &["discover=die"])
        .await
        .expect_err("died");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
}

#[tokio::test]
async fn lc02_modern_initialize_result_is_rejected() {
    let e = try_connect(
        Client::builder().mode(ConnectMode::Legacy),
        &["init=2026-07-28"],
    )
    .await
    .expect_err("rejected");
    assert!(
        matches!(&e, ClientError::Protocol(m) if m.contains("modern")),
        "{e:?}"
    );
    let e = try_connect(
        Client::builder().mode(ConnectMode::Legacy),
        &["init=1999-01-01"],
    )
    .await
    .expect_err("unknown");
    assert!(matches!(e, ClientError::Protocol(_)), "{e:?}");
}

#[tokio::test]
async fn lc02_counter_offer_is_adopted() {
    let c = connect(
        Client::builder().mode(ConnectMode::Legacy),
        &["init=2025-03-26"],
    )
    .await;
    assert_eq!(c.protocol_version().as_deref(), Some("2025-03-26"));
    assert_eq!(
        c.negotiated().expect("negotiated").raw["protocolVersion"],
        "2025-03-26"
    );
    c.close().await;
}

#[tokio::test]
async fn server_dies_mid_call() {
    let c = connect(Client::builder(), &[]).await;
    let e = bounded(c.call_tool("die", json!({})))
        .await
        .expect_err("died");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    let e = bounded(c.call_tool("echo", json!({})))
        .await
        .expect_err("still closed");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    assert!(c.is_closed());
    c.close().await;
}

#[tokio::test]
async fn stdio01_garbage_and_non_object_frames_are_skipped() {
    let c = connect(Client::builder(), &[]).await;
    let r = bounded(c.call_tool("garbage", json!({})))
        .await
        .expect("survived");
    assert_eq!(r.content[0]["text"], "survived");
    let r = bounded(c.call_tool("echo", json!({})))
        .await
        .expect("still works");
    assert_eq!(r.content[0]["text"], "ok");
    c.close().await;
}

#[tokio::test]
async fn over_limit_frame_closes_the_transport() {
    let b = Client::builder().configure(|o| o.max_message_bytes = 64 * 1024);
    let c = connect(b, &["oversize=100000"]).await;
    let e = bounded(c.call_tool("oversize", json!({})))
        .await
        .expect_err("too large");
    assert!(
        matches!(&e, ClientError::Closed(m) if m.contains("exceeded")),
        "{e:?}"
    );
    let e = bounded(c.call_tool("echo", json!({})))
        .await
        .expect_err("closed");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    c.close().await;
}

#[tokio::test]
async fn default_cap_is_4_mib() {
    let c = connect(Client::builder(), &["oversize=4200000"]).await;
    let e = bounded(c.call_tool("oversize", json!({})))
        .await
        .expect_err("too large");
    assert!(
        matches!(&e, ClientError::Closed(m) if m.contains("4194304")),
        "{e:?}"
    );
    c.close().await;
    let c = connect(Client::builder(), &["oversize=4000000"]).await;
    bounded(c.call_tool("oversize", json!({})))
        .await
        .expect("under the cap");
    c.close().await;
}

#[tokio::test]
async fn tool06_structured_content_validated_against_output_schema() {
    let c = connect(Client::builder(), &[]).await;
    // Unknown schema: nothing to validate against.
    bounded(c.call_tool("typed", json!({})))
        .await
        .expect("not yet known");
    c.list_all_tools().await.expect("list");
    let e = bounded(c.call_tool("typed", json!({})))
        .await
        .expect_err("invalid");
    assert!(
        matches!(&e, ClientError::OutputValidation(m) if m.contains("/n")),
        "{e:?}"
    );
    c.close().await;
}

#[tokio::test]
async fn jr04_unknown_result_type_is_an_invalid_response() {
    let c = connect(Client::builder(), &[]).await;
    let e = bounded(c.call_tool("weird", json!({})))
        .await
        .expect_err("weird");
    assert!(matches!(e, ClientError::Protocol(_)), "{e:?}");
    c.close().await;
}

#[tokio::test]
async fn page01_cursor_cycle_is_detected() {
    let c = connect(Client::builder(), &["cycle"]).await;
    let all = bounded(c.list_all_tools()).await.expect("all");
    let names: Vec<_> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["t1", "t2", "t3"]);
    c.close().await;
}

#[tokio::test]
async fn modern_top_level_server_info_fallback_and_listen() {
    let c = connect(Client::builder(), &["discover=ok"]).await;
    assert_eq!(c.era(), Some(Era::Modern));
    assert_eq!(
        c.server_implementation().expect("fallback").name,
        "fake-top"
    );
    // SUB-02/03: acknowledgement first, then only this subscription's notifications.
    let mut sub = bounded(c.listen(json!({"toolsListChanged": true, "promptsListChanged": true})))
        .await
        .expect("listen");
    assert_eq!(sub.honored(), &json!({"toolsListChanged": true}));
    let n = bounded(sub.next()).await.expect("notification");
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let id = sub.id().to_value();
    sub.close().await;
    // The close sent notifications/cancelled for the listen id; notifications never carry the envelope.
    c.notify("notifications/custom", Some(json!({"x": 1})))
        .await
        .expect("notify");
    let r = bounded(c.request("debug/notifications", json!({})))
        .await
        .expect("debug");
    let notes = r["notifications"].as_array().expect("list").clone();
    assert!(notes
        .iter()
        .any(|n| n["method"] == "notifications/cancelled" && n["params"]["requestId"] == id));
    assert!(notes.iter().any(|n| n["method"] == "notifications/custom"));
    for n in &notes {
        assert!(
            n.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_none(),
            "{n}"
        );
    }
    c.close().await;
}

#[tokio::test]
async fn can01_late_response_is_ignored() {
    let c = connect(Client::builder(), &["discover=ok"]).await;
    let e = bounded(c.call_tool_with(
        "late",
        json!({}),
        CallOptions::new().timeout(Duration::from_millis(100)),
    ))
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout));
    let r = bounded(c.request("tools/call", json!({"name": "echo", "arguments": {"k": 1}})))
        .await
        .expect("next call");
    assert_eq!(
        r["structuredContent"]["params"]["arguments"],
        json!({"k": 1}),
        "not the late answer"
    );
    let notes = bounded(c.request("debug/notifications", json!({})))
        .await
        .expect("debug");
    let cancelled: Vec<&Value> = notes["notifications"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|n| n["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0]["params"]["reason"], "timeout");
    c.close().await;
}
