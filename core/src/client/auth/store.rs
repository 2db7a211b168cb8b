//! The pluggable parts: the browser step and token storage.

use std::collections::HashMap;
use std::sync::Mutex;

use super::error::{AuthError, AuthErrorKind};
use super::fetch::{redact_query, Fetcher};
use crate::future::BoxFuture;

/// Client credentials obtained for one authorization server (AUTH-09: never used with
/// another).
#[derive(Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// The `client_id` (registered, pre-configured, or a Client ID Metadata Document URL).
    pub client_id: String,
    /// The `client_secret` of a confidential client; never printed by `Debug`.
    pub client_secret: Option<String>,
    /// `token_endpoint_auth_method` the registration settled on, if it said.
    pub auth_method: Option<String>,
}

impl std::fmt::Debug for ClientInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientInfo")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens for one resource, with the issuer that minted them.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token sent as `Authorization: Bearer` (or `DPoP`); never printed by `Debug`.
    pub access_token: String,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if the authorization server issued one; never printed by `Debug`.
    pub refresh_token: Option<String>,
    /// The granted scope, space-separated, when the token response named it.
    pub scope: Option<String>,
    /// The issuer that minted these tokens; they are sent to no other (AUTH-09).
    pub issuer: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"***")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "***"))
            .field("scope", &self.scope)
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Token and client-credential storage. Implementations must keep refresh tokens and client
/// secrets confidential (AUTH-09).
pub trait TokenStore: Send + Sync {
    /// The tokens kept for `resource` (the canonical resource URI, RFC 8707), if any.
    fn tokens(&self, resource: &str) -> Option<Tokens>;
    /// Keep `tokens` for `resource`, replacing what was there.
    fn save_tokens(&self, resource: &str, tokens: Tokens);
    /// Forget the tokens of `resource` (after a refused refresh, say).
    fn clear_tokens(&self, resource: &str);
    /// The client credentials registered with authorization server `issuer`, if any.
    fn client(&self, issuer: &str) -> Option<ClientInfo>;
    /// Keep `client` as the credentials for `issuer`.
    fn save_client(&self, issuer: &str, client: ClientInfo);
}

/// The default store: process memory.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
    clients: Mutex<HashMap<String, ClientInfo>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl TokenStore for MemoryTokenStore {
    fn tokens(&self, resource: &str) -> Option<Tokens> {
        lock(&self.tokens).get(resource).cloned()
    }
    fn save_tokens(&self, resource: &str, tokens: Tokens) {
        lock(&self.tokens).insert(resource.to_owned(), tokens);
    }
    fn clear_tokens(&self, resource: &str) {
        lock(&self.tokens).remove(resource);
    }
    fn client(&self, issuer: &str) -> Option<ClientInfo> {
        lock(&self.clients).get(issuer).cloned()
    }
    fn save_client(&self, issuer: &str, client: ClientInfo) {
        lock(&self.clients).insert(issuer.to_owned(), client);
    }
}

/// The browser step: show `authorization_url` to the user and return the URL the
/// authorization server redirected to (with `code`, `state`, maybe `iss`).
pub trait AuthorizationBrowser: Send + Sync {
    /// Send the user to `authorization_url`; resolve to the redirect URL the browser reached.
    fn authorize(&self, authorization_url: String) -> BoxFuture<Result<String, AuthError>>;
}

/// A browser step from a closure: `f(authorization_url)` resolves to the redirect URL.
pub fn browser_fn<F, Fut>(f: F) -> std::sync::Arc<dyn AuthorizationBrowser>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<String, AuthError>> + Send + 'static,
{
    struct FnBrowser<F>(F);
    impl<F, Fut> AuthorizationBrowser for FnBrowser<F>
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, AuthError>> + Send + 'static,
    {
        fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
            Box::pin((self.0)(url))
        }
    }
    std::sync::Arc::new(FnBrowser(f))
}

/// A browser that GETs the authorization URL and returns its redirect `Location` without
/// following it: for authorization servers that approve without a user (test servers, the
/// conformance suite's mock).
#[derive(Clone)]
pub struct HeadlessBrowser {
    fetch: Fetcher,
}

impl Default for HeadlessBrowser {
    fn default() -> Self {
        Self {
            // The URL it is given was checked by discovery; plain http only to loopback.
            fetch: Fetcher::new(crate::client::HttpClientOptions::default(), false),
        }
    }
}

impl AuthorizationBrowser for HeadlessBrowser {
    fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
        let fetch = self.fetch.clone();
        Box::pin(async move {
            let r = fetch
                .get(&url)
                .await
                .map_err(|e| AuthError::new(AuthErrorKind::Browser, e.message().to_owned()))?;
            match (r.status, r.header("location")) {
                (300..=399, Some(loc)) => Ok(loc.to_owned()),
                (s, _) => Err(AuthError::new(
                    AuthErrorKind::Browser,
                    format!(
                        "the authorization endpoint {} answered HTTP {s} without a redirect",
                        redact_query(&url)
                    ),
                )),
            }
        })
    }
}
