//! `Inbox`: how an `async def` handler's call reaches the asyncio loop while a stdio serve call
//! runs, without a thread between them.
//!
//! Without it, a call goes from the runtime's worker to a blocking thread, which takes the
//! interpreter lock to create the coroutine and hands it to the loop with
//! `call_soon_threadsafe`: two thread wake-ups and a lock hand-over before the handler runs.
//! With it, the worker queues the call here and, when the queue was empty, writes one byte to
//! a socket the loop watches (`loop.add_reader`); the loop's thread, which already holds the
//! lock, then starts every queued call as a task right away (eagerly where asyncio can,
//! 3.12+). The byte is written without the interpreter lock, so a worker never waits for it.
//!
//! Calls queued while the loop is busy are started together on its next turn. The serve call
//! closes the inbox when it ends (`close_inbox`); calls still queued then are answered as
//! failed, and later calls take the thread path again.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, MutexGuard};

use mcpcore::server::ResultShape;
use mcpcore::{HandlerError, RequestContext};
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::bridge;
use crate::context::PyContext;
use crate::convert;
use crate::handler::{Call, Reply, Responder};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(unix)]
type Sock = std::os::unix::net::UnixStream;
/// Elsewhere there is no inbox ([`Inbox::new`] fails): calls take the thread path.
#[cfg(not(unix))]
type Sock = std::net::TcpStream;

fn socket_pair() -> std::io::Result<(Sock, Sock)> {
    #[cfg(unix)]
    return Sock::pair();
    #[cfg(not(unix))]
    Err(std::io::ErrorKind::Unsupported.into())
}

/// Where a queued call stands: cancelled by the peer before or after it started, and the
/// started task's `Spawn` (to cancel it).
#[derive(Default)]
struct CallState {
    cancelled: bool,
    spawn: Option<Py<PyAny>>,
}

struct Job {
    call: Call,
    ctx: RequestContext,
    params: Value,
    shaping: Option<(Arc<ResultShape>, Option<String>)>,
    tx: oneshot::Sender<Reply>,
    state: Arc<Mutex<CallState>>,
}

/// The queue of calls for one loop and the socket pair that wakes it.
pub struct Inbox {
    jobs: Mutex<Vec<Job>>,
    /// The end the loop watches.
    read: Sock,
    /// The end a worker writes one byte to when the queue was empty.
    wake: Sock,
}

impl Inbox {
    /// A new inbox (both ends non-blocking).
    pub fn new() -> std::io::Result<Self> {
        let (read, wake) = socket_pair()?;
        read.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        Ok(Self {
            jobs: Mutex::new(Vec::new()),
            read,
            wake,
        })
    }

    /// The descriptor for `loop.add_reader`.
    pub fn fd(&self) -> i64 {
        #[cfg(unix)]
        return i64::from(std::os::fd::AsRawFd::as_raw_fd(&self.read));
        #[cfg(windows)]
        return std::os::windows::io::AsRawSocket::as_raw_socket(&self.read) as i64;
    }

    fn push(&self, job: Job) {
        let first = {
            let mut jobs = lock(&self.jobs);
            jobs.push(job);
            jobs.len() == 1
        };
        if first {
            // A full socket already holds a wake-up the loop has not read: nothing is lost.
            let _ = (&self.wake).write(&[1]);
        }
    }

    /// On the loop's thread (its reader callback): start every queued call. The wake-up bytes
    /// are read before the queue is taken, so a call queued after the take writes a new one.
    pub fn drain(&self, py: Python<'_>) {
        let mut buf = [0u8; 64];
        while matches!((&self.read).read(&mut buf), Ok(n) if n > 0) {}
        let jobs = std::mem::take(&mut *lock(&self.jobs));
        for job in jobs {
            start(py, job);
        }
    }

    /// The serve call ended: calls still queued are answered as failed (their senders drop).
    pub fn close(&self) {
        drop(std::mem::take(&mut *lock(&self.jobs)));
    }
}

/// Start one queued call on the loop's thread (the interpreter lock held).
fn start(py: Python<'_>, job: Job) {
    if lock(&job.state).cancelled {
        return;
    }
    let Job {
        call,
        ctx,
        params,
        shaping,
        tx,
        state,
    } = job;
    let responder = match Py::new(py, Responder::new(tx, shaping)) {
        Ok(r) => r,
        Err(_) => return, // the sender dropped with it: the call fails
    };
    let args = Py::new(py, PyContext::new(ctx))
        .map(|c| c.into_bound(py).into_any())
        .and_then(|c| Ok(vec![c, convert::to_py(py, &params)?]));
    let started = args.and_then(|args| call.invoke_with(py, args, responder.clone_ref(py), true));
    match started {
        Ok(Some(spawn)) => {
            let mut s = lock(&state);
            if s.cancelled {
                drop(s);
                let _ = spawn.bind(py).call_method0("cancel");
            } else {
                s.spawn = Some(spawn);
            }
        }
        Ok(None) => {}
        Err(e) => responder.get().send(Err(HandlerError::internal(format!(
            "scheduling the handler: {e}"
        )))),
    }
}

/// An `async def` call through `inbox`: queued for the loop, then the reply awaited (or the
/// peer's cancellation, which cancels the task).
pub(crate) async fn call(
    inbox: Arc<Inbox>,
    call: Call,
    ctx: RequestContext,
    params: Value,
    shaping: Option<(Arc<ResultShape>, Option<String>)>,
) -> Result<mcpcore::Outcome, HandlerError> {
    let (tx, rx) = oneshot::channel();
    let state = Arc::new(Mutex::new(CallState::default()));
    inbox.push(Job {
        call,
        ctx: ctx.clone(),
        params,
        shaping,
        tx,
        state: state.clone(),
    });
    drop(inbox);
    tokio::select! {
        r = rx => r.unwrap_or_else(|_| Err(HandlerError::internal("the handler ended without a reply"))),
        () = ctx.cancelled() => {
            let spawn = {
                let mut s = lock(&state);
                s.cancelled = true;
                s.spawn.take()
            };
            if let Some(spawn) = spawn {
                bridge::attach_blocking(move |py| {
                    let _ = spawn.bind(py).call_method0("cancel");
                })
                .await;
            }
            Err(HandlerError::cancelled())
        }
    }
}
