//! The MCP endpoint mounted in the embedder's own web server (libmicrohttpd, civetweb, an nginx
//! module, …): `mcp_http_endpoint_t` wraps core's [`HttpService`], and each request the host
//! routes to it becomes one `mcp_http_exchange_t` over core's one exchange seam
//! ([`HttpService::exchange`]). Every HTTP rule (eras, sessions, `Origin`/`Host` HTTP-03, the
//! bearer gate AUTH-06, body cap 413 and arrival deadline 408, Accept 406, SSE HTTP-06) is
//! core's; this module only marshals the request in and the answer out, and maps the host's
//! "the client went away" to dropping the exchange (HTTP-08: a modern request is cancelled;
//! LHTTP-04: a legacy one runs on and keeps its events for replay).

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use mcpcore::transport::http::{BodyFeed, Exchange, ExchangeHead, HttpOptions, HttpService};
use tokio_util::sync::CancellationToken;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::runtime::RuntimeInner;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::{str_arg, NulTerminated};

/// The MCP endpoint of one server, to mount in a web server of the embedder's. Thread-safe.
pub struct mcp_http_endpoint_t {
    svc: HttpService,
    runtime: Arc<RuntimeInner>,
    max_body: usize,
    /// Cancelled by `mcp_http_endpoint_free`: ends the server-shutdown watcher.
    freed: CancellationToken,
}

/// One HTTP header: a name and a value, each `(pointer, length)`, neither NUL-terminated on
/// input. Names are matched case-insensitively; a name may repeat.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mcp_http_header_t {
    /// The header name (ASCII).
    pub name: *const c_char,
    /// Length of `name` in bytes.
    pub name_len: usize,
    /// The header value (bytes as received).
    pub value: *const c_char,
    /// Length of `value` in bytes.
    pub value_len: usize,
}

/// The answer's head: `status` and `header_count` headers (names lower case; on output each
/// name and value is also NUL-terminated). `headers` is borrowed until the callback returns.
/// Framing headers (`content-length`, `transfer-encoding`, `connection`) are left out: the
/// host's server frames the body it streams.
pub type mcp_exchange_head_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: u16,
        headers: *const mcp_http_header_t,
        header_count: usize,
    ),
>;

/// One chunk of the answer's body (`len` bytes, borrowed until the callback returns; copy what
/// you keep). A JSON answer is one chunk; an SSE answer is one chunk per event as core
/// produces it.
pub type mcp_exchange_body_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, chunk: *const c_char, len: usize)>;

/// The exchange is over: `MCP_STATUS_OK` when the whole body was delivered,
/// `MCP_STATUS_CANCELLED` after `mcp_http_exchange_cancel` (or a free before the end),
/// `MCP_STATUS_CLOSED` when the runtime stopped first. Called exactly once per exchange, last:
/// no callback of this exchange follows it, so it may release `user_data`.
pub type mcp_exchange_end_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, status: mcp_status_t)>;

/// The callbacks of one exchange. All three are required. They run on runtime worker threads,
/// one after another for one exchange (never concurrently with each other), possibly
/// concurrently with other exchanges' callbacks; they must return quickly (queue the bytes for
/// the host's writer) and must not unwind or `longjmp`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mcp_exchange_callbacks_t {
    /// The status and headers, once core decided them (at most once, before any body).
    pub on_head: mcp_exchange_head_fn,
    /// A body chunk (zero or more times, after `on_head`).
    pub on_body: mcp_exchange_body_fn,
    /// The end (exactly once, last).
    pub on_end: mcp_exchange_end_fn,
}

type HeadFn = unsafe extern "C" fn(*mut c_void, u16, *const mcp_http_header_t, usize);
type BodyFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize);
type EndFn = unsafe extern "C" fn(*mut c_void, mcp_status_t);

/// The C callbacks of one exchange; `on_end` runs exactly once, on drop at the latest (a task
/// dropped by a stopping runtime, or a panic below it).
struct Sink {
    head: HeadFn,
    body: BodyFn,
    end: Option<EndFn>,
    user_data: *mut c_void,
}

// SAFETY: the header requires the user data of an exchange to be usable from the runtime's
// threads, where its callbacks run; the engine never dereferences it.
unsafe impl Send for Sink {}

