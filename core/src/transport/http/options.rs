//! Options of the Streamable HTTP transport. Every limit is configurable and has a safe default
//! (REQUIREMENTS HTTP-03, HTTP-06, LHTTP-02, LHTTP-04, LC-01, SUB-05). Body size, JSON depth and the
//! per-request queue come from the server's [`crate::Limits`].

use std::time::Duration;

/// Which `Origin` / `Host` values are accepted (HTTP-03, DNS-rebinding protection).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllowList {
    /// The default: derived from the address [`super::serve`] binds. A loopback bind accepts
    /// the localhost names (`localhost`, `127.0.0.1`, `[::1]`): as `Host` only with the bound
    /// port, as `Origin` on any port (a local web UI on another port). A specific non-loopback
    /// IP also accepts that IP with the bound port (`Origin`: `http(s)://ip:port`). An
    /// unspecified bind (`0.0.0.0`, `::`) names no host, so `serve` refuses to start until the
    /// lists are set explicitly. A mounted [`super::HttpService`] (no bind address) treats it as
    /// [`AllowList::Localhost`].
    Auto,
    /// Only `localhost`, `127.0.0.1` and `[::1]`, on any port.
    Localhost,
    /// Exactly these values (origins like `https://app.example`, hosts like `api.example:8443`),
    /// compared case-insensitively; localhost stays allowed too. A listed `Origin` matches
    /// verbatim whatever its scheme (say, an editor's `vscode-webview://…`); an unlisted one
    /// must be a well-formed `http(s)` origin to match the localhost names.
    List(Vec<String>),
    /// Anything (only behind a proxy that validates these itself).
    Any,
}

/// Streamable HTTP options.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The MCP endpoint path (default `/mcp`); `None` serves every path.
    pub path: Option<String>,
    /// Accepted `Origin` values; requests without `Origin` (non-browser clients) pass. A
    /// malformed origin (a non-`http(s)` scheme, a port that is not a number in 1–65535, a
    /// path) is refused (403) unless listed verbatim.
    pub allowed_origins: AllowList,
    /// Accepted `Host` values, and accepted authorities of absolute-form request targets
    /// (`POST http://host/mcp`) and HTTP/2 `:authority`, which name the host as much as `Host`
    /// does (RFC 9112 §3.2.2). Even with [`AllowList::Any`], an HTTP/1.1 request without `Host`,
    /// with several, or with a malformed one is 400 (RFC 9112 §3.2).
    pub allowed_hosts: AllowList,
    /// Serve the legacy (sessionful) era too (default true). When false, GET/DELETE → 405 and
    /// envelope-less requests → 400 + -32022 naming the modern versions.
    pub legacy: bool,
    /// Serve legacy traffic without sessions (default false): `initialize` mints no id, every
    /// request runs on a fresh handshake-initialized session, GET/DELETE → 405, and
    /// server→client requests cannot be answered (there is no session to route them to).
    pub stateless_legacy: bool,
    /// Most concurrent legacy sessions (default 10,000); past it `initialize` → 503.
    ///
    /// The cap bounds the memory sessions take; it is not an access control. Any cap can be
    /// filled by a peer that completes handshakes and keeps its sessions alive, and only
    /// authentication (or a proxy limiting peers) prevents that. What the engine does bound is
    /// the cheap attack: a peer that only POSTs `initialize` holds each slot for
    /// [`Self::uninitialized_session_timeout`], not [`Self::session_idle_timeout`]. Size the
    /// cap for the expected clients times their sessions, with headroom for reconnects.
    pub max_sessions: usize,
    /// Idle legacy sessions are reaped after this long (default 30 min). A session with work in
    /// flight or a GET stream open is not idle. Shorter frees slots sooner, but a client idle
    /// longer than this must re-`initialize` (it gets 404, LHTTP-02).
    pub session_idle_timeout: Duration,
    /// A legacy session whose client has not sent `notifications/initialized` this long after
    /// `initialize` is reaped, busy or not (default 10 s). A conforming client sends it right
    /// after the `initialize` result (LC-01), so only half-open sessions (a peer flooding
    /// `initialize` to fill [`Self::max_sessions`]) are affected; this bounds how long each of
    /// them holds a slot. Raise it only for clients on very slow links.
    pub uninitialized_session_timeout: Duration,
    /// Events kept per legacy SSE stream for `Last-Event-ID` replay (default 64).
    pub replay_buffer: usize,
    /// `retry:` hint (milliseconds) sent in the priming event of legacy streams (default 1000).
    pub sse_retry_ms: u64,
    /// Most concurrent `subscriptions/listen` streams (default 1,000); past it → 503.
    pub max_listen_streams: usize,
    /// Keep-alive comment interval (HTTP-06) on listen streams, legacy GET streams and POST
    /// SSE streams (default 15 s; `None` = off). A legacy session POST that has produced
    /// nothing for one interval switches to SSE, so its priming event lets the client resume
    /// after a disconnect (LHTTP-04).
    pub keepalive: Option<Duration>,
    /// How long graceful shutdown waits for in-flight work before cancelling it (default 5 s).
    pub shutdown_deadline: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: Some("/mcp".into()),
            allowed_origins: AllowList::Auto,
            allowed_hosts: AllowList::Auto,
            legacy: true,
            stateless_legacy: false,
            max_sessions: 10_000,
            session_idle_timeout: Duration::from_secs(30 * 60),
            uninitialized_session_timeout: Duration::from_secs(10),
            replay_buffer: 64,
            sse_retry_ms: 1000,
            max_listen_streams: 1000,
            keepalive: Some(Duration::from_secs(15)),
            shutdown_deadline: Duration::from_secs(5),
        }
    }
}

impl HttpOptions {
    /// Check that no limit is zero.
    ///
    /// # Errors
    /// The first limit out of range.
    pub fn validate(&self) -> Result<(), crate::limits::LimitError> {
        let positive = [
            ("max_sessions", self.max_sessions),
            ("replay_buffer", self.replay_buffer),
            ("max_listen_streams", self.max_listen_streams),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(crate::limits::LimitError {
                    name,
                    reason: "must be positive",
                });
            }
        }
        for (name, d) in [
            ("session_idle_timeout", self.session_idle_timeout),
            (
                "uninitialized_session_timeout",
                self.uninitialized_session_timeout,
            ),
        ] {
            if d.is_zero() {
                return Err(crate::limits::LimitError {
                    name,
                    reason: "must be positive",
                });
            }
        }
        if self.keepalive.is_some_and(|k| k.is_zero()) {
            return Err(crate::limits::LimitError {
                name: "keepalive",
                reason: "must be positive (use None to turn it off)",
            });
        }
        Ok(())
    }
}
