//! A small real HTTP/1.1 client over a raw `TcpStream`, with its own chunked decoder and SSE
//! parser (nothing about the server's framing is assumed). Every JSON-RPC message it reads is
//! validated against the era's official schema.

use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::schema::{validate_message, Era};

/// Bound on every network wait.
pub const WAIT: Duration = Duration::from_secs(10);

/// A response whose head was read; the body is read on demand.
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    remaining: Option<usize>,
    decoded: Vec<u8>,
    done: bool,
}

/// One SSE event as parsed by the test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SseEvent {
    /// `id:` field.
    pub id: Option<String>,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// `retry:` field.
    pub retry: Option<u64>,
    /// True when the block held only comment lines.
    pub comment: bool,
}

/// Send one raw request (`body` as given, `Content-Length` added unless `chunked`) and read the
/// response head.
pub async fn raw_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpReply {
    let mut s = tokio::time::timeout(WAIT, TcpStream::connect(addr))
        .await
        .expect("connect timeout")
        .expect("connect");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{}\r\n", addr.port()));
    }
    let mut has_len = false;
    let mut chunked = false;
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("content-length") {
            has_len = true;
        }
        if k.eq_ignore_ascii_case("transfer-encoding") {
            chunked = true;
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !has_len && !chunked && (method == "POST" || !body.is_empty()) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).await.expect("write head");
    if chunked {
        for part in body.chunks(64 * 1024) {
            let frame = format!("{:x}\r\n", part.len());
            if s.write_all(frame.as_bytes()).await.is_err()
                || s.write_all(part).await.is_err()
                || s.write_all(b"\r\n").await.is_err()
            {
                break; // the server may refuse mid-body
            }
        }
        let _ = s.write_all(b"0\r\n\r\n").await;
    } else if !body.is_empty() {
        let _ = s.write_all(body).await;
    }
    read_head(s).await
}

/// Send `bytes` exactly as given (a whole request, head and body) and read the response head:
/// for requests the regular helpers would correct (no `Host`, HTTP/1.0).
pub async fn raw_bytes(addr: SocketAddr, bytes: &[u8]) -> HttpReply {
    let mut s = tokio::time::timeout(WAIT, TcpStream::connect(addr))
        .await
        .expect("connect timeout")
        .expect("connect");
    s.write_all(bytes).await.expect("write request");
    read_head(s).await
}

async fn read_line(
    r: &mut BufReader<TcpStream>,
    l: &mut String,
) -> Result<std::io::Result<usize>, tokio::time::error::Elapsed> {
    l.clear();
    tokio::time::timeout(WAIT, r.read_line(l)).await
}

async fn read_head(s: TcpStream) -> HttpReply {
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    read_line(&mut reader, &mut line)
        .await
        .expect("status line timeout")
        .expect("status line");
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        read_line(&mut reader, &mut line)
            .await
            .expect("header timeout")
            .expect("header");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').expect("header line");
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    // HTTP-05: every SSE response, whatever produced it, disables proxy buffering and caching.
    if get("content-type").is_some_and(|v| v.starts_with("text/event-stream")) {
        assert_eq!(
            get("x-accel-buffering").as_deref(),
            Some("no"),
            "SSE without X-Accel-Buffering: no"
        );
        assert_eq!(
            get("cache-control").as_deref(),
            Some("no-cache"),
            "SSE without Cache-Control: no-cache"
        );
    }
    let chunked = get("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let remaining = get("content-length").and_then(|v| v.parse().ok());
    HttpReply {
        status,
        headers,
        reader,
        chunked,
        remaining: if chunked { None } else { remaining },
        decoded: Vec::new(),
        done: !chunked && remaining.unwrap_or(0) == 0,
    }
}

impl HttpReply {
    /// A header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        let n = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.as_str())
    }

    /// The media type of the body.
    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// Read more body bytes into `decoded`; false at the end of the body.
    async fn fill(&mut self) -> bool {
        if self.done {
            return false;
        }
        if self.chunked {
            let mut line = String::new();
            let n = tokio::time::timeout(WAIT, self.reader.read_line(&mut line))
                .await
                .expect("chunk size timeout")
                .unwrap_or(0);
            if n == 0 {
                self.done = true;
                return false;
            }
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                .unwrap_or_else(|_| panic!("bad chunk size line {line:?}"));
            if size == 0 {
                let mut end = String::new();
                let _ = tokio::time::timeout(WAIT, self.reader.read_line(&mut end)).await;
                self.done = true;
                return false;
            }
            let mut buf = vec![0u8; size + 2];
            tokio::time::timeout(WAIT, self.reader.read_exact(&mut buf))
                .await
                .expect("chunk timeout")
                .expect("chunk");
            self.decoded.extend_from_slice(&buf[..size]);
            true
        } else {
            let want = self.remaining.unwrap_or(usize::MAX).min(64 * 1024);
            let mut buf = vec![0u8; want];
            let n = tokio::time::timeout(WAIT, self.reader.read(&mut buf))
                .await
                .expect("body timeout")
                .unwrap_or(0);
            if n == 0 {
                self.done = true;
                return false;
            }
            self.decoded.extend_from_slice(&buf[..n]);
            if let Some(r) = &mut self.remaining {
                *r -= n;
                if *r == 0 {
                    self.done = true;
                }
            }
            true
        }
    }

    /// The whole body.
    pub async fn body(&mut self) -> Vec<u8> {
        while self.fill().await {}
        std::mem::take(&mut self.decoded)
    }

    /// The whole body as JSON.
    pub async fn json(&mut self) -> Value {
        let b = self.body().await;
        serde_json::from_slice(&b)
            .unwrap_or_else(|e| panic!("non-JSON body {:?}: {e}", String::from_utf8_lossy(&b)))
    }

    /// The next SSE event (comments included), or `None` when the stream ended.
    pub async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(i) = find_blank_line(&self.decoded) {
                let mut block: Vec<u8> = self.decoded.drain(..i.1).collect();
                block.truncate(i.0);
                return Some(parse_event(&String::from_utf8_lossy(&block)));
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// The next event that carries data (skips comments and priming events).
    pub async fn next_data_event(&mut self) -> Option<SseEvent> {
        loop {
            let e = self.next_event().await?;
            if !e.comment && !e.data.is_empty() {
                return Some(e);
            }
        }
    }

    /// Drop the connection (closes the stream from the client side).
    pub fn close(self) {
        drop(self);
    }
}

/// Position of the first blank line: (end of block, bytes to drop including the separator).
fn find_blank_line(b: &[u8]) -> Option<(usize, usize)> {
    for i in 0..b.len() {
        if b[i..].starts_with(b"\n\n") {
            return Some((i, i + 2));
        }
        if b[i..].starts_with(b"\r\n\r\n") {
            return Some((i, i + 4));
        }
    }
    None
}

fn parse_event(block: &str) -> SseEvent {
    let mut e = SseEvent::default();
    let mut data: Vec<&str> = Vec::new();
    let mut only_comments = true;
    for line in block.lines() {
        if line.starts_with(':') {
            continue;
        }
        only_comments = false;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "id" => e.id = Some(value.to_owned()),
            "data" => data.push(value),
            "retry" => e.retry = value.parse().ok(),
            _ => {}
        }
    }
    e.data = data.join("\n");
    e.comment = only_comments;
    e
}

