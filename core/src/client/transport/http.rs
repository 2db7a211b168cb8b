//! The Streamable HTTP client transport on hyper (REQUIREMENTS HTTP-01…16, LHTTP-01…05,
//! LHTTP-08, HTTP-18).
//!
//! Every message is its own POST with `Accept: application/json, text/event-stream`, sent on a
//! bounded pool of keep-alive connections ([`HttpClientOptions::max_connections`], see `pool`). A request's
//! answer is a JSON body or an SSE stream carrying related notifications (and, legacy, server
//! requests) and then the response; the stream is dropped once the response arrived, and dropping
//! it early is how a modern request is cancelled (HTTP-08). Legacy connections carry
//! `Mcp-Session-Id` and `MCP-Protocol-Version`, open a GET listening stream after the handshake,
//! and DELETE the session on close. Modern requests carry `MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name` and the tool's `Mcp-Param-*` headers.
//!
//! LHTTP-02 session expiry: a 404 answering a request that carried the current session id marks
//! the session ended (whatever the body says, unless it is the request's own `-32601`). The
//! request fails with [`ClientError::SessionExpired`]; the client then forgets the session,
//! re-initializes once without the id and re-sends the request (the server never processed it),
//! see `Client::request_once`. A 404 met elsewhere (a notification POST, resuming a stream whose
//! request may have run) fails only that exchange and renews the session before the next call.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use hyper::{Method, Request, Uri};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::task::AbortHandle;

pub use super::http_options::{ClientTls, HttpClientOptions};
use super::pool::{Hold, Pool, PoolBody};
use super::sse::SseParser;
use super::{BoxFut, ClientTransport, Inbound, InboundTx, OutMsg, WireState};
use crate::client::error::ClientError;
use crate::client::peer::lock;
use crate::client::ClientOptions;
use crate::jsonrpc::{parse_frame, Id, ParsedFrame};
use crate::protocol::envelope::claimed_version;
use crate::protocol::mcp_header::{self, ParamHeader};

const SESSION_HEADER: &str = "mcp-session-id";
/// How many times one request's legacy SSE stream is resumed before giving up.
const MAX_RESUMPTIONS: usize = 5;
/// Reconnection delay when the server sent no `retry:` (milliseconds).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Upper bound on a server-chosen `retry:` delay (milliseconds).
const MAX_RETRY_MS: u64 = 30_000;
const VERSION_HEADER: &str = "mcp-protocol-version";

pub(crate) struct HttpTransport {
    me: Weak<HttpTransport>,
    pool: Arc<Pool>,
    uri: Uri,
    headers: Vec<(HeaderName, HeaderValue)>,
    opts: HttpClientOptions,
    state: Mutex<WireState>,
    session: Mutex<Option<String>>,
    inbound: InboundTx,
    streams: Mutex<HashMap<Id, AbortHandle>>,
    get_stream: Mutex<Option<AbortHandle>>,
    tools: Mutex<HashMap<String, Vec<ParamHeader>>>,
    closed: AtomicBool,
    /// The server answered 404 for the session id still in use (LHTTP-02).
    expired: AtomicBool,
    max_bytes: usize,
    max_depth: usize,
    /// OAuth authorization, when configured (AUTH-06).
    auth: Option<Arc<crate::client::auth::Authorizer>>,
}

