//! The C suite: C programs in `tests/c/` and `examples/c/` compiled with
//! `-std=c11 -Wall -Wextra -Werror` against `include/mcpcore.h`, linked to `libmcpcore.a`, and
//! run plain, under ASan+UBSan, under LeakSanitizer alone and under valgrind (a missing tool fails
//! the suite; `MCP_C_SUITE_PLAIN_ONLY=1` runs the plain variant alone). Server programs are
//! driven over real stdio pipes; every message they send is validated against the official
//! schema of its era.

mod support;

use mcpcore_tests::{stdio::envelope, Era, StdioPeer};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use support::{build, command, variants, Variant};

const EXIT_WAIT: Duration = Duration::from_secs(60);
/// The first answer may take long under valgrind (it reads the library's debug info first).
const FIRST_WAIT: Duration = Duration::from_secs(180);
/// A self-checking program runs start to end on its own (valgrind's start included).
const SELF_CHECK_WAIT: Duration = Duration::from_secs(300);

/// Send a request and wait patiently for its response (used for the first request of a run).
async fn first_request(peer: &mut StdioPeer, method: &str, params: Value) -> Value {
    let id = json!(1);
    peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    loop {
        let m = peer
            .try_recv(FIRST_WAIT)
            .await
            .expect("the C server answered its first request in time");
        if m["id"] == id && m.get("method").is_none() {
            return m;
        }
    }
}

/// A legacy handshake, patient for the first answer.
async fn initialize(peer: &mut StdioPeer, caps: Value) -> Value {
    let r = first_request(
        peer,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": caps,
            "clientInfo": {"name": "c-suite", "version": "1"}}),
    )
    .await;
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    r
}

fn spawn(exe: &std::path::Path, variant: Variant) -> StdioPeer {
    support::clear_reports(exe);
    let (prog, args) = command(exe, variant);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    StdioPeer::spawn(&prog, &args)
}

async fn finish(mut peer: StdioPeer, exe: &std::path::Path, variant: Variant) {
    peer.close_stdin();
    let status = peer
        .wait_exit(EXIT_WAIT)
        .await
        .unwrap_or_else(|| panic!("{variant:?}: the C server did not exit after EOF"));
    assert!(
        status.success(),
        "{variant:?}: the C server exited with {status}\n{}",
        support::reports(exe)
    );
}

/// The text of a tool result's first content block.
fn text(resp: &Value) -> String {
    resp["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {resp}"))
        .to_owned()
}

/// Receive until a message satisfies `pred`; returns it and what came before.
async fn recv_until(peer: &mut StdioPeer, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
    let mut before = Vec::new();
    loop {
        let m = peer.recv().await;
        if pred(&m) {
            return (m, before);
        }
        before.push(m);
    }
}

async fn call(peer: &mut StdioPeer, name: &str, args: Value) -> Value {
    peer.request("tools/call", json!({"name": name, "arguments": args}))
        .await
}

#[test]
fn header_compiles_as_c11_and_cxx17_and_twice_included() {
    let dir = support::profile_dir().join("c-suite");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let src = dir.join("header_twice.c");
    std::fs::write(
        &src,
        concat!(
            "#include \"mcpcore.h\"\n#include \"mcpcore.h\"\n",
            // The header's macros must expand to valid code in both languages.
            "static const mcp_status_t all[MCP_STATUS_COUNT] = MCP_STATUS_ALL;\n",
            "int main(void) { mcp_status_t s = MCP_STATUS_OK;\n",
            "  return (int)s + (int)all[MCP_STATUS_COUNT - 1] - (int)MCP_STATUS_INPUT_REQUIRED; }\n",
        ),
    )
    .expect("write");
    let include = support::root().join("include");
    for (compiler, std_flag, lang) in [
        (support::cc(), "-std=c11", "c"),
        (support::cxx(), "-std=c++17", "c++"),
    ] {
        let o = std::process::Command::new(&compiler)
            .args([
                std_flag,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-x",
                lang,
                "-c",
            ])
            .arg("-I")
            .arg(&include)
            .arg(&src)
            .arg("-o")
            .arg(dir.join(format!("header_twice_{lang}.o")))
            .output()
            .expect("run compiler");
        assert!(
            o.status.success(),
            "{compiler} {std_flag}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Build `src` as `name` and run it in every variant: a self-checking program that exits 0 and
/// prints `"{name}: ok"`.
async fn self_checking(name: &str, src: &str) {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build(name, &[src], v);
        support::clear_reports(&exe);
        let (prog, args) = command(&exe, v);
        let child = tokio::process::Command::new(prog)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
        let out = tokio::time::timeout(SELF_CHECK_WAIT, child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("{src} finished in time"))
            .expect("wait");
        assert!(
            out.status.success(),
            "{v:?}: {src} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            support::reports(&exe)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{name}: ok")));
    }
}

