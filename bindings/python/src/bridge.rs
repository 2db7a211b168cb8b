//! The asyncio bridge and the one runtime: Rust futures as asyncio awaitables, run on core's
//! owned runtime ([`mcpcore::runtime::Runtime`]), and the gate every runtime thread passes to
//! enter the interpreter.
//!
//! Why a gate: a runtime thread that enters the interpreter while it finalizes is ended by
//! CPython (`pthread_exit` in `PyGILState_Ensure`), which crashes the process. The package
//! registers [`shutdown`] with `atexit`; it closes the gate and waits (without the interpreter
//! lock) for the threads inside it to leave. After that, runtime threads never enter the
//! interpreter again (their Python references are released through PyO3's deferred pool).
//!
//! Results are set by a blocking-pool thread (never a tokio worker) with
//! `loop.call_soon_threadsafe`, and only while the asyncio future is still pending. Cancelling
//! the awaiting task drops the Rust future.

use std::future::Future;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use mcpcore::client::ClientError;
use mcpcore::runtime::Runtime;
use mcpcore::server::PeerError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::convert;
use crate::errors;
use crate::gc::Slot;
use crate::handler::{gone, Loop};

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The runtime every server and client of this process runs on (started on first use, one
/// worker per CPU).
pub fn runtime() -> PyResult<&'static Runtime> {
    RUNTIME
        .get_or_init(|| Runtime::new(0).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("mcpcore runtime: {e}")))
}

#[derive(Default)]
struct GateState {
    closed: bool,
    inside: usize,
}

static GATE: Mutex<GateState> = Mutex::new(GateState {
    closed: false,
    inside: 0,
});
static GATE_LEFT: Condvar = Condvar::new();

fn gate() -> std::sync::MutexGuard<'static, GateState> {
    GATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Enter the interpreter from a runtime thread; `None` once the interpreter is shutting down.
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    {
        let mut g = gate();
        if g.closed {
            return None;
        }
        g.inside += 1;
    }
    keep_thread_state();
    let out = Python::attach(f);
    leave_gate();
    Some(out)
}

fn leave_gate() {
    let mut g = gate();
    g.inside -= 1;
    // Only `shutdown` waits, once the gate is closed, for the last one out. Waking nobody is
    // not free: std's condvar makes a futex system call on every notify, and this runs once
    // per handler call.
    let last_out = g.closed && g.inside == 0;
    drop(g);
    if last_out {
        GATE_LEFT.notify_all();
    }
}

/// A runtime thread's Python thread state, kept from its first [`attach`] to its exit.
///
/// Why: entering the interpreter from a thread that has no thread state makes CPython create
/// one and delete it again on leaving, with its frame stack (an `mmap` and a `munmap`): about a
/// third of a plain `def` tool call's CPU over stdio. Holding one outer `PyGILState_Ensure` with
/// the lock released makes every later entry on this thread a lock hand-over.
struct KeptState {
    state: pyo3::ffi::PyGILState_STATE,
    tstate: *mut pyo3::ffi::PyThreadState,
}

impl Drop for KeptState {
    fn drop(&mut self) {
        // At thread exit. Once the gate closed the interpreter may be finalizing: the state is
        // left to it (it deletes every thread state it still has).
        {
            let mut g = gate();
            if g.closed {
                return;
            }
            g.inside += 1;
        }
        // SAFETY: `tstate` is this thread's own state, saved by `keep_thread_state` with the lock
        // released; restoring it takes the lock, and the matching release deletes the state.
        unsafe {
            pyo3::ffi::PyEval_RestoreThread(self.tstate);
            pyo3::ffi::PyGILState_Release(self.state);
        }
        leave_gate();
    }
}

thread_local! {
    static KEPT: std::cell::RefCell<Option<KeptState>> = const { std::cell::RefCell::new(None) };
}

/// Called inside the gate. Only a thread with no thread state (one the runtime started) gets a
/// kept one: a thread Python knows keeps its own.
fn keep_thread_state() {
    let _ = KEPT.try_with(|kept| {
        let Ok(mut kept) = kept.try_borrow_mut() else {
            return;
        };
        // SAFETY: asking for this thread's state needs no lock.
        if kept.is_some() || !unsafe { pyo3::ffi::PyGILState_GetThisThreadState() }.is_null() {
            return;
        }
        // SAFETY: this thread has no thread state, so it does not hold the lock: `Ensure`
        // creates its state and takes the lock, `SaveThread` releases the lock and keeps the state.
        let (state, tstate) = unsafe {
            let state = pyo3::ffi::PyGILState_Ensure();
            (state, pyo3::ffi::PyEval_SaveThread())
        };
        *kept = Some(KeptState { state, tstate });
    });
}

/// [`attach`] from the blocking pool: a tokio worker never waits for the interpreter lock (the
/// asyncio loop's thread may hold it for long), so other tasks on that worker keep running.
pub async fn attach_blocking<R: Send + 'static>(
    f: impl for<'py> FnOnce(Python<'py>) -> R + Send + 'static,
) -> Option<R> {
    tokio::task::spawn_blocking(move || attach(f))
        .await
        .ok()
        .flatten()
}

/// `atexit`: close the gate and wait (at most `timeout` seconds) for the threads inside it.
#[pyfunction]
#[pyo3(signature = (timeout=2.0))]
pub fn shutdown(py: Python<'_>, timeout: f64) {
    py.detach(|| {
        let mut g = gate();
        g.closed = true;
        let wait = Duration::try_from_secs_f64(timeout).unwrap_or(Duration::ZERO);
        let _ = GATE_LEFT.wait_timeout_while(g, wait, |g| g.inside > 0);
    });
}

