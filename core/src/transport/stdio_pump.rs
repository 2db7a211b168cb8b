//! The stdio transport driven by the embedder's own thread (REQUIREMENTS STDIO-01…04, the same
//! rules as [`super::stdio`]): the embedder reads its input and hands the bytes to
//! [`StdioPump::feed`], and writes what comes back.
//!
//! Why: an embedder with its own event loop (a JavaScript engine's thread) already owns the
//! stdin/stdout streams and the handlers. Serving on core's runtime costs three thread hand-offs
//! per request there (runtime reader → engine thread for the handler → runtime → writer), while
//! the request itself is microseconds of work. Here a request is started and polled once on the
//! calling thread: a handler that answers without waiting (a synchronous JavaScript function)
//! is answered within the same `feed` call, with no hand-off at all. A request that waits
//! (an async handler, a server→client request) continues as a task on the runtime, and its
//! answer is queued for the embedder, who is told through the `wake` callback; or, for an
//! embedder whose handlers finish on its own thread ([`StdioPump::local`]: a Python task on
//! the asyncio loop), it is kept and polled again on that thread once woken.
//!
//! Framing is the JSON-RPC codec's: newline-delimited, a trailing `\r` trimmed, blank
//! lines skipped, each frame capped at [`crate::Limits::max_message_bytes`] (a frame crossing
//! the cap is answered -32600 and ends the connection, STDIO-01), and a final frame without a
//! newline still counts at end of input ([`StdioPump::feed_eof`]).

use std::collections::HashMap;
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use serde_json::Value;
use tokio_util::task::TaskTracker;

use super::stdio::{drain, finish_batch, start_batch, Batch, StdioError};
use super::Outbound;
use crate::error::ErrorObject;
use crate::jsonrpc::{classify, encode_error, parse_frame, Incoming, ParsedFrame};
use crate::server::{encode_reply, Reply, Server, Session, SessionKind};
use crate::Id;
use crate::Limits;

/// Chunks up to this many bytes count as a lone frame (as in [`super::spin`]).
const SMALL_READ: usize = 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A request being served: its answer, or `None` when it was cancelled.
type RequestFuture = Pin<Box<dyn Future<Output = Option<Reply>> + Send>>;

/// Requests kept for the embedder's thread ([`StdioPump::local`]) and the ones woken since
/// they were last polled.
#[derive(Default)]
struct Held {
    futs: Mutex<HashMap<u64, (Id, RequestFuture)>>,
    ready: Mutex<Vec<u64>>,
    next: AtomicU64,
    /// To wake the embedder (weak: the output side owns nothing of this).
    out: Weak<PumpOut>,
}

impl Held {
    fn wake(&self, key: u64) {
        let first = {
            let mut ready = lock(&self.ready);
            if ready.contains(&key) {
                return;
            }
            ready.push(key);
            ready.len() == 1
        };
        if first {
            if let Some(out) = self.out.upgrade() {
                out.notify();
            }
        }
    }
}

/// The waker of a kept request: marks it ready and wakes the embedder (from any thread).
struct HeldWaker {
    key: u64,
    held: Weak<Held>,
}

impl Wake for HeldWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(held) = self.held.upgrade() {
            held.wake(self.key);
        }
    }
}

/// What is waiting to be written, and whether the embedder is inside `feed` (it then takes the
/// output when the call returns, so nobody needs waking).
struct OutState {
    buf: Vec<u8>,
    feeding: bool,
}

/// The connection's outbound side: newline-terminated messages in one buffer.
struct PumpOut {
    state: Mutex<OutState>,
    wake: Box<dyn Fn() + Send + Sync>,
    /// `Limits::max_outbound_bytes`: notifications and server→client requests are refused
    /// beyond it (the sender learns it, as with the runtime transport's queue). Answers are
    /// always taken: at most `Limits::max_inflight` are owed.
    cap: usize,
}

