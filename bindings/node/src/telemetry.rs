//! Core's telemetry for JavaScript: the process-wide install of core's tracing (OTLP export of
//! spans and metrics) — marshalling only; the spans, metrics and export are core's
//! (`mcpcore::telemetry`).

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;

/// Install core's telemetry for this process (once): `options` is core's `TelemetryOptions`
/// JSON (`{ otlp: { ... }, level: "info" }`; unset OTLP fields come from `OTEL_*`).
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_args_type = "options?: Record<string, any>")]
pub fn configure_telemetry(options: Option<Value>) -> Result<()> {
    let mut opts = mcpcore::telemetry::TelemetryOptions::default();
    if let Some(patch) = options {
        mcpcore::options::apply_json(&mut opts, &patch)
            .map_err(|e| Error::new(Status::InvalidArg, format!("telemetry options: {e}")))?;
    }
    mcpcore::telemetry::install(&opts).map_err(|e| Error::new(Status::InvalidArg, e))
}

/// Export every finished span (and the metrics) now, waiting at most `timeoutMs` (default
/// 5,000) off the JavaScript thread; false when nothing exports or the deadline passed.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub async fn flush_telemetry(timeout_ms: Option<u32>) -> bool {
    let t = std::time::Duration::from_millis(u64::from(timeout_ms.unwrap_or(5000)));
    tokio::task::spawn_blocking(move || mcpcore::telemetry::flush(t))
        .await
        .unwrap_or(false)
}

/// Before the process exits (`lib/index.cjs` calls it from the `exit` event, whose listeners
/// must be synchronous): export what was recorded, blocking at most `stopFlushMs`; false when
/// nothing exports.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn flush_telemetry_at_exit() -> bool {
    mcpcore::telemetry::flush_at_exit()
}

/// The JavaScript log handler, called on the JavaScript thread with `(level, target, message)`;
/// weak, so it never keeps the process alive.
pub type LogFn = ThreadsafeFunction<
    FnArgs<(String, String, String)>,
    (),
    FnArgs<(String, String, String)>,
    Status,
    false,
    true,
>;

/// Route core's log events at `level` (`off`, `error`, `warn`, `info`, `debug`, `trace`) or
/// more severe to `handler` (replacing any earlier one); no handler stops the route.
#[cfg_attr(test, allow(dead_code))]
#[napi(
    ts_args_type = "handler: ((level: string, target: string, message: string) => void) | null, level: string"
)]
pub fn route_logs(handler: Option<LogFn>, level: String) -> Result<()> {
    let filter = mcpcore::telemetry::parse_level_filter(&level)
        .map_err(|e| Error::new(Status::InvalidArg, e))?;
    let sink = handler.map(|f| {
        let sink: mcpcore::telemetry::LogSink =
            std::sync::Arc::new(move |r: &mcpcore::telemetry::LogRecord<'_>| {
                let args = (
                    r.level.as_str().to_ascii_lowercase(),
                    r.target.to_owned(),
                    r.message.to_owned(),
                );
                f.call(FnArgs::from(args), ThreadsafeFunctionCallMode::NonBlocking);
            });
        sink
    });
    mcpcore::telemetry::route_logs(sink, filter).map_err(|e| Error::new(Status::GenericFailure, e))
}
