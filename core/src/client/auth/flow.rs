//! The authorization flow run on a challenge: discovery, registration, grant, storage.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::challenge::Challenge;
use super::discovery::{discover_as, discover_prm, ResourceMetadata, ServerMetadata};
use super::error::{AuthError, AuthErrorKind};
use super::fetch::Fetcher;
use super::grants::oauth_error;
use super::jwt::{dpop_proof, Signer};
use super::options::{AuthHooks, GrantKind, OAuthOptions};
use super::store::{
    AuthorizationBrowser, ClientInfo, HeadlessBrowser, MemoryTokenStore, TokenStore, Tokens,
};
use super::util::{form, is_loopback, pkce_pair, query_pairs, random_b64, Url};
use crate::client::HttpClientOptions;

/// The OAuth client of one HTTP transport (one MCP server URL).
pub(crate) struct Authorizer {
    server: String,
    pub(super) opts: OAuthOptions,
    browser: Arc<dyn AuthorizationBrowser>,
    store: Arc<dyn TokenStore>,
    pub(super) fetch: Fetcher,
    /// One flow at a time; the scopes requested so far (AUTH-02 union on step-up).
    flow: tokio::sync::Mutex<Vec<String>>,
    /// The current `Authorization` value, read by every request.
    current: Mutex<Option<String>>,
    /// The `private_key_jwt` key, read at construction so a bad key fails at connect.
    pub(super) assertion_key: Option<Signer>,
    /// The DPoP key of this connection (RFC 9449), when DPoP is on.
    dpop: Option<Signer>,
    /// The last `DPoP-Nonce` of each server (token endpoint URL or the MCP server URL).
    nonces: Mutex<HashMap<String, String>>,
}

/// What a challenge asks of the flow.
pub(crate) struct Trigger<'a> {
    pub status: u16,
    pub challenge: Option<&'a Challenge>,
    pub modern: bool,
    /// The `Authorization` value the refused request carried.
    pub sent: Option<&'a str>,
}

