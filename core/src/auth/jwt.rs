//! The built-in JWT access-token verifier (AUTH-06): signature by a JWKS key (file or URL),
//! algorithm allow-list (never `none`, never a MAC), issuer, audience = this resource
//! (RFC 8707; a token minted for another resource is refused, no passthrough), `exp`/`nbf`
//! with a clock-skew leeway.

use bytes::Bytes;
use http_body_util::BodyExt;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

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
    min_refresh: Duration,
    timeout: Duration,
    max_bytes: usize,
    keys: RwLock<Arc<Vec<Jwk>>>,
    /// When the key set was last (re)loaded; the lock also makes refreshes single-flight.
    refreshed: tokio::sync::Mutex<Option<Instant>>,
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
    /// `https://` (only `http://` without the `http-client` feature), unusable `jwksTls`.
    pub fn from_options(o: &AuthOptions) -> Result<Self, String> {
        let algorithms = parse_algorithms(&o.algorithms)?;
        let issuer = o.issuer.clone().ok_or("auth.issuer is required")?;
        let (source, keys, refreshed) = match (&o.jwks_path, &o.jwks_url) {
            (Some(p), None) => {
                let path = std::path::PathBuf::from(p);
                let keys = read_file(&path, o.jwks_max_bytes)?;
                (Source::File(path), keys, Some(Instant::now()))
            }
            (None, Some(u)) => {
                let uri: http::Uri = u.parse().map_err(|_| "auth.jwksUrl is not a URL")?;
                check_url(&uri, o)?;
                (Source::Url(uri), Vec::new(), None)
            }
            _ => return Err("auth: set exactly one of jwksPath and jwksUrl".into()),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                source,
                #[cfg(feature = "http-client")]
                tls: o.jwks_tls.clone().unwrap_or_default(),
                algorithms,
                issuer,
                audience: o.expected_audience().to_owned(),
                leeway: o.clock_skew.as_secs(),
                min_refresh: o.jwks_min_refresh,
                timeout: o.jwks_timeout,
                max_bytes: o.jwks_max_bytes,
                keys: RwLock::new(Arc::new(keys)),
                refreshed: tokio::sync::Mutex::new(refreshed),
            }),
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

    fn loaded(&self) -> Arc<Vec<Jwk>> {
        self.keys
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn find(&self, header: &jsonwebtoken::Header) -> Option<Jwk> {
        let keys = self.loaded();
        let mut usable = keys.iter().filter(|k| fits(k, header.alg));
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

    /// An unknown key: reload the set (single flight, at most once per `min_refresh`) and look
    /// again. A peer sending random `kid`s cannot make this server hammer the JWKS endpoint.
    async fn refresh_and_find(&self, header: &jsonwebtoken::Header) -> Result<Jwk, VerifyError> {
        let mut last = self.refreshed.lock().await;
        if let Some(k) = self.find(header) {
            return Ok(k);
        }
        if last.is_some_and(|t| t.elapsed() < self.min_refresh) {
            // Never loaded (the source failed): that is no verdict on the token.
            if self.loaded().is_empty() {
                return Err(VerifyError::Unavailable("key set unavailable".into()));
            }
            return Err(invalid("unknown signing key"));
        }
        *last = Some(Instant::now());
        let loaded = match &self.source {
            Source::File(p) => read_file(p, self.max_bytes),
            #[cfg(feature = "http-client")]
            Source::Url(u) => fetch(u, &self.tls, self.timeout, self.max_bytes).await,
            #[cfg(not(feature = "http-client"))]
            Source::Url(u) => fetch(u, self.timeout, self.max_bytes).await,
        };
        match loaded {
            Ok(keys) => {
                *self
                    .keys
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
            }
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

/// The usable keys of a JWKS document; keys of unknown types are skipped, not fatal.
fn parse_set(bytes: &[u8]) -> Result<Vec<Jwk>, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|_| "JWKS is not JSON")?;
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("JWKS has no keys array")?;
    Ok(keys
        .iter()
        .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
        .filter(|k| !matches!(k.algorithm, AlgorithmParameters::OctetKey(_)))
        .collect())
}

fn read_file(p: &std::path::Path, max: usize) -> Result<Vec<Jwk>, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("auth.jwksPath {}: {e}", p.display()))?;
    if bytes.len() > max {
        return Err("auth.jwksPath: the JWKS exceeds jwksMaxBytes".into());
    }
    parse_set(&bytes)
}

