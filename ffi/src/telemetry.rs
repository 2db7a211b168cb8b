//! Telemetry from C: a server's metrics as Prometheus text, the process-wide install of core's
//! OTLP export, and the route of core's log events to a C callback — marshalling only; the spans, metrics and export are core's
//! (`mcpcore::telemetry`). A handler's trace context is `mcp_request_trace_context_json`.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::client::mcp_client_t;
use crate::error::{mcp_error_t, FfiError};
use crate::guard::status_guard;
use crate::handle;
use crate::responder::mcp_log_level_t;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, str_arg};
use crate::trampoline::{mcp_free_fn, UserData};

/// The server's metrics as a Prometheus text exposition (format 0.0.4): request durations by
/// the OpenTelemetry MCP conventions, requests by method, target and outcome, in-flight
/// requests, refusals by reason, live legacy sessions, listen streams, open connections.
/// Recorded only when the server option `metrics` is true (`mcp_server_builder_options_json`).
///
/// @param server     the server.
/// @param text_out   receives the text, owned by the caller.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `server`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_server_metrics_text(
    server: *const mcp_server_t,
    text_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: forwarded contract.
        unsafe { write_text(text_out, s.inner.server.metrics_text()) }
    })
}

/// The client's metrics as a Prometheus text exposition (format 0.0.4): the OpenTelemetry MCP
/// conventions' `mcp.client.operation.duration` by method, target and `error_type`, the
/// requests sent, in-flight requests, and `mcp.client.session.duration` once closed. Recorded
/// only when the client option `metrics` is true.
///
/// @param client     the client.
/// @param text_out   receives the text, owned by the caller.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `client`; free the string with `mcp_string_free`.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_client_metrics_text(
    client: *const mcp_client_t,
    text_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: client is NULL or live (contract).
        let c = unsafe { handle::borrow(client, "client") }?;
        // SAFETY: forwarded contract.
        unsafe { write_text(text_out, c.client.metrics_text()) }
    })
}

/// Hand `text` to the caller through `out`.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn write_text(out: *mut *mut c_char, text: String) -> Result<(), FfiError> {
    handle::require_out(out, "text_out")?;
    // The exposition is ASCII names, numbers and escaped label values: no NUL byte.
    let text = std::ffi::CString::new(text)
        .map_err(|_| FfiError::new(mcp_status_t::Protocol, "metrics text contains NUL"))?;
    // SAFETY: out is non-NULL (checked) and writable (contract).
    unsafe { out.write(text.into_raw()) };
    Ok(())
}

/// Install core's telemetry for this process (once): export mcpcore's spans, and the metrics
/// of servers with `metrics` on, over OTLP/HTTP (protobuf).
///
/// @param options_json  required JSON object, core's `TelemetryOptions`: `otlp` [null: no
///                      export; an object exports, its unset fields from the standard
///                      environment: `endpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`, else
///                      "http://localhost:4318"), `tracesEndpoint`, `metricsEndpoint`,
///                      `headers`, `serviceName` (`OTEL_SERVICE_NAME`), `timeoutMs` (10000),
///                      `maxQueue` (2048 spans; past it spans are dropped), `maxBatch` (512),
///                      `intervalMs` (1000), `metricsIntervalMs` (60000), `stopFlushMs`
///                      (2000: how long a server that stopped serving waits for its last
///                      spans to be exported; 0: no wait)], `level` ["info":
///                      a span per request; "error", "warn", "debug", "trace"].
/// @param options_len   length of `options_json`.
/// @param error_out     optional detailed error.
///
/// **Ownership**: `options_json` is copied.
///
/// **Thread safety**: any thread; the first successful call wins.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_JSON` (not an object, an unknown
/// key, a wrong type), `MCP_STATUS_INVALID_ARGUMENT` (a value out of range, an unsupported
/// `OTEL_EXPORTER_OTLP_PROTOCOL`, or telemetry already installed in this process).
#[no_mangle]
pub extern "C" fn mcp_telemetry_configure(
    options_json: *const c_char,
    options_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: options_json is NULL or valid for options_len bytes (contract).
        let patch = unsafe { json_object_arg(options_json, options_len, "options_json") }?;
        let mut opts = mcpcore::telemetry::TelemetryOptions::default();
        mcpcore::options::apply_json(&mut opts, &serde_json::Value::Object(patch))
            .map_err(|e| FfiError::options("options_json", &e))?;
        mcpcore::telemetry::install(&opts).map_err(FfiError::invalid)
    })
}

