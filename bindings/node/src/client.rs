//! `NativeClient`: core's [`Client`] at the JSON level (`Client::request_with`,
//! `list_all_json`), so every protocol rule stays in core.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpcore::client::{
    CallOptions, Client, ClientBuilder, ClientCallback, ClientHandler, ClientOptions, ConnectMode,
    HttpClientOptions, ListKind, StdioCommand, TaskCallOptions, TaskWaitOptions,
};
use mcpcore::options::apply_json;
use mcpcore::ErrorKind;
use napi::bindgen_prelude::Either;
use napi_derive::napi;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::auth::{AuthorizeFn, JsBrowser};
use crate::handler::{ClientInvokeFn, JsClientHandler};
use napi::bindgen_prelude::FnArgs;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;

/// `onProgress(progress, total, message)` of one call (weak: the call's Promise is what keeps
/// the process alive).
pub type ProgressFn = ThreadsafeFunction<
    FnArgs<(f64, Option<f64>, Option<String>)>,
    (),
    FnArgs<(f64, Option<f64>, Option<String>)>,
    Status,
    false,
    true,
>;

/// `onNotification(method, params)` of a connection (weak).
pub type NotificationFn =
    ThreadsafeFunction<FnArgs<(String, Value)>, (), FnArgs<(String, Value)>, Status, false, true>;
use crate::listen::NativeSubscription;
use crate::reply;
use crate::server::patched;

type Connected = Either<NativeClient, Value>;

fn failed(e: impl std::fmt::Display) -> Connected {
    Either::B(reply::err(ErrorKind::InvalidArgument, e))
}

/// Build the client (a refused option resolves to `{error}`), connect with `connect`, and wrap the
/// outcome for JS: the one path both transports take.
async fn connect_with<F, Fut>(
    mode: Option<String>,
    options: Option<Value>,
    callbacks: Option<Vec<(String, Option<ClientInvokeFn>)>>,
    on_notification: Option<NotificationFn>,
    connect: F,
) -> Connected
where
    F: FnOnce(ClientBuilder) -> Result<Fut, String>,
    Fut: std::future::Future<Output = Result<Client, mcpcore::client::ClientError>>,
{
    let b = match builder(
        mode,
        options.as_ref(),
        callbacks.unwrap_or_default(),
        on_notification,
    ) {
        Ok(b) => b,
        Err(e) => return failed(e),
    };
    let fut = match connect(b) {
        Ok(f) => f,
        Err(e) => return failed(e),
    };
    match fut.await {
        Ok(client) => Either::A(NativeClient::new(client)),
        Err(e) => Either::B(reply::client(Err(e))),
    }
}

/// Connect to `server` in this process over core's in-memory duplex
/// (`ClientBuilder::connect_in_memory`): `NativeServer.connectInMemory`.
pub async fn connect_in_memory(
    server: mcpcore::Server,
    mode: Option<String>,
    options: Option<Value>,
    callbacks: Option<Vec<(String, Option<ClientInvokeFn>)>>,
    on_notification: Option<NotificationFn>,
) -> Connected {
    connect_with(mode, options, callbacks, on_notification, |b| {
        Ok(async move { b.connect_in_memory(&server).await })
    })
    .await
}

