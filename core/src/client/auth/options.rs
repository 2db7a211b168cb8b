//! The JSON options of the OAuth client ([`OAuthOptions`]) and its Rust-only hooks.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

use super::store::{AuthorizationBrowser, TokenStore};

/// Which grant obtains tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum GrantKind {
    /// Authorization code + PKCE through the browser callback (the default).
    #[default]
    AuthorizationCode,
    /// `client_credentials` with the client secret or `private_key_jwt` (no user).
    ClientCredentials,
    /// The JWT-bearer grant (RFC 7523 §2.1) with [`OAuthOptions::assertion`], e.g. a workload
    /// identity token.
    JwtBearer,
    /// Enterprise-managed authorization: the IdP's ID token is exchanged at the IdP for an
    /// identity assertion grant (ID-JAG, RFC 8693), presented with the JWT-bearer grant.
    IdentityAssertion,
}

/// OAuth options (JSON shape: camelCase, unknown keys refused). Secrets are never printed by
/// `Debug`.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct OAuthOptions {
    /// Pre-registered client id (AUTH-08, first choice).
    pub client_id: Option<String>,
    /// Pre-registered client secret.
    pub client_secret: Option<String>,
    /// The issuer the pre-registered credentials belong to; they are used with no other
    /// authorization server (AUTH-09). Required (or [`Self::allowed_issuers`]) when a secret,
    /// a `private_key_jwt` key or an assertion is configured: the resource then may only name
    /// this authorization server. Unset without such credentials: a pre-registered public
    /// `client_id` is used with whichever server the resource names.
    pub issuer: Option<String>,
    /// Further issuers the pre-registered credentials may be used with (exact strings,
    /// AUTH-03); the first one the resource's metadata lists is taken.
    pub allowed_issuers: Vec<String>,
    /// Send the static credentials to whichever authorization server the resource names,
    /// without [`Self::issuer`] (default false). Unsafe: the MCP server then decides where the
    /// secret goes; only for test harnesses whose servers are all trusted.
    pub allow_any_issuer: bool,
    /// Origins (`scheme://host[:port]`) besides the MCP server's own from which a
    /// `resource_metadata` URL of a challenge is fetched (RFC 9728 §5.1). Default none: a
    /// challenge naming another origin is refused.
    pub allowed_metadata_origins: Vec<String>,
    /// Allow plain `http://` authorization-server, metadata and IdP URLs off loopback
    /// (default false: OAuth 2.1 §1.5 requires TLS; loopback hosts are always allowed).
    pub allow_insecure_http: bool,
    /// A Client ID Metadata Document URL used as `client_id` when the server advertises
    /// `client_id_metadata_document_supported` (AUTH-08, second choice).
    pub client_metadata_url: Option<String>,
    /// The redirect URI (localhost or https, AUTH-04).
    pub redirect_uri: String,
    /// `client_name` for Dynamic Client Registration.
    pub client_name: String,
    /// The grant used.
    pub grant: GrantKind,
    /// Ask for `offline_access` when the authorization server lists it (AUTH-09).
    pub request_offline_access: bool,
    /// Authorization rounds one request may trigger (401 and 403 step-ups together) before it
    /// fails (AUTH-02: no endless step-up loop). 1..=10.
    pub max_auth_rounds: u32,
    /// PEM (PKCS#8) private key for `private_key_jwt` client authentication.
    pub private_key_pem: Option<String>,
    /// JWS algorithm of `private_key_jwt` (`ES256`, `RS256`); default `ES256`.
    pub signing_algorithm: Option<String>,
    /// The assertion of the `jwtBearer` grant.
    pub assertion: Option<String>,
    /// `identityAssertion`: the IdP token endpoint.
    pub idp_token_endpoint: Option<String>,
    /// `identityAssertion`: the IdP ID token exchanged for the grant.
    pub idp_id_token: Option<String>,
    /// `identityAssertion`: the client id at the IdP.
    pub idp_client_id: Option<String>,
    /// Request DPoP-bound tokens (RFC 9449) when the authorization server supports ES256
    /// proofs; every request then carries a fresh proof.
    pub dpop: bool,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            issuer: None,
            allowed_issuers: Vec::new(),
            allow_any_issuer: false,
            allowed_metadata_origins: Vec::new(),
            allow_insecure_http: false,
            client_metadata_url: None,
            redirect_uri: "http://127.0.0.1:33418/callback".into(),
            client_name: "mcpcore".into(),
            grant: GrantKind::AuthorizationCode,
            request_offline_access: true,
            max_auth_rounds: 3,
            private_key_pem: None,
            signing_algorithm: None,
            assertion: None,
            idp_token_endpoint: None,
            idp_id_token: None,
            idp_client_id: None,
            dpop: false,
        }
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(&self.client_secret))
            .field("issuer", &self.issuer)
            .field("allowed_issuers", &self.allowed_issuers)
            .field("allow_any_issuer", &self.allow_any_issuer)
            .field("allowed_metadata_origins", &self.allowed_metadata_origins)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("grant", &self.grant)
            .field("request_offline_access", &self.request_offline_access)
            .field("max_auth_rounds", &self.max_auth_rounds)
            .field("private_key_pem", &redacted(&self.private_key_pem))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("assertion", &redacted(&self.assertion))
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_id_token", &redacted(&self.idp_id_token))
            .field("idp_client_id", &self.idp_client_id)
            .field("dpop", &self.dpop)
            .finish()
    }
}

