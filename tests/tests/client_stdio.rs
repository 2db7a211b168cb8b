//! The client against our own server over real stdio pipes, both eras (REQUIREMENTS 0.8,
//! DISC-02, META-01/02, PAGE-01, TOOL-06, CACHE-01…05, CAN-01/04, PROG-01, LC-01/02,
//! LC-06, LC-07, STDIO-01/04). Every exchanged message is validated against its era's schema
//! through the `tap` recorder.

use mcpcore::client::{
    CallOptions, Client, ClientBuilder, ClientError, ConnectMode, Era, StderrMode, StdioCommand,
};
use mcpcore::LoggingLevel;
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::Era as SchemaEra;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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

fn era_of(c: &Client) -> SchemaEra {
    if c.is_modern() {
        SchemaEra::Modern
    } else {
        SchemaEra::Legacy
    }
}

fn has_claim(m: &Value) -> bool {
    m.pointer("/params/_meta")
        .and_then(|x| x.get("io.modelcontextprotocol/protocolVersion"))
        .is_some()
}

#[tokio::test]
async fn disc02_auto_adopts_modern_with_readers() {
    let log = TapLog::new("auto");
    let c = connect(Client::builder(), &log, &[]).await;
    assert_eq!(c.era(), Some(Era::Modern));
    assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
    assert_eq!(
        c.server_implementation().expect("serverInfo").name,
        "client-test-server"
    );
    assert_eq!(
        c.instructions().as_deref(),
        Some("Test server for the client.")
    );
    assert!(c.server_capabilities()["tools"].is_object());
    assert!(c.server_info_raw().expect("raw")["supportedVersions"].is_array());
    c.call_tool("echo", json!({"text": "x"}))
        .await
        .expect("call");
    c.close().await;
    let msgs = log.messages();
    assert_eq!(
        msgs[0].1["method"], "server/discover",
        "the probe goes first"
    );
    assert!(log.client_requests("initialize").is_empty());
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn lc01_legacy_mode_handshake_and_readers() {
    let log = TapLog::new("legacy");
    let c = connect(Client::builder().mode(ConnectMode::Legacy), &log, &[]).await;
    assert_eq!(c.era(), Some(Era::Legacy));
    assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
    assert_eq!(
        c.server_implementation().expect("serverInfo").name,
        "client-test-server"
    );
    assert_eq!(
        c.instructions().as_deref(),
        Some("Test server for the client.")
    );
    c.ping().await.expect("ping");
    c.close().await;
    assert!(log.client_requests("server/discover").is_empty());
    let msgs = log.messages();
    assert_eq!(msgs[0].1["method"], "initialize");
    assert!(msgs
        .iter()
        .any(|(d, m)| *d == 'C' && m["method"] == "notifications/initialized"));
    assert!(
        msgs.iter().all(|(d, m)| *d != 'C' || !has_claim(m)),
        "no envelope on legacy"
    );
    log.validate(SchemaEra::Legacy);
}

#[tokio::test]
async fn legacy_version_pin_skips_the_probe() {
    let log = TapLog::new("pin");
    let c = connect(Client::builder().protocol_version("2025-06-18"), &log, &[]).await;
    assert_eq!(c.era(), Some(Era::Legacy));
    assert_eq!(c.protocol_version().as_deref(), Some("2025-06-18"));
    c.close().await;
    assert!(log.client_requests("server/discover").is_empty());
    log.validate(SchemaEra::Legacy);
}

#[tokio::test]
async fn modern_version_on_legacy_connect_fails_before_spawning() {
    let cmd = StdioCommand::new("/nonexistent/never-spawned");
    let e = Client::builder()
        .mode(ConnectMode::Legacy)
        .protocol_version("2026-07-28")
        .connect_stdio(cmd)
        .await
        .expect_err("argument error");
    assert!(matches!(e, ClientError::InvalidArgument(_)), "{e:?}");
    let e = Client::builder()
        .mode(ConnectMode::Modern)
        .protocol_version("2025-11-25")
        .connect_stdio(StdioCommand::new("/nonexistent/never-spawned"))
        .await
        .expect_err("argument error");
    assert!(matches!(e, ClientError::InvalidArgument(_)), "{e:?}");
}

#[tokio::test]
async fn meta01_envelope_on_every_request_never_on_notifications() {
    let log = TapLog::new("envelope");
    let b = Client::builder().configure(|o| o.log_level = Some(LoggingLevel::Warning));
    let c = connect(b, &log, &[]).await;
    let r = c
        .call_tool("echo", json!({"text": "x"}))
        .await
        .expect("call");
    let meta = &r.structured_content.expect("sc")["meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "mcpcore-client"
    );
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "warning");
    // A cancelled call sends notifications/cancelled, which never carries the envelope.
    let e = c
        .call_tool_with(
            "slow",
            json!({"ms": 10000}),
            CallOptions::new().timeout(Duration::from_millis(100)),
        )
        .await
        .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout));
    c.list_all_prompts().await.expect("prompts");
    c.close().await;
    let msgs = log.messages();
    let client_reqs: Vec<_> = msgs
        .iter()
        .filter(|(d, m)| *d == 'C' && m.get("id").is_some())
        .collect();
    assert!(client_reqs.len() >= 4);
    assert!(
        client_reqs.iter().all(|(_, m)| has_claim(m)),
        "every request is stamped"
    );
    let notes: Vec<_> = msgs
        .iter()
        .filter(|(d, m)| *d == 'C' && m.get("id").is_none())
        .collect();
    assert!(notes
        .iter()
        .any(|(_, m)| m["method"] == "notifications/cancelled"));
    assert!(
        notes.iter().all(|(_, m)| !has_claim(m)),
        "never on notifications"
    );
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn meta02_client_info_can_be_turned_off() {
    let log = TapLog::new("noinfo");
    let c = connect(
        Client::builder().configure(|o| o.send_client_info = false),
        &log,
        &[],
    )
    .await;
    let r = c.call_tool("echo", json!({})).await.expect("call");
    let meta = &r.structured_content.expect("sc")["meta"];
    assert!(meta.get("io.modelcontextprotocol/clientInfo").is_none());
    assert!(meta.get("io.modelcontextprotocol/logLevel").is_none());
    c.close().await;
    log.validate(SchemaEra::Modern);
}