/// Every error status path that needs no peer (tests/c/errors.c).
#[tokio::test]
async fn c_error_paths() {
    self_checking("errors", "tests/c/errors.c").await;
}

/// Changing a server while it serves (tests/c/dynamic.c): a `"dynamic": true` server served on
/// HTTP gains, loses, disables, enables and replaces tools at run time (one from inside a
/// handler) and a prompt, as its own C client sees in both eras; refusals are precise, and
/// every user-data finalizer runs exactly once (replaced, removed, refused, or at free).
#[tokio::test]
async fn c_dynamic_registry() {
    self_checking("dynamic", "tests/c/dynamic.c").await;
}

/// Legacy era over stdio with C handlers: sync and other-thread answers, progress and logs,
/// handler errors, abandoned responders, invalid result JSON, WOULD_DEADLOCK inside a callback,
/// server→client requests (callback and blocking twins), cancellation, prompts, resources,
/// templates, completion and a custom method. The server exits 0 only if every user-data
/// finalizer ran exactly once.
// Long by design: one scripted scenario, step by step, against one peer process; split up, its
// steps would lose the order they depend on.
#[tokio::test]
async fn c_server_legacy_round_trip() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("server", &["tests/c/server.c"], v);
        let mut p = spawn(&exe, v);
        let caps = json!({"sampling": {}, "roots": {}, "elicitation": {}});
        let init = initialize(&mut p, caps).await;
        let r = &init["result"];
        assert_eq!(r["serverInfo"]["name"], "c-test-server", "{v:?}");
        assert_eq!(r["serverInfo"]["title"], "C test server");
        assert_eq!(r["instructions"], "Test server written in C.");
        assert!(r["capabilities"]["completions"].is_object());

        let tools = p.request("tools/list", json!({})).await;
        assert_eq!(tools["result"]["tools"].as_array().map(Vec::len), Some(16));

        let r = call(&mut p, "echo", json!({"text": "hi"})).await;
        assert_eq!(text(&r), r#"{"text":"hi"}"#);
        // Core validates input before the C handler runs (a tool execution error in 2025-11-25).
        let r = call(&mut p, "echo", json!({"text": 5})).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        let r = call(&mut p, "add", json!({"a": 2, "b": 3})).await;
        assert_eq!(r["result"]["structuredContent"]["sum"], 5.0);

        // Async completion from another thread.
        let r = call(&mut p, "async_echo", json!({"k": "v"})).await;
        assert_eq!(text(&r), r#"async:{"k":"v"}"#);

        // Progress and a log entry reach the client before the response.
        p.send(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
            "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "tok"}}}))
            .await;
        let (resp, before) = recv_until(&mut p, |m| m["id"] == 900).await;
        assert_eq!(text(&resp), "progress=1,1 log=1");
        let progress: Vec<&Value> = before
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 2, "{before:?}");
        assert_eq!(progress[0]["params"]["progressToken"], "tok");
        assert_eq!(progress[0]["params"]["message"], "half");
        assert_eq!(progress[1]["params"]["progress"], 2.0);
        let log = before
            .iter()
            .find(|m| m["method"] == "notifications/message")
            .expect("log entry");
        assert_eq!(log["params"]["level"], "warning");
        assert_eq!(log["params"]["data"], "hello log");

        // Handler failures: bad result JSON and abandoned responders are generic -32603;
        // a chosen JSON-RPC error goes out as is.
        for name in ["bad_json", "bad_input", "abandon"] {
            let r = call(&mut p, name, json!({})).await;
            assert_eq!(r["error"]["code"], -32603, "{name}: {r}");
            assert_eq!(r["error"]["message"], "Internal error");
        }
        let r = call(&mut p, "rpc_error", json!({})).await;
        assert_eq!(r["error"]["code"], -32602);
        assert_eq!(r["error"]["data"]["field"], "widget");

        let r = call(&mut p, "deadlock", json!({})).await;
        assert_eq!(
            text(&r),
            "serve=MCP_STATUS_WOULD_DEADLOCK blocking=MCP_STATUS_WOULD_DEADLOCK err=1 out=untouched"
        );

        let r = call(&mut p, "whoami", json!({})).await;
        let t = text(&r);
        assert!(t.starts_with("method=tools/call name=whoami id="), "{t}");
        assert!(t.contains("version=2025-11-25 meta=none"), "{t}");
        assert!(
            t.contains(r#""sampling":{}"#) && t.ends_with("lens_ok=1"),
            "{t}"
        );

        // Server→client sampling from a handler, answered through a completion callback.
        p.send(&json!({"jsonrpc": "2.0", "id": 901, "method": "tools/call",
            "params": {"name": "ask", "arguments": {}}}))
            .await;
        let (req, _) = recv_until(&mut p, |m| m["method"] == "sampling/createMessage").await;
        assert_eq!(req["params"]["maxTokens"], 5);
        p.send(
            &json!({"jsonrpc": "2.0", "id": req["id"], "result": {"role": "assistant",
            "content": {"type": "text", "text": "hello from client"}, "model": "m"}}),
        )
        .await;
        let (resp, _) = recv_until(&mut p, |m| m["id"] == 901).await;
        assert!(text(&resp).contains("hello from client"), "{resp}");

        // The blocking twin from a worker thread.
        p.send(&json!({"jsonrpc": "2.0", "id": 902, "method": "tools/call",
            "params": {"name": "ask_blocking", "arguments": {}}}))
            .await;
        let (req, _) = recv_until(&mut p, |m| m["method"] == "roots/list").await;
        p.send(&json!({"jsonrpc": "2.0", "id": req["id"], "result": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}}))
            .await;
        let (resp, _) = recv_until(&mut p, |m| m["id"] == 902).await;
        assert!(text(&resp).starts_with("roots:MCP_STATUS_OK:"), "{resp}");
        assert!(text(&resp).contains("file:///tmp"));

        // Cancellation is visible to the C handler; its late answer is discarded.
        p.send(&json!({"jsonrpc": "2.0", "id": 903, "method": "tools/call",
            "params": {"name": "wait_cancel", "arguments": {}}}))
            .await;
        p.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 903, "reason": "test"}}),
        )
        .await;
        p.send(&json!({"jsonrpc": "2.0", "id": 904, "method": "tools/call",
            "params": {"name": "last_status", "arguments": {}}}))
            .await;
        let (resp, before) = recv_until(&mut p, |m| m["id"] == 904).await;
        assert_eq!(
            text(&resp),
            "cancel=MCP_STATUS_CANCELLED bad_json=MCP_STATUS_INVALID_JSON bad_input=MCP_STATUS_INVALID_ARGUMENT"
        );
        assert!(before.iter().all(|m| m["id"] != 903), "{before:?}");

        let r = p
            .request(
                "prompts/get",
                json!({"name": "greet", "arguments": {"who": "bob"}}),
            )
            .await;
        assert_eq!(
            r["result"]["messages"][0]["content"]["text"],
            r#"greet {"who":"bob"}"#
        );
        let r = p
            .request("prompts/get", json!({"name": "greet", "arguments": {}}))
            .await;
        assert_eq!(r["error"]["code"], -32602);
        let r = p
            .request("resources/read", json!({"uri": "c://readme"}))
            .await;
        assert_eq!(r["result"]["contents"][0]["text"], "vars={}");
        let r = p
            .request("resources/read", json!({"uri": "c://notes/42"}))
            .await;
        assert_eq!(r["result"]["contents"][0]["uri"], "c://notes/42");
        assert_eq!(r["result"]["contents"][0]["text"], r#"vars={"id":"42"}"#);
        let r = p
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}}),
            )
            .await;
        assert_eq!(
            r["result"]["completion"]["values"],
            json!(["alpha", "beta"])
        );
        let r = p.request("c/echo", json!({"x": [1, 2]})).await;
        assert_eq!(r["result"]["x"], json!([1, 2]));

        finish(p, &exe, v).await;
    }
}

