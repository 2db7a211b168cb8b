//! Streamable HTTP from C: `mcp_server_listen_http` binds a listener serving both protocol eras
//! (core's HTTP transport does all protocol work), `mcp_listener_port` reports the bound port
//! (for port 0), `mcp_listener_free` stops accepting and shuts down gracefully.

use std::ffi::c_char;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcpcore::transport::http::{serve, HttpListener, HttpOptions};

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::runtime::RuntimeInner;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, str_arg};

/// A running HTTP listener. Thread-safe.
pub struct mcp_listener_t {
    port: u16,
    listener: Arc<Mutex<Option<HttpListener>>>,
    runtime: Arc<RuntimeInner>,
}

/// Listen for Streamable HTTP on `addr` (e.g. `"127.0.0.1:0"`), serving both protocol eras on
/// one endpoint (default path `/mcp`). Returns once the socket is bound.
///
/// @param server        the server (borrowed; the listener keeps it alive).
/// @param addr          UTF-8 socket address `host:port`; port 0 picks a free port.
/// @param addr_len      length of `addr`.
/// @param options_json  optional JSON object (NULL for defaults): core's `HttpOptions` shape,
///                      every key optional (defaults in brackets, as JSON): `path` ["/mcp";
///                      "" = any path], `allowedOrigins` ["auto"; or "localhost", "any", a
///                      list], `allowedHosts` ["auto"; likewise], `legacy` [true],
///                      `statelessLegacy` [false], `maxSessions` [10000],
///                      `sessionIdleTimeoutMs` [1800000: an idle legacy session is reaped],
///                      `uninitializedSessionTimeoutMs` [10000: a session that never sends
///                      `notifications/initialized` is reaped], `replayBuffer` [64],
///                      `sseRetryMs` [1000], `maxListenStreams` [1000], `keepaliveMs` [15000;
///                      0 = off], `shutdownDeadlineMs` [5000: on `mcp_listener_free` or server
///                      shutdown, requests in flight get this long; then each is answered 503
///                      with a JSON-RPC error, `data.reason` "shutdown"], `headerReadTimeoutMs`
///                      [30000], `bodyReadTimeoutMs` [60000; then 408],
///                      `connectionIdleTimeoutMs` [120000], `writeStallTimeoutMs` [30000: a
///                      peer that stops reading is cut off], `maxConnections` [512; further
///                      connections wait in the backlog], `tls` [null; `{"certFile",
///                      "keyFile", "clientCaFile"}` PEM paths: serve HTTPS, mutual TLS with a
///                      client CA], `http2` [true: ALPN h2 and h2c prior knowledge],
///                      `maxConcurrentStreams` [100; per HTTP/2 connection],
///                      `maxRoutedBytes` [16777216: a legacy session's messages waiting in
///                      Redis for other workers; past it they are dropped],
///                      `metricsPath` [null; e.g. "/metrics": `GET` there answers the
///                      server's metrics as Prometheus text, `mcp_server_metrics_text`],
///                      `auth` [null: open; an object
///                      protects the endpoint as an OAuth 2.1 resource server verifying JWTs:
///                      `resource`, `authorizationServers`, `issuer`, `jwksPath` or
///                      `jwksUrl`, optional `audience`, `scopesSupported`, `requiredScopes`,
///                      `toolScopes`, `algorithms` (["RS256","ES256"]), `clockSkewMs` (60000),
///                      `jwksMinRefreshMs` (30000), `jwksMaxAgeMs` (3600000), `jwksTimeoutMs`
///                      (5000), `jwksMaxBytes` (262144), `jwksTls` (the client `tls` object,
///                      for an `https://` `jwksUrl`), `jwksAllowHttp` (false: `http://` only
///                      on loopback), `tokenTypes` (["at+jwt","JWT"]), `requireTokenType`
///                      (false), `resourceMetadataUrl`; `mcp_server_listen_http_auth` takes a
///                      verifier callback instead]. Unknown keys and wrong types:
///                      `MCP_STATUS_INVALID_JSON`; values out of range:
///                      `MCP_STATUS_INVALID_ARGUMENT`. Request size, depth and in-flight limits
///                      are the server's `limits` (`mcp_server_builder_options_json`).
/// @param options_len   length of `options_json`.
/// @param listener_out  receives the listener on success.
/// @param error_out     optional detailed error.
///
/// **Ownership**: the caller owns the listener and frees it with `mcp_listener_free`.
///
/// **Thread safety**: any non-runtime thread; the listener is thread-safe.
/// `mcp_server_shutdown` also stops it.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INVALID_ARGUMENT` (bad address or option), `MCP_STATUS_TRANSPORT` (bind failed,
/// or the server's Redis backplane unreachable within `redisConnectTimeoutMs`: "Redis at … is
/// unreachable"; a listener returned is connected),
/// `MCP_STATUS_WOULD_DEADLOCK` (called on a runtime thread).
#[no_mangle]
pub extern "C" fn mcp_server_listen_http(
    server: *const mcp_server_t,
    addr: *const c_char,
    addr_len: usize,
    options_json: *const c_char,
    options_len: usize,
    listener_out: *mut *mut mcp_listener_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        let args = ListenArgs {
            server,
            addr,
            addr_len,
            options_json,
            options_len,
            listener_out,
        };
        listen(&args, HttpOptions::default())
    })
}