/// What one POST produced, every message schema-checked.
#[derive(Debug)]
pub struct Exchange {
    /// HTTP status.
    pub status: u16,
    /// Headers (lower-case names).
    pub headers: Vec<(String, String)>,
    /// `true` when the answer was an SSE stream.
    pub sse: bool,
    /// Every JSON-RPC message received, in order (notifications, then the response).
    pub messages: Vec<Value>,
}

impl Exchange {
    /// A header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// The last message (the response).
    pub fn last(&self) -> &Value {
        self.messages.last().expect("no message in the exchange")
    }
    /// The error code of the response, if it is an error.
    pub fn code(&self) -> Option<i64> {
        self.last().pointer("/error/code").and_then(Value::as_i64)
    }
    /// The text of the response's first content block (a tool result); panics without one.
    pub fn text(&self) -> String {
        self.last()
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no text result in {:?}", self.messages))
            .to_owned()
    }
}

/// Validate one message received on `era`, answering `method`.
pub fn check(era: Era, msg: &Value, method: Option<&str>) {
    let m = if msg.get("method").is_some() {
        None
    } else {
        method
    };
    if let Err(e) = validate_message(era, msg, m) {
        panic!("schema violation ({era:?}) in {msg}: {e}");
    }
}

/// Read a reply to the end: one JSON body or a whole SSE stream.
pub async fn collect(mut r: HttpReply, era: Era, method: Option<&str>) -> Exchange {
    let sse = r.content_type().starts_with("text/event-stream");
    let mut messages = Vec::new();
    if sse {
        while let Some(e) = r.next_data_event().await {
            let v: Value = serde_json::from_str(&e.data)
                .unwrap_or_else(|err| panic!("SSE data is not JSON {:?}: {err}", e.data));
            check(era, &v, method);
            messages.push(v);
        }
    } else {
        let b = r.body().await;
        if !b.is_empty() && r.content_type().starts_with("application/json") {
            let v: Value = serde_json::from_slice(&b).expect("JSON body");
            check(era, &v, method);
            messages.push(v);
        }
    }
    Exchange {
        status: r.status,
        headers: r.headers.clone(),
        sse,
        messages,
    }
}

/// A client for one server address.
#[derive(Debug, Clone)]
pub struct McpHttp {
    /// Server address.
    pub addr: SocketAddr,
    /// Endpoint path.
    pub path: String,
    /// Legacy session id once initialized.
    pub session: Option<String>,
    /// Negotiated legacy version.
    pub version: String,
}

