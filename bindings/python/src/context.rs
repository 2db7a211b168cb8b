//! `Context`: the request context a Python handler gets (wraps core's [`RequestContext`]).

use mcpcore::{HandlerError, LoggingLevel, RequestContext};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::bridge;
use crate::convert::{self, Json};
use crate::errors;

#[pyclass(module = "mcpcore._native", name = "NativeContext", frozen)]
pub struct PyContext {
    ctx: RequestContext,
}

impl PyContext {
    pub fn new(ctx: RequestContext) -> Self {
        Self { ctx }
    }
}

#[pymethods]
impl PyContext {
    /// True once the peer cancelled the request (or the connection ended).
    #[getter]
    fn cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// The task this call runs as (its `taskId`), or `None` for a plain call.
    #[getter]
    fn task_id(&self) -> Option<String> {
        self.ctx.task_id().map(str::to_owned)
    }

    /// The request's protocol version (modern: from its envelope; legacy: negotiated).
    #[getter]
    fn protocol_version(&self) -> Option<String> {
        self.ctx.protocol_version()
    }

    /// True on a 2026-07-28 (stateless) request.
    #[getter]
    fn is_modern(&self) -> bool {
        self.ctx.is_modern()
    }

    /// The method (`tools/call`, …).
    #[getter]
    fn method(&self) -> String {
        self.ctx.method().to_owned()
    }

    /// The request's JSON-RPC id as the client sent it (an int or a str).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &serde_json::to_value(self.ctx.id()).unwrap_or_default())
    }

    /// The request's `params._meta` as sent (`{}` when it has none).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.meta() {
            Some(m) => convert::to_py(py, m),
            None => Ok(pyo3::types::PyDict::new(py).into_any()),
        }
    }

    /// The headers of the HTTP request that carried this request (lower-case name → value,
    /// repeated headers joined with `", "`), `None` over stdio.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.http_headers_json() {
            Some(h) => convert::to_py(py, &h),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The W3C trace context of the server span handling this request
    /// (`{"traceparent": ..., "tracestate"?: ...}`), for OpenTelemetry's propagators.
    #[getter]
    fn trace_context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.ctx.trace_context().to_json())
    }

    /// The tool or prompt name, or the resource URI.
    #[getter]
    fn name(&self) -> Option<String> {
        self.ctx.name().map(str::to_owned)
    }

    /// The client's capabilities as this request declares them.
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.ctx.client_capabilities())
    }

    /// The client's implementation info (`clientInfo`), when known.
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.client_info() {
            Some(v) => convert::to_py(py, &v),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The verified access-token principal on an OAuth-protected HTTP endpoint (AUTH-06):
    /// `{"subject", "issuer", "scopes", "clientId", "expiresAt", "claims"}`, else `None`.
    #[getter]
    fn principal<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.principal() {
            Some(p) => convert::to_py(py, &serde_json::to_value(p).unwrap_or_default()),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// `inputResponses` of a retried 2026-07-28 request (or the legacy shim's answers).
    #[getter]
    fn input_responses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.ctx.input_responses() {
            Some(m) => convert::to_py(py, &serde_json::Value::Object(m.clone())),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The verified `requestState` of a retried request (core unsealed it).
    #[getter]
    fn request_state(&self) -> Option<String> {
        self.ctx.request_state().map(str::to_owned)
    }

    /// Raise `McpError` -32021 (core's error, META-04) unless the request declared the client
    /// capability at `path` (e.g. `["elicitation", "url"]`).
    fn require_client_capability(&self, py: Python<'_>, path: Vec<String>) -> PyResult<()> {
        if path.is_empty() || path.iter().any(String::is_empty) {
            return Err(PyValueError::new_err(
                "a capability path names at least one key",
            ));
        }
        let keys: Vec<&str> = path.iter().map(String::as_str).collect();
        match self.ctx.require_client_capability(&keys) {
            Ok(()) => Ok(()),
            Err(HandlerError::Rpc(e)) => Err(errors::rpc(py, &e)),
            Err(e) => Err(PyValueError::new_err(e.to_string())),
        }
    }

    /// Legacy Streamable HTTP: close this request's SSE stream now (the client resumes with
    /// `Last-Event-ID`, LHTTP-04); `False` on transports without such a stream.
    fn close_sse_stream(&self) -> bool {
        self.ctx.close_sse_stream()
    }

    /// Report progress; `False` when nothing was sent (no token, not increasing, cancelled).
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.ctx.progress(progress, total, message.as_deref())
    }

    /// Send a log notification at `level` (`"debug"` … `"emergency"`), filtered by the client's level.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &Bound<'_, PyAny>, logger: Option<String>) -> PyResult<bool> {
        let level: LoggingLevel =
            serde_json::from_value(serde_json::Value::String(level.into()))
                .map_err(|_| PyValueError::new_err(format!("unknown logging level {level:?}")))?;
        let data = convert::from_py(data)?;
        Ok(self.ctx.log(level, logger.as_deref(), data))
    }

    /// Ask the client (`elicitation/create`, `sampling/createMessage`, `roots/list`): a legacy
    /// server→client request, or an `input_required` round on 2026-07-28 (all in core).
    #[pyo3(signature = (method, params=None))]
    fn request_client<'py>(
        &self,
        py: Python<'py>,
        method: String,
        params: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params = convert::from_py_opt(params)?;
        let ctx = self.ctx.clone();
        bridge::awaitable(py, async move {
            Ok(Json(ctx.request_client(&method, params).await?))
        })
    }
}