/// The arguments `mcp_server_listen_http` and its variants share.
pub(crate) struct ListenArgs {
    pub server: *const mcp_server_t,
    pub addr: *const c_char,
    pub addr_len: usize,
    pub options_json: *const c_char,
    pub options_len: usize,
    pub listener_out: *mut *mut mcp_listener_t,
}

/// Bind and serve: `base` patched with `options_json` (fields without a JSON form, such as a
/// custom token verifier, are kept).
pub(crate) fn listen(a: &ListenArgs, base: HttpOptions) -> Result<(), FfiError> {
    let (server, addr, addr_len) = (a.server, a.addr, a.addr_len);
    let (options_json, options_len, listener_out) = (a.options_json, a.options_len, a.listener_out);
    // SAFETY: server is NULL or live (contract).
    let s = unsafe { handle::borrow(server, "server") }?;
    handle::require_out(listener_out, "listener_out")?;
    // SAFETY: addr is NULL or valid for addr_len bytes.
    let addr_s = unsafe { str_arg(addr, addr_len, "addr") }?;
    let addr: SocketAddr = addr_s
        .parse()
        .map_err(|e| FfiError::invalid(format!("addr {addr_s:?}: {e}")))?;
    // SAFETY: options_json is NULL or valid for options_len bytes (contract).
    let opts = unsafe { http_options(base, options_json, options_len) }?;
    let st = s.inner.clone();
    let listener = st
        .runtime
        .block_on(
            "mcp_server_listen_http",
            serve(st.server.clone(), addr, opts),
        )?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidInput => FfiError::invalid(e.to_string()),
            // The server's Redis did not come up within its connect timeout (nothing is bound).
            std::io::ErrorKind::NotConnected => {
                FfiError::new(mcp_status_t::Transport, e.to_string())
            }
            _ => FfiError::new(mcp_status_t::Transport, format!("bind {addr}: {e}")),
        })?;
    let port = listener.local_addr().port();
    let slot = Arc::new(Mutex::new(Some(listener)));
    // Server shutdown stops the listener too.
    let watch = slot.clone();
    let shutdown = st.shutdown.clone();
    let rt = st.runtime.clone();
    rt.spawn(async move {
        shutdown.cancelled().await;
        let l = watch.lock().ok().and_then(|mut g| g.take());
        if let Some(l) = l {
            l.shutdown().await;
        }
    });
    let h = handle::into_raw(mcp_listener_t {
        port,
        listener: slot,
        runtime: st.runtime.clone(),
    });
    // SAFETY: listener_out is non-NULL (checked) and writable.
    unsafe { listener_out.write(h) };
    Ok(())
}

/// `base` patched with the optional HttpOptions JSON object `json` (NULL = none): a shape error
/// is `INVALID_JSON`, a value out of range `INVALID_ARGUMENT` (when the service is made).
///
/// # Safety
/// `json` is NULL or valid for `len` bytes.
pub(crate) unsafe fn http_options(
    base: HttpOptions,
    json: *const c_char,
    len: usize,
) -> Result<HttpOptions, FfiError> {
    let mut opts = base;
    if !json.is_null() {
        // SAFETY: forwarded contract.
        let obj = unsafe { json_object_arg(json, len, "options_json") }?;
        mcpcore::options::apply_json(&mut opts, &serde_json::Value::Object(obj))
            .map_err(|e| FfiError::options("options_json", &e))?;
    }
    Ok(opts)
}

/// The bound TCP port (the real one when listening on port 0).
///
/// @param listener  the listener (NULL → 0).
///
/// **Ownership**: borrows `listener`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none (0 for NULL).
#[no_mangle]
pub extern "C" fn mcp_listener_port(listener: *const mcp_listener_t) -> u16 {
    ffi_guard(0, || {
        // SAFETY: listener is NULL or live (contract).
        unsafe { handle::borrow(listener, "listener") }.map_or(0, |l| l.port)
    })
}

/// Stop accepting connections, shut down gracefully (in-flight requests get up to
/// `shutdownDeadlineMs`; one still running then is answered 503 with a JSON-RPC error, which a
/// C client reports as `MCP_STATUS_CLOSED`), and free the listener. NULL is a no-op. Blocks until done, except on a
/// runtime thread, where the shutdown continues in the background.
///
/// @param listener  the listener.
///
/// **Ownership**: consumes `listener`.
///
/// **Thread safety**: any thread; no other call on `listener` may be in flight.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_listener_free(listener: *mut mcp_listener_t) {
    ffi_guard((), || {
        // SAFETY: listener is NULL or owned (contract).
        let Some(l) = (unsafe { handle::take(listener) }) else {
            return;
        };
        let taken = l.listener.lock().ok().and_then(|mut g| g.take());
        if let Some(inner) = taken {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Joining here would block a runtime thread: finish in the background.
                l.runtime.spawn(inner.shutdown());
            } else {
                let _ = l.runtime.block_on("mcp_listener_free", inner.shutdown());
            }
        }
    });
}
