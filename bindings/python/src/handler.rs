//! `PyHandler`: core's [`Handler`] seam implemented by calling a Python coroutine function.
//!
//! The Python side (`mcpcore.server`) wraps every registered function as
//! `invoke(ctx, params, responder)` and reports exactly once through the [`Responder`]. For an
//! `async def` function `invoke` returns a coroutine, scheduled here on the asyncio loop
//! captured at serve time (`mcpcore._spawn.Spawn`), or, while a serve call runs (stdio,
//! streams, HTTP), queued in the loop's [`Inbox`] and started on the loop's own thread; peer
//! cancellation cancels that asyncio task (the handler sees `CancelledError`). For a plain
//! `def` function `invoke` runs it right there and returns `None`: `invoke` is called on one of
//! the runtime's blocking threads ([`bridge::attach_blocking`]), or, over stdio served by core's
//! threads, by the thread that read the request ([`crate::leader`]), so the call needs no
//! further hand-off (a Python thread pool here cost a thread switch and a Python-level queue
//! per call) and the loop is not involved. Either way the tokio task then waits for the responder without
//! the interpreter lock.

use std::sync::{Arc, Mutex};

use mcpcore::client::ClientHandler;
use mcpcore::server::{tool_error_result, ResultShape};
use mcpcore::{
    BoxFuture, ErrorObject, Handler, HandlerError, InputRequired, Outcome, RequestContext,
};
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::bridge;
use crate::context::PyContext;
use crate::convert;
use crate::gc::Slot;
use crate::inbox::{self, Inbox};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the Python wrapper reports.
pub(crate) type Reply = Result<Outcome, HandlerError>;

/// The Python objects every handler call needs; shared by the handlers of one server.
pub struct Loop {
    /// The asyncio event loop captured when serving started.
    pub event_loop: Arc<Slot>,
    /// `mcpcore._spawn.Spawn(coro, loop, now)`: starts a coroutine on the loop from any thread
    /// (or at once, on the loop's own thread).
    pub spawn: Arc<Slot>,
    /// Open while a serve call runs (stdio, streams, HTTP): `async def` calls reach the loop
    /// through it.
    inbox: Mutex<Option<Arc<Inbox>>>,
}

impl Loop {
    /// The loop handlers of one server or client run on.
    pub fn new(py: Python<'_>, event_loop: Py<PyAny>) -> PyResult<Arc<Self>> {
        Ok(Arc::new(Self {
            event_loop: Slot::new(event_loop),
            spawn: Slot::new(py.import("mcpcore._spawn")?.getattr("Spawn")?.unbind()),
            inbox: Mutex::new(None),
        }))
    }

    /// The open inbox, if any.
    pub fn inbox(&self) -> Option<Arc<Inbox>> {
        lock(&self.inbox).clone()
    }

    /// Open the inbox; returns the one replaced.
    pub fn set_inbox(&self, inbox: Arc<Inbox>) -> Option<Arc<Inbox>> {
        lock(&self.inbox).replace(inbox)
    }

    /// Close `inbox` if it is the one open.
    pub fn clear_inbox(&self, inbox: &Arc<Inbox>) {
        let mut open = lock(&self.inbox);
        if open.as_ref().is_some_and(|o| Arc::ptr_eq(o, inbox)) {
            *open = None;
        }
    }

    /// The slots, for the native object that owns this loop (see [`crate::gc`]).
    pub fn slots(&self) -> Vec<Arc<Slot>> {
        vec![self.event_loop.clone(), self.spawn.clone()]
    }

    /// The event loop, or an error once it was collected.
    pub fn event_loop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.event_loop.get(py).ok_or_else(gone)
    }
}

/// A callable or loop that the cycle collector already cleared.
pub fn gone() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the server or client was collected")
}

/// One registered Python function.
pub struct PyHandler {
    pub invoke: Arc<Slot>,
    pub event_loop: Arc<Loop>,
    /// How core shapes the entry's plain values (`Responder.value` / `.bytes`).
    pub shape: Arc<ResultShape>,
    /// `invoke` is a coroutine function (an `async def` entry): it can go through the loop's
    /// [`Inbox`] when one is open. A plain `def` never runs on the loop's thread.
    pub is_async: bool,
}

impl PyHandler {
    pub fn new(
        py: Python<'_>,
        invoke: Arc<Slot>,
        event_loop: Arc<Loop>,
        shape: ResultShape,
    ) -> Self {
        let is_async = invoke.get(py).is_some_and(|f| {
            py.import("inspect")
                .and_then(|m| m.getattr("iscoroutinefunction"))
                .and_then(|check| check.call1((f,)))
                .and_then(|r| r.is_truthy())
                .unwrap_or(false)
        });
        Self {
            invoke,
            event_loop,
            shape: Arc::new(shape),
            is_async,
        }
    }
}