impl Authorizer {
    pub(crate) fn new(
        server: &str,
        opts: OAuthOptions,
        hooks: &AuthHooks,
        http: &HttpClientOptions,
    ) -> Result<Arc<Self>, AuthError> {
        opts.check()
            .map_err(|m| AuthError::new(AuthErrorKind::Config, m))?;
        let store = hooks
            .store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryTokenStore::default()));
        let current = store.tokens(server).map(|t| header_value(&t));
        let assertion_key = match &opts.private_key_pem {
            Some(pem) => Some(Signer::from_pem(pem, opts.signing_algorithm.as_deref())?),
            None => None,
        };
        let dpop = if opts.dpop {
            Some(Signer::generate_es256()?)
        } else {
            None
        };
        let fetch = Fetcher::new(http.clone(), opts.allow_insecure_http);
        Ok(Arc::new(Self {
            server: server.to_owned(),
            opts,
            browser: hooks
                .browser
                .clone()
                .unwrap_or_else(|| Arc::new(HeadlessBrowser::default())),
            store,
            fetch,
            flow: tokio::sync::Mutex::new(Vec::new()),
            current: Mutex::new(current),
            assertion_key,
            dpop,
            nonces: Mutex::new(HashMap::new()),
        }))
    }

    /// The DPoP key, when DPoP is on and `meta` advertises ES256 (RFC 9449 §5.1).
    pub(super) fn dpop_key(&self, meta: &ServerMetadata) -> Option<&Signer> {
        let es256 = meta
            .dpop_algs
            .as_ref()
            .is_some_and(|a| a.iter().any(|x| x == "ES256"));
        self.dpop.as_ref().filter(|_| es256)
    }

    pub(super) fn nonce(&self, server: &str) -> Option<String> {
        lock(&self.nonces).get(server).cloned()
    }

    pub(crate) fn set_nonce(&self, server: &str, nonce: &str) {
        if nonce.len() <= 512 {
            lock(&self.nonces).insert(server.to_owned(), nonce.to_owned());
        }
    }

    /// The DPoP proof for a request to the MCP server carrying `authorization` (a `DPoP`
    /// token), with the server's latest nonce (RFC 9449 §7, §9).
    pub(crate) fn resource_proof(
        &self,
        method: &str,
        authorization: &str,
    ) -> Result<Option<String>, AuthError> {
        let (Some(k), Some(token)) = (&self.dpop, authorization.strip_prefix("DPoP ")) else {
            return Ok(None);
        };
        let nonce = self.nonce(&self.server);
        dpop_proof(k, method, &self.server, Some(token), nonce.as_deref()).map(Some)
    }

    pub(crate) fn server_url(&self) -> &str {
        &self.server
    }

    pub(crate) fn max_rounds(&self) -> u32 {
        self.opts.max_auth_rounds
    }

    /// The `Authorization` header value to send, if a token is held (AUTH-06).
    pub(crate) fn authorization(&self) -> Option<String> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_tokens(&self, t: Option<Tokens>) {
        match &t {
            Some(t) => self.store.save_tokens(&self.server, t.clone()),
            None => self.store.clear_tokens(&self.server),
        }
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = t.as_ref().map(header_value);
    }

    /// Obtain a token that answers the refusal described by `t`.
    pub(crate) async fn handle(&self, t: Trigger<'_>) -> Result<(), AuthError> {
        let mut requested = self.flow.lock().await;
        let step_up = t.status == 403;
        if step_up && t.challenge.and_then(|c| c.param("error")) != Some("insufficient_scope") {
            return Err(AuthError::new(
                AuthErrorKind::Forbidden,
                "HTTP 403 without an insufficient_scope challenge",
            ));
        }
        if !step_up && self.authorization().as_deref() != t.sent && self.authorization().is_some() {
            // Another request renewed the token meanwhile.
            return Ok(());
        }
        let hinted = t.challenge.and_then(|c| c.param("resource_metadata"));
        let prm = discover_prm(&self.fetch, &self.server, hinted, &self.opts).await?;
        let issuer = self.choose_issuer(&prm)?;
        let meta = discover_as(&self.fetch, issuer, self.opts.allow_insecure_http).await?;
        let held = self.store.tokens(&self.server);
        let held = match held {
            // AUTH-09: tokens of another authorization server are never presented to this one.
            Some(h) if h.issuer == meta.issuer => Some(h),
            _ => {
                self.set_tokens(None);
                None
            }
        };
        let scope = choose_scope(
            &t,
            &prm,
            &meta,
            &requested,
            self.opts.request_offline_access,
        );
        let client = self.client_for(&meta, t.modern).await?;
        if !step_up {
            if let Some(rt) = held.as_ref().and_then(|h| h.refresh_token.clone()) {
                match self.refresh(&meta, &client, &prm, &rt).await {
                    Ok(tok) => {
                        self.set_tokens(Some(tok));
                        return Ok(());
                    }
                    Err(e) => tracing::debug!(error = %e, "refresh failed; authorizing again"),
                }
            }
        }
        let scope_ref = scope.as_deref();
        let tokens = match self.opts.grant {
            GrantKind::AuthorizationCode => {
                self.authorization_code(&meta, &client, &prm, scope_ref)
                    .await?
            }
            GrantKind::ClientCredentials => {
                self.machine_grant(&meta, &client, &prm, scope_ref, None)
                    .await?
            }
            GrantKind::JwtBearer => {
                let a = self.opts.assertion.as_deref().ok_or_else(|| {
                    AuthError::new(
                        AuthErrorKind::Config,
                        "auth.grant jwtBearer needs auth.assertion",
                    )
                })?;
                self.machine_grant(&meta, &client, &prm, scope_ref, Some(a))
                    .await?
            }
            GrantKind::IdentityAssertion => {
                self.identity_assertion(&meta, &client, &prm, scope_ref)
                    .await?
            }
        };
        *requested = scope
            .map(|s| s.split(' ').map(str::to_owned).collect())
            .unwrap_or_default();
        self.set_tokens(Some(tokens));
        Ok(())
    }

    /// The authorization server to use among those the PRM lists: the first one the options
    /// trust (`auth.issuer`, `auth.allowedIssuers`). Static credentials go to no other one
    /// (AUTH-09: the resource, not the user, would otherwise pick where the secret is sent),
    /// so then nothing is contacted; a client without them follows the PRM's first entry
    /// (the MCP discovery, AUTH-01).
    fn choose_issuer<'p>(&self, prm: &'p ResourceMetadata) -> Result<&'p str, AuthError> {
        let servers = &prm.authorization_servers;
        if let Some(i) = servers.iter().find(|s| self.opts.trusts_issuer(s)) {
            return Ok(i);
        }
        if self.opts.has_static_credentials() && !self.opts.allow_any_issuer {
            let named = servers
                .iter()
                .take(4)
                .map(|s| format!("{:?}", s.chars().take(200).collect::<String>()))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(AuthError::new(
                AuthErrorKind::UntrustedIssuer,
                format!(
                    "the resource names the authorization server(s) {named}, not the issuer the \
                     configured credentials belong to (auth.issuer / auth.allowedIssuers); \
                     nothing was sent to them"
                ),
            ));
        }
        // `parse_prm` refuses an empty list.
        servers.first().map(String::as_str).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::ResourceMetadata,
                "protected resource metadata: `authorization_servers` is empty",
            )
        })
    }

    /// Client credentials for `meta.issuer` (AUTH-08 order, AUTH-09 keyed by issuer).
    async fn client_for(
        &self,
        meta: &ServerMetadata,
        modern: bool,
    ) -> Result<ClientInfo, AuthError> {
        if let Some(c) = self.store.client(&meta.issuer) {
            return Ok(c);
        }
        let pre = self
            .opts
            .client_id
            .as_ref()
            .filter(|_| self.opts.names_no_issuer() || self.opts.trusts_issuer(&meta.issuer));
        let c = if let Some(id) = pre {
            ClientInfo {
                client_id: id.clone(),
                client_secret: self.opts.client_secret.clone(),
                auth_method: None,
            }
        } else if let (Some(url), true) = (&self.opts.client_metadata_url, meta.cimd_supported) {
            ClientInfo {
                client_id: url.clone(),
                client_secret: None,
                auth_method: Some("none".into()),
            }
        } else if let Some(reg) = &meta.registration_endpoint {
            self.register(reg, meta, modern).await?
        } else {
            return Err(AuthError::new(
                AuthErrorKind::Registration,
                format!(
                    "no client credentials for {}: no pre-registered client, no usable client metadata document, no registration endpoint",
                    meta.issuer
                ),
            ));
        };
        self.store.save_client(&meta.issuer, c.clone());
        Ok(c)
    }

    /// Dynamic Client Registration (RFC 7591); modern clients send `application_type` (AUTH-08).
    async fn register(
        &self,
        endpoint: &str,
        meta: &ServerMetadata,
        modern: bool,
    ) -> Result<ClientInfo, AuthError> {
        let supported = meta.token_auth_methods.clone().unwrap_or_default();
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| supported.iter().any(|s| s == m))
            .unwrap_or("client_secret_basic");
        let mut body = json!({
            "client_name": self.opts.client_name,
            "redirect_uris": [self.opts.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        });
        if modern {
            body["application_type"] = json!(application_type(&self.opts.redirect_uri));
        }
        let r = self
            .fetch
            .post(endpoint, "application/json", &[], body.to_string())
            .await
            .map_err(|e| AuthError::new(AuthErrorKind::Registration, e.message().to_owned()))?;
        if !(200..300).contains(&r.status) {
            return Err(AuthError::new(
                AuthErrorKind::Registration,
                format!(
                    "client registration at {endpoint}: HTTP {}{}",
                    r.status,
                    oauth_error(&r, &[])
                ),
            ));
        }
        let m = r.json_object(AuthErrorKind::Registration, "client registration response")?;
        let id = m
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let Some(id) = id else {
            return Err(AuthError::new(
                AuthErrorKind::Registration,
                "client registration response: `client_id` is missing",
            ));
        };
        Ok(ClientInfo {
            client_id: id.to_owned(),
            client_secret: m
                .get("client_secret")
                .and_then(Value::as_str)
                .map(str::to_owned),
            auth_method: m
                .get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// Authorization code + PKCE S256 (AUTH-04), `resource` (AUTH-05), `iss` (AUTH-07).
    async fn authorization_code(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        prm: &ResourceMetadata,
        scope: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        let endpoint = meta.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::ServerMetadata,
                "authorization server metadata: `authorization_endpoint` is missing",
            )
        })?;
        let s256 = meta
            .code_challenge_methods
            .as_ref()
            .is_some_and(|m| m.iter().any(|x| x == "S256"));
        if !s256 {
            return Err(AuthError::new(
                AuthErrorKind::PkceUnsupported,
                format!(
                    "{} does not advertise PKCE S256 (code_challenge_methods_supported)",
                    meta.issuer
                ),
            ));
        }
        let (verifier, challenge) = pkce_pair()?;
        let state = random_b64(16)?;
        let mut q = vec![
            ("response_type", "code"),
            ("client_id", client.client_id.as_str()),
            ("redirect_uri", self.opts.redirect_uri.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
            ("resource", prm.resource.as_str()),
        ];
        if let Some(s) = scope {
            q.push(("scope", s));
        }
        let sep = if endpoint.contains('?') { '&' } else { '?' };
        let redirect = self
            .browser
            .authorize(format!("{endpoint}{sep}{}", form(&q)))
            .await?;
        let code = check_redirect(&redirect, &state, meta)?;
        let params = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", self.opts.redirect_uri.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", prm.resource.as_str()),
        ];
        self.token_request(meta, client, &params, &[Some(&code), Some(&verifier)])
            .await
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn header_value(t: &Tokens) -> String {
    let scheme = if t.token_type.eq_ignore_ascii_case("dpop") {
        "DPoP"
    } else {
        "Bearer"
    };
    format!("{scheme} {}", t.access_token)
}

