//! Helpers for the tasks wire tests (`tests/tasks_modern.rs`, `tests/tasks_legacy.rs`): the
//! `tasks-server` fixture over stdio or HTTP, and one connection type that speaks either, so every
//! rule is checked on both transports with the same code.

use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::era::with_envelope;
use crate::http::{modern_headers, McpHttp};
use crate::{Era, StdioPeer};

/// The extension id.
pub const EXT: &str = "io.modelcontextprotocol/tasks";

/// Client capabilities that opt in to tasks (and can answer elicitations).
pub fn ext_caps() -> Value {
    json!({"elicitation": {}, "extensions": {EXT: {}}})
}

/// The `tasks-server` binary (built if needed).
pub fn bin() -> PathBuf {
    crate::target_bin("tasks-server", "mcpcore-tests")
}

/// A connection to a `tasks-server`: its stdin/stdout, or its HTTP endpoint.
pub enum Conn {
    /// Newline-delimited JSON-RPC over the child's pipes.
    Stdio(StdioPeer),
    /// Streamable HTTP (the child is kept alive with the connection).
    Http(McpHttp, tokio::process::Child),
}

impl Conn {
    /// A `tasks-server` over stdio with `args`, read as `era`.
    pub fn stdio(args: &[&str], era: Era) -> Self {
        let mut p = StdioPeer::spawn(&bin(), args);
        p.era = era;
        Self::Stdio(p)
    }

    /// A `tasks-server` over HTTP on 127.0.0.1 with `args`.
    pub async fn http(args: &[&str]) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut all = vec!["--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut child = tokio::process::Command::new(bin())
            .args(&all)
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn tasks-server");
        let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("address line timeout")
            .expect("read")
            .expect("address line");
        let url = line.split("http://").nth(1).expect("url in line");
        let addr: SocketAddr = url.trim_end_matches("/mcp").parse().expect("addr");
        Self::Http(McpHttp::new(addr), child)
    }

    /// The HTTP client, on an HTTP connection.
    pub fn http_client(&mut self) -> &mut McpHttp {
        match self {
            Self::Http(c, _) => c,
            Self::Stdio(_) => panic!("not an HTTP connection"),
        }
    }

    /// A modern request declaring `caps`; the whole response message (schema-checked).
    pub async fn modern(&mut self, method: &str, params: Value, caps: Value) -> Value {
        match self {
            Self::Stdio(p) => p.modern(method, params, caps).await,
            Self::Http(c, _) => {
                let name = params
                    .get("taskId")
                    .or_else(|| params.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let name =
                    name.filter(|_| mcpcore::protocol::mcp_header::name_key(method).is_some());
                let msg = json!({"jsonrpc": "2.0", "id": 7, "method": method,
                    "params": with_envelope(params, caps)});
                let ex = c
                    .post(&modern_headers(method, name.as_deref()), &msg, Era::Modern)
                    .await;
                ex.last().clone()
            }
        }
    }

    /// Start a legacy session (stdio handshake or HTTP `initialize`) declaring `caps`.
    pub async fn initialize(&mut self, caps: Value) {
        match self {
            Self::Stdio(p) => {
                let r = p.initialize("2025-11-25", caps).await;
                assert!(r.get("result").is_some(), "{r}");
            }
            Self::Http(c, _) => {
                c.initialize().await;
            }
        }
    }

    /// A legacy request on the session; the whole response message (schema-checked).
    pub async fn legacy(&mut self, method: &str, params: Value) -> Value {
        match self {
            Self::Stdio(p) => p.request(method, params).await,
            Self::Http(c, _) => c.legacy(9, method, params).await.last().clone(),
        }
    }

    /// Poll modern `tasks/get` until `done(status)` (bounded); the last result.
    pub async fn modern_until(&mut self, task: &str, done: impl Fn(&str) -> bool) -> Value {
        for _ in 0..200 {
            let r = self
                .modern("tasks/get", json!({"taskId": task}), ext_caps())
                .await;
            let status = r["result"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if done(&status) {
                return r["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {task} never reached the expected status");
    }

    /// Poll legacy `tasks/get` until `done(status)` (bounded); the last result.
    pub async fn legacy_until(&mut self, task: &str, done: impl Fn(&str) -> bool) -> Value {
        for _ in 0..200 {
            let r = self.legacy("tasks/get", json!({"taskId": task})).await;
            let status = r["result"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if done(&status) {
                return r["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {task} never reached the expected status");
    }
}

/// True for a terminal status.
pub fn terminal(s: &str) -> bool {
    matches!(s, "completed" | "failed" | "cancelled")
}
