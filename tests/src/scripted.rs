//! A scripted, deliberately misbehaving Streamable HTTP server for the client's fault tests: a
//! raw HTTP/1.1 listener on 127.0.0.1 that hands every request to a closure deciding the exact
//! bytes to answer (any status, any body, an SSE stream cut short), to hang, or to drop the
//! connection. It records every request it saw.

use percent_encoding::percent_decode_str;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// One request as the scripted server saw it.
#[derive(Debug, Clone)]
pub struct Req {
    /// The HTTP method.
    pub method: String,
    /// The request head, lowercased.
    pub head: String,
    /// The JSON body (`null` when none or unreadable).
    pub body: Value,
    /// The request target as sent (path and query, case kept).
    pub target: String,
    /// The body as text (form bodies).
    pub text: String,
    /// The request head as sent (case kept: signed header values).
    pub raw_head: String,
    /// The body's bytes (binary bodies: OTLP protobuf).
    pub bytes: Vec<u8>,
}

impl Req {
    /// The JSON-RPC method.
    pub fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }
    /// The JSON-RPC id (`null` when none).
    pub fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
    /// `params.name` (the tool of a `tools/call`).
    pub fn tool(&self) -> &str {
        self.body
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// What the scripted server does with a request.
pub enum Act {
    /// Write these bytes (a whole HTTP response) and close.
    Reply(Vec<u8>),
    /// Hold the connection open and never answer.
    Hang,
    /// Close the connection without answering.
    Drop,
}

/// A whole HTTP response: status, content type (none when empty), extra header lines
/// (each ending in CRLF) and body; the connection closes after it.
pub fn raw(status: u16, ctype: &str, extra: &str, body: &[u8]) -> Act {
    let mut r = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n{extra}",
        body.len()
    );
    if !ctype.is_empty() {
        r.push_str(&format!("content-type: {ctype}\r\n"));
    }
    r.push_str("\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    Act::Reply(r)
}

/// A JSON response.
pub fn json_resp(status: u16, v: &Value) -> Act {
    raw(status, "application/json", "", v.to_string().as_bytes())
}

/// A JSON-RPC error response.
pub fn rpc_error(id: &Value, code: i64, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": "odd"});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// A JSON-RPC result response.
pub fn rpc_result(id: &Value, r: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": r})
}

/// An SSE response of `events` (no length: the stream ends when the connection closes).
pub fn sse(events: &str) -> Act {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    Act::Reply([head.as_bytes(), events.as_bytes()].concat())
}

/// A plain legacy server (session `s1`, GET 405), the default of every script.
pub fn legacy(r: &Req) -> Act {
    match (r.method.as_str(), r.rpc_method()) {
        ("GET", _) => raw(405, "", "", b""),
        ("DELETE", _) => raw(200, "", "", b""),
        (_, "initialize") => {
            let v = rpc_result(
                &r.id(),
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            let body = v.to_string();
            raw(
                200,
                "application/json",
                "mcp-session-id: s1\r\n",
                body.as_bytes(),
            )
        }
        (_, "server/discover") => raw(404, "", "", b""),
        _ if r.body.get("id").is_none() => raw(202, "", "", b""),
        (_, "ping") => json_resp(200, &rpc_result(&r.id(), json!({}))),
        (_, "tools/call") => json_resp(
            200,
            &rpc_result(
                &r.id(),
                json!({"content": [{"type": "text", "text": "ok"}]}),
            ),
        ),
        _ => json_resp(200, &rpc_error(&r.id(), -32601, None)),
    }
}

type Script = Arc<dyn Fn(&Req) -> Act + Send + Sync>;

/// A scripted HTTP/1.1 server on 127.0.0.1 (one request per connection).
pub struct Scripted {
    /// The endpoint URL.
    pub url: String,
    seen: Arc<Mutex<Vec<Req>>>,
    /// Cancel to stop accepting and drop every open connection.
    pub stop: CancellationToken,
}

impl Scripted {
    /// Serve `script` until dropped.
    pub async fn start(script: impl Fn(&Req) -> Act + Send + Sync + 'static) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", l.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let script: Script = Arc::new(script);
        let (s, st) = (seen.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let conn = tokio::select! {
                    c = l.accept() => c,
                    () = st.cancelled() => return,
                };
                let Ok((sock, _)) = conn else { return };
                let (script, s, st) = (script.clone(), s.clone(), st.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = serve_one(sock, script, s) => {}
                        () = st.cancelled() => {}
                    }
                });
            }
        });
        Self { url, seen, stop }
    }

    /// Every request seen so far.
    pub fn requests(&self) -> Vec<Req> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve_one(mut sock: TcpStream, script: Script, seen: Arc<Mutex<Vec<Req>>>) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match sock.read(&mut chunk).await {
            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match sock.read(&mut chunk).await {
            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    }
    let req = Req {
        method: head.split(' ').next().unwrap_or_default().to_owned(),
        head: head.to_ascii_lowercase(),
        body: serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null),
        target: head.split(' ').nth(1).unwrap_or_default().to_owned(),
        text: String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned(),
        raw_head: head.clone(),
        bytes: buf[head_end..head_end + len].to_vec(),
    };
    seen.lock().expect("lock").push(req.clone());
    match script(&req) {
        Act::Reply(bytes) => {
            let _ = sock.write_all(&bytes).await;
            let _ = sock.shutdown().await;
        }
        Act::Hang => std::future::pending::<()>().await,
        Act::Drop => {}
    }
}

/// The `key=value` pairs of a form body or query string, percent-decoded (`+` is a space).
pub fn form(text: &str) -> Vec<(String, String)> {
    text.split(['&', '?'])
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let d = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (d(k), d(v))
        })
        .collect()
}

/// The first value of `k` among `pairs`.
pub fn get<'a>(pairs: &'a [(String, String)], k: &str) -> Option<&'a str> {
    pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

/// `http://<Host>` of a request the scripted server received.
pub fn origin(r: &Req) -> String {
    let host = r
        .head
        .lines()
        .find_map(|l| l.strip_prefix("host:"))
        .unwrap_or_default()
        .trim();
    format!("http://{host}")
}
