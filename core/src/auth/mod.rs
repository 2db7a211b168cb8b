//! OAuth 2.1 resource server side (REQUIREMENTS §15: AUTH-01, AUTH-02, AUTH-06).
//!
//! A protected Streamable HTTP server verifies the bearer token of every request on its MCP
//! endpoint, publishes RFC 9728 Protected Resource Metadata, and hands the verified
//! [`Principal`] to handlers ([`crate::server::RequestContext::principal`]). Configure it with
//! [`AuthOptions`] in [`crate::transport::http::HttpOptions::auth`]; tokens are checked by a
//! [`TokenVerifier`]: the built-in [`JwtVerifier`] (JWKS from a file or URL) or one of your own.

mod jwks;
mod jwt;

pub use jwt::JwtVerifier;

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::future::BoxFuture;

/// Who a verified access token speaks for.
///
/// JSON shape (the C ABI verifier callback returns it): `{"subject", "issuer"?, "scopes"?,
/// "clientId"?, "expiresAt"? (Unix seconds), "claims"?}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Principal {
    /// The token's subject (`sub`).
    pub subject: String,
    /// The issuer (`iss`), when known.
    #[serde(default)]
    pub issuer: Option<String>,
    /// Granted scopes (`scope`, space separated, or `scp`).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`).
    #[serde(default)]
    pub client_id: Option<String>,
    /// Expiry, Unix seconds (`exp`).
    #[serde(default)]
    pub expires_at: Option<u64>,
    /// Every claim of the token, as verified.
    #[serde(default)]
    pub claims: Value,
}

impl Principal {
    /// A principal for `subject` with `scopes` (for custom verifiers and tests).
    pub fn new(subject: impl Into<String>, scopes: Vec<String>) -> Self {
        Self {
            subject: subject.into(),
            issuer: None,
            scopes,
            client_id: None,
            expires_at: None,
            claims: Value::Null,
        }
    }

    /// Whether every scope in `required` was granted.
    pub fn has_scopes(&self, required: &[String]) -> bool {
        required.iter().all(|r| self.scopes.iter().any(|s| s == r))
    }

    /// A stable identity for binding state to this principal (legacy sessions, sealed
    /// `requestState`): a digest of issuer and subject, so a refreshed token of the same user
    /// keeps its bindings and another user's token never matches.
    pub fn binding_key(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.issuer.as_deref().unwrap_or("").as_bytes());
        h.update([0]);
        h.update(self.subject.as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Why a token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// Invalid, expired or not for this server: 401 `error="invalid_token"`. The message goes
    /// to the client as `error_description`; keep it short and free of internal details.
    #[error("{0}")]
    Invalid(String),
    /// The verifier could not decide (its key source is unreachable): 503, nothing disclosed.
    #[error("{0}")]
    Unavailable(String),
}

/// Checks access tokens. Implement it for introspection, opaque tokens or a key store of your
/// own; [`JwtVerifier`] is the built-in one.
///
/// The verifier MUST check that the token was issued for this server (its audience, RFC 8707;
/// AUTH-06: no token passthrough), its expiry and its issuer.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verify `token` (the bearer token, without the `Bearer ` prefix).
    fn verify(&self, token: &str) -> BoxFuture<Result<Principal, VerifyError>>;
}