impl HttpTransport {
    pub fn new(
        url: &str,
        opts: HttpClientOptions,
        options: &ClientOptions,
        inbound: InboundTx,
    ) -> Result<Arc<Self>, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::InvalidArgument(format!("invalid URL {url:?}: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(ClientError::InvalidArgument(format!(
                "URL {url:?} must start with http:// or https://"
            )));
        }
        let mut headers = Vec::new();
        for (k, v) in &opts.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| ClientError::InvalidArgument(format!("header name {k:?}: {e}")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|e| ClientError::InvalidArgument(format!("header {k} value: {e}")))?;
            headers.push((name, value));
        }
        let pool = Pool::new(&uri, &opts)?;
        let auth = match &opts.auth {
            // Bad auth options (a key that cannot be read, a bad redirect URI) are refused
            // before anything is sent.
            Some(a) => Some(
                crate::client::auth::Authorizer::new(url, a.clone(), &opts.auth_hooks, &opts)
                    .map_err(|e| ClientError::InvalidArgument(format!("auth: {}", e.message())))?,
            ),
            None => None,
        };
        Ok(Arc::new_cyclic(|me| Self {
            me: me.clone(),
            pool,
            uri,
            headers,
            opts,
            state: Mutex::new(WireState::default()),
            session: Mutex::new(None),
            inbound,
            streams: Mutex::new(HashMap::new()),
            get_stream: Mutex::new(None),
            tools: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            expired: AtomicBool::new(false),
            max_bytes: options.max_message_bytes,
            max_depth: options.max_json_depth,
            auth,
        }))
    }

    /// A request builder with the custom headers, and the session and version headers:
    /// `modern_version` is the version of a modern message (its envelope, or the connection's
    /// era for notifications); legacy messages carry the negotiated version and the session id.
    fn base(&self, method: Method, modern_version: Option<&str>) -> hyper::http::request::Builder {
        let mut b = Request::builder().method(method).uri(self.uri.clone());
        for (k, v) in &self.headers {
            b = b.header(k, v);
        }
        if let Some(v) = modern_version {
            return b.header(VERSION_HEADER, v);
        }
        let state = lock(&self.state).clone();
        if let Some(v) = &state.protocol_version {
            b = b.header(VERSION_HEADER, v.as_str());
        }
        if let Some(s) = lock(&self.session).as_deref() {
            b = b.header(SESSION_HEADER, s);
        }
        b
    }

    /// The POST for one message, with the modern mirror headers (HTTP-09, HTTP-15).
    fn post(&self, msg: &OutMsg) -> Result<Request<Full<Bytes>>, ClientError> {
        let (method, params) = match msg {
            OutMsg::Request { method, params, .. } => (Some(method.as_str()), params.as_ref()),
            OutMsg::Notification { method, params } => (Some(method.as_str()), params.as_ref()),
            OutMsg::Response { .. } => (None, None),
        };
        // The body decides the era of a request (its envelope); notifications follow the
        // connection's era.
        let claimed = claimed_version(params.and_then(Value::as_object)).map(str::to_owned);
        let modern_version = claimed.or_else(|| {
            let st = lock(&self.state);
            if st.modern && matches!(msg, OutMsg::Notification { .. }) {
                st.protocol_version.clone()
            } else {
                None
            }
        });
        let mut b = self
            .base(Method::POST, modern_version.as_deref())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let (Some(_), Some(method)) = (&modern_version, method) {
            b = b.header("mcp-method", method);
            let name = mcp_header::name_key(method)
                .and_then(|k| params.and_then(|p| p.get(k)))
                .and_then(Value::as_str);
            if let Some(n) = name {
                b = b.header("mcp-name", mcp_header::encode_value(n));
            }
            if mcp_header::mirrors_arguments(method) {
                if let Some(decls) = name.and_then(|n| lock(&self.tools).get(n).cloned()) {
                    for (k, v) in
                        mcp_header::param_headers(&decls, params.and_then(|p| p.get("arguments")))
                    {
                        b = b.header(k, v);
                    }
                }
            }
        }
        // The trace context travels in the `traceparent` header too, as HTTP instrumentation
        // carries it, so the server's HTTP span joins the trace (the MCP span stays under it).
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        for key in [crate::telemetry::TRACEPARENT, crate::telemetry::TRACESTATE] {
            if let Some(v) = meta.and_then(|m| m.get(key)).and_then(Value::as_str) {
                b = b.header(key, v);
            }
        }
        b.body(Full::new(Bytes::from(msg.encode())))
            .map_err(|e| ClientError::InvalidArgument(format!("cannot build the request: {e}")))
    }

    /// Send on the pool, through the OAuth hook when authorization is configured.
    async fn send_req(
        &self,
        req: Request<Full<Bytes>>,
        hold: Hold,
    ) -> Result<hyper::Response<PoolBody>, ClientError> {
        match &self.auth {
            Some(a) => crate::client::auth::hook::send(a, &self.pool, req, hold).await,
            None => self.pool.send(req, hold).await,
        }
    }

    async fn deliver(&self, bytes: &[u8], want: Option<&Id>) -> bool {
        let values = match parse_frame(bytes, self.max_depth) {
            ParsedFrame::Single(v) => vec![v],
            ParsedFrame::Batch(items) => items,
            ParsedFrame::Error(e) => {
                tracing::warn!(error = %e, "skipping an unreadable message from the server");
                return false;
            }
        };
        let mut answered = false;
        for v in values {
            if let Some(id) = want {
                if v.get("method").is_none() && v.get("id") == Some(&id.to_value()) {
                    answered = true;
                }
            }
            if self.inbound.send(Inbound::Message(v)).await.is_err() {
                return answered;
            }
        }
        answered
    }

    /// Read one request's answer (JSON or SSE); `Err` when it did not contain the response.
    async fn run_request(
        &self,
        id: Id,
        req: Request<Full<Bytes>>,
        initialize: bool,
        session: Option<String>,
    ) {
        let outcome = self.exchange(&id, req, initialize, session).await;
        lock(&self.streams).remove(&id);
        if let Err(e) = outcome {
            let _ = self.inbound.send(Inbound::RequestFailed(id, e)).await;
        }
    }

    async fn exchange(
        &self,
        id: &Id,
        req: Request<Full<Bytes>>,
        initialize: bool,
        sent_session: Option<String>,
    ) -> Result<(), ClientError> {
        let resp = self.send_req(req, Hold::Long).await?;
        let status = resp.status();
        if status == hyper::StatusCode::NOT_FOUND && sent_session.is_some() {
            let bytes = read_limited(&mut resp.into_body(), self.max_bytes)
                .await
                .unwrap_or_default();
            if method_not_found_for(&bytes, id) {
                self.deliver(&bytes, Some(id)).await;
                return Ok(());
            }
            return Err(self.session_gone(sent_session.as_deref()));
        }
        if initialize && status.is_success() {
            // A new session (or a session-less legacy server): whatever ended is behind us.
            self.expired.store(false, Ordering::Release);
            if let Some(s) = resp
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                *lock(&self.session) = Some(s.to_owned());
            }
        }
        let is_sse = content_type(resp.headers()).starts_with("text/event-stream");
        let mut body = resp.into_body();
        if is_sse {
            return self
                .exchange_sse(id, body, status, sent_session.as_deref())
                .await;
        }
        let bytes = read_limited(&mut body, self.max_bytes).await?;
        if !bytes.is_empty() && self.deliver(&bytes, Some(id)).await {
            return Ok(());
        }
        Err(ClientError::Transport(format!(
            "HTTP {status} without a JSON-RPC response"
        )))
    }

    /// Read a request's answer from its SSE stream, resuming the stream when it ends early.
    async fn exchange_sse(
        &self,
        id: &Id,
        mut body: PoolBody,
        status: hyper::StatusCode,
        sent_session: Option<&str>,
    ) -> Result<(), ClientError> {
        let mut last_id = None;
        let mut retry = None;
        if self
            .read_sse(&mut body, id, &mut last_id, &mut retry)
            .await?
        {
            return Ok(());
        }
        // LHTTP-04 SSE polling: a legacy stream that ends without the response is resumed
        // with GET + Last-Event-ID after the server's `retry` delay, a bounded number of times.
        for _ in 0..MAX_RESUMPTIONS {
            let (Some(event_id), true) = (last_id.clone(), lock(&self.session).is_some()) else {
                break;
            };
            let wait = Duration::from_millis(retry.unwrap_or(DEFAULT_RETRY_MS).min(MAX_RETRY_MS));
            tokio::time::sleep(wait).await;
            let mut body = self.resume_sse(&event_id, sent_session).await?;
            if self
                .read_sse(&mut body, id, &mut last_id, &mut retry)
                .await?
            {
                return Ok(());
            }
        }
        Err(ClientError::Closed(format!(
            "the SSE stream (HTTP {status}) ended before the response"
        )))
    }

    /// Reopen an SSE stream after `event_id` (GET + Last-Event-ID) and return its body.
    async fn resume_sse(
        &self,
        event_id: &str,
        sent_session: Option<&str>,
    ) -> Result<PoolBody, ClientError> {
        let req = self
            .base(Method::GET, None)
            .header(ACCEPT, "text/event-stream")
            .header("last-event-id", event_id)
            .body(Full::new(Bytes::new()))
            .map_err(|e| ClientError::InvalidArgument(format!("cannot build the request: {e}")))?;
        let resp = self.send_req(req, Hold::Long).await.map_err(|e| match e {
            ClientError::Transport(m) => ClientError::Transport(format!("SSE resumption: {m}")),
            other => other,
        })?;
        if !resp.status().is_success() {
            if resp.status() == hyper::StatusCode::NOT_FOUND {
                // The session ended: the next call starts a new one. This call may have
                // been processed, so it is not re-sent.
                let _ = self.session_gone(sent_session);
            }
            return Err(ClientError::Closed(format!(
                "resuming the SSE stream failed (HTTP {})",
                resp.status()
            )));
        }
        Ok(resp.into_body())
    }

    /// Read SSE events until the response to `id` arrives (`true`) or the stream ends (`false`),
    /// remembering the last event id and `retry` hint for resumption.
    async fn read_sse(
        &self,
        body: &mut PoolBody,
        id: &Id,
        last_id: &mut Option<String>,
        retry: &mut Option<u64>,
    ) -> Result<bool, ClientError> {
        let mut parser = SseParser::new(self.max_bytes);
        let mut events = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                // A dropped connection ends this stream; resumption decides what happens next.
                break;
            };
            let Ok(chunk) = frame.into_data() else {
                continue;
            };
            parser
                .feed(&chunk, &mut events)
                .map_err(|e| ClientError::Transport(e.to_string()))?;
            if let Some(r) = parser.retry() {
                *retry = Some(r);
            }
            for ev in events.drain(..) {
                if let Some(eid) = &ev.id {
                    *last_id = Some(eid.clone());
                }
                if ev.data.is_empty() {
                    continue;
                }
                if self.deliver(ev.data.as_bytes(), Some(id)).await {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// POST a notification or response and check it was accepted.
    async fn post_oneway(&self, msg: OutMsg) -> Result<(), ClientError> {
        let sent_session = lock(&self.session).clone();
        let req = self.post(&msg)?;
        let resp = tokio::time::timeout(self.opts.post_timeout, self.send_req(req, Hold::Short))
            .await
            .map_err(|_| ClientError::Transport("HTTP POST timed out".into()))??;
        let status = resp.status();
        let mut body = resp.into_body();
        let bytes = read_limited(&mut body, self.max_bytes)
            .await
            .unwrap_or_default();
        if status == hyper::StatusCode::NOT_FOUND && sent_session.is_some() {
            return Err(self.session_gone(sent_session.as_deref()));
        }
        if !status.is_success() {
            return Err(ClientError::Transport(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            )));
        }
        if let OutMsg::Notification { method, .. } = &msg {
            if method == "notifications/initialized" {
                // Wait (bounded) until the server has accepted the GET stream: a server that sends
                // a request unrelated to any POST (e.g. elicitation from a tool without a related
                // request id) drops it when no GET stream is open yet, and the next call races it.
                if let Some(opened) = self.open_get_stream() {
                    let _ = tokio::time::timeout(GET_OPEN_WAIT, opened).await;
                }
            }
        }
        Ok(())
    }

    /// A 404 for `sent`: the session is over if it is still the one in use (a late 404 for an
    /// older session must not end a newer one).
    fn session_gone(&self, sent: Option<&str>) -> ClientError {
        if sent.is_some() && lock(&self.session).as_deref() == sent {
            self.expired.store(true, Ordering::Release);
        }
        ClientError::SessionExpired(
            "the server ended the HTTP session (404); a new one is started on the next call".into(),
        )
    }

    /// The legacy GET listening stream for server messages unrelated to a request (LHTTP-05).
    /// The returned receiver resolves once the server has answered the GET (or refused it).
    fn open_get_stream(&self) -> Option<tokio::sync::oneshot::Receiver<()>> {
        if !self.opts.listen_stream || lock(&self.state).modern {
            return None;
        }
        let me = self.me.upgrade()?;
        let (opened_tx, opened) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let req = match me
                .base(Method::GET, None)
                .header(ACCEPT, "text/event-stream")
                .body(Full::new(Bytes::new()))
            {
                Ok(r) => r,
                Err(_) => return,
            };
            let resp = me.send_req(req, Hold::Long).await;
            let _ = opened_tx.send(());
            let Ok(resp) = resp else {
                return;
            };
            if !resp.status().is_success() {
                tracing::debug!(status = %resp.status(), "no GET listening stream");
                return;
            }
            let mut body = resp.into_body();
            let mut parser = SseParser::new(me.max_bytes);
            let mut events = Vec::new();
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(chunk) = frame.into_data() else {
                    continue;
                };
                if parser.feed(&chunk, &mut events).is_err() {
                    tracing::warn!("GET stream event too large; closing the stream");
                    return;
                }
                for ev in events.drain(..) {
                    if !ev.data.is_empty() {
                        me.deliver(ev.data.as_bytes(), None).await;
                    }
                }
            }
        });
        if let Some(old) = lock(&self.get_stream).replace(task.abort_handle()) {
            old.abort();
        }
        Some(opened)
    }
}

