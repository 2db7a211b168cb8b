//! `Origin` and `Host` allow-lists: DNS-rebinding protection (REQUIREMENTS HTTP-03, RFC 9112
//! §3.2). An [`AllowList`] is resolved once against the bound address into a [`Rule`]. Every
//! request must name its host (`Host`, required on HTTP/1.1) in a well-formed way (else 400),
//! every name it addressed (`Host`, an absolute-form or HTTP/2 target authority) must be allowed,
//! and its `Origin`, when present, must be a well-formed `http(s)` origin that is allowed, or
//! be listed verbatim (else 403).

use http::header::{HOST, ORIGIN};
use http::{HeaderMap, HeaderValue, Uri, Version};

use super::options::AllowList;

fn is_local_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "[::1]"
}

/// A character of an RFC 3986 reg-name or IPv4 address: unreserved, sub-delims or `%`.
fn is_reg_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=%".contains(c)
}

/// Split and check `host[:port]` (RFC 3986 §3.2.2–3.2.3, as RFC 9110 §7.2 uses it for `Host`):
/// a bracketed IPv6 literal or a non-empty reg-name, then an optional port of digits in
/// 1–65535. `None` for anything else: userinfo, a path, an empty or non-numeric port, a port
/// out of range. A lenient split would let `localhost:abc` or `localhost@evil` through as
/// `localhost`.
fn parse_authority(a: &str) -> Option<(&str, Option<u16>)> {
    let (host, rest) = if a.starts_with('[') {
        let end = a.find(']')?;
        let inner = &a[1..end];
        if inner.is_empty()
            || !inner
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return None;
        }
        (&a[..=end], &a[end + 1..])
    } else {
        let end = a.find(':').unwrap_or(a.len());
        let host = &a[..end];
        if host.is_empty() || !host.chars().all(is_reg_name_char) {
            return None;
        }
        (host, &a[end..])
    };
    if rest.is_empty() {
        return Some((host, None));
    }
    let digits = rest.strip_prefix(':')?;
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match digits.parse::<u16>() {
        Ok(p) if p > 0 => Some((host, Some(p))),
        _ => None,
    }
}

/// A serialized origin `scheme://host[:port]` (RFC 6454 §6.1) with an `http` or `https` scheme:
/// its default port and authority. `None` for other schemes (`ftp://`, `file://`), `null`, or
/// anything with a path.
fn split_origin(o: &str) -> Option<(u16, &str)> {
    let (scheme, authority) = o.split_once("://")?;
    let default_port = if scheme.eq_ignore_ascii_case("http") {
        80
    } else if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        return None;
    };
    Some((default_port, authority))
}

/// An [`AllowList`] resolved against the bound address (HTTP-03).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rule {
    any: bool,
    /// The localhost names are accepted…
    local: bool,
    /// …only with this port, when set.
    local_port: Option<u16>,
    /// Exact values (case-insensitive).
    exact: Vec<String>,
}

impl Rule {
    /// Resolve `list` for `Origin` (`origin`) or `Host` values. `bound` is the listening address
    /// when known.
    ///
    /// # Errors
    /// `Auto` on an unspecified bind address: there is no host name to derive.
    pub(crate) fn resolve(
        list: &AllowList,
        bound: Option<std::net::SocketAddr>,
        origin: bool,
    ) -> Result<Self, String> {
        let local_any = Self {
            local: true,
            ..Self::default()
        };
        Ok(match list {
            AllowList::Any => Self {
                any: true,
                ..Self::default()
            },
            AllowList::Localhost => local_any,
            AllowList::List(l) => Self {
                exact: l.clone(),
                ..local_any
            },
            AllowList::Auto => match bound {
                None => local_any,
                Some(a) if a.ip().is_unspecified() => {
                    return Err(format!(
                        "allowed_{} must be set explicitly when binding the unspecified address {} \
                         (DNS-rebinding protection needs the names clients use)",
                        if origin { "origins" } else { "hosts" },
                        a.ip()
                    ))
                }
                Some(a) => {
                    let authority = match a {
                        std::net::SocketAddr::V4(v4) => format!("{}:{}", v4.ip(), v4.port()),
                        std::net::SocketAddr::V6(v6) => format!("[{}]:{}", v6.ip(), v6.port()),
                    };
                    let exact = match (a.ip().is_loopback(), origin) {
                        (true, _) => Vec::new(),
                        (false, true) => {
                            vec![
                                format!("http://{authority}"),
                                format!("https://{authority}"),
                            ]
                        }
                        (false, false) => vec![authority],
                    };
                    Self {
                        local: true,
                        local_port: (!origin).then_some(a.port()),
                        exact,
                        ..Self::default()
                    }
                }
            },
        })
    }