/// Options of the resource server (AUTH-01, AUTH-02, AUTH-06).
///
/// JSON shape ([`crate::options`]): `resource`, `authorizationServers`, `scopesSupported`,
/// `requiredScopes`, `toolScopes` (`{"tool": ["scope", …]}`), `issuer`, `audience`,
/// `jwksPath`, `jwksUrl`, `jwksAllowHttp`, `algorithms`, `tokenTypes`, `requireTokenType`,
/// `clockSkewMs`, `jwksMinRefreshMs`, `jwksMaxAgeMs`, `jwksTimeoutMs`, `jwksMaxBytes`, `jwksTls`
/// (the client TLS shape of [`crate::client::ClientTls`], with the `http-client` feature),
/// `resourceMetadataUrl`. The custom [`TokenVerifier`] has no JSON form.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct AuthOptions {
    /// This server's canonical resource URL (e.g. `https://mcp.example.com/mcp`): PRM
    /// `resource` and, unless [`Self::audience`] says otherwise, the audience every token must
    /// carry (RFC 8707).
    pub resource: String,
    /// Authorization server issuer URLs for PRM `authorization_servers` (at least one, AUTH-01).
    pub authorization_servers: Vec<String>,
    /// PRM `scopes_supported` (AUTH-02: do not list `offline_access`).
    pub scopes_supported: Vec<String>,
    /// Scopes every request needs; named in the 401 challenge's `scope`.
    pub required_scopes: Vec<String>,
    /// Scopes a `tools/call` of a tool needs, by tool name (403 `insufficient_scope` otherwise).
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// Expected `iss` of JWTs (required by the built-in verifier).
    pub issuer: Option<String>,
    /// Expected `aud` (default: [`Self::resource`]).
    pub audience: Option<String>,
    /// JWKS file for the built-in verifier.
    pub jwks_path: Option<String>,
    /// JWKS URL for the built-in verifier (`https://` or `http://`; only `http://` without the
    /// `http-client` feature; fetched on first use, again when a token names an unknown `kid`
    /// (at most once per [`Self::jwks_min_refresh`]) and when the set is older than its
    /// `Cache-Control: max-age`, capped by [`Self::jwks_max_age`]). `http://` is refused unless
    /// the host is loopback (`localhost`, 127.0.0.0/8, `::1`) or [`Self::jwks_allow_http`].
    pub jwks_url: Option<String>,
    /// Accept an `http://` [`Self::jwks_url`] on a non-loopback host (default false: whoever
    /// can alter a plain-text fetch can substitute keys and mint accepted tokens).
    pub jwks_allow_http: bool,
    /// Whom an `https://` [`Self::jwks_url`] is trusted from: the HTTP client's TLS options
    /// (default: the platform roots). A private authorization server's CA goes here.
    #[cfg(feature = "http-client")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_tls: Option<crate::client::ClientTls>,
    /// Accepted JWS algorithms (default `RS256`, `ES256`). `none` and `HS*` are refused: a
    /// public key must never verify a MAC.
    pub algorithms: Vec<String>,
    /// Accepted JWS `typ` headers (RFC 9068 §4), compared case-insensitively with the
    /// `application/` prefix optional. Default `["at+jwt", "JWT"]`: RFC 9068 access tokens and
    /// the many authorization servers that label theirs `JWT`; any other type (an ID token's
    /// `id_token+jwt`, a logout token's `logout+jwt`, …) is refused. `["at+jwt"]` for a server
    /// that follows RFC 9068; empty accepts every `typ`.
    pub token_types: Vec<String>,
    /// Refuse tokens without a `typ` header (default false: many servers omit it).
    pub require_token_type: bool,
    /// Tolerance for `exp` and `nbf` (default 60 s; whole seconds are used).
    #[serde(rename = "clockSkewMs", with = "crate::options::millis")]
    pub clock_skew: Duration,
    /// Least time between two JWKS fetches (default 30 s).
    #[serde(rename = "jwksMinRefreshMs", with = "crate::options::millis")]
    pub jwks_min_refresh: Duration,
    /// Longest time a loaded key set is trusted (default 1 h), whatever its `Cache-Control`
    /// says; no `Cache-Control` age means this one. Past it the set is reloaded before a token
    /// verifies, and a failed reload answers 503 rather than trusting the old keys. At least
    /// [`Self::jwks_min_refresh`].
    #[serde(rename = "jwksMaxAgeMs", with = "crate::options::millis")]
    pub jwks_max_age: Duration,
    /// Deadline of one JWKS fetch (default 5 s).
    #[serde(rename = "jwksTimeoutMs", with = "crate::options::millis")]
    pub jwks_timeout: Duration,
    /// Largest JWKS document accepted (default 256 KiB).
    pub jwks_max_bytes: usize,
    /// The PRM URL named in challenges (default: `/.well-known/oauth-protected-resource`
    /// inserted before the path of [`Self::resource`], RFC 9728 §3.1).
    pub resource_metadata_url: Option<String>,
    /// A custom verifier; when set, the JWT fields are not used.
    #[serde(skip)]
    pub verifier: Option<Arc<dyn TokenVerifier>>,
}

