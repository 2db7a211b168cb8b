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

    /// `https`, or `http` to a loopback host (OAuth 2.1 §1.5: every authorization exchange
    /// is protected by TLS; loopback traffic never leaves the machine, RFC 8252 §8.3).
    pub(crate) fn secure_or_loopback(&self) -> bool {
        self.scheme == "https" || is_loopback(&self.authority)
    }
}

/// Check that `url` may carry authorization traffic: `https`, or `http` to a loopback host
/// unless plain http is allowed (`auth.allowInsecureHttp`). `what` names the URL in the error.
pub(crate) fn require_secure(
    url: &str,
    allow_http: bool,
    kind: AuthErrorKind,
    what: &str,
) -> Result<Url, AuthError> {
    let u = Url::parse(url)
        .map_err(|_| AuthError::new(kind, format!("{what} is not an http(s) URL")))?;
    if !allow_http && !u.secure_or_loopback() {
        return Err(AuthError::new(
            kind,
            format!(
                "{what} {:?}: plain http is refused except to a loopback host \
                 (auth.allowInsecureHttp allows it)",
                u.origin()
            ),
        ));
    }
    Ok(u)
}

/// The host of a URL authority (userinfo and port removed; an IPv6 literal keeps its
/// brackets).
pub(crate) fn host_of(authority: &str) -> &str {
    // What follows the last `@` is the host the connection goes to.
    let a = authority.rsplit('@').next().unwrap_or(authority);
    if a.starts_with('[') {
        return a.find(']').map_or(a, |end| &a[..=end]);
    }
    match a.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => a,
    }
}

/// True for `localhost`, 127.0.0.0/8 and `[::1]` (RFC 6761 §6.3, RFC 5735, RFC 4291).
pub(crate) fn is_loopback(authority: &str) -> bool {
    let host = host_of(authority);
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6
            .parse::<std::net::Ipv6Addr>()
            .is_ok_and(|a| a.is_loopback());
    }
    host.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|a| a.is_loopback())
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
    fn loopback_hosts_are_recognised() {
        for a in [
            "localhost",
            "localhost:3000",
            "127.0.0.1",
            "127.0.0.1:80",
            "127.9.8.7:1",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback(a), "{a}");
        }
        for a in [
            "example.com",
            "127.0.0.1.example.com",
            "127.0.0.1@example.com",
            "127.0.0.1:80@example.com:80",
            "localhost.example.com",
            "[::2]:80",
            "10.0.0.1",
            "128.0.0.1",
        ] {
            assert!(!is_loopback(a), "{a}");
        }
        let http = |s: &str| require_secure(s, false, AuthErrorKind::Config, "x");
        assert!(http("https://example.com/as").is_ok());
        assert!(http("http://127.0.0.1:9/as").is_ok());
        let e = http("http://example.com/as").unwrap_err();
        assert!(e.message().contains("allowInsecureHttp"), "{e}");
        assert!(require_secure("http://example.com", true, AuthErrorKind::Config, "x").is_ok());
        assert!(http("ftp://127.0.0.1/").is_err());
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
