//! `mcp_client_t`: a connected MCP client driven from C. Connect over stdio (a child process) or
//! Streamable HTTP in auto/legacy/modern mode, read what was negotiated, close, free
//! (REQUIREMENTS 0.8, DISC-02, LC-01, STDIO-*, HTTP-09…18). The calls themselves live in
//! [`crate::client_calls`].
//!
//! All protocol work (negotiation, envelope, MRTR driving, server→client requests) is core's
//! [`mcpcore::client::Client`]; this module only marshals.

use serde_json::Value;
use std::ffi::{c_char, CStr};
use std::future::Future;
use std::sync::Arc;

use mcpcore::client::{Client, ClientError, HttpClientOptions, StdioCommand};
use mcpcore::options::{apply_json, JsonOptions};

use crate::client_builder::mcp_client_builder_t;
use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::runtime::{mcp_runtime_t, RuntimeInner};
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, owned_json, str_arg};

/// A connected client. Thread-safe: any function taking a `const mcp_client_t *` may be called
/// from any thread at once.
pub struct mcp_client_t {
    pub(crate) client: Client,
    pub(crate) runtime: Arc<RuntimeInner>,
}

/// Apply the optional JSON object `json` (NULL = none) to `target` with core's options shape:
/// a shape error is `INVALID_JSON`, a value out of range `INVALID_ARGUMENT`.
///
/// # Safety
/// `json` is NULL or valid for `len` bytes.
unsafe fn apply_options<T: JsonOptions>(
    target: &mut T,
    json: *const c_char,
    len: usize,
    what: &str,
) -> Result<(), FfiError> {
    if json.is_null() {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    let obj = unsafe { json_object_arg(json, len, what) }?;
    apply_json(target, &Value::Object(obj)).map_err(|e| FfiError::options(what, &e))
}

/// Arguments as UTF-8 strings. `lens` NULL means every argument is NUL-terminated.
///
/// # Safety
/// `args` is NULL or valid for `argc` pointers; each is NULL or valid for its length (or
/// NUL-terminated when `lens` is NULL); `lens` is NULL or valid for `argc` lengths.
unsafe fn arg_list(
    args: *const *const c_char,
    lens: *const usize,
    argc: usize,
) -> Result<Vec<String>, FfiError> {
    if argc == 0 {
        return Ok(Vec::new());
    }
    if args.is_null() {
        return Err(FfiError::null("args"));
    }
    if argc > isize::MAX as usize / std::mem::size_of::<usize>() {
        return Err(FfiError::invalid("argc is out of range"));
    }
    // SAFETY: per the contract, args is valid for argc pointers.
    let ptrs = unsafe { std::slice::from_raw_parts(args, argc) };
    let lens = if lens.is_null() {
        None
    } else {
        // SAFETY: per the contract, lens is valid for argc lengths.
        Some(unsafe { std::slice::from_raw_parts(lens, argc) })
    };
    let mut out = Vec::with_capacity(argc);
    for (i, p) in ptrs.iter().enumerate() {
        let what = format!("args[{i}]");
        let s = match lens {
            // SAFETY: per the contract, args[i] is NULL or valid for lens[i] bytes.
            Some(l) => unsafe { str_arg(*p, l[i], &what) }?,
            None => {
                if p.is_null() {
                    return Err(FfiError::null(&what));
                }
                // SAFETY: per the contract, args[i] is NUL-terminated.
                let bytes = unsafe { CStr::from_ptr(*p) }.to_bytes();
                // SAFETY: bytes is a valid slice of bytes.len() bytes.
                unsafe { str_arg(bytes.as_ptr().cast(), bytes.len(), &what) }?
            }
        };
        out.push(s.to_owned());
    }
    Ok(out)
}

/// Take the (optional) builder first so it is consumed on every path.
fn take_builder(builder: *mut mcp_client_builder_t) -> mcp_client_builder_t {
    // SAFETY: builder is NULL or owned by the caller and consumed here (contract).
    match unsafe { handle::take(builder) } {
        Some(b) => *b,
        None => mcp_client_builder_t {
            options: Default::default(),
            handlers: Vec::new(),
            notifications: Vec::new(),
            auth_browser: None,
        },
    }
}

/// Shared body of the connect functions. The builder is taken before the guard, so it is
/// consumed on every path (a refused `*error_out` included); `start` validates the transport's
/// arguments before anything is spawned or sent; `client_out` is written only on success.
fn connect<F>(
    what: &'static str,
    runtime: *const mcp_runtime_t,
    builder: *mut mcp_client_builder_t,
    client_out: *mut *mut mcp_client_t,
    error_out: *mut *mut mcp_error_t,
    start: impl FnOnce(mcp_client_builder_t) -> Result<F, FfiError>,
) -> mcp_status_t
where
    F: Future<Output = Result<Client, ClientError>> + Send + 'static,
{
    let b = take_builder(builder);
    status_guard(error_out, move || {
        // SAFETY: runtime is NULL or live (contract).
        let rt = unsafe { handle::borrow(runtime, "runtime") }?;
        handle::require_out(client_out, "client_out")?;
        let client = rt.inner.run(what, start(b)?)??;
        let h = handle::into_raw(mcp_client_t {
            client,
            runtime: rt.inner.clone(),
        });
        // SAFETY: client_out is non-NULL (checked) and writable.
        unsafe { client_out.write(h) };
        Ok(())
    })
}

/// Spawn a server process and connect to it over its stdin/stdout. Blocks until the era is
/// negotiated (`initialize`, or `server/discover` in modern/auto mode).
///
/// @param runtime       the runtime whose threads run the connection (borrowed; the client
///                      keeps it alive).
/// @param builder       optional client builder (NULL = defaults); consumed in every case.
/// @param command       UTF-8 program to run (looked up on `PATH` unless it has a `/`).
/// @param command_len   length of `command`.
/// @param args          `argc` arguments (not including the program name); may be NULL when
///                      `argc` is 0.
/// @param arg_lens      the length of each argument, or NULL when every argument is a
///                      NUL-terminated string.
/// @param argc          number of arguments.
/// @param spawn_json    optional JSON object (NULL for defaults; camelCase, unknown keys
///                      refused): `env` (`{"NAME": "value"}`
///                      added to the inherited environment), `envClear`, `cwd`, `stderr`
///                      (`"inherit"` (default), `"null"`, `"capture"`: the last 64 KiB are
///                      kept for `mcp_client_stderr`), `closeGraceMs` [5000: after closing
///                      the server's stdin, `mcp_client_close` waits this long before SIGTERM;
///                      longer than an mcpcore server's 2000 ms `shutdownGraceMs`], `termGraceMs`
///                      [2000: then this long before SIGKILL].
/// @param spawn_len     length of `spawn_json`.
/// @param client_out    receives the client on success.
/// @param error_out     optional detailed error.
///
/// **Ownership**: consumes `builder` (its handlers' user data is released on failure); inputs
/// are copied. The caller owns the client and frees it with `mcp_client_free`.
///
/// **Thread safety**: any non-runtime thread; the client is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (unparsable, unknown key, wrong type), `MCP_STATUS_INVALID_ARGUMENT` (an unknown `stderr`
/// mode, inconsistent options, before anything is spawned),
/// `MCP_STATUS_TRANSPORT` (spawn failed), `MCP_STATUS_CLOSED` (the process exited),
/// `MCP_STATUS_PROTOCOL` (negotiation failed; a JSON-RPC code when the server refused),
/// `MCP_STATUS_TIMEOUT`, `MCP_STATUS_WOULD_DEADLOCK` (called on a runtime thread).
#[no_mangle]
pub extern "C" fn mcp_client_connect_stdio(
    runtime: *const mcp_runtime_t,
    builder: *mut mcp_client_builder_t,
    command: *const c_char,
    command_len: usize,
    args: *const *const c_char,
    arg_lens: *const usize,
    argc: usize,
    spawn_json: *const c_char,
    spawn_len: usize,
    client_out: *mut *mut mcp_client_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    connect(
        "mcp_client_connect_stdio",
        runtime,
        builder,
        client_out,
        error_out,
        |b| {
            // SAFETY: command is NULL or valid for command_len bytes.
            let program = unsafe { str_arg(command, command_len, "command") }?;
            // SAFETY: per the documented contract of args / arg_lens / argc.
            let args = unsafe { arg_list(args, arg_lens, argc) }?;
            let mut cmd = StdioCommand::new(program).args(args);
            // SAFETY: spawn_json is NULL or valid for spawn_len bytes.
            unsafe { apply_options(&mut cmd, spawn_json, spawn_len, "spawn_json") }?;
            Ok(b.into_core().connect_stdio(cmd))
        },
    )
}

/// Connect to a Streamable HTTP endpoint (`http://host:port/path`). Blocks until the era is
/// negotiated.
///
/// @param runtime       the runtime (borrowed; the client keeps it alive).
/// @param builder       optional client builder (NULL = defaults); consumed in every case.
/// @param url           UTF-8 URL (`http://` or `https://`).
/// @param url_len       length of `url`.
/// @param options_json  optional JSON object (NULL for defaults; camelCase, unknown keys
///                      refused): `headers` (`{"Authorization": "Bearer ..."}`, sent on every
///                      request), `listenStream` (open the legacy GET stream; default true),
///                      `postTimeoutMs` (a notification or answer POST, including the wait
///                      for a connection; default 30000), `maxConnections` (most TCP
///                      connections open to the server, default 64: connections are kept
///                      alive and reused, and a call that finds them all busy waits for one
///                      within its timeout; a request's answer stream and the GET stream
///                      each hold one while open, and one is always kept for answers to the
///                      server; at least 2, 3 with `listenStream`), `poolIdleTimeoutMs` (an
///                      unused kept-alive connection is closed, default 90000), `http2` (offer
///                      h2 by ALPN on https, default true), `http2PriorKnowledge` (h2c on
///                      http, default false), `tls` (`{"caFile", "caPem", "certFile",
///                      "keyFile", "certPem", "keyPem", "platformRoots"}`: extra trusted CAs,
///                      a client certificate for mutual TLS, platform roots on by default),
///                      `auth`
///                      (OAuth 2.1 authorization, off when absent: `clientId`,
///                      `clientSecret`, `issuer`, `clientMetadataUrl`, `redirectUri`,
///                      `clientName`, `grant` (`authorizationCode`, `clientCredentials`,
///                      `jwtBearer`, `identityAssertion`), `requestOfflineAccess`,
///                      `maxAuthRounds`, `privateKeyPem`, `signingAlgorithm`, `assertion`,
///                      `idpTokenEndpoint`, `idpIdToken`, `idpClientId`, `dpop`,
///                      `allowedIssuers`, `allowAnyIssuer`, `allowedMetadataOrigins`,
///                      `allowInsecureHttp`; a secret, key or assertion needs `issuer` or
///                      `allowedIssuers`; the browser step is `mcp_client_builder_on_authorize`).
/// @param options_len   length of `options_json`.
/// @param client_out    receives the client on success.
/// @param error_out     optional detailed error.
///
/// **Ownership**: consumes `builder`; inputs are copied. The caller owns the client and frees it
/// with `mcp_client_free`.
///
/// **Thread safety**: any non-runtime thread; the client is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (unparsable, unknown key, wrong type), `MCP_STATUS_INVALID_ARGUMENT` (bad URL or header, a
/// value out of range), `MCP_STATUS_TRANSPORT` (connection refused, HTTP failure, the message
/// naming the OS error; a failed authorization, the message naming the step and never a
/// secret), `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_WOULD_DEADLOCK`.
#[no_mangle]
pub extern "C" fn mcp_client_connect_http(
    runtime: *const mcp_runtime_t,
    builder: *mut mcp_client_builder_t,
    url: *const c_char,
    url_len: usize,
    options_json: *const c_char,
    options_len: usize,
    client_out: *mut *mut mcp_client_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    connect(
        "mcp_client_connect_http",
        runtime,
        builder,
        client_out,
        error_out,
        |b| {
            // SAFETY: url is NULL or valid for url_len bytes.
            let url = unsafe { str_arg(url, url_len, "url") }?.to_owned();
            let mut h = HttpClientOptions::default();
            // SAFETY: options_json is NULL or valid for options_len bytes.
            unsafe { apply_options(&mut h, options_json, options_len, "options_json") }?;
            h.auth_hooks.browser = b.auth_browser.clone();
            Ok(async move { b.into_core().connect_http(&url, h).await })
        },
    )
}

/// Connect to `server` running in this process, over an in-memory pipe: the same framing,
/// negotiation (the builder's mode: auto, legacy or modern), limits and callbacks as over stdio,
/// with no process and no socket (for unit tests and embedding). Blocks until the era is
/// negotiated.
///
/// @param runtime     the runtime whose threads run the connection, both ends of it (borrowed;
///                    the client keeps it alive). The server's own runtime will do.
/// @param builder     optional client builder (NULL = defaults); consumed in every case.
/// @param server      the server (borrowed; the connection keeps it alive).
/// @param client_out  receives the client on success.
/// @param error_out   optional detailed error.
///
/// **Ownership**: consumes `builder`. The caller owns the client and frees it with
/// `mcp_client_free`; closing it ends the server's side too (requests in flight drain within
/// the server's `shutdownGraceMs`).
///
/// **Thread safety**: any non-runtime thread; the client is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_PROTOCOL` (negotiation failed, e.g. a
/// modern-mode client and a server without the modern era), `MCP_STATUS_TRANSPORT` (the
/// server's Redis backplane unreachable), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_WOULD_DEADLOCK`.
#[no_mangle]
pub extern "C" fn mcp_client_connect_in_memory(
    runtime: *const mcp_runtime_t,
    builder: *mut mcp_client_builder_t,
    server: *const crate::server::mcp_server_t,
    client_out: *mut *mut mcp_client_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    connect(
        "mcp_client_connect_in_memory",
        runtime,
        builder,
        client_out,
        error_out,
        |b| {
            // SAFETY: server is NULL or live (contract).
            let s = unsafe { handle::borrow(server, "server") }?;
            let served = s.inner.server.clone();
            Ok(async move { b.into_core().connect_in_memory(&served).await })
        },
    )
}

/// Shared body of the owned-string readers.
fn read_owned(
    client: *const mcp_client_t,
    out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
    f: impl FnOnce(&Client) -> Option<Value>,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: client is NULL or live (contract).
        let c = unsafe { handle::borrow(client, "client") }?;
        handle::require_out(out, "out")?;
        let s = match f(&c.client) {
            Some(Value::String(s)) => std::ffi::CString::new(s)
                .map_err(|_| FfiError::new(mcp_status_t::Protocol, "string contains NUL"))?
                .into_raw(),
            Some(v) => owned_json(&v),
            None => std::ptr::null_mut(),
        };
        // SAFETY: out is non-NULL (checked) and writable.
        unsafe { out.write(s) };
        Ok(())
    })
}

