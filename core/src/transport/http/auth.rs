//! The resource-server gate of the HTTP endpoint (AUTH-01, AUTH-02, AUTH-06): Protected
//! Resource Metadata (RFC 9728) at the well-known paths, bearer-token verification before
//! anything else touches a request, RFC 6750 challenges, per-tool scopes, and the binding of
//! legacy sessions to the principal that created them.
//!
//! On the wire, in both eras (the status is per POST, so a batch with one refused call is
//! refused whole):
//! * no token, or not a `Bearer` one → 401, `WWW-Authenticate: Bearer resource_metadata="…",
//!   scope="…"`;
//! * a token that does not verify (signature, audience, issuer, expiry, algorithm) → 401 with
//!   `error="invalid_token"` and a short `error_description`;
//! * a malformed `Authorization` (several, an empty or non-token68 credential) or a token in the
//!   query string → 400 `error="invalid_request"`;
//! * missing `requiredScopes`, or a `tools/call` of a tool whose `toolScopes` the principal
//!   lacks → 403 `error="insufficient_scope", scope="<the scopes the operation needs>"`;
//! * the verifier's key source unreachable → 503.
//!
//! Bodies are the OAuth error object `{"error", "error_description"}`. A legacy session id
//! presented by another principal is answered like an unknown one (404): sessions are keyed by
//! principal and id together, so it does not exist for that caller.

use bytes::Bytes;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::body::{self, Resp};
use super::headers::{get_str, SESSION_ID};
use super::server::Shared;
use crate::auth::{AuthOptions, Principal, TokenVerifier, VerifyError};

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

pub(crate) struct Gate {
    opts: AuthOptions,
    verifier: Arc<dyn TokenVerifier>,
    metadata: Bytes,
    metadata_url: String,
    paths: Vec<String>,
}

