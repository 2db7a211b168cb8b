//! Interop: our client against the official TypeScript SDK's servers, installed from npm in the
//! test setup (`mcpcore_tests::interop`: `@modelcontextprotocol/server` 2.x, which serves the
//! modern 2026-07-28 era and the legacy era from one factory, and `@modelcontextprotocol/sdk`
//! 1.x, legacy only). The fixture server is `tests/interop/ts-server.mjs`.
//!
//! Both eras over stdio and Streamable HTTP: auto negotiation (modern against 2.x; falling back
//! to `initialize` against 1.x, which does not know `server/discover`), explicit legacy mode,
//! tools with input/output schemas, a prompt, a resource, progress, log notifications, list
//! changes (modern `subscriptions/listen`; legacy notification callback over stdio and the GET stream),
//! elicitation (legacy server→client request; modern `input_required` driver), cancellation
//! (REQUIREMENTS 0.8, DISC-02, HTTP-18, LC-01, META-01, MRTR-01…05, PROG-01, CAN-01, LHTTP-02).
//! Over stdio every message of the conversation, both directions, is validated against its era's
//! schema (`tap`).
//!
//! Skips (prints why, passes) when Node/npm are absent or the registry is unreachable, unless
//! `MCPCORE_REQUIRE_INTEROP=1`, which makes that a failure (scripts/test.sh sets it).

use mcpcore::client::{
    client_handler_fn, CallOptions, Client, ClientBuilder, ClientError, ConnectMode, Era,
    HttpClientOptions, StderrMode, StdioCommand,
};
use mcpcore::LoggingLevel;
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::interop::{ts_env, TsEnv};
use mcpcore_tests::{validate_def, Era as SchemaEra};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

const TAP: &str = env!("CARGO_BIN_EXE_tap");
/// Bound on anything a test waits for (Node starts slower than our binaries).
const BOUND: Duration = Duration::from_secs(30);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(BOUND, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {BOUND:?}"),
    }
}