/// The protocol version in force: negotiated by `initialize` (legacy) or adopted from
/// `server/discover` (modern).
///
/// @param client       the client.
/// @param version_out  receives the version (e.g. `"2025-11-25"`), owned by the caller.
/// @param error_out    optional detailed error.
///
/// **Ownership**: borrows `client`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_protocol_version(
    client: *const mcp_client_t,
    version_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    read_owned(client, version_out, error_out, |c| {
        Some(Value::String(c.protocol_version().unwrap_or_default()))
    })
}

/// True when the connection speaks the modern (stateless) era, false for legacy (and NULL).
///
/// @param client  the client (NULL → false).
///
/// **Ownership**: borrows `client`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_client_is_modern(client: *const mcp_client_t) -> bool {
    ffi_guard(false, || {
        // SAFETY: client is NULL or live (contract).
        unsafe { handle::borrow(client, "client") }.is_ok_and(|c| c.client.is_modern())
    })
}

/// The server's implementation (`serverInfo`: `{"name","version",...}`) as JSON, or the JSON
/// text `null` when a modern server did not identify itself.
///
/// @param client     the client.
/// @param json_out   receives the JSON, owned by the caller.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_server_info_json(
    client: *const mcp_client_t,
    json_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    read_owned(client, json_out, error_out, |c| {
        Some(
            c.server_implementation()
                .and_then(|i| serde_json::to_value(i).ok())
                .unwrap_or(Value::Null),
        )
    })
}

