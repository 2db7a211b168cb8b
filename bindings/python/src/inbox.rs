//! `Inbox`: how an `async def` handler's call reaches the asyncio loop while a serve call
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
//! closes the inbox when it ends (`InboxDrain.close`); calls still queued then are answered as
//! failed, and later calls take the thread path again. A call the loop has not taken within
//! [`PATIENCE`] is taken back and started the thread way: a loop can end without the serve
//! call closing its inbox (an HTTP handle never closed).

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcpcore::server::ResultShape;
use mcpcore::{HandlerError, RequestContext};
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::bridge;
use crate::context::PyContext;
use crate::convert;
use crate::handler::{Call, Loop, Reply, Responder};

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

/// A non-blocking socket pair that wakes the loop: the end core writes one byte to, and the
/// descriptor of the end the loop watches (now owned by the caller, the Python side). Used by
/// the inbox and by `crate::pump`.
pub(crate) fn wake_pair() -> std::io::Result<(Sock, i64)> {
    let (read, wake) = socket_pair()?;
    read.set_nonblocking(true)?;
    wake.set_nonblocking(true)?;
    #[cfg(unix)]
    let fd = i64::from(std::os::fd::IntoRawFd::into_raw_fd(read));
    #[cfg(windows)]
    let fd = std::os::windows::io::IntoRawSocket::into_raw_socket(read) as i64;
    Ok((wake, fd))
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

/// The queue of calls for one loop and the end of the socket pair that wakes it. The other
/// end belongs to the Python side (`mcpcore._inbox.Inbox`), which watches it and closes it
/// together with the reader, so no closed descriptor ever stays in the loop's selector.
pub struct Inbox {
    jobs: Mutex<Vec<Job>>,
    /// The end a worker writes one byte to when the queue was empty.
    wake: Sock,
}

impl Inbox {
    /// A new inbox and the descriptor of the other end, non-blocking, now owned by the caller
    /// (for `loop.add_reader`).
    pub fn new() -> std::io::Result<(Self, i64)> {
        let (wake, fd) = wake_pair()?;
        let inbox = Self {
            jobs: Mutex::new(Vec::new()),
            wake,
        };
        Ok((inbox, fd))
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

    /// On the loop's thread (its reader callback, after it read the wake-up bytes, so a call
    /// queued after the take writes a new one): start every queued call.
    pub fn drain(&self, py: Python<'_>) {
        let jobs = std::mem::take(&mut *lock(&self.jobs));
        for job in jobs {
            start(py, job, true);
        }
    }

    /// The serve call ended: calls still queued are answered as failed (their senders drop).
    pub fn close(&self) {
        drop(std::mem::take(&mut *lock(&self.jobs)));
    }
}

/// The Python side's handle on an open inbox (`mcpcore._inbox.Inbox` keeps it): called on
/// the loop's thread when the socket woke it. It refers to the inbox, not to the server, so a
/// serving server stays collectable and its calls are still started after it was.
#[pyclass(module = "mcpcore._native", frozen)]
pub struct InboxDrain {
    inbox: Arc<Inbox>,
    owner: std::sync::Weak<Loop>,
    /// The watched end (owned by the Python side, open while it calls [`InboxDrain::drain`]).
    fd: i64,
}

impl InboxDrain {
    pub fn new(inbox: Arc<Inbox>, owner: &Arc<Loop>, fd: i64) -> Self {
        Self {
            inbox,
            owner: Arc::downgrade(owner),
            fd,
        }
    }
}

#[pymethods]
impl InboxDrain {
    /// On the loop's thread when the watched end is readable: read the wake-up bytes, then
    /// start the calls waiting (in that order, so a call queued after the take writes a new
    /// byte). `False` when the end closed and the reader should be removed.
    fn drain(&self, py: Python<'_>) -> bool {
        let open = read_wakeups(self.fd);
        self.inbox.drain(py);
        open
    }

    /// The serve call ended (after `loop.remove_reader`): later calls take the thread path,
    /// calls still queued fail.
    fn close(&self) {
        if let Some(owner) = self.owner.upgrade() {
            owner.clear_inbox(&self.inbox);
        }
        self.inbox.close();
    }
}

/// Read the wake-up bytes waiting on the watched end `fd` (owned by the Python side, open
/// while it calls here); `false` at end of file (the writing end closed) or on an error other
/// than "nothing more to read".
pub(crate) fn read_wakeups(fd: i64) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        let Ok(fd) = i32::try_from(fd) else {
            return false;
        };
        // SAFETY: the Python side owns `fd` and keeps it open while it calls here; the stream
        // is never dropped (ManuallyDrop), so it does not close it.
        let sock = std::mem::ManuallyDrop::new(unsafe { Sock::from_raw_fd(fd) });
        let mut buf = [0u8; 512];
        loop {
            match std::io::Read::read(&mut &*sock, &mut buf) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        false
    }
}

/// Start one queued call: on the loop's thread (`now`, from [`Inbox::drain`]), or through
/// `Spawn` from a blocking thread (a call taken back from an inbox the loop stopped reading).
/// The interpreter lock is held.
fn start(py: Python<'_>, job: Job, now: bool) {
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
    let started = args.and_then(|args| call.invoke_with(py, args, responder.clone_ref(py), now));
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

/// How long a queued call waits for the loop to take it before it is taken back and started
/// the thread way: a loop that ended without its serve call closing the inbox (an HTTP handle
/// never closed) must not leave calls waiting forever. A loop merely busy that long loses
/// nothing: the call then waits for it through `call_soon_threadsafe` instead.
const PATIENCE: Duration = Duration::from_secs(1);

impl Inbox {
    /// Take back the queued call with `state`, if the loop has not taken it yet.
    fn reclaim(&self, state: &Arc<Mutex<CallState>>) -> Option<Job> {
        let mut jobs = lock(&self.jobs);
        let i = jobs.iter().position(|j| Arc::ptr_eq(&j.state, state))?;
        Some(jobs.remove(i))
    }
}

/// How an `async def` call reaches the loop.
pub(crate) enum Route {
    /// Queued in the loop's inbox (from one of core's threads).
    Queue(Arc<Inbox>),
    /// Started right here: this is the loop's own thread, inside `NativePump.feed` (which holds
    /// the interpreter lock), so the call needs no queue and no wake-up (`crate::pump`).
    Here,
}

/// An `async def` call: queued for the loop or started at once (`route`), then the reply
/// awaited (or the peer's cancellation, which cancels the task).
pub(crate) async fn call(
    route: Route,
    call: Call,
    ctx: RequestContext,
    params: Value,
    shaping: Option<(Arc<ResultShape>, Option<String>)>,
) -> Result<mcpcore::Outcome, HandlerError> {
    let (tx, mut rx) = oneshot::channel();
    let state = Arc::new(Mutex::new(CallState::default()));
    let job = Job {
        call,
        ctx: ctx.clone(),
        params,
        shaping,
        tx,
        state: state.clone(),
    };
    let inbox = match route {
        Route::Queue(inbox) => {
            inbox.push(job);
            Some(inbox)
        }
        Route::Here => {
            // `None` once the interpreter is shutting down: the job (and its sender) drop, and
            // the call fails below.
            bridge::attach(move |py| start(py, job, true));
            None
        }
    };
    // Only a queued call can wait for a loop that no longer reads its inbox.
    let mut waited = inbox.is_none();
    let patience = tokio::time::sleep(if waited { Duration::ZERO } else { PATIENCE });
    tokio::pin!(patience);
    loop {
        tokio::select! {
            biased;
            r = &mut rx => {
                return r.unwrap_or_else(|_| Err(HandlerError::internal("the handler ended without a reply")));
            }
            () = ctx.cancelled() => break,
            () = &mut patience, if !waited => {
                waited = true;
                if let Some(job) = inbox.as_ref().and_then(|i| i.reclaim(&state)) {
                    bridge::attach_blocking(move |py| start(py, job, false)).await;
                }
            }
        }
    }
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