/// Modern era (2026-07-28) over stdio: input_required with sealed state and the retry, and
/// server→client requests refused with MCP_STATUS_UNSUPPORTED.
// Long by design: one scripted scenario, step by step, against one peer process; split up, its
// steps would lose the order they depend on.
#[tokio::test]
async fn c_server_modern_round_trip() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("server_modern", &["tests/c/server.c"], v);
        let mut p = spawn(&exe, v);
        p.era = Era::Modern;
        let env = envelope(json!({"elicitation": {}}));
        let r = first_request(
            &mut p,
            "tools/call",
            json!({"name": "mrtr", "arguments": {}, "_meta": env}),
        )
        .await;
        let res = &r["result"];
        assert_eq!(res["resultType"], "input_required", "{v:?}: {r}");
        assert_eq!(
            res["inputRequests"]["color"]["method"],
            "elicitation/create"
        );
        let state = res["requestState"]
            .as_str()
            .expect("requestState")
            .to_owned();
        let r = p
            .request(
                "tools/call",
                json!({"name": "mrtr", "arguments": {}, "_meta": env, "requestState": state,
                    "inputResponses": {"color": {"action": "accept", "content": {"color": "blue"}}}}),
            )
            .await;
        assert_eq!(text(&r), "state=round-1 modern=1 has_color=1", "{r}");
        assert_eq!(r["result"]["resultType"], "complete");

        let r = p
            .request(
                "tools/call",
                json!({"name": "ask", "arguments": {}, "_meta": env}),
            )
            .await;
        assert!(text(&r).starts_with("failed:MCP_STATUS_UNSUPPORTED"), "{r}");
        assert!(text(&r).contains("code=-32021"), "{r}");

        // With sampling declared, mcp_responder_request_client asks through input_required and
        // the handler's re-run gets the answer (MRTR-01).
        let env = envelope(json!({"sampling": {}}));
        let r = p
            .request(
                "tools/call",
                json!({"name": "ask", "arguments": {}, "_meta": env}),
            )
            .await;
        let res = &r["result"];
        assert_eq!(res["resultType"], "input_required", "{v:?}: {r}");
        let asked = &res["inputRequests"]["mcpcore.request.0"];
        assert_eq!(asked["method"], "sampling/createMessage", "{r}");
        assert_eq!(asked["params"]["maxTokens"], 5);
        let state = res["requestState"].as_str().expect("state").to_owned();
        let r = p
            .request(
                "tools/call",
                json!({"name": "ask", "arguments": {}, "_meta": env, "requestState": state,
                    "inputResponses": {"mcpcore.request.0": {"role": "assistant",
                        "content": {"type": "text", "text": "modern answer"}, "model": "m"}}}),
            )
            .await;
        assert!(text(&r).starts_with("sampled:"), "{r}");
        assert!(text(&r).contains("modern answer"), "{r}");
        let r = p
            .request(
                "tools/call",
                json!({"name": "whoami", "arguments": {}, "_meta": env}),
            )
            .await;
        assert!(text(&r).contains("version=2026-07-28"), "{r}");

        // mcp_server_shutdown from a callback ends mcp_server_serve_stdio without EOF, after
        // draining: the request answered after the shutdown request still gets its answer.
        p.send(&json!({"jsonrpc": "2.0", "id": 950, "method": "tools/call",
            "params": {"name": "shutdown", "arguments": {}, "_meta": env}}))
            .await;
        let (bye, _) = recv_until(&mut p, |m| m["id"] == 950).await;
        assert_eq!(text(&bye), "bye", "{v:?}");
        let status = p.wait_exit(EXIT_WAIT).await.unwrap_or_else(|| {
            panic!("{v:?}: the C server did not exit after mcp_server_shutdown")
        });
        assert!(
            status.success(),
            "{v:?}: exit {status}\n{}",
            support::reports(&exe)
        );
    }
}

