//! Client configuration: connect mode, version pin, identity, limits and per-call options
//! (REQUIREMENTS 0.8, DISC-02, META-02, LC-08, CAN-04). Every limit has a safe default.

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::protocol::{Implementation, LoggingLevel};

/// How the client picks the protocol era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone)]
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
    pub request_timeout: Option<Duration>,
    /// Bound of the discovery probe when `request_timeout` is not set (default 5 s).
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
        }
    }
}

/// A progress callback: `(progress, total, message)`.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// Options of one call.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Timeout of this call (overrides the client default).
    pub timeout: Option<Duration>,
    /// Cancel the call from elsewhere; the caller gets [`super::ClientError::Cancelled`] at once.
    pub cancel: Option<CancellationToken>,
    /// Progress notifications for this call (a `progressToken` is added).
    pub on_progress: Option<ProgressFn>,
    /// Per-request log level (modern; overrides the client default).
    pub log_level: Option<LoggingLevel>,
    /// Extra `_meta` entries for this request.
    pub meta: Map<String, Value>,
    /// Bypass the cache for this call.
    pub no_cache: bool,
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
