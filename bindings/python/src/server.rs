//! `NativeServer`: a core [`Server`] built from the Python registry when serving starts.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcpcore::server::{ItemKind, ResultShape};
use mcpcore::transport::http::{HttpListener, HttpOptions};
use mcpcore::{Handler, InputRequired, Server, ServerBuilder};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

use crate::bridge;
use crate::convert;
use crate::dynamic::{self, Items};
use crate::embed::{NativeHttpService, NativePipe};
use crate::gc::{Owned, Slot};
use crate::handler::{Loop, PyHandler};
use pyo3::gc::PyVisit;
use pyo3::PyTraverseError;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The MIME type of MCP Apps UI resources (`mcpcore.APP_MIME_TYPE`).
pub const APP_MIME_TYPE: &str = mcpcore::protocol::apps::APP_MIME_TYPE;

/// `data` as an image or audio content block, by its MIME type's prefix (core's rule).
#[pyfunction]
pub fn media_block(py: Python<'_>, data: &[u8], mime_type: &str) -> PyResult<Py<PyAny>> {
    let block = mcpcore::server::media_block(data, mime_type).map_err(value_error)?;
    Ok(convert::to_py(py, &block)?.unbind())
}

/// Check an explicit `input_required` answer with core's rule (MRTR-02), so the handler hears
/// at once what is wrong.
#[pyfunction]
#[pyo3(signature = (input_requests, request_state=None))]
pub fn check_input_required(
    input_requests: &Bound<'_, PyAny>,
    request_state: Option<String>,
) -> PyResult<()> {
    let Value::Object(input_requests) = convert::from_py(input_requests)? else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "input_requests must be a dict of {key: {'method': ..., 'params': ...}}",
        ));
    };
    InputRequired {
        input_requests,
        request_state,
    }
    .validate()
    .map_err(value_error)
}

#[pyclass(module = "mcpcore._native", frozen, weakref)]
pub struct NativeServer {
    pub(crate) server: Server,
    /// The handlers' callables and the loop (see [`crate::gc`]).
    owned: Owned,
    /// Which of `owned` each registered item holds (released when it is replaced or removed).
    items: Items,
    /// The loop handlers run on, for handlers added while serving.
    event_loop: Arc<Loop>,
}

