//! The embedding seams as Python objects: core's [`HttpService::exchange`] (one HTTP exchange,
//! driven by the package's ASGI adapter, `mcpcore/_asgi.py`) and a byte pipe served by core's
//! [`serve_io`] (driven by `Server.serve_streams` from an asyncio reader/writer pair).
//!
//! Marshalling only: every HTTP rule (eras, sessions, Origin/Host, body cap, Accept …) and the
//! newline framing are core's. Dropping the exchange is the client disconnecting (HTTP-08: a
//! modern request is cancelled; LHTTP-04: a legacy one runs on).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use mcpcore::client::IN_MEMORY_BUFFER;
use mcpcore::transport::http::{BodyFeed, Exchange, HttpService};
use mcpcore::transport::stdio::serve_io;
use pyo3::exceptions::{PyConnectionError, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::bridge;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The endpoint for mounting: starts one [`NativeExchange`] per request the host hands in.
#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativeHttpService {
    pub(crate) svc: HttpService,
}

#[pymethods]
impl NativeHttpService {
    /// Start one exchange: `method`, `target` (path and query), `headers` as `(name, value)`
    /// byte pairs (the ASGI scope's). Core refuses a malformed part with 400, as the built-in
    /// listener's parser would.
    fn exchange(
        &self,
        method: &str,
        target: &str,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> NativeExchange {
        let (feed, x) = self.svc.exchange(method, target, headers);
        NativeExchange {
            feed: Mutex::new(feed),
            x: Arc::new(AsyncMutex::new(Some(x))),
            gone: CancellationToken::new(),
        }
    }

    /// Core's graceful shutdown of the endpoint (an awaitable): new requests are refused (503),
    /// listen streams get their result, legacy sessions' streams close, in-flight work gets
    /// the `shutdownDeadlineMs` to finish.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let svc = self.svc.clone();
        bridge::awaitable(py, async move {
            svc.shutdown().await;
            Ok(())
        })
    }
}

/// One exchange in flight: push the body, await `head()`, then `next_chunk()` until `None`;
/// `close()` when the client disconnects (or once the answer is sent).
#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativeExchange {
    feed: Mutex<BodyFeed>,
    x: Arc<AsyncMutex<Option<Exchange>>>,
    /// Cancelled by `close()`: a pending `head()`/`next_chunk()` gives up and drops the exchange.
    gone: CancellationToken,
}

/// The answer's head as ASGI wants it, `(status, [(name, value), …], body, more)` in bytes,
/// with the body chunks core had ready by then (a JSON answer: all of it, `more` false), so
/// a JSON exchange crosses into Python once.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    ready: Vec<u8>,
    more: bool,
}

impl<'py> IntoPyObject<'py> for Head {
    type Target = PyTuple;
    type Output = Bound<'py, PyTuple>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        let headers = PyList::empty(py);
        for (k, v) in &self.headers {
            let pair = (
                PyBytes::new(py, k.as_bytes()),
                PyBytes::new(py, v.as_bytes()),
            );
            headers.append(pair)?;
        }
        let ready = PyBytes::new(py, &self.ready);
        (self.status, headers, ready, self.more).into_pyobject(py)
    }
}

/// The chunks `ex` has ready now, without waiting; `false` in the second place once the body
/// is complete.
async fn ready_chunks(ex: &mut Exchange) -> (Vec<u8>, bool) {
    let mut ready = Vec::new();
    loop {
        tokio::select! {
            biased;
            c = ex.next_chunk() => match c {
                Some(c) => ready.extend_from_slice(&c),
                None => return (ready, false),
            },
            () = std::future::ready(()) => return (ready, true),
        }
    }
}

/// A body chunk as `bytes`.
struct Chunk(Bytes);

impl<'py> IntoPyObject<'py> for Chunk {
    type Target = PyBytes;
    type Output = Bound<'py, PyBytes>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(PyBytes::new(py, &self.0))
    }
}

fn disconnected() -> bridge::NativeError {
    PyConnectionError::new_err("the client disconnected").into()
}

#[pymethods]
impl NativeExchange {
    /// Hand core the next body chunk; `False` when core wants no more (over the body cap, or
    /// the exchange is gone): stop pushing.
    fn push(&self, chunk: &[u8]) -> bool {
        lock(&self.feed).push(chunk)
    }

    /// The body is complete.
    fn end(&self) {
        lock(&self.feed).end();
    }

    /// The body will never be complete (the client left mid-body).
    fn abort(&self) {
        lock(&self.feed).abort();
    }

