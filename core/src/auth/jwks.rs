//! Loading the JWT verifier's key set (AUTH-06): from a file or an `http(s)://` URL, size-capped
//! and with a deadline, plus how long the source says the set may be kept (RFC 9111
//! `Cache-Control`; the verifier caps it with `jwksMaxAgeMs`). Plain `http://` is for loopback
//! hosts only unless `jwksAllowHttp` says otherwise: anyone on the path of a plain-text fetch
//! could hand the server keys of their own and so mint tokens it accepts.

use bytes::Bytes;
use http_body_util::BodyExt;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use serde_json::Value;
use std::time::Duration;

use super::AuthOptions;

/// A key set as loaded, with the freshness lifetime its source announced (`None`: no
/// `Cache-Control` age; a file has none).
pub(super) struct Loaded {
    pub keys: Vec<Jwk>,
    pub max_age: Option<Duration>,
}

/// The usable keys of a JWKS document; keys of unknown types are skipped, not fatal.
pub(super) fn parse_set(bytes: &[u8]) -> Result<Vec<Jwk>, String> {
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

pub(super) fn read_file(p: &std::path::Path, max: usize) -> Result<Loaded, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("auth.jwksPath {}: {e}", p.display()))?;
    if bytes.len() > max {
        return Err("auth.jwksPath: the JWKS exceeds jwksMaxBytes".into());
    }
    Ok(Loaded {
        keys: parse_set(&bytes)?,
        max_age: None,
    })
}

/// The freshness lifetime `Cache-Control` gives (RFC 9111 §5.2.2): the smallest `max-age`;
/// `no-store`, `no-cache` and an invalid `max-age` (stale, §1.2.2) count as zero, which the
/// verifier raises to `jwksMinRefreshMs` so a server saying "never cache" is not hammered.
pub(super) fn cache_max_age(h: &http::HeaderMap) -> Option<Duration> {
    let mut age: Option<u64> = None;
    let mut take = |n: u64| age = Some(age.map_or(n, |a| a.min(n)));
    for v in h.get_all(http::header::CACHE_CONTROL) {
        let Ok(v) = v.to_str() else {
            take(0);
            continue;
        };
        for d in v.split(',') {
            let (name, val) = match d.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
                None => (d.trim(), None),
            };
            if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
                take(0);
            } else if name.eq_ignore_ascii_case("max-age") {
                take(val.map_or(0, delta_seconds));
            }
        }
    }
    age.map(Duration::from_secs)
}

/// RFC 9111 §1.2.2 delta-seconds: digits only (a value too large saturates); anything else 0.
fn delta_seconds(v: &str) -> u64 {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    v.parse().unwrap_or(u64::MAX)
}

/// Whether `host` (as `http::Uri::host` gives it, IPv6 in brackets) is this machine:
/// `localhost`, 127.0.0.0/8 or `::1`.
fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// `http://` only for a loopback host, or with `jwksAllowHttp` (a JWKS fetched in plain text
/// can be replaced on the way).
pub(super) fn check_plain_http(uri: &http::Uri, o: &AuthOptions) -> Result<(), &'static str> {
    if uri.scheme_str() == Some("http")
        && !o.jwks_allow_http
        && !uri.host().is_some_and(is_loopback)
    {
        return Err(
            "auth.jwksUrl: http:// is accepted for loopback hosts only; use https:// or set jwksAllowHttp",
        );
    }
    Ok(())
}

/// The JWKS URL is fetched over plain HTTP or, through core's HTTP client, HTTPS; the TLS
/// settings are checked now so a bad CA file fails at startup, not at the first token.
#[cfg(feature = "http-client")]
pub(super) fn check_url(uri: &http::Uri, o: &AuthOptions) -> Result<(), String> {
    match uri.scheme_str() {
        Some("http") => Ok(check_plain_http(uri, o)?),
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
pub(super) fn check_url(uri: &http::Uri, o: &AuthOptions) -> Result<(), String> {
    if uri.scheme_str() != Some("http") {
        return Err("auth.jwksUrl must be http:// in this build (no TLS client)".into());
    }
    Ok(check_plain_http(uri, o)?)
}

/// The body of a successful JWKS answer, at most `max` bytes, else a reason.
async fn read_jwks<B>(resp: http::Response<B>, max: usize) -> Result<Loaded, String>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if !resp.status().is_success() {
        return Err(format!("JWKS answered HTTP {}", resp.status()));
    }
    let max_age = cache_max_age(resp.headers());
    let body = http_body_util::Limited::new(resp.into_body(), max)
        .collect()
        .await
        .map_err(|_| "JWKS body too large or cut short".to_owned())?
        .to_bytes();
    Ok(Loaded {
        keys: parse_set(&body)?,
        max_age,
    })
}

/// GET the JWKS with a deadline and a size cap through core's HTTP client (`http://` or
/// `https://` with the `jwksTls` trust settings; a connection pool per fetch, as fetches are
/// rare: at most one per `jwksMinRefreshMs`).
#[cfg(feature = "http-client")]
pub(super) async fn fetch(
    uri: &http::Uri,
    tls: &crate::client::ClientTls,
    timeout: Duration,
    max: usize,
) -> Result<Loaded, String> {
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
pub(super) async fn fetch(
    uri: &http::Uri,
    timeout: Duration,
    max: usize,
) -> Result<Loaded, String> {
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

    fn age(values: &[&str]) -> Option<u64> {
        let mut h = http::HeaderMap::new();
        for v in values {
            h.append(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        cache_max_age(&h).map(|d| d.as_secs())
    }

    #[test]
    fn cache_control_ages() {
        assert_eq!(age(&[]), None);
        assert_eq!(age(&["public"]), None);
        assert_eq!(age(&["public, max-age=300"]), Some(300));
        assert_eq!(age(&["MAX-AGE=\"60\""]), Some(60));
        assert_eq!(
            age(&["max-age=300", "max-age=20"]),
            Some(20),
            "the smallest"
        );
        assert_eq!(age(&["max-age=300, no-cache"]), Some(0));
        assert_eq!(age(&["no-store"]), Some(0));
        assert_eq!(age(&["max-age=-1"]), Some(0), "invalid is stale");
        assert_eq!(age(&["max-age"]), Some(0));
        assert_eq!(age(&["max-age=99999999999999999999999"]), Some(u64::MAX));
        assert_eq!(age(&["s-maxage=5"]), None, "for shared caches only");
    }

    #[test]
    fn plain_http_is_for_loopback_unless_allowed() {
        let mut o = AuthOptions::default();
        let check = |o: &AuthOptions, u: &str| check_plain_http(&u.parse().expect("uri"), o);
        for ok in [
            "http://127.0.0.1:8080/jwks.json",
            "http://127.8.9.10/jwks",
            "http://localhost/jwks",
            "http://LOCALHOST:1/jwks",
            "http://[::1]:9/jwks",
            "http://[::ffff:127.0.0.1]/jwks",
            "https://as.example/jwks",
        ] {
            assert!(check(&o, ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example/jwks",
            "http://10.0.0.1/jwks",
            "http://localhost.as.example/jwks",
            "http://128.0.0.1/jwks",
            "http://[::2]/jwks",
        ] {
            assert!(check(&o, bad).is_err(), "{bad}");
        }
        o.jwks_allow_http = true;
        assert!(check(&o, "http://as.example/jwks").is_ok());
    }
}
