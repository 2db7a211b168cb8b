//! Options of the Streamable HTTP client transport, with the JSON shape of [`crate::options`].

use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use super::tls::ClientTls;

/// Default of [`HttpClientOptions::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// HTTP-specific client options.
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): `headers` (`{"Name": "value"}`),
/// `listenStream`, `postTimeoutMs`, `maxConnections`, `poolIdleTimeoutMs`, `http2`,
/// `http2PriorKnowledge`, `tls` (an object, see [`ClientTls`]), `auth` (OAuth,
/// [`crate::client::auth::OAuthOptions`]).
///
/// `Debug` prints header names only (a value may be a credential) and no secret of
/// [`Self::tls`] or [`Self::auth`].
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct HttpClientOptions {
    /// Extra headers on every request (e.g. `Authorization: Bearer …`). In JSON an object;
    /// values of a repeated name are joined with `", "`, which HTTP defines as the same
    /// (RFC 9110 §5.3).
    #[serde(with = "header_map")]
    pub headers: Vec<(String, String)>,
    /// Open the legacy GET listening stream after the handshake (default on).
    pub listen_stream: bool,
    /// Timeout of a notification or response POST, including the wait for a free connection
    /// (default 30 s).
    #[serde(rename = "postTimeoutMs", with = "crate::options::millis")]
    pub post_timeout: Duration,
    /// Most TCP connections open to the server at once (default 64). Connections are kept
    /// alive and reused; a call that finds them all busy waits for one (within its timeout)
    /// instead of opening another, so a burst of calls cannot exhaust the process's file
    /// descriptors. An exchange that may stay open (a request's answer, the legacy GET stream,
    /// a `subscriptions/listen` stream) holds its connection until it ends, and one connection
    /// is always kept for short exchanges (answers to server requests, notifications), which
    /// the open ones may be waiting for (LHTTP-08). At least 2, and at least 3 with
    /// [`Self::listen_stream`] on.
    pub max_connections: usize,
    /// A kept-alive connection unused this long is closed (default 90 s: shorter than the
    /// 120 s after which this crate's server closes idle connections, so a request is never
    /// sent on a connection the server is closing).
    #[serde(rename = "poolIdleTimeoutMs", with = "crate::options::millis")]
    pub pool_idle_timeout: Duration,
    /// Offer HTTP/2 by ALPN on `https://` URLs (default true). When the server picks it, every
    /// exchange is a stream of one multiplexed connection (the [`Self::max_connections`] rule
    /// for held exchanges still bounds how many are open at once); otherwise HTTP/1.1
    /// keep-alive connections are pooled as usual.
    pub http2: bool,
    /// Speak HTTP/2 without TLS to an `http://` URL from the first byte (h2c with prior
    /// knowledge, RFC 9113 §3.3; default false): only for servers known to accept it, such as
    /// this crate's.
    pub http2_prior_knowledge: bool,
    /// TLS for `https://` URLs: extra CAs, the platform roots, a client certificate.
    pub tls: ClientTls,
    /// A ready rustls configuration for `https://` URLs (Rust API only, no JSON form); takes
    /// precedence over [`Self::tls`]. Our ALPN list is set when it has none.
    #[serde(skip)]
    pub tls_config: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// OAuth 2.1 authorization (REQUIREMENTS §15): off when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<crate::client::auth::OAuthOptions>,
    /// The Rust-only parts of [`Self::auth`]: browser callback and token store.
    #[serde(skip)]
    pub auth_hooks: crate::client::auth::AuthHooks,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            listen_stream: true,
            post_timeout: Duration::from_secs(30),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            pool_idle_timeout: Duration::from_secs(90),
            http2: true,
            http2_prior_knowledge: false,
            tls: ClientTls::default(),
            tls_config: None,
            auth: None,
            auth_hooks: Default::default(),
        }
    }
}

impl std::fmt::Debug for HttpClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Any header may carry a credential (`Authorization`, `Cookie`, an API key header).
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, _)| (k.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("HttpClientOptions")
            .field("headers", &headers)
            .field("listen_stream", &self.listen_stream)
            .field("post_timeout", &self.post_timeout)
            .field("max_connections", &self.max_connections)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("http2", &self.http2)
            .field("http2_prior_knowledge", &self.http2_prior_knowledge)
            .field("tls", &self.tls)
            .field("tls_config", &self.tls_config.is_some())
            .field("auth", &self.auth)
            .field("auth_hooks", &self.auth_hooks)
            .finish()
    }
}

