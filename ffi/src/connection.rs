//! A custom transport from C: `mcp_connection_t` is one MCP connection whose bytes the embedder
//! carries (a socket of its own, a serial line, a message bus). Bytes read from the peer are
//! pushed with `mcp_connection_feed`; what the server writes arrives through the output
//! callback. Framing and everything after it is core's [`serve_io_until`], exactly as on stdio
//! (REQUIREMENTS STDIO-01…04: newline-delimited JSON-RPC, the frame cap, both eras, concurrent
//! requests, draining on end of input); this module only moves bytes (the rustls-ffi
//! `read_tls`/`write_tls` habit, with the library's runtime doing the work).

use std::ffi::{c_char, c_void};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcpcore::transport::stdio::serve_io_until;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, watch};

use crate::embed_http::bytes_arg;
use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, forbid_runtime_thread, status_guard};
use crate::handle;
use crate::runtime::RuntimeInner;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::trampoline::{mcp_free_fn, UserData};

/// How many fed pieces may wait for core before `mcp_connection_feed` blocks (backpressure: core
/// stops reading while its output queue is full, as on stdio).
const FEED_QUEUE: usize = 16;

/// The output callback: write the next `len` bytes of the output stream to the peer
/// (newline-terminated JSON-RPC messages, batched; a large message may span calls, so treat
/// them as a byte stream). Return true when they were taken, false when the peer is gone: core
/// then stops reading and cancels the requests in flight, as when stdout breaks (EPIPE).
///
/// Called on a runtime worker thread, never concurrently for one connection, in order. `bytes`
/// is borrowed until the callback returns. It may block (a full socket) but should not for
/// long: the connection's output waits meanwhile. Must not unwind or `longjmp`.
pub type mcp_output_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, bytes: *const c_char, len: usize) -> bool>;

type OutputFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize) -> bool;

type Outcome = Option<Result<(), FfiError>>;

/// One connection over the embedder's transport. Thread-safe.
pub struct mcp_connection_t {
    input: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    done: watch::Receiver<Outcome>,
    runtime: Arc<RuntimeInner>,
}

/// Core's reader: the fed pieces, in order; end of input once the sender is dropped.
struct FedReader {
    rx: mpsc::Receiver<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
}

impl AsyncRead for FedReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            if self.pos < self.cur.len() {
                let n = buf.remaining().min(self.cur.len() - self.pos);
                let start = self.pos;
                buf.put_slice(&self.cur[start..start + n]);
                self.pos += n;
                return Poll::Ready(Ok(()));
            }
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(v)) => {
                    self.cur = v;
                    self.pos = 0;
                }
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// Core's writer: each write goes to the C output callback. Owns the user data, so its
/// finalizer runs after the last output.
struct OutputWriter {
    func: OutputFn,
    data: UserData,
    gone: bool,
}

impl AsyncWrite for OutputWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.gone {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        // SAFETY: the user's output callback with its own user data; `buf` outlives the call.
        let taken = unsafe { (self.func)(self.data.ptr(), buf.as_ptr().cast(), buf.len()) };
        if taken {
            Poll::Ready(Ok(buf.len()))
        } else {
            self.gone = true;
            Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()))
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Open a connection of `server` over the embedder's transport: feed it what the peer sends
/// (`mcp_connection_feed`), and write what `on_output` hands you to the peer.
///
/// @param server          the server (borrowed; the connection keeps it alive).
/// @param on_output       the output callback (required).
/// @param user_data       passed to `on_output`.
/// @param free_user_data  optional finalizer for `user_data`: called exactly once, after the last
///                        `on_output` (also when this function fails).
/// @param conn_out        receives the connection on success.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `server`; takes `user_data` in every case. The caller owns the
/// connection and frees it with `mcp_connection_free`.
///
/// **Thread safety**: any thread, including inside callbacks (it does not block); the
/// connection is thread-safe. `mcp_server_shutdown` ends it as it ends stdio serving.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`server`, `on_output`, `conn_out`).
#[no_mangle]
pub extern "C" fn mcp_connection_open(
    server: *const mcp_server_t,
    on_output: mcp_output_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    conn_out: *mut *mut mcp_connection_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    status_guard(error_out, move || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        handle::require_out(conn_out, "conn_out")?;
        let func = on_output.ok_or_else(|| FfiError::null("on_output"))?;
        let (tx, rx) = mpsc::channel(FEED_QUEUE);
        let (done_tx, done) = watch::channel(None);
        let reader = FedReader {
            rx,
            cur: Vec::new(),
            pos: 0,
        };
        let writer = OutputWriter {
            func,
            data,
            gone: false,
        };
        let st = s.inner.clone();
        let (server, stop) = (st.server.clone(), st.shutdown.clone());
        st.runtime.spawn(async move {
            let outcome = serve_io_until(&server, reader, writer, stop.cancelled_owned()).await;
            let _ = done_tx.send(Some(outcome.map_err(FfiError::from)));
        });
        let h = handle::into_raw(mcp_connection_t {
            input: Mutex::new(Some(tx)),
            done,
            runtime: st.runtime.clone(),
        });
        // SAFETY: conn_out is non-NULL (checked) and writable.
        unsafe { conn_out.write(h) };
        Ok(())
    })
}

