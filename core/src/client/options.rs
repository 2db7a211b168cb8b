//! Client configuration: connect mode, version pin, identity, limits and per-call options
//! (REQUIREMENTS 0.8, DISC-02, META-02, LC-08, CAN-04). Every limit has a safe default.
//!
//! [`ClientOptions`] and [`CallOptions`] have the JSON shape of [`crate::options`] (camelCase
//! keys, unknown keys refused, durations as `…Ms`, applied as a patch), so the C ABI and the
//! bindings set them with [`crate::options::apply_json`] instead of mapping fields by hand.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::protocol::{Implementation, LoggingLevel};

/// How the client picks the protocol era. JSON: `"auto"`, `"legacy"`, `"modern"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ConnectMode {
    /// Probe `server/discover`; adopt the modern era when a mutual modern version is offered,
    /// otherwise fall back to `initialize` (on any discovery failure).
    #[default]
    Auto,
    /// Always the `initialize` handshake.
    Legacy,
    /// Always the modern (stateless) era; discovery failure is an error.
    Modern,
}

/// Default bound of the stdio discovery probe when no request timeout is set (DISC-02).
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Default number of `input_required` rounds the driver fulfils before giving up (MRTR).
pub const DEFAULT_MAX_MRTR_ROUNDS: usize = 10;

/// Client configuration.
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): the field names in camelCase, with
/// `requestTimeoutMs` (`0` or `null` = none) and `probeTimeoutMs` in milliseconds, `mode` and
/// `logLevel` as their lowercase names. The protocol version is checked against the mode when
/// connecting (the two may be set by separate patches).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Who this client is (`clientInfo`).
    pub client_info: Implementation,
    /// Era selection.
    pub mode: ConnectMode,
    /// An explicit protocol version. A legacy version pins the handshake without a probe; a
    /// modern version is used for discovery and the envelope.
    pub protocol_version: Option<String>,
    /// Extra client capabilities merged into what the registered handlers declare
    /// (e.g. `experimental`, `extensions`).
    pub extra_capabilities: Map<String, Value>,
    /// Send `clientInfo` in the modern envelope (META-02; default on).
    pub send_client_info: bool,
    /// Default per-request log level on modern requests (`io.modelcontextprotocol/logLevel`).
    pub log_level: Option<LoggingLevel>,
    /// Default timeout of every request (`None` = wait for ever, except the probe).
    #[serde(rename = "requestTimeoutMs", with = "crate::options::opt_millis")]
    pub request_timeout: Option<Duration>,
    /// Bound of the discovery probe when `request_timeout` is not set (default 5 s).
    #[serde(rename = "probeTimeoutMs", with = "crate::options::millis")]
    pub probe_timeout: Duration,
    /// Largest accepted inbound frame or SSE event (default 4 MiB).
    pub max_message_bytes: usize,
    /// Deepest accepted JSON nesting of an inbound message (default 64).
    pub max_json_depth: usize,
    /// `input_required` rounds fulfilled automatically before a clear error (default 10).
    pub max_mrtr_rounds: usize,
    /// A `server/discover` result from an earlier connection (VER-02): skips the probe when it
    /// offers a mutual modern version.
    pub cached_discovery: Option<Value>,
    /// Keep an in-memory cache honouring `ttlMs`/`cacheScope` (CACHE-*; default off).
    pub cache: bool,
    /// Validate `structuredContent` against known output schemas (TOOL-06; default on).
    pub validate_structured_content: bool,
    /// Elicitation modes declared when an elicitation handler is registered (default form+url).
    pub elicitation_modes: Vec<String>,
    /// Advertise MCP Apps (`extensions["io.modelcontextprotocol/ui"]` with the
    /// `text/html;profile=mcp-app` MIME type, EXT-03) in both eras; default off.
    pub apps: bool,
    /// Record `mcp.client.operation.duration`, `mcp.client.session.duration` and the requests
    /// sent ([`super::Client::metrics_text`], and OTLP when exported); default off, when it
    /// costs one branch per request.
    pub metrics: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            client_info: Implementation::new("mcpcore-client", env!("CARGO_PKG_VERSION")),
            mode: ConnectMode::Auto,
            protocol_version: None,
            extra_capabilities: Map::new(),
            send_client_info: true,
            log_level: None,
            request_timeout: None,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            max_message_bytes: 4 * 1024 * 1024,
            max_json_depth: 64,
            max_mrtr_rounds: DEFAULT_MAX_MRTR_ROUNDS,
            cached_discovery: None,
            cache: false,
            validate_structured_content: true,
            elicitation_modes: vec!["form".into(), "url".into()],
            apps: false,
            metrics: false,
        }
    }
}