impl HttpClientOptions {
    /// Add a header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The values that would leave calls waiting for ever.
    pub(crate) fn check_ranges(&self) -> Result<(), String> {
        let min = if self.listen_stream { 3 } else { 2 };
        if self.max_connections < min {
            return Err(format!(
                "max_connections must be at least {min}{}: one connection is kept for answers \
                 to the server, which open requests may be waiting for",
                if self.listen_stream {
                    " with listen_stream on (the legacy GET stream holds one)"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }
}

impl crate::options::JsonOptions for HttpClientOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.check_ranges()
            .map_err(crate::options::OptionsError::Range)
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        self.tls_config.clone_from(&from.tls_config);
    }
}

/// Headers as a JSON object.
mod header_map {
    use serde::de::Deserializer;
    use serde::ser::{SerializeMap, Serializer};
    use serde::Deserialize;
    use std::collections::BTreeMap;

    pub(super) fn serialize<S: Serializer>(
        h: &[(String, String)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut merged: BTreeMap<String, (&str, String)> = BTreeMap::new();
        for (k, v) in h {
            merged
                .entry(k.to_ascii_lowercase())
                .and_modify(|(_, joined)| {
                    joined.push_str(", ");
                    joined.push_str(v);
                })
                .or_insert_with(|| (k.as_str(), v.clone()));
        }
        let mut m = s.serialize_map(Some(merged.len()))?;
        for (name, value) in merged.values() {
            m.serialize_entry(name, value)?;
        }
        m.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, String)>, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{apply_json, OptionsError};
    use serde_json::json;

    /// The keys the C header documents for `mcp_client_connect_http` apply, the shape
    /// round-trips, unknown keys and out-of-range values are refused.
    #[test]
    fn http_options_json_shape() {
        let mut o = HttpClientOptions::default();
        apply_json(
            &mut o,
            &json!({"headers": {"Authorization": "Bearer t"}, "listenStream": false,
                "postTimeoutMs": 1500, "maxConnections": 8, "poolIdleTimeoutMs": 1000}),
        )
        .expect("applies");
        assert_eq!(o.headers, vec![("Authorization".into(), "Bearer t".into())]);
        assert!(!o.listen_stream);
        assert_eq!(o.post_timeout, Duration::from_millis(1500));
        assert_eq!(o.max_connections, 8);
        assert_eq!(o.pool_idle_timeout, Duration::from_secs(1));
        let all = serde_json::to_value(&o).expect("serialize");
        let mut again = HttpClientOptions::default();
        apply_json(&mut again, &all).expect("the full shape applies");
        assert_eq!(serde_json::to_value(&again).expect("serialize"), all);
        apply_json(&mut o, &json!({"maxConnections": 2})).expect("2 without the GET stream");
        for (bad, shape) in [
            (json!({"headers": []}), true),
            (json!({"header": {}}), true),
            (json!({"maxConnections": "8"}), true),
            (json!({"maxConnections": 1}), false),
            (json!({"listenStream": true}), false),
        ] {
            let e = apply_json(&mut o, &bad).expect_err("refused");
            assert_eq!(matches!(e, OptionsError::Shape(_)), shape, "{bad}: {e}");
        }
        assert_eq!(o.max_connections, 2, "a refused patch changes nothing");
    }

    /// `Debug` (plain and pretty) never prints a header value, the TLS key or an OAuth
    /// secret; it still shows what is configured.
    #[test]
    fn debug_redacts_secrets() {
        let auth = crate::client::auth::OAuthOptions {
            client_id: Some("visible-client".into()),
            client_secret: Some("secret-client-value".into()),
            private_key_pem: Some("secret-private-key-pem".into()),
            assertion: Some("secret-assertion-jwt".into()),
            idp_id_token: Some("secret-idp-id-token".into()),
            ..Default::default()
        };
        let tls = ClientTls {
            key_pem: Some("secret-tls-key-pem".into()),
            key_file: Some("/visible/key.pem".into()),
            ..Default::default()
        };
        let mut o = HttpClientOptions::default()
            .header("Authorization", "Bearer secret-header-token")
            .header("X-Api-Key", "secret-api-key");
        o.tls = tls.clone();
        o.auth = Some(auth.clone());
        let secrets = [
            "secret-client-value",
            "secret-private-key-pem",
            "secret-assertion-jwt",
            "secret-idp-id-token",
            "secret-tls-key-pem",
            "secret-header-token",
            "secret-api-key",
        ];
        let shown = [
            format!("{o:?}"),
            format!("{o:#?}"),
            format!("{tls:?}"),
            format!("{tls:#?}"),
            format!("{auth:?}"),
            format!("{auth:#?}"),
        ];
        for s in &shown {
            for secret in secrets {
                assert!(!s.contains(secret), "{secret} printed: {s}");
            }
        }
        assert!(shown[0].contains("Authorization") && shown[0].contains("X-Api-Key"));
        assert!(shown[0].contains("visible-client") && shown[0].contains("/visible/key.pem"));
        assert!(
            shown[2].contains("key_pem: Some(\"<redacted>\")"),
            "{}",
            shown[2]
        );
    }

    #[test]
    fn repeated_header_names_are_joined() {
        let o = HttpClientOptions::default()
            .header("X-A", "1")
            .header("x-a", "2")
            .header("B", "3");
        assert_eq!(
            serde_json::to_value(&o).expect("serialize")["headers"],
            json!({"X-A": "1, 2", "B": "3"})
        );
    }
}
