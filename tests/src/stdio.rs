//! A real stdio peer: spawns a server binary and talks newline-delimited JSON-RPC over pipes.

use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::schema::{validate_message, Era};

/// Default wait for one message.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(10);

/// A server child process driven over its stdin/stdout.
pub struct StdioPeer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
    /// Which schema incoming messages are checked against.
    pub era: Era,
    methods: HashMap<String, String>,
    backlog: VecDeque<Value>,
    next_id: i64,
    stderr: Option<ChildStderr>,
}

impl StdioPeer {
    /// Spawn `exe` with `args` (stderr discarded).
    pub fn spawn(exe: &Path, args: &[&str]) -> Self {
        Self::spawn_with(exe, args, false)
    }

    /// Spawn `exe` with `args`; with `capture_stderr`, [`StdioPeer::stderr_text`] reads it.
    pub fn spawn_with(exe: &Path, args: &[&str], capture_stderr: bool) -> Self {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if capture_stderr {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true)
            .spawn()
            .expect("spawn server");
        let stderr = child.stderr.take();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            stdout,
            era: Era::Legacy,
            methods: HashMap::new(),
            backlog: VecDeque::new(),
            next_id: 1000,
            stderr,
        }
    }

    /// Spawn the demo server.
    pub fn demo() -> Self {
        Self::spawn(&crate::example_bin("demo-server"), &[])
    }

    /// Spawn the fixture server (`tests/src/bin/wire-server.rs`) with flags.
    pub fn wire(args: &[&str]) -> Self {
        Self::spawn(&crate::wire_server_bin(), args)
    }

    /// Spawn the fixture server, initialize it at 2025-11-25 with `capabilities`.
    pub async fn wire_ready(args: &[&str], capabilities: Value) -> Self {
        let mut p = Self::wire(args);
        let r = p.initialize("2025-11-25", capabilities).await;
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        p
    }

    /// Everything the server wrote to stderr until it closed it (bounded wait).
    pub async fn stderr_text(&mut self, wait: Duration) -> String {
        let mut out = String::new();
        if let Some(mut e) = self.stderr.take() {
            let _ = tokio::time::timeout(wait, e.read_to_string(&mut out)).await;
        }
        out
    }

    /// A fresh request id.
    pub fn fresh_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Send a request with an explicit id (no waiting).
    pub async fn send_request(&mut self, id: &Value, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// Send a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Answer a server→client request with a result.
    pub async fn answer(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// `tools/call` and wait for its response.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Receive until a message satisfies `pred`; the others are returned alongside it.
    pub async fn recv_until(&mut self, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let mut others = Vec::new();
        loop {
            let m = self.recv().await;
            if pred(&m) {
                return (m, others);
            }
            others.push(m);
        }
    }

    /// Receive until a notification with `method` arrives.
    pub async fn notification(&mut self, method: &str) -> (Value, Vec<Value>) {
        self.recv_until(|m| m["method"] == method && m.get("id").is_none())
            .await
    }

    /// Receive until a server→client request with `method` arrives.
    pub async fn server_request(&mut self, method: &str) -> (Value, Vec<Value>) {
        self.recv_until(|m| m["method"] == method && m.get("id").is_some())
            .await
    }

    /// Assert that nothing arrives within `wait` (a short, bounded settle period).
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Some(m) = self.try_recv(wait).await {
            panic!("expected no message, got {m}");
        }
    }

    /// Write raw bytes (no newline added).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// Write one message and a newline; remembers request methods for result validation.
    pub async fn send(&mut self, msg: &Value) {
        let items = match msg {
            Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        for item in items {
            if let (Some(id), Some(m)) =
                (item.get("id"), item.get("method").and_then(Value::as_str))
            {
                self.methods.insert(id.to_string(), m.to_owned());
            }
        }
        self.send_raw(format!("{msg}\n").as_bytes()).await;
    }

    /// Close stdin (EOF for the server).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Next message (validated against the era's schema), or `None` on EOF/timeout.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        if let Some(m) = self.backlog.pop_front() {
            return Some(m);
        }
        let line = tokio::time::timeout(wait, self.stdout.next_line())
            .await
            .ok()?
            .ok()??;
        let msg: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("server wrote non-JSON {line:?}: {e}"));
        let items: Vec<Value> = match &msg {
            Value::Array(a) => a.clone(),
            _ => vec![msg.clone()],
        };
        for item in &items {
            let method = item
                .get("id")
                .and_then(|id| self.methods.get(&id.to_string()))
                .cloned();
            if let Err(e) = validate_message(self.era, item, method.as_deref()) {
                panic!("schema violation ({:?}) in {item}: {e}", self.era);
            }
        }
        Some(msg)
    }

    /// Next message; panics on timeout.
    pub async fn recv(&mut self) -> Value {
        self.try_recv(RECV_TIMEOUT)
            .await
            .expect("no message from the server within the timeout")
    }

    /// Receive until the response with `id`; other messages are returned alongside.
    pub async fn response(&mut self, id: &Value) -> (Value, Vec<Value>) {
        let mut others = Vec::new();
        loop {
            let m = self.recv().await;
            if m.get("id") == Some(id) && m.get("method").is_none() {
                return (m, others);
            }
            others.push(m);
        }
    }

    /// Send a request with a fresh id and wait for its response.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let (resp, others) = self.response(&id).await;
        self.backlog.extend(others);
        resp
    }

    /// A legacy handshake at `version`, then `notifications/initialized`.
    pub async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        self.era = Era::Legacy;
        let r = self
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "wire-test", "version": "1"}}),
            )
            .await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    /// Wait for the process to exit, bounded.
    pub async fn wait_exit(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()
    }
}

/// A modern `_meta` envelope with the given client capabilities.
pub fn envelope(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
    })
}
