//! The built-in JWT access-token verifier (AUTH-06): signature by a JWKS key (file or URL),
//! algorithm allow-list (never `none`, never a MAC), issuer, audience = this resource
//! (RFC 8707; a token minted for another resource is refused, no passthrough), `exp`/`nbf`
//! with a clock-skew leeway, and a JWS `typ` that is not another kind of token (RFC 9068 §4:
//! `at+jwt`; an ID token or logout token of the same issuer is no access token).
//!
//! The key set is trusted for its `Cache-Control: max-age`, at most `jwksMaxAgeMs` (1 h) and at
//! least `jwksMinRefreshMs`; past that it is reloaded before a token verifies, so a key the
//! authorization server withdrew (after a compromise) stops verifying within that time. A
//! reload that fails past expiry does not fall back on the old keys: verification answers
//! "unavailable" (503) until a reload succeeds, tried at most once per `jwksMinRefreshMs`.

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::jwks::{self, Loaded};
use super::{AuthOptions, Principal, TokenVerifier, VerifyError};
use crate::future::BoxFuture;

/// The allowed algorithms, refusing `none` and every `HS*`.
pub(super) fn parse_algorithms(names: &[String]) -> Result<Vec<Algorithm>, &'static str> {
    if names.is_empty() {
        return Err("auth.algorithms must name at least one algorithm");
    }
    names
        .iter()
        .map(|n| match n.parse::<Algorithm>() {
            Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => Err(
                "auth.algorithms: only RS*, PS*, ES256, ES384 and EdDSA are accepted (never none or HS*)",
            ),
            Ok(a) => Ok(a),
        })
        .collect()
}

enum Source {
    File(std::path::PathBuf),
    Url(http::Uri),
}

struct Inner {
    source: Source,
    /// Whom an `https://` JWKS URL may be served by (`jwksTls`).
    #[cfg(feature = "http-client")]
    tls: crate::client::ClientTls,
    algorithms: Vec<Algorithm>,
    issuer: String,
    audience: String,
    leeway: u64,
    /// Accepted `typ` values, normalised ([`normal_typ`]); empty: any.
    token_types: Vec<String>,
    require_token_type: bool,
    min_refresh: Duration,
    max_age: Duration,
    timeout: Duration,
    max_bytes: usize,
    keys: RwLock<Arc<KeySet>>,
    /// When the key set was last (re)loaded; the lock also makes refreshes single-flight.
    refreshed: tokio::sync::Mutex<Option<Instant>>,
}

/// The loaded keys and until when they may be trusted (`None`: forever, for a configured age
/// too large to add to an `Instant`).
struct KeySet {
    keys: Vec<Jwk>,
    until: Option<Instant>,
}

impl KeySet {
    fn fresh(&self) -> bool {
        self.until.is_none_or(|u| Instant::now() < u)
    }
}

/// A JWS `typ` for comparison: case-insensitive, `application/` optional (RFC 7515 §4.1.9).
fn normal_typ(t: &str) -> String {
    let t = t.trim().to_ascii_lowercase();
    t.strip_prefix("application/")
        .map(str::to_owned)
        .unwrap_or(t)
}

/// Verifies JWT access tokens against a JWKS (see the module docs).
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

impl JwtVerifier {
    /// A verifier for the JWT fields of `o` (`issuer`, `audience`/`resource`, `jwksPath` or
    /// `jwksUrl`, `algorithms`, `clockSkewMs`, …). A JWKS file is read now.
    ///
    /// # Errors
    /// Invalid options, an unreadable JWKS file, a JWKS URL that is not `http://` or
    /// `https://` (only `http://` without the `http-client` feature), an `http://` one off
    /// loopback without `jwksAllowHttp`, unusable `jwksTls`.
    pub fn from_options(o: &AuthOptions) -> Result<Self, String> {
        let algorithms = parse_algorithms(&o.algorithms)?;
        let issuer = o.issuer.clone().ok_or("auth.issuer is required")?;
        let (source, loaded, refreshed) = match (&o.jwks_path, &o.jwks_url) {
            (Some(p), None) => {
                let path = std::path::PathBuf::from(p);
                let loaded = jwks::read_file(&path, o.jwks_max_bytes)?;
                (Source::File(path), Some(loaded), Some(Instant::now()))
            }
            (None, Some(u)) => {
                let uri: http::Uri = u.parse().map_err(|_| "auth.jwksUrl is not a URL")?;
                jwks::check_url(&uri, o)?;
                (Source::Url(uri), None, None)
            }
            _ => return Err("auth: set exactly one of jwksPath and jwksUrl".into()),
        };
        let inner = Inner {
            source,
            #[cfg(feature = "http-client")]
            tls: o.jwks_tls.clone().unwrap_or_default(),
            algorithms,
            issuer,
            audience: o.expected_audience().to_owned(),
            leeway: o.clock_skew.as_secs(),
            token_types: o.token_types.iter().map(|t| normal_typ(t)).collect(),
            require_token_type: o.require_token_type,
            min_refresh: o.jwks_min_refresh,
            max_age: o.jwks_max_age,
            timeout: o.jwks_timeout,
            max_bytes: o.jwks_max_bytes,
            // Not loaded yet: stale from the start.
            keys: RwLock::new(Arc::new(KeySet {
                keys: Vec::new(),
                until: Some(Instant::now()),
            })),
            refreshed: tokio::sync::Mutex::new(refreshed),
        };
        if let Some(l) = loaded {
            inner.store(l);
        }
        Ok(Self {
            inner: Arc::new(inner),
        })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str) -> BoxFuture<Result<Principal, VerifyError>> {
        let inner = self.inner.clone();
        let token = token.to_owned();
        Box::pin(async move { inner.verify(&token).await })
    }
}