type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A builder with an elicitation handler (accepts with `{ok: true}`) and a notification
/// collector.
fn builder(seen: &Seen) -> ClientBuilder {
    let s = seen.clone();
    Client::builder()
        .on_elicitation(client_handler_fn(|_p: Value| async move {
            Ok(json!({"action": "accept", "content": {"ok": true}}))
        }))
        .on_notification(move |m, p| s.lock().expect("lock").push((m.to_owned(), p.clone())))
        .configure(|o| o.request_timeout = Some(BOUND))
}

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + BOUND;
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} within {BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What a server line supports beyond the common calls.
struct Expect {
    /// Name in `serverInfo`.
    name: &'static str,
    /// Elicitation can reach the client (not over stateless legacy HTTP, where a POSTed answer
    /// lands on a fresh server instance).
    elicitation: bool,
    /// Where the server reports that a cancelled `hang` saw its abort signal.
    cancel_seen: Option<Box<dyn Fn() -> bool + Send + Sync>>,
    /// Unrelated notifications can reach the client (not over stateless legacy HTTP, which
    /// has no GET stream).
    list_changed: bool,
}

/// The calls every combination must get right.
// Long by design: one scripted scenario, step by step, against one peer process; split up, its
// steps would lose the order they depend on.
async fn exercise(c: &Client, seen: &Seen, x: &Expect) {
    let modern = c.is_modern();
    assert_eq!(
        c.server_implementation().expect("serverInfo").name,
        x.name,
        "server implementation reader"
    );
    assert_eq!(c.instructions().as_deref(), Some("interop fixture"));
    assert!(c.server_capabilities()["tools"].is_object());
    if !modern {
        c.ping().await.expect("ping");
        c.set_log_level(LoggingLevel::Info)
            .await
            .expect("logging/setLevel");
    }
    let tools = bounded("tools/list", c.list_all_tools())
        .await
        .expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for n in ["add", "work", "hang", "confirm"] {
        assert!(names.contains(&n), "{n} listed: {names:?}");
    }
    let add = tools.iter().find(|t| t.name == "add").expect("add");
    assert!(add.output_schema.is_some(), "outputSchema exposed");
    // TOOL-06: the output schema is known now, and the TS server's answer conforms to it.
    let r = bounded("add", c.call_tool("add", json!({"a": 2, "b": 3})))
        .await
        .expect("add");
    assert_eq!(r.structured_content, Some(json!({"sum": 5})));
    assert_eq!(r.content[0]["text"], "5");
    // The TS server validates input against the schema: a tool-level error or -32602.
    match bounded("bad add", c.call_tool("add", json!({"a": "x"}))).await {
        Ok(r) => assert_eq!(r.is_error, Some(true), "{r:?}"),
        Err(e) => assert_eq!(e.rpc_code(), Some(-32602), "{e:?}"),
    }
    let p = bounded("prompts/get", c.get_prompt("greet", json!({"name": "Ada"})))
        .await
        .expect("prompts/get");
    assert_eq!(p.messages[0]["content"]["text"], "Hello Ada");
    let rr = bounded("resources/read", c.read_resource("demo://readme"))
        .await
        .expect("resources/read");
    assert_eq!(rr.contents[0]["text"], "readme text");
    // PROG-01 + logging: progress reaches the per-call callback, the log message the
    // notification callback (modern: asked for by the per-request log level).
    let progress = Arc::new(Mutex::new(Vec::new()));
    let pr = progress.clone();
    let opts = CallOptions::new()
        .on_progress(move |p, total, _| pr.lock().expect("lock").push((p, total)))
        .log_level(LoggingLevel::Info);
    let r = bounded("work", c.call_tool_with("work", json!({"steps": 3}), opts))
        .await
        .expect("work");
    assert_eq!(r.content[0]["text"], "did 3");
    assert_eq!(
        *progress.lock().expect("lock"),
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    let s = seen.clone();
    wait_until("the log notification", || {
        s.lock()
            .expect("lock")
            .iter()
            .any(|(m, p)| m == "notifications/message" && p["data"] == "working")
    })
    .await;
    // Elicitation: a server→client request (legacy) or an input_required round (modern), both
    // answered by the same registered handler.
    if x.elicitation {
        let r = bounded(
            "confirm",
            c.call_tool("confirm", json!({"question": "ok?"})),
        )
        .await
        .expect("confirm");
        let text = r.content[0]["text"].as_str().expect("text").to_owned();
        assert!(text.starts_with(r#"answer={"ok":true}"#), "{text}");
        if modern {
            assert!(
                text.ends_with("state=round-1"),
                "requestState echoed: {text}"
            );
        }
    }
    // Item 9/10: list changes reach a modern listen stream (acknowledged first, demultiplexed
    // by subscription id) or, legacy, the notification callback.
    if modern {
        let mut sub = bounded("listen", c.listen(json!({"toolsListChanged": true})))
            .await
            .expect("subscriptions/listen");
        assert_eq!(sub.honored()["toolsListChanged"], true);
        bounded("poke", c.call_tool("poke", json!({})))
            .await
            .expect("poke");
        let n = bounded("the listen notification", sub.next())
            .await
            .expect("a notification");
        assert_eq!(n["method"], "notifications/tools/list_changed");
        sub.close().await;
    } else if x.list_changed {
        // The GET stream opens asynchronously after the handshake: poke until it carries one.
        let s = seen.clone();
        let got = || {
            s.lock()
                .expect("lock")
                .iter()
                .any(|(m, _)| m == "notifications/tools/list_changed")
        };
        let deadline = tokio::time::Instant::now() + BOUND;
        while !got() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "list_changed within {BOUND:?}"
            );
            bounded("poke", c.call_tool("poke", json!({})))
                .await
                .expect("poke");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // CAN-01/04: a timed-out call ends at once with Timeout; the server hears about it
    // (notifications/cancelled, or the closed HTTP stream) and the connection keeps working.
    let e = bounded(
        "hang",
        c.call_tool_with(
            "hang",
            json!({}),
            CallOptions::new().timeout(Duration::from_millis(500)),
        ),
    )
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    if let Some(f) = &x.cancel_seen {
        wait_until("the server saw the cancellation", f).await;
    }
    let r = bounded(
        "add after cancel",
        c.call_tool("add", json!({"a": 1, "b": 1})),
    )
    .await
    .expect("add after the cancellation");
    assert_eq!(r.structured_content, Some(json!({"sum": 2})));
}

/// Validate every message of the conversation against `era`'s schema: what our client sent
/// (requests, notifications), and what the TS server sent (results of the method asked,
/// notifications, server requests). The legacy fallback's `server/discover` probe and its
/// answer are modern messages and are checked as such.
fn validate_conversation(log: &TapLog, era: SchemaEra) {
    let mut asked = std::collections::HashMap::new();
    for (dir, msg) in log.messages() {
        let probe = msg["method"] == "server/discover"
            || msg.get("id").is_some_and(|id| {
                asked.get(&id.to_string()) == Some(&"server/discover".to_owned())
            });
        let e = if probe { SchemaEra::Modern } else { era };
        if dir != 'C' {
            let method = msg
                .get("id")
                .and_then(|id| asked.get(&id.to_string()))
                .cloned();
            let method = if msg.get("method").is_some() {
                None
            } else {
                method
            };
            mcpcore_tests::validate_message(e, &msg, method.as_deref()).unwrap_or_else(|err| {
                panic!("the TS server sent an invalid message ({e:?}) {msg}: {err}")
            });
            continue;
        }
        if let (Some(m), Some(id)) = (msg["method"].as_str(), msg.get("id")) {
            asked.insert(id.to_string(), m.to_owned());
        }
        validate_def(e, "JSONRPCMessage", &msg)
            .unwrap_or_else(|err| panic!("invalid message ({e:?}) {msg}: {err}"));
        let def = match (msg.get("method"), msg.get("id")) {
            (Some(_), Some(_)) => "ClientRequest",
            (Some(_), None) => "ClientNotification",
            _ => continue,
        };
        validate_def(e, def, &msg).unwrap_or_else(|err| panic!("not a {def} ({e:?}) {msg}: {err}"));
    }
}

fn stdio_cmd(env: &TsEnv, log: &TapLog, sdk: &str) -> StdioCommand {
    let (node, mut args) = env.command(sdk, "stdio");
    let script = args.remove(0);
    let mut tapped = tap_args(&log.path, &node, &[&script]);
    tapped.extend(args);
    StdioCommand::new(TAP)
        .args(tapped)
        .stderr(StderrMode::Capture)
}

fn stderr_has(c: &Client, needle: &'static str) -> Box<dyn Fn() -> bool + Send + Sync> {
    let c = c.clone();
    Box::new(move || c.captured_stderr().is_some_and(|s| s.contains(needle)))
}

#[tokio::test]
async fn ts_v2_stdio_auto_adopts_modern() {
    let Some(env) = ts_env() else { return };
    let log = TapLog::new("ts-v2-auto");
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen).connect_stdio(stdio_cmd(env, &log, "v2")),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
    let x = Expect {
        name: "ts-interop-v2",
        elicitation: true,
        list_changed: true,
        cancel_seen: Some(stderr_has(&c, "hang: cancelled")),
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
    assert!(log.client_requests("initialize").is_empty(), "no handshake");
    validate_conversation(&log, SchemaEra::Modern);
}

#[tokio::test]
async fn ts_v2_stdio_legacy_mode() {
    let Some(env) = ts_env() else { return };
    let log = TapLog::new("ts-v2-legacy");
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen)
            .mode(ConnectMode::Legacy)
            .connect_stdio(stdio_cmd(env, &log, "v2")),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy));
    assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
    let x = Expect {
        name: "ts-interop-v2",
        elicitation: true,
        list_changed: true,
        cancel_seen: Some(stderr_has(&c, "hang: cancelled")),
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
    assert!(
        log.client_requests("server/discover").is_empty(),
        "no probe"
    );
    validate_conversation(&log, SchemaEra::Legacy);
}

#[tokio::test]
async fn ts_v1_stdio_auto_falls_back_to_legacy() {
    let Some(env) = ts_env() else { return };
    let log = TapLog::new("ts-v1-auto");
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen).connect_stdio(stdio_cmd(env, &log, "v1")),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy), "v1 does not speak 2026-07-28");
    assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
    let x = Expect {
        name: "ts-interop-v1",
        elicitation: true,
        list_changed: true,
        cancel_seen: Some(stderr_has(&c, "hang: cancelled")),
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
    let msgs = log.messages();
    assert_eq!(msgs[0].1["method"], "server/discover", "probe first");
    assert_eq!(
        log.client_requests("initialize").len(),
        1,
        "then the handshake"
    );
    validate_conversation(&log, SchemaEra::Legacy);
}

