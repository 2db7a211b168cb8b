//! Stdio for plain `def` handlers, read by a thread that also runs them (core's [`StdioPump`]
//! does the framing and dispatch, STDIO-01…04).
//!
//! Why: served on core's runtime, a `def` call crosses four threads (a runtime worker reads
//! it, a blocking thread runs it, a worker finishes the request, the writer task writes the
//! answer): `perf stat` counted 4.3 context switches per call under sequential load, each a
//! wake-up of a sleeping thread, while the call itself is a few microseconds of Python. Here
//! one thread, the *leader*, reads stdin, feeds the bytes to the pump and, once the pump
//! returns, runs the `def` calls it queued ([`queue`]) itself, with the interpreter lock, then
//! writes the answers and polls stdin again: a request/answer turn costs no thread switch.
//!
//! A `def` still never holds up the others, as on the official SDK's worker threads: a
//! *monitor* thread looks every [`TICK`]; a call that has run for a whole tick loses the leader
//! its role, and a new leader thread goes on reading while the old one finishes the call and
//! ends (calls it had queued behind it go to the runtime's blocking threads). So a request
//! that arrives while a `def` blocks waits at most two ticks. The monitor sleeps for good when
//! no call has started for [`QUIET_TICKS`] ticks, and the next call wakes it.
//!
//! Output queued outside the leader's turn (a task's answer, a notification sent from a
//! runtime thread, an `async def` finished on the loop) wakes an *output* thread, which takes
//! and writes it. One lock ([`Shared::turn`]) covers each pump call and the write of what it
//! returned, so messages leave in the order they were queued.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read as _, Write};
use std::os::fd::{AsFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcpcore::transport::stdio_pump::{Fed, StdioPump};
use mcpcore::Server;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use pyo3::prelude::*;
use tokio::sync::oneshot;

use crate::bridge;

/// How often the monitor looks at the call the leader runs.
pub const TICK: Duration = Duration::from_millis(2);
/// Ticks without a call started before the monitor sleeps until the next call.
const QUIET_TICKS: u32 = 50;
/// `busy` when the monitor took the role from a leader (no call is watched).
const HANDED: u64 = u64::MAX;
/// Leaders still in the call they lost the role in, at most: beyond, calls go to the runtime's
/// blocking threads (as many calls that block would otherwise make as many threads).
const MAX_STUCK: usize = 64;
/// Reads up to this many bytes count as a lone frame: the next read spins first.
const SMALL_READ: usize = 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A `def` call waiting for the leader: it enters the interpreter and runs.
type Job = Box<dyn FnOnce() + Send>;

/// The calls queued by one connection's leader.
pub struct Jobs {
    queue: Mutex<VecDeque<Job>>,
}

impl Jobs {
    /// Run `f` with the interpreter when the leader gets to it (right after the pump call that
    /// queued it returns); `None` once the interpreter is shutting down.
    pub async fn run<R: Send + 'static>(
        self: Arc<Self>,
        f: impl for<'py> FnOnce(Python<'py>) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = oneshot::channel();
        lock(&self.queue).push_back(Box::new(move || {
            let _ = tx.send(bridge::attach(f));
        }));
        rx.await.ok().flatten()
    }
}

thread_local! {
    /// The queue of the leader feeding on this thread, else `None`.
    static QUEUE: RefCell<Option<Arc<Jobs>>> = const { RefCell::new(None) };
    /// The number of the call this thread runs as the leader, else 0: while it still is the
    /// leader it takes the output afterwards, so a wake-up for the output thread is not needed.
    static RUNNING: Cell<u64> = const { Cell::new(0) };
}

/// Where a plain `def` call made on this thread goes: the leader's queue while it feeds.
pub fn queue() -> Option<Arc<Jobs>> {
    QUEUE.with(|q| q.borrow().clone())
}

/// Sets this thread's [`QUEUE`] until dropped.
struct Queueing;

impl Queueing {
    fn enter(jobs: &Arc<Jobs>) -> Self {
        QUEUE.with(|q| *q.borrow_mut() = Some(jobs.clone()));
        Self
    }
}

impl Drop for Queueing {
    fn drop(&mut self) {
        QUEUE.with(|q| *q.borrow_mut() = None);
    }
}

/// A flag a thread waits on.
#[derive(Default)]
struct Signal {
    set: Mutex<bool>,
    cv: Condvar,
}

impl Signal {
    fn raise(&self) {
        *lock(&self.set) = true;
        self.cv.notify_one();
    }

