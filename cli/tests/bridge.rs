//! `mcpcore serve` (a stdio server behind Streamable HTTP) and `mcpcore stdio` (the reverse),
//! end to end with the built binaries: every call kind in both eras on the bridge's side, with
//! progress, elicitation (an `input_required` round or a legacy request, whichever era the
//! client speaks) and list changes passed through; a server that dies gets a clear error and
//! is restarted.

mod common;

use common::{mcpcore, ok_json, serve, serve_with, LIMIT};
use mcpcore_tests::example_bin;
use serde_json::json;
use std::time::Duration;

/// Every kind of call through `target` (a URL, or `--` and a command), in `mode`.
async fn exercise(mode: &str, target: &[&str]) {
    let run = |words: &[&str], stdin: &'static str| {
        let mut v = vec!["--mode".to_owned(), mode.to_owned()];
        let url = target.first().filter(|t| t.starts_with("http"));
        let sub = words[0].to_owned();
        v.insert(0, sub);
        if let Some(u) = url {
            v.push((*u).to_owned());
        }
        v.extend(words[1..].iter().map(|s| (*s).to_owned()));
        if url.is_none() {
            v.extend(target.iter().map(|s| (*s).to_owned()));
        }
        async move { mcpcore(&v.iter().map(String::as_str).collect::<Vec<_>>(), stdin).await }
    };
    let r = ok_json(&run(&["call", "echo", "text=bridged"], "").await);
    assert_eq!(r["content"][0]["text"], "bridged", "{mode}");
    let o = run(&["call", "slow", "ms=100"], "").await;
    assert_eq!(ok_json(&o)["content"][0]["text"], "slept 100 ms");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("progress: 4/4 working"),
        "{mode}: progress passes through: {err}"
    );
    let r = ok_json(&run(&["call", "confirm", "question=Bridge?"], "yes\n").await);
    assert_eq!(r["content"][0]["text"], "confirmed: Bridge?", "{mode}");
    let r = ok_json(&run(&["read", "demo://notes/9"], "").await);
    assert_eq!(r["contents"][0]["text"], "note 9");
    let r = ok_json(&run(&["prompt", "greet", "name=Ann"], "").await);
    assert_eq!(r["messages"][0]["content"]["text"], "Say hello to Ann.");
    let r = ok_json(&run(&["complete", "prompt:greet", "name=c"], "").await);
    assert_eq!(r["completion"]["values"], json!(["carol"]));
    let o = run(&["call", "fail"], "").await;
    assert_eq!(o.status.code(), Some(2), "{mode}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("-32603"));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("hunter2"));
    let d = ok_json(&run(&["discover"], "").await);
    let name = d["result"]["serverInfo"]["name"]
        .as_str()
        .or(d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str());
    assert_eq!(name, Some("mcpcore-demo"), "the upstream's name: {d}");
}

#[tokio::test]
async fn serve_bridges_a_stdio_server_to_http_clients_of_both_eras() {
    let demo = example_bin("demo-server").display().to_string();
    let (_bridge, url) = serve(&[&demo]).await;
    for mode in ["modern", "legacy"] {
        exercise(mode, &[&url]).await;
    }
    // The reverse bridge in front of it: a stdio command that reaches the HTTP endpoint.
    let me = env!("CARGO_BIN_EXE_mcpcore");
    for mode in ["modern", "legacy"] {
        exercise(mode, &["--", me, "stdio", &url]).await;
    }
}

/// SUB-01, SUB-07: the upstream's list change reaches the bridge's listeners in either era.
#[tokio::test]
async fn list_changes_pass_through() {
    let demo = example_bin("demo-server").display().to_string();
    let (_bridge, url) = serve(&[&demo]).await;
    for mode in ["modern", "legacy"] {
        let (listen, _) = common::listening(&["--mode", mode, "--count", "1", &url]).await;
        ok_json(&mcpcore(&["call", &url, "touch"], "").await);
        let n = common::notification(listen).await;
        assert_eq!(n["method"], "notifications/tools/list_changed", "{mode}");
    }
}

/// A server that dies is restarted with backoff; while it cannot start, calls get a clear
/// error at once (never a hang), and once it starts again calls go through.
#[tokio::test]
async fn a_dead_server_is_restarted_and_callers_get_a_clear_error_meanwhile() {
    let flaky = common::Flaky::new("bridge");
    let (_bridge, url) = serve(&["sh", "-c", &flaky.script]).await;
    ok_json(&mcpcore(&["call", &url, "echo", "text=before"], "").await);

    flaky.kill();
    let deadline = tokio::time::Instant::now() + LIMIT;
    let refused = loop {
        let o = mcpcore(&["call", &url, "echo", "text=during"], "").await;
        if o.status.code() == Some(2) {
            break String::from_utf8_lossy(&o.stderr).into_owned();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the death was never noticed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(refused.contains("-32603"), "{refused}");
    assert!(
        refused.contains("being restarted") || refused.contains("started again"),
        "{refused}"
    );

    flaky.revive();
    let back = loop {
        let o = mcpcore(&["call", &url, "echo", "text=after"], "").await;
        if o.status.code() == Some(0) {
            break o;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(ok_json(&back)["content"][0]["text"], "after");
}

#[tokio::test]
async fn serve_refuses_incomplete_flags() {
    let o = mcpcore(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            "x.pem",
            "--",
            "true",
        ],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--tls-cert and --tls-key go together"));
    let o = mcpcore(&["serve", "--http", "127.0.0.1:0"], "").await;
    assert_eq!(o.status.code(), Some(2), "a command is required");
    let o = mcpcore(&["stdio", "--", "x"], "").await;
    assert_eq!(o.status.code(), Some(2));
}

/// HTTPS: `serve --tls-cert/--tls-key` serves https://, and the client trusts it with
/// `--cacert` (without it the certificate is refused: no answer, exit 3).
#[tokio::test]
async fn serve_over_https_and_trust_a_private_ca() {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("cert");
    let dir = std::env::temp_dir().join(format!("mcpcore-bridge-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (crt, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&crt, cert.cert.pem()).expect("cert");
    std::fs::write(&key, cert.key_pair.serialize_pem()).expect("key");
    let (crt, key) = (crt.display().to_string(), key.display().to_string());
    let demo = example_bin("demo-server").display().to_string();
    let (_bridge, url) = serve_with(&["--tls-cert", &crt, "--tls-key", &key], &[&demo]).await;
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    for mode in ["modern", "legacy"] {
        let args = [
            "call", "--mode", mode, "--cacert", &crt, &url, "echo", "text=tls",
        ];
        assert_eq!(
            ok_json(&mcpcore(&args, "").await)["content"][0]["text"],
            "tls"
        );
    }
    let o = mcpcore(&["call", &url, "echo", "text=tls"], "").await;
    assert_eq!(o.status.code(), Some(3), "an unknown CA is refused");
    let _ = std::fs::remove_dir_all(dir);
}