/// A TS server on Streamable HTTP (127.0.0.1, port 0), with its stderr collected.
struct HttpTs {
    _child: tokio::process::Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl HttpTs {
    async fn start(env: &TsEnv, sdk: &str) -> Self {
        let (node, args) = env.command(sdk, "http");
        let mut child = tokio::process::Command::new(node)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the TS HTTP server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = bounded("the TS server's port", lines.next_line())
            .await
            .expect("read")
            .expect("a PORT line");
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse::<u16>().ok())
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let buf = stderr.clone();
        let err = child.stderr.take().expect("stderr");
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                let mut b = buf.lock().expect("lock");
                b.push_str(&l);
                b.push('\n');
            }
        });
        Self {
            _child: child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            stderr,
        }
    }

    fn stderr_has(&self, needle: &'static str) -> Box<dyn Fn() -> bool + Send + Sync> {
        let s = self.stderr.clone();
        Box::new(move || s.lock().expect("lock").contains(needle))
    }
}

#[tokio::test]
async fn ts_v2_http_auto_adopts_modern() {
    let Some(env) = ts_env() else { return };
    let srv = HttpTs::start(env, "v2").await;
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen).connect_http(&srv.url, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
    // HTTP-08: closing the request's stream is the cancellation.
    let x = Expect {
        name: "ts-interop-v2",
        elicitation: true,
        list_changed: true,
        cancel_seen: Some(srv.stderr_has("hang: cancelled")),
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
}

#[tokio::test]
async fn ts_v2_http_legacy_mode_stateless() {
    let Some(env) = ts_env() else { return };
    let srv = HttpTs::start(env, "v2").await;
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen)
            .mode(ConnectMode::Legacy)
            .connect_http(&srv.url, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy));
    assert_eq!(c.protocol_version().as_deref(), Some("2025-11-25"));
    // The 2.x legacy leg is stateless: each POST meets a fresh instance, so neither a POSTed
    // elicitation answer nor a POSTed cancellation can reach the instance that asked.
    let x = Expect {
        name: "ts-interop-v2",
        elicitation: false,
        list_changed: false,
        cancel_seen: None,
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
}

#[tokio::test]
async fn ts_v1_http_auto_falls_back_to_a_legacy_session() {
    let Some(env) = ts_env() else { return };
    let srv = HttpTs::start(env, "v1").await;
    let seen = Seen::default();
    let c = bounded(
        "connect",
        builder(&seen).connect_http(&srv.url, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    assert_eq!(c.era(), Some(Era::Legacy), "the probe failed; initialize");
    let x = Expect {
        name: "ts-interop-v1",
        elicitation: true,
        list_changed: true,
        cancel_seen: Some(srv.stderr_has("hang: cancelled")),
    };
    exercise(&c, &seen, &x).await;
    c.close().await;
}
