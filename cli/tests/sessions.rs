//! `mcpcore serve`'s server processes: by default one per legacy client session (started at the
//! session's first call, declaring that client's capabilities, stopped when the session ends),
//! bounded by `--max-upstreams`; with `--shared` one for every client (plus one per client
//! capability set in front of a legacy server). Each process start is counted by the `sh`
//! wrapper that runs the demo server.

mod common;

use common::{mcpcore, serve_with, LIMIT};
use mcpcore::client::{Client, ClientError, ConnectMode, HttpClientOptions};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// A demo-server command that appends its pid to a file each time it starts.
struct Starts {
    dir: PathBuf,
    file: PathBuf,
    script: String,
}

impl Starts {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcpcore-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("pids");
        let demo = mcpcore_tests::example_bin("demo-server");
        let script = format!("echo $$ >> '{}'; exec '{}'", file.display(), demo.display());
        Self { dir, file, script }
    }

    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(&self.file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn last(&self) -> u32 {
        *self.pids().last().expect("a process started")
    }
}

impl Drop for Starts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether process `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

async fn legacy(url: &str) -> Client {
    Client::builder()
        .mode(ConnectMode::Legacy)
        .connect_http(url, HttpClientOptions::default())
        .await
        .expect("a legacy session")
}

async fn echo(c: &Client, text: &str) -> Result<(), ClientError> {
    let r = c.call_tool("echo", json!({ "text": text })).await?;
    assert_eq!(r.content[0]["text"], text);
    Ok(())
}

async fn bridge(flags: &[&str], s: &Starts) -> (tokio::process::Child, String) {
    serve_with(flags, &["sh", "-c", &s.script]).await
}

#[tokio::test]
async fn each_legacy_session_gets_a_server_process_of_its_own_until_it_ends() {
    let s = Starts::new("per-session");
    let (_bridge, url) = bridge(&[], &s).await;
    assert_eq!(s.pids().len(), 1, "the main process lists the tools");
    let (a, b) = (legacy(&url).await, legacy(&url).await);
    assert_eq!(
        s.pids().len(),
        1,
        "a session's process starts at its first call"
    );
    echo(&a, "a1").await.expect("a's first call");
    let pa = s.last();
    echo(&b, "b1").await.expect("b's first call");
    let pb = s.last();
    assert_ne!(pa, pb, "one process per session");
    echo(&a, "a2").await.expect("a again");
    echo(&b, "b2").await.expect("b again");
    assert_eq!(
        s.pids().len(),
        3,
        "later calls stay on the session's process"
    );

    a.close().await; // DELETE ends the session
    let deadline = tokio::time::Instant::now() + LIMIT;
    while alive(pa) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the ended session's process was never stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(alive(pb), "the other session's process runs on");
    echo(&b, "b3").await.expect("b after a ended");
    assert_eq!(s.pids().len(), 3);
}

#[tokio::test]
async fn shared_serves_every_session_from_one_process() {
    let s = Starts::new("shared");
    let (_bridge, url) = bridge(&["--shared"], &s).await;
    let (a, b) = (legacy(&url).await, legacy(&url).await);
    echo(&a, "a1").await.expect("a");
    echo(&b, "b1").await.expect("b");
    a.close().await;
    echo(&b, "b2").await.expect("b after a ended");
    assert_eq!(s.pids().len(), 1, "{:?}", s.pids());
}

/// `--per-capabilities`: a legacy server hears each caller's capabilities. Two sessions that
/// declare the same (none) share one more process; the main one declares every request the
/// bridge can pass on.
#[tokio::test]
async fn per_capabilities_serves_each_capability_set_from_its_own_process() {
    let s = Starts::new("per-capabilities");
    let (_bridge, url) = bridge(&["--shared", "--per-capabilities"], &s).await;
    let (a, b) = (legacy(&url).await, legacy(&url).await);
    echo(&a, "a1").await.expect("a");
    let pa = s.last();
    echo(&b, "b1").await.expect("b");
    assert_eq!(s.pids().len(), 2, "{:?}", s.pids());
    assert_eq!(s.last(), pa, "the same set, the same process");
}

#[tokio::test]
async fn sessions_beyond_max_upstreams_get_a_clear_error() {
    let s = Starts::new("max-upstreams");
    let (_bridge, url) = bridge(&["--max-upstreams", "1"], &s).await;
    let (a, b) = (legacy(&url).await, legacy(&url).await);
    echo(&a, "a")
        .await
        .expect("the first session has its process");
    match echo(&b, "b").await {
        Err(ClientError::Rpc(e)) => {
            assert_eq!(e.code, -32603);
            assert!(e.message.contains("already keeps 1 connections"), "{e:?}");
        }
        other => panic!("the second session is refused, not {other:?}"),
    }
    a.close().await;
    // Once a's process is stopped, b gets one.
    let deadline = tokio::time::Instant::now() + LIMIT;
    while echo(&b, "b").await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "b never got a process"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn redis_workers_need_a_shared_server() {
    let key = format!("{}=", "A".repeat(43));
    let o = mcpcore(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--redis",
            "redis://127.0.0.1:1",
            "--request-state-key",
            &key,
            "--",
            "true",
        ],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("add --shared"), "{err}");
}