pub(crate) struct Call {
    pub(crate) invoke: Arc<Slot>,
    pub(crate) event_loop: Arc<Loop>,
}

impl Call {
    /// Call `invoke(*args, responder)` and schedule the coroutine it returns on the loop; returns
    /// the started coroutine's `Spawn` (to cancel it; `None` when `invoke` returned `None`, having
    /// started the call itself) and the reply channel.
    pub(crate) fn start(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<(Option<Py<PyAny>>, oneshot::Receiver<Reply>)> {
        self.start_shaped(py, args, None)
    }

    /// [`Call::start`] for a server entry: the responder's `value`/`bytes` replies get core's
    /// shape for the entry (`shaping`: the shape and the tool name or URI being read).
    pub(crate) fn start_shaped(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
        shaping: Option<(Arc<ResultShape>, Option<String>)>,
    ) -> PyResult<(Option<Py<PyAny>>, oneshot::Receiver<Reply>)> {
        let (tx, rx) = oneshot::channel();
        let responder = Responder::new(tx, shaping);
        let fut = self.invoke_with(py, args, Py::new(py, responder)?, false)?;
        Ok((fut, rx))
    }

    /// Call `invoke(*args, responder)` and start the coroutine it returns as a task on the
    /// loop: from any thread through `Spawn` (`now` false), or right here when this is the
    /// loop's own thread (`now`: [`crate::inbox`]). The `Spawn`, to cancel it; `None` when
    /// `invoke` returned `None`, having run the call itself.
    pub(crate) fn invoke_with(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
        responder: Py<Responder>,
        now: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        let mut all = args;
        all.push(responder.into_bound(py).into_any());
        let invoke = self.invoke.get(py).ok_or_else(gone)?;
        let coro = invoke.call1(pyo3::types::PyTuple::new(py, all)?)?;
        if coro.is_none() {
            return Ok(None);
        }
        let lp = &self.event_loop;
        let run = lp.spawn.get(py).ok_or_else(gone)?;
        let fut = run.call1((coro, lp.event_loop(py)?, now))?;
        Ok(Some(fut.unbind()))
    }
}

impl Handler for PyHandler {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let this = Call {
            invoke: self.invoke.clone(),
            event_loop: self.event_loop.clone(),
        };
        let shaping = Some((self.shape.clone(), ctx.name().map(str::to_owned)));
        if self.is_async {
            let route = if crate::pump::pumping(&self.event_loop) {
                Some(inbox::Route::Here)
            } else {
                self.event_loop.inbox().map(inbox::Route::Queue)
            };
            if let Some(route) = route {
                return Box::pin(inbox::call(route, this, ctx, params, shaping));
            }
        }
        // A plain `def` met by a stdio leader thread is run by that thread (`crate::leader`).
        #[cfg(target_os = "linux")]
        let leader = (!self.is_async).then(crate::leader::queue).flatten();
        Box::pin(async move {
            // The interpreter is held only to create and schedule the coroutine, off the
            // tokio workers; the wait for the reply holds nothing.
            let pctx = ctx.clone();
            let start = move |py: Python<'_>| {
                let pctx = Py::new(py, PyContext::new(pctx))?.into_bound(py);
                let args = vec![pctx.into_any(), convert::to_py(py, &params)?];
                this.start_shaped(py, args, shaping)
            };
            #[cfg(target_os = "linux")]
            let started = match leader {
                Some(jobs) => jobs.run(start).await,
                None => bridge::attach_blocking(start).await,
            };
            #[cfg(not(target_os = "linux"))]
            let started = bridge::attach_blocking(start).await;
            let (fut, rx) = started
                .ok_or_else(|| HandlerError::internal("the interpreter is shutting down"))?
                .map_err(|e| HandlerError::internal(format!("scheduling the handler: {e}")))?;
            tokio::select! {
                r = rx => r.unwrap_or_else(|_| Err(HandlerError::internal("the handler ended without a reply"))),
                () = ctx.cancelled() => {
                    // A plain `def` cannot be interrupted; its late reply is dropped.
                    if let Some(fut) = fut {
                        bridge::attach_blocking(move |py| {
                            let _ = fut.bind(py).call_method0("cancel");
                        })
                        .await;
                    }
                    Err(HandlerError::cancelled())
                }
            }
        })
    }
}

/// A client-side callback (`on_elicitation`, `on_sampling`, `on_roots`): core's
/// [`ClientHandler`] seam, run on the loop captured at connect time like [`PyHandler`].
pub struct PyClientHandler {
    pub invoke: Arc<Slot>,
    pub event_loop: Arc<Loop>,
}