impl PumpOut {
    fn push(&self, frame: &[u8], answer: bool) -> bool {
        let wake = {
            let mut s = lock(&self.state);
            if !answer && s.buf.len() >= self.cap {
                return false;
            }
            let was_empty = s.buf.is_empty();
            s.buf.reserve(frame.len() + 1);
            s.buf.extend_from_slice(frame);
            s.buf.push(b'\n');
            was_empty && !s.feeding
        };
        if wake {
            (self.wake)();
        }
        true
    }

    /// Something for the embedder's next `take_output`: wake it unless it is inside a call
    /// that returns output anyway.
    fn notify(&self) {
        if !lock(&self.state).feeding {
            (self.wake)();
        }
    }

    /// The embedder is inside `feed`: output is returned by that call, nobody needs waking.
    fn hold(&self) {
        lock(&self.state).feeding = true;
    }

    /// Everything queued so far; later output wakes the embedder again.
    fn take(&self) -> Vec<u8> {
        let mut s = lock(&self.state);
        s.feeding = false;
        std::mem::take(&mut s.buf)
    }
}

impl Outbound for PumpOut {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        self.push(&frame, false)
    }
}

/// The input side: the partial frame carried between `feed` calls.
#[derive(Default)]
struct InState {
    partial: Vec<u8>,
    /// Input ended (EOF, a fatal framing error or [`StdioPump::feed_eof`]): later bytes are
    /// ignored.
    closed: bool,
    /// The last chunk fed was small: [`StdioPump::spin`] may poll for the next one.
    spin_next: bool,
}

/// What one [`StdioPump::feed`] produced.
#[derive(Debug)]
#[non_exhaustive]
pub struct Fed {
    /// Bytes to write to stdout now (whole newline-terminated messages, possibly empty).
    pub output: Vec<u8>,
    /// `Err` when the connection must end (a frame crossed the cap): its error answer is in
    /// `output`; stop reading and call [`StdioPump::drain`].
    pub result: Result<(), StdioError>,
}

/// One stdio connection whose I/O the embedder does (see the module docs). All methods are
/// called from one thread at a time, inside the Tokio runtime's context (`Handle::enter`):
/// requests that wait continue as tasks on that runtime.
pub struct StdioPump {
    session: Arc<Session>,
    sink: Arc<dyn Outbound>,
    out: Arc<PumpOut>,
    tracker: TaskTracker,
    limits: Limits,
    input: Mutex<InState>,
    /// Stdin for [`StdioPump::spin`]: opened on first use, `None` inside when it is no pipe.
    poller: Mutex<Option<Option<Poller>>>,
    /// Requests that wait, kept to be polled on the embedder's thread ([`StdioPump::local`]);
    /// `None`: they continue as runtime tasks.
    held: Option<Arc<Held>>,
}

impl StdioPump {
    /// A connection of `server`; `wake` is called (from any thread) when output was queued
    /// outside a `feed` call and the embedder should [`StdioPump::take_output`]. It is not
    /// called again until the output was taken.
    ///
    /// # Errors
    /// A limit out of range (`max_message_bytes` zero).
    pub fn new(server: &Server, wake: Box<dyn Fn() + Send + Sync>) -> Result<Self, StdioError> {
        let limits = server.limits().clone();
        if limits.max_message_bytes == 0 {
            return Err(StdioError::Limit(crate::limits::LimitError {
                name: "max_message_bytes",
                reason: "must be positive",
            }));
        }
        let out = Arc::new(PumpOut {
            state: Mutex::new(OutState {
                buf: Vec::new(),
                feeding: false,
            }),
            wake,
            cap: limits.max_outbound_bytes,
        });
        let sink: Arc<dyn Outbound> = out.clone();
        Ok(Self {
            session: server.new_session(SessionKind::Stdio, sink.clone()),
            sink,
            out,
            tracker: TaskTracker::new(),
            limits,
            input: Mutex::new(InState::default()),
            poller: Mutex::new(None),
            held: None,
        })
    }

