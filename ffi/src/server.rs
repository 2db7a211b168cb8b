//! `mcp_server_t`: a built server bound to a runtime, its transports and its shutdown.
//! Serving on stdio blocks the calling thread until EOF or `mcp_server_shutdown`.

use std::ffi::c_char;
use std::sync::Arc;

use mcpcore::transport::stdio::serve_stdio_until;
use mcpcore::Server;
use tokio_util::sync::CancellationToken;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::runtime::RuntimeInner;
use crate::status::mcp_status_t;
use crate::string::str_arg;

pub(crate) struct ServerState {
    pub(crate) server: Server,
    pub(crate) runtime: Arc<RuntimeInner>,
    pub(crate) shutdown: CancellationToken,
}

impl ServerState {
    pub(crate) fn new(server: Server, runtime: Arc<RuntimeInner>) -> Self {
        Self {
            server,
            runtime,
            shutdown: CancellationToken::new(),
        }
    }
}

/// A built server. Thread-safe: any function taking a `const mcp_server_t *` may be called from
/// any thread at once.
pub struct mcp_server_t {
    pub(crate) inner: Arc<ServerState>,
}

/// Serve MCP on this process's stdin/stdout (newline-delimited JSON-RPC, both protocol eras),
/// blocking until EOF on stdin or `mcp_server_shutdown`.
///
/// @param server     the server.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `server` for the duration of the call.
///
/// **Thread safety**: any thread that is not a runtime thread. Do not free `server` while this
/// runs; call `mcp_server_shutdown` from another thread or a callback to make it return.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback
/// or on a runtime thread), `MCP_STATUS_LIMIT_EXCEEDED` (a frame crossed the size limit; the
/// connection was closed), `MCP_STATUS_TRANSPORT` (I/O error).
#[no_mangle]
pub extern "C" fn mcp_server_serve_stdio(
    server: *const mcp_server_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        let st = s.inner.clone();
        // Shutdown stops reading like EOF does: requests in flight finish (within the
        // server's shutdownGraceMs) and their answers are flushed before this returns.
        let stop = st.shutdown.clone().cancelled_owned();
        let outcome = st.runtime.block_on(
            "mcp_server_serve_stdio",
            serve_stdio_until(&st.server, stop),
        )?;
        outcome.map_err(FfiError::from)
    })
}

/// Ask the server to stop: `mcp_server_serve_stdio` stops reading, lets requests in flight
/// finish (within `limits.shutdownGraceMs`, then cancels them), flushes their answers and
/// returns; HTTP listeners stop accepting. Idempotent and non-blocking.
///
/// @param server  the server (NULL is a no-op).
///
/// **Ownership**: borrows `server`.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_server_shutdown(server: *const mcp_server_t) {
    ffi_guard((), || {
        // SAFETY: server is NULL or live (contract).
        if let Ok(s) = unsafe { handle::borrow(server, "server") } {
            s.inner.shutdown.cancel();
        }
    });
}

/// Tell connected legacy sessions that a list changed (when the matching `listChanged`
/// capability is advertised).
///
/// @param server     the server.
/// @param kind       `"tools"`, `"prompts"` or `"resources"` (UTF-8, `kind_len` bytes).
/// @param kind_len   length of `kind`.
/// @param count_out  optional; receives how many sessions were told (written only on OK).
///
/// **Ownership**: borrows `server`.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`,
/// `MCP_STATUS_INVALID_ARGUMENT` (unknown kind).
#[no_mangle]
pub extern "C" fn mcp_server_notify_list_changed(
    server: *const mcp_server_t,
    kind: *const c_char,
    kind_len: usize,
    count_out: *mut usize,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: kind is NULL or valid for kind_len bytes.
        let kind = unsafe { str_arg(kind, kind_len, "kind") }?;
        let n = match kind {
            "tools" => s.inner.server.notify_tools_list_changed(),
            "prompts" => s.inner.server.notify_prompts_list_changed(),
            "resources" => s.inner.server.notify_resources_list_changed(),
            other => return Err(FfiError::invalid(format!("unknown list kind {other:?}"))),
        };
        // SAFETY: count_out is NULL or writable.
        unsafe { handle::write_opt(count_out, n) };
        Ok(())
    })
}

/// Tell every session subscribed to `uri` that the resource changed
/// (`notifications/resources/updated`).
///
/// @param server     the server.
/// @param uri        UTF-8 resource URI.
/// @param uri_len    length of `uri`.
/// @param count_out  optional; receives how many sessions were told (written only on OK).
///
/// **Ownership**: borrows `server`; `uri` is copied.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`.
#[no_mangle]
pub extern "C" fn mcp_server_notify_resource_updated(
    server: *const mcp_server_t,
    uri: *const c_char,
    uri_len: usize,
    count_out: *mut usize,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: uri is NULL or valid for uri_len bytes.
        let uri = unsafe { str_arg(uri, uri_len, "uri") }?;
        let n = s.inner.server.notify_resource_updated(uri);
        // SAFETY: count_out is NULL or writable.
        unsafe { handle::write_opt(count_out, n) };
        Ok(())
    })
}

/// Shut the server down and release the caller's handle. NULL is a no-op. Requests still in
/// flight finish or are cancelled by their transports; handler user data is released (finalizers
/// run) once the last in-flight call and the last outstanding responder are gone.
///
/// @param server  the server.
///
/// **Ownership**: consumes `server`.
///
/// **Thread safety**: any thread; no other call on `server` may be in flight (in particular,
/// `mcp_server_serve_stdio` must have returned).
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_server_free(server: *mut mcp_server_t) {
    ffi_guard((), || {
        // SAFETY: server is NULL or owned (contract).
        if let Some(s) = unsafe { handle::take(server) } {
            s.inner.shutdown.cancel();
        }
    });
}
