//! `mcp_client_builder_t`: client options (JSON or typed setters), C handlers for server→client
//! requests and notification callbacks, before connecting (REQUIREMENTS 0.8, DISC-02, LC-07,
//! SAMP-*, ELIC-*, ROOT-01). The options JSON is core's shape ([`mcpcore::options`]).
//!
//! Registrations take `user_data` plus an optional `free_user_data`; ownership of `user_data`
//! passes to the library in every case, so on any failure `free_user_data` has already run when
//! the function returns. The finalizer of a connected client's handler runs once the client and
//! every outstanding responder are gone.

use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::time::Duration;

use mcpcore::client::{ClientBuilder, ClientHandler, ClientOptions, ConnectMode};
use mcpcore::options::apply_json;
use mcpcore::Implementation;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, str_arg};
use crate::trampoline::{
    mcp_client_handler_fn, mcp_free_fn, mcp_notification_fn, notification_closure, CClientHandler,
    UserData,
};

/// How a client picks the protocol era (`MCP_CONNECT_MODE_*`; functions take it as `int`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcp_connect_mode {
    /// Probe `server/discover`; use the modern era when a mutual modern version is offered,
    /// otherwise fall back to the legacy `initialize` handshake.
    Auto = 0,
    /// Always the legacy `initialize` handshake.
    Legacy = 1,
    /// Always the modern (stateless) era; a failed discovery is an error.
    Modern = 2,
}

/// The connect-mode type (`MCP_CONNECT_MODE_*` values of `mcp_connect_mode`).
pub type mcp_connect_mode_t = mcp_connect_mode;

type NotificationCb = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// A client under construction. Single-threaded: use it from one thread at a time.
pub struct mcp_client_builder_t {
    pub(crate) options: ClientOptions,
    pub(crate) handlers: Vec<(String, CClientHandler)>,
    pub(crate) notifications: Vec<NotificationCb>,
    /// The OAuth browser step (`mcp_client_builder_on_authorize`).
    pub(crate) auth_browser: Option<Arc<dyn mcpcore::client::auth::AuthorizationBrowser>>,
}

impl mcp_client_builder_t {
    /// Core's builder with everything registered here.
    pub(crate) fn into_core(self) -> ClientBuilder {
        let mut b = ClientBuilder::default().options(self.options);
        for (method, h) in self.handlers {
            b = b.on_request(&method, h);
        }
        for n in self.notifications {
            b = b.on_notification(move |m: &str, p: &Value| n(m, p));
        }
        b
    }
}

fn mode(v: i32) -> Result<ConnectMode, FfiError> {
    Ok(match v {
        0 => ConnectMode::Auto,
        1 => ConnectMode::Legacy,
        2 => ConnectMode::Modern,
        _ => return Err(FfiError::invalid(format!("unknown connect mode {v}"))),
    })
}

fn with_builder(
    builder: *mut mcp_client_builder_t,
    error_out: *mut *mut mcp_error_t,
    f: impl FnOnce(&mut mcp_client_builder_t) -> Result<(), FfiError>,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: builder is NULL or a live builder used by this thread only (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        f(b)
    })
}

/// Start building a client.
///
/// @param name         UTF-8 client name (`clientInfo.name`), `name_len` bytes.
/// @param name_len     length of `name`.
/// @param version      UTF-8 client version (`clientInfo.version`).
/// @param version_len  length of `version`.
/// @param builder_out  receives the builder on success.
/// @param error_out    optional detailed error on failure.
///
/// **Ownership**: the caller owns the builder; it is consumed by `mcp_client_connect_stdio` /
/// `mcp_client_connect_http` or released with `mcp_client_builder_free`. Strings are copied.
///
/// **Thread safety**: a builder is single-threaded.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`.
#[no_mangle]
pub extern "C" fn mcp_client_builder_new(
    name: *const c_char,
    name_len: usize,
    version: *const c_char,
    version_len: usize,
    builder_out: *mut *mut mcp_client_builder_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        handle::require_out(builder_out, "builder_out")?;
        // SAFETY: pointers are NULL or valid for their lengths (contract).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        // SAFETY: as above.
        let version = unsafe { str_arg(version, version_len, "version") }?;
        let mut options = ClientOptions::default();
        options.client_info = Implementation::new(name, version);
        let b = handle::into_raw(mcp_client_builder_t {
            options,
            handlers: Vec::new(),
            notifications: Vec::new(),
            auth_browser: None,
        });
        // SAFETY: builder_out is non-NULL (checked) and writable.
        unsafe { builder_out.write(b) };
        Ok(())
    })
}

