//! The example servers' `--auth-jwks FILE_OR_URL --auth-issuer ISS --auth-audience AUD` flags
//! (AUTH-01, AUTH-06), end to end: the built binaries, spawned on 127.0.0.1, challenge a
//! request without a token, publish the protected-resource metadata, serve a signed token,
//! refuse another audience's, and refuse incomplete flag sets with a usage error. Two
//! `--redis` workers with the same flags accept the same tokens, and a `requestState` sealed
//! for one user on one worker opens on the other for that user only.

use mcpcore_tests::auth::{
    claims, jwks, jwks_file, spawn_protected_example, TestKey, ISSUER, RESOURCE,
};
use mcpcore_tests::http::{
    modern_headers, raw_request, spawn_example, Exchange, HttpReply, McpHttp,
};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

/// A modern `tools/call` of `tool` (the demo's `echo`, the fixture's `test_simple_text`).
async fn call(addr: SocketAddr, tool: &str, token: Option<&str>) -> HttpReply {
    let mut h = modern_headers("tools/call", Some(tool));
    if let Some(t) = token {
        h.push(("Authorization".into(), format!("Bearer {t}")));
    }
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {"text": "hi"}, "_meta": envelope(json!({}))}});
    raw_request(addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await
}

async fn check_protected(bin: &str, tool: &str) {
    let (mut child, addr, key) = spawn_protected_example(bin).await;

    let r = call(addr, tool, None).await;
    assert_eq!(r.status, 401, "{bin}");
    let c = r.header("www-authenticate").expect("challenge").to_owned();
    assert!(
        c.starts_with("Bearer resource_metadata=\"https://mcp.test/.well-known/oauth-protected-resource/mcp\""),
        "{c}"
    );
    let mut prm = raw_request(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        b"",
    )
    .await;
    assert_eq!(prm.status, 200);
    let doc = prm.json().await;
    assert_eq!(
        (&doc["resource"], &doc["authorization_servers"]),
        (&json!(RESOURCE), &json!([ISSUER]))
    );

    let mut r = call(addr, tool, Some(&key.sign(&claims("alice", "")))).await;
    assert_eq!(r.status, 200, "{bin}");
    let v: Value = r.json().await;
    assert_eq!(v["result"]["content"][0]["type"], "text", "{v}");

    let mut other = claims("alice", "");
    other["aud"] = json!("https://other.test/mcp");
    assert_eq!(call(addr, tool, Some(&key.sign(&other))).await.status, 401);
    child.start_kill().expect("kill");
    let _ = child.wait().await;
}

#[tokio::test]
async fn demo_server_auth_jwks_flags_protect_the_endpoint() {
    check_protected("demo-server", "echo").await;
}

#[tokio::test]
async fn conformance_server_auth_jwks_flags_protect_the_endpoint() {
    check_protected("conformance-server", "test_simple_text").await;
}

/// Exit status and stderr of `demo-server ARGS` (which must exit by itself).
async fn run_to_exit(args: &[&str]) -> (Option<i32>, String) {
    let out = tokio::process::Command::new(mcpcore_tests::example_bin("demo-server"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("demo-server did not exit")
        .expect("run demo-server");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn incomplete_or_bad_auth_flags_are_usage_errors() {
    let file = jwks_file(&jwks(&[&TestKey::generate("k1")]));
    let mut auth = serde_json::to_value(mcpcore_tests::auth::options()).expect("options JSON");
    auth["jwksPath"] = json!(file);
    let auth_file = jwks_file(&auth); // any JSON document
    let http = ["--http", "127.0.0.1:0"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--auth-jwks", &file], "go together"),
        (
            vec!["--auth-issuer", ISSUER, "--auth-audience", RESOURCE],
            "go together",
        ),
        (
            vec!["--auth-jwks", &file, "--auth-issuer", ISSUER],
            "go together",
        ),
        (vec!["--auth-issuer"], "needs a value"),
        (
            vec![
                "--auth-jwks",
                "/nonexistent/jwks.json",
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                RESOURCE,
            ],
            "jwksPath",
        ),
        (
            vec![
                "--auth-jwks",
                "http://as.test/jwks.json",
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                RESOURCE,
            ],
            "loopback",
        ),
        (
            vec![
                "--auth-jwks",
                &file,
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                "api",
            ],
            "absolute URL",
        ),
        (
            vec![
                "--auth",
                &auth_file,
                "--auth-jwks",
                &file,
                "--auth-issuer",
                ISSUER,
                "--auth-audience",
                RESOURCE,
            ],
            "exclusive",
        ),
    ];
    for (flags, why) in cases {
        let args: Vec<&str> = http.iter().copied().chain(flags.iter().copied()).collect();
        let (code, err) = run_to_exit(&args).await;
        assert_eq!(code, Some(2), "{flags:?}: {err}");
        assert!(
            err.contains(why) && err.contains("usage:"),
            "{flags:?}: {err}"
        );
    }
    // Without --http the flags have nothing to protect.
    let (code, err) = run_to_exit(&[
        "--auth-jwks",
        &file,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        RESOURCE,
    ])
    .await;
    assert_eq!(code, Some(2), "{err}");
}

/// A modern `confirm` call as `token` on `addr`, with `extra` params (a retry's answers).
async fn confirm(addr: SocketAddr, token: &str, extra: Value) -> Exchange {
    let mut params = json!({"name": "confirm", "arguments": {"question": "deploy?"},
        "_meta": envelope(json!({"elicitation": {}}))});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let mut h = modern_headers("tools/call", Some("confirm"));
    h.push(("Authorization".into(), format!("Bearer {token}")));
    McpHttp::new(addr).post(&h, &msg, Era::Modern).await
}

/// The retry params answering a first round whose result was `first`.
fn answer(first: &Exchange) -> Value {
    let state = first.last()["result"]["requestState"].clone();
    assert!(state.is_string(), "no requestState: {:?}", first.messages);
    json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
           "requestState": state})
}

#[tokio::test]
async fn two_redis_workers_two_tokens() {
    let redis = RedisServer::start();
    let url = redis.url(0);
    let key = TestKey::generate("k1");
    let file = jwks_file(&jwks(&[&key]));
    let mut workers = Vec::new();
    for _ in 0..2 {
        let args = [
            "--http",
            "127.0.0.1:0",
            "--redis",
            &url,
            "--request-state-key",
            mcpcore_tests::redis::TEST_KEY,
            "--auth-jwks",
            &file,
            "--auth-issuer",
            ISSUER,
            "--auth-audience",
            RESOURCE,
        ];
        workers.push(spawn_example("demo-server", &args).await);
    }
    let (a, b) = (workers[0].1, workers[1].1);
    let alice = key.sign(&claims("alice", ""));
    let bob = key.sign(&claims("bob", ""));
    assert_eq!(call(b, "echo", None).await.status, 401);

    // Alice's round starts on worker A; Bob cannot finish it on worker B, Alice can.
    let first = confirm(a, &alice, json!({})).await;
    assert_eq!(first.last()["result"]["resultType"], "input_required");
    let retry = answer(&first);
    let stolen = confirm(b, &bob, retry.clone()).await;
    assert_eq!(
        (stolen.status, stolen.code()),
        (400, Some(-32602)),
        "{:?}",
        stolen.messages
    );
    let done = confirm(b, &alice, retry).await;
    assert_eq!(done.status, 200);
    assert_eq!(done.text(), "confirmed: deploy?");
    for (mut child, _) in workers {
        child.start_kill().expect("kill");
        let _ = child.wait().await;
    }
}