    /// Wait until raised (or `timeout`); true when it was, which lowers it.
    fn wait(&self, timeout: Option<Duration>) -> bool {
        let mut set = lock(&self.set);
        if !*set {
            set = match timeout {
                Some(t) => {
                    self.cv
                        .wait_timeout(set, t)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => self.cv.wait(set).unwrap_or_else(|p| p.into_inner()),
            };
        }
        std::mem::replace(&mut *set, false)
    }
}

/// Stdin reopened non-blocking (core's `stdin_nonblocking`: fd 0 keeps its mode), the buffer
/// it is read into, and whether the next read spins first.
struct Input {
    file: File,
    buf: Vec<u8>,
    spin_next: bool,
}

impl Input {
    fn open() -> Option<Self> {
        Some(Self {
            file: mcpcore::transport::stdio_pump::stdin_nonblocking()?,
            buf: vec![0; 64 * 1024],
            spin_next: true,
        })
    }
}

/// One connection's state, shared by its leader, monitor and output threads.
struct Shared {
    pump: StdioPump,
    jobs: Arc<Jobs>,
    /// Held for each pump call and the write of its output.
    turn: Mutex<()>,
    input: Mutex<Input>,
    /// Interrupts a leader waiting for input.
    stop_rx: UnixStream,
    stop_tx: UnixStream,
    /// Stop reading (stdout gone, a frame over the cap, the serve call dropped).
    stopping: AtomicBool,
    stdout_gone: AtomicBool,
    /// The connection finished: the monitor and output threads end.
    done: AtomicBool,
    failed: Mutex<Option<String>>,
    /// Tells the serve call how the connection ended.
    finished: Mutex<Option<oneshot::Sender<Result<(), String>>>>,
    /// The call the leader runs (its number), 0 when none, [`HANDED`] after a take-over.
    busy: Arc<AtomicU64>,
    /// Leaders that lost the role and are still in their call.
    stuck: AtomicUsize,
    calls: AtomicU64,
    monitor: Signal,
    monitor_asleep: AtomicBool,
    /// Raised by the pump's wake-up (output queued outside a leader's turn).
    output: Arc<Signal>,
    spin: Duration,
    rt: tokio::runtime::Handle,
}

/// How a wait for input ended.
enum Got {
    /// A chunk was read and fed.
    Fed,
    End,
    Stop,
}

impl Shared {
    /// A pump call and the write of what it returned, in one turn.
    fn turn(&self, queueing: bool, f: impl FnOnce(&StdioPump) -> Vec<u8>) {
        let _turn = lock(&self.turn);
        let out = {
            let _q = queueing.then(|| Queueing::enter(&self.jobs));
            f(&self.pump)
        };
        self.write(&out);
    }

    fn fed(&self, fed: Fed) -> Vec<u8> {
        if let Err(e) = fed.result {
            *lock(&self.failed) = Some(e.to_string());
            self.stop();
        }
        fed.output
    }

    fn write(&self, out: &[u8]) {
        if out.is_empty() || self.stdout_gone.load(Ordering::SeqCst) {
            return;
        }
        // SAFETY: fd 1 stays open for the process's life; `ManuallyDrop` never closes it.
        let mut stdout = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(1) });
        if write_all(&mut stdout, out).is_err() {
            self.stdout_gone.store(true, Ordering::SeqCst);
            self.stop();
        }
    }

    fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = (&self.stop_tx).write(&[1]);
    }

    /// Read the next chunk of input and feed it: polled for up to `spin` after a lone frame,
    /// then waited for.
    fn read(&self) -> Got {
        let mut input = lock(&self.input);
        let deadline =
            (input.spin_next && !self.spin.is_zero()).then(|| Instant::now() + self.spin);
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return Got::Stop;
            }
            let Input { file, buf, .. } = &mut *input;
            match file.read(buf) {
                Ok(0) => return Got::End,
                Ok(n) => {
                    input.spin_next = n <= SMALL_READ;
                    let chunk = &input.buf[..n];
                    self.turn(true, |p| self.fed(p.feed(chunk)));
                    return Got::Fed;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if deadline.is_some_and(|d| Instant::now() < d) {
                        std::hint::spin_loop();
                        continue;
                    }
                    let mut fds = [
                        PollFd::new(input.file.as_fd(), PollFlags::POLLIN),
                        PollFd::new(self.stop_rx.as_fd(), PollFlags::POLLIN),
                    ];
                    let _ = poll(&mut fds, PollTimeout::NONE);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Got::End,
            }
        }
    }

    /// Run the queued calls; false when this thread lost the leader's role meanwhile.
    fn run_jobs(&self) -> bool {
        loop {
            let Some(job) = lock(&self.jobs.queue).pop_front() else {
                return true;
            };
            if self.stuck.load(Ordering::SeqCst) >= MAX_STUCK {
                self.rt.spawn_blocking(job);
                continue;
            }
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            self.busy.store(n, Ordering::SeqCst);
            if self.monitor_asleep.swap(false, Ordering::SeqCst) {
                self.monitor.raise();
            }
            RUNNING.with(|r| r.set(n));
            job();
            RUNNING.with(|r| r.set(0));
            let kept = self
                .busy
                .compare_exchange(n, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if !kept {
                self.stuck.fetch_sub(1, Ordering::SeqCst);
                self.turn(false, StdioPump::take_output);
                return false;
            }
            if lock(&self.jobs.queue).is_empty() {
                // Answers out before the next read (and calls their polling started, run next).
                self.turn(true, StdioPump::take_output);
            }
        }
    }

    /// Take the role from a leader stuck in a call: a new leader reads on, the calls queued
    /// behind the stuck one go to blocking threads, and answers already made are written.
    fn hand_over(self: &Arc<Self>, call: u64) {
        let queued: Vec<Job> = lock(&self.jobs.queue).drain(..).collect();
        for job in queued {
            self.rt.spawn_blocking(job);
        }
        let s = self.clone();
        if std::thread::Builder::new()
            .name("mcpcore-stdio".into())
            .spawn(move || s.lead())
            .is_err()
        {
            // No thread to be had: the stuck leader reads on once its call returns.
            self.stuck.fetch_sub(1, Ordering::SeqCst);
            self.busy.store(call, Ordering::SeqCst);
        }
        self.output.raise();
    }
}

fn write_all(out: &mut File, mut buf: &[u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        match out.write(buf) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                // Someone made stdout non-blocking: wait until it takes more.
                let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLOUT)];
                let _ = poll(&mut fds, PollTimeout::NONE);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[path = "leader_threads.rs"]
mod threads;

pub use threads::serve;
