//! The process's telemetry for the foreign doors: one `tracing` subscriber ([`super::subscriber`]), installed on first
//! use, that exports spans over OTLP once [`install`] configured it (the bindings and the C ABI
//! call it with the options JSON, `{"otlp": {…}, "level": "info"}`) and hands log events to the
//! route [`super::route_logs`] sets. A Rust program with a subscriber of its own adds
//! [`super::OtlpLayer`] to it instead.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;
use tracing::level_filters::LevelFilter;

use super::log::Route;
use super::otlp::{ExportHandle, OtlpLayer, OtlpOptions};

/// Process-wide telemetry settings (JSON: camelCase; see [`crate::options`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct TelemetryOptions {
    /// Export spans over OTLP/HTTP; `None`: no export. Unset fields come from the standard
    /// `OTEL_*` environment variables.
    pub otlp: Option<OtlpOptions>,
    /// The most verbose level of mcpcore's spans recorded: `error`, `warn`, `info` (default:
    /// every request span), `debug` or `trace`.
    pub level: String,
}

impl Default for TelemetryOptions {
    fn default() -> Self {
        Self {
            otlp: None,
            level: "info".into(),
        }
    }
}

impl crate::options::JsonOptions for TelemetryOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        parse_level(&self.level).map(|_| ())
    }
}

fn parse_level(l: &str) -> Result<tracing::Level, crate::options::OptionsError> {
    l.parse::<tracing::Level>().map_err(|_| {
        crate::options::OptionsError::Range(format!(
            "level must be error, warn, info, debug or trace, got {l:?}"
        ))
    })
}

/// The process's one telemetry layer: OTLP export (configured once, by [`install`]) and the
/// log route (set and changed by [`super::route_logs`]).
pub(crate) struct Process {
    otlp: OnceLock<(OtlpLayer, LevelFilter, Arc<ExportHandle>)>,
    route: RwLock<Option<Route>>,
}

static PROCESS: OnceLock<Result<Arc<Process>, String>> = OnceLock::new();

/// The process layer, installed as the global `tracing` subscriber on first use.
pub(crate) fn process() -> Result<&'static Process, String> {
    PROCESS
        .get_or_init(|| {
            let p = Arc::new(Process {
                otlp: OnceLock::new(),
                route: RwLock::new(None),
            });
            let subscriber = super::subscriber::ProcessSubscriber::new(p.clone());
            tracing::subscriber::set_global_default(subscriber).map_err(|_| {
                "a tracing subscriber is already installed in this process".to_owned()
            })?;
            Ok(p)
        })
        .as_ref()
        .map(|p| &**p)
        .map_err(Clone::clone)
}

impl Process {
    /// A process layer exporting through `layer`, for tests of the subscriber.
    #[cfg(test)]
    pub(super) fn exporting(layer: OtlpLayer) -> Arc<Self> {
        let handle = layer.handle();
        let p = Self {
            otlp: OnceLock::new(),
            route: RwLock::new(None),
        };
        let _ = p.otlp.set((layer, LevelFilter::TRACE, handle));
        Arc::new(p)
    }

    pub(crate) fn set_route(&self, route: Option<Route>) {
        *self.route.write().unwrap_or_else(PoisonError::into_inner) = route;
        // Callsites cached `never`/`always` under the old route.
        tracing::callsite::rebuild_interest_cache();
    }

    /// The exporter, once [`install`] configured one.
    pub(super) fn otlp(&self) -> Option<&OtlpLayer> {
        self.otlp.get().map(|(l, _, _)| l)
    }

    pub(super) fn route(&self) -> Option<Route> {
        self.route
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The most verbose level [`Self::wants`] can say yes to, for `tracing`'s global filter:
    /// with it, every callsite above it (hyper's, tokio's and h2's `trace!` and `trace_span!` in
    /// each request's path) is skipped by one comparison, as when no subscriber is installed,
    /// instead of reaching its interest check.
    pub(super) fn max_level(&self) -> LevelFilter {
        let spans = self.otlp.get().map_or(LevelFilter::OFF, |(_, l, _)| *l);
        let logs = self.route().map_or(LevelFilter::OFF, |r| r.level);
        spans.max(logs)
    }

    /// mcpcore's spans while spans are exported (at their level); its events while a log
    /// route takes them (at its level). Nothing else: a callsite nobody wants costs nothing.
    pub(super) fn wants(&self, m: &tracing::Metadata<'_>) -> bool {
        if !m.target().starts_with("mcpcore") {
            return false;
        }
        if m.is_span() {
            self.otlp
                .get()
                .is_some_and(|(_, level, _)| m.level() <= level)
        } else {
            self.route().is_some_and(|r| m.level() <= &r.level)
        }
    }
}

static CONFIGURED: OnceLock<()> = OnceLock::new();

/// Configure the process's telemetry (once per process): export mcpcore's spans, at `level`,
/// and the metrics of servers with `metrics` on, over OTLP when `otlp` is set.
///
/// # Errors
/// A bad option (the message names it), a second call, or a `tracing` subscriber not
/// installed by mcpcore already owning the process.
pub fn install(opts: &TelemetryOptions) -> Result<(), String> {
    let level = parse_level(&opts.level).map_err(|e| e.to_string())?;
    // Built first: a refused option leaves the process unconfigured.
    let layer = opts.otlp.as_ref().map(OtlpLayer::new).transpose()?;
    let p = process()?;
    CONFIGURED
        .set(())
        .map_err(|()| "telemetry is already configured in this process".to_owned())?;
    if let Some(layer) = layer {
        let handle = layer.handle();
        let _ = p.otlp.set((layer, LevelFilter::from_level(level), handle));
        tracing::callsite::rebuild_interest_cache();
    }
    Ok(())
}

/// Export every finished span now; waits at most `timeout`. `false` when nothing is exported
/// (no [`install`] with `otlp`) or the deadline passed.
pub fn flush(timeout: Duration) -> bool {
    exporter().is_some_and(|h| h.flush(timeout))
}

/// A server stopped serving (stdin ended, the HTTP endpoint shut down): wait, at most the
/// exporter's `stopFlushMs`, for what it recorded to be exported — the process often exits
/// next, and spans wait for a full batch or the export interval. Nothing when nothing is
/// exported. The wait blocks a thread: it runs on the runtime's blocking pool.
pub(crate) async fn flush_on_stop() {
    if let Some(h) = exporter() {
        let _ = tokio::task::spawn_blocking(move || h.flush_for_stop()).await;
    }
}

/// For a process about to exit (Python's `atexit`, Node's `exit` event, a C or Rust `main`
/// returning): export what was recorded, waiting at most the exporter's `stopFlushMs` (the
/// process ends either way). `false` when nothing is exported, `stopFlushMs` is 0 or the
/// deadline passed. Blocks the calling thread.
pub fn flush_at_exit() -> bool {
    exporter().is_some_and(|h| h.flush_for_stop())
}

/// How many finished spans the process's OTLP exporter dropped because its queue (`maxQueue`)
/// was full — a collector too slow or unreachable for the load. `None` when nothing is
/// exported. Also in every server's metrics (`mcpcore_telemetry_spans_dropped_total`).
pub fn spans_dropped() -> Option<u64> {
    exporter().map(|h| h.dropped())
}

fn exporter() -> Option<Arc<ExportHandle>> {
    PROCESS
        .get()
        .and_then(|p| p.as_ref().ok())
        .and_then(|p| p.otlp.get())
        .map(|(_, _, h)| h.clone())
}