/// Standard headers of a modern request for `method` (with `Mcp-Name` when given).
pub fn modern_headers(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![
        ("Content-Type".into(), "application/json".into()),
        (
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ("Mcp-Method".into(), method.into()),
    ];
    if let Some(n) = name {
        h.push(("Mcp-Name".into(), n.into()));
    }
    h
}

impl McpHttp {
    /// A client for `addr` on `/mcp`.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            path: "/mcp".into(),
            session: None,
            version: "2025-11-25".into(),
        }
    }

    /// The same client (session, version) addressed to another server: a worker of the same
    /// deployment, as a load balancer without sticky sessions would pick.
    #[must_use]
    pub fn at(&self, addr: SocketAddr) -> Self {
        Self {
            addr,
            ..self.clone()
        }
    }

    /// POST raw bytes with the given headers.
    pub async fn post_raw(&self, headers: &[(String, String)], body: &[u8]) -> HttpReply {
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        raw_request(self.addr, "POST", &self.path, &h, body).await
    }

    /// POST a message with explicit headers and read the answer to the end.
    pub async fn post(&self, headers: &[(String, String)], msg: &Value, era: Era) -> Exchange {
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let r = self.post_raw(headers, msg.to_string().as_bytes()).await;
        collect(r, era, method.as_deref()).await
    }

    /// A modern request with correct headers (`Mcp-Name` derived from the params).
    pub async fn modern(&self, id: i64, method: &str, mut params: Value) -> Exchange {
        params["_meta"] = crate::stdio::envelope(json!({}));
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(&modern_headers(method, name.as_deref()), &msg, Era::Modern)
            .await
    }

    /// Headers of a legacy request on the current session.
    pub fn legacy_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("MCP-Protocol-Version".into(), self.version.clone()),
        ];
        if let Some(s) = &self.session {
            h.push(("Mcp-Session-Id".into(), s.clone()));
        }
        h
    }

    /// `initialize` (declaring sampling and roots) + `notifications/initialized`; stores the
    /// session id.
    pub async fn initialize(&mut self) -> Exchange {
        self.initialize_with(json!({"sampling": {}, "roots": {}}))
            .await
    }

    /// `initialize` declaring `capabilities` + `notifications/initialized`; stores the session id.
    pub async fn initialize_with(&mut self, capabilities: Value) -> Exchange {
        let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": self.version, "capabilities": capabilities,
            "clientInfo": {"name": "http-wire-test", "version": "1"}}});
        let h: Vec<(String, String)> = self
            .legacy_headers()
            .into_iter()
            .filter(|(k, _)| k != "MCP-Protocol-Version")
            .collect();
        let ex = self.post(&h, &msg, Era::Legacy).await;
        assert_eq!(ex.status, 200, "initialize failed: {:?}", ex.messages);
        self.session = ex.header("mcp-session-id").map(str::to_owned);
        assert!(self.session.is_some(), "no Mcp-Session-Id on initialize");
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(&self.legacy_headers(), &n, Era::Legacy).await;
        assert_eq!(r.status, 202);
        ex
    }

    /// A legacy request on the session.
    pub async fn legacy(&self, id: i64, method: &str, params: Value) -> Exchange {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(&self.legacy_headers(), &msg, Era::Legacy).await
    }

    /// Open a GET stream on the session (optionally resuming).
    pub async fn get(&self, last_event_id: Option<&str>) -> HttpReply {
        let sid = self.session.clone().unwrap_or_default();
        let mut h = vec![
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", sid.as_str()),
            ("MCP-Protocol-Version", self.version.as_str()),
        ];
        if let Some(l) = last_event_id {
            h.push(("Last-Event-ID", l));
        }
        raw_request(self.addr, "GET", &self.path, &h, b"").await
    }

    /// DELETE the session.
    pub async fn delete(&self) -> u16 {
        let sid = self.session.clone().unwrap_or_default();
        let h = [("Mcp-Session-Id", sid.as_str())];
        let mut r = raw_request(self.addr, "DELETE", &self.path, &h, b"").await;
        let _ = r.body().await;
        r.status
    }
}

/// Start an example server (`--http 127.0.0.1:0` among `args`); its address comes from the line
/// it prints on stderr. The child is killed when dropped.
pub async fn spawn_example(bin: &str, args: &[&str]) -> (tokio::process::Child, SocketAddr) {
    match try_spawn_example(bin, args).await {
        Ok(r) => r,
        Err(e) => panic!("{bin} did not start: {e}"),
    }
}

/// As [`spawn_example`], but a server that prints something else first (it could not listen on
/// a fixed port another process took, say) is an `Err` carrying what it printed, so a caller
/// that picked the port can try another.
pub async fn try_spawn_example(
    bin: &str,
    args: &[&str],
) -> Result<(tokio::process::Child, SocketAddr), String> {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(crate::example_bin(bin))
        .args(args)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let line = match tokio::time::timeout(WAIT, lines.next_line()).await {
        Ok(Ok(Some(line))) => line,
        Ok(Ok(None)) => return Err("exited without printing its address".into()),
        Ok(Err(e)) => return Err(format!("stderr: {e}")),
        Err(_) => return Err("no address line in time".into()),
    };
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|url| url.trim_end_matches("/mcp").parse().ok());
    match addr {
        Some(addr) => Ok((child, addr)),
        None => Err(line),
    }
}
