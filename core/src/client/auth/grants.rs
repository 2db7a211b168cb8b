//! Token endpoint requests: refresh, `client_credentials`, the JWT-bearer grant (RFC 7523,
//! workload identity), the enterprise identity-assertion grant (RFC 8693 token exchange at the
//! IdP for an ID-JAG, then JWT-bearer), client authentication (`client_secret_basic`,
//! `client_secret_post`, `private_key_jwt`, `none`) and DPoP proofs with nonce retry
//! (RFC 9449 §5, §8).

use hyper::header::{HeaderName, AUTHORIZATION};
use serde_json::Value;

use super::discovery::{ResourceMetadata, ServerMetadata};
use super::error::{AuthError, AuthErrorKind};
use super::fetch::Fetched;
use super::flow::{auth_method, Authorizer};
use super::jwt::{client_assertion, dpop_proof};
use super::store::{ClientInfo, Tokens};
use super::util::{basic_auth, form};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const DPOP: HeaderName = HeaderName::from_static("dpop");

/// A token request's form fields and extra headers.
type Prepared = (Vec<(String, String)>, Vec<(HeaderName, String)>);

fn tok_err(m: impl Into<String>) -> AuthError {
    AuthError::new(AuthErrorKind::TokenEndpoint, m)
}

impl Authorizer {
    pub(super) async fn refresh(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        prm: &ResourceMetadata,
        rt: &str,
    ) -> Result<Tokens, AuthError> {
        let params = [
            ("grant_type", "refresh_token"),
            ("refresh_token", rt),
            ("resource", prm.resource.as_str()),
        ];
        let mut t = self
            .token_request(meta, client, &params, &[Some(rt)])
            .await?;
        // A refresh answer without a new refresh token keeps the old one (RFC 6749 §6).
        if t.refresh_token.is_none() {
            t.refresh_token = Some(rt.to_owned());
        }
        Ok(t)
    }

    /// `client_credentials`, or the JWT-bearer grant with `assertion` (RFC 7523 §2.1).
    pub(super) async fn machine_grant(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        prm: &ResourceMetadata,
        scope: Option<&str>,
        assertion: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        let mut params = vec![("resource", prm.resource.as_str())];
        match assertion {
            Some(a) => {
                params.push(("grant_type", JWT_BEARER));
                params.push(("assertion", a));
            }
            None => params.push(("grant_type", "client_credentials")),
        }
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        self.token_request(meta, client, &params, &[assertion])
            .await
    }

