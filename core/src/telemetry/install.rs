//! One call that sets up telemetry for a process: the bindings and the C ABI call it with the
//! options JSON (`{"otlp": {…}, "level": "info"}`); a Rust program with a subscriber of its own
//! adds [`super::OtlpLayer`] to it instead.

use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tracing_subscriber::layer::SubscriberExt;

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

static EXPORT: OnceLock<Option<Arc<ExportHandle>>> = OnceLock::new();

/// Install the process's `tracing` subscriber with mcpcore's telemetry (once per process).
///
/// # Errors
/// A bad option (the message names it), or a subscriber already installed (by an earlier
/// call or by the program).
pub fn install(opts: &TelemetryOptions) -> Result<(), String> {
    let level = parse_level(&opts.level).map_err(|e| e.to_string())?;
    let layer = opts.otlp.as_ref().map(OtlpLayer::new).transpose()?;
    let handle = layer.as_ref().map(OtlpLayer::handle);
    let filter = tracing_subscriber::filter::Targets::new().with_target("mcpcore", level);
    let subscriber = tracing_subscriber::registry().with(layer).with(filter);
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|_| "a tracing subscriber is already installed in this process".to_owned())?;
    let _ = EXPORT.set(handle);
    Ok(())
}

/// Export every finished span now; waits at most `timeout`. `false` when nothing is exported
/// (no [`install`] with `otlp`) or the deadline passed.
pub fn flush(timeout: Duration) -> bool {
    EXPORT
        .get()
        .and_then(Option::as_ref)
        .is_some_and(|h| h.flush(timeout))
}