/// The server's capabilities as a JSON object.
///
/// @param client     the client.
/// @param json_out   receives the JSON, owned by the caller.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_server_capabilities_json(
    client: *const mcp_client_t,
    json_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    read_owned(client, json_out, error_out, |c| {
        Some(c.server_capabilities())
    })
}

/// The server's instructions (UTF-8), or NULL written to `text_out` when it gave none.
///
/// @param client     the client.
/// @param text_out   receives the text (owned by the caller) or NULL.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free a non-NULL string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_instructions(
    client: *const mcp_client_t,
    text_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    read_owned(client, text_out, error_out, |c| {
        c.instructions().map(Value::String)
    })
}

/// What the stdio server wrote to its standard error, when it was started with
/// `"stderr": "capture"` (see `mcp_client_connect_stdio`): the last 64 KiB, oldest first, as
/// UTF-8 (invalid bytes and NUL bytes become U+FFFD). NULL is written to `text_out` when the
/// client does not capture (another `stderr` mode, or an HTTP client). The capture keeps
/// running until the server exits, also after `mcp_client_close`.
///
/// @param client     the client.
/// @param text_out   receives the text (owned by the caller) or NULL.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free a non-NULL string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_stderr(
    client: *const mcp_client_t,
    text_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // An owned C string cannot hold a NUL byte, and a server may write one.
    read_owned(client, text_out, error_out, |c| {
        c.captured_stderr()
            .map(|t| Value::String(t.replace('\0', "\u{fffd}")))
    })
}