/// A secret shown by `Debug`: whether it is set, never its value.
fn redacted(v: &Option<String>) -> Option<&'static str> {
    v.as_ref().map(|_| "<redacted>")
}

impl OAuthOptions {
    /// True when a credential that belongs to one authorization server is configured: a
    /// client secret, a `private_key_jwt` key, a JWT-bearer assertion or an IdP ID token
    /// (whose ID-JAG is minted for the issuer it is presented to).
    pub(crate) fn has_static_credentials(&self) -> bool {
        self.client_secret.is_some()
            || self.private_key_pem.is_some()
            || self.assertion.is_some()
            || self.idp_id_token.is_some()
    }

    /// True when `issuer` is [`Self::issuer`] or one of [`Self::allowed_issuers`] (exact
    /// strings, as AUTH-03 compares issuers).
    pub(crate) fn trusts_issuer(&self, issuer: &str) -> bool {
        self.issuer.as_deref() == Some(issuer) || self.allowed_issuers.iter().any(|i| i == issuer)
    }

    /// True when no issuer is named: a pre-registered public client goes with any server.
    pub(crate) fn names_no_issuer(&self) -> bool {
        self.issuer.is_none() && self.allowed_issuers.is_empty()
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        use super::util::Url;
        if !(1..=10).contains(&self.max_auth_rounds) {
            return Err("auth.maxAuthRounds must be within 1..=10".into());
        }
        // AUTH-04: the redirect URI is HTTPS or a loopback http URL.
        let r = Url::parse(&self.redirect_uri)
            .map_err(|_| "auth.redirectUri must be an http(s) URL".to_owned())?;
        if !r.secure_or_loopback() {
            return Err("auth.redirectUri must be https or a localhost http URL".into());
        }
        self.check_trust()?;
        // AUTH-08: a Client ID Metadata Document URL is HTTPS with a path.
        if let Some(u) = &self.client_metadata_url {
            let ok =
                Url::parse(u).is_ok_and(|c| c.scheme == "https" && !c.trimmed_path().is_empty());
            if !ok {
                return Err("auth.clientMetadataUrl must be an https URL with a path".into());
            }
        }
        let needs_id = matches!(
            self.grant,
            GrantKind::ClientCredentials | GrantKind::IdentityAssertion
        );
        if needs_id && self.client_id.is_none() {
            return Err(
                "auth.grant clientCredentials / identityAssertion needs auth.clientId".into(),
            );
        }
        if self.grant == GrantKind::JwtBearer && self.assertion.is_none() {
            return Err("auth.grant jwtBearer needs auth.assertion".into());
        }
        Ok(())
    }

    /// Where credentials and metadata may go (AUTH-09, OAuth 2.1 §1.5, RFC 9728 §5.1).
    fn check_trust(&self) -> Result<(), String> {
        use super::util::{require_secure, Url};
        // Credentials registered with one authorization server are only ever sent to it
        // (AUTH-09): a resource must not be able to name another one and receive them.
        if self.has_static_credentials() && self.names_no_issuer() && !self.allow_any_issuer {
            return Err("auth.clientSecret, auth.privateKeyPem, auth.assertion and \
                 auth.idpIdToken are sent only to the authorization server they belong to: \
                 set auth.issuer (or auth.allowedIssuers)"
                .into());
        }
        let insecure = self.allow_insecure_http;
        let cfg = super::error::AuthErrorKind::Config;
        for i in self.issuer.iter().chain(&self.allowed_issuers) {
            require_secure(i, insecure, cfg, "auth.issuer / auth.allowedIssuers entry")
                .map_err(|e| e.message().to_owned())?;
        }
        if let Some(e) = &self.idp_token_endpoint {
            require_secure(e, insecure, cfg, "auth.idpTokenEndpoint")
                .map_err(|e| e.message().to_owned())?;
        }
        for o in &self.allowed_metadata_origins {
            if !Url::parse(o).is_ok_and(|u| u.path.is_empty() && !o.contains('?')) {
                return Err(format!(
                    "auth.allowedMetadataOrigins entries are origins (scheme://host[:port]), not {o:?}"
                ));
            }
        }
        Ok(())
    }
}

/// The Rust-only parts of the OAuth client: the browser step and the token store. Unset
/// parts take the defaults ([`super::HeadlessBrowser`], [`super::MemoryTokenStore`]).
#[derive(Clone, Default)]
pub struct AuthHooks {
    /// Receives the authorization URL, returns the redirect URL.
    pub browser: Option<Arc<dyn AuthorizationBrowser>>,
    /// Where client credentials (by issuer) and tokens (by resource) are kept.
    pub store: Option<Arc<dyn TokenStore>>,
}

impl std::fmt::Debug for AuthHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthHooks")
            .field("browser", &self.browser.is_some())
            .field("store", &self.store.is_some())
            .finish()
    }
}
