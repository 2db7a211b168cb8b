//! The `mcpcore` command end to end: the built binary against the built `demo-server`, over real
//! stdio pipes and real HTTP on 127.0.0.1, in both eras; exit statuses, argument checking,
//! elicitation at the terminal, progress on stderr, listen streams, headers and tokens.

mod common;

use common::{mcpcore, LIMIT};
use mcpcore_tests::auth::{claims, spawn_protected_example};
use mcpcore_tests::example_bin;
use mcpcore_tests::http::spawn_example;
use serde_json::{json, Value};
use std::process::Output;

fn demo() -> String {
    example_bin("demo-server").display().to_string()
}

fn stdout_json(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.lines().count(), 1, "piped output is one line: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Where the demo server is: a stdio command after `--`, or an HTTP URL first.
enum At {
    Stdio,
    Http(String),
}

/// `mcpcore SUB [URL] WORDS [-- demo-server]`, with `flags` before the words.
fn line<'a>(
    at: &'a At,
    sub: &'a str,
    flags: &[&'a str],
    words: &[&'a str],
    demo: &'a str,
) -> Vec<&'a str> {
    let mut v = vec![sub];
    v.extend_from_slice(flags);
    if let At::Http(u) = at {
        v.push(u);
    }
    v.extend_from_slice(words);
    if let At::Stdio = at {
        v.extend(["--", demo]);
    }
    v
}

async fn http_demo() -> (tokio::process::Child, String) {
    let (child, addr) = spawn_example("demo-server", &["--http", "127.0.0.1:0"]).await;
    (child, format!("http://{addr}/mcp"))
}

/// The two spellings of one call mean the same, and every read-only command prints the
/// server's answer, over stdio and HTTP, in each era (LC-01, DISC-01).
#[tokio::test]
async fn every_command_answers_over_stdio_and_http_in_both_eras() {
    let (_server, url) = http_demo().await;
    let demo = demo();
    for at in [At::Stdio, At::Http(url.clone())] {
        for (mode, era, version) in [
            ("modern", "modern", "2026-07-28"),
            ("legacy", "legacy", "2025-11-25"),
        ] {
            let m = ["--mode", mode];
            let o = mcpcore(&line(&at, "call", &m, &["echo", "text=hi"], &demo), "").await;
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            assert_eq!(stdout_json(&o)["content"][0]["text"], "hi");

            let o = mcpcore(&line(&at, "call", &m, &["add", "a=2", "b=3"], &demo), "").await;
            assert_eq!(stdout_json(&o)["structuredContent"], json!({"sum": 5.0}));

            let o = mcpcore(&line(&at, "discover", &m, &[], &demo), "").await;
            let d = stdout_json(&o);
            assert_eq!(
                (d["era"].as_str(), d["protocolVersion"].as_str()),
                (Some(era), Some(version))
            );
            assert_eq!(
                d["result"]["serverInfo"]["name"]
                    .as_str()
                    .or(
                        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str()
                    ),
                Some("mcpcore-demo"),
                "{d}"
            );

            let o = mcpcore(&line(&at, "list", &m, &[], &demo), "").await;
            let names: Vec<String> = stdout_json(&o)["tools"]
                .as_array()
                .expect("tools")
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect();
            assert!(
                names.contains(&"echo".to_owned()) && names.contains(&"confirm".to_owned()),
                "{names:?}"
            );
            let o = mcpcore(&line(&at, "list", &m, &["templates"], &demo), "").await;
            assert_eq!(
                stdout_json(&o)["resourceTemplates"][0]["uriTemplate"],
                "demo://notes/{id}"
            );

            let o = mcpcore(&line(&at, "read", &m, &["demo://notes/7"], &demo), "").await;
            assert_eq!(stdout_json(&o)["contents"][0]["text"], "note 7");
            let o = mcpcore(&line(&at, "prompt", &m, &["greet", "name=Bo"], &demo), "").await;
            assert_eq!(
                stdout_json(&o)["messages"][0]["content"]["text"],
                "Say hello to Bo."
            );
            let o = mcpcore(
                &line(&at, "complete", &m, &["prompt:greet", "name=a"], &demo),
                "",
            )
            .await;
            assert_eq!(stdout_json(&o)["completion"]["values"], json!(["alice"]));
            let o = mcpcore(&line(&at, "ping", &m, &[], &demo), "").await;
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        }
    }
}

/// Exit statuses: 1 for `isError`, 2 for protocol errors and refused arguments, 3 when there is
/// no answer at all.
#[tokio::test]
async fn exit_statuses_say_how_a_call_ended() {
    let demo = demo();
    let run = |words: Vec<&str>| {
        let mut v = vec!["call"];
        v.extend(words);
        v.extend(["--", demo.as_str()]);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let call = |words: Vec<&str>| {
        let args = run(words);
        async move {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            mcpcore(&a, "").await
        }
    };
    // The server's own argument check answers a tool error (TOOL-03): exit 1, result printed.
    let o = call(vec!["echo", "--no-check", "{}"]).await;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["isError"], true);
    // A JSON-RPC error: exit 2, the code on stderr, nothing on stdout.
    let o = call(vec!["fail"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-32603"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    // Refused before sending: a value the schema does not take, a missing property, no tool.
    let o = call(vec!["add", "a=x", "b=1"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a=x: the tool takes number"),
        "{}",
        stderr(&o)
    );
    let o = call(vec!["add", "a=1"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("\"b\" is a required property"),
        "{}",
        stderr(&o)
    );
    let o = call(vec!["nope"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("has no tool \"nope\" (it has: echo, add"),
        "{}",
        stderr(&o)
    );
    // No answer: a command that cannot start, a port nobody listens on.
    let o = mcpcore(&["call", "echo", "text=x", "--", "/nonexistent/server"], "").await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = mcpcore(&["call", "http://127.0.0.1:1/mcp", "echo", "text=x"], "").await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // Command lines that name no server, or two.
    let o = mcpcore(&["call", "echo", "text=x"], "").await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no server given"), "{}", stderr(&o));
    let o = mcpcore(&["call", "http://127.0.0.1:1/mcp", "echo", "--", "x"], "").await;
    assert_eq!(o.status.code(), Some(2));
    let o = mcpcore(&["frobnicate"], "").await;
    assert_eq!(o.status.code(), Some(2), "a usage error");
}

/// ELIC-*: the `confirm` tool's question is asked on stderr and answered on stdin, in both eras
/// (an `input_required` round, or a legacy `elicitation/create`); `--no-input` declares no
/// elicitation, so the call fails instead of waiting.
#[tokio::test]
async fn elicitations_are_asked_at_the_terminal() {
    let (_server, url) = http_demo().await;
    for mode in ["modern", "legacy"] {
        let args = [
            "call",
            "--mode",
            mode,
            url.as_str(),
            "confirm",
            "question=Deploy?",
        ];
        let o = mcpcore(&args, "yes\n").await;
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout_json(&o)["content"][0]["text"], "confirmed: Deploy?");
        let e = stderr(&o);
        assert!(
            e.contains("The server asks: Deploy?") && e.contains("ok (boolean, required)"),
            "{e}"
        );
        let o = mcpcore(&args, "no\n").await;
        assert_eq!(stdout_json(&o)["content"][0]["text"], "declined: Deploy?");
        // A wrong answer is asked again; the end of input cancels.
        let o = mcpcore(&args, "perhaps\ny\n").await;
        assert!(stderr(&o).contains("not a valid boolean"), "{}", stderr(&o));
        assert_eq!(stdout_json(&o)["content"][0]["text"], "confirmed: Deploy?");
        let o = mcpcore(&args, "").await;
        assert_eq!(stdout_json(&o)["content"][0]["text"], "declined: Deploy?");
        let mut quiet = args.to_vec();
        quiet.insert(1, "--no-input");
        let o = mcpcore(&quiet, "yes\n").await;
        assert_eq!(o.status.code(), Some(2), "{mode}: {}", stderr(&o));
        assert!(!stderr(&o).contains("The server asks"));
    }
}

/// Progress goes to stderr, the result alone to stdout; `--pretty` indents it.
#[tokio::test]
async fn progress_on_stderr_result_on_stdout() {
    let demo = demo();
    let o = mcpcore(&["call", "slow", "ms=200", "--", &demo], "").await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["content"][0]["text"], "slept 200 ms");
    assert!(
        stderr(&o).contains("progress: 1/4 working"),
        "{}",
        stderr(&o)
    );
    let o = mcpcore(&["call", "--pretty", "echo", "text=hi", "--", &demo], "").await;
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().count() > 3, "indented: {text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["content"][0]["text"], "hi");
}

/// SUB-01, SUB-07: `listen` prints a list change as one JSON line, on a modern listen stream and
/// on a legacy session, then stops after `--count`.
#[tokio::test]
async fn listen_prints_notifications_as_json_lines() {
    let (_server, url) = http_demo().await;
    for mode in ["modern", "legacy"] {
        let mut child = common::spawn(&["listen", "--mode", mode, "--count", "1", &url]);
        // Wait for the acknowledgement before changing anything.
        let mut err = tokio::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut first = String::new();
        tokio::time::timeout(
            LIMIT,
            tokio::io::AsyncBufReadExt::read_line(&mut err, &mut first),
        )
        .await
        .expect("listening in time")
        .expect("stderr");
        assert!(first.starts_with("listening: "), "{mode}: {first}");
        let o = mcpcore(&["call", url.as_str(), "touch"], "").await;
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = tokio::time::timeout(LIMIT, child.wait_with_output())
            .await
            .expect("listen ends after one notification")
            .expect("output");
        assert_eq!(out.status.code(), Some(0), "{mode}");
        let text = String::from_utf8_lossy(&out.stdout);
        let n: Value = serde_json::from_str(text.trim()).expect("one JSON line");
        assert_eq!(
            n["method"], "notifications/tools/list_changed",
            "{mode}: {n}"
        );
    }
}

/// `--token` and `--header` reach the server: a JWT-protected endpoint refuses the call without
/// one (exit 3, no secret printed) and answers with it, given either way.
#[tokio::test]
async fn tokens_and_headers_reach_the_server() {
    let (_server, addr, key) = spawn_protected_example("demo-server").await;
    let url = format!("http://{addr}/mcp");
    let token = key.sign(&claims("alice", ""));
    let o = mcpcore(&["call", &url, "echo", "text=hi"], "").await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = mcpcore(&["call", "--token", &token, &url, "echo", "text=hi"], "").await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout_json(&o)["content"][0]["text"], "hi");
    assert!(!stderr(&o).contains(&token), "the token is never printed");
    let header = format!("Authorization: Bearer {token}");
    let o = mcpcore(
        &[
            "call", "-H", &header, "--mode", "legacy", &url, "echo", "text=hi",
        ],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = mcpcore(&["call", "-H", "no-colon", &url, "echo", "text=hi"], "").await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