/// The raw result of the negotiation: the `InitializeResult` (legacy) or the `DiscoverResult`
/// (modern) as JSON.
///
/// @param client     the client.
/// @param json_out   receives the JSON, owned by the caller.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_negotiation_json(
    client: *const mcp_client_t,
    json_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    read_owned(client, json_out, error_out, |c| {
        Some(c.server_info_raw().unwrap_or(Value::Null))
    })
}

/// True once the connection is closed (by `mcp_client_close`, or because the server went away).
///
/// @param client  the client (NULL → true).
///
/// **Ownership**: borrows `client`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_client_is_closed(client: *const mcp_client_t) -> bool {
    ffi_guard(true, || {
        // SAFETY: client is NULL or live (contract).
        unsafe { handle::borrow(client, "client") }.map_or(true, |c| c.client.is_closed())
    })
}

/// Close the connection and wait for it to end (stdio: close the server's stdin, wait, then
/// SIGTERM, then SIGKILL; HTTP: end the legacy session). Pending calls end with
/// `MCP_STATUS_CLOSED` (their callbacks run). Idempotent. The handle stays valid until
/// `mcp_client_free`; further calls fail with `MCP_STATUS_CLOSED`.
///
/// @param client     the client.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_WOULD_DEADLOCK` (inside a callback; use
/// `mcp_client_free` there, which closes in the background).
#[no_mangle]
pub extern "C" fn mcp_client_close(
    client: *const mcp_client_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: client is NULL or live (contract).
        let c = unsafe { handle::borrow(client, "client") }?;
        let cl = c.client.clone();
        c.runtime
            .run("mcp_client_close", async move { cl.close().await })
    })
}

/// Close the connection (as `mcp_client_close`) and free the client. NULL is a no-op. Blocks
/// until the connection ended, except on a runtime thread (inside a callback), where the close
/// continues in the background. Handler user data is released once the connection and every
/// outstanding responder are gone.
///
/// @param client  the client.
///
/// **Ownership**: consumes `client`. Calls still pending complete with `MCP_STATUS_CLOSED`.
///
/// **Thread safety**: any thread; no other call on `client` may be in flight (callbacks of
/// pending calls may still run, and must not use the freed handle).
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_client_free(client: *mut mcp_client_t) {
    ffi_guard((), || {
        // SAFETY: client is NULL or owned (contract).
        let Some(c) = (unsafe { handle::take(client) }) else {
            return;
        };
        let cl = c.client.clone();
        if tokio::runtime::Handle::try_current().is_ok() {
            c.runtime.spawn(async move { cl.close().await });
        } else {
            let _ = c
                .runtime
                .run("mcp_client_free", async move { cl.close().await });
        }
    });
}
