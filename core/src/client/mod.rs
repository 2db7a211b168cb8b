//! The MCP client: stdio, in-memory (a [`crate::Server`] in this process) and Streamable HTTP,
//! automatic era negotiation, the `input_required` driver, server→client requests, cancellation,
//! pagination, caching and `subscriptions/listen` (REQUIREMENTS 0.8, DISC-*, META-01/02, MRTR-*,
//! CACHE-*, SUB-*, CAN-*, HTTP-09…18).
//!
//! The seam is JSON-level ([`Client::request`] takes and returns `serde_json::Value`), so the C,
//! Python and Node bindings expose it directly; typed calls ([`Client::call_tool`], …) sit on top.
//! Every call has a `_with` twin taking [`CallOptions`] (timeout, cancellation, progress, log
//! level, extra `_meta`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcpcore::client::ClientError> {
//! use mcpcore::client::{CallOptions, Client, StdioCommand};
//! use std::time::Duration;
//! let client = Client::builder().connect_stdio(StdioCommand::new("demo-server")).await?;
//! let tools = client.list_all_tools().await?;
//! let out = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! let opts = CallOptions::new().timeout(Duration::from_secs(2));
//! let out = client.call_tool_with("slow", serde_json::json!({"ms": 10}), opts).await?;
//! client.close().await;
//! # Ok(()) }
//! ```

mod apps;
pub mod auth;
mod cache;
mod callbacks;
mod calls;
mod error;
mod in_memory;
mod json;
mod list_json;
mod listen;
mod listen_legacy;
mod mrtr;
mod negotiate;
mod options;
mod peer;
mod tasks;
mod tasks_wait;
pub(crate) mod transport;
mod types;

pub use apps::AppContent;
pub use callbacks::{
    callback_error, client_handler_fn, CallbackSlot, ClientCallback, ClientHandler, NotificationFn,
};
pub use error::ClientError;
pub use in_memory::IN_MEMORY_BUFFER;
pub use listen::Subscription;
pub use options::{
    CallOptions, ClientOptions, ConnectMode, ProgressFn, DEFAULT_MAX_MRTR_ROUNDS,
    DEFAULT_PROBE_TIMEOUT,
};
pub use tasks::{TaskCallOptions, TaskCallOutcome, TaskInfo, TaskStatus, TASKS_EXTENSION};
pub use tasks_wait::{
    TaskWaitOptions, DEFAULT_TASK_MAX_POLL_INTERVAL, DEFAULT_TASK_MIN_POLL_INTERVAL,
    DEFAULT_TASK_POLL_INTERVAL,
};
#[cfg(feature = "http-client")]
pub use transport::http::{ClientTls, HttpClientOptions};
/// The former name of [`HttpClientOptions`] (the server's options are
/// [`crate::transport::http::HttpOptions`]).
#[cfg(feature = "http-client")]
#[deprecated(note = "renamed HttpClientOptions")]
pub type HttpOptions = HttpClientOptions;
pub use list_json::ListKind;
pub use transport::stdio::{StderrMode, StdioCommand, DEFAULT_CLOSE_GRACE, DEFAULT_TERM_GRACE};
pub use types::{
    CompleteResult, Era, ListPage, Negotiated, PromptResult, ReadResult, ResultCacheHints,
};

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

use crate::error::codes;
use crate::protocol::envelope::{
    KEY_CLIENT_CAPABILITIES, KEY_CLIENT_INFO, KEY_LOG_LEVEL, KEY_PROTOCOL_VERSION, KEY_SERVER_INFO,
};
use crate::protocol::version::MODERN_VERSIONS;
use crate::protocol::{Implementation, LoggingLevel};
use peer::{lock, Peer, RequestSpec};
use transport::{ClientTransport, Inbound, WireState};

/// Inbound queue between a transport and the peer (messages; backpressure beyond it).
const INBOUND_QUEUE: usize = 1024;
/// Most metric series a client keeps (methods × targets × outcomes); past it, `_other`.
const CLIENT_MAX_SERIES: usize = 1000;

/// Builds a [`Client`]: options, handlers for server→client requests, notification callbacks.
#[derive(Default)]
pub struct ClientBuilder {
    options: ClientOptions,
    callbacks: callbacks::Callbacks,
    /// The declared callbacks' slots (replaceable after connect, see [`Client::set_callback`]).
    slots: std::collections::BTreeMap<ClientCallback, CallbackSlot>,
}