/// The C example server (examples/c/echo_server.c) over stdio.
#[tokio::test]
async fn c_example_echo_server() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("echo_server", &["examples/c/echo_server.c"], v);
        let mut p = spawn(&exe, v);
        initialize(&mut p, json!({})).await;
        let r = call(&mut p, "echo", json!({"text": "héllo \"C\""})).await;
        assert_eq!(text(&r), "héllo \"C\"", "{v:?}");
        let r = call(&mut p, "calculate", json!({"op": "mul", "a": 6, "b": 7})).await;
        assert_eq!(r["result"]["structuredContent"]["value"], 42.0, "{r}");
        let r = call(&mut p, "calculate", json!({"op": "div", "a": 1, "b": 0})).await;
        assert_eq!(r["result"]["isError"], true, "{r}");
        finish(p, &exe, v).await;
    }
}

/// The C example server over Streamable HTTP on 127.0.0.1 port 0: a legacy session and a
/// modern stateless request, every message schema-validated.
#[tokio::test]
async fn c_example_echo_server_http() {
    let _serial = support::one_at_a_time().await;
    use mcpcore_tests::http::McpHttp;
    for v in variants() {
        let exe = build("echo_server_http", &["examples/c/echo_server.c"], v);
        let server =
            support::HttpExample::spawn(&exe, v, &["--http", "127.0.0.1:0"], FIRST_WAIT).await;
        let mut c = McpHttp::new(server.addr());
        let init = tokio::time::timeout(FIRST_WAIT, c.initialize())
            .await
            .expect("initialize in time");
        assert_eq!(
            init.last()["result"]["serverInfo"]["name"],
            "c-echo",
            "{v:?}"
        );
        let ex = c
            .legacy(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "over http"}}),
            )
            .await;
        assert_eq!(text(ex.last()), "over http");
        let ex = c
            .modern(
                3,
                "tools/call",
                json!({"name": "calculate", "arguments": {"op": "sub", "a": 5, "b": 7}}),
            )
            .await;
        assert_eq!(
            ex.last()["result"]["structuredContent"]["value"],
            -2.0,
            "{:?}",
            ex.messages
        );
        assert_eq!(ex.last()["result"]["resultType"], "complete");
        server.stop(&exe, v, EXIT_WAIT).await;
    }
}

