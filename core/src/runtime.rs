//! The owned tokio runtime for embedders: the C ABI, Python and Node start, size and stop it the
//! same way.
//!
//! A foreign program never drives an executor (the pattern not to copy from hyper's C API): a
//! [`Runtime`] owns its worker threads, and every handler callback, completion and transport of the
//! servers and clients that use it runs on them. A foreign thread that must wait for an outcome
//! (a blocking C call, a synchronous Python method) waits with [`Runtime::run`] or
//! [`Runtime::block_on`]. Both refuse, with [`RuntimeError::WouldDeadlock`], to wait on a runtime
//! thread (inside a callback): the waiting thread would be the worker that has to make the
//! progress it waits for, and tokio itself panics on a nested `block_on`.
//!
//! Worker threads block `SIGPIPE` (unix): a write to a pipe or socket whose reader is gone (a
//! stdio server that exited, a client that hung up) fails with `EPIPE` instead of killing the
//! embedding program, whose disposition is usually the default (terminate). Only the runtime's
//! own threads change; the process-wide disposition is left alone. [`Runtime::run`] keeps all
//! I/O on those threads.
//!
//! Stopping: [`Runtime::shutdown`] stops the workers and waits for blocking work (a pending stdin
//! read) at most the given time. Dropping the runtime does the same with
//! [`DEFAULT_SHUTDOWN_TIMEOUT`]. On a runtime thread, where joining the workers would join the
//! thread itself, both stop the workers without waiting.
//!
//! ```
//! let rt = mcpcore::runtime::Runtime::new(2)?;
//! assert_eq!(rt.run(async { 40 + 2 })?, 42);
//! let refused = rt.run(async move {
//!     // On a worker thread, blocking is refused instead of deadlocking.
//!     mcpcore::runtime::ensure_may_block().map_err(|e| e.kind())
//! })?;
//! assert_eq!(refused, Err(mcpcore::ErrorKind::WouldDeadlock));
//! rt.shutdown(std::time::Duration::from_secs(1));
//! # Ok::<(), mcpcore::runtime::RuntimeError>(())
//! ```

use std::future::Future;
use std::time::Duration;

/// How long dropping a [`Runtime`] waits for blocking work before it stops waiting.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the runtime could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// Called on a runtime thread (inside a callback or a task), where waiting would stall or
    /// deadlock the engine. Nothing was done.
    #[error(
        "blocking is not allowed on a runtime thread (e.g. inside a callback): it would deadlock"
    )]
    WouldDeadlock,
    /// The runtime stopped before the work finished.
    #[error("the runtime shut down before the work finished")]
    ShutDown,
    /// The operating system refused the worker threads.
    #[error("cannot start the runtime: {0}")]
    Start(#[source] std::io::Error),
}

/// Fail with [`RuntimeError::WouldDeadlock`] when the calling thread runs inside a tokio runtime
/// (this crate's or any other): a blocking wait there stalls the worker that should make the
/// progress waited for. Bindings call it at the top of every blocking entry point.
///
/// # Errors
/// [`RuntimeError::WouldDeadlock`].
pub fn ensure_may_block() -> Result<(), RuntimeError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(RuntimeError::WouldDeadlock);
    }
    Ok(())
}

/// A multi-threaded tokio runtime with its own worker threads (named `mcpcore-worker`), I/O and
/// timers enabled. Share it (e.g. in an `Arc`) among the servers and clients of one program.
#[derive(Debug)]
pub struct Runtime {
    rt: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
}

impl Runtime {
    /// Start a runtime with `worker_threads` workers; `0` chooses the number of CPUs.
    ///
    /// # Errors
    /// [`RuntimeError::Start`] when the operating system refuses the threads.
    pub fn new(worker_threads: usize) -> Result<Self, RuntimeError> {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.enable_all()
            .thread_name("mcpcore-worker")
            .on_thread_start(block_sigpipe);
        if worker_threads > 0 {
            b.worker_threads(worker_threads);
        }
        let rt = b.build().map_err(RuntimeError::Start)?;
        let handle = rt.handle().clone();
        Ok(Self {
            rt: Some(rt),
            handle,
        })
    }

    /// The tokio handle, to spawn work or enter the runtime's context.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }

    /// Run `fut` on the workers without waiting for it.
    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(fut)
    }

    /// Run `fut` on a worker and wait for its output on the calling thread, so that all its I/O
    /// (pipes to a child process, sockets) happens on runtime threads, where `SIGPIPE` is
    /// blocked, never on the caller's. A panic in `fut` is resumed on the calling thread.
    ///
    /// # Errors
    /// [`RuntimeError::WouldDeadlock`] on a runtime thread (nothing was run);
    /// [`RuntimeError::ShutDown`] when the runtime stopped before `fut` finished.
    pub fn run<F>(&self, fut: F) -> Result<F::Output, RuntimeError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let rt = self.runtime_for_blocking()?;
        match rt.block_on(rt.spawn(fut)) {
            Ok(v) => Ok(v),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(RuntimeError::ShutDown),
        }
    }

    /// Run `fut` to completion on the calling thread (for futures that are not `Send`, or that
    /// should run where they are; their spawned tasks still run on the workers).
    ///
    /// # Errors
    /// [`RuntimeError::WouldDeadlock`] on a runtime thread (nothing was run).
    pub fn block_on<F: Future>(&self, fut: F) -> Result<F::Output, RuntimeError> {
        Ok(self.runtime_for_blocking()?.block_on(fut))
    }

    fn runtime_for_blocking(&self) -> Result<&tokio::runtime::Runtime, RuntimeError> {
        ensure_may_block()?;
        self.rt.as_ref().ok_or(RuntimeError::ShutDown)
    }

    /// Stop the workers: running tasks are dropped at their next await point, and blocking work
    /// (a pending stdin read) is waited for at most `timeout`. On a runtime thread the workers
    /// are stopped without waiting (joining would join the calling thread itself).
    pub fn shutdown(mut self, timeout: Duration) {
        self.stop(timeout);
    }

    fn stop(&mut self, timeout: Duration) {
        if let Some(rt) = self.rt.take() {
            if ensure_may_block().is_err() {
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(timeout);
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop(DEFAULT_SHUTDOWN_TIMEOUT);
    }
}

/// Block `SIGPIPE` on the calling (worker) thread; see the [module docs](self).
fn block_sigpipe() {
    #[cfg(unix)]
    {
        use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
        let mut set = SigSet::empty();
        set.add(Signal::SIGPIPE);
        if let Err(e) = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None) {
            tracing::warn!(error = %e, "could not block SIGPIPE on a runtime thread");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn run_and_block_on_return_the_output() {
        let rt = Runtime::new(2).expect("runtime");
        assert_eq!(rt.run(async { 7 }).expect("run"), 7);
        let local = std::rc::Rc::new(5); // not Send: block_on accepts it
        assert_eq!(rt.block_on(async move { *local + 1 }).expect("block_on"), 6);
        let name = rt
            .run(async { std::thread::current().name().map(str::to_owned) })
            .expect("run");
        assert_eq!(
            name.as_deref(),
            Some("mcpcore-worker"),
            "run executes on a worker"
        );
    }

    /// Waiting on a worker thread is refused, not deadlocked (a 1-worker runtime would hang
    /// forever if `run` waited there).
    #[test]
    fn blocking_on_a_worker_thread_is_refused() {
        let rt = Arc::new(Runtime::new(1).expect("runtime"));
        let inner = rt.clone();
        let (run, block) = rt
            .run(async move {
                let run = inner.run(async {}).map_err(|e| e.kind());
                let block = inner.block_on(async {}).map_err(|e| e.kind());
                (run, block)
            })
            .expect("outer run");
        assert_eq!(run, Err(ErrorKind::WouldDeadlock));
        assert_eq!(block, Err(ErrorKind::WouldDeadlock));
        assert!(ensure_may_block().is_ok(), "a plain thread may block");
    }

    #[test]
    fn a_panic_is_resumed_on_the_caller() {
        let rt = Runtime::new(1).expect("runtime");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.run(async { panic!("boom") })
        }));
        assert!(r.is_err());
        assert_eq!(rt.run(async { 1 }).expect("still usable"), 1);
    }

    /// Shutdown waits for blocking work at most its timeout.
    #[test]
    fn shutdown_is_bounded_by_its_timeout() {
        let rt = Runtime::new(1).expect("runtime");
        drop(
            rt.handle()
                .spawn_blocking(|| std::thread::sleep(Duration::from_secs(10))),
        );
        let t = Instant::now();
        rt.shutdown(Duration::from_millis(100));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    /// The last reference dropped inside a task stops the runtime without joining the thread
    /// it runs on (which would deadlock or panic).
    #[test]
    fn dropping_on_a_worker_thread_does_not_join_itself() {
        let rt = Arc::new(Runtime::new(1).expect("runtime"));
        let (tx, rx) = std::sync::mpsc::channel();
        let last = rt.clone();
        rt.spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(last);
            let _ = tx.send(());
        });
        drop(rt);
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the task ran to its end");
    }

    #[cfg(unix)]
    #[test]
    fn workers_block_sigpipe() {
        use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
        let rt = Runtime::new(1).expect("runtime");
        let blocked = rt
            .run(async {
                let mut old = SigSet::empty();
                pthread_sigmask(SigmaskHow::SIG_BLOCK, None, Some(&mut old)).expect("mask");
                old.contains(Signal::SIGPIPE)
            })
            .expect("run");
        assert!(blocked);
    }
}