impl Sink {
    fn new(cbs: &mcp_exchange_callbacks_t, user_data: *mut c_void) -> Result<Self, FfiError> {
        let (Some(head), Some(body), Some(end)) = (cbs.on_head, cbs.on_body, cbs.on_end) else {
            return Err(FfiError::null("callbacks (on_head, on_body and on_end)"));
        };
        Ok(Self {
            head,
            body,
            end: Some(end),
            user_data,
        })
    }

    fn head(&self, h: &ExchangeHead) {
        let kept: Vec<(NulTerminated, NulTerminated)> = h
            .headers
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "content-length" | "transfer-encoding" | "connection"
                )
            })
            .map(|(k, v)| {
                (
                    NulTerminated::new(k.clone().into_bytes()),
                    NulTerminated::new(v.clone().into_bytes()),
                )
            })
            .collect();
        let view: Vec<mcp_http_header_t> = kept
            .iter()
            .map(|(k, v)| mcp_http_header_t {
                name: k.bytes().as_ptr().cast(),
                name_len: k.bytes().len(),
                value: v.bytes().as_ptr().cast(),
                value_len: v.bytes().len(),
            })
            .collect();
        // SAFETY: the user's callback with its own user data; `kept` and `view` outlive the call.
        unsafe { (self.head)(self.user_data, h.status, view.as_ptr(), view.len()) };
    }

    fn body(&self, chunk: &[u8]) {
        // SAFETY: the user's callback; `chunk` outlives the call.
        unsafe { (self.body)(self.user_data, chunk.as_ptr().cast(), chunk.len()) };
    }

    fn end(mut self, status: mcp_status_t) {
        self.finish(status);
    }

    fn finish(&mut self, status: mcp_status_t) {
        if let Some(end) = self.end.take() {
            // SAFETY: the user's callback, called once (`take`), last.
            unsafe { end(self.user_data, status) };
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let status = if std::thread::panicking() {
            mcp_status_t::Panic
        } else {
            mcp_status_t::Closed
        };
        self.finish(status);
    }
}

/// The host's side of one exchange: the body feed and the disconnect signal.
pub struct mcp_http_exchange_t {
    feed: Mutex<FeedState>,
    cancel: CancellationToken,
    max_body: usize,
}

struct FeedState {
    feed: Option<BodyFeed>,
    fed: usize,
}

/// Deliver the answer: head, chunks, end; a cancel (the client went away) drops the exchange
/// first, which is core's disconnect.
async fn drive(mut x: Exchange, sink: Sink, cancel: CancellationToken) {
    let head = tokio::select! {
        biased;
        () = cancel.cancelled() => {
            drop(x);
            return sink.end(mcp_status_t::Cancelled);
        }
        h = x.head() => h,
    };
    sink.head(&head);
    loop {
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                drop(x);
                return sink.end(mcp_status_t::Cancelled);
            }
            c = x.next_chunk() => c,
        };
        match chunk {
            Some(c) => sink.body(&c),
            None => break,
        }
    }
    drop(x);
    sink.end(mcp_status_t::Ok);
}

