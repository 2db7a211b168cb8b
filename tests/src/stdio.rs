//! A real stdio peer: spawns a server binary and talks newline-delimited JSON-RPC over pipes.

use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

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
}

impl StdioPeer {
    /// Spawn `exe` with `args`.
    pub fn spawn(exe: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn server");
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
        }
    }

    /// Spawn the demo server.
    pub fn demo() -> Self {
        Self::spawn(&crate::example_bin("demo-server"), &[])
    }

    /// Write raw bytes (no newline added).
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// Write one message and a newline; remembers request methods for result validation.
    pub async fn send(&mut self, msg: &Value) {
        if let (Some(id), Some(m)) = (msg.get("id"), msg.get("method").and_then(Value::as_str)) {
            self.methods.insert(id.to_string(), m.to_owned());
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