fn application_type(redirect: &str) -> &'static str {
    let loopback = Url::parse(redirect).is_ok_and(|u| is_loopback(&u.authority));
    if loopback {
        "native"
    } else {
        "web"
    }
}

/// The token endpoint client authentication: what registration settled on, else the first the
/// server supports that the credentials allow (RFC 8414 default `client_secret_basic`).
/// `private_key_jwt` only with a key (`has_key`; AUTH-08: pre-registered credentials are used
/// as they are): a client without one that the server would also take with `none` must not
/// fail for want of a key; a client with only a key uses it when the server lists nothing.
pub(crate) fn auth_method<'a>(
    client: &'a ClientInfo,
    meta: &ServerMetadata,
    has_key: bool,
) -> &'a str {
    let supported = meta.token_auth_methods.as_deref();
    let ok = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
    if let Some(m) = client.auth_method.as_deref() {
        if ok(m) {
            return m;
        }
    }
    let has_secret = client.client_secret.is_some();
    let mut candidates: Vec<&'static str> = Vec::new();
    if has_secret {
        candidates.extend(["client_secret_basic", "client_secret_post"]);
    }
    if has_key {
        candidates.push("private_key_jwt");
    }
    candidates.push("none");
    for m in candidates {
        if supported.is_some_and(|s| s.iter().any(|x| x == m)) {
            return m;
        }
    }
    if has_secret {
        "client_secret_basic"
    } else if has_key {
        "private_key_jwt"
    } else {
        "none"
    }
}

