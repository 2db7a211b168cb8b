//! `Origin` and `Host` allow-lists: DNS-rebinding protection (REQUIREMENTS HTTP-03). An
//! [`AllowList`] is resolved once against the bound address into a [`Rule`]; every request's
//! `Origin` (when present) and `Host` must match it, else 403.

use http::header::{HOST, ORIGIN};
use http::HeaderMap;

use super::options::AllowList;

fn is_local_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    h == "localhost" || h == "127.0.0.1" || h == "[::1]" || h == "::1"
}

/// Split `host[:port]` (with `[v6]` literals) into the host and the port, if any.
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(i) => (&authority[..=i], authority[i + 1..].strip_prefix(':')),
            None => (authority, None),
        };
    }
    match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    }
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

    /// `full` is the whole value; `authority` its `host[:port]`; `default_port` the port an
    /// authority without one means.
    fn allows(&self, full: &str, authority: &str, default_port: u16) -> bool {
        if self.any || self.exact.iter().any(|a| a.eq_ignore_ascii_case(full)) {
            return true;
        }
        let (host, port) = split_authority(authority);
        if !self.local || !is_local_host(host) {
            return false;
        }
        match self.local_port {
            None => true,
            Some(want) => match port {
                None => want == default_port,
                Some(p) => p.parse::<u16>() == Ok(want),
            },
        }
    }
}

/// `Origin` (when present) and `Host` must be on their allow-lists (HTTP-03).
pub(crate) fn origin_and_host_ok(h: &HeaderMap, origins: &Rule, hosts: &Rule) -> bool {
    if h.get_all(ORIGIN).iter().count() > 1 || h.get_all(HOST).iter().count() > 1 {
        return false;
    }
    if let Some(o) = h.get(ORIGIN) {
        let Ok(o) = o.to_str() else {
            return false;
        };
        let (scheme, rest) = o.split_once("://").unwrap_or(("", ""));
        let authority = rest.split('/').next().unwrap_or("");
        let default_port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        if !origins.allows(o, authority, default_port) {
            return false;
        }
    }
    if let Some(hv) = h.get(HOST) {
        let Ok(hv) = hv.to_str() else {
            return false;
        };
        if !hosts.allows(hv, hv, 80) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

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