impl crate::options::JsonOptions for ClientOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.check_ranges()
            .map_err(crate::options::OptionsError::Range)
    }
}

impl ClientOptions {
    /// The values that would disable a protection or make every connection fail.
    pub(crate) fn check_ranges(&self) -> Result<(), String> {
        if self.max_message_bytes == 0 || self.max_json_depth == 0 {
            return Err("max_message_bytes and max_json_depth must be positive".into());
        }
        if self.probe_timeout.is_zero() {
            return Err("probe_timeout must be positive".into());
        }
        Ok(())
    }
}

/// A progress callback: `(progress, total, message)`.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// Options of one call.
///
/// JSON shape (see [`crate::options`]): `timeoutMs` (`0` or `null` = the client's default),
/// `logLevel`, `meta` (extra `_meta` entries, an object) and `noCache`. The cancellation token
/// and the progress callback have no JSON form; a patch keeps them.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Timeout of this call (overrides the client default).
    #[serde(rename = "timeoutMs", with = "crate::options::opt_millis")]
    pub timeout: Option<Duration>,
    /// Cancel the call from elsewhere; the caller gets [`super::ClientError::Cancelled`] at once.
    #[serde(skip)]
    pub cancel: Option<CancellationToken>,
    /// Progress notifications for this call (a `progressToken` is added).
    #[serde(skip)]
    pub on_progress: Option<ProgressFn>,
    /// Per-request log level (modern; overrides the client default).
    pub log_level: Option<LoggingLevel>,
    /// Extra `_meta` entries for this request.
    pub meta: Map<String, Value>,
    /// Bypass the cache for this call.
    pub no_cache: bool,
    /// Opt this request into the tasks extension (TASK-M01): set by the task calls only, so a
    /// plain call never lets a server answer with a task.
    #[serde(skip)]
    pub(crate) tasks_opt_in: bool,
    /// The capabilities this request declares in its envelope instead of the client's (a
    /// proxy forwarding for its own client, META-02). Rust API only.
    #[serde(skip)]
    pub(crate) client_capabilities: Option<Value>,
    /// Hand every `input_required` result to the caller instead of answering it with the
    /// registered handlers (MRTR-04). Rust API only.
    #[serde(skip)]
    pub(crate) manual_input: bool,
}

impl crate::options::JsonOptions for CallOptions {
    fn keep_unrepresented(&mut self, from: &Self) {
        self.cancel.clone_from(&from.cancel);
        self.on_progress.clone_from(&from.on_progress);
        self.tasks_opt_in = from.tasks_opt_in;
        self.client_capabilities
            .clone_from(&from.client_capabilities);
        self.manual_input = from.manual_input;
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("cancel", &self.cancel.is_some())
            .field("on_progress", &self.on_progress.is_some())
            .field("log_level", &self.log_level)
            .finish_non_exhaustive()
    }
}