/// The install script, its pkg-config file and the README's link commands: the example server
/// linked against the shared and the static library answers `initialize`.
// Long by design: one scripted scenario, step by step, against one peer process; split up, its
// steps would lose the order they depend on.
#[tokio::test]
async fn pkg_config_shared_and_static_link() {
    let _serial = support::one_at_a_time().await;
    // A missing pkg-config fails the test (scripts/test.sh installs it); it never skips.
    let version = std::process::Command::new("pkg-config")
        .arg("--version")
        .output();
    assert!(
        version.is_ok_and(|o| o.status.success()),
        "pkg-config is required (apt-get install pkg-config; scripts/test.sh does)"
    );
    support::staticlib();
    let profile = support::profile_dir();
    let prefix = profile.join("c-suite").join("prefix");
    let mut install = std::process::Command::new("bash");
    install
        .arg(support::root().join("scripts/install-ffi.sh"))
        .args(["--no-build", "--prefix"])
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
        .current_dir(support::root());
    if profile.file_name().is_some_and(|n| n == "debug") {
        install.arg("--debug");
    }
    let o = install.output().expect("run install-ffi.sh");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let pc_path = prefix.join("lib/pkgconfig");
    let pkg = |args: &[&str]| -> Vec<String> {
        let o = std::process::Command::new("pkg-config")
            .args(args)
            .arg("mcpcore")
            .env("PKG_CONFIG_PATH", &pc_path)
            .output()
            .expect("pkg-config");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let src = support::root().join("examples/c/echo_server.c");
    let dir = profile.join("c-suite");
    let shared = dir.join("echo_shared");
    let statik = dir.join("echo_static");
    let libdir = pkg(&["--variable=libdir"]).join("");
    let builds: [(&std::path::Path, Vec<String>); 2] = [
        (&shared, pkg(&["--cflags", "--libs"])),
        (&statik, {
            let mut a = pkg(&["--cflags"]);
            a.extend([format!("-L{libdir}"), "-l:libmcpcore.a".into()]);
            a.extend(
                pkg(&["--static", "--libs-only-l"])
                    .into_iter()
                    .filter(|f| f != "-lmcpcore"),
            );
            a
        }),
    ];
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for (out, flags) in builds {
        let o = std::process::Command::new(support::cc())
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
            .arg(&src)
            .args(&flags)
            .arg("-o")
            .arg(out)
            .output()
            .expect("cc");
        assert!(
            o.status.success(),
            "{flags:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut child = tokio::process::Command::new(out)
            .env("LD_LIBRARY_PATH", &libdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn");
        {
            use tokio::io::AsyncWriteExt;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin
                .write_all(format!("{init}\n").as_bytes())
                .await
                .expect("write");
        }
        let o = tokio::time::timeout(EXIT_WAIT, child.wait_with_output())
            .await
            .expect("the linked example exits after EOF")
            .expect("wait");
        assert!(o.status.success());
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("\"name\":\"c-echo\""), "{out:?}: {text}");
    }
    // The shared build really links the shared library.
    let ldd = std::process::Command::new("ldd").arg(&shared).output();
    if let Ok(o) = ldd {
        assert!(String::from_utf8_lossy(&o.stdout).contains("libmcpcore.so"));
    }
}
