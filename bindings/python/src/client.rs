//! `NativeClient`: core's [`Client`] behind awaitables, at the JSON level (`Client::request`,
//! `list_all_json`), so every protocol rule stays in core.

use std::sync::Arc;
use std::time::Duration;

use mcpcore::client::{
    CallOptions, Client, ClientBuilder, ClientOptions, ConnectMode, HttpClientOptions, ListKind,
    StdioCommand,
};
use mcpcore::protocol::Era;
use mcpcore::LoggingLevel;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};

use crate::bridge::{self, Forwarder};
use crate::convert::{self, Json};
use crate::handler::{Loop, PyClientHandler};

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

/// A client builder with the options and the Python callbacks: `handlers` maps a method to
/// `invoke(params, responder)`, `on_notification(method, params)` gets every notification.
fn builder(
    py: Python<'_>,
    mode: &str,
    patch: Option<&Bound<'_, PyAny>>,
    handlers: Option<&Bound<'_, PyDict>>,
    on_notification: Option<Py<PyAny>>,
    event_loop: Option<Py<PyAny>>,
) -> PyResult<ClientBuilder> {
    let mut b = Client::builder().options(options(mode, patch)?);
    let handlers = handlers.filter(|h| !h.is_empty());
    if handlers.is_none() && on_notification.is_none() {
        return Ok(b);
    }
    let Some(event_loop) = event_loop else {
        return Err(PyValueError::new_err(
            "callbacks need the event loop they run on",
        ));
    };
    let lp = Loop::new(py, event_loop)?;
    if let Some(f) = on_notification {
        let fwd = Forwarder::new(lp.clone(), f)?;
        b = b.on_notification(move |method, params| {
            fwd.send(vec![Value::String(method.to_owned()), params.clone()]);
        });
    }
    for (method, invoke) in handlers.into_iter().flat_map(|h| h.iter()) {
        let method: String = method.extract()?;
        b = b.on_request(
            &method,
            PyClientHandler {
                invoke: Arc::new(invoke.unbind()),
                event_loop: lp.clone(),
            },
        );
    }
    Ok(b)
}

fn call_options(
    py: Python<'_>,
    timeout: Option<f64>,
    progress: Option<Py<PyAny>>,
    log_level: Option<&str>,
) -> PyResult<CallOptions> {
    let mut o = CallOptions::new();
    if let Some(f) = progress {
        let lp = Loop::new(
            py,
            py.import("asyncio")?
                .call_method0("get_running_loop")?
                .unbind(),
        )?;
        let fwd = Forwarder::new(lp, f)?;
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
    Ok(o)
}

#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativeClient {
    client: Client,
}

#[pymethods]
impl NativeClient {
    /// Spawn `argv` and connect over stdio (an awaitable of `NativeClient`).
    #[staticmethod]
    #[pyo3(signature = (argv, mode="auto", options=None, handlers=None, on_notification=None, event_loop=None))]
    fn connect_stdio<'py>(
        py: Python<'py>,
        argv: Vec<String>,
        mode: &str,
        options: Option<&Bound<'py, PyAny>>,
        handlers: Option<&Bound<'py, PyDict>>,
        on_notification: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = builder(py, mode, options, handlers, on_notification, event_loop)?;
        let Some((program, args)) = argv.split_first() else {
            return Err(PyValueError::new_err("argv must name a program"));
        };
        let cmd = StdioCommand::new(program).args(args);
        bridge::awaitable(py, async move {
            let client = b.connect_stdio(cmd).await?;
            Ok(NativeClient { client })
        })
    }

    /// Connect to a Streamable HTTP endpoint (an awaitable of `NativeClient`).
    #[staticmethod]
    #[pyo3(signature = (url, mode="auto", options=None, handlers=None, on_notification=None, event_loop=None))]
    fn connect_http<'py>(
        py: Python<'py>,
        url: String,
        mode: &str,
        options: Option<&Bound<'py, PyAny>>,
        handlers: Option<&Bound<'py, PyDict>>,
        on_notification: Option<Py<PyAny>>,
        event_loop: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let b = builder(py, mode, options, handlers, on_notification, event_loop)?;
        bridge::awaitable(py, async move {
            let client = b.connect_http(&url, HttpClientOptions::default()).await?;
            Ok(NativeClient { client })
        })
    }

    /// `"legacy"` or `"modern"` (`None` before negotiation).
    #[getter]
    fn era(&self) -> Option<&'static str> {
        self.client.era().map(|e| match e {
            Era::Legacy => "legacy",
            _ => "modern",
        })
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

    /// The server's implementation info (`serverInfo`).
    #[getter]
    fn server_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.client.server_info_raw() {
            Some(v) => convert::to_py(py, &v),
            None => Ok(py.None().into_bound(py)),
        }
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
        let opts = call_options(py, timeout, progress, log_level)?;
        let client = self.client.clone();
        bridge::awaitable(py, async move {
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
        let kind = match kind {
            "tools" => ListKind::Tools,
            "prompts" => ListKind::Prompts,
            "resources" => ListKind::Resources,
            "resource_templates" => ListKind::ResourceTemplates,
            other => return Err(PyValueError::new_err(format!("unknown list {other:?}"))),
        };
        let opts = call_options(py, timeout, None, None)?;
        let client = self.client.clone();
        bridge::awaitable(py, async move {
            Ok(Json(client.list_all_json(kind, opts).await?))
        })
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