impl CallOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declare `capabilities` in this request's envelope (2026-07-28) instead of the client's
    /// own: a proxy forwarding a call states what its caller can answer, so the server asks
    /// (or refuses with -32021) as it would the caller itself (META-02, SEP-2575). Legacy
    /// sessions declared theirs at `initialize`; this changes nothing there.
    #[must_use]
    pub fn client_capabilities(mut self, capabilities: Value) -> Self {
        self.client_capabilities = Some(capabilities);
        self
    }

    /// Return an `input_required` result as [`super::ClientError::InputRequired`] (its
    /// `inputRequests` keys and `requestState` as the server sent them) instead of answering
    /// it with the registered handlers: a proxy passes the round on to its own caller and
    /// retries with the answers (`inputResponses`, `requestState` in the params).
    #[must_use]
    pub fn manual_input(mut self) -> Self {
        self.manual_input = true;
        self
    }
    /// Set a timeout.
    #[must_use]
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// Set a cancellation token.
    #[must_use]
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }
    /// Set a progress callback.
    #[must_use]
    pub fn on_progress(
        mut self,
        f: impl Fn(f64, Option<f64>, Option<String>) + Send + Sync + 'static,
    ) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }
    /// Set the per-request log level.
    #[must_use]
    pub fn log_level(mut self, l: LoggingLevel) -> Self {
        self.log_level = Some(l);
        self
    }
    /// Bypass the cache.
    #[must_use]
    pub fn no_cache(mut self) -> Self {
        self.no_cache = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{apply_json, OptionsError};
    use serde_json::json;

    /// Every key the C header documents for `mcp_client_builder_options_json` applies, the full
    /// shape round-trips, and unknown keys or bad values are refused without a change.
    #[test]
    fn client_options_json_shape() {
        let mut o = ClientOptions::default();
        apply_json(
            &mut o,
            &json!({
                "mode": "legacy", "protocolVersion": "2025-06-18",
                "clientInfo": {"name": "c", "version": "2"},
                "extraCapabilities": {"experimental": {}}, "sendClientInfo": false,
                "logLevel": "warning", "requestTimeoutMs": 1500, "probeTimeoutMs": 700,
                "maxMessageBytes": 1024, "maxJsonDepth": 9, "maxMrtrRounds": 3,
                "cachedDiscovery": {"supportedVersions": []}, "cache": true,
                "validateStructuredContent": false, "elicitationModes": ["form"]
            }),
        )
        .expect("every documented key applies");
        assert_eq!(o.mode, ConnectMode::Legacy);
        assert_eq!(o.client_info.name, "c");
        assert_eq!(o.log_level, Some(LoggingLevel::Warning));
        assert_eq!(o.request_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(o.probe_timeout, Duration::from_millis(700));
        assert_eq!((o.max_message_bytes, o.max_json_depth), (1024, 9));
        assert!(o.cache && !o.validate_structured_content && !o.send_client_info);
        let all = serde_json::to_value(&o).expect("serialize");
        let mut again = ClientOptions::default();
        apply_json(&mut again, &all).expect("the full shape applies");
        assert_eq!(serde_json::to_value(&again).expect("serialize"), all);
        apply_json(&mut o, &json!({"requestTimeoutMs": 0})).expect("0 = none");
        assert_eq!(o.request_timeout, None);
        assert_eq!(
            o.mode,
            ConnectMode::Legacy,
            "a patch keeps what it does not name"
        );
        for (bad, shape) in [
            (json!({"nope": 1}), true),
            (json!({"requestTimeout": 1}), true),
            (json!({"cache": "yes"}), true),
            (json!([]), true),
            (json!({"mode": "sideways"}), false),
            (json!({"logLevel": "loud"}), false),
            (json!({"maxMessageBytes": 0}), false),
            (json!({"probeTimeoutMs": 0}), false),
        ] {
            let e = apply_json(&mut o, &bad).expect_err("refused");
            assert_eq!(matches!(e, OptionsError::Shape(_)), shape, "{bad}: {e}");
        }
        assert_eq!(o.max_message_bytes, 1024, "a refused patch changes nothing");
    }

    /// The JSON keys of call options apply; the token and the callback survive a patch.
    #[test]
    fn call_options_json_shape_keeps_callbacks() {
        let token = CancellationToken::new();
        let mut o = CallOptions::new()
            .cancel(token.clone())
            .on_progress(|_, _, _| {});
        apply_json(
            &mut o,
            &json!({"timeoutMs": 250, "logLevel": "debug", "meta": {"k": 1}, "noCache": true}),
        )
        .expect("applies");
        assert_eq!(o.timeout, Some(Duration::from_millis(250)));
        assert_eq!(o.log_level, Some(LoggingLevel::Debug));
        assert_eq!(o.meta.get("k"), Some(&json!(1)));
        assert!(o.no_cache);
        assert!(o.on_progress.is_some(), "the callback is kept");
        token.cancel();
        assert!(o
            .cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled));
        let all = serde_json::to_value(&o).expect("serialize");
        assert_eq!(
            all,
            json!({"timeoutMs": 250, "logLevel": "debug", "meta": {"k": 1}, "noCache": true})
        );
        apply_json(&mut o, &json!({"timeoutMs": null})).expect("null = client default");
        assert_eq!(o.timeout, None);
        for bad in [
            json!({"cancel": true}),
            json!({"onProgress": null}),
            json!({"meta": []}),
            json!({"timeoutMs": -1}),
        ] {
            assert!(apply_json(&mut o, &bad).is_err(), "{bad}");
        }
    }
}