    /// Keep requests that wait on the embedder's thread instead of handing them to the
    /// runtime: when one is woken (from any thread), the embedder is woken too (the `wake`
    /// callback), and its next [`StdioPump::take_output`] polls it there. For an embedder whose
    /// handlers finish on its own thread (a Python task on the asyncio loop) this saves the
    /// round through a runtime thread: the handler's answer is written from the thread that
    /// ran it. [`StdioPump::drain`] hands what is still kept to the runtime.
    #[must_use]
    pub fn local(mut self) -> Self {
        self.held = Some(Arc::new(Held {
            out: Arc::downgrade(&self.out),
            ..Held::default()
        }));
        self
    }

    /// Handle `bytes` read from stdin: every complete frame is handled in order, and what is
    /// ready to be written is returned (answers of requests that completed at once included).
    pub fn feed(&self, bytes: &[u8]) -> Fed {
        self.out.hold();
        lock(&self.input).spin_next = bytes.len() <= SMALL_READ;
        let result = self.frames(bytes);
        self.run_held();
        Fed {
            output: self.take_held_output(),
            result,
        }
    }

    /// End of input: a final frame without a newline is handled (STDIO-01), and reading stops.
    pub fn feed_eof(&self) -> Fed {
        self.out.hold();
        let last = {
            let mut input = lock(&self.input);
            let was_closed = std::mem::replace(&mut input.closed, true);
            let last = std::mem::take(&mut input.partial);
            if was_closed {
                Vec::new()
            } else {
                last
            }
        };
        if let Some(frame) = trimmed(&last) {
            self.on_frame(frame);
        }
        Fed {
            output: self.take_held_output(),
            result: Ok(()),
        }
    }

    /// What was queued since the last `feed` / `take_output` (after a `wake`); kept requests
    /// that were woken are polled first ([`StdioPump::local`]).
    pub fn take_output(&self) -> Vec<u8> {
        if self.held.is_none() {
            return self.out.take();
        }
        self.out.hold();
        self.run_held();
        self.take_held_output()
    }

    /// The output queued during a call that held it. A kept request woken meanwhile (the
    /// embedder was not woken: it was inside the call) wakes it now, for its next
    /// `take_output`.
    fn take_held_output(&self) -> Vec<u8> {
        let out = self.out.take();
        if let Some(held) = &self.held {
            if !lock(&held.ready).is_empty() {
                (self.out.wake)();
            }
        }
        out
    }

    /// Poll the kept requests that were woken; a finished one's answer is queued.
    fn run_held(&self) {
        let Some(held) = &self.held else {
            return;
        };
        // Bounded: a request woken again while it is polled waits for the next call (its
        // wake-up calls the embedder again).
        for _ in 0..4 {
            let ready = std::mem::take(&mut *lock(&held.ready));
            if ready.is_empty() {
                return;
            }
            for key in ready {
                let Some((id, mut fut)) = lock(&held.futs).remove(&key) else {
                    continue;
                };
                let waker = Waker::from(Arc::new(HeldWaker {
                    key,
                    held: Arc::downgrade(held),
                }));
                match fut.as_mut().poll(&mut Context::from_waker(&waker)) {
                    Poll::Ready(Some(reply)) => self.answer(encode_reply(&id, &reply)),
                    Poll::Ready(None) => {}
                    Poll::Pending => {
                        lock(&held.futs).insert(key, (id, fut));
                    }
                }
            }
        }
    }

    /// Keep a request that waits (local mode), or hand it to the runtime.
    fn keep(&self, id: Id, fut: RequestFuture) {
        if let Some(held) = &self.held {
            if !lock(&self.input).closed {
                let key = held.next.fetch_add(1, Ordering::Relaxed);
                lock(&held.futs).insert(key, (id, fut));
                // Its first poll saw a no-op waker: poll it again with its own.
                held.wake(key);
                return;
            }
        }
        self.spawn(id, fut);
    }