fn invalid(msg: &str) -> VerifyError {
    VerifyError::Invalid(msg.to_owned())
}

impl Inner {
    async fn verify(&self, token: &str) -> Result<Principal, VerifyError> {
        // `alg: none` and unknown names fail here: they are not `Algorithm`s at all.
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed token"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid("algorithm not allowed"));
        }
        if !self.typ_ok(header.typ.as_deref()) {
            return Err(invalid("token type is not an access token"));
        }
        let jwk = match self.find(&header) {
            Some(k) => k,
            None => self.refresh_and_find(&header).await?,
        };
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| invalid("unusable signing key"))?;
        let mut v = Validation::new(header.alg);
        v.algorithms = vec![header.alg];
        v.leeway = self.leeway;
        v.validate_nbf = true;
        v.set_audience(&[&self.audience]);
        v.set_issuer(&[&self.issuer]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &v)
            .map_err(|e| invalid(describe(e.kind())))?;
        principal(data.claims)
    }

    /// RFC 9068 §4: `typ` names what the JWT is; one outside `tokenTypes` (an ID token's or a
    /// logout token's, say) is refused even if its audience and signature fit.
    fn typ_ok(&self, typ: Option<&str>) -> bool {
        match typ {
            None => !self.require_token_type,
            Some(_) if self.token_types.is_empty() => true,
            Some(t) => {
                let t = normal_typ(t);
                self.token_types.contains(&t)
            }
        }
    }

    fn loaded(&self) -> Arc<KeySet> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Keep `l` for its announced age, within `[min_refresh, max_age]`.
    fn store(&self, l: Loaded) {
        let ttl = l
            .max_age
            .unwrap_or(self.max_age)
            .min(self.max_age)
            .max(self.min_refresh);
        let set = KeySet {
            keys: l.keys,
            until: Instant::now().checked_add(ttl),
        };
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(set);
    }

    /// The key for `header` in the current set, if that set is still fresh.
    fn find(&self, header: &jsonwebtoken::Header) -> Option<Jwk> {
        let set = self.loaded();
        if !set.fresh() {
            return None;
        }
        let mut usable = set.keys.iter().filter(|k| fits(k, header.alg));
        match &header.kid {
            Some(kid) => usable
                .find(|k| k.common.key_id.as_deref() == Some(kid))
                .cloned(),
            // Without `kid` only an unambiguous key set can name the key.
            None => {
                let first = usable.next()?;
                usable.next().is_none().then(|| first.clone())
            }
        }
    }

    /// An unknown key or a stale set: reload the set (single flight, at most once per
    /// `min_refresh`) and look again. A peer sending random `kid`s cannot make this server
    /// hammer the JWKS endpoint.
    async fn refresh_and_find(&self, header: &jsonwebtoken::Header) -> Result<Jwk, VerifyError> {
        let mut last = self.refreshed.lock().await;
        if let Some(k) = self.find(header) {
            return Ok(k);
        }
        if last.is_some_and(|t| t.elapsed() < self.min_refresh) {
            // No fresh set (never loaded, or past its age and the reload failed): that is no
            // verdict on the token.
            if !self.loaded().fresh() {
                return Err(VerifyError::Unavailable("key set unavailable".into()));
            }
            return Err(invalid("unknown signing key"));
        }
        *last = Some(Instant::now());
        let loaded = match &self.source {
            Source::File(p) => jwks::read_file(p, self.max_bytes),
            #[cfg(feature = "http-client")]
            Source::Url(u) => jwks::fetch(u, &self.tls, self.timeout, self.max_bytes).await,
            #[cfg(not(feature = "http-client"))]
            Source::Url(u) => jwks::fetch(u, self.timeout, self.max_bytes).await,
        };
        match loaded {
            Ok(l) => self.store(l),
            Err(e) => {
                tracing::warn!(error = %e, "could not load the JWKS");
                return Err(VerifyError::Unavailable("key set unavailable".into()));
            }
        }
        self.find(header)
            .ok_or_else(|| invalid("unknown signing key"))
    }
}

