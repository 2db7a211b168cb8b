//! The C embedding half of the C suite: the C programs that mount MCP in a host of their own,
//! compiled against `include/mcpcore.h`, linked to `libmcpcore.a` and run plain, under
//! ASan+UBSan, LeakSanitizer and valgrind (a missing tool, libmicrohttpd included, fails):
//! - `examples/c/mhd_server.c`: the endpoint in libmicrohttpd, driven over real HTTP on
//!   127.0.0.1 by mcpcore's client and raw requests in both eras, its refusals compared with the
//!   built-in listener's, and a client that leaves mid-SSE cancelling the handler (HTTP-08);
//! - `examples/c/socketpair_server.c`: a connection over a socketpair, its answers schema-checked;
//! - `tests/c/in_memory.c`: the in-memory C client in both eras.

mod support;

use mcpcore::client::{Client, ConnectMode, Era as ClientEra, HttpClientOptions};
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, modern_headers, raw_request, HttpReply, McpHttp};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::{build, build_linked, command, variants, Variant};

const EXIT_WAIT: Duration = Duration::from_secs(60);
/// The first answer may take long under valgrind (it reads the library's debug info first).
const FIRST_WAIT: Duration = Duration::from_secs(180);
/// One answer on a loaded machine under valgrind.
const WAIT: Duration = Duration::from_secs(60);

type Headers = Vec<(String, String)>;

/// Status, media type and body of a reply read to the end.
async fn settled(mut r: HttpReply) -> (u16, String, String) {
    let body = tokio::time::timeout(WAIT, r.body())
        .await
        .expect("body in time");
    (
        r.status,
        r.content_type().to_owned(),
        String::from_utf8_lossy(&body).into_owned(),
    )
}

async fn post(
    addr: SocketAddr,
    headers: &[(String, String)],
    body: &[u8],
) -> (u16, String, String) {
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    settled(raw_request(addr, "POST", "/mcp", &h, body).await).await
}

async fn health(addr: SocketAddr) -> Value {
    let (status, _, body) = settled(raw_request(addr, "GET", "/health", &[], b"").await).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("health is JSON")
}

/// mcpcore's client through the mounted endpoint, in each mode.
async fn rust_client_calls(addr: SocketAddr, v: Variant) {
    let url = format!("http://{addr}/mcp");
    for (mode, era) in [
        (ConnectMode::Auto, ClientEra::Modern),
        (ConnectMode::Legacy, ClientEra::Legacy),
    ] {
        let c = tokio::time::timeout(
            WAIT,
            Client::builder()
                .mode(mode)
                .connect_http(&url, HttpClientOptions::default()),
        )
        .await
        .expect("connect in time")
        .unwrap_or_else(|e| panic!("{v:?} {mode:?}: {e}"));
        assert_eq!(c.era(), Some(era), "{mode:?}");
        let r = tokio::time::timeout(WAIT, c.call_tool("echo", json!({"text": "via mhd"})))
            .await
            .expect("call in time")
            .unwrap_or_else(|e| panic!("{v:?} {mode:?}: {e}"));
        assert_eq!(r.content[0]["text"], "via mhd", "{mode:?}");
        tokio::time::timeout(WAIT, c.close())
            .await
            .expect("close in time");
    }
}

/// Schema-validated raw exchanges: a legacy session and a modern stateless request.
async fn raw_calls(addr: SocketAddr, v: Variant) {
    let mut c = McpHttp::new(addr);
    let init = tokio::time::timeout(WAIT, c.initialize())
        .await
        .expect("initialize in time");
    assert_eq!(
        init.last()["result"]["serverInfo"]["name"],
        "c-mhd",
        "{v:?}"
    );
    let ex = c
        .legacy(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "legacy"}}),
        )
        .await;
    assert_eq!(ex.text(), "legacy", "{v:?}");
    let ex = c
        .modern(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "modern"}}),
        )
        .await;
    assert_eq!(ex.text(), "modern", "{:?}", ex.messages);
    assert_eq!(ex.last()["result"]["resultType"], "complete");
    assert_eq!(c.delete().await, 200, "{v:?}: the legacy session ends");
}

/// Bad requests get the same status, media type and body through libmicrohttpd as from the
/// built-in listener.
async fn refusals_match_the_built_in_listener(mhd: SocketAddr, builtin: SocketAddr) {
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": mcpcore_tests::stdio::envelope(json!({}))}})
    .to_string();
    let modern = modern_headers("tools/list", None);
    let swap = |name: &str, value: &str| -> Headers {
        let mut h: Headers = modern.iter().filter(|(k, _)| k != name).cloned().collect();
        h.push((name.to_owned(), value.to_owned()));
        h
    };
    let html = swap("Accept", "text/html");
    let text = swap("Content-Type", "text/plain");
    let foreign = swap("Origin", "http://evil.example");
    let big = vec![b' '; 4 * 1024 * 1024 + 16];
    let cases: [(&str, &Headers, &[u8], u16); 5] = [
        ("malformed JSON", &modern, b"{\"jsonrpc\": \"2.0\", ", 400),
        ("Accept: text/html", &html, list.as_bytes(), 406),
        ("text/plain", &text, list.as_bytes(), 415),
        ("foreign Origin", &foreign, list.as_bytes(), 403),
        ("body too large", &modern, &big, 413),
    ];
    for (what, headers, body, status) in cases {
        let mounted = post(mhd, headers, body).await;
        let own = post(builtin, headers, body).await;
        assert_eq!(
            mounted, own,
            "{what}: libmicrohttpd and the built-in listener differ"
        );
        assert_eq!(mounted.0, status, "{what}: {mounted:?}");
    }
    let parse = post(mhd, &modern, b"{\"jsonrpc\": \"2.0\", ").await;
    let v: Value = serde_json::from_str(&parse.2).expect("a JSON-RPC error");
    assert_eq!(v["error"]["code"], -32700, "{parse:?}");
}