    fn spawn(&self, id: Id, fut: RequestFuture) {
        let out = self.out.clone();
        self.tracker.spawn(async move {
            if let Some(reply) = fut.await {
                out.push(&encode_reply(&id, &reply), true);
            }
        });
    }

    /// Wait for more input by polling stdin for up to `budget` without sleeping, right after an
    /// answer was written (see `transport::spin` for why: a peer that talks in turns sends its
    /// next request microseconds later, and a thread that went to sleep costs a full wake-up to
    /// get it). The budget is [`crate::Limits::stdio_idle_spin`], and as there only after a
    /// small read (a lone frame): after a pipelined burst the next one is left to accumulate.
    /// Bytes that arrive are handled as by [`StdioPump::feed`] and its output returned;
    /// `None` when the budget ran out, at end of input or on a read error (the embedder's own
    /// reader then sees the same), and at once when stdin is not a pipe (Linux only). The
    /// embedder blocks its thread for at most `budget`; a zero budget never polls.
    pub fn spin(&self) -> Option<Fed> {
        let budget = self.limits.stdio_idle_spin;
        {
            let input = lock(&self.input);
            if budget.is_zero() || input.closed || !input.spin_next {
                return None;
            }
        }
        let mut guard = lock(&self.poller);
        let poller = guard.get_or_insert_with(Poller::open).as_mut()?;
        let deadline = Instant::now() + budget;
        let n = loop {
            match poller.file.read(&mut poller.buf) {
                Ok(0) => return None,
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return None;
                    }
                    std::hint::spin_loop();
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        };
        let bytes = std::mem::take(&mut poller.buf);
        drop(guard);
        let fed = self.feed(&bytes[..n]);
        if let Some(Some(p)) = lock(&self.poller).as_mut() {
            p.buf = bytes;
        }
        Some(fed)
    }

    /// Stop reading and let the requests in flight finish (STDIO-04: within `shutdown_grace`,
    /// then they are cancelled); `stdout_gone` cancels them at once (nothing could be
    /// delivered). Their answers are queued: take them with [`StdioPump::take_output`]
    /// afterwards.
    pub async fn drain(&self, stdout_gone: bool) {
        lock(&self.input).closed = true;
        if let Some(held) = &self.held {
            let kept = std::mem::take(&mut *lock(&held.futs));
            for (id, fut) in kept.into_values() {
                self.spawn(id, fut);
            }
        }
        drain(&self.tracker, &self.session, &self.limits, stdout_gone).await;
        crate::telemetry::flush_on_stop().await;
    }

