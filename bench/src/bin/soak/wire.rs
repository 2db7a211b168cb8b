//! The well-behaved side of the wire: one HTTP/1.1 keep-alive connection per client (hyper's
//! low-level client, so the soak decides how many sockets exist), MCP messages of both eras,
//! and the classification of every answer into `ok` or a precise failure kind.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;

pub const LEGACY: &str = "2025-11-25";
pub const MODERN: &str = "2026-07-28";
/// Longest a well-behaved exchange may take before it counts as unanswered.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Conn {
    tx: SendRequest<Full<Bytes>>,
    host: String,
}

pub struct Reply {
    pub status: u16,
    pub session: Option<String>,
    pub sse: bool,
    pub body: Bytes,
}

/// Open a keep-alive connection. `Err` is a failure kind.
pub async fn connect(addr: SocketAddr) -> Result<Conn, String> {
    let s = tokio::time::timeout(CALL_TIMEOUT, TcpStream::connect(addr))
        .await
        .map_err(|_| "connect-timeout".to_owned())?
        .map_err(|e| format!("connect-{:?}", e.kind()))?;
    let _ = s.set_nodelay(true);
    let (tx, conn) = http1::handshake(TokioIo::new(s))
        .await
        .map_err(|_| "handshake".to_owned())?;
    tokio::spawn(conn);
    Ok(Conn {
        tx,
        host: addr.to_string(),
    })
}

impl Conn {
    /// POST `body` to `/mcp` and read the whole answer. `Err` is a failure kind.
    pub async fn post(&mut self, headers: &[(&str, &str)], body: String) -> Result<Reply, String> {
        let mut req = hyper::Request::post("/mcp")
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| "request".to_owned())?;
        let exchange = async {
            self.tx.ready().await.map_err(|_| "closed".to_owned())?;
            let resp = self
                .tx
                .send_request(req)
                .await
                .map_err(|_| "closed".to_owned())?;
            let status = resp.status().as_u16();
            let hdr = |n: &str| {
                resp.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let session = hdr("mcp-session-id");
            let sse = hdr("content-type").is_some_and(|c| c.starts_with("text/event-stream"));
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|_| "body-cut".to_owned())?
                .to_bytes();
            Ok(Reply {
                status,
                session,
                sse,
                body,
            })
        };
        tokio::time::timeout(CALL_TIMEOUT, exchange)
            .await
            .map_err(|_| "timeout".to_owned())?
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

impl Reply {
    /// The JSON-RPC message answering a request: the body, or the SSE event carrying an `id`.
    pub fn answer(&self) -> Option<Value> {
        if !self.sse {
            return serde_json::from_slice(&self.body).ok();
        }
        let text = std::str::from_utf8(&self.body).ok()?;
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim_start()).ok())
            .find(|v| v.get("id").is_some() && v.get("method").is_none())
    }

    /// `ok` when this answers an `echo` of `text`, else the failure kind.
    pub fn echo_outcome(&self, text: &str) -> &'static str {
        if self.status != 200 {
            return status_kind(self.status);
        }
        let Some(v) = self.answer() else {
            return "bad-body";
        };
        if v.get("error").is_some() {
            return "rpc-error";
        }
        if v.pointer("/result/content/0/text").and_then(Value::as_str) == Some(text) {
            "ok"
        } else {
            "wrong-result"
        }
    }
}

/// A stable label for an HTTP status (counters are keyed by `&'static str`).
pub fn status_kind(s: u16) -> &'static str {
    match s {
        200 => "http-200",
        202 => "http-202",
        400 => "http-400",
        404 => "http-404",
        408 => "http-408",
        413 => "http-413",
        429 => "http-429",
        500 => "http-500",
        503 => "http-503",
        _ => "http-other",
    }
}

pub fn modern_envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    })
}

pub fn echo_call(id: u64, text: &str, modern: bool) -> String {
    let mut params = json!({"name": "echo", "arguments": {"text": text}});
    if modern {
        params["_meta"] = modern_envelope();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

pub const MODERN_CALL: [(&str, &str); 3] = [
    ("mcp-protocol-version", MODERN),
    ("mcp-method", "tools/call"),
    ("mcp-name", "echo"),
];

pub fn listen_request(id: u64) -> String {
    let params = json!({"_meta": modern_envelope(), "notifications": {"toolsListChanged": true}});
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})
        .to_string()
}

pub fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"}}})
    .to_string()
}

/// A legacy session: `initialize` then `notifications/initialized` (LC-01). `Err` is the
/// failure kind of the step that failed.
pub async fn open_session(c: &mut Conn) -> Result<String, &'static str> {
    let r = c.post(&[], initialize()).await.map_err(leak_kind)?;
    if r.status != 200 {
        return Err(status_kind(r.status));
    }
    let sid = r.session.ok_or("no-session-id")?;
    let h = [("mcp-protocol-version", LEGACY), ("mcp-session-id", &sid)];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let r = c.post(&h, note).await.map_err(leak_kind)?;
    if r.status != 202 {
        return Err(status_kind(r.status));
    }
    Ok(sid)
}

/// Failure kinds are few and fixed; map the dynamic ones onto static labels.
pub fn leak_kind(k: String) -> &'static str {
    match k.as_str() {
        "closed" => "closed",
        "timeout" => "timeout",
        "body-cut" => "body-cut",
        "handshake" => "handshake",
        "connect-timeout" => "connect-timeout",
        _ if k.starts_with("connect") => "connect-error",
        _ => "other",
    }
}