/// A modern `wait` call streams its progress over SSE; the client hangs up mid-stream; the
/// example's completion callback cancels the exchange and the handler sees its request
/// cancelled (its count on /health goes up).
async fn a_disconnect_mid_sse_cancels_the_handler(addr: SocketAddr, v: Variant) {
    let before = health(addr).await["cancelled"].as_i64().expect("count");
    let mut meta = mcpcore_tests::stdio::envelope(json!({}));
    meta["progressToken"] = json!("p1");
    let msg = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "wait", "arguments": {}, "_meta": meta}});
    let headers = modern_headers("tools/call", Some("wait"));
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut r = raw_request(addr, "POST", "/mcp", &h, msg.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{v:?}");
    assert!(r.content_type().starts_with("text/event-stream"), "{v:?}");
    let event = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("the progress event in time")
        .expect("an event");
    let progress: Value = serde_json::from_str(&event.data).expect("JSON");
    check(Era::Modern, &progress, None);
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    r.close();
    let deadline = Instant::now() + WAIT;
    loop {
        let now = health(addr).await["cancelled"].as_i64().expect("count");
        if now == before + 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{v:?}: the handler was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The libmicrohttpd example: its own route, the endpoint in both eras (mcpcore's client and
/// schema-checked raw requests), refusals equal to the built-in listener's, and cancellation
/// on disconnect.
#[tokio::test]
async fn c_example_mhd_server() {
    let _serial = support::one_at_a_time().await;
    let builtin = Fixture::start().await;
    for v in variants() {
        let exe = build_linked(
            "mhd_server",
            &["examples/c/mhd_server.c"],
            v,
            &["-lmicrohttpd"],
        );
        let server = support::HttpExample::spawn(&exe, v, &[], FIRST_WAIT).await;
        let addr = server.addr();
        assert_eq!(health(addr).await["status"], "ok", "{v:?}");
        let (status, _, _) = settled(raw_request(addr, "GET", "/elsewhere", &[], b"").await).await;
        assert_eq!(
            status, 404,
            "{v:?}: the application routes only /mcp to the endpoint"
        );
        raw_calls(addr, v).await;
        rust_client_calls(addr, v).await;
        refusals_match_the_built_in_listener(addr, builtin.addr()).await;
        a_disconnect_mid_sse_cancels_the_handler(addr, v).await;
        server.stop(&exe, v, EXIT_WAIT).await;
    }
}

/// Run a self-contained C program to the end; its stdout.
async fn run_to_end(exe: &std::path::Path, v: Variant) -> String {
    support::clear_reports(exe);
    let (prog, args) = command(exe, v);
    let child = tokio::process::Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the C program");
    let out = tokio::time::timeout(FIRST_WAIT + EXIT_WAIT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{v:?}: {} did not finish in time", exe.display()))
        .expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{v:?}: {} failed ({}):\n{stdout}\n{}\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr),
        support::reports(exe)
    );
    stdout
}

/// The socketpair example: a legacy `initialize` + `tools/call` on one connection and a modern
/// `tools/call` on another, every answer valid for its era.
#[tokio::test]
async fn c_example_socketpair_server() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("socketpair_server", &["examples/c/socketpair_server.c"], v);
        let out = run_to_end(&exe, v).await;
        assert!(out.contains("socketpair_server: ok"), "{v:?}: {out}");
        let answers: Vec<Value> = out
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        assert_eq!(answers.len(), 3, "{out}");
        check(Era::Legacy, &answers[0], Some("initialize"));
        check(Era::Legacy, &answers[1], Some("tools/call"));
        check(Era::Modern, &answers[2], Some("tools/call"));
        assert_eq!(answers[1]["result"]["content"][0]["text"], "echo:legacy");
        assert_eq!(answers[2]["result"]["content"][0]["text"], "echo:modern");
        assert_eq!(answers[2]["result"]["resultType"], "complete");
    }
}

/// The in-memory C client (tests/c/in_memory.c) on a C server in the same process, in each
/// mode, with its refusals.
#[tokio::test]
async fn c_in_memory_client() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("in_memory", &["tests/c/in_memory.c"], v);
        let out = run_to_end(&exe, v).await;
        assert!(
            out.contains("legacy: 2025-11-25 modern=0 echo:legacy"),
            "{v:?}: {out}"
        );
        assert!(
            out.contains("modern: 2026-07-28 modern=1 echo:modern"),
            "{v:?}: {out}"
        );
        assert!(
            out.contains("auto: 2026-07-28 modern=1 echo:auto"),
            "{v:?}: {out}"
        );
        assert!(out.contains("in_memory: ok"), "{v:?}: {out}");
    }
}