impl fmt::Debug for AuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthOptions")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("issuer", &self.issuer)
            .field("custom_verifier", &self.verifier.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for AuthOptions {
    fn default() -> Self {
        Self {
            resource: String::new(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: BTreeMap::new(),
            issuer: None,
            audience: None,
            jwks_path: None,
            jwks_url: None,
            jwks_allow_http: false,
            #[cfg(feature = "http-client")]
            jwks_tls: None,
            algorithms: vec!["RS256".into(), "ES256".into()],
            token_types: vec!["at+jwt".into(), "JWT".into()],
            require_token_type: false,
            clock_skew: Duration::from_secs(60),
            jwks_min_refresh: Duration::from_secs(30),
            jwks_max_age: Duration::from_secs(3600),
            jwks_timeout: Duration::from_secs(5),
            jwks_max_bytes: 256 * 1024,
            resource_metadata_url: None,
            verifier: None,
        }
    }
}

impl AuthOptions {
    /// Options for `resource` protected by `authorization_server`.
    pub fn new(resource: impl Into<String>, authorization_server: impl Into<String>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            ..Self::default()
        }
    }

    /// The built-in JWT verifier for `resource`: tokens issued by `issuer` for `audience`,
    /// checked with the keys of `jwks` (an `http(s)://` URL, fetched and refreshed, or a file).
    /// The shape of the example servers' and the `mcpcore serve` command's `--auth-*` flags.
    pub fn jwt(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
        jwks: impl Into<String>,
    ) -> Self {
        let (issuer, jwks) = (issuer.into(), jwks.into());
        let mut a = Self::new(resource, issuer.clone());
        a.issuer = Some(issuer);
        a.audience = Some(audience.into());
        if jwks.starts_with("https://") || jwks.starts_with("http://") {
            a.jwks_url = Some(jwks);
        } else {
            a.jwks_path = Some(jwks);
        }
        a
    }

    /// Use `verifier` instead of the built-in JWT verifier.
    #[must_use]
    pub fn with_verifier(mut self, verifier: Arc<dyn TokenVerifier>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    /// The audience tokens must carry.
    pub fn expected_audience(&self) -> &str {
        self.audience.as_deref().unwrap_or(&self.resource)
    }

    /// Check the options.
    ///
    /// # Errors
    /// A missing `resource` or authorization server, a refused algorithm, no key source for
    /// the built-in verifier, a plain `http://` JWKS URL off loopback (without
    /// `jwksAllowHttp`), a `jwksMaxAgeMs` below `jwksMinRefreshMs`, `requireTokenType` without
    /// `tokenTypes`.
    pub fn validate(&self) -> Result<(), &'static str> {
        let Ok(uri) = self.resource.parse::<http::Uri>() else {
            return Err("auth.resource must be an absolute URL");
        };
        if uri.scheme().is_none() || uri.host().is_none() || self.resource.contains('#') {
            return Err("auth.resource must be an absolute URL without a fragment");
        }
        if self.authorization_servers.is_empty() {
            return Err("auth.authorizationServers needs at least one issuer (AUTH-01)");
        }
        if self.verifier.is_some() {
            return Ok(());
        }
        jwt::parse_algorithms(&self.algorithms)?;
        if self.issuer.is_none() {
            return Err("auth.issuer is required by the JWT verifier");
        }
        if self.jwks_max_age.is_zero() || self.jwks_max_age < self.jwks_min_refresh {
            return Err("auth.jwksMaxAgeMs must be positive and at least jwksMinRefreshMs");
        }
        if self.require_token_type && self.token_types.is_empty() {
            return Err("auth.requireTokenType needs tokenTypes");
        }
        match (&self.jwks_path, &self.jwks_url) {
            (None, None) => Err("auth needs jwksPath, jwksUrl or a custom verifier"),
            (Some(_), Some(_)) => Err("auth: set jwksPath or jwksUrl, not both"),
            _ if self.jwks_max_bytes == 0 || self.jwks_timeout.is_zero() => {
                Err("auth: jwksMaxBytes and jwksTimeoutMs must be positive")
            }
            (None, Some(u)) => match u.parse::<http::Uri>() {
                Ok(uri) => jwks::check_plain_http(&uri, self),
                Err(_) => Err("auth.jwksUrl is not a URL"),
            },
            _ => Ok(()),
        }
    }

    /// The verifier these options describe (the custom one, or a [`JwtVerifier`]).
    ///
    /// # Errors
    /// See [`Self::validate`]; an unreadable or malformed JWKS file.
    pub fn build_verifier(&self) -> Result<Arc<dyn TokenVerifier>, String> {
        self.validate().map_err(str::to_owned)?;
        if let Some(v) = &self.verifier {
            return Ok(v.clone());
        }
        Ok(Arc::new(JwtVerifier::from_options(self)?))
    }
}

impl crate::options::JsonOptions for AuthOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        self.validate()
            .map_err(|e| crate::options::OptionsError::Range(e.to_owned()))
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        self.verifier.clone_from(&from.verifier);
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_key_separates_users_and_issuers() {
        let mut a = Principal::new("alice", vec![]);
        let b = Principal::new("bob", vec![]);
        assert_ne!(a.binding_key(), b.binding_key());
        let k = a.binding_key();
        a.issuer = Some("https://as.example".into());
        assert_ne!(a.binding_key(), k);
        a.scopes = vec!["x".into()];
        assert_eq!(
            a.binding_key(),
            Principal {
                scopes: vec![],
                ..a.clone()
            }
            .binding_key()
        );
    }

    #[test]
    fn options_refuse_hmac_none_and_missing_parts() {
        let mut o = AuthOptions::new("https://mcp.example/mcp", "https://as.example");
        o.issuer = Some("https://as.example".into());
        o.jwks_path = Some("/nonexistent".into());
        assert!(o.validate().is_ok());
        for bad in ["HS256", "none", "XX1"] {
            let mut o = o.clone();
            o.algorithms = vec![bad.into()];
            assert!(o.validate().is_err(), "{bad}");
        }
        let mut no_as = o.clone();
        no_as.authorization_servers.clear();
        assert!(no_as.validate().is_err());
        let mut frag = o.clone();
        frag.resource = "https://mcp.example/mcp#x".into();
        assert!(frag.validate().is_err());
        let v: Result<AuthOptions, _> =
            serde_json::from_value(serde_json::json!({"resourse": "x"}));
        assert!(v.is_err(), "unknown keys are refused");
    }

    #[test]
    fn options_refuse_plain_http_jwks_off_loopback_and_bad_ages() {
        let mut o = AuthOptions::new("https://mcp.example/mcp", "https://as.example");
        o.issuer = Some("https://as.example".into());
        o.jwks_url = Some("http://as.example/jwks.json".into());
        assert!(o.validate().is_err(), "plain http off loopback");
        assert!(o.build_verifier().is_err());
        o.jwks_url = Some("http://127.0.0.1:9/jwks.json".into());
        assert!(o.validate().is_ok());
        let mut json = serde_json::to_value(&o).expect("json");
        json["jwksUrl"] = "http://as.example/jwks.json".into();
        json["jwksAllowHttp"] = true.into();
        let relaxed: AuthOptions = serde_json::from_value(json).expect("options");
        assert!(relaxed.validate().is_ok(), "jwksAllowHttp relaxes it");
        let mut short = o.clone();
        short.jwks_max_age = Duration::from_secs(1);
        assert!(short.validate().is_err(), "below jwksMinRefreshMs");
        short.jwks_min_refresh = Duration::from_millis(500);
        assert!(short.validate().is_ok());
        let mut typ = o.clone();
        typ.require_token_type = true;
        typ.token_types.clear();
        assert!(typ.validate().is_err());
    }
}