/// Make the MCP endpoint of `server` for mounting in the embedder's own web server.
///
/// @param server        the server (borrowed; the endpoint keeps it alive).
/// @param options_json  optional JSON object (NULL for defaults): the `HttpOptions` shape
///                      `mcp_server_listen_http` takes (`allowedOrigins`, `allowedHosts`,
///                      `legacy`, `auth`, `keepaliveMs`, …). Leave `path` unset to accept
///                      whatever path the host routes here; set it to have other paths
///                      answered 404. Options about the socket and the connection (`tls`,
///                      `http2`, `maxConnections`, `maxConcurrentStreams`, the header-read and
///                      idle timeouts) are the host server's business and have no effect
///                      here. Unknown keys and wrong types: `MCP_STATUS_INVALID_JSON`;
///                      values out of range: `MCP_STATUS_INVALID_ARGUMENT`.
/// @param options_len   length of `options_json`.
/// @param endpoint_out  receives the endpoint on success.
/// @param error_out     optional detailed error.
///
/// **Ownership**: borrows `server`; the caller owns the endpoint and frees it with
/// `mcp_http_endpoint_free`.
///
/// **Thread safety**: any thread, including inside callbacks (it does not block); the endpoint
/// is thread-safe. `mcp_server_shutdown` shuts it down as it does a listener.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_http_endpoint_new(
    server: *const mcp_server_t,
    options_json: *const c_char,
    options_len: usize,
    endpoint_out: *mut *mut mcp_http_endpoint_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        handle::require_out(endpoint_out, "endpoint_out")?;
        // SAFETY: options_json is NULL or valid for options_len bytes (contract).
        let opts = unsafe {
            crate::transport::http_options(HttpOptions::mounted(), options_json, options_len)
        }?;
        let st = s.inner.clone();
        let svc = {
            // The service subscribes to the server's backplane, which needs the runtime.
            let _rt = st.runtime.enter();
            st.server
                .http_service(opts)
                .map_err(|e| FfiError::invalid(e.to_string()))?
        };
        let freed = CancellationToken::new();
        let (watch, shutdown, gone) = (svc.clone(), st.shutdown.clone(), freed.clone());
        st.runtime.spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => watch.shutdown().await,
                () = gone.cancelled() => {}
            }
        });
        let h = handle::into_raw(mcp_http_endpoint_t {
            svc,
            runtime: st.runtime.clone(),
            max_body: st.server.limits().max_message_bytes,
            freed,
        });
        // SAFETY: endpoint_out is non-NULL (checked) and writable.
        unsafe { endpoint_out.write(h) };
        Ok(())
    })
}

/// A request header as core takes it: name and value bytes.
type HeaderPair = (Vec<u8>, Vec<u8>);

/// Copy `count` headers into owned pairs.
///
/// # Safety
/// `headers` is NULL (only with `count` 0) or valid for `count` entries, each pointing to its
/// lengths of bytes.
unsafe fn header_list(
    headers: *const mcp_http_header_t,
    count: usize,
) -> Result<Vec<HeaderPair>, FfiError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if headers.is_null() {
        return Err(FfiError::null("headers"));
    }
    if count > isize::MAX as usize / std::mem::size_of::<mcp_http_header_t>() {
        return Err(FfiError::invalid("header_count is out of range"));
    }
    // SAFETY: per the contract, headers is valid for count entries.
    let hs = unsafe { std::slice::from_raw_parts(headers, count) };
    hs.iter()
        .enumerate()
        .map(|(i, h)| {
            // SAFETY: per the contract, each pointer is valid for its length.
            let name = unsafe { bytes_arg(h.name, h.name_len, &format!("headers[{i}].name")) }?;
            // SAFETY: as above.
            let value = unsafe { bytes_arg(h.value, h.value_len, &format!("headers[{i}].value")) }?;
            Ok((name.to_vec(), value.to_vec()))
        })
        .collect()
}