/// AUTH-02 scope choice: the challenge's scope (unioned with earlier ones on a 403 step-up),
/// else the PRM `scopes_supported`, else none; `offline_access` only when the authorization
/// server lists it (AUTH-09).
fn choose_scope(
    t: &Trigger<'_>,
    prm: &ResourceMetadata,
    meta: &ServerMetadata,
    before: &[String],
    offline: bool,
) -> Option<String> {
    let mut scopes: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        if !s.is_empty() && !scopes.iter().any(|x| x == s) {
            scopes.push(s.to_owned());
        }
    };
    match t.challenge.and_then(|c| c.param("scope")) {
        Some(s) => {
            if t.status == 403 {
                before.iter().for_each(|b| add(b));
            }
            s.split(' ').for_each(&mut add);
        }
        None => prm.scopes_supported.iter().flatten().for_each(|s| add(s)),
    }
    if offline
        && meta
            .scopes_supported
            .iter()
            .flatten()
            .any(|s| s == "offline_access")
    {
        add("offline_access");
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// Check the authorization response (`state`, RFC 9207 `iss` by exact string, AUTH-07) and
/// return its code.
fn check_redirect(redirect: &str, state: &str, meta: &ServerMetadata) -> Result<String, AuthError> {
    let err = |m: String| AuthError::new(AuthErrorKind::AuthorizationResponse, m);
    let q = query_pairs(redirect);
    let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    match get("iss") {
        Some(iss) if iss != meta.issuer => {
            return Err(err(format!(
                "the authorization response iss {iss:?} is not the issuer {:?}",
                meta.issuer
            )))
        }
        None if meta.iss_supported => {
            return Err(err(
                "the authorization response lacks iss although the server advertises it".into(),
            ))
        }
        _ => {}
    }
    if get("state") != Some(state) {
        return Err(err("the authorization response state does not match".into()));
    }
    if let Some(e) = get("error") {
        return Err(err(format!(
            "the authorization server refused: {}",
            e.chars().take(100).collect::<String>()
        )));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| err("the authorization response has no code".into()))
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