/// Export every finished span and the metrics now, waiting at most `timeout_ms`.
///
/// @param timeout_ms  the most to wait, in milliseconds.
///
/// **Thread safety**: any thread but a runtime thread (it blocks).
///
/// **Errors**: none; returns false when nothing exports (no `otlp` configured) or the
/// deadline passed.
#[no_mangle]
pub extern "C" fn mcp_telemetry_flush(timeout_ms: u64) -> bool {
    crate::guard::ffi_guard(false, || {
        mcpcore::telemetry::flush(std::time::Duration::from_millis(timeout_ms))
    })
}

/// A log callback: one of mcpcore's own log events (core's, from every server and client of
/// the process). `level` is `MCP_LOG_LEVEL_ERROR`, `_WARNING`, `_INFO` or `_DEBUG` (core's
/// trace events too); `target` (`mcpcore::transport::http`, …) and `message` (the message,
/// then the event's fields as `key=value`) are UTF-8, NUL-terminated, of the given lengths,
/// valid until the callback returns. No event ever carries a token, a secret or a tool
/// argument.
///
/// Called on the thread that logs — any runtime thread, possibly concurrently — so it must be
/// quick and must not block (hand the record to the host's logger or a queue). It must not
/// unwind or `longjmp`.
pub type mcp_log_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: mcp_log_level_t,
        target: *const c_char,
        target_len: usize,
        message: *const c_char,
        message_len: usize,
    ),
>;

struct CLog {
    func: unsafe extern "C" fn(
        *mut c_void,
        mcp_log_level_t,
        *const c_char,
        usize,
        *const c_char,
        usize,
    ),
    data: UserData,
}

impl CLog {
    fn call(&self, r: &mcpcore::telemetry::LogRecord<'_>) {
        use tracing::Level;
        let level = match r.level {
            Level::ERROR => mcp_log_level_t::Error,
            Level::WARN => mcp_log_level_t::Warning,
            Level::INFO => mcp_log_level_t::Info,
            _ => mcp_log_level_t::Debug,
        };
        // NUL-terminated copies (a field may hold any text, NULs included: cut there).
        let z = |s: &str| {
            let mut v: Vec<u8> = s.bytes().take_while(|b| *b != 0).collect();
            let len = v.len();
            v.push(0);
            (v, len)
        };
        let ((target, tl), (message, ml)) = (z(r.target), z(r.message));
        // SAFETY: a C callback registered with this user data; both strings are
        // NUL-terminated and live until it returns.
        unsafe {
            (self.func)(
                self.data.ptr(),
                level,
                target.as_ptr().cast(),
                tl,
                message.as_ptr().cast(),
                ml,
            );
        }
    }
}

/// Route mcpcore's own log events at `level` or more severe to `callback` (replacing any earlier
/// route); a NULL `callback` stops the route.
///
/// @param level           "off", "error", "warn", "info", "debug" or "trace", `level_len`
///                        bytes.
/// @param callback        the log callback, or NULL to stop routing.
/// @param user_data       passed to every call.
/// @param free_user_data  optional; called once with `user_data` when the route is replaced or
///                        stopped (after its last call), or at once when this call fails.
/// @param error_out       optional detailed error.
///
/// **Ownership**: `user_data` passes to the engine in every case (see `free_user_data`).
///
/// **Thread safety**: any thread. The first call installs the process's `tracing` subscriber,
/// shared with `mcp_telemetry_configure`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`level`), `MCP_STATUS_INVALID_UTF8`,
/// `MCP_STATUS_INVALID_ARGUMENT` (an unknown level, or a `tracing` subscriber not mcpcore's
/// already owning the process).
#[no_mangle]
pub extern "C" fn mcp_log_route(
    level: *const c_char,
    level_len: usize,
    callback: mcp_log_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    status_guard(error_out, move || {
        // SAFETY: level is NULL or valid for level_len bytes (contract).
        let name = unsafe { str_arg(level, level_len, "level") }?;
        let filter = mcpcore::telemetry::parse_level_filter(name).map_err(FfiError::invalid)?;
        let sink = callback.map(|func| {
            let c = Arc::new(CLog { func, data });
            let sink: mcpcore::telemetry::LogSink = Arc::new(move |r| c.call(r));
            sink
        });
        mcpcore::telemetry::route_logs(sink, filter).map_err(FfiError::invalid)
    })
}