/// A byte-string argument (an empty one may be NULL).
///
/// # Safety
/// `p` is NULL or valid for `len` bytes.
pub(crate) unsafe fn bytes_arg<'a>(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a [u8], FfiError> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(FfiError::null(what));
    }
    if len > isize::MAX as usize {
        return Err(FfiError::invalid(format!("{what}: length is out of range")));
    }
    // SAFETY: p is non-NULL and valid for len bytes (contract).
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// Start one exchange: a request the host's server received and routed to the endpoint. Feed
/// its body with `mcp_http_exchange_feed` as it arrives, then `mcp_http_exchange_end`; the
/// answer arrives through `callbacks`. A malformed method, target or header is answered 400
/// (through the callbacks) as the built-in listener's parser would.
///
/// @param endpoint      the endpoint.
/// @param method        UTF-8 request method (`"POST"`, `"GET"`, `"DELETE"`, …).
/// @param method_len    length of `method`.
/// @param target        UTF-8 request target: path and query as on the request line
///                      (`"/mcp"`, `"/mcp?x=1"`).
/// @param target_len    length of `target`.
/// @param headers       `header_count` request headers (an array of name/value pairs: HTTP
///                      headers repeat and are bytes, and C servers hand them out as pairs;
///                      `Host` is required as on the wire). May be NULL when `header_count` is 0.
/// @param header_count  number of headers.
/// @param callbacks     the answer's callbacks (the struct is copied; all three required).
/// @param user_data     passed to every callback; must stay valid until `on_end` returned.
/// @param exchange_out  receives the exchange on success.
/// @param error_out     optional detailed error.
///
/// **Ownership**: borrows `endpoint`; method, target and headers are copied. The caller owns
/// the exchange and frees it with `mcp_http_exchange_free` (any time: before `on_end` that is a
/// disconnect). On failure no callback runs.
///
/// **Thread safety**: any thread, including inside callbacks (it does not block). The
/// callbacks run on runtime worker threads, possibly before this function returns.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8` (method or target),
/// `MCP_STATUS_INVALID_ARGUMENT` (a length out of range).
#[no_mangle]
pub extern "C" fn mcp_http_endpoint_exchange(
    endpoint: *const mcp_http_endpoint_t,
    method: *const c_char,
    method_len: usize,
    target: *const c_char,
    target_len: usize,
    headers: *const mcp_http_header_t,
    header_count: usize,
    callbacks: *const mcp_exchange_callbacks_t,
    user_data: *mut c_void,
    exchange_out: *mut *mut mcp_http_exchange_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: endpoint is NULL or live (contract).
        let ep = unsafe { handle::borrow(endpoint, "endpoint") }?;
        // SAFETY: callbacks is NULL or points to a callbacks struct (contract).
        let cbs = unsafe { handle::borrow(callbacks, "callbacks") }?;
        handle::require_out(exchange_out, "exchange_out")?;
        // SAFETY: method is NULL or valid for method_len bytes.
        let method = unsafe { str_arg(method, method_len, "method") }?;
        // SAFETY: target is NULL or valid for target_len bytes.
        let target = unsafe { str_arg(target, target_len, "target") }?;
        // SAFETY: per the documented contract of headers / header_count.
        let headers = unsafe { header_list(headers, header_count) }?;
        let sink = Sink::new(cbs, user_data)?;
        let (feed, x) = ep.svc.exchange(method, target, headers);
        let cancel = CancellationToken::new();
        let h = handle::into_raw(mcp_http_exchange_t {
            feed: Mutex::new(FeedState {
                feed: Some(feed),
                fed: 0,
            }),
            cancel: cancel.clone(),
            max_body: ep.max_body,
        });
        ep.runtime.spawn(drive(x, sink, cancel));
        // SAFETY: exchange_out is non-NULL (checked) and writable.
        unsafe { exchange_out.write(h) };
        Ok(())
    })
}

fn borrow_exchange<'a>(x: *const mcp_http_exchange_t) -> Result<&'a mcp_http_exchange_t, FfiError> {
    // SAFETY: x is NULL or live (contract of every exchange function).
    unsafe { handle::borrow(x, "exchange") }
}

/// Hand core the next piece of the request body, as the host's server read it.
///
/// @param exchange   the exchange.
/// @param bytes      `len` bytes of body (may be NULL when `len` is 0).
/// @param len        number of bytes.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `exchange`; the bytes are copied.
///
/// **Thread safety**: any thread (never blocks); one feeder at a time, pieces in order.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`; `MCP_STATUS_LIMIT_EXCEEDED` (the body crossed the
/// server's `maxMessageBytes`: core answers 413; stop reading); `MCP_STATUS_CLOSED` (the body
/// was already ended or the exchange cancelled, or core needs no more body because it has
/// answered already: stop reading, the answer is on its way).
#[no_mangle]
pub extern "C" fn mcp_http_exchange_feed(
    exchange: *const mcp_http_exchange_t,
    bytes: *const c_char,
    len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        let x = borrow_exchange(exchange)?;
        // SAFETY: bytes is NULL or valid for len bytes (contract).
        let chunk = unsafe { bytes_arg(bytes, len, "bytes") }?;
        let mut st = x.feed.lock().unwrap_or_else(|p| p.into_inner());
        let Some(feed) = st.feed.as_ref() else {
            return Err(FfiError::new(
                mcp_status_t::Closed,
                "the request body already ended (or the exchange was cancelled)",
            ));
        };
        let taken = feed.push(chunk);
        st.fed = st.fed.saturating_add(chunk.len());
        if taken {
            Ok(())
        } else if st.fed > x.max_body {
            Err(FfiError::new(
                mcp_status_t::LimitExceeded,
                format!(
                    "the request body exceeds {} bytes (answered 413)",
                    x.max_body
                ),
            ))
        } else {
            Err(FfiError::new(
                mcp_status_t::Closed,
                "core needs no more of this body (it has answered)",
            ))
        }
    })
}

