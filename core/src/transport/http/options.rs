//! Options of the Streamable HTTP transport. Every limit is configurable and has a safe default
//! (REQUIREMENTS HTTP-03, HTTP-06, LHTTP-02, LHTTP-04, LC-01, SUB-05). Body size, JSON depth and the
//! per-request queue come from the server's [`crate::Limits`].

use std::time::Duration;

/// Which `Origin` / `Host` values are accepted (HTTP-03, DNS-rebinding protection).
///
/// JSON shape: `"auto"`, `"localhost"`, `"any"`, or a list of values.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "AllowJson", into = "AllowJson")]
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

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum AllowJson {
    Keyword(String),
    List(Vec<String>),
}

impl TryFrom<AllowJson> for AllowList {
    type Error = String;
    fn try_from(v: AllowJson) -> Result<Self, String> {
        match v {
            AllowJson::List(l) => Ok(Self::List(l)),
            AllowJson::Keyword(k) => match k.as_str() {
                "auto" => Ok(Self::Auto),
                "localhost" => Ok(Self::Localhost),
                "any" => Ok(Self::Any),
                _ => Err(format!(
                    "expected \"auto\", \"localhost\", \"any\" or a list, got {k:?}"
                )),
            },
        }
    }
}

impl From<AllowList> for AllowJson {
    fn from(a: AllowList) -> Self {
        match a {
            AllowList::Auto => Self::Keyword("auto".into()),
            AllowList::Localhost => Self::Keyword("localhost".into()),
            AllowList::Any => Self::Keyword("any".into()),
            AllowList::List(l) => Self::List(l),
        }
    }
}