impl ClientBuilder {
    /// Replace all options.
    #[must_use]
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }
    /// Edit the options in place.
    #[must_use]
    pub fn configure(mut self, f: impl FnOnce(&mut ClientOptions)) -> Self {
        f(&mut self.options);
        self
    }
    /// Set the connect mode.
    #[must_use]
    pub fn mode(mut self, mode: ConnectMode) -> Self {
        self.options.mode = mode;
        self
    }
    /// Pin a protocol version.
    #[must_use]
    pub fn protocol_version(mut self, v: impl Into<String>) -> Self {
        self.options.protocol_version = Some(v.into());
        self
    }
    /// Set `clientInfo`.
    #[must_use]
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.options.client_info = info;
        self
    }
    /// Answer `sampling/createMessage` (declares `sampling`).
    #[must_use]
    pub fn on_sampling(self, h: impl ClientHandler) -> Self {
        self.on_callback(ClientCallback::Sampling, h)
    }
    /// Answer `elicitation/create` (declares `elicitation` with the configured modes).
    #[must_use]
    pub fn on_elicitation(self, h: impl ClientHandler) -> Self {
        self.on_callback(ClientCallback::Elicitation, h)
    }
    /// Answer `roots/list` (declares `roots`).
    #[must_use]
    pub fn on_roots(self, h: impl ClientHandler) -> Self {
        self.on_callback(ClientCallback::Roots, h)
    }
    /// Answer `kind`'s method with `h` (declares its capability); replaceable after connect
    /// with [`Client::set_callback`].
    #[must_use]
    pub fn on_callback(self, kind: ClientCallback, h: impl ClientHandler) -> Self {
        let b = self.declare(kind);
        if let Some(slot) = b.slots.get(&kind) {
            slot.set(Some(Arc::new(h)));
        }
        b
    }
    /// Declare `kind`'s capability with no handler yet: until [`Client::set_callback`] gives
    /// one, its requests answer -32601 (the capabilities are sent at connect, the handler may
    /// come later).
    #[must_use]
    pub fn declare(mut self, kind: ClientCallback) -> Self {
        let slot = self
            .slots
            .entry(kind)
            .or_insert_with(|| CallbackSlot::new(kind))
            .clone();
        self.callbacks
            .handlers
            .insert(kind.method().to_owned(), Arc::new(slot));
        self
    }
    /// Answer any server→client method (`ping` is answered automatically unless overridden).
    #[must_use]
    pub fn on_request(mut self, method: &str, h: impl ClientHandler) -> Self {
        self.slots.retain(|k, _| k.method() != method);
        self.callbacks
            .handlers
            .insert(method.to_owned(), Arc::new(h));
        self
    }
    /// Receive every server notification that is not progress or a listen stream's.
    #[must_use]
    pub fn on_notification(mut self, f: impl Fn(&str, &Value) + Send + Sync + 'static) -> Self {
        self.callbacks.notifications.push(Arc::new(f));
        self
    }

    /// Spawn `cmd` and connect over stdio.
    ///
    /// # Errors
    /// An argument error (before anything is spawned), a spawn failure, or a negotiation failure
    /// (the process is shut down).
    pub async fn connect_stdio(self, cmd: StdioCommand) -> Result<Client, ClientError> {
        negotiate::validate(&self.options)?;
        let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
        let t = transport::stdio::StdioTransport::spawn(
            &cmd,
            self.options.max_message_bytes,
            self.options.max_json_depth,
            tx,
        )?;
        self.finish(t, rx).await
    }

    /// Connect to a Streamable HTTP endpoint (`http://` only).
    ///
    /// # Errors
    /// An argument error (bad URL or header) or a negotiation failure.
    #[cfg(feature = "http-client")]
    pub async fn connect_http(
        self,
        url: &str,
        http: HttpClientOptions,
    ) -> Result<Client, ClientError> {
        negotiate::validate(&self.options)?;
        let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
        let t = transport::http::HttpTransport::new(url, http, &self.options, tx)?;
        self.finish(t, rx).await
    }

    async fn finish(
        self,
        t: Arc<dyn ClientTransport>,
        rx: mpsc::Receiver<Inbound>,
    ) -> Result<Client, ClientError> {
        let cache = self.options.cache.then(cache::Cache::default);
        let metrics = crate::telemetry::Metrics::client(self.options.metrics, CLIENT_MAX_SERIES);
        let peer = Peer::new(t, self.callbacks, cache, metrics);
        peer.start(rx);
        let client = Client {
            inner: Arc::new(Inner {
                peer,
                slots: self.slots,
                options: self.options,
                negotiated: Mutex::new(None),
                output_schemas: Mutex::new(HashMap::new()),
                log_level: Mutex::new(None),
                warned_logging: AtomicBool::new(false),
                reinit: tokio::sync::Mutex::new(()),
            }),
        };
        if let Err(e) = negotiate::connect(&client).await {
            client.close().await;
            return Err(e);
        }
        Ok(client)
    }
}

