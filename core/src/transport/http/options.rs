//! Options of the Streamable HTTP transport. Every limit is configurable and has a safe default
//! (REQUIREMENTS HTTP-03, HTTP-06, LHTTP-02, LHTTP-04, SUB-05). Body size, JSON depth and the
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
    /// compared case-insensitively; localhost stays allowed too.
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
    /// Accepted `Origin` values; requests without `Origin` (non-browser clients) pass.
    pub allowed_origins: AllowList,
    /// Accepted `Host` values.
    pub allowed_hosts: AllowList,
    /// Serve the legacy (sessionful) era too (default true). When false, GET/DELETE → 405 and
    /// envelope-less requests → 400 + -32022 naming the modern versions.
    pub legacy: bool,
    /// Serve legacy traffic without sessions (default false): `initialize` mints no id, every
    /// request runs on a fresh handshake-initialized session, GET/DELETE → 405, and
    /// server→client requests cannot be answered (there is no session to route them to).
    pub stateless_legacy: bool,
    /// Most concurrent legacy sessions (default 10,000); past it `initialize` → 503.
    pub max_sessions: usize,
    /// Idle legacy sessions are reaped after this long (default 30 min).
    #[serde(rename = "sessionIdleTimeoutMs", with = "crate::options::millis")]
    pub session_idle_timeout: Duration,
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
}

fn path_or_any<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let p = <Option<String> as serde::Deserialize>::deserialize(d)?;
    Ok(p.filter(|p| !p.is_empty()))
}

impl crate::options::JsonOptions for HttpOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.validate()
            .map_err(|e| crate::options::OptionsError::Range(e.to_string()))
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
        if self.session_idle_timeout.is_zero() {
            return Err(crate::limits::LimitError {
                name: "session_idle_timeout",
                reason: "must be positive",
            });
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