    /// `full` is listed as is (or anything goes).
    fn listed(&self, full: &str) -> bool {
        self.any || self.exact.iter().any(|a| a.eq_ignore_ascii_case(full))
    }

    /// `host` is a localhost name this rule accepts, with `port` (or `default_port` when the
    /// value names none).
    fn local(&self, host: &str, port: Option<u16>, default_port: u16) -> bool {
        self.local
            && is_local_host(host)
            && self
                .local_port
                .is_none_or(|want| port.unwrap_or(default_port) == want)
    }
}

/// Why a request's `Host`, target or `Origin` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// 400 (RFC 9112 §3.2): no `Host` on HTTP/1.1 (or no name at all), several `Host` lines,
    /// a malformed `Host` or target authority, or an absolute-form target that is not `http(s)`.
    BadRequest(&'static str),
    /// 403 (HTTP-03): a name or origin not on the allow-list, or a malformed `Origin`.
    Forbidden,
}

/// One name the client addressed (`Host`, or the target's authority): well-formed (else 400)
/// and on the `Host` allow-list (else 403).
fn host_allowed(value: &str, default_port: u16, hosts: &Rule) -> Result<(), Refused> {
    let (host, port) =
        parse_authority(value).ok_or(Refused::BadRequest("malformed Host or request target"))?;
    if hosts.listed(value) || hosts.local(host, port, default_port) {
        Ok(())
    } else {
        Err(Refused::Forbidden)
    }
}

/// DNS-rebinding protection needs the name the client used, and every name it sent must be
/// allowed: the `Host` header, and the authority of an absolute-form target (HTTP/1.1) or of
/// `:authority` (HTTP/2), which RFC 9112 §3.2.2 makes the effective host. Checking only `Host`
/// would let `POST http://evil.example/mcp` with an allowed `Host` through. RFC 9112 §3.2 makes
/// a missing `Host` on HTTP/1.1, or several, a 400; a request naming no host at all (HTTP/1.0
/// without `Host`) is refused the same way, as there is nothing to check.
fn check_host(version: Version, uri: &Uri, h: &HeaderMap, hosts: &Rule) -> Result<(), Refused> {
    let mut values = h.get_all(HOST).iter();
    let host = values.next();
    if values.next().is_some() {
        return Err(Refused::BadRequest("several Host headers"));
    }
    if host.is_none() && (version == Version::HTTP_11 || uri.authority().is_none()) {
        return Err(Refused::BadRequest("Host header is required"));
    }
    let mut default_port = 80;
    if let Some(a) = uri.authority() {
        default_port = match uri.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("http") => 80,
            Some(s) if s.eq_ignore_ascii_case("https") => 443,
            _ => return Err(Refused::BadRequest("request target must be an http(s) URI")),
        };
        host_allowed(a.as_str(), default_port, hosts)?;
    }
    match host.map(HeaderValue::to_str) {
        None => Ok(()),
        Some(Ok(v)) => host_allowed(v, default_port, hosts),
        Some(Err(_)) => Err(Refused::BadRequest("malformed Host or request target")),
    }
}

/// `Origin`, when present, must be listed as is, or be a well-formed `http(s)` origin whose
/// host the rule accepts. A browser only sends serialized origins, so anything else (`ftp://`,
/// a port that is not a number, several `Origin` lines) is refused rather than guessed at.
fn check_origin(h: &HeaderMap, origins: &Rule) -> Result<(), Refused> {
    let mut values = h.get_all(ORIGIN).iter();
    let Some(o) = values.next() else {
        return Ok(());
    };
    if values.next().is_some() {
        return Err(Refused::Forbidden);
    }
    let o = o.to_str().map_err(|_| Refused::Forbidden)?;
    if origins.listed(o) {
        return Ok(());
    }
    let allowed = split_origin(o)
        .and_then(|(default_port, authority)| {
            parse_authority(authority).map(|(host, port)| (host, port, default_port))
        })
        .is_some_and(|(host, port, default_port)| origins.local(host, port, default_port));
    if allowed {
        Ok(())
    } else {
        Err(Refused::Forbidden)
    }
}