/// A token found in the request, or why there is none.
enum Credential<'a> {
    Missing,
    Bearer(&'a str),
    Malformed(&'static str),
}

impl Gate {
    /// The gate for `o` on an endpoint at `mcp_path`.
    pub(crate) fn new(o: &AuthOptions, mcp_path: Option<&str>) -> Result<Self, String> {
        let verifier = o.build_verifier()?;
        if o.scopes_supported.iter().any(|s| s == "offline_access") {
            // AUTH-02: a resource server SHOULD NOT list it (refresh is the AS's business).
            tracing::warn!(
                "auth.scopesSupported lists offline_access; resource servers should not"
            );
        }
        let resource_path = o
            .resource
            .parse::<Uri>()
            .map(|u| u.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        let mut paths = vec![WELL_KNOWN.to_owned()];
        for p in [Some(resource_path.as_str()), mcp_path]
            .into_iter()
            .flatten()
        {
            let p = p.trim_end_matches('/');
            if !p.is_empty() && !paths.iter().any(|x| *x == format!("{WELL_KNOWN}{p}")) {
                paths.push(format!("{WELL_KNOWN}{p}"));
            }
        }
        let metadata_url = match &o.resource_metadata_url {
            Some(u) => u.clone(),
            None => {
                let u: Uri = o.resource.parse().map_err(|_| "auth.resource")?;
                let scheme = u.scheme_str().unwrap_or("https");
                let authority = u.authority().map(|a| a.as_str()).unwrap_or("");
                format!("{scheme}://{authority}{WELL_KNOWN}{resource_path}")
            }
        };
        let mut doc = json!({
            "resource": o.resource,
            "authorization_servers": o.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !o.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(o.scopes_supported);
        }
        Ok(Self {
            opts: o.clone(),
            verifier,
            metadata: Bytes::from(doc.to_string()),
            metadata_url,
            paths,
        })
    }

    /// The PRM document when `path` is one of its well-known paths (AUTH-01); unauthenticated.
    pub(crate) fn metadata(&self, method: &Method, path: &str) -> Option<Resp> {
        if !self.paths.iter().any(|p| p == path) {
            return None;
        }
        if method != Method::GET && method != Method::HEAD {
            let mut r = body::text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            r.headers_mut()
                .insert(http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(r);
        }
        Some(body::json(StatusCode::OK, self.metadata.to_vec()))
    }

    /// Verify the request's bearer token (AUTH-06).
    pub(crate) async fn authenticate(
        &self,
        uri: &Uri,
        h: &HeaderMap,
    ) -> Result<Arc<Principal>, Resp> {
        if token_in_query(uri) {
            return Err(self.refuse(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "access tokens are not accepted in the query string",
                &[],
            ));
        }
        let token = match credential(h) {
            Credential::Bearer(t) => t,
            Credential::Missing => return Err(self.challenge()),
            Credential::Malformed(why) => {
                return Err(self.refuse(StatusCode::BAD_REQUEST, "invalid_request", why, &[]))
            }
        };
        let p = match self.verifier.verify(token).await {
            Ok(p) => p,
            Err(VerifyError::Invalid(why)) => {
                return Err(self.refuse(StatusCode::UNAUTHORIZED, "invalid_token", &why, &[]))
            }
            Err(VerifyError::Unavailable(why)) => {
                tracing::warn!(%why, "token verification unavailable");
                return Err(body::text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "authorization temporarily unavailable",
                ));
            }
        };
        // A custom verifier may not check expiry; the engine does (with the configured skew).
        let skew = self.opts.clock_skew.as_secs();
        if p.expires_at
            .is_some_and(|e| e.saturating_add(skew) < crate::auth::unix_now())
        {
            return Err(self.refuse(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                "token expired",
                &[],
            ));
        }
        if !p.has_scopes(&self.opts.required_scopes) {
            return Err(self.insufficient(&[]));
        }
        Ok(Arc::new(p))
    }

    /// Per-tool scopes of one request (`tools/call` of a tool listed in `toolScopes`).
    pub(crate) fn check_call(
        &self,
        p: &Principal,
        method: &str,
        params: Option<&Map<String, Value>>,
    ) -> Result<(), Box<Resp>> {
        if method != "tools/call" {
            return Ok(());
        }
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        match name.and_then(|n| self.opts.tool_scopes.get(n)) {
            Some(needed) if !p.has_scopes(needed) => Err(Box::new(self.insufficient(needed))),
            _ => Ok(()),
        }
    }

    /// [`Self::check_call`] for every request of a batch.
    pub(crate) fn check_batch(&self, p: &Principal, items: &[Value]) -> Result<(), Box<Resp>> {
        for item in items {
            if let Some(m) = item.get("method").and_then(Value::as_str) {
                self.check_call(p, m, item.get("params").and_then(Value::as_object))?;
            }
        }
        Ok(())
    }

    /// 401 without an error code: the request carried no (bearer) credentials (RFC 6750 §3.1).
    fn challenge(&self) -> Resp {
        let mut r = body::json(
            StatusCode::UNAUTHORIZED,
            json!({"error": "unauthorized", "error_description": "authorization required"})
                .to_string()
                .into_bytes(),
        );
        let scope = self.challenge_scope(&[]);
        let v = format!(
            "Bearer resource_metadata=\"{}\"{}",
            quoted(&self.metadata_url),
            scope_param(&scope)
        );
        set_challenge(&mut r, &v);
        r
    }

    fn insufficient(&self, extra: &[String]) -> Resp {
        self.refuse(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            "the token lacks a scope this operation needs",
            extra,
        )
    }

    /// The scopes a challenge names (AUTH-02): what the operation needs, else what the server
    /// supports.
    fn challenge_scope(&self, extra: &[String]) -> Vec<String> {
        let mut s = self.opts.required_scopes.clone();
        for e in extra {
            if !s.contains(e) {
                s.push(e.clone());
            }
        }
        if s.is_empty() {
            s.clone_from(&self.opts.scopes_supported);
        }
        s
    }

    fn refuse(&self, status: StatusCode, error: &str, why: &str, extra: &[String]) -> Resp {
        let mut r = body::json(
            status,
            json!({"error": error, "error_description": why})
                .to_string()
                .into_bytes(),
        );
        let scope = self.challenge_scope(extra);
        let v = format!(
            "Bearer error=\"{error}\", error_description=\"{}\", resource_metadata=\"{}\"{}",
            quoted(why),
            quoted(&self.metadata_url),
            scope_param(&scope)
        );
        set_challenge(&mut r, &v);
        r
    }
}

/// The principal of a request on an endpoint protected by `gate` (`None` when it is open), or
/// the refusal: the token's (see [`Gate::authenticate`]) or the session's ([`check_session`]).
pub(crate) async fn authorize(
    s: &Shared,
    gate: Option<&Gate>,
    uri: &Uri,
    h: &HeaderMap,
) -> Result<Option<Arc<Principal>>, Box<Resp>> {
    let Some(g) = gate else {
        return Ok(None);
    };
    let p = g.authenticate(uri, h).await.map_err(Box::new)?;
    check_session(s, h, Some(&p))?;
    Ok(Some(p))
}

/// A legacy session id presented by a principal other than its creator is unknown to that
/// principal (404, LHTTP-02's answer for an unknown session).
fn check_session(s: &Shared, h: &HeaderMap, p: Option<&Principal>) -> Result<(), Box<Resp>> {
    let Some(entry) = get_str(h, SESSION_ID).and_then(|sid| s.sessions.get(sid)) else {
        return Ok(());
    };
    let owner = entry.session.principal().map(|o| o.binding_key());
    if owner == p.map(Principal::binding_key) {
        return Ok(());
    }
    tracing::warn!("a legacy session id was presented by another principal");
    Err(Box::new(body::rpc_error(
        StatusCode::NOT_FOUND,
        None,
        &crate::error::ErrorObject::invalid_request("Session not found"),
    )))
}

fn set_challenge(r: &mut Resp, v: &str) {
    if let Ok(v) = HeaderValue::from_str(v) {
        r.headers_mut().insert(WWW_AUTHENTICATE, v);
    }
}

fn scope_param(scope: &[String]) -> String {
    if scope.is_empty() {
        String::new()
    } else {
        format!(", scope=\"{}\"", quoted(&scope.join(" ")))
    }
}

/// A quoted-string's content: printable ASCII without `"` and `\` (a verifier's message or a
/// configured URL must not break the header).
fn quoted(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .filter(|c| *c != '"' && *c != '\\')
        .collect()
}

/// Whether the query carries an `access_token` parameter (RFC 6750 §2.3, which OAuth 2.1
/// forbids). Names are form-decoded first (`+` is a space, then percent-decoding), as the
/// application behind a proxy or framework would read them: `access%5Ftoken` and
/// `%61ccess_token` are the same parameter.
fn token_in_query(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split(['&', ';']).any(|kv| {
            let name = kv.split('=').next().unwrap_or_default().replace('+', " ");
            let decoded = percent_encoding::percent_decode_str(&name).collect::<Vec<u8>>();
            decoded.eq_ignore_ascii_case(b"access_token")
        })
    })
}

/// The `Authorization` header as RFC 6750 §2.1 reads it: `Bearer` SP token68.
fn credential(h: &HeaderMap) -> Credential<'_> {
    let mut all = h.get_all(AUTHORIZATION).iter();
    let Some(v) = all.next() else {
        return Credential::Missing;
    };
    if all.next().is_some() {
        return Credential::Malformed("several Authorization headers");
    }
    let Ok(v) = v.to_str() else {
        return Credential::Malformed("Authorization is not ASCII");
    };
    let (scheme, rest) = v.split_once(' ').unwrap_or((v, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme is no bearer credential at all: challenge, as for a missing one.
        return Credential::Missing;
    }
    let token = rest.trim_start_matches(' ');
    if is_token68(token) {
        Credential::Bearer(token)
    } else {
        Credential::Malformed("Authorization must be Bearer followed by one token")
    }
}

fn is_token68(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(vals: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in vals {
            h.append(AUTHORIZATION, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn authorization_parsing() {
        assert!(matches!(credential(&headers(&[])), Credential::Missing));
        assert!(matches!(
            credential(&headers(&["Basic abc"])),
            Credential::Missing
        ));
        assert!(matches!(
            credential(&headers(&["Bearer a.b-c_d~e+f/g=="])),
            Credential::Bearer("a.b-c_d~e+f/g==")
        ));
        assert!(matches!(
            credential(&headers(&["bearer abc"])),
            Credential::Bearer("abc")
        ));
        for bad in ["Bearer", "Bearer ", "Bearer a b", "Bearer a,b", "Bearer =="] {
            assert!(
                matches!(credential(&headers(&[bad])), Credential::Malformed(_)),
                "{bad}"
            );
        }
        assert!(matches!(
            credential(&headers(&["Bearer a", "Bearer b"])),
            Credential::Malformed(_)
        ));
    }

    #[test]
    fn query_tokens_are_spotted() {
        let u: Uri = "/mcp?x=1&access_token=abc".parse().expect("uri");
        assert!(token_in_query(&u));
        let u: Uri = "/mcp?not_access_token=abc".parse().expect("uri");
        assert!(!token_in_query(&u));
        for q in [
            "access%5Ftoken=abc",
            "%61ccess_token=abc",
            "x=1&%61%63%63%65%73%73%5f%74%6f%6b%65%6e=abc",
            "Access_Token=abc",
            "x=1;access_token=abc",
            "access_token",
        ] {
            let u: Uri = format!("/mcp?{q}").parse().expect("uri");
            assert!(token_in_query(&u), "{q}");
        }
        for q in [
            "access+token=abc",
            "access_token_hint=x",
            "a=access_token",
            "%ZZ=1",
        ] {
            let u: Uri = format!("/mcp?{q}").parse().expect("uri");
            assert!(!token_in_query(&u), "{q}");
        }
    }
}
