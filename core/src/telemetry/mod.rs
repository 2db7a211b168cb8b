//! Observability by the OpenTelemetry semantic conventions for MCP: `tracing` spans of every
//! request and notification served and every request sent ([`span`](self) rules), W3C trace
//! context carried in `params._meta` ([`TraceContext`]), and operation metrics rendered as a
//! Prometheus exposition ([`Server::metrics_text`](crate::Server::metrics_text), the HTTP
//! endpoint's `metricsPath`).

mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
#[cfg(feature = "otlp")]
mod otlp_span;
#[cfg(feature = "otlp")]
mod proto;
#[cfg(feature = "otlp")]
mod proto_metrics;
pub(crate) mod span;
mod trace;

#[cfg(all(test, feature = "otlp"))]
mod bench;
#[cfg(feature = "otlp")]
mod install;
#[cfg(feature = "otlp")]
mod log;
#[cfg(feature = "otlp")]
mod subscriber;

#[cfg(feature = "otlp")]
pub(crate) use install::flush_on_stop;
#[cfg(feature = "otlp")]
pub use install::{flush, flush_at_exit, install, spans_dropped, TelemetryOptions};

/// Without the `otlp` feature nothing is exported, so a stopping server has nothing to wait for.
#[cfg(not(feature = "otlp"))]
pub(crate) async fn flush_on_stop() {}
#[cfg(feature = "otlp")]
pub use log::{parse_level_filter, route_logs, LogRecord, LogSink};
#[cfg(feature = "otlp")]
pub use otlp::{ExportHandle, OtlpLayer, OtlpOptions};

/// The HTTP request span a request arrived in: its context, and the span id of the
/// `traceparent` header it continued.
#[derive(Clone)]
pub(crate) struct HttpTrace {
    pub span: TraceContext,
    pub via: Option<[u8; 8]>,
}

/// The W3C ids of the span being made on this thread, for the OTLP layer: handed over as bytes
/// while the span's `trace_id`/`span_id`/`parent_span_id` fields (hex, for any subscriber) are
/// made, so the exporter neither formats nor parses them. Set just before the span is made and
/// cleared just after ([`span::with_ids`]).
#[cfg(feature = "otlp")]
#[derive(Clone, Copy)]
pub(crate) struct SpanIds {
    pub trace: [u8; 16],
    pub span: [u8; 8],
    pub parent: Option<[u8; 8]>,
}

#[cfg(feature = "otlp")]
thread_local! {
    pub(crate) static NEXT_IDS: std::cell::Cell<Option<SpanIds>> = const { std::cell::Cell::new(None) };
}

tokio::task_local! {
    /// Set while the HTTP request span is recorded: the parent of the MCP span when `_meta`
    /// names no context, or names the one the header carried.
    pub(crate) static HTTP_TRACE: HttpTrace;
}

pub use metrics::Refusal;
pub(crate) use metrics::{
    merge as merge_metrics, register as register_metrics, render as render_metrics, GaugeSource,
    Metrics,
};
pub use trace::{TraceContext, TRACEPARENT, TRACESTATE};