    fn frames(&self, mut bytes: &[u8]) -> Result<(), StdioError> {
        let limit = self.limits.max_message_bytes;
        loop {
            // The partial frame is taken out, so handlers run without the input lock held.
            let mut frame = {
                let mut input = lock(&self.input);
                if input.closed {
                    return Ok(());
                }
                std::mem::take(&mut input.partial)
            };
            let (payload, complete) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (&bytes[..i], true),
                None => (bytes, false),
            };
            if frame.len() + payload.len() > limit {
                lock(&self.input).closed = true;
                tracing::error!(
                    limit,
                    "inbound frame exceeds the size limit; closing the connection"
                );
                let err = ErrorObject::invalid_request(format!("message exceeds {limit} bytes"));
                self.out.push(&encode_error(None, &err), true);
                return Err(StdioError::FrameTooLarge(limit));
            }
            if !complete {
                frame.extend_from_slice(payload);
                lock(&self.input).partial = frame;
                return Ok(());
            }
            bytes = &bytes[payload.len() + 1..];
            let whole: &[u8] = if frame.is_empty() {
                payload
            } else {
                frame.extend_from_slice(payload);
                &frame
            };
            if let Some(f) = trimmed(whole) {
                self.on_frame(f);
            }
            frame.clear();
            // Keep the allocation for the next partial frame.
            let mut input = lock(&self.input);
            if input.partial.is_empty() {
                input.partial = frame;
            }
        }
    }

    fn on_frame(&self, frame: &[u8]) {
        match parse_frame(frame, self.limits.max_json_depth) {
            ParsedFrame::Error(e) => self.answer(encode_error(None, &e)),
            ParsedFrame::Single(v) => self.on_value(v),
            ParsedFrame::Batch(items) => self.on_batch(items),
        }
    }

    fn answer(&self, frame: Vec<u8>) {
        self.out.push(&frame, true);
    }

    fn on_value(&self, v: Value) {
        match classify(v) {
            Incoming::Request { id, method, params } => {
                match self
                    .session
                    .start_request(id.clone(), method, params, self.sink.clone())
                {
                    Ok(fut) => {
                        // Polled once here: a request that needs no waiting is answered now,
                        // without a task. The waker is a no-op because a pending request is
                        // handed to the runtime, whose first poll registers the real one.
                        let mut fut: RequestFuture = Box::pin(fut);
                        match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                            Poll::Ready(Some(reply)) => self.answer(encode_reply(&id, &reply)),
                            Poll::Ready(None) => {}
                            Poll::Pending => self.keep(id, fut),
                        }
                    }
                    Err(reply) => self.answer(encode_reply(&id, &reply)),
                }
            }
            Incoming::Notification { method, params } => {
                self.session.handle_notification(&method, params.as_ref())
            }
            Incoming::Response { id, outcome } => {
                self.session.deliver_response(&id, outcome);
            }
            Incoming::Invalid { id, error } => self.answer(encode_error(id.as_ref(), &error)),
        }
    }

    /// JSON-RPC batches (JR-06, rare: 2025-03-26 only) take the runtime path of
    /// [`super::stdio`] as a whole.
    fn on_batch(&self, items: Vec<Value>) {
        let max = self.limits.max_batch_len;
        match start_batch(&self.session, &self.sink, &self.tracker, items, max) {
            Batch::Nothing => {}
            Batch::Refused(frame) => self.answer(frame),
            Batch::Started(answers) => {
                let out = self.out.clone();
                self.tracker.spawn(async move {
                    if let Some(frame) = finish_batch(answers).await {
                        out.push(&frame, true);
                    }
                });
            }
        }
    }
}

impl Drop for StdioPump {
    fn drop(&mut self) {
        // Requests still running when the embedder lets go are cancelled, not orphaned.
        self.tracker.close();
        self.session.cancel_all();
    }
}

/// Stdin reopened non-blocking through `/proc/self/fd/0`: a new open file description of the
/// same pipe, so the process's fd 0 (and the embedder's reader on it) keep their mode. Bytes
/// read here are consumed from the pipe: the embedder's reader simply finds them gone.
struct Poller {
    file: std::fs::File,
    buf: Vec<u8>,
}

impl Poller {
    fn open() -> Option<Self> {
        Some(Self {
            file: stdin_nonblocking()?,
            buf: vec![0; 64 * 1024],
        })
    }
}

/// This process's stdin reopened non-blocking through `/proc/self/fd/0`: a new open file
/// description of the same pipe, so fd 0 (and any reader on it) keeps its mode. `None` when
/// stdin is not a pipe (a regular file reopened would have its own offset and be read twice)
/// and off Linux.
#[cfg(target_os = "linux")]
#[must_use]
pub fn stdin_nonblocking() -> Option<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open("/proc/self/fd/0")
        .ok()?;
    file.metadata().ok()?.file_type().is_fifo().then_some(file)
}

/// See the Linux version: elsewhere there is none.
#[cfg(not(target_os = "linux"))]
#[must_use]
pub fn stdin_nonblocking() -> Option<std::fs::File> {
    None
}

/// A frame without its trailing `\r`, or `None` for a blank line (skipped, as the codec does).
fn trimmed(frame: &[u8]) -> Option<&[u8]> {
    let f = frame.strip_suffix(b"\r").unwrap_or(frame);
    if f.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some(f)
    }
}

#[cfg(test)]
#[path = "stdio_pump_tests.rs"]
mod tests;
