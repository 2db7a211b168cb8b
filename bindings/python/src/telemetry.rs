//! Core's telemetry for Python: the merged Prometheus text of a `Server`'s native servers, and
//! the process-wide install of core's tracing (OTLP export) — marshalling only; the spans, the
//! metrics and the export are core's (`mcpcore::telemetry`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert;
use crate::server::NativeServer;

/// The metrics of `servers` as one Prometheus text exposition (series with the same labels
/// added).
#[pyfunction]
pub fn metrics_text(servers: Vec<PyRef<'_, NativeServer>>) -> String {
    let cores: Vec<mcpcore::Server> = servers.iter().map(|s| s.server.clone()).collect();
    mcpcore::Server::merged_metrics_text(&cores)
}

/// Install core's telemetry for this process (once): `options` is core's `TelemetryOptions`
/// JSON (`{"otlp": {...}, "level": "info"}`).
#[pyfunction]
#[pyo3(signature = (options=None))]
pub fn configure_telemetry(options: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let mut opts = mcpcore::telemetry::TelemetryOptions::default();
    if let Some(patch) = convert::from_py_opt(options)? {
        mcpcore::options::apply_json(&mut opts, &patch)
            .map_err(|e| PyValueError::new_err(format!("telemetry options: {e}")))?;
    }
    mcpcore::telemetry::install(&opts).map_err(PyValueError::new_err)
}

/// Export every finished span (and the metrics) now; waits at most `timeout` seconds, with the
/// GIL released. `False` when nothing exports or the deadline passed.
#[pyfunction]
#[pyo3(signature = (timeout=5.0))]
pub fn flush_telemetry(py: Python<'_>, timeout: f64) -> bool {
    let t = std::time::Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
    py.detach(|| mcpcore::telemetry::flush(t))
}

/// Before the interpreter exits (registered with `atexit` by `configure_telemetry`): export
/// what was recorded, waiting at most `stopFlushMs` with the GIL released. `False` when nothing
/// exports.
#[pyfunction]
pub fn flush_telemetry_at_exit(py: Python<'_>) -> bool {
    py.detach(mcpcore::telemetry::flush_at_exit)
}

/// A record on its way to the interpreter: `(levelno, target, message)` with Python's
/// `logging` numbers (TRACE is 5).
type Rec = (u8, String, String);

/// Most records waiting for the interpreter; past it records are dropped rather than slowing
/// the thread that logs.
const LOG_QUEUE: usize = 1024;

fn levelno(l: tracing::Level) -> u8 {
    match l {
        tracing::Level::ERROR => 40,
        tracing::Level::WARN => 30,
        tracing::Level::INFO => 20,
        tracing::Level::DEBUG => 10,
        tracing::Level::TRACE => 5,
    }
}

/// Route core's log events at `level` (`off`, `error`, `warn`, `info`, `debug`, `trace`) or more
/// severe to `emit(levelno, target, message)` (replacing any earlier route; `None` stops it).
/// Records are queued and `emit` runs on a thread of its own, so a runtime thread that logs
/// never waits for the interpreter lock.
#[pyfunction]
#[pyo3(signature = (emit, level="warn"))]
pub fn route_logs(emit: Option<Py<PyAny>>, level: &str) -> PyResult<()> {
    let filter = mcpcore::telemetry::parse_level_filter(level).map_err(PyValueError::new_err)?;
    let sink = match emit {
        None => None,
        Some(emit) => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Rec>(LOG_QUEUE);
            std::thread::Builder::new()
                .name("mcpcore-log".into())
                .spawn(move || {
                    // Ends when the route is replaced (its sender dropped) or the interpreter
                    // shuts down.
                    while let Ok((no, target, msg)) = rx.recv() {
                        let delivered = crate::bridge::attach(|py| {
                            if let Err(e) = emit.call1(py, (no, target, msg)) {
                                e.print(py);
                            }
                        });
                        if delivered.is_none() {
                            break;
                        }
                    }
                })
                .map_err(|e| PyValueError::new_err(format!("cannot start the log thread: {e}")))?;
            let sink: mcpcore::telemetry::LogSink =
                std::sync::Arc::new(move |r: &mcpcore::telemetry::LogRecord<'_>| {
                    let _ =
                        tx.try_send((levelno(r.level), r.target.to_owned(), r.message.to_owned()));
                });
            Some(sink)
        }
    };
    mcpcore::telemetry::route_logs(sink, filter).map_err(PyValueError::new_err)
}