fn closed(why: &str) -> FfiError {
    FfiError::new(mcp_status_t::Closed, why)
}

/// Hand core bytes read from the peer (any split: partial lines are kept until their newline).
/// Blocks while core is behind (its output queue full because the peer stops reading), as a
/// full pipe would.
///
/// @param conn       the connection.
/// @param bytes      `len` bytes (may be NULL when `len` is 0).
/// @param len        number of bytes.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `conn`; the bytes are copied.
///
/// **Thread safety**: any thread; one feeder at a time, bytes in order. On a runtime thread
/// (inside a callback) it never blocks: when core is behind it fails with
/// `MCP_STATUS_WOULD_DEADLOCK` and takes nothing.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_CLOSED` (after `mcp_connection_close`, or
/// the connection ended: a frame crossed the size limit, the peer is gone, the server shut
/// down), `MCP_STATUS_WOULD_DEADLOCK`.
#[no_mangle]
pub extern "C" fn mcp_connection_feed(
    conn: *const mcp_connection_t,
    bytes: *const c_char,
    len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: conn is NULL or live (contract).
        let c = unsafe { handle::borrow(conn, "conn") }?;
        // SAFETY: bytes is NULL or valid for len bytes (contract).
        let chunk = unsafe { bytes_arg(bytes, len, "bytes") }?;
        let tx = c
            .input
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| closed("the connection's input was closed"))?;
        if chunk.is_empty() {
            return Ok(());
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            return tx.try_send(chunk.to_vec()).map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => FfiError::new(
                    mcp_status_t::WouldDeadlock,
                    "mcp_connection_feed: core is behind, and a runtime thread must not wait",
                ),
                mpsc::error::TrySendError::Closed(_) => closed("the connection ended"),
            });
        }
        tx.blocking_send(chunk.to_vec())
            .map_err(|_| closed("the connection ended"))
    })
}

/// End of input; wait for the connection to end.
fn close_and_wait(c: &mcp_connection_t, what: &str) -> Result<(), FfiError> {
    drop(c.input.lock().unwrap_or_else(|p| p.into_inner()).take());
    let mut done = c.done.clone();
    c.runtime.run(what, async move {
        match done.wait_for(Option::is_some).await {
            Ok(v) => v.clone().unwrap_or(Ok(())),
            Err(_) => Err(closed("the runtime stopped before the connection ended")),
        }
    })?
}

/// End of input from the peer (as EOF on stdin): core stops reading, lets the requests in flight
/// finish (within `limits.shutdownGraceMs`, then cancels them), hands their answers to
/// `on_output`, and this returns when the connection has ended. Idempotent.
///
/// @param conn       the connection.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `conn`.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_WOULD_DEADLOCK` (inside a callback; the
/// input is left open), `MCP_STATUS_LIMIT_EXCEEDED` (a frame crossed the size limit: it was
/// answered -32600 and the connection closed), `MCP_STATUS_CLOSED` (the runtime stopped first).
#[no_mangle]
pub extern "C" fn mcp_connection_close(
    conn: *const mcp_connection_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: conn is NULL or live (contract).
        let c = unsafe { handle::borrow(conn, "conn") }?;
        forbid_runtime_thread("mcp_connection_close")?;
        close_and_wait(c, "mcp_connection_close")
    })
}

/// Close the connection (as `mcp_connection_close`) and free it. NULL is a no-op. Blocks until
/// the connection ended, except on a runtime thread (inside a callback), where it ends in the
/// background; `free_user_data` tells when the last `on_output` is over.
///
/// @param conn  the connection.
///
/// **Ownership**: consumes `conn`.
///
/// **Thread safety**: any thread; no other call on `conn` may be in flight.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_connection_free(conn: *mut mcp_connection_t) {
    ffi_guard((), || {
        // SAFETY: conn is NULL or owned (contract).
        let Some(c) = (unsafe { handle::take(conn) }) else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            drop(c.input.lock().unwrap_or_else(|p| p.into_inner()).take());
        } else {
            let _ = close_and_wait(&c, "mcp_connection_free");
        }
    });
}
