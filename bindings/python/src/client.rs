//! `NativeClient`: core's [`Client`] behind awaitables, at the JSON level (`Client::request`,
//! `list_all_json`), so every protocol rule stays in core.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpcore::client::{
    CallOptions, Client, ClientBuilder, ClientCallback, ClientHandler, ClientOptions, ConnectMode,
    HttpClientOptions, ListKind, StdioCommand, TaskCallOptions, TaskWaitOptions,
};
use mcpcore::LoggingLevel;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};

use crate::auth::PyBrowser;
use crate::bridge::{self, Forwarder};
use crate::convert::{self, Json};
use crate::gc::{Owned, Slot};
use crate::handler::{Loop, PyClientHandler};
use crate::server::NativeServer;
use pyo3::gc::PyVisit;
use pyo3::PyTraverseError;
use tokio_util::sync::CancellationToken;

fn options(mode: &str, patch: Option<&Bound<'_, PyAny>>) -> PyResult<ClientOptions> {
    let mut o = ClientOptions::default();
    if let Some(p) = convert::from_py_opt(patch)? {
        mcpcore::options::apply_json(&mut o, &p)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    o.mode = serde_json::from_value::<ConnectMode>(serde_json::Value::String(mode.into()))
        .map_err(|_| {
            PyValueError::new_err(format!(
                "mode must be \"auto\", \"legacy\" or \"modern\", not {mode:?}"
            ))
        })?;
    Ok(o)
}

/// What a connect hands the `NativeClient`: the Python objects it owns (see [`crate::gc`]),
/// the loop callbacks run on, and the callable behind each declared callback.
#[derive(Default)]
struct Wiring {
    slots: Vec<Arc<Slot>>,
    event_loop: Option<Arc<Loop>>,
    current: HashMap<ClientCallback, Arc<Slot>>,
}

/// A client builder with the options and the Python callbacks: `callbacks` maps a callback's
/// capability name (`"sampling"`, …; core's [`ClientCallback`] table) to `invoke(params,
/// responder)` or `None` (declared, set later with `set_callback`), `on_notification(method,
/// params)` gets every notification.
fn builder(
    py: Python<'_>,
    mode: &str,
    patch: Option<&Bound<'_, PyAny>>,
    callbacks: Option<&Bound<'_, PyDict>>,
    on_notification: Option<Py<PyAny>>,
    event_loop: Option<Py<PyAny>>,
) -> PyResult<(ClientBuilder, Wiring)> {
    let mut b = Client::builder().options(options(mode, patch)?);
    let callbacks = callbacks.filter(|h| !h.is_empty());
    if callbacks.is_none() && on_notification.is_none() {
        return Ok((b, Wiring::default()));
    }
    let Some(event_loop) = event_loop else {
        return Err(PyValueError::new_err(
            "callbacks need the event loop they run on",
        ));
    };
    let lp = Loop::new(py, event_loop)?;
    let mut w = Wiring {
        slots: lp.slots(),
        event_loop: Some(lp.clone()),
        current: HashMap::new(),
    };
    if let Some(f) = on_notification {
        let f = Slot::new(f);
        w.slots.push(f.clone());
        let fwd = Forwarder::new(lp.clone(), f)?;
        b = b.on_notification(move |method, params| {
            fwd.send(vec![Value::String(method.to_owned()), params.clone()]);
        });
    }
    for (name, invoke) in callbacks.into_iter().flat_map(|h| h.iter()) {
        let kind =
            ClientCallback::parse(&name.extract::<String>()?).map_err(PyValueError::new_err)?;
        b = b.declare(kind);
        if invoke.is_none() {
            continue;
        }
        let invoke = Slot::new(invoke.unbind());
        w.slots.push(invoke.clone());
        w.current.insert(kind, invoke.clone());
        b = b.on_callback(
            kind,
            PyClientHandler {
                invoke,
                event_loop: lp.clone(),
            },
        );
    }
    Ok((b, w))
}

fn list_kind(kind: &str) -> PyResult<ListKind> {
    Ok(match kind {
        "tools" => ListKind::Tools,
        "prompts" => ListKind::Prompts,
        "resources" => ListKind::Resources,
        "resource_templates" => ListKind::ResourceTemplates,
        other => return Err(PyValueError::new_err(format!("unknown list {other:?}"))),
    })
}

fn call_options(
    py: Python<'_>,
    timeout: Option<f64>,
    progress: Option<Py<PyAny>>,
    log_level: Option<&str>,
) -> PyResult<(CallOptions, CancellationToken)> {
    let token = CancellationToken::new();
    let mut o = CallOptions::new().cancel(token.clone());
    if let Some(f) = progress {
        let lp = Loop::new(
            py,
            py.import("asyncio")?
                .call_method0("get_running_loop")?
                .unbind(),
        )?;
        let fwd = Forwarder::new(lp, Slot::new(f))?;
        o = o.on_progress(move |p, total, message| {
            fwd.send(vec![json!(p), json!(total), json!(message)]);
        });
    }
    if let Some(l) = log_level {
        let level: LoggingLevel = serde_json::from_value(Value::String(l.into()))
            .map_err(|_| PyValueError::new_err(format!("unknown logging level {l:?}")))?;
        o = o.log_level(level);
    }
    if let Some(t) = timeout {
        let d = Duration::try_from_secs_f64(t).map_err(|_| {
            PyValueError::new_err("timeout must be a non-negative number of seconds")
        })?;
        o = o.timeout(d);
    }
    Ok((o, token))
}

/// `TaskWaitOptions` from its JSON shape, with a cancellation token the awaitable cancels.
fn wait_options(py: Python<'_>, patch: Option<&Bound<'_, PyAny>>) -> PyResult<TaskWaitOptions> {
    let mut w = TaskWaitOptions::default();
    if let Some(p) = convert::from_py_opt(patch)? {
        mcpcore::options::apply_json(&mut w, &p)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    let (opts, _) = call_options(py, None, None, None)?;
    Ok(w.call(opts))
}

#[pyclass(module = "mcpcore._native", frozen, weakref)]
pub struct NativeClient {
    client: Client,
    /// The callbacks and their loop (see [`crate::gc`]).
    owned: Owned,
    /// The loop callbacks set after connect run on.
    event_loop: Option<Arc<Loop>>,
    /// The callable behind each set callback, cleared when it is replaced.
    current: Mutex<HashMap<ClientCallback, Arc<Slot>>>,
}

impl NativeClient {
    fn new(client: Client, w: Wiring) -> Self {
        let owned = Owned::default();
        owned.extend(w.slots);
        Self {
            client,
            owned,
            event_loop: w.event_loop,
            current: Mutex::new(w.current),
        }
    }
}

#[pymethods]
impl NativeClient {
    /// Spawn `argv` and connect over stdio (an awaitable of `NativeClient`). `spawn` is core's
    /// `StdioCommand` JSON shape (`env`, `envClear`, `cwd`, `stderr`, `closeGraceMs`,
    /// `termGraceMs`), checked before anything is spawned.
    #[staticmethod]
    #[pyo3(signature = (argv, mode="auto", options=None, callbacks=None, on_notification=None, event_loop=None, spawn=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect_stdio<'py>(
        py: Python<'py>,
        argv: Vec<String>,
        mode: &str,
        options: Option<&Bound<'py, PyAny>>,
        callbacks: Option<&Bound<'py, PyDict>>,
        on_notification: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
        spawn: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some((program, args)) = argv.split_first() else {
            return Err(PyValueError::new_err("argv must name a program"));
        };
        let mut cmd = StdioCommand::new(program).args(args);
        if let Some(patch) = convert::from_py_opt(spawn)? {
            mcpcore::options::apply_json(&mut cmd, &patch)
                .map_err(|e| PyValueError::new_err(format!("spawn: {e}")))?;
        }
        let (b, w) = builder(py, mode, options, callbacks, on_notification, event_loop)?;
        bridge::awaitable(py, async move {
            let client = b.connect_stdio(cmd).await?;
            Ok(NativeClient::new(client, w))
        })
    }

    /// Connect to `server` in this process over core's in-memory pipe (stdio framing, the
    /// negotiation of `mode`); an awaitable of `NativeClient`.
    #[staticmethod]
    #[pyo3(signature = (server, mode="auto", options=None, callbacks=None, on_notification=None, event_loop=None))]
    fn connect_in_memory<'py>(
        py: Python<'py>,
        server: &NativeServer,
        mode: &str,
        options: Option<&Bound<'py, PyAny>>,
        callbacks: Option<&Bound<'py, PyDict>>,
        on_notification: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (b, w) = builder(py, mode, options, callbacks, on_notification, event_loop)?;
        let server = server.server.clone();
        bridge::awaitable(py, async move {
            let client = b.connect_in_memory(&server).await?;
            Ok(NativeClient::new(client, w))
        })
    }

    /// Connect to a Streamable HTTP endpoint (an awaitable of `NativeClient`).
    #[staticmethod]
    /// `http` is core's `HttpClientOptions` JSON shape; `headers` are added to its `headers`.
    /// `on_authorize(url, responder)` is the OAuth browser step of `http`'s `auth` (see
    /// [`crate::auth`]).
    #[pyo3(signature = (url, mode="auto", options=None, callbacks=None, on_notification=None, event_loop=None, http=None, headers=None, on_authorize=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect_http<'py>(
        py: Python<'py>,
        url: String,
        mode: &str,
        options: Option<&Bound<'py, PyAny>>,
        callbacks: Option<&Bound<'py, PyDict>>,
        on_notification: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
        http: Option<&Bound<'py, PyAny>>,
        headers: Option<std::collections::BTreeMap<String, String>>,
        on_authorize: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut http_opts = HttpClientOptions::default();
        if let Some(patch) = convert::from_py_opt(http)? {
            mcpcore::options::apply_json(&mut http_opts, &patch)
                .map_err(|e| PyValueError::new_err(format!("http: {e}")))?;
        }
        for (k, v) in headers.into_iter().flatten() {
            http_opts = http_opts.header(k, v);
        }
        let mut browser_slots = Vec::new();
        let mut cancel = None;
        if let Some(f) = on_authorize {
            let Some(lp) = event_loop.as_ref() else {
                return Err(PyValueError::new_err(
                    "on_authorize needs the event loop it runs on",
                ));
            };
            let lp = Loop::new(py, lp.clone_ref(py))?;
            let invoke = Slot::new(f);
            browser_slots = lp.slots();
            browser_slots.push(invoke.clone());
            let token = CancellationToken::new();
            http_opts.auth_hooks.browser = Some(Arc::new(PyBrowser {
                invoke,
                event_loop: lp,
                cancel: token.clone(),
            }));
            cancel = Some(token);
        }
        let (b, mut w) = builder(py, mode, options, callbacks, on_notification, event_loop)?;
        w.slots.extend(browser_slots);
        bridge::awaitable_with(py, cancel, async move {
            let client = b.connect_http(&url, http_opts).await?;
            Ok(NativeClient::new(client, w))
        })
    }

    /// The server's stderr, when spawned with `"stderr": "capture"` (the last 64 KiB, oldest
    /// first); `None` otherwise.
    fn captured_stderr(&self) -> Option<String> {
        self.client.captured_stderr()
    }

    /// This client's metrics as Prometheus text (core's; recorded with `{"metrics": true}`).
    fn metrics_text(&self) -> String {
        self.client.metrics_text()
    }

    /// `"legacy"` or `"modern"` (`None` before negotiation).
    #[getter]
    fn era(&self) -> Option<&'static str> {
        self.client.era().map(mcpcore::protocol::Era::as_str)
    }

    /// The capability names of the callbacks declared at connect (set or not).
    #[getter]
    fn declared_callbacks(&self) -> Vec<&'static str> {
        self.client
            .declared_callbacks()
            .into_iter()
            .map(ClientCallback::capability)
            .collect()
    }

    /// Answer the declared callback `name` with `invoke(params, responder)` from now on
    /// (`None`: core answers -32601 again, and the callable is dropped).
    #[pyo3(signature = (name, invoke=None))]
    fn set_callback(&self, name: &str, invoke: Option<Py<PyAny>>) -> PyResult<()> {
        let kind = ClientCallback::parse(name).map_err(PyValueError::new_err)?;
        let mut handler: Option<Arc<dyn ClientHandler>> = None;
        let mut slot = None;
        if let Some(f) = invoke {
            let event_loop = self.event_loop.clone().ok_or_else(|| {
                PyValueError::new_err(format!("the {name:?} callback was not declared at connect"))
            })?;
            let s = Slot::new(f);
            handler = Some(Arc::new(PyClientHandler {
                invoke: s.clone(),
                event_loop,
            }));
            slot = Some(s);
        }
        if let Err(e) = self.client.set_callback(kind, handler) {
            slot.iter().for_each(|s| s.clear());
            return Err(PyValueError::new_err(e.to_string()));
        }
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let old = match slot {
            // A replaced callable may still be answering a request: it stays owned (and
            // traversed) until the client is cleared or freed.
            Some(s) => {
                self.owned.push(s.clone());
                current.insert(kind, s);
                None
            }
            None => current.remove(&kind),
        };
        drop(current);
        if let Some(old) = old {
            old.clear();
        }
        Ok(())
    }

    /// The negotiated protocol version.
    #[getter]
    fn protocol_version(&self) -> Option<String> {
        self.client.protocol_version()
    }

    /// The server's `instructions`, when it sent any.
    #[getter]
    fn instructions(&self) -> Option<String> {
        self.client.instructions()
    }

    /// The server's implementation info: `serverInfo` of `initialize`, or the discover
    /// result's `_meta` server info (core's `server_implementation`).
    #[getter]
    fn server_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.client.server_implementation() {
            Some(v) => convert::to_py(
                py,
                &serde_json::to_value(v).map_err(|e| PyValueError::new_err(e.to_string()))?,
            ),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The server's capabilities (`{}` before negotiation).
    #[getter]
    fn server_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.client.server_capabilities())
    }

    /// Whether the server advertised MCP Apps (`io.modelcontextprotocol/ui`; core's
    /// `server_supports_apps`).
    #[getter]
    fn server_supports_apps(&self) -> bool {
        self.client.server_supports_apps()
    }

    /// Read a `ui://` app resource with core's checks (`read_app_resource`): an awaitable of
    /// `{"uri", "mimeType", "html", "meta"}`.
    #[pyo3(signature = (uri, timeout=None))]
    fn read_app_resource<'py>(
        &self,
        py: Python<'py>,
        uri: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            let app = client.read_app_resource_with(&uri, opts).await?;
            Ok(Json(app.to_json()))
        })
    }

    /// The UI resource URI a listed tool links to (`_meta.ui.resourceUri`), if any.
    #[staticmethod]
    fn tool_ui_resource_uri(tool: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let tool = convert::from_py(tool)?;
        Ok(mcpcore::protocol::apps::tool_ui_resource_uri(&tool).map(str::to_owned))
    }

    /// Any request at the JSON level: the raw result (an awaitable of `dict`).
    #[pyo3(signature = (method, params=None, timeout=None, progress=None, log_level=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        progress: Option<Py<PyAny>>,
        log_level: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = convert::from_py_opt(params)?.unwrap_or(Value::Null);
        let (opts, token) = call_options(py, timeout, progress, log_level)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(Json(client.request_with(&method, params, opts).await?))
        })
    }

    /// A whole list (`"tools"`, `"prompts"`, `"resources"`, `"resource_templates"`), following
    /// cursors: an awaitable of `{"<items key>": [...]}`.
    #[pyo3(signature = (kind, timeout=None))]
    fn list_all<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = list_kind(kind)?;
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(Json(client.list_all_json(kind, opts).await?))
        })
    }

    /// One page of a list from `cursor` (`None`: the first): an awaitable of the result, with
    /// `nextCursor` when there is more.
    #[pyo3(signature = (kind, cursor=None, timeout=None))]
    fn list_page<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        cursor: Option<String>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = list_kind(kind)?;
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(Json(
                client.list_page_json(kind, cursor.as_deref(), opts).await?,
            ))
        })
    }

    /// `completion/complete` (an awaitable of the raw `CompleteResult`).
    #[pyo3(signature = (reference, argument_name, argument_value, context=None, timeout=None))]
    fn complete<'py>(
        &self,
        py: Python<'py>,
        reference: &Bound<'py, PyAny>,
        argument_name: String,
        argument_value: String,
        context: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reference = convert::from_py(reference)?;
        let context = convert::from_py_opt(context)?;
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            let r = client
                .complete_with(reference, &argument_name, &argument_value, context, opts)
                .await?;
            Ok(Json(r.raw))
        })
    }

    /// `resources/subscribe` (legacy; core refuses it on 2026-07-28, where `listen` subscribes).
    #[pyo3(signature = (uri, timeout=None))]
    fn subscribe_resource<'py>(
        &self,
        py: Python<'py>,
        uri: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(client.subscribe_resource_with(&uri, opts).await?)
        })
    }

    /// `resources/unsubscribe` (legacy).
    #[pyo3(signature = (uri, timeout=None))]
    fn unsubscribe_resource<'py>(
        &self,
        py: Python<'py>,
        uri: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(client.unsubscribe_resource_with(&uri, opts).await?)
        })
    }

    /// Open a `subscriptions/listen` stream (2026-07-28) with `filter` and wait for its
    /// acknowledgement: an awaitable of `NativeSubscription`.
    #[pyo3(signature = (filter, timeout=None))]
    fn listen<'py>(
        &self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = convert::from_py(filter)?;
        let (opts, _) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        // Dropped when the awaiting task is cancelled: core's subscription cancels itself then.
        bridge::awaitable(py, async move {
            let sub = client.listen_with(filter, opts).await?;
            Ok(crate::listen::NativeSubscription::new(sub))
        })
    }

    /// `tools/call` asking for a task (core adds the per-request opt-in, TASK-M01/TASK-L01):
    /// an awaitable of `{"result": CallToolResult}` when the server answered at once, else
    /// `{"task": <the task as sent>}`.
    #[pyo3(signature = (name, arguments=None, ttl_ms=None, timeout=None))]
    fn call_tool_as_task<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        ttl_ms: Option<u64>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = convert::from_py_opt(arguments)?.unwrap_or_else(|| json!({}));
        let (opts, token) = call_options(py, timeout, None, None)?;
        let mut topts = TaskCallOptions::new().call(opts);
        if let Some(ms) = ttl_ms {
            topts = topts.ttl(Duration::from_millis(ms));
        }
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(Json(
                client
                    .call_tool_as_task(&name, args, topts)
                    .await?
                    .to_json(),
            ))
        })
    }

    /// `tasks/get`: an awaitable of the task as sent.
    #[pyo3(signature = (task_id, timeout=None))]
    fn get_task<'py>(
        &self,
        py: Python<'py>,
        task_id: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(Json(client.get_task_with(&task_id, opts).await?.raw))
        })
    }

    /// `tasks/cancel`: an awaitable of the task as sent (`None` when the server sent none).
    #[pyo3(signature = (task_id, timeout=None))]
    fn cancel_task<'py>(
        &self,
        py: Python<'py>,
        task_id: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            let info = client.cancel_task_with(&task_id, opts).await?;
            Ok(Json(info.map_or(Value::Null, |i| i.raw)))
        })
    }

    /// `tasks/update` (modern): answer the task's `inputRequests` by key.
    #[pyo3(signature = (task_id, input_responses, timeout=None))]
    fn update_task<'py>(
        &self,
        py: Python<'py>,
        task_id: String,
        input_responses: &Bound<'py, PyAny>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Value::Object(answers) = convert::from_py(input_responses)? else {
            return Err(PyValueError::new_err("input_responses must be a dict"));
        };
        let (opts, token) = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable_with(py, Some(token), async move {
            Ok(client.update_task_with(&task_id, answers, opts).await?)
        })
    }

    /// Follow a task to its end (core's `wait_task`; `options` is `TaskWaitOptions`' JSON
    /// shape): an awaitable of the terminal task as sent. Cancelling the awaitable ends the
    /// wait, not the task.
    #[pyo3(signature = (task_id, options=None))]
    fn wait_task<'py>(
        &self,
        py: Python<'py>,
        task_id: String,
        options: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let wait = wait_options(py, options)?;
        let token = wait.call.cancel.clone();
        let client = self.client.clone();
        bridge::awaitable_with(py, token, async move {
            Ok(Json(client.wait_task(&task_id, wait).await?.raw))
        })
    }

    /// A task call followed to its end (core's `call_tool_to_completion`): an awaitable of the
    /// `CallToolResult`.
    #[pyo3(signature = (name, arguments=None, ttl_ms=None, options=None))]
    fn call_tool_to_completion<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        ttl_ms: Option<u64>,
        options: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = convert::from_py_opt(arguments)?.unwrap_or_else(|| json!({}));
        let wait = wait_options(py, options)?;
        let token = wait.call.cancel.clone();
        let mut topts = TaskCallOptions::new().call(wait.call.clone());
        if let Some(ms) = ttl_ms {
            topts = topts.ttl(Duration::from_millis(ms));
        }
        let client = self.client.clone();
        bridge::awaitable_with(py, token, async move {
            let r = client
                .call_tool_to_completion(&name, args, topts, wait)
                .await?;
            Ok(Json(serde_json::to_value(r).unwrap_or_default()))
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.owned.traverse(&visit)
    }

    fn __clear__(&self) {
        self.owned.clear();
    }

    /// Close the connection (stdio: close stdin, wait, then terminate the child).
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let client = self.client.clone();
        bridge::awaitable(py, async move {
            client.close().await;
            Ok(())
        })
    }
}