/// A failure of a native awaitable, turned into a Python exception only when the result is set
/// (under the interpreter lock the setter holds).
pub enum NativeError {
    Py(PyErr),
    Client(ClientError),
    Peer(PeerError),
}

impl From<PyErr> for NativeError {
    fn from(e: PyErr) -> Self {
        NativeError::Py(e)
    }
}
impl From<ClientError> for NativeError {
    fn from(e: ClientError) -> Self {
        NativeError::Client(e)
    }
}
impl From<PeerError> for NativeError {
    fn from(e: PeerError) -> Self {
        NativeError::Peer(e)
    }
}

impl NativeError {
    fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            NativeError::Py(e) => e,
            NativeError::Client(e) => errors::client(py, e),
            NativeError::Peer(e) => errors::peer(py, e),
        }
    }
}

/// Cancels the Rust side when the asyncio future is done first (cancelled or collected).
#[pyclass(module = "mcpcore._native", frozen)]
struct CancelOnDone {
    tx: Mutex<Option<oneshot::Sender<()>>>,
}

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, _fut: &Bound<'_, PyAny>) {
        if let Some(tx) = self.tx.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(());
        }
    }
}

/// Set `fut`'s result or exception if it is still pending (runs on the event loop).
#[pyfunction]
fn settle(fut: &Bound<'_, PyAny>, ok: bool, value: Bound<'_, PyAny>) -> PyResult<()> {
    if fut.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    if ok {
        fut.call_method1("set_result", (value,))?;
    } else {
        fut.call_method1("set_exception", (value,))?;
    }
    Ok(())
}

/// `fut` as an awaitable of the running asyncio loop; cancelling the awaiting task drops `fut`.
pub fn awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, NativeError>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    awaitable_with(py, None, fut)
}

/// How long a cancelled call may take to tell the peer (`notifications/cancelled`) before it is
/// dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// [`awaitable`] for a core call that takes a cancellation token: cancelling the awaiting task
/// cancels `token` and lets `fut` finish (core then tells the peer: `notifications/cancelled`
/// on legacy, the closed stream on 2026-07-28, CAN-01) instead of dropping it mid-flight.
pub fn awaitable_with<'py, F, T>(
    py: Python<'py>,
    token: Option<CancellationToken>,
    fut: F,
) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, NativeError>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let rt = runtime()?;
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let py_fut = event_loop.call_method0("create_future")?;
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    py_fut.call_method1(
        "add_done_callback",
        (CancelOnDone {
            tx: Mutex::new(Some(cancel_tx)),
        },),
    )?;
    let target = (event_loop.unbind(), py_fut.clone().unbind());
    rt.spawn(async move {
        tokio::pin!(fut);
        let out = tokio::select! {
            r = &mut fut => r,
            _ = cancel_rx => {
                if let Some(t) = token {
                    t.cancel();
                    let _ = tokio::time::timeout(CANCEL_GRACE, fut).await;
                }
                return;
            }
        };
        // The interpreter is entered from the blocking pool, never from a tokio worker.
        let setter = tokio::task::spawn_blocking(move || {
            attach(|py| {
                let (event_loop, py_fut) = target;
                let (ok, value) =
                    match out.and_then(|v| v.into_bound_py_any(py).map_err(Into::into)) {
                        Ok(v) => (true, v),
                        Err(e) => (
                            false,
                            e.into_py(py).into_value(py).into_bound(py).into_any(),
                        ),
                    };
                let set = wrap_pyfunction!(settle, py).and_then(|f| {
                    event_loop
                        .bind(py)
                        .call_method1("call_soon_threadsafe", (f, py_fut.bind(py), ok, value))
                });
                // A closed loop: nobody awaits the result any more.
                drop(set);
            });
        });
        let _ = setter.await;
    });
    Ok(py_fut)
}

/// Delivers values to a Python callable on an event loop, in order (notifications, progress).
/// The callable runs on the loop as `callable(*args)` with the values converted to Python.
pub struct Forwarder {
    tx: tokio::sync::mpsc::UnboundedSender<Vec<serde_json::Value>>,
}

impl Forwarder {
    /// One forwarding task; it ends when the forwarder is dropped.
    pub fn new(event_loop: Arc<Loop>, callable: Arc<Slot>) -> PyResult<Self> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<serde_json::Value>>();
        runtime()?.spawn(async move {
            while let Some(args) = rx.recv().await {
                let (lp, f) = (event_loop.clone(), callable.clone());
                let sent = tokio::task::spawn_blocking(move || {
                    attach(|py| {
                        let mut all = vec![f.get(py).ok_or_else(gone)?];
                        for a in &args {
                            all.push(convert::to_py(py, a)?);
                        }
                        lp.event_loop(py)?
                            .call_method1("call_soon_threadsafe", PyTuple::new(py, all)?)
                            .map(drop)
                    })
                })
                .await;
                // The interpreter is shutting down or the loop is closed: stop forwarding.
                if !matches!(sent, Ok(Some(Ok(())))) {
                    break;
                }
            }
        });
        Ok(Self { tx })
    }

    /// Queue one call.
    pub fn send(&self, args: Vec<serde_json::Value>) {
        let _ = self.tx.send(args);
    }
}
