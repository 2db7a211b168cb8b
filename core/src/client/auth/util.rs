//! Small encoders the flow needs: PKCE (RFC 7636), random values, form and query encoding,
//! and the URL pieces of discovery (AUTH-01, AUTH-03, AUTH-05).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use sha2::{Digest, Sha256};

use super::error::{AuthError, AuthErrorKind};

/// Characters left as-is in a form value (`application/x-www-form-urlencoded` unreserved).
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `n` random bytes, base64url without padding.
pub(crate) fn random_b64(n: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf)
        .map_err(|e| AuthError::new(AuthErrorKind::Config, format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// A PKCE pair: (verifier, S256 challenge). 32 random bytes give the 43-character minimum.
pub(crate) fn pkce_pair() -> Result<(String, String), AuthError> {
    let verifier = random_b64(32)?;
    let challenge = pkce_challenge(&verifier);
    Ok((verifier, challenge))
}

/// `BASE64URL(SHA256(verifier))` (RFC 7636 §4.2).
pub(crate) fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

pub(crate) fn sha256(bytes: &[u8]) -> Vec<u8> {
    Sha256::digest(bytes).to_vec()
}

/// `Basic` credentials of `client_secret_basic` (RFC 6749 §2.3.1: each part form-encoded).
pub(crate) fn basic_auth(id: &str, secret: &str) -> String {
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", form_encode(id), form_encode(secret)))
    )
}

pub(crate) fn form_encode(s: &str) -> String {
    utf8_percent_encode(s, FORM).to_string()
}

/// `k=v&…` with every part encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The decoded `k=v` pairs of a URL's query (`+` is a space).
pub(crate) fn query_pairs(url: &str) -> Vec<(String, String)> {
    let q = url.split_once('?').map_or("", |(_, q)| q);
    let q = q.split('#').next().unwrap_or_default();
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (dec(k), dec(v))
        })
        .collect()
}

/// A parsed absolute `http(s)` URL: scheme and authority lowercased, path without query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    pub scheme: String,
    pub authority: String,
    pub path: String,
}

impl Url {
    pub(crate) fn parse(s: &str) -> Result<Url, AuthError> {
        let bad = || AuthError::new(AuthErrorKind::Config, format!("not an http(s) URL: {s:?}"));
        let (scheme, rest) = s.split_once("://").ok_or_else(bad)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(bad());
        }
        let rest = rest.split('#').next().unwrap_or_default();
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = rest[..end].to_ascii_lowercase();
        if authority.is_empty() || authority.contains(char::is_whitespace) {
            return Err(bad());
        }
        let path = rest[end..].split('?').next().unwrap_or_default().to_owned();
        Ok(Url {
            scheme,
            authority,
            path,
        })
    }

    pub(crate) fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// The path without its trailing slash (empty for the root).
    pub(crate) fn trimmed_path(&self) -> &str {
        self.path.trim_end_matches('/')
    }
}

/// True when the PRM `resource` identifies `server` (RFC 9728 §3.3, AUTH-05): same origin and
/// the server's path equals the resource's path or lies under it.
pub(crate) fn resource_covers(resource: &str, server: &str) -> bool {
    let (Ok(r), Ok(s)) = (Url::parse(resource), Url::parse(server)) else {
        return false;
    };
    if r.origin() != s.origin() {
        return false;
    }
    let rp = r.trimmed_path();
    let sp = s.trimmed_path();
    sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// Well-known PRM locations for `server`, in order (AUTH-01).
pub(crate) fn prm_urls(server: &Url) -> Vec<String> {
    let base = format!("{}/.well-known/oauth-protected-resource", server.origin());
    let p = server.trimmed_path();
    if p.is_empty() {
        vec![base]
    } else {
        vec![format!("{base}{p}"), base]
    }
}

/// Authorization-server metadata locations for `issuer`, in order (AUTH-03).
pub(crate) fn as_metadata_urls(issuer: &Url) -> Vec<String> {
    let o = issuer.origin();
    let p = issuer.trimmed_path();
    if p.is_empty() {
        vec![
            format!("{o}/.well-known/oauth-authorization-server"),
            format!("{o}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{o}/.well-known/oauth-authorization-server{p}"),
            format!("{o}/.well-known/openid-configuration{p}"),
            format!("{o}{p}/.well-known/openid-configuration"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_matches_rfc7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let (v, c) = pkce_pair().unwrap();
        assert!(v.len() >= 43 && v.len() <= 128);
        assert_eq!(c, pkce_challenge(&v));
        assert_ne!(pkce_pair().unwrap().0, v);
    }

    #[test]
    fn discovery_urls_follow_the_required_order() {
        let s = Url::parse("http://Example.com:8/mcp/").unwrap();
        assert_eq!(
            prm_urls(&s),
            [
                "http://example.com:8/.well-known/oauth-protected-resource/mcp",
                "http://example.com:8/.well-known/oauth-protected-resource"
            ]
        );
        let i = Url::parse("https://as.example/tenant1").unwrap();
        assert_eq!(
            as_metadata_urls(&i),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        let root = Url::parse("https://as.example").unwrap();
        assert_eq!(as_metadata_urls(&root).len(), 2);
        assert!(Url::parse("ftp://x").is_err());
        assert!(Url::parse("http://").is_err());
    }

    #[test]
    fn resource_must_cover_the_server() {
        assert!(resource_covers("http://h:1/mcp", "http://H:1/mcp"));
        assert!(resource_covers("http://h:1", "http://h:1/mcp"));
        assert!(resource_covers("http://h:1/", "http://h:1/mcp"));
        assert!(!resource_covers(
            "https://evil.example.com/mcp",
            "http://h:1/mcp"
        ));
        assert!(!resource_covers("http://h:1/mc", "http://h:1/mcp"));
        assert!(!resource_covers("http://h:2/mcp", "http://h:1/mcp"));
    }

    #[test]
    fn form_and_query_round_trip() {
        let f = form(&[("a b", "x&y=z"), ("r", "http://h/p")]);
        assert_eq!(f, "a%20b=x%26y%3Dz&r=http%3A%2F%2Fh%2Fp");
        let q = query_pairs("http://cb/x?code=a%2Bb&state=s+t&iss=http%3A%2F%2Fas#frag");
        assert_eq!(
            q,
            [
                ("code".to_owned(), "a+b".to_owned()),
                ("state".to_owned(), "s t".to_owned()),
                ("iss".to_owned(), "http://as".to_owned())
            ]
        );
        assert_eq!(basic_auth("id", "s:c"), "Basic aWQ6cyUzQWM=");
    }
}