/// Streamable HTTP options.
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): the field names in camelCase,
/// durations in milliseconds as `…Ms` (`keepaliveMs`: `0` or `null` = off), `path`: `""` or
/// `null` = every path.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The MCP endpoint path (default `/mcp`); `None` serves every path.
    #[serde(deserialize_with = "path_or_any")]
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
    #[serde(rename = "sessionIdleTimeoutMs", with = "crate::options::millis")]
    pub session_idle_timeout: Duration,
    /// A legacy session whose client has not sent `notifications/initialized` this long after
    /// `initialize` is reaped, busy or not (default 10 s). A conforming client sends it right
    /// after the `initialize` result (LC-01), so only half-open sessions (a peer flooding
    /// `initialize` to fill [`Self::max_sessions`]) are affected; this bounds how long each of
    /// them holds a slot. Raise it only for clients on very slow links.
    #[serde(
        rename = "uninitializedSessionTimeoutMs",
        with = "crate::options::millis"
    )]
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
    #[serde(rename = "keepaliveMs", with = "crate::options::opt_millis")]
    pub keepalive: Option<Duration>,
    /// How long graceful shutdown waits for in-flight work before cancelling it (default 5 s).
    #[serde(rename = "shutdownDeadlineMs", with = "crate::options::millis")]
    pub shutdown_deadline: Duration,
    /// The whole header block of a request must arrive within this (default 30 s, hyper's own
    /// default): counted from the accept for a connection's first request, and from the first
    /// byte of each later one. A peer that sends nothing, or half a header, is disconnected
    /// (a slow-header attack cannot hold a connection). Standalone listener only: a mounted
    /// [`super::HttpService`] relies on the host server for it.
    #[serde(rename = "headerReadTimeoutMs", with = "crate::options::millis")]
    pub header_read_timeout: Duration,
    /// The whole body of a POST must arrive within this (default 60 s: the default 4 MiB
    /// `max_message_bytes` at a slow ~70 KB/s link). Past it the request is answered 408 with a
    /// JSON-RPC `-32600` error and `Connection: close`, and the connection is closed. Applies to
    /// the standalone listener and to a mounted [`super::HttpService`] alike.
    #[serde(rename = "bodyReadTimeoutMs", with = "crate::options::millis")]
    pub body_read_timeout: Duration,
    /// A keep-alive connection with no request in progress is closed after this long
    /// (default 120 s: longer than the 90 s pool idle timeout of common HTTP clients, including
    /// hyper's and this crate's, so a client never reuses a connection the server is closing).
    /// Open SSE streams are requests in progress and are not affected. Standalone listener only.
    #[serde(rename = "connectionIdleTimeoutMs", with = "crate::options::millis")]
    pub connection_idle_timeout: Duration,
    /// A write (an answer, an SSE event) that makes no progress for this long, because the peer
    /// stopped reading and its TCP window is full, ends the connection and frees what it held
    /// (default 30 s). Only a stalled write counts: an SSE stream that is idle, or read
    /// slowly but steadily, stays open. Standalone listener only.
    #[serde(rename = "writeStallTimeoutMs", with = "crate::options::millis")]
    pub write_stall_timeout: Duration,
    /// Most open connections (default 512: half the usual 1,024 soft `ulimit -n`, leaving file
    /// descriptors for the rest of the process; raise both together). At the cap the listener
    /// stops accepting, so new connections wait in the kernel backlog and are served as soon as
    /// one closes, instead of failing with descriptor exhaustion. Each open listen or legacy GET
    /// stream holds one. Standalone listener only.
    pub max_connections: usize,
    /// Terminate TLS on the standalone listener from PEM files (default `None`: plain HTTP, as
    /// behind a TLS-terminating proxy). The TLS handshake counts against
    /// [`Self::header_read_timeout`], and every other deadline and cap applies over TLS too.
    /// [`Self::tls_config`] takes precedence. JSON: `{"certFile", "keyFile", "clientCaFile"}`.
    pub tls: Option<crate::transport::tls::ServerTls>,
    /// A ready rustls configuration (Rust API only, no JSON form): see [`Self::with_tls_config`]
    /// and [`Self::with_tls_pem`]. Its own ALPN list is kept when it sets one.
    #[serde(skip)]
    pub tls_config: Option<std::sync::Arc<rustls::ServerConfig>>,
    /// Serve HTTP/2 (default true): over TLS when the client picks `h2` by ALPN, and on plain
    /// TCP to clients that start with the HTTP/2 preface (prior knowledge, RFC 9113 §3.3).
    /// HTTP/1.1 is always served.
    pub http2: bool,
    /// Most concurrent HTTP/2 streams per connection (default 100, the RFC 9113 §6.5.2
    /// recommended minimum); each open SSE stream holds one. Request headers are capped at
    /// 16 KiB per HTTP/2 request (hyper's default, as hyper bounds HTTP/1.1 heads).
    pub max_concurrent_streams: u32,
    /// Protect the endpoint as an OAuth 2.1 resource server (AUTH-01, AUTH-06; default `None`:
    /// open). See [`crate::auth::AuthOptions`].
    pub auth: Option<crate::auth::AuthOptions>,
    /// Most bytes of client messages (answers to server→client requests, cancels) and relayed
    /// standalone-stream messages that one legacy session may have waiting in the shared store
    /// for other workers to read (default 16 MiB; shared stores only). Past it a message is
    /// dropped and logged, so a client cannot fill Redis through one session (LHTTP-08).
    pub max_routed_bytes: usize,
    /// Serve the server's metrics as a Prometheus text exposition to `GET` on this path
    /// (default `None`: not served). The `Origin`/`Host` rules apply; the bearer gate does not
    /// (scrapers do not carry the MCP token: expose the path only where scrapers reach it).
    /// Turn recording on with the server option `metrics`. JSON: `metricsPath`.
    pub metrics_path: Option<String>,
    /// Where legacy sessions and their SSE events are shared between workers (Rust API; the
    /// default shares nothing: one process serves each session). See [`LegacyStores`].
    #[serde(skip)]
    pub legacy_stores: LegacyStores,
}

