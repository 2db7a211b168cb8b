//! The owned tokio runtime C programs share among servers and clients. C never drives an executor
//! (the hyper anti-pattern): the runtime owns its worker threads, callbacks run on them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{forbid_runtime_thread, status_guard};
use crate::handle;
use crate::status::mcp_status_t;

pub(crate) struct RuntimeInner {
    rt: Option<tokio::runtime::Runtime>,
}

impl RuntimeInner {
    /// Run `fut` on the runtime's workers.
    pub(crate) fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some(rt) = &self.rt {
            drop(rt.spawn(fut));
        }
    }

    /// Run `fut` on a runtime worker and wait for it on the calling thread, so that all I/O
    /// (pipes to a child process, sockets) happens on runtime threads, where SIGPIPE is blocked
    /// (see [`block_sigpipe`]), never on the caller's thread.
    ///
    /// # Errors
    /// `MCP_STATUS_WOULD_DEADLOCK` on a runtime thread; `MCP_STATUS_CLOSED` when the runtime
    /// shut down first. A panic in `fut` is resumed here (the caller's guard catches it).
    pub(crate) fn run<F>(&self, what: &str, fut: F) -> Result<F::Output, FfiError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        forbid_runtime_thread(what)?;
        let Some(rt) = &self.rt else {
            return Err(FfiError::new(mcp_status_t::Closed, "runtime is shut down"));
        };
        match rt.block_on(rt.spawn(fut)) {
            Ok(v) => Ok(v),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(FfiError::new(
                mcp_status_t::Closed,
                "the runtime shut down before the call finished",
            )),
        }
    }

    /// Run `fut` to completion on the calling thread.
    ///
    /// # Errors
    /// `MCP_STATUS_WOULD_DEADLOCK` on a runtime thread.
    pub(crate) fn block_on<F: Future>(&self, what: &str, fut: F) -> Result<F::Output, FfiError> {
        forbid_runtime_thread(what)?;
        match &self.rt {
            Some(rt) => Ok(rt.block_on(fut)),
            None => Err(FfiError::new(mcp_status_t::Closed, "runtime is shut down")),
        }
    }
}

impl Drop for RuntimeInner {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // The last user was released on a runtime thread: joining would deadlock.
                rt.shutdown_background();
            } else {
                // A blocking stdin read may never return; do not wait for it forever.
                rt.shutdown_timeout(Duration::from_secs(5));
            }
        }
    }
}

/// Block SIGPIPE on the calling (runtime) thread: a write to a pipe whose reader is gone (a
/// stdio server that exited, a client that hung up) then fails with `EPIPE` instead of killing
/// the whole C program, whose SIGPIPE disposition is usually the default (terminate). Only the
/// library's own threads are changed; the process-wide disposition is left alone.
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

/// A multi-threaded runtime whose worker threads run every handler callback, completion and
/// transport of the servers and clients created with it.
pub struct mcp_runtime_t {
    pub(crate) inner: Arc<RuntimeInner>,
}

/// Create a runtime with its own worker threads.
///
/// @param worker_threads  number of worker threads; 0 chooses the number of CPUs.
/// @param runtime_out     receives the new runtime on success (written only on `MCP_STATUS_OK`).
/// @param error_out       optional; receives a detailed error on failure (free with
///                        `mcp_error_free`).
///
/// **Ownership**: the caller owns the runtime and frees it with `mcp_runtime_free`. Servers and
/// clients built on it keep it alive until they are freed too.
///
/// **Thread safety**: the runtime is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`runtime_out`), `MCP_STATUS_TRANSPORT` (the OS refused
/// the threads), `MCP_STATUS_PANIC`.
#[no_mangle]
pub extern "C" fn mcp_runtime_new(
    worker_threads: usize,
    runtime_out: *mut *mut mcp_runtime_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        handle::require_out(runtime_out, "runtime_out")?;
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.enable_all()
            .thread_name("mcpcore-worker")
            .on_thread_start(block_sigpipe);
        if worker_threads > 0 {
            b.worker_threads(worker_threads);
        }
        let rt = b
            .build()
            .map_err(|e| FfiError::new(mcp_status_t::Transport, format!("runtime: {e}")))?;
        let h = handle::into_raw(mcp_runtime_t {
            inner: Arc::new(RuntimeInner { rt: Some(rt) }),
        });
        // SAFETY: runtime_out is non-NULL (checked) and writable (contract).
        unsafe { runtime_out.write(h) };
        Ok(())
    })
}

/// Release the caller's reference to a runtime. NULL is a no-op.
///
/// When no server or client still uses the runtime, its worker threads are stopped and joined
/// (waiting at most 5 seconds for blocking work such as a pending stdin read).
///
/// @param runtime  the runtime.
///
/// **Ownership**: consumes `runtime`.
///
/// **Thread safety**: any thread, including inside a callback, where it never blocks: if that
/// releases the last reference, the worker threads are stopped without being joined (joining
/// would wait for the very thread the callback runs on).
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_runtime_free(runtime: *mut mcp_runtime_t) {
    crate::guard::ffi_guard((), || {
        // SAFETY: runtime is NULL or an owned runtime handle (contract).
        drop(unsafe { handle::take(runtime) });
    });
}