    /// Enterprise-managed authorization: exchange the IdP ID token for an ID-JAG at the IdP
    /// (audience = the authorization server, resource = the MCP server), then present it with
    /// the JWT-bearer grant.
    pub(super) async fn identity_assertion(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        prm: &ResourceMetadata,
        scope: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        let cfg = |m: &str| AuthError::new(AuthErrorKind::Config, m);
        let endpoint = self
            .opts
            .idp_token_endpoint
            .as_deref()
            .ok_or_else(|| cfg("auth.grant identityAssertion needs auth.idpTokenEndpoint"))?;
        let id_token = self
            .opts
            .idp_id_token
            .as_deref()
            .ok_or_else(|| cfg("auth.grant identityAssertion needs auth.idpIdToken"))?;
        let mut p = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", meta.issuer.as_str()),
            ("resource", prm.resource.as_str()),
            ("subject_token", id_token),
            ("subject_token_type", ID_TOKEN),
        ];
        if let Some(id) = self.opts.idp_client_id.as_deref() {
            p.push(("client_id", id));
        }
        if let Some(s) = scope {
            p.push(("scope", s));
        }
        let r = self
            .fetch
            .post(endpoint, "application/x-www-form-urlencoded", &[], form(&p))
            .await
            .map_err(|e| tok_err(format!("token exchange: {}", e.message())))?;
        if r.status != 200 {
            return Err(tok_err(format!(
                "token exchange at the IdP answered HTTP {}{}",
                r.status,
                oauth_error(&r, &[Some(id_token)])
            )));
        }
        let m = r.json_object(AuthErrorKind::TokenEndpoint, "token exchange response")?;
        let jag = m
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| tok_err("token exchange response: `access_token` is missing"))?
            .to_owned();
        self.machine_grant(meta, client, prm, scope, Some(&jag))
            .await
    }

    /// The form body with the client authentication the server supports, plus the headers.
    fn client_auth(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        params: &[(&str, &str)],
    ) -> Result<Prepared, AuthError> {
        let mut body: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut headers = Vec::new();
        let secret = client.client_secret.as_deref().unwrap_or_default();
        let id = client.client_id.clone();
        match auth_method(client, meta, self.assertion_key.is_some()) {
            "client_secret_basic" => headers.push((AUTHORIZATION, basic_auth(&id, secret))),
            "client_secret_post" => {
                body.push(("client_id".into(), id));
                body.push(("client_secret".into(), secret.to_owned()));
            }
            "private_key_jwt" => {
                let signer = self.assertion_key.as_ref().ok_or_else(|| {
                    AuthError::new(
                        AuthErrorKind::Config,
                        "the server wants private_key_jwt: set auth.privateKeyPem",
                    )
                })?;
                let jwt = client_assertion(signer, &id, &meta.issuer)?;
                body.push(("client_id".into(), id));
                body.push(("client_assertion_type".into(), ASSERTION_TYPE.into()));
                body.push(("client_assertion".into(), jwt));
            }
            _ => body.push(("client_id".into(), id)),
        }
        Ok((body, headers))
    }

    /// POST to the token endpoint; with DPoP, a proof on each attempt and one retry with the
    /// server's nonce on `use_dpop_nonce` (RFC 9449 §8).
    pub(super) async fn token_request(
        &self,
        meta: &ServerMetadata,
        client: &ClientInfo,
        params: &[(&str, &str)],
        secrets: &[Option<&str>],
    ) -> Result<Tokens, AuthError> {
        let dpop = self.dpop_key(meta);
        let mut all = secrets.to_vec();
        all.push(client.client_secret.as_deref());
        for attempt in 0..2 {
            let (body, mut headers) = self.client_auth(meta, client, params)?;
            if let Some(k) = dpop {
                let nonce = self.nonce(&meta.token_endpoint);
                let proof = dpop_proof(k, "POST", &meta.token_endpoint, None, nonce.as_deref())?;
                headers.push((DPOP, proof));
            }
            let pairs: Vec<(&str, &str)> =
                body.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let r = self
                .fetch
                .post(
                    &meta.token_endpoint,
                    "application/x-www-form-urlencoded",
                    &headers,
                    form(&pairs),
                )
                .await
                .map_err(|e| tok_err(e.message().to_owned()))?;
            if let (Some(_), Some(n)) = (dpop, r.header("dpop-nonce")) {
                self.set_nonce(&meta.token_endpoint, n);
                if attempt == 0 && r.status == 400 && error_code(&r) == Some("use_dpop_nonce") {
                    continue;
                }
            }
            return parse_token_response(&r, &meta.issuer, &all);
        }
        Err(tok_err(
            "the token endpoint kept asking for a new DPoP nonce",
        ))
    }
}

fn error_code(r: &Fetched) -> Option<&str> {
    let v: Value = serde_json::from_slice(&r.body).ok()?;
    // Borrow from the body again: the value is short-lived.
    let code = v.get("error")?.as_str()?;
    ["use_dpop_nonce", "invalid_dpop_proof"]
        .into_iter()
        .find(|c| *c == code)
}

fn scrub(mut msg: String, secrets: &[Option<&str>]) -> String {
    for s in secrets.iter().flatten() {
        if s.len() >= 4 {
            msg = msg.replace(s, "***");
        }
    }
    msg
}

/// ` (error: description)` of an OAuth error body, secrets scrubbed.
pub(super) fn oauth_error(r: &Fetched, secrets: &[Option<&str>]) -> String {
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&r.body) else {
        return String::new();
    };
    let e = m.get("error").and_then(Value::as_str).unwrap_or("");
    let d = m
        .get("error_description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let s: String = format!(" ({e}: {d})").chars().take(300).collect();
    scrub(s, secrets)
}

pub(super) fn parse_token_response(
    r: &Fetched,
    issuer: &str,
    secrets: &[Option<&str>],
) -> Result<Tokens, AuthError> {
    if r.status != 200 {
        return Err(tok_err(format!(
            "the token endpoint answered HTTP {}{}",
            r.status,
            oauth_error(r, secrets)
        )));
    }
    let m = r.json_object(AuthErrorKind::TokenEndpoint, "token response")?;
    let token = m
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty() && t.bytes().all(|b| (0x21..0x7f).contains(&b)))
        .ok_or_else(|| {
            tok_err("token response: `access_token` is missing or not a visible-ASCII string")
        })?;
    let token_type = m
        .get("token_type")
        .and_then(Value::as_str)
        .unwrap_or("Bearer");
    if !token_type.eq_ignore_ascii_case("bearer") && !token_type.eq_ignore_ascii_case("dpop") {
        return Err(tok_err(format!(
            "token response: unsupported token_type {:?}",
            token_type.chars().take(40).collect::<String>()
        )));
    }
    Ok(Tokens {
        access_token: token.to_owned(),
        token_type: token_type.to_owned(),
        refresh_token: m
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_owned),
        scope: m.get("scope").and_then(Value::as_str).map(str::to_owned),
        issuer: issuer.to_owned(),
    })
}