/// The JWKS URL is fetched over plain HTTP or, through core's HTTP client, HTTPS; the TLS
/// settings are checked now so a bad CA file fails at startup, not at the first token.
#[cfg(feature = "http-client")]
fn check_url(uri: &http::Uri, o: &AuthOptions) -> Result<(), String> {
    match uri.scheme_str() {
        Some("http") => Ok(()),
        Some("https") => o
            .jwks_tls
            .clone()
            .unwrap_or_default()
            .client_config(false)
            .map(|_| ())
            .map_err(|e| format!("auth.jwksTls: {e}")),
        _ => Err("auth.jwksUrl must be an http:// or https:// URL".into()),
    }
}

/// Without the HTTP client (and its TLS) only plain HTTP is fetched.
#[cfg(not(feature = "http-client"))]
fn check_url(uri: &http::Uri, _o: &AuthOptions) -> Result<(), String> {
    if uri.scheme_str() != Some("http") {
        return Err("auth.jwksUrl must be http:// in this build (no TLS client)".into());
    }
    Ok(())
}

/// The body of a successful JWKS answer, at most `max` bytes, else a reason.
async fn read_jwks<B>(resp: http::Response<B>, max: usize) -> Result<Vec<Jwk>, String>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if !resp.status().is_success() {
        return Err(format!("JWKS answered HTTP {}", resp.status()));
    }
    let body = http_body_util::Limited::new(resp.into_body(), max)
        .collect()
        .await
        .map_err(|_| "JWKS body too large or cut short".to_owned())?
        .to_bytes();
    parse_set(&body)
}

/// GET the JWKS with a deadline and a size cap through core's HTTP client (`http://` or
/// `https://` with the `jwksTls` trust settings; a connection pool per fetch, as fetches are
/// rare: at most one per `jwksMinRefreshMs`).
#[cfg(feature = "http-client")]
async fn fetch(
    uri: &http::Uri,
    tls: &crate::client::ClientTls,
    timeout: Duration,
    max: usize,
) -> Result<Vec<Jwk>, String> {
    use crate::client::transport::pool::{Hold, Pool};
    let opts = crate::client::HttpClientOptions {
        tls: tls.clone(),
        listen_stream: false,
        max_connections: 2,
        ..Default::default()
    };
    let pool = Pool::new(uri, &opts).map_err(|e| format!("JWKS client: {e}"))?;
    let req = http::Request::get(uri.clone())
        .header(http::header::ACCEPT, "application/json")
        .body(http_body_util::Full::new(Bytes::new()))
        .map_err(|e| format!("JWKS request: {e}"))?;
    let get = async {
        let resp = pool
            .send(req, Hold::Short)
            .await
            .map_err(|e| format!("JWKS request failed: {e}"))?;
        read_jwks(resp, max).await
    };
    let r = tokio::time::timeout(timeout, get)
        .await
        .map_err(|_| "JWKS request timed out".to_owned());
    pool.close();
    r?
}

/// GET the JWKS with a deadline and a size cap, through hyper's plain client.
#[cfg(not(feature = "http-client"))]
async fn fetch(uri: &http::Uri, timeout: Duration, max: usize) -> Result<Vec<Jwk>, String> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<Bytes>>();
    let get = async {
        let resp = client
            .get(uri.clone())
            .await
            .map_err(|e| format!("JWKS request failed: {e}"))?;
        read_jwks(resp, max).await
    };
    tokio::time::timeout(timeout, get)
        .await
        .map_err(|_| "JWKS request timed out".to_owned())?
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
        let keys = parse_set(doc.to_string().as_bytes()).expect("set");
        assert_eq!(keys.len(), 1);
        assert!(fits(&keys[0], Algorithm::ES256));
        assert!(!fits(&keys[0], Algorithm::RS256));
        assert!(parse_set(b"{\"no\": []}").is_err());
    }
}
