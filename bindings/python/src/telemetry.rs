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