/// The names a request addressed (`Host`, target authority) and its `Origin` must be
/// well-formed and allowed (HTTP-03); see [`Refused`] for the answers.
pub(crate) fn check(
    version: Version,
    uri: &Uri,
    h: &HeaderMap,
    origins: &Rule,
    hosts: &Rule,
) -> Result<(), Refused> {
    check_host(version, uri, h, hosts)?;
    check_origin(h, origins)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin_and_host_ok(h: &HeaderMap, origins: &Rule, hosts: &Rule) -> bool {
        check(
            Version::HTTP_11,
            &Uri::from_static("/mcp"),
            h,
            origins,
            hosts,
        )
        .is_ok()
    }

    fn rule(l: &AllowList, bound: Option<&str>, origin: bool) -> Rule {
        Rule::resolve(l, bound.map(|b| b.parse().unwrap()), origin).unwrap()
    }

    #[test]
    fn http03_origin_allow_list() {
        let local = rule(&AllowList::Localhost, None, false);
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(origin_and_host_ok(&h, &local, &local));
        h.insert(ORIGIN, HeaderValue::from_static("http://localhost:3000"));
        assert!(origin_and_host_ok(&h, &local, &local));
        h.insert(ORIGIN, HeaderValue::from_static("http://[::1]:3000"));
        assert!(origin_and_host_ok(&h, &local, &local));
        h.insert(ORIGIN, HeaderValue::from_static("https://evil.example"));
        assert!(!origin_and_host_ok(&h, &local, &local));
        let list = rule(
            &AllowList::List(vec!["https://evil.example".into()]),
            None,
            true,
        );
        assert!(origin_and_host_ok(&h, &list, &local));
        h.remove(ORIGIN);
        h.insert(HOST, HeaderValue::from_static("evil.example"));
        assert!(!origin_and_host_ok(&h, &local, &local));
        h.insert(HOST, HeaderValue::from_static("localhost.evil.example"));
        assert!(!origin_and_host_ok(&h, &local, &local));
    }

    #[test]
    fn http03_malformed_origins_are_refused() {
        let local = rule(&AllowList::Localhost, None, false);
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_static("localhost:8080"));
        for bad in [
            "ftp://localhost",
            "file://localhost",
            "ws://localhost:3000",
            "http://localhost:abc",
            "http://localhost:99999",
            "http://localhost:0",
            "http://localhost:",
            "http://user@localhost",
            "http://localhost/app",
            "http://[::1",
            "http://",
            "localhost:3000",
            "null",
        ] {
            h.insert(ORIGIN, HeaderValue::from_static(bad));
            assert!(!origin_and_host_ok(&h, &local, &local), "{bad}");
        }
        for good in [
            "http://localhost",
            "HTTPS://LOCALHOST:8443",
            "http://[::1]:3000",
            "http://127.0.0.1:65535",
        ] {
            h.insert(ORIGIN, HeaderValue::from_static(good));
            assert!(origin_and_host_ok(&h, &local, &local), "{good}");
        }
        // A value the operator listed verbatim is accepted whatever its scheme.
        let listed = rule(
            &AllowList::List(vec!["vscode-webview://abc".into()]),
            None,
            true,
        );
        h.insert(ORIGIN, HeaderValue::from_static("vscode-webview://abc"));
        assert!(origin_and_host_ok(&h, &listed, &local));
        assert!(!origin_and_host_ok(&h, &local, &local));
    }

    #[test]
    fn rfc9112_host_is_required_well_formed_and_matches_the_target() {
        let local = rule(&AllowList::Localhost, None, false);
        let any = rule(&AllowList::Any, None, false);
        let run = |v: Version, uri: &'static str, host: Option<&'static str>, hosts: &Rule| {
            let mut h = HeaderMap::new();
            if let Some(x) = host {
                h.insert(HOST, HeaderValue::from_static(x));
            }
            check(v, &Uri::from_static(uri), &h, &local, hosts)
        };
        let bad = Err(Refused::BadRequest("malformed Host or request target"));
        for host in [
            "localhost:abc",
            "localhost:",
            "localhost:99999",
            "user@localhost:8080",
            "local host",
            "[::1",
            "localhost/x",
            "",
        ] {
            assert_eq!(
                run(Version::HTTP_11, "/mcp", Some(host), &local),
                bad,
                "{host}"
            );
            assert_eq!(
                run(Version::HTTP_11, "/mcp", Some(host), &any),
                bad,
                "{host}"
            );
        }
        let missing = Err(Refused::BadRequest("Host header is required"));
        assert_eq!(run(Version::HTTP_11, "/mcp", None, &any), missing);
        assert_eq!(run(Version::HTTP_10, "/mcp", None, &local), missing);
        assert_eq!(
            run(Version::HTTP_11, "http://localhost:1/mcp", None, &local),
            missing
        );
        let mut two = HeaderMap::new();
        two.append(HOST, HeaderValue::from_static("localhost"));
        two.append(HOST, HeaderValue::from_static("localhost"));
        let uri = Uri::from_static("/mcp");
        assert_eq!(
            check(Version::HTTP_11, &uri, &two, &local, &local),
            Err(Refused::BadRequest("several Host headers"))
        );
        // HTTP/2 names the host in :authority (the URI); Host may be absent.
        assert!(run(Version::HTTP_2, "http://localhost:8080/mcp", None, &local).is_ok());
        // An absolute-form target is the effective host (RFC 9112 §3.2.2): it must be allowed
        // too, whatever Host says.
        let host = Some("localhost:8080");
        assert!(run(Version::HTTP_11, "http://localhost:8080/mcp", host, &local).is_ok());
        for uri in ["http://evil.example/mcp", "https://evil.example:8080/mcp"] {
            assert_eq!(
                run(Version::HTTP_11, uri, host, &local),
                Err(Refused::Forbidden),
                "{uri}"
            );
        }
        assert_eq!(
            run(Version::HTTP_11, "ftp://localhost/mcp", host, &local),
            Err(Refused::BadRequest("request target must be an http(s) URI"))
        );
        assert_eq!(
            run(Version::HTTP_11, "http://user@localhost/mcp", host, &local),
            bad
        );
    }

    #[test]
    fn http03_auto_derives_from_the_bind_address() {
        let check = |o: &Rule, hst: &Rule, origin: Option<&'static str>, host: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(HOST, HeaderValue::from_static(host));
            if let Some(o) = origin {
                h.insert(ORIGIN, HeaderValue::from_static(o));
            }
            origin_and_host_ok(&h, o, hst)
        };
        // Loopback: localhost names; Host must carry the bound port, Origin any port.
        let (o, hs) = (
            rule(&AllowList::Auto, Some("127.0.0.1:8080"), true),
            rule(&AllowList::Auto, Some("127.0.0.1:8080"), false),
        );
        assert!(check(&o, &hs, None, "localhost:8080"));
        assert!(check(&o, &hs, None, "[::1]:8080"));
        assert!(!check(&o, &hs, None, "localhost:9090"));
        assert!(!check(&o, &hs, None, "localhost"));
        assert!(!check(&o, &hs, None, "evil.example:8080"));
        assert!(check(
            &o,
            &hs,
            Some("http://localhost:6274"),
            "127.0.0.1:8080"
        ));
        assert!(!check(
            &o,
            &hs,
            Some("http://evil.example:8080"),
            "127.0.0.1:8080"
        ));
        // Port 80 may be implied.
        let h80 = rule(&AllowList::Auto, Some("127.0.0.1:80"), false);
        assert!(check(&o, &h80, None, "localhost"));
        // A specific non-loopback address: that address too.
        let (o, hs) = (
            rule(&AllowList::Auto, Some("192.0.2.5:8443"), true),
            rule(&AllowList::Auto, Some("192.0.2.5:8443"), false),
        );
        assert!(check(
            &o,
            &hs,
            Some("https://192.0.2.5:8443"),
            "192.0.2.5:8443"
        ));
        assert!(!check(&o, &hs, None, "192.0.2.6:8443"));
        assert!(!check(
            &o,
            &hs,
            Some("http://evil.example"),
            "192.0.2.5:8443"
        ));
        let v6 = rule(&AllowList::Auto, Some("[2001:db8::1]:81"), false);
        assert!(check(&o, &v6, None, "[2001:db8::1]:81"));
        // Unspecified: explicit configuration required.
        for a in ["0.0.0.0:80", "[::]:80"] {
            assert!(Rule::resolve(&AllowList::Auto, Some(a.parse().unwrap()), false).is_err());
        }
        assert!(Rule::resolve(&AllowList::Any, Some("0.0.0.0:80".parse().unwrap()), false).is_ok());
        // No bind address (a mounted service): localhost names on any port.
        let m = rule(&AllowList::Auto, None, false);
        assert!(check(&m, &m, None, "localhost:1234"));
    }
}