/// The request body is complete.
///
/// @param exchange   the exchange.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `exchange`.
///
/// **Thread safety**: any thread (never blocks).
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_CLOSED` (already ended or cancelled).
#[no_mangle]
pub extern "C" fn mcp_http_exchange_end(
    exchange: *const mcp_http_exchange_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        let x = borrow_exchange(exchange)?;
        let mut st = x.feed.lock().unwrap_or_else(|p| p.into_inner());
        match st.feed.take() {
            Some(mut f) => {
                f.end();
                Ok(())
            }
            None => Err(FfiError::new(
                mcp_status_t::Closed,
                "the request body already ended (or the exchange was cancelled)",
            )),
        }
    })
}

/// Report that the host's client went away: core drops the exchange, which cancels a modern
/// request's handler (HTTP-08; the C handler sees `mcp_responder_is_cancelled`), while a legacy
/// request runs on and keeps its events for the session's replay (LHTTP-04). A body still being
/// read is aborted. `on_end` follows with `MCP_STATUS_CANCELLED` unless the exchange had
/// already ended. Idempotent; a no-op after the end.
///
/// @param exchange  the exchange (NULL is a no-op).
///
/// **Ownership**: borrows `exchange`.
///
/// **Thread safety**: any thread, including inside this exchange's callbacks (it does not
/// block; `on_end` arrives on a runtime thread).
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_http_exchange_cancel(exchange: *const mcp_http_exchange_t) {
    ffi_guard((), || {
        if let Ok(x) = borrow_exchange(exchange) {
            cancel(x);
        }
    });
}

fn cancel(x: &mcp_http_exchange_t) {
    // The disconnect first: aborting the body first could let core answer the aborted body
    // (400) and the exchange end "complete" before the cancel is seen.
    x.cancel.cancel();
    let mut st = x.feed.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(mut f) = st.feed.take() {
        f.abort();
    }
}

/// Free the exchange handle. NULL is a no-op. Before the answer was delivered in full this is
/// the client disconnecting (as `mcp_http_exchange_cancel`); after it, it only releases the
/// handle. `on_end` still arrives exactly once (on a runtime thread, possibly after this
/// returns), so `user_data` must stay valid until then.
///
/// @param exchange  the exchange.
///
/// **Ownership**: consumes `exchange`.
///
/// **Thread safety**: any thread, including inside this exchange's callbacks; no other call on
/// `exchange` may be in flight.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_http_exchange_free(exchange: *mut mcp_http_exchange_t) {
    ffi_guard((), || {
        // SAFETY: exchange is NULL or owned (contract).
        if let Some(x) = unsafe { handle::take(exchange) } {
            cancel(&x);
        }
    });
}

/// Shut the endpoint down gracefully and free it (as `mcp_listener_free` does for a listener:
/// new requests are refused, legacy sessions' streams close, exchanges in flight get
/// `shutdownDeadlineMs`, then their work is cancelled). NULL is a no-op. Blocks until done,
/// except on a runtime thread, where the shutdown continues in the background. Free every
/// exchange's handle as usual; their `on_end` may arrive after this returns.
///
/// @param endpoint  the endpoint.
///
/// **Ownership**: consumes `endpoint`.
///
/// **Thread safety**: any thread; no other call on `endpoint` may be in flight.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_http_endpoint_free(endpoint: *mut mcp_http_endpoint_t) {
    ffi_guard((), || {
        // SAFETY: endpoint is NULL or owned (contract).
        let Some(ep) = (unsafe { handle::take(endpoint) }) else {
            return;
        };
        ep.freed.cancel();
        let svc = ep.svc.clone();
        if tokio::runtime::Handle::try_current().is_ok() {
            ep.runtime.spawn(async move { svc.shutdown().await });
        } else {
            let _ = ep.runtime.run(
                "mcp_http_endpoint_free",
                async move { svc.shutdown().await },
            );
        }
    });
}