#[pymethods]
impl NativeServer {
    /// Build a server. `entries` holds `(kind, definition, invoke)` with kind `"tool"`,
    /// `"prompt"`, `"resource"`, `"resource_template"` or `"completion"` (no definition), the definition as its wire object and
    /// `invoke(ctx, params, responder)` a coroutine function run on `event_loop`. `options` is
    /// core's `ServerOptions` JSON shape (`mcpcore::options`).
    #[new]
    #[pyo3(signature = (name, version, instructions, entries, event_loop, options=None))]
    fn new(
        py: Python<'_>,
        name: String,
        version: String,
        instructions: Option<String>,
        entries: Vec<(String, Bound<'_, PyAny>, Py<PyAny>)>,
        event_loop: Py<PyAny>,
        options: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let lp = Loop::new(py, event_loop)?;
        let owned = Owned::default();
        owned.extend(lp.slots());
        let mut b = ServerBuilder::new(name, version);
        if let Some(text) = instructions {
            b = b.instructions(text);
        }
        if let Some(patch) = convert::from_py_opt(options.as_ref())? {
            let mut err = None;
            b = b.options(|o| {
                if let Err(e) = mcpcore::options::apply_json(o, &patch) {
                    err = Some(e);
                }
            });
            if let Some(e) = err {
                return Err(value_error(e));
            }
        }
        let items = Items::default();
        let mut handlers = Vec::with_capacity(entries.len());
        // A gate (`{"name": tool}`) runs on the request before the tool's task is created.
        let mut gates: HashMap<String, Arc<dyn Handler>> = HashMap::new();
        for (kind, def, invoke) in entries {
            let invoke = Slot::new(invoke);
            owned.push(invoke.clone());
            let def = convert::from_py(&def)?;
            if let Some(key) = dynamic::entry_key(&kind, &def) {
                items.add(key, invoke.clone());
            }
            let h = Arc::new(PyHandler::new(
                py,
                invoke,
                lp.clone(),
                ResultShape::of(&kind, &def),
            ));
            if kind == "gate" {
                let name = def.get("name").and_then(Value::as_str).unwrap_or_default();
                gates.insert(name.to_owned(), h);
            } else {
                handlers.push((kind, def, h));
            }
        }
        for (kind, def, h) in handlers {
            let gate = (kind == "tool")
                .then(|| def.get("name").and_then(Value::as_str))
                .flatten()
                .and_then(|n| gates.remove(n));
            b.add_json(&kind, def, h, gate).map_err(value_error)?;
        }
        Ok(Self {
            server: b.build().map_err(value_error)?,
            owned,
            items,
            event_loop: lp,
        })
    }

    /// Add an item while serving, or replace the one of its kind under the same name (URI,
    /// URI template) in place, enabled: `kind` and `definition` as the constructor's entries
    /// (`"resourceTemplate"` is accepted too), `invoke` as theirs. Core checks it as at build
    /// and announces the change (`list_changed`, coalesced). The replaced item's callable is no
    /// longer owned here; calls already running keep it until they end.
    fn add(
        &self,
        py: Python<'_>,
        kind: &str,
        definition: &Bound<'_, PyAny>,
        invoke: Py<PyAny>,
    ) -> PyResult<()> {
        let item = dynamic::kind(kind)?;
        let shape_kind = if item == ItemKind::ResourceTemplate {
            "resource_template"
        } else {
            kind
        };
        let def = convert::from_py(definition)?;
        let slot = Slot::new(invoke);
        let h: Arc<dyn Handler> = Arc::new(PyHandler::new(
            py,
            slot.clone(),
            self.event_loop.clone(),
            ResultShape::of(shape_kind, &def),
        ));
        let server = self.server.clone();
        // Detached: a handler core drops under its registry lock (the replaced one, or this
        // one refused) releases its callable later, never running Python code there.
        let reg = py
            .detach(move || server.add_json(item, def, h))
            .map_err(dynamic::refused)?;
        self.items
            .replace(&self.owned, (item, reg.key().to_owned()), slot);
        Ok(())
    }

    /// Remove the item of `kind` under `key` (name, URI or URI template); false when none is
    /// registered. Calls already running finish; its callable is released after the last.
    fn remove(&self, py: Python<'_>, kind: &str, key: &str) -> PyResult<bool> {
        let item = dynamic::kind(kind)?;
        let server = self.server.clone();
        let removed = py.detach(|| server.remove(item, key));
        if removed {
            self.items.forget(&self.owned, &(item, key.to_owned()));
        }
        Ok(removed)
    }

    /// Enable or disable the item of `kind` under `key`; false when none is registered.
    fn set_enabled(&self, py: Python<'_>, kind: &str, key: &str, on: bool) -> PyResult<bool> {
        let item = dynamic::kind(kind)?;
        let server = self.server.clone();
        Ok(py.detach(|| server.set_enabled(item, key, on)))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.owned.traverse(&visit)
    }

    fn __clear__(&self) {
        self.owned.clear();
    }

    /// Open the inbox `async def` calls take to this server's loop while a serve call runs
    /// (`crate::inbox`): the descriptor of the socket that wakes the loop, owned by the caller
    /// from now on, who watches it (`loop.add_reader`) and calls the returned drain's
    /// `drain()` when it is readable; its `close()` ends the inbox. `None` where there is none (not Unix, or
    /// no socket pair).
    fn open_inbox(&self) -> Option<(i64, crate::inbox::InboxDrain)> {
        let (inbox, fd) = crate::inbox::Inbox::new().ok()?;
        let inbox = Arc::new(inbox);
        if let Some(old) = self.event_loop.set_inbox(inbox.clone()) {
            old.close();
        }
        Some((
            fd,
            crate::inbox::InboxDrain::new(inbox, &self.event_loop, fd),
        ))
    }

    /// Open a stdio connection served from the loop's own thread (`crate::pump`): the pump and
    /// the descriptor of the socket that wakes the loop when output is waiting, owned by the
    /// caller from now on. `None` where there is no socket pair (not Unix).
    fn open_pump(&self) -> PyResult<Option<(crate::pump::NativePump, i64)>> {
        if cfg!(not(unix)) {
            return Ok(None);
        }
        crate::pump::NativePump::open(&self.server, &self.event_loop).map(Some)
    }

    /// Serve stdin/stdout until EOF (an awaitable).
    fn serve_stdio<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let server = self.server.clone();
        #[cfg(target_os = "linux")]
        {
            let rt = bridge::runtime()?.handle().clone();
            if let Some(served) = crate::leader::serve(&server, rt).map_err(PyOSError::new_err)? {
                return bridge::awaitable(py, async move {
                    served.await.map_err(|e| PyOSError::new_err(e).into())
                });
            }
        }
        bridge::awaitable(py, async move {
            server
                .serve_stdio()
                .await
                .map_err(|e| PyOSError::new_err(e.to_string()).into())
        })
    }

