//! `mcpcore` against a server no one here wrote: the official
//! `@modelcontextprotocol/server-everything` (TypeScript SDK, legacy era), installed from npm,
//! over stdio and over Streamable HTTP: list, call with typed `key=value` arguments, progress,
//! an elicitation round, discover.

mod common;

use common::{mcpcore, ok_json, LIMIT};
use mcpcore_tests::interop::npm_package;
use std::process::Stdio;
use std::time::Duration;

const EVERYTHING: &str = "@modelcontextprotocol/server-everything";
const VERSION: &str = "2026.8.31";

/// The same checks whether the server is reached by URL or started after `--`.
async fn exercise(target: &[&str]) {
    let with = |words: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = words.iter().map(|s| (*s).to_owned()).collect();
        if target.first().is_some_and(|t| t.starts_with("http")) {
            v.insert(1, target[0].to_owned());
        } else {
            v.push("--".into());
            v.extend(target.iter().map(|s| (*s).to_owned()));
        }
        v
    };
    let run = |words: &[&str]| {
        let args = with(words);
        async move { mcpcore(&args.iter().map(String::as_str).collect::<Vec<_>>(), "").await }
    };
    let d = ok_json(&run(&["discover", "--quiet"]).await);
    assert_eq!(d["era"], "legacy", "{d}");
    let tools = ok_json(&run(&["list", "--quiet"]).await);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );
    let r = ok_json(&run(&["call", "--quiet", "echo", "message=hi"]).await);
    assert_eq!(r["content"][0]["text"], "Echo: hi");
    // `a=2` is sent as the number the schema asks for.
    let r = ok_json(&run(&["call", "--quiet", "get-sum", "a=2", "b=3"]).await);
    assert!(
        r["content"][0]["text"].as_str().unwrap_or("").contains('5'),
        "{r}"
    );
    let o = run(&[
        "call",
        "--quiet",
        "trigger-long-running-operation",
        "duration=1",
        "steps=2",
    ])
    .await;
    let r = ok_json(&o);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("completed"),
        "{r}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("progress: 1/2") && err.contains("progress: 2/2"),
        "{err}"
    );
    // An elicitation round: asked on stderr; the closed stdin cancels it, which the tool reports.
    let o = run(&["call", "--quiet", "trigger-elicitation-request"]).await;
    let r = ok_json(&o);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("The server asks"),
        "{r}"
    );
    assert!(r["content"].is_array(), "{r}");
    // A value the schema refuses never reaches the server.
    let o = run(&["call", "--quiet", "get-sum", "a=two", "b=3"]).await;
    assert_eq!(o.status.code(), Some(2));
}

/// Make `server.listen(port, ...)` bind 127.0.0.1 only.
const LOOPBACK: &str = "const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...a) {
  if (typeof a[0] === 'number' || (typeof a[0] === 'string' && /^[0-9]+$/.test(a[0]))) a.splice(1, 0, '127.0.0.1');
  return listen.apply(this, a);
};
";

#[tokio::test]
async fn calls_the_official_everything_server_over_stdio_and_http() {
    let entry = npm_package(EVERYTHING, VERSION, "dist/index.js");
    let entry = entry.display().to_string();
    exercise(&["node", &entry, "stdio"]).await;

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    // The server listens on every interface; a preload keeps it on loopback.
    let preload = std::env::temp_dir().join(format!("mcpcore-loopback-{}.cjs", std::process::id()));
    std::fs::write(&preload, LOOPBACK).expect("write the preload");
    let _server = tokio::process::Command::new("node")
        .arg("--require")
        .arg(&preload)
        .args([entry.as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything over HTTP");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = tokio::time::Instant::now() + LIMIT;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "server-everything did not listen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    exercise(&[&url]).await;
}