/// Choose how the era is negotiated (default `MCP_CONNECT_MODE_AUTO`).
///
/// @param builder    the builder.
/// @param mode       one of `mcp_connect_mode_t` (passed as `int`).
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `builder`.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_ARGUMENT` (unknown mode).
#[no_mangle]
pub extern "C" fn mcp_client_builder_mode(
    builder: *mut mcp_client_builder_t,
    mode: i32,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    with_builder(builder, error_out, |b| {
        b.options.mode = self::mode(mode)?;
        Ok(())
    })
}

/// Default timeout of every request of this client (0 = none, the default; the discovery probe
/// is bounded separately). A call's own `mcp_call_options_timeout_ms` overrides it.
///
/// @param builder     the builder.
/// @param timeout_ms  milliseconds.
///
/// **Ownership**: borrows `builder`.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_builder_request_timeout_ms(
    builder: *mut mcp_client_builder_t,
    timeout_ms: u64,
) -> mcp_status_t {
    with_builder(builder, std::ptr::null_mut(), |b| {
        b.options.request_timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
        Ok(())
    })
}

/// Set options from a JSON object (camelCase; unknown keys are refused; keys not named keep
/// their values). Keys: `mode` (`"auto"` (default), `"legacy"`, `"modern"`), `protocolVersion`
/// (pin a version), `clientInfo` (`{"name","version",...}`), `extraCapabilities` (merged into
/// the declared capabilities), `sendClientInfo` (default true), `logLevel` (default
/// per-request level on modern requests), `requestTimeoutMs` (0 or null = none, the default),
/// `probeTimeoutMs` (default 5000), `maxMessageBytes` (default 4 MiB), `maxJsonDepth`
/// (default 64), `maxMrtrRounds` (default 10), `cachedDiscovery` (an earlier
/// `server/discover` result), `cache` (default false), `validateStructuredContent` (default
/// true), `elicitationModes` (default `["form","url"]`), `apps` (advertise MCP Apps,
/// `io.modelcontextprotocol/ui`; default false). Inconsistent values (e.g. a modern
/// version with legacy mode) are reported when connecting.
///
/// @param builder    the builder.
/// @param json       UTF-8 JSON object.
/// @param json_len   length of `json`.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `builder`; `json` is copied.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (unparsable, not an object, unknown key or wrong type), `MCP_STATUS_INVALID_ARGUMENT`
/// (unknown mode or log level, a zero `maxMessageBytes`, `maxJsonDepth` or `probeTimeoutMs`).
/// Nothing is changed on failure.
#[no_mangle]
pub extern "C" fn mcp_client_builder_options_json(
    builder: *mut mcp_client_builder_t,
    json: *const c_char,
    json_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    with_builder(builder, error_out, |b| {
        // SAFETY: json is NULL or valid for json_len bytes.
        let obj = unsafe { json_object_arg(json, json_len, "options") }?;
        apply_json(&mut b.options, &Value::Object(obj))
            .map_err(|e| FfiError::options("options", &e))
    })
}

/// Register a C handler for a server→client request method (`"sampling/createMessage"`,
/// `"elicitation/create"`, `"roots/list"` or any other). The client declares the matching
/// capability (`sampling`, `elicitation` with the configured modes, `roots`). The handler answers
/// legacy server requests and the input requests of modern `input_required` results alike.
/// Registering a method again replaces the earlier handler (whose user data is released).
///
/// @param builder         the builder.
/// @param method          UTF-8 method name.
/// @param method_len      length of `method`.
/// @param handler         the C handler.
/// @param user_data       passed to every call of `handler`.
/// @param free_user_data  optional finalizer for `user_data`, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `builder`; copies `method`; takes ownership of `user_data` in every
/// case (on failure `free_user_data` has run before this returns).
///
/// **Thread safety**: the builder's thread. `handler` is called on runtime threads, possibly
/// concurrently.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`builder`, `method` or `handler`),
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_ARGUMENT` (empty method).
#[no_mangle]
pub extern "C" fn mcp_client_builder_on_request(
    builder: *mut mcp_client_builder_t,
    method: *const c_char,
    method_len: usize,
    handler: mcp_client_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    with_builder(builder, error_out, move |b| {
        // SAFETY: method is NULL or valid for method_len bytes.
        let m = unsafe { str_arg(method, method_len, "method") }?;
        if m.is_empty() {
            return Err(FfiError::invalid("method must not be empty"));
        }
        let h = CClientHandler::new(handler, m, data)?;
        b.handlers.retain(|(k, _)| k != m);
        b.handlers.push((m.to_owned(), h));
        Ok(())
    })
}

/// Register a callback for server notifications (log messages, list changes, resource
/// updates, cancellations, ...; progress goes to the call's progress callback instead). Several
/// callbacks may be registered; each sees every notification.
///
/// @param builder         the builder.
/// @param callback        the callback (see `mcp_notification_fn`).
/// @param user_data       passed to every call of `callback`.
/// @param free_user_data  optional finalizer for `user_data`, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `builder`; takes ownership of `user_data` in every case.
///
/// **Thread safety**: the builder's thread. `callback` runs on runtime threads.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`builder` or `callback`).
#[no_mangle]
pub extern "C" fn mcp_client_builder_on_notification(
    builder: *mut mcp_client_builder_t,
    callback: mcp_notification_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    with_builder(builder, error_out, move |b| {
        let f = notification_closure(callback, data)?;
        b.notifications.push(Arc::new(f));
        Ok(())
    })
}

/// Release a builder that was not used to connect. NULL is a no-op. The user data of every
/// registration is released (finalizers run before this returns).
///
/// @param builder  the builder.
///
/// **Ownership**: consumes `builder`.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_client_builder_free(builder: *mut mcp_client_builder_t) {
    ffi_guard((), || {
        // SAFETY: builder is NULL or owned (contract).
        drop(unsafe { handle::take(builder) });
    });
}

// The handler type must be a core client handler (compile-time check).
const _: fn() = || {
    fn is_handler<T: ClientHandler>() {}
    is_handler::<CClientHandler>();
};