async fn exercise_calls(c: &Client) {
    // PAGE-01: one page with a cursor, then the whole collection.
    let page = c.list_tools(None).await.expect("page");
    assert_eq!(page.items.len(), 2);
    let next = page.next_cursor.clone().expect("next cursor");
    let page2 = c.list_tools(Some(&next)).await.expect("page 2");
    assert_eq!(page2.items.len(), 2);
    assert_ne!(page.items[0].name, page2.items[0].name);
    let all = c.list_all_tools().await.expect("all");
    assert_eq!(all.len(), 12);
    // TOOL-06: structured output validated against the listed schema.
    let r = c
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("add");
    assert_eq!(r.structured_content.expect("sc")["sum"], 5.0);
    let p = c
        .get_prompt("greet", json!({"name": "Ada"}))
        .await
        .expect("prompt");
    assert_eq!(p.messages[0]["content"]["text"], "Hello Ada");
    let e = c.get_prompt("nope", json!({})).await.expect_err("unknown");
    assert_eq!(e.rpc_code(), Some(-32602));
    assert_eq!(c.list_all_prompts().await.expect("prompts").len(), 1);
    assert_eq!(c.list_all_resources().await.expect("res").len(), 1);
    assert!(c
        .list_all_resource_templates()
        .await
        .expect("tpl")
        .is_empty());
    let rr = c.read_resource("test://res").await.expect("read");
    assert_eq!(rr.contents[0]["text"], "content");
    let cr = c
        .complete(
            json!({"type": "ref/prompt", "name": "greet"}),
            "name",
            "al",
            None,
        )
        .await
        .expect("complete");
    assert_eq!(cr.values, vec!["alice", "alina"]);
    let custom = c
        .request("custom/echo", json!({"x": [1, 2]}))
        .await
        .expect("custom");
    assert_eq!(custom["echo"], json!({"x": [1, 2]}));
    let e = c
        .request("custom/missing", json!({}))
        .await
        .expect_err("missing");
    assert_eq!(e.rpc_code(), Some(-32601));
}

