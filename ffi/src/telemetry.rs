//! Telemetry from C: a server's metrics as Prometheus text and the process-wide install of
//! core's OTLP export — marshalling only; the spans, metrics and export are core's
//! (`mcpcore::telemetry`). A handler's trace context is `mcp_request_trace_context_json`.

use std::ffi::c_char;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::status_guard;
use crate::handle;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::json_object_arg;

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
        handle::require_out(text_out, "text_out")?;
        // The exposition is ASCII names, numbers and escaped label values: no NUL byte.
        let text = std::ffi::CString::new(s.inner.server.metrics_text())
            .map_err(|_| FfiError::new(mcp_status_t::Protocol, "metrics text contains NUL"))?;
        // SAFETY: text_out is non-NULL (checked) and writable.
        unsafe { text_out.write(text.into_raw()) };
        Ok(())
    })
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
///                      `intervalMs` (1000), `metricsIntervalMs` (60000)], `level` ["info":
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
