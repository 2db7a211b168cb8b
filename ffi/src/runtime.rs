//! `mcp_runtime_t`: core's owned runtime ([`mcpcore::runtime::Runtime`]) behind a C handle. Core
//! owns the behaviour (worker threads, SIGPIPE blocked on them, refusing to block on a runtime
//! thread, bounded shutdown); this module only maps its errors to statuses.

use std::future::Future;
use std::sync::Arc;

use mcpcore::runtime::Runtime;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::status_guard;
use crate::handle;
use crate::status::mcp_status_t;

/// The runtime shared by the servers and clients created with one `mcp_runtime_t`.
pub(crate) struct RuntimeInner {
    rt: Runtime,
}

impl RuntimeInner {
    /// Run `fut` on the runtime's workers.
    pub(crate) fn spawn<F>(&self, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        drop(self.rt.spawn(fut));
    }

    /// Enter the runtime's context on the calling thread (any thread, a runtime thread included)
    /// for work that starts background tasks but does not block.
    pub(crate) fn enter(&self) -> tokio::runtime::EnterGuard<'_> {
        self.rt.handle().enter()
    }

    /// Run `fut` on a runtime worker and wait for it on the calling thread (all I/O stays on
    /// runtime threads, see [`Runtime::run`]).
    ///
    /// # Errors
    /// `MCP_STATUS_WOULD_DEADLOCK` on a runtime thread; `MCP_STATUS_CLOSED` when the runtime
    /// shut down first. A panic in `fut` is resumed here (the caller's guard catches it).
    pub(crate) fn run<F>(&self, what: &str, fut: F) -> Result<F::Output, FfiError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.run(fut).map_err(|e| FfiError::runtime(what, &e))
    }

    /// Run `fut` to completion on the calling thread.
    ///
    /// # Errors
    /// `MCP_STATUS_WOULD_DEADLOCK` on a runtime thread.
    pub(crate) fn block_on<F: Future>(&self, what: &str, fut: F) -> Result<F::Output, FfiError> {
        self.rt
            .block_on(fut)
            .map_err(|e| FfiError::runtime(what, &e))
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
        let rt = Runtime::new(worker_threads).map_err(|e| FfiError::runtime("runtime", &e))?;
        let h = handle::into_raw(mcp_runtime_t {
            inner: Arc::new(RuntimeInner { rt }),
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