/// A client builder: `mode` is `"auto"`, `"legacy"` or `"modern"`, `options` core's
/// `ClientOptions` JSON shape, `callbacks` maps a callback's capability name (`"sampling"`, …;
/// core's [`ClientCallback`] table) to `invoke(params)` or null (declared, set later with
/// `setCallback`).
fn builder(
    mode: Option<String>,
    options: Option<&Value>,
    callbacks: Vec<(String, Option<ClientInvokeFn>)>,
    on_notification: Option<NotificationFn>,
) -> Result<ClientBuilder, String> {
    let mut o: ClientOptions = patched(options)?;
    if let Some(m) = mode {
        o.mode = serde_json::from_value::<ConnectMode>(Value::String(m.clone()))
            .map_err(|_| format!("mode must be \"auto\", \"legacy\" or \"modern\", not {m:?}"))?;
    }
    let mut b = Client::builder().options(o);
    if let Some(f) = on_notification {
        b = b.on_notification(move |method, params| {
            f.call(
                FnArgs::from((method.to_owned(), params.clone())),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
    }
    for (name, invoke) in callbacks {
        let kind = ClientCallback::parse(&name)?;
        b = match invoke {
            Some(invoke) => b.on_callback(
                kind,
                JsClientHandler {
                    invoke: Arc::new(invoke),
                },
            ),
            None => b.declare(kind),
        };
    }
    Ok(b)
}

fn call_options(
    timeout_ms: Option<f64>,
    on_progress: Option<ProgressFn>,
    cancel: Option<CancellationToken>,
) -> Result<CallOptions, String> {
    let mut o = CallOptions::new();
    if let Some(c) = cancel {
        o = o.cancel(c);
    }
    if let Some(f) = on_progress {
        o = o.on_progress(move |p, total, message| {
            f.call(
                FnArgs::from((p, total, message)),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
    }
    if let Some(t) = timeout_ms {
        let d = Duration::try_from_secs_f64(t / 1000.0)
            .map_err(|_| "timeout must be a non-negative number of milliseconds".to_owned())?;
        o = o.timeout(d);
    }
    Ok(o)
}

/// A connected client (private: `lib/` wraps it as `Client`).
#[napi]
pub struct NativeClient {
    client: Client,
    cancels: Arc<Cancels>,
}

/// The cancellation tokens of this client's calls that have one (`signal`), by id: JavaScript
/// makes one with `newCancel()` before the call, `cancel(id)` trips it (core then sends the
/// protocol cancellation), the call drops it when it ends.
#[derive(Default)]
struct Cancels {
    next: AtomicU32,
    tokens: Mutex<HashMap<u32, CancellationToken>>,
}

impl Cancels {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, CancellationToken>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: Option<u32>) -> Option<CancellationToken> {
        id.and_then(|id| self.map().get(&id).cloned())
    }

    fn end(&self, id: Option<u32>) {
        if let Some(id) = id {
            self.map().remove(&id);
        }
    }
}

impl NativeClient {
    fn new(client: Client) -> Self {
        Self {
            client,
            cancels: Arc::default(),
        }
    }
}

#[napi]
impl NativeClient {
    /// Spawn `command args…` and connect over stdio. Resolves to the client or `{error}`.
    #[napi(
        ts_args_type = "command: string, args: Array<string>, mode?: string | null, options?: any, callbacks?: Array<[string, ((params: any) => Promise<any>) | null]> | null, onNotification?: ((method: string, params: any) => void) | null, spawn?: any",
        ts_return_type = "Promise<NativeClient | { error: NativeError }>"
    )]
    pub async fn connect_stdio(
        command: String,
        args: Vec<String>,
        mode: Option<String>,
        options: Option<Value>,
        callbacks: Option<Vec<(String, Option<ClientInvokeFn>)>>,
        on_notification: Option<NotificationFn>,
        spawn: Option<Value>,
    ) -> napi::Result<Connected> {
        Ok(
            connect_with(mode, options, callbacks, on_notification, |b| {
                // `spawn` is core's `StdioCommand` JSON shape (`env`, `envClear`, `cwd`,
                // `stderr`, `closeGraceMs`, `termGraceMs`); core spawns and checks it.
                let mut cmd = StdioCommand::new(command).args(args);
                if let Some(p) = spawn.as_ref().filter(|p| !p.is_null()) {
                    apply_json(&mut cmd, p).map_err(|e| format!("spawn options: {e}"))?;
                }
                Ok(b.connect_stdio(cmd))
            })
            .await,
        )
    }

    /// Connect to a Streamable HTTP endpoint; `http` is core's `HttpClientOptions` JSON shape
    /// (`{headers: {...}}`, `{auth: {...}}`, …); `onAuthorize` is the browser step of its
    /// OAuth client (see [`crate::auth`]). Resolves to the client or `{error}`.
    #[napi(
        ts_args_type = "url: string, mode?: string | null, options?: any, http?: any, callbacks?: Array<[string, ((params: any) => Promise<any>) | null]> | null, onNotification?: ((method: string, params: any) => void) | null, onAuthorize?: ((url: string) => Promise<any>) | null",
        ts_return_type = "Promise<NativeClient | { error: NativeError }>"
    )]
    pub async fn connect_http(
        url: String,
        mode: Option<String>,
        options: Option<Value>,
        http: Option<Value>,
        callbacks: Option<Vec<(String, Option<ClientInvokeFn>)>>,
        on_notification: Option<NotificationFn>,
        on_authorize: Option<AuthorizeFn>,
    ) -> napi::Result<Connected> {
        Ok(
            connect_with(mode, options, callbacks, on_notification, |b| {
                let mut http: HttpClientOptions = patched(http.as_ref())?;
                if let Some(f) = on_authorize {
                    http.auth_hooks.browser = Some(Arc::new(JsBrowser {
                        invoke: Arc::new(f),
                    }));
                }
                Ok(async move { b.connect_http(&url, http).await })
            })
            .await,
        )
    }

    /// The child's captured standard error (the last 64 KiB, oldest first) when it was spawned
    /// with `stderr: "capture"`, else null.
    #[napi]
    pub fn captured_stderr(&self) -> Option<String> {
        self.client.captured_stderr()
    }

    /// This client's metrics as Prometheus text (core's; recorded with `{ metrics: true }`).
    #[napi]
    pub fn metrics(&self) -> String {
        self.client.metrics_text()
    }

    /// `"legacy"` or `"modern"` (null before negotiation).
    #[napi(getter)]
    pub fn era(&self) -> Option<String> {
        self.client.era().map(|e| e.as_str().to_owned())
    }

    /// Answer the declared callback `name` (`"sampling"`, …) with `invoke(params)` from now on
    /// (null: core answers -32601 again). `{ok: null}`, or `{error}` when `name` was not
    /// declared at connect.
    #[napi(
        ts_args_type = "name: string, invoke: ((params: any) => Promise<any>) | null",
        ts_return_type = "{ ok: null } | { error: NativeError }"
    )]
    pub fn set_callback(&self, name: String, invoke: Option<ClientInvokeFn>) -> Value {
        let set = ClientCallback::parse(&name).and_then(|kind| {
            let h = invoke.map(|invoke| {
                Arc::new(JsClientHandler {
                    invoke: Arc::new(invoke),
                }) as Arc<dyn ClientHandler>
            });
            self.client.set_callback(kind, h).map_err(|e| e.to_string())
        });
        match set {
            Ok(()) => reply::ok(Value::Null),
            Err(e) => reply::err(ErrorKind::InvalidArgument, e),
        }
    }

    /// The negotiated protocol version.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.client.protocol_version()
    }

    /// The server's `instructions`, when it sent any.
    #[napi(getter)]
    pub fn instructions(&self) -> Option<String> {
        self.client.instructions()
    }

    /// The server's implementation info (name, version, …) from either era's negotiation
    /// result (core's `server_implementation`).
    #[napi(getter)]
    pub fn server_info(&self) -> Option<Value> {
        self.client
            .server_implementation()
            .and_then(|i| serde_json::to_value(i).ok())
    }

    /// The raw result of the negotiation (`InitializeResult` or `DiscoverResult`).
    #[napi(getter)]
    pub fn negotiated(&self) -> Option<Value> {
        self.client.server_info_raw()
    }

    /// Whether the server advertised MCP Apps (`io.modelcontextprotocol/ui`; core's
    /// `server_supports_apps`).
    #[napi(getter)]
    pub fn server_supports_apps(&self) -> bool {
        self.client.server_supports_apps()
    }

    /// Read a `ui://` app resource with core's checks (`read_app_resource`):
    /// `{ok: {uri, mimeType, html, meta}}` or `{error}`.
    #[napi]
    pub async fn read_app_resource(
        &self,
        uri: String,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match self.opts(timeout_ms, cancel_id) {
            Ok(o) => reply::client(
                self.client
                    .read_app_resource_with(&uri, o)
                    .await
                    .map(|a| a.to_json()),
            ),
            Err(e) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// A new cancellation token for one call: pass its id as that call's `cancelId`.
    #[napi]
    pub fn new_cancel(&self) -> u32 {
        let id = self.cancels.next.fetch_add(1, Ordering::Relaxed);
        self.cancels.map().insert(id, CancellationToken::new());
        id
    }

    /// Cancel the call of token `id` (core sends the protocol cancellation and the call
    /// resolves at once with kind `cancelled`). An ended call's id is ignored.
    #[napi]
    pub fn cancel(&self, id: u32) {
        if let Some(t) = self.cancels.get(Some(id)) {
            t.cancel();
        }
    }

    /// Drop token `id` of a call that never started (its arguments were refused before the
    /// call ran): only a call that runs drops its token when it ends.
    #[napi]
    pub fn drop_cancel(&self, id: u32) {
        self.cancels.end(Some(id));
    }

    /// Any request at the JSON level (core's `Client::request_with`): `{ok: result}` or
    /// `{error}`. `timeoutMs` bounds the call; `onProgress` gets its progress notifications;
    /// `cancelId` (from `newCancel`) lets `cancel` cancel it.
    #[napi(
        ts_args_type = "method: string, params?: any, timeoutMs?: number | null, onProgress?: ((progress: number, total: number | null, message: string | null) => void) | null, cancelId?: number | null"
    )]
    pub async fn request(
        &self,
        method: String,
        params: Option<Value>,
        timeout_ms: Option<f64>,
        on_progress: Option<ProgressFn>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match call_options(timeout_ms, on_progress, self.cancels.get(cancel_id)) {
            Ok(opts) => reply::client(
                self.client
                    .request_with(&method, params.unwrap_or(Value::Null), opts)
                    .await,
            ),
            Err(e) => reply::err(ErrorKind::InvalidArgument, e),
        };
        self.cancels.end(cancel_id);
        r
    }

    /// A whole list (`"tools"`, `"prompts"`, `"resources"`, `"resourceTemplates"`), following
    /// cursors (core's `list_all_json`): `{ok: {"<items key>": [...]}}` or `{error}`.
    #[napi]
    pub async fn list_all(
        &self,
        kind: String,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = self.list_all_inner(kind, timeout_ms, cancel_id).await;
        self.cancels.end(cancel_id);
        r
    }

    /// One page of a list (`"tools"`, `"prompts"`, `"resources"`, `"resourceTemplates"`) from
    /// `cursor` (core's `list_page_json`): `{ok: {"<items key>": [...], nextCursor?}}` or
    /// `{error}`.
    #[napi]
    pub async fn list_page(
        &self,
        kind: String,
        cursor: Option<String>,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match (list_kind(&kind), self.opts(timeout_ms, cancel_id)) {
            (Ok(k), Ok(o)) => {
                reply::client(self.client.list_page_json(k, cursor.as_deref(), o).await)
            }
            (Err(e), _) | (_, Err(e)) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// `completion/complete` (core's `complete_with`): `reference` is `{type: "ref/prompt",
    /// name}` or `{type: "ref/resource", uri}`, `context` the other arguments already chosen.
    /// `{ok: CompleteResult}` or `{error}`.
    #[napi]
    pub async fn complete(
        &self,
        reference: Value,
        argument_name: String,
        argument_value: String,
        context: Option<Value>,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match self.opts(timeout_ms, cancel_id) {
            Ok(o) => reply::client(
                self.client
                    .complete_with(reference, &argument_name, &argument_value, context, o)
                    .await
                    .map(|c| c.raw),
            ),
            Err(e) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// `resources/subscribe` (`on`) or `resources/unsubscribe` for `uri` (legacy; core refuses
    /// it on 2026-07-28, where `listen` carries resource subscriptions): `{ok: null}` or
    /// `{error}`.
    #[napi]
    pub async fn subscribe_resource(
        &self,
        uri: String,
        on: bool,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match self.opts(timeout_ms, cancel_id) {
            Ok(o) => {
                let r = if on {
                    self.client.subscribe_resource_with(&uri, o).await
                } else {
                    self.client.unsubscribe_resource_with(&uri, o).await
                };
                reply::client(r.map(|()| Value::Null))
            }
            Err(e) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// Open a `subscriptions/listen` stream (2026-07-28) with core's `filter` shape and wait for
    /// its acknowledgement: the subscription, or `{error}`.
    #[napi(ts_return_type = "Promise<NativeSubscription | { error: NativeError }>")]
    pub async fn listen(
        &self,
        filter: Value,
        timeout_ms: Option<f64>,
    ) -> napi::Result<Either<NativeSubscription, Value>> {
        let o = match call_options(timeout_ms, None, None) {
            Ok(o) => o,
            Err(e) => return Ok(Either::B(reply::err(ErrorKind::InvalidArgument, e))),
        };
        Ok(match self.client.listen_with(filter, o).await {
            Ok(sub) => Either::A(NativeSubscription::new(sub)),
            Err(e) => Either::B(reply::client(Err(e))),
        })
    }

    /// `tools/call` asking for a task (core adds the per-request opt-in, TASK-M01/TASK-L01;
    /// `ttlMs` is the legacy `task.ttl`): `{ok: <TaskCallOutcome::to_json>}` (`{kind: "task",
    /// task}` when the server created one, `{kind: "result", result}` when it answered at once),
    /// or `{error}`.
    #[napi]
    pub async fn call_tool_as_task(
        &self,
        name: String,
        arguments: Option<Value>,
        ttl_ms: Option<f64>,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match self.opts(timeout_ms, cancel_id) {
            Ok(o) => {
                let opts = task_call(o, ttl_ms);
                let args = arguments.unwrap_or_else(|| Value::Object(Default::default()));
                reply::client(
                    self.client
                        .call_tool_as_task(&name, args, opts)
                        .await
                        .map(|out| out.to_json()),
                )
            }
            Err(e) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// A task request by id: `"get"` (`tasks/get`), `"cancel"` (`tasks/cancel`) or `"update"`
    /// (`tasks/update` with `inputResponses`): `{ok: task}` (`{ok: null}` when the server
    /// sent no task) or `{error}`.
    #[napi]
    pub async fn task_request(
        &self,
        op: String,
        task_id: String,
        input_responses: Option<Value>,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match self.opts(timeout_ms, cancel_id) {
            Ok(o) => match (op.as_str(), input_responses) {
                ("get", _) => {
                    reply::client(self.client.get_task_with(&task_id, o).await.map(|t| t.raw))
                }
                ("cancel", _) => reply::client(
                    self.client
                        .cancel_task_with(&task_id, o)
                        .await
                        .map(|t| t.map_or(Value::Null, |t| t.raw)),
                ),
                ("update", Some(Value::Object(answers))) => reply::client(
                    self.client
                        .update_task_with(&task_id, answers, o)
                        .await
                        .map(|()| Value::Null),
                ),
                _ => reply::err(
                    ErrorKind::InvalidArgument,
                    format!("bad task request {op:?}"),
                ),
            },
            Err(e) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// Follow a task to its end (core's `wait_task`; `options` is `TaskWaitOptions`' JSON
    /// shape), or, with `name` set, call that tool as a task and follow it (core's
    /// `call_tool_to_completion`: `{ok: CallToolResult}`). `{ok: task}` or `{error}`.
    #[napi]
    pub async fn wait_task(
        &self,
        task_id: Option<String>,
        name: Option<String>,
        arguments: Option<Value>,
        ttl_ms: Option<f64>,
        options: Option<Value>,
        cancel_id: Option<u32>,
    ) -> Value {
        let r = match (
            patched::<TaskWaitOptions>(options.as_ref()),
            self.opts(None, cancel_id),
        ) {
            (Ok(w), Ok(o)) => {
                let w = w.call(o.clone());
                match (name, task_id) {
                    (Some(name), _) => {
                        let args = arguments.unwrap_or_else(|| Value::Object(Default::default()));
                        let c = self
                            .client
                            .call_tool_to_completion(&name, args, task_call(o, ttl_ms), w)
                            .await;
                        reply::client(c.map(|c| serde_json::to_value(c).unwrap_or_default()))
                    }
                    (None, Some(id)) => {
                        reply::client(self.client.wait_task(&id, w).await.map(|t| t.raw))
                    }
                    (None, None) => reply::err(
                        ErrorKind::InvalidArgument,
                        "a task id or a tool name is needed",
                    ),
                }
            }
            (Err(e), _) => reply::err(ErrorKind::InvalidArgument, e),
            (_, Err(e)) => e,
        };
        self.cancels.end(cancel_id);
        r
    }

    /// Close the connection (stdio: close stdin, wait, then terminate the child).
    #[napi]
    pub async fn close(&self) {
        self.client.close().await;
    }
}

/// A task call's options: the call's and the legacy `task.ttl` (whole milliseconds).
fn task_call(call: CallOptions, ttl_ms: Option<f64>) -> TaskCallOptions {
    let o = TaskCallOptions::new().call(call);
    match ttl_ms.filter(|t| t.is_finite() && *t >= 0.0) {
        Some(t) => o.ttl(Duration::from_millis(t as u64)),
        None => o,
    }
}

/// A list's kind by its items key, or an `{error}` reply.
fn list_kind(kind: &str) -> Result<ListKind, Value> {
    Ok(match kind {
        "tools" => ListKind::Tools,
        "prompts" => ListKind::Prompts,
        "resources" => ListKind::Resources,
        "resourceTemplates" => ListKind::ResourceTemplates,
        other => {
            return Err(reply::err(
                ErrorKind::InvalidArgument,
                format!("unknown list {other:?}"),
            ))
        }
    })
}

impl NativeClient {
    /// A call's options from its timeout and cancellation token, or an `{error}` reply.
    fn opts(&self, timeout_ms: Option<f64>, cancel_id: Option<u32>) -> Result<CallOptions, Value> {
        call_options(timeout_ms, None, self.cancels.get(cancel_id))
            .map_err(|e| reply::err(ErrorKind::InvalidArgument, e))
    }

    async fn list_all_inner(
        &self,
        kind: String,
        timeout_ms: Option<f64>,
        cancel_id: Option<u32>,
    ) -> Value {
        let (kind, opts) = match (list_kind(&kind), self.opts(timeout_ms, cancel_id)) {
            (Ok(k), Ok(o)) => (k, o),
            (Err(e), _) | (_, Err(e)) => return e,
        };
        reply::client(self.client.list_all_json(kind, opts).await)
    }
}

/// The UI resource URI a listed tool links to (`_meta.ui.resourceUri`; core's
/// `tool_ui_resource_uri`), or `null`.
#[napi]
// Called from JavaScript only: napi registers it outside test builds, so a test build sees no use.
#[cfg_attr(test, allow(dead_code))]
pub fn tool_ui_resource_uri(tool: Value) -> Option<String> {
    mcpcore::protocol::apps::tool_ui_resource_uri(&tool).map(str::to_owned)
}