impl ClientHandler for PyClientHandler {
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        let this = Call {
            invoke: self.invoke.clone(),
            event_loop: self.event_loop.clone(),
        };
        Box::pin(async move {
            let (_fut, rx) = bridge::attach_blocking(move |py| {
                this.start(py, vec![convert::to_py(py, &params)?])
            })
            .await
            .and_then(Result::ok)
            .ok_or_else(ErrorObject::internal)?;
            match rx.await {
                Ok(Ok(Outcome::Complete(v))) => Ok(v),
                Ok(Err(e)) => Err(mcpcore::client::callback_error(e)),
                _ => Err(ErrorObject::internal()),
            }
        })
    }
}

/// The one-shot reply channel handed to the Python wrapper.
#[pyclass(module = "mcpcore._native", frozen)]
pub struct Responder {
    tx: Mutex<Option<oneshot::Sender<Reply>>>,
    shaping: Option<(Arc<ResultShape>, Option<String>)>,
}

impl Responder {
    pub(crate) fn new(
        tx: oneshot::Sender<Reply>,
        shaping: Option<(Arc<ResultShape>, Option<String>)>,
    ) -> Self {
        Self {
            tx: Mutex::new(Some(tx)),
            shaping,
        }
    }

    fn shaped(&self, r: Result<Value, String>) {
        self.send(r.map(Outcome::Complete).map_err(HandlerError::internal));
    }

    pub(crate) fn send(&self, reply: Reply) {
        let tx = lock(&self.tx).take();
        if let Some(tx) = tx {
            let _ = tx.send(reply);
        }
    }
}

#[pymethods]
impl Responder {
    /// The complete result object.
    fn ok(&self, result: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = convert::from_py(result)?;
        self.send(Ok(Outcome::Complete(v)));
        Ok(())
    }

    /// A plain return value, shaped by core for the entry's kind (`mcpcore::server::ResultShape`:
    /// a tool's text, structured content or content blocks, a prompt's messages, a resource's
    /// contents, completion values).
    fn value(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = convert::from_py(value)?;
        let (shape, name) = self
            .shaping
            .clone()
            .unwrap_or((Arc::new(ResultShape::Raw), None));
        self.shaped(shape.apply(v, name.as_deref()));
        Ok(())
    }

    /// Bytes returned by a tool (with `mime_type`: an image or audio block) or a resource (a
    /// blob; `mime_type` defaults to the resource's own).
    #[pyo3(signature = (data, mime_type=None))]
    fn bytes(&self, data: &[u8], mime_type: Option<&str>) {
        let (shape, name) = self
            .shaping
            .clone()
            .unwrap_or((Arc::new(ResultShape::Raw), None));
        self.shaped(shape.apply_bytes(data, mime_type, name.as_deref()));
    }

    /// A tool's own failure (`ToolError`): core's `isError` result.
    fn tool_error(&self, message: String) {
        self.send(Ok(Outcome::Complete(tool_error_result(message))));
    }

    /// Exactly this JSON-RPC error.
    #[pyo3(signature = (code, message, data=None))]
    fn error(&self, code: i64, message: String, data: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mut obj = ErrorObject::new(code, message);
        if let Some(d) = convert::from_py_opt(data)? {
            obj = obj.with_data(d);
        }
        self.send(Err(HandlerError::Rpc(obj)));
        Ok(())
    }

    /// An internal failure: the peer sees a generic -32603, the detail stays local. After an
    /// unanswered `request_client` on a 2026-07-28 request, core answers `input_required`.
    fn fail(&self, detail: String) {
        self.send(Err(HandlerError::internal(detail)));
    }

    /// An explicit `input_required` outcome (SEP-2322): `input_requests` maps the handler's own
    /// keys to `{method, params}`; `request_state` comes back (sealed by core) on the retry.
    /// Legacy sessions get core's shim: the requests are sent to the client and the handler
    /// runs again with the answers.
    #[pyo3(signature = (input_requests, request_state=None))]
    fn input_required(
        &self,
        input_requests: &Bound<'_, PyAny>,
        request_state: Option<String>,
    ) -> PyResult<()> {
        let Value::Object(input_requests) = convert::from_py(input_requests)? else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "input_requests must be a dict of {key: {\"method\": ..., \"params\": ...}}",
            ));
        };
        self.send(Ok(Outcome::InputRequired(InputRequired {
            input_requests,
            request_state,
        })));
        Ok(())
    }

    /// Arguments the tool's own types refused after core's schema check passed (a pydantic
    /// `ValidationError`, an `Enum` without that value): core's `isError` result (TOOL-07),
    /// worded as its schema failures so the model can correct them.
    fn invalid_arguments(&self, tool: &str, reason: &str) {
        self.send(Ok(mcpcore::server::invalid_arguments(tool, reason)));
    }

    /// The handler was cancelled.
    fn cancelled(&self) {
        self.send(Err(HandlerError::cancelled()));
    }
}