/// How long connecting waits for the server to accept the legacy GET listening stream.
const GET_OPEN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// True when `bytes` is a JSON-RPC `-32601` answering `id` (a method a legacy server does not
/// know, not an ended session).
fn method_not_found_for(bytes: &[u8], id: &Id) -> bool {
    serde_json::from_slice::<Value>(bytes).is_ok_and(|v| {
        v.get("id") == Some(&id.to_value())
            && v.pointer("/error/code").and_then(Value::as_i64)
                == Some(crate::error::codes::METHOD_NOT_FOUND)
    })
}

fn content_type(h: &hyper::HeaderMap) -> String {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

async fn read_limited(body: &mut PoolBody, max: usize) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ClientError::Transport(format!("reading the body failed: {e}")))?;
        if let Ok(d) = frame.into_data() {
            if out.len() + d.len() > max {
                return Err(ClientError::Transport(format!(
                    "response body exceeds {max} bytes"
                )));
            }
            out.extend_from_slice(&d);
        }
    }
    Ok(out)
}

impl ClientTransport for HttpTransport {
    fn send(&self, msg: OutMsg) -> BoxFut<'_, Result<(), ClientError>> {
        Box::pin(async move {
            if self.closed.load(Ordering::Acquire) {
                return Err(ClientError::Closed("the transport is closed".into()));
            }
            match msg {
                OutMsg::Request {
                    ref id, ref method, ..
                } => {
                    let session = lock(&self.session).clone();
                    let req = self.post(&msg)?;
                    let Some(me) = self.me.upgrade() else {
                        return Err(ClientError::Closed("the transport is gone".into()));
                    };
                    let id = id.clone();
                    let initialize = method == "initialize";
                    let key = id.clone();
                    let mut streams = lock(&self.streams);
                    let task =
                        tokio::spawn(
                            async move { me.run_request(id, req, initialize, session).await },
                        );
                    streams.insert(key, task.abort_handle());
                    Ok(())
                }
                other => self.post_oneway(other).await,
            }
        })
    }

    fn abort(&self, id: &Id) {
        if let Some(h) = lock(&self.streams).remove(id) {
            h.abort();
        }
    }

    fn cancel_by_notification(&self, state: &WireState) -> bool {
        !state.modern
    }

    fn set_state(&self, state: WireState) {
        *lock(&self.state) = state;
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(async move {
            if self.closed.swap(true, Ordering::AcqRel) {
                return;
            }
            if let Some(h) = lock(&self.get_stream).take() {
                h.abort();
            }
            let streams: Vec<AbortHandle> = lock(&self.streams).drain().map(|(_, h)| h).collect();
            for h in streams {
                h.abort();
            }
            let session = lock(&self.session).take();
            if session.is_some() {
                *lock(&self.session) = session;
                if let Ok(req) = self
                    .base(Method::DELETE, None)
                    .body(Full::new(Bytes::new()))
                {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(5),
                        self.send_req(req, Hold::Short),
                    )
                    .await;
                }
            }
            self.pool.close();
        })
    }

    fn is_http(&self) -> bool {
        true
    }

    fn session_expired(&self) -> bool {
        self.expired.load(Ordering::Acquire)
    }

    fn reset_session(&self) {
        if let Some(h) = lock(&self.get_stream).take() {
            h.abort();
        }
        // The expiry mark stays until an `initialize` succeeds: a failed renewal is retried
        // by the next call.
        *lock(&self.session) = None;
    }

    fn learn_tool(&self, name: &str, input_schema: &Value) -> Result<(), String> {
        let decls = mcp_header::declarations(input_schema)?;
        let mut tools = lock(&self.tools);
        if decls.is_empty() {
            tools.remove(name);
        } else {
            tools.insert(name.to_owned(), decls);
        }
        Ok(())
    }
}