    /// The answer's `(status, headers, body, more)` (an awaitable): `body` is what core had
    /// ready with the head, `more` whether `next_chunk()` has more to give. `ConnectionError`
    /// after `close()`.
    fn head<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (x, gone) = (self.x.clone(), self.gone.clone());
        bridge::awaitable(py, async move {
            let mut g = x.lock().await;
            let Some(ex) = g.as_mut() else {
                return Err(disconnected());
            };
            tokio::select! {
                h = ex.head() => {
                    let (ready, more) = ready_chunks(ex).await;
                    Ok(Head { status: h.status, headers: h.headers, ready, more })
                }
                () = gone.cancelled() => {
                    *g = None;
                    Err(disconnected())
                }
            }
        })
    }

    /// The next body chunk, or `None` once the body is complete or the exchange closed (an
    /// awaitable).
    fn next_chunk<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (x, gone) = (self.x.clone(), self.gone.clone());
        bridge::awaitable(py, async move {
            let mut g = x.lock().await;
            let Some(ex) = g.as_mut() else {
                return Ok(None);
            };
            tokio::select! {
                c = ex.next_chunk() => Ok(c.map(Chunk)),
                () = gone.cancelled() => {
                    *g = None;
                    Ok(None)
                }
            }
        })
    }

    /// Drop the exchange: the client disconnected (a modern request is cancelled, HTTP-08), or
    /// the answer is sent. Idempotent.
    fn close(&self) {
        lock(&self.feed).abort();
        self.gone.cancel();
        // Not held by a pending head()/next_chunk() (which drops it itself on `gone`).
        if let Ok(mut g) = self.x.try_lock() {
            *g = None;
        }
    }
}

/// The task serving a pipe, and how it ended.
type Served = tokio::task::JoinHandle<Result<(), String>>;

/// One connection served by core's `serve_io` over an in-process pipe: the embedder copies its
/// peer's bytes in with `write()` and the server's out with `read()`.
#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativePipe {
    reader: Arc<AsyncMutex<ReadHalf<DuplexStream>>>,
    writer: Arc<AsyncMutex<Option<WriteHalf<DuplexStream>>>>,
    served: Arc<AsyncMutex<Option<Served>>>,
}

impl NativePipe {
    /// Serve `server` on a new pipe (on the binding's runtime).
    pub fn serve(server: mcpcore::Server) -> PyResult<Self> {
        let rt = bridge::runtime()?;
        let (ours, theirs) = tokio::io::duplex(IN_MEMORY_BUFFER);
        let task = rt.spawn(async move {
            let (r, w) = tokio::io::split(theirs);
            serve_io(&server, r, w).await.map_err(|e| e.to_string())
        });
        let (r, w) = tokio::io::split(ours);
        Ok(Self {
            reader: Arc::new(AsyncMutex::new(r)),
            writer: Arc::new(AsyncMutex::new(Some(w))),
            served: Arc::new(AsyncMutex::new(Some(task))),
        })
    }
}

#[pymethods]
impl NativePipe {
    /// Hand the server bytes its peer sent (an awaitable; waits while the pipe is full).
    /// `False` once the server stopped reading.
    fn write<'py>(&self, py: Python<'py>, data: Vec<u8>) -> PyResult<Bound<'py, PyAny>> {
        let w = self.writer.clone();
        bridge::awaitable(py, async move {
            let mut g = w.lock().await;
            Ok(match g.as_mut() {
                Some(w) => w.write_all(&data).await.is_ok(),
                None => false,
            })
        })
    }

    /// The peer's input ended (the server sees end of input); idempotent (an awaitable).
    fn close_write<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let w = self.writer.clone();
        bridge::awaitable(py, async move {
            if let Some(mut w) = w.lock().await.take() {
                let _ = w.shutdown().await;
            }
            Ok(())
        })
    }

    /// The server's next output bytes, `b""` once it is done writing (an awaitable).
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.reader.clone();
        bridge::awaitable(py, async move {
            let mut buf = vec![0u8; IN_MEMORY_BUFFER];
            let n = r.lock().await.read(&mut buf).await.unwrap_or(0);
            buf.truncate(n);
            Ok(Chunk(Bytes::from(buf)))
        })
    }

    /// Wait for the served connection to end (an awaitable); `OSError` if it ended in error.
    fn wait<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.served.clone();
        bridge::awaitable(py, async move {
            let Some(task) = s.lock().await.take() else {
                return Ok(());
            };
            match task.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(PyOSError::new_err(e).into()),
                Err(e) => Err(PyOSError::new_err(e.to_string()).into()),
            }
        })
    }
}
