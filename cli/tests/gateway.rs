//! `mcpcore gateway`: several upstreams behind one endpoint (HTTP or stdio), names namespaced
//! and filtered per upstream, an upstream that is down absent (and named by the health report)
//! while the others serve, the official `server-everything` beside our `demo-server`, and
//! configuration errors that name the file, line and key.

mod common;

use common::{mcpcore, ok_json, LIMIT};
use mcpcore::client::{Client, ClientError, HttpClientOptions};
use mcpcore_tests::example_bin;
use mcpcore_tests::interop::npm_package;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// A configuration file in a fresh directory.
fn config(name: &str, text: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("mcpcore-gw-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("config");
    (dir, path.display().to_string())
}

/// `mcpcore gateway CONFIG --http 127.0.0.1:0 --health 127.0.0.1:0`: the child, the MCP URL
/// and the health URL.
async fn gateway(path: &str) -> (tokio::process::Child, String, String) {
    gateway_with(path, &[]).await
}

/// As [`gateway`], with more flags.
async fn gateway_with(path: &str, flags: &[&str]) -> (tokio::process::Child, String, String) {
    let mut args = vec![
        "gateway",
        path,
        "--http",
        "127.0.0.1:0",
        "--health",
        "127.0.0.1:0",
        "--quiet",
    ];
    args.extend_from_slice(flags);
    let mut child = common::spawn(&args);
    let mut err = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let (mut mcp, mut health) = (None, None);
    tokio::time::timeout(LIMIT, async {
        while mcp.is_none() || health.is_none() {
            let Ok(Some(l)) = err.next_line().await else {
                panic!("the gateway exited")
            };
            if let Some(u) = l.strip_prefix("mcpcore: serving ") {
                mcp = Some(u.to_owned());
            }
            if let Some(u) = l.strip_prefix("mcpcore: health at ") {
                health = Some(u.to_owned());
            }
        }
    })
    .await
    .expect("the gateway starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
    (child, mcp.expect("url"), health.expect("health"))
}

fn names(v: &Value, key: &str) -> Vec<String> {
    let mut n: Vec<String> = v[key]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    n.sort();
    n
}

/// `GET` the health URL: status and JSON body.
async fn health(url: &str) -> (u16, Value) {
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/health")
        .parse()
        .expect("address");
    let mut r = mcpcore_tests::http::raw_request(addr, "GET", "/health", &[], b"").await;
    (r.status, r.json().await)
}

async fn tools(url: &str) -> Vec<String> {
    names(&ok_json(&mcpcore(&["list", url], "").await), "tools")
}

#[tokio::test]
async fn upstreams_are_namespaced_filtered_and_served_in_both_eras() {
    let demo = example_bin("demo-server").display().to_string();
    let (dir, path) = config(
        "gw.toml",
        &format!(
            "[upstreams.a]\ncommand = [\"{demo}\"]\nallow = [\"echo\", \"add\", \"greet\"]\n\
             [upstreams.b]\ncommand = [\"{demo}\"]\ndeny = [\"fail\", \"log\", \"touch\"]\n\
             [upstreams.gone]\ncommand = [\"/nonexistent/server\"]\n"
        ),
    );
    let (_gw, url, health_url) = gateway(&path).await;
    assert_eq!(
        tools(&url).await,
        [
            "a__add",
            "a__echo",
            "b__add",
            "b__confirm",
            "b__echo",
            "b__slow"
        ]
    );
    let prompts = ok_json(&mcpcore(&["list", &url, "prompts"], "").await);
    assert_eq!(names(&prompts, "prompts"), ["a__greet", "b__greet"]);
    for mode in ["modern", "legacy"] {
        let r = ok_json(&mcpcore(&["call", "--mode", mode, &url, "a__echo", "text=gw"], "").await);
        assert_eq!(r["content"][0]["text"], "gw");
        let args = ["call", "--mode", mode, &url, "b__confirm", "question=Gate?"];
        let r = ok_json(&mcpcore(&args, "yes\n").await);
        assert_eq!(r["content"][0]["text"], "confirmed: Gate?", "{mode}");
        let o = mcpcore(&["call", "--mode", mode, &url, "b__slow", "ms=100"], "").await;
        assert!(String::from_utf8_lossy(&o.stderr).contains("progress: 4/4"));
        let r = ok_json(
            &mcpcore(
                &[
                    "complete",
                    "--mode",
                    mode,
                    &url,
                    "prompt:a__greet",
                    "name=b",
                ],
                "",
            )
            .await,
        );
        assert_eq!(r["completion"]["values"][0], "bob");
        let r = ok_json(
            &mcpcore(
                &["prompt", "--mode", mode, &url, "b__greet", "name=Zed"],
                "",
            )
            .await,
        );
        assert_eq!(r["messages"][0]["content"]["text"], "Say hello to Zed.");
    }
    // Filtered out: not listed, and not callable.
    let o = mcpcore(&["call", "--no-check", &url, "a__fail"], "").await;
    assert_eq!(o.status.code(), Some(2));
    let (status, body) = health(&health_url).await;
    assert_eq!(status, 503);
    assert_eq!(body["upstreams"]["a"], "up");
    assert_eq!(body["upstreams"]["gone"], "down");
    // The same gateway as a stdio server.
    let me = env!("CARGO_BIN_EXE_mcpcore");
    let o = mcpcore(&["list", "--", me, "gateway", &path, "--quiet"], "").await;
    assert!(names(&ok_json(&o), "tools").contains(&"b__slow".to_owned()));
    let _ = std::fs::remove_dir_all(dir);
}

/// One upstream: names as they are. An upstream that dies leaves the lists (its clients hear
/// `list_changed`) and comes back when it is back.
#[tokio::test]
async fn a_member_that_goes_down_is_absent_until_it_is_back() {
    let (dir, path) = config("one.toml", "");
    let flaky = common::Flaky::new("gateway");
    let text = format!(
        "[upstreams.only]\ncommand = [\"sh\", \"-c\", {:?}]\n",
        flaky.script
    );
    std::fs::write(&path, text).expect("config");
    let (_gw, url, health_url) = gateway(&path).await;
    assert!(
        tools(&url).await.contains(&"echo".to_owned()),
        "no prefix with one upstream"
    );
    assert_eq!(health(&health_url).await.0, 200);

    let (listen, _) = common::listening(&["--tools", "--count", "1", &url]).await;
    flaky.kill();
    let n = common::notification(listen).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert!(tools(&url).await.is_empty(), "absent while down");
    assert_eq!(health(&health_url).await.0, 503);

    flaky.revive();
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !tools(&url).await.contains(&"echo".to_owned()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the member never came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let r = ok_json(&mcpcore(&["call", &url, "echo", "text=back"], "").await);
    assert_eq!(r["content"][0]["text"], "back");
    let _ = std::fs::remove_dir_all(dir);
}

/// The official server-everything (TypeScript, legacy era) and demo-server behind one gateway.
#[tokio::test]
async fn server_everything_and_demo_server_behind_one_gateway() {
    let everything = npm_package(
        "@modelcontextprotocol/server-everything",
        "2026.8.31",
        "dist/index.js",
    );
    let demo = example_bin("demo-server").display().to_string();
    let (dir, path) = config(
        "mixed.json",
        &serde_json::json!({"upstreams": {
            "ev": {"command": ["node", everything.display().to_string(), "stdio"], "allow": ["echo", "get-sum", "trigger-*"]},
            "demo": {"command": [demo], "mode": "modern"}}})
        .to_string(),
    );
    let (_gw, url, _) = gateway(&path).await;
    let all = tools(&url).await;
    assert!(
        all.contains(&"ev__get-sum".to_owned()) && all.contains(&"demo__echo".to_owned()),
        "{all:?}"
    );
    assert!(
        !all.contains(&"ev__get-env".to_owned()),
        "filtered: {all:?}"
    );
    for mode in ["modern", "legacy"] {
        let r = ok_json(
            &mcpcore(
                &["call", "--mode", mode, &url, "ev__get-sum", "a=2", "b=3"],
                "",
            )
            .await,
        );
        assert!(
            r["content"][0]["text"].as_str().unwrap_or("").contains('5'),
            "{r}"
        );
        let r = ok_json(
            &mcpcore(
                &["call", "--mode", mode, &url, "demo__echo", "text=both"],
                "",
            )
            .await,
        );
        assert_eq!(r["content"][0]["text"], "both");
        let o = mcpcore(
            &[
                "call",
                "--mode",
                mode,
                &url,
                "ev__trigger-long-running-operation",
                "duration=1",
                "steps=2",
            ],
            "",
        )
        .await;
        ok_json(&o);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("progress: 2/2"),
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn configuration_errors_name_the_file_and_line() {
    let (dir, path) = config(
        "bad.toml",
        "[upstreams.x]\ncommand = [\"a\"]\nurl = \"http://h/mcp\"\n",
    );
    let o = mcpcore(&["gateway", &path], "").await;
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(&format!("{path}:1: upstreams.x")) && e.contains("not both"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// SUB-07, SUB-01: a client's subscription is held upstream (server-everything sends
/// updates of subscribed resources once its `toggle-subscriber-updates` tool is called), and the
/// upstream's `notifications/resources/updated` reaches the subscriber.
#[tokio::test]
async fn resource_updates_reach_subscribers() {
    let everything = npm_package(
        "@modelcontextprotocol/server-everything",
        "2026.8.31",
        "dist/index.js",
    );
    let (dir, path) = config(
        "subs.json",
        &serde_json::json!({"upstreams": {"ev": {
            "command": ["node", everything.display().to_string(), "stdio"]}}})
        .to_string(),
    );
    let uri = "demo://resource/static/document/features.md";
    // A legacy client subscribes with `resources/subscribe`, a 2026-07-28 one on its listen
    // stream (SUB-01): each is held upstream on its own (a fresh gateway each), and heard.
    for mode in ["legacy", "modern"] {
        let (_gw, url, _) = gateway(&path).await;
        let (listen, first) = common::listening(&["--mode", mode, "--count", "1", &url, uri]).await;
        assert!(first.contains(uri), "{mode}: {first}");
        ok_json(&mcpcore(&["call", &url, "toggle-subscriber-updates"], "").await);
        let n = common::notification(listen).await;
        assert_eq!(n["method"], "notifications/resources/updated", "{mode}");
        assert_eq!(n["params"]["uri"], uri, "{mode}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Allow/deny per principal scope (AUTH-06): behind `--auth-jwks`, what a scope allows is listed
/// and callable for its holders only, what a scope denies is hidden from them, and a hidden
/// tool is unknown to them (-32602), as if it did not exist.
#[tokio::test]
async fn allow_and_deny_per_principal_scope() {
    use mcpcore_tests::auth::{claims, jwks, jwks_file, TestKey, ISSUER, RESOURCE};
    let key = TestKey::generate("k1");
    let jwks_path = jwks_file(&jwks(&[&key]));
    let demo = example_bin("demo-server").display().to_string();
    let (dir, path) = config(
        "scopes.toml",
        &format!(
            "[upstreams.demo]\ncommand = [{demo:?}]\ndeny = [\"touch\", \"fail\"]\n\
             [upstreams.demo.scopes.admin]\nallow = [\"touch\"]\n\
             [upstreams.demo.scopes.guest]\ndeny = [\"slow\", \"greet\"]\n"
        ),
    );
    let auth = [
        "--auth-jwks",
        &jwks_path,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        RESOURCE,
    ];
    let (_gw, url, _) = gateway_with(&path, &auth).await;
    let token = |scope: &str| key.sign(&claims("user", scope));
    let list = |scope: &'static str, what: &'static str| {
        let (t, url) = (token(scope), url.clone());
        async move { ok_json(&mcpcore(&["list", &url, what, "--token", &t], "").await) }
    };
    let tools = names(&list("mcp", "tools").await, "tools");
    assert!(tools.contains(&"echo".to_owned()) && tools.contains(&"slow".to_owned()));
    assert!(!tools.contains(&"touch".to_owned()) && !tools.contains(&"fail".to_owned()));
    let admin = names(&list("mcp admin", "tools").await, "tools");
    assert!(admin.contains(&"touch".to_owned()), "{admin:?}");
    assert!(
        !admin.contains(&"fail".to_owned()),
        "no scope allows it: {admin:?}"
    );
    let guest = names(&list("guest", "tools").await, "tools");
    assert!(!guest.contains(&"slow".to_owned()) && guest.contains(&"echo".to_owned()));
    let prompts = names(&list("guest", "prompts").await, "prompts");
    assert!(!prompts.contains(&"greet".to_owned()), "{prompts:?}");

    // Calls straight to the endpoint (the command line would stop at the list): a hidden tool
    // is unknown, a shown one runs.
    let call = |scope: &str, tool: &'static str| {
        let (t, url) = (token(scope), url.clone());
        async move {
            let mut http = HttpClientOptions::default();
            http.headers
                .push(("Authorization".into(), format!("Bearer {t}")));
            let c = Client::builder()
                .connect_http(&url, http)
                .await
                .expect("connect");
            let r = c.call_tool(tool, serde_json::json!({})).await;
            c.close().await;
            r
        }
    };
    match call("mcp", "touch").await {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, -32602);
            assert!(e.message.contains("Unknown tool"), "{e:?}");
        }
        other => panic!("a hidden tool is unknown: {other:?}"),
    }
    call("admin", "touch")
        .await
        .expect("the admin scope allows it");
    assert!(
        matches!(call("guest", "slow").await, Err(ClientError::Rpc(e)) if e.code == -32602),
        "a scope's deny holds for calls too"
    );
    let _ = std::fs::remove_dir_all(dir);
}