/// The backplane stores of legacy Streamable HTTP sessions: with shared stores, any worker
/// behind a load balancer serves any session (LHTTP-02) and resumes any stream (LHTTP-04).
#[derive(Clone)]
#[non_exhaustive]
pub struct LegacyStores {
    /// The session records.
    pub sessions: std::sync::Arc<dyn crate::backplane::SessionStore>,
    /// The SSE events of POST streams, for `Last-Event-ID` on any worker (LHTTP-04).
    pub events: std::sync::Arc<dyn crate::backplane::EventStore>,
    /// How often a stream resumed on a worker other than the one running its request reads
    /// the store for new events (default 100 ms).
    pub poll: Duration,
    /// How often a worker checks that the sessions it holds replicas of still exist, so a
    /// DELETE on another worker closes this worker's streams too (default 1 s).
    pub sweep: Duration,
}

impl LegacyStores {
    /// Share sessions through `sessions`.
    pub fn new(sessions: std::sync::Arc<dyn crate::backplane::SessionStore>) -> Self {
        Self {
            sessions,
            ..Self::default()
        }
    }
}

impl Default for LegacyStores {
    fn default() -> Self {
        Self {
            sessions: std::sync::Arc::new(crate::backplane::LocalSessionStore),
            events: std::sync::Arc::new(crate::backplane::LocalEventStore),
            sweep: Duration::from_secs(1),
            poll: Duration::from_millis(100),
        }
    }
}

impl std::fmt::Debug for LegacyStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyStores")
            .field("shared", &self.sessions.is_shared())
            .field("events_shared", &self.events.is_shared())
            .field("sweep", &self.sweep)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

fn path_or_any<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let p = <Option<String> as serde::Deserialize>::deserialize(d)?;
    Ok(p.filter(|p| !p.is_empty()))
}

impl crate::options::JsonOptions for HttpOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.validate()
            .map_err(|e| crate::options::OptionsError::Range(e.to_string()))?;
        match &self.auth {
            Some(a) => crate::options::JsonOptions::check(a),
            None => Ok(()),
        }
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        if let (Some(a), Some(f)) = (&mut self.auth, &from.auth) {
            crate::options::JsonOptions::keep_unrepresented(a, f);
        }
        self.tls_config.clone_from(&from.tls_config);
        self.legacy_stores.clone_from(&from.legacy_stores);
    }
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
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(60),
            connection_idle_timeout: Duration::from_secs(120),
            write_stall_timeout: Duration::from_secs(30),
            max_connections: 512,
            tls: None,
            tls_config: None,
            http2: true,
            max_concurrent_streams: 100,
            auth: None,
            max_routed_bytes: 16 << 20,
            metrics_path: None,
            legacy_stores: LegacyStores::default(),
        }
    }
}

impl HttpOptions {
    /// The defaults for an endpoint mounted in the host's own web server
    /// ([`crate::Server::http_service`] behind axum, ASGI, `node:http`, a C server): `path`
    /// unset, so the endpoint answers whatever path the host routes to it (the host owns
    /// routing); everything else as [`HttpOptions::default`]. Every door's mount starts here.
    #[must_use]
    pub fn mounted() -> Self {
        Self {
            path: None,
            ..Self::default()
        }
    }

    /// Terminate TLS with this rustls configuration (mutual TLS, custom resolvers, …).
    #[must_use]
    pub fn with_tls_config(mut self, config: std::sync::Arc<rustls::ServerConfig>) -> Self {
        self.tls_config = Some(config);
        self
    }

    /// Terminate TLS with a PEM certificate chain (leaf first) and private key.
    ///
    /// # Errors
    /// Malformed or missing PEM items, or a key that does not match the certificate.
    pub fn with_tls_pem(self, cert_chain: &[u8], key: &[u8]) -> Result<Self, String> {
        let config = crate::transport::tls::server_config_from_pem(cert_chain, key, None)?;
        Ok(self.with_tls_config(std::sync::Arc::new(config)))
    }