pub(crate) struct Inner {
    pub peer: Arc<Peer>,
    pub slots: std::collections::BTreeMap<ClientCallback, CallbackSlot>,
    pub options: ClientOptions,
    pub negotiated: Mutex<Option<Negotiated>>,
    pub output_schemas: Mutex<HashMap<String, Arc<crate::schema::Validator>>>,
    /// Modern per-request level set through `set_log_level`.
    pub log_level: Mutex<Option<LoggingLevel>>,
    pub warned_logging: AtomicBool,
    /// Serializes re-initialization after an ended legacy HTTP session (LHTTP-02).
    pub reinit: tokio::sync::Mutex<()>,
}

/// A connected MCP client. Cheap to clone; all clones share one connection.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field(
                "negotiated",
                &lock(&self.inner.negotiated).as_ref().map(|n| n.era),
            )
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Start building a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    // ---- era-independent readers (REQUIREMENTS 0.8; seed: readers absorb the era) ----

    /// This client's metrics as a Prometheus text exposition (format 0.0.4):
    /// `mcp_client_operation_duration_seconds` by method, target and `error_type`,
    /// `mcpcore_client_requests_total`, `mcp_client_session_duration_seconds` (once closed),
    /// `mcpcore_client_requests_in_flight`. Recorded only with [`ClientOptions::metrics`].
    pub fn metrics_text(&self) -> String {
        self.inner.peer.metrics.render()
    }

    /// What the connection negotiated.
    pub fn negotiated(&self) -> Option<Negotiated> {
        lock(&self.inner.negotiated).clone()
    }
    /// The era in force.
    pub fn era(&self) -> Option<Era> {
        lock(&self.inner.negotiated).as_ref().map(|n| n.era)
    }
    /// The callbacks declared at connect (the capabilities sent), set or not.
    pub fn declared_callbacks(&self) -> Vec<ClientCallback> {
        self.inner.slots.keys().copied().collect()
    }
    /// Answer `kind`'s requests with `h` from now on (`None`: -32601 again). The capability
    /// itself was declared at connect and cannot change.
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] when `kind` was not declared at connect.
    pub fn set_callback(
        &self,
        kind: ClientCallback,
        h: Option<Arc<dyn ClientHandler>>,
    ) -> Result<(), ClientError> {
        let slot = self.inner.slots.get(&kind).ok_or_else(|| {
            ClientError::InvalidArgument(format!(
                "the {:?} callback was not declared at connect (declare it, or give it then)",
                kind.capability()
            ))
        })?;
        slot.set(h);
        Ok(())
    }
    /// True on the modern era.
    pub fn is_modern(&self) -> bool {
        self.era() == Some(Era::Modern)
    }
    /// The negotiated (legacy) or adopted (modern) protocol version.
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.inner.negotiated)
            .as_ref()
            .map(|n| n.protocol_version.clone())
    }
    /// The raw `InitializeResult` / `DiscoverResult`.
    pub fn server_info_raw(&self) -> Option<Value> {
        lock(&self.inner.negotiated).as_ref().map(|n| n.raw.clone())
    }
    /// The server's capabilities.
    pub fn server_capabilities(&self) -> Value {
        self.server_info_raw()
            .and_then(|r| r.get("capabilities").cloned())
            .unwrap_or_else(|| json!({}))
    }
    /// The server's instructions.
    pub fn instructions(&self) -> Option<String> {
        self.server_info_raw().and_then(|r| {
            r.get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }
    /// The server's implementation: `_meta` serverInfo (modern) with a top-level fallback, or
    /// `serverInfo` of `initialize`. `None` when a modern server does not identify itself.
    pub fn server_implementation(&self) -> Option<Implementation> {
        let raw = self.server_info_raw()?;
        let v = raw
            .get("_meta")
            .and_then(|m| m.get(KEY_SERVER_INFO))
            .or_else(|| raw.get("serverInfo"))?;
        serde_json::from_value(v.clone()).ok()
    }
    /// Captured stderr of a stdio server started with [`StderrMode::Capture`].
    pub fn captured_stderr(&self) -> Option<String> {
        self.inner.peer.transport.captured_stderr()
    }
    /// True once the connection is closed (by [`Client::close`] or by the transport).
    pub fn is_closed(&self) -> bool {
        self.inner.peer.is_closed()
    }
    /// Why the connection closed.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.peer.closed_reason()
    }

    /// Drop every cached result.
    pub fn clear_cache(&self) {
        if let Some(c) = &self.inner.peer.cache {
            c.clear();
        }
    }

    /// Close the connection (stdio: close stdin, wait, terminate, kill; HTTP: DELETE the
    /// legacy session). Pending calls fail with [`ClientError::Closed`].
    pub async fn close(&self) {
        self.inner.peer.mark_closed("closed by the client");
        self.inner.peer.transport.close().await;
    }

    // ---- the JSON-level seam ----

    /// Send a request with the envelope (modern), answer `input_required` with the registered
    /// handlers (returning the raw `input_required` result when none fits), and return the raw
    /// result. Methods whose typed calls learn from results or apply local state go through the
    /// same code (`tools/list` learns `x-mcp-header` declarations and output schemas, `tools/call`
    /// validates `structuredContent`, `logging/setLevel` on 2026-07-28 sets the per-request
    /// level), so the JSON seam behaves as the typed calls do.
    ///
    /// # Errors
    /// See [`ClientError`].
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, CallOptions::default())
            .await
    }

    /// [`Client::request`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        opts: CallOptions,
    ) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => {
                return Err(ClientError::InvalidArgument(
                    "params must be an object".into(),
                ))
            }
        };
        self.request_json(method, params, &opts).await
    }

    /// Send a notification (never stamped with the envelope).
    ///
    /// # Errors
    /// [`ClientError::Closed`] when the connection is gone.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.inner.peer.notify(method, params).await
    }

    /// One request, no MRTR driving: envelope, cache, -32022 retry, `resultType` check.
    pub(crate) async fn request_once(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        let cache = self.inner.peer.cache.as_ref().filter(|_| !opts.no_cache);
        if let Some(hit) = cache.and_then(|c| c.get(method, &params)) {
            return Ok(hit);
        }
        let mut retried = false;
        let mut renewed = false;
        if self.inner.peer.transport.session_expired() {
            // A notification or a resumed stream already met the 404: renew before sending.
            renewed = true;
            self.renew_session().await?;
        }
        loop {
            let mut p = params.clone();
            self.stamp(&mut p, opts);
            let r = self.send(method, p, opts).await;
            match r {
                Err(ClientError::Rpc(e))
                    if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION
                        && self.is_modern()
                        && !retried =>
                {
                    // VER-01: retry once with a mutual version from `supported`.
                    let current = self.protocol_version().unwrap_or_default();
                    let mutual = negotiate::pick_mutual(
                        e.data.as_ref().and_then(|d| d.get("supported")),
                        None,
                    );
                    // The same version is retried too: a server may refuse a request for a
                    // transient reason (e.g. mid-upgrade) and list the version we sent.
                    match mutual {
                        Some(v) => {
                            tracing::info!(from = %current, to = %v, "server asked for another protocol version; retrying once");
                            self.set_version(&v);
                            retried = true;
                        }
                        _ => return Err(ClientError::Rpc(e)),
                    }
                }
                Err(ClientError::SessionExpired(_)) if !renewed => {
                    // LHTTP-02: the server ended the session before processing the request:
                    // start a new one, then re-send once.
                    renewed = true;
                    self.renew_session().await?;
                }
                Err(e) => return Err(e),
                Ok(v) => {
                    check_result_type(&v, opts.tasks_opt_in)?;
                    if let Some(c) = cache {
                        c.put(method, &params, &v);
                    }
                    return Ok(v);
                }
            }
        }
    }

    /// Start a new legacy session after the server ended ours (once for every caller that saw
    /// the same 404). Session state on the server (resource subscriptions, the log level) is not
    /// restored.
    async fn renew_session(&self) -> Result<(), ClientError> {
        let _one = self.inner.reinit.lock().await;
        let transport = &self.inner.peer.transport;
        if !transport.session_expired() {
            // Another call already started the new session.
            return Ok(());
        }
        transport.reset_session();
        tracing::info!("the server ended the HTTP session; re-initializing");
        negotiate::reinitialize(self)
            .await
            .map_err(|e| ClientError::SessionExpired(format!("starting a new session failed: {e}")))
    }

    async fn send(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        let peer = &self.inner.peer;
        let id = peer.next_id();
        peer.request(
            id,
            method,
            params,
            RequestSpec {
                timeout: opts.timeout.or(self.inner.options.request_timeout),
                cancel: opts.cancel.as_ref(),
                on_progress: opts.on_progress.clone(),
                notify_cancel: true,
            },
        )
        .await
    }

    /// Stamp the modern envelope (META-01/02) onto request params; legacy: only extra `_meta`.
    pub(crate) fn stamp(&self, params: &mut Map<String, Value>, opts: &CallOptions) {
        let version = lock(&self.inner.negotiated)
            .as_ref()
            .filter(|n| n.era == Era::Modern)
            .map(|n| n.protocol_version.clone());
        let mut meta = self.envelope(version.as_deref(), opts);
        if meta.is_empty() {
            return;
        }
        let slot = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        if let Some(m) = slot.as_object_mut() {
            m.append(&mut meta);
        }
    }

    /// The `_meta` entries for a request at `version` (modern) or none (legacy).
    pub(crate) fn envelope(&self, version: Option<&str>, opts: &CallOptions) -> Map<String, Value> {
        let mut meta = opts.meta.clone();
        let Some(version) = version else {
            return meta;
        };
        let o = &self.inner.options;
        meta.insert(KEY_PROTOCOL_VERSION.into(), json!(version));
        let mut caps = opts
            .client_capabilities
            .clone()
            .unwrap_or_else(|| self.inner.peer.callbacks.capabilities(o, false));
        if opts.tasks_opt_in {
            tasks::opt_in(&mut caps);
        }
        meta.insert(KEY_CLIENT_CAPABILITIES.into(), caps);
        if o.send_client_info {
            meta.insert(KEY_CLIENT_INFO.into(), json!(o.client_info));
        }
        let level = opts
            .log_level
            .or(*lock(&self.inner.log_level))
            .or(o.log_level);
        if let Some(l) = level {
            meta.insert(KEY_LOG_LEVEL.into(), json!(l));
        }
        meta
    }

    pub(crate) fn set_negotiated(&self, n: Negotiated) {
        let state = WireState {
            modern: n.era == Era::Modern,
            protocol_version: Some(n.protocol_version.clone()),
        };
        *lock(&self.inner.peer.wire) = state.clone();
        self.inner.peer.transport.set_state(state);
        *lock(&self.inner.negotiated) = Some(n);
    }

    fn set_version(&self, v: &str) {
        let n = lock(&self.inner.negotiated).clone();
        if let Some(mut n) = n {
            n.protocol_version = v.to_owned();
            self.set_negotiated(n);
        }
    }
}

/// JR-04: `resultType` absent = complete; unknown values are an invalid response. `task` is
/// known only on a request that opted into the tasks extension (TASK-M01, TASK-M02).
fn check_result_type(v: &Value, tasks_opt_in: bool) -> Result<(), ClientError> {
    match v.get("resultType") {
        None => Ok(()),
        Some(Value::String(s)) if s == "complete" || s == "input_required" => Ok(()),
        Some(Value::String(s)) if s == "task" && tasks_opt_in => Ok(()),
        Some(Value::String(s)) if s == "task" => Err(ClientError::Protocol(
            "the server answered with a task although the request did not opt into the tasks \
             extension"
                .into(),
        )),
        Some(other) => Err(ClientError::Protocol(format!(
            "unknown resultType {other} in the server's result"
        ))),
    }
}

/// True when `v` is a modern version this client speaks.
pub(crate) fn speaks_modern(v: &str) -> bool {
    MODERN_VERSIONS.contains(&v)
}

pub(crate) fn warn_once(flag: &AtomicBool, msg: &str) {
    if !flag.swap(true, Ordering::Relaxed) {
        tracing::warn!("{msg}");
    }
}