    /// Bind `host:port` (an IP address, `localhost`, or a name to resolve) and serve Streamable
    /// HTTP at the options' `path` (default `/mcp`); an awaitable of `HttpHandle`.
    #[pyo3(signature = (host, port, options=None))]
    fn serve_http<'py>(
        &self,
        py: Python<'py>,
        host: String,
        port: u16,
        options: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut opts = HttpOptions::default();
        if let Some(patch) = convert::from_py_opt(options)? {
            mcpcore::options::apply_json(&mut opts, &patch)
                .map_err(|e| PyValueError::new_err(format!("options: {e}")))?;
        }
        let server = self.server.clone();
        bridge::awaitable(py, async move {
            let addr = mcpcore::transport::http::bind_address(&host, port)
                .await
                .map_err(|e| PyValueError::new_err(format!("host: {e}")))?;
            let listener = server
                .serve_http(addr, opts)
                .await
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
            Ok(HttpHandle {
                addr: listener.local_addr(),
                url: listener.url(),
                listener: Mutex::new(Some(listener)),
            })
        })
    }

    /// The endpoint as a service for a host's HTTP server (the ASGI adapter): `options` as
    /// `serve_http`'s, but with no `path` given every path the host routes here is served.
    #[pyo3(signature = (options=None))]
    fn http_service(&self, options: Option<&Bound<'_, PyAny>>) -> PyResult<NativeHttpService> {
        let mut opts = HttpOptions::mounted();
        if let Some(patch) = convert::from_py_opt(options)? {
            mcpcore::options::apply_json(&mut opts, &patch)
                .map_err(|e| PyValueError::new_err(format!("options: {e}")))?;
        }
        let svc = self.server.http_service(opts).map_err(value_error)?;
        Ok(NativeHttpService { svc })
    }

    /// Serve one connection over an in-process pipe (stdio framing), for `serve_streams`.
    fn serve_pipe(&self) -> PyResult<NativePipe> {
        NativePipe::serve(self.server.clone())
    }

    /// Tell connected clients the tool list changed; returns how many were told.
    fn notify_tools_list_changed(&self) -> usize {
        self.server.notify_tools_list_changed()
    }

    /// Tell connected clients the prompt list changed; returns how many were told.
    fn notify_prompts_list_changed(&self) -> usize {
        self.server.notify_prompts_list_changed()
    }

    /// Tell connected clients the resource list changed; returns how many were told.
    fn notify_resources_list_changed(&self) -> usize {
        self.server.notify_resources_list_changed()
    }

    /// Tell the clients subscribed to `uri` that it changed; returns how many were told.
    fn notify_resource_updated(&self, uri: &str) -> usize {
        self.server.notify_resource_updated(uri)
    }
}

/// A running HTTP listener.
#[pyclass(module = "mcpcore._native", frozen)]
pub struct HttpHandle {
    addr: SocketAddr,
    url: String,
    listener: Mutex<Option<HttpListener>>,
}

#[pymethods]
impl HttpHandle {
    /// The bound port.
    #[getter]
    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The bound host.
    #[getter]
    fn host(&self) -> String {
        self.addr.ip().to_string()
    }

    /// The endpoint's URL, with the configured path (`http://127.0.0.1:PORT/mcp` by default).
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// Graceful shutdown (an awaitable); a second call does nothing.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let listener = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        bridge::awaitable(py, async move {
            if let Some(l) = listener {
                l.shutdown().await;
            }
            Ok(())
        })
    }
}