/// Whether `k` can verify `alg`: never a symmetric (`oct`) key, the key type of the algorithm's
/// family, and the key's own `alg` when it names one.
fn fits(k: &Jwk, alg: Algorithm) -> bool {
    let family_ok = match &k.algorithm {
        AlgorithmParameters::RSA(_) => matches!(
            alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
        ),
        AlgorithmParameters::EllipticCurve(_) => {
            matches!(alg, Algorithm::ES256 | Algorithm::ES384)
        }
        AlgorithmParameters::OctetKeyPair(_) => alg == Algorithm::EdDSA,
        AlgorithmParameters::OctetKey(_) => false,
    };
    let declared = k
        .common
        .key_algorithm
        .and_then(|a| serde_json::to_value(a).ok());
    let wanted = serde_json::to_value(alg).ok();
    // A key published for another use (`"use": "enc"`) never verifies a signature.
    let use_ok = matches!(
        k.common.public_key_use,
        None | Some(jsonwebtoken::jwk::PublicKeyUse::Signature)
    );
    family_ok && use_ok && (declared.is_none() || declared == wanted)
}

fn describe(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => "token expired",
        K::ImmatureSignature => "token not yet valid",
        K::InvalidAudience => "token audience is not this resource",
        K::InvalidIssuer => "token issuer not accepted",
        K::InvalidSignature => "signature invalid",
        K::MissingRequiredClaim(_) => "token lacks a required claim",
        K::InvalidAlgorithm | K::InvalidAlgorithmName => "algorithm not allowed",
        _ => "malformed token",
    }
}

fn principal(claims: Map<String, Value>) -> Result<Principal, VerifyError> {
    let s = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    let subject = s("sub").ok_or_else(|| invalid("token lacks a required claim"))?;
    let scopes = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => {
            s.split_whitespace().map(str::to_owned).collect()
        }
        (None, Some(Value::Array(a))) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Ok(Principal {
        subject,
        issuer: s("iss"),
        scopes,
        client_id: s("client_id").or_else(|| s("azp")),
        expires_at: claims.get("exp").and_then(Value::as_u64),
        claims: Value::Object(claims),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn principal_reads_scope_scp_and_client() {
        let p = principal(claims(
            json!({"sub": "a", "iss": "i", "scope": "x  y", "client_id": "c",
                                        "exp": 5}),
        ))
        .expect("principal");
        assert_eq!(p.scopes, vec!["x".to_owned(), "y".to_owned()]);
        assert_eq!((p.client_id.as_deref(), p.expires_at), (Some("c"), Some(5)));
        let p = principal(claims(
            json!({"sub": "a", "scp": ["x", 1, "z"], "azp": "d"}),
        ))
        .expect("principal");
        assert_eq!(p.scopes, vec!["x".to_owned(), "z".to_owned()]);
        assert_eq!(p.client_id.as_deref(), Some("d"));
        assert!(
            principal(claims(json!({"scope": "x"}))).is_err(),
            "no subject"
        );
    }

    #[test]
    fn oct_keys_and_unknown_entries_are_skipped() {
        // Parsing only: the EC coordinates are checked when a key verifies, not here.
        let doc = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "h"},
            {"kty": "nope"},
            {"kty": "EC", "crv": "P-256", "kid": "e",
             "x": "WKn-ZIGevcwGIyyrzFoZNBdaq9_TsqzGl96oc0CWuis",
             "y": "y77t-RvAHRKTsSGdIYUfweuOvwrvDD-Q3Hv5J0fSKbE"}
        ]});
        let keys = jwks::parse_set(doc.to_string().as_bytes()).expect("set");
        assert_eq!(keys.len(), 1);
        assert!(fits(&keys[0], Algorithm::ES256));
        assert!(!fits(&keys[0], Algorithm::RS256));
        assert!(jwks::parse_set(b"{\"no\": []}").is_err());
    }
}