#[tokio::test]
async fn calls_legacy() {
    let log = TapLog::new("calls-legacy");
    let c = connect(
        Client::builder().mode(ConnectMode::Legacy),
        &log,
        &["--page-size", "2"],
    )
    .await;
    exercise_calls(&c).await;
    c.close().await;
    log.validate(SchemaEra::Legacy);
}

#[tokio::test]
async fn calls_modern() {
    let log = TapLog::new("calls-modern");
    let c = connect(Client::builder(), &log, &["--page-size", "2"]).await;
    assert!(c.is_modern());
    exercise_calls(&c).await;
    c.close().await;
    log.validate(SchemaEra::Modern);
}

type Seen = Arc<Mutex<Vec<(String, Value)>>>;

fn collector() -> (Seen, impl Fn(&str, &Value) + Send + Sync + 'static) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (seen, move |m: &str, p: &Value| {
        s.lock().expect("lock").push((m.to_owned(), p.clone()))
    })
}

async fn wait_for(seen: &Seen, method: &str) -> Value {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if let Some((_, p)) = seen.lock().expect("lock").iter().find(|(m, _)| m == method) {
            return p.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {method} within the bound"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn log03_set_level_legacy_and_per_request_level_modern() {
    let log = TapLog::new("log-legacy");
    let (seen, cb) = collector();
    let c = connect(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .on_notification(cb),
        &log,
        &[],
    )
    .await;
    c.set_log_level(LoggingLevel::Error)
        .await
        .expect("setLevel");
    let r = c
        .call_tool("log", json!({"level": "info", "message": "m"}))
        .await
        .expect("log");
    assert_eq!(r.content[0]["text"], "filtered");
    let r = c
        .call_tool("log", json!({"level": "error", "message": "boom"}))
        .await
        .expect("log");
    assert_eq!(r.content[0]["text"], "sent");
    assert_eq!(
        wait_for(&seen, "notifications/message").await["data"],
        "boom"
    );
    c.close().await;
    log.validate(SchemaEra::Legacy);

    let log = TapLog::new("log-modern");
    let (seen, cb) = collector();
    let c = connect(Client::builder().on_notification(cb), &log, &[]).await;
    let r = c
        .call_tool("log", json!({"level": "error", "message": "m"}))
        .await
        .expect("log");
    assert_eq!(r.content[0]["text"], "filtered", "no logLevel → no logs");
    let r = c
        .call_tool_with(
            "log",
            json!({"level": "error", "message": "per-request"}),
            CallOptions::new().log_level(LoggingLevel::Debug),
        )
        .await
        .expect("log");
    assert_eq!(r.content[0]["text"], "sent");
    assert_eq!(
        wait_for(&seen, "notifications/message").await["data"],
        "per-request"
    );
    c.set_log_level(LoggingLevel::Info)
        .await
        .expect("modern set level");
    let r = c
        .call_tool("log", json!({"level": "info", "message": "m2"}))
        .await
        .expect("log");
    assert_eq!(r.content[0]["text"], "sent");
    assert!(log.client_requests("logging/setLevel").is_empty());
    c.close().await;
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn cache01_hints_exposed_and_cache_honours_them() {
    let log = TapLog::new("cache-modern");
    let b = Client::builder().configure(|o| o.cache = true);
    let c = connect(b, &log, &["--ttl", "60000"]).await;
    let p = c.list_tools(None).await.expect("list");
    assert_eq!(p.cache.ttl_ms, Some(60000));
    assert_eq!(p.cache.cache_scope.as_deref(), Some("private"));
    c.list_tools(None).await.expect("cached");
    assert_eq!(
        log.client_requests("tools/list").len(),
        1,
        "second list served from cache"
    );
    c.list_tools_with(None, CallOptions::new().no_cache())
        .await
        .expect("bypass");
    assert_eq!(log.client_requests("tools/list").len(), 2);
    let r = c.read_resource("test://res").await.expect("read");
    assert_eq!(r.cache.ttl_ms, Some(60000));
    c.close().await;
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn cache05_list_changed_and_updated_invalidate() {
    let log = TapLog::new("cache-legacy");
    let (seen, cb) = collector();
    let b = Client::builder()
        .mode(ConnectMode::Legacy)
        .configure(|o| o.cache = true)
        .on_notification(cb);
    let c = connect(b, &log, &["--ttl", "60000"]).await;
    c.list_tools(None).await.expect("list");
    c.list_tools(None).await.expect("cached");
    c.read_resource("test://res").await.expect("read");
    c.read_resource("test://res").await.expect("cached read");
    assert_eq!(log.client_requests("tools/list").len(), 1);
    assert_eq!(log.client_requests("resources/read").len(), 1);
    c.subscribe_resource("test://res").await.expect("subscribe");
    c.call_tool("poke", json!({})).await.expect("poke");
    // SUB-07 / notifications reach the callback.
    wait_for(&seen, "notifications/tools/list_changed").await;
    assert_eq!(
        wait_for(&seen, "notifications/resources/updated").await["uri"],
        "test://res"
    );
    c.list_tools(None).await.expect("refetched");
    c.read_resource("test://res").await.expect("refetched read");
    assert_eq!(
        log.client_requests("tools/list").len(),
        2,
        "list_changed dropped the entry"
    );
    assert_eq!(
        log.client_requests("resources/read").len(),
        2,
        "updated dropped the entry"
    );
    c.unsubscribe_resource("test://res")
        .await
        .expect("unsubscribe");
    c.close().await;
}

async fn cancel_and_timeout(c: &Client, log: &TapLog) {
    // CAN-04: timeout → cancelled on the wire, caller gets Timeout.
    let e = tokio::time::timeout(
        BOUND,
        c.call_tool_with(
            "slow",
            json!({"ms": 30000}),
            CallOptions::new().timeout(Duration::from_millis(200)),
        ),
    )
    .await
    .expect("bounded")
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    // The caller's token: cancelled error at once, notifications/cancelled sent.
    let token = CancellationToken::new();
    let t2 = token.clone();
    let progressed = Arc::new(Mutex::new(Vec::new()));
    let p2 = progressed.clone();
    let opts = CallOptions::new()
        .cancel(token.clone())
        .on_progress(move |p, _t, _m| {
            p2.lock().expect("lock").push(p);
            t2.cancel();
        });
    let e = tokio::time::timeout(BOUND, c.call_tool_with("slow", json!({"ms": 20000}), opts))
        .await
        .expect("bounded")
        .expect_err("cancelled");
    assert!(matches!(e, ClientError::Cancelled), "{e:?}");
    assert_eq!(progressed.lock().expect("lock").len(), 1);
    // A pre-cancelled token never reaches the wire.
    let before = log.client_requests("tools/call").len();
    let e = c
        .call_tool_with("echo", json!({}), CallOptions::new().cancel(token))
        .await
        .expect_err("pre");
    assert!(matches!(e, ClientError::Cancelled));
    assert_eq!(log.client_requests("tools/call").len(), before);
    // The connection is still fine afterwards.
    c.call_tool("echo", json!({"text": "after"}))
        .await
        .expect("after");
    let cancels: Vec<_> = log
        .messages()
        .into_iter()
        .filter(|(d, m)| *d == 'C' && m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 2);
    assert!(cancels
        .iter()
        .all(|(_, m)| m["params"]["requestId"].is_number()));
}

#[tokio::test]
async fn can04_cancel_and_timeout_both_eras() {
    let log = TapLog::new("cancel-legacy");
    let c = connect(Client::builder().mode(ConnectMode::Legacy), &log, &[]).await;
    cancel_and_timeout(&c, &log).await;
    c.close().await;
    log.validate(SchemaEra::Legacy);
    let log = TapLog::new("cancel-modern");
    let c = connect(Client::builder(), &log, &[]).await;
    cancel_and_timeout(&c, &log).await;
    c.close().await;
    log.validate(SchemaEra::Modern);
}

#[tokio::test]
async fn prog01_progress_reaches_the_call_callback() {
    for mode in [ConnectMode::Legacy, ConnectMode::Auto] {
        let log = TapLog::new("progress");
        let c = connect(Client::builder().mode(mode), &log, &[]).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let opts =
            CallOptions::new().on_progress(move |p, t, m| s.lock().expect("lock").push((p, t, m)));
        let r = c
            .call_tool_with("slow", json!({"ms": 40}), opts)
            .await
            .expect("slow");
        assert_eq!(r.content[0]["text"], "slept 40 ms");
        let seen = seen.lock().expect("lock").clone();
        assert_eq!(
            seen.iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(seen[0].1, Some(4.0));
        assert_eq!(seen[0].2.as_deref(), Some("working"));
        c.close().await;
        log.validate(era_of(&c));
    }
}

#[tokio::test]
async fn stdio_spawn_with_env_cwd_and_stderr_capture() {
    let dir = std::env::temp_dir();
    let cmd = StdioCommand::new(SERVER)
        .arg("--print-cwd-env")
        .env("CLIENT_TEST_VAR", "xyz-42")
        .cwd(&dir)
        .stderr(StderrMode::Capture);
    let c = tokio::time::timeout(BOUND, Client::builder().connect_stdio(cmd))
        .await
        .expect("bounded")
        .expect("connect");
    let deadline = tokio::time::Instant::now() + BOUND;
    let text = loop {
        let t = c.captured_stderr().expect("capturing");
        if t.contains("env=") {
            break t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no stderr within the bound"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(text.contains("env=xyz-42"), "{text}");
    let canon = std::fs::canonicalize(&dir).expect("canon");
    assert!(
        text.contains(&format!("cwd={}", canon.display()))
            || text.contains(&format!("cwd={}", dir.display())),
        "{text}"
    );
    c.close().await;
}

#[tokio::test]
async fn lc06_close_then_calls_fail_cleanly() {
    let log = TapLog::new("close");
    let c = connect(Client::builder(), &log, &[]).await;
    c.close().await;
    assert!(c.is_closed());
    let e = c.call_tool("echo", json!({})).await.expect_err("closed");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
}

#[tokio::test]
async fn ver02_cached_discovery_skips_the_probe() {
    let log = TapLog::new("probe1");
    let c = connect(Client::builder(), &log, &[]).await;
    let raw = c.server_info_raw().expect("raw");
    c.close().await;
    let log2 = TapLog::new("probe2");
    let b = Client::builder().configure(|o| o.cached_discovery = Some(raw));
    let c = connect(b, &log2, &[]).await;
    assert!(c.is_modern());
    assert_eq!(
        c.server_implementation().expect("info").name,
        "client-test-server"
    );
    c.call_tool("echo", json!({})).await.expect("call");
    c.close().await;
    assert!(log2.client_requests("server/discover").is_empty());
    log2.validate(SchemaEra::Modern);
}

/// Listen over stdio (SUB-02, SUB-05): each subscription is acknowledged with what the server
/// honours and ends when closed (`notifications/cancelled`), again and again, the connection
/// staying usable; every message is valid 2026-07-28 JSON-RPC.
#[tokio::test]
async fn sub_listen_over_stdio_opens_and_closes_cleanly() {
    let log = TapLog::new("listen-stdio");
    let c = connect(Client::builder(), &log, &[]).await;
    assert!(c.is_modern());
    for _ in 0..5 {
        let sub = tokio::time::timeout(BOUND, c.listen(json!({"toolsListChanged": true})))
            .await
            .expect("bounded")
            .expect("stdio carries listen streams");
        assert!(sub.honored().is_object(), "{:?}", sub.honored());
        sub.close().await;
        c.call_tool("echo", json!({})).await.expect("still usable");
    }
    assert_eq!(log.client_requests("subscriptions/listen").len(), 5);
    c.close().await;
    log.validate(SchemaEra::Modern);
}