    /// The TLS configuration the listener uses, with its ALPN list: [`Self::tls_config`], else
    /// [`Self::tls`] loaded from its files; `None` for plain HTTP.
    ///
    /// # Errors
    /// The files cannot be read or do not hold a usable certificate and key.
    pub fn tls_server_config(
        &self,
    ) -> Result<Option<std::sync::Arc<rustls::ServerConfig>>, String> {
        let config = match (&self.tls_config, &self.tls) {
            (Some(c), _) => c.clone(),
            (None, Some(files)) => std::sync::Arc::new(files.load()?),
            (None, None) => return Ok(None),
        };
        Ok(Some(crate::transport::tls::with_alpn(config, self.http2)))
    }

    /// Check that no limit is zero (a zero timeout or cap would refuse everything or, read as
    /// "off", remove the protection).
    ///
    /// # Errors
    /// The first limit out of range.
    pub fn validate(&self) -> Result<(), crate::limits::LimitError> {
        let positive = [
            ("max_sessions", self.max_sessions),
            ("replay_buffer", self.replay_buffer),
            ("max_listen_streams", self.max_listen_streams),
            ("max_connections", self.max_connections),
            ("max_routed_bytes", self.max_routed_bytes),
            (
                "max_concurrent_streams",
                usize::try_from(self.max_concurrent_streams).unwrap_or(usize::MAX),
            ),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(crate::limits::LimitError {
                    name,
                    reason: "must be positive",
                });
            }
        }
        let durations = [
            ("session_idle_timeout", self.session_idle_timeout),
            (
                "uninitialized_session_timeout",
                self.uninitialized_session_timeout,
            ),
            ("header_read_timeout", self.header_read_timeout),
            ("body_read_timeout", self.body_read_timeout),
            ("connection_idle_timeout", self.connection_idle_timeout),
            ("write_stall_timeout", self.write_stall_timeout),
        ];
        for (name, d) in durations {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_protection_defaults_and_zero_refused() {
        let d = HttpOptions::default();
        assert_eq!(d.header_read_timeout, Duration::from_secs(30));
        assert_eq!(d.body_read_timeout, Duration::from_secs(60));
        assert_eq!(d.connection_idle_timeout, Duration::from_secs(120));
        assert_eq!(d.write_stall_timeout, Duration::from_secs(30));
        assert_eq!(d.max_connections, 512);
        assert!(d.validate().is_ok());
        type Zero = fn(&mut HttpOptions);
        let zeroed: [(&str, Zero); 5] = [
            ("header_read_timeout", |o| {
                o.header_read_timeout = Duration::ZERO
            }),
            ("body_read_timeout", |o| {
                o.body_read_timeout = Duration::ZERO
            }),
            ("connection_idle_timeout", |o| {
                o.connection_idle_timeout = Duration::ZERO
            }),
            ("write_stall_timeout", |o| {
                o.write_stall_timeout = Duration::ZERO
            }),
            ("max_connections", |o| o.max_connections = 0),
        ];
        for (name, zero) in zeroed {
            let mut o = HttpOptions::default();
            zero(&mut o);
            assert_eq!(o.validate().map_err(|e| e.name), Err(name));
        }
    }

    /// The cap on bytes routed per shared legacy session: on by default, set from JSON
    /// (`maxRoutedBytes`), never zero.
    #[test]
    fn lhttp08_max_routed_bytes_default_json_and_zero_refused() {
        assert_eq!(HttpOptions::default().max_routed_bytes, 16 << 20);
        let o: HttpOptions =
            serde_json::from_value(serde_json::json!({"maxRoutedBytes": 1024})).expect("json");
        assert_eq!(o.max_routed_bytes, 1024);
        let zero = HttpOptions {
            max_routed_bytes: 0,
            ..HttpOptions::default()
        };
        assert_eq!(zero.validate().map_err(|e| e.name), Err("max_routed_bytes"));
    }
}
