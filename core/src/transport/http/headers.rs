//! Header rules: `Origin`/`Host` allow-lists (HTTP-03, 403), `Accept` (406), `Content-Type`
//! (415), and the modern header↔body checks: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`
//! and `Mcp-Param-*` from `x-mcp-header` declarations, with `=?base64?…?=` values decoded
//! (HTTP-09, HTTP-10, HTTP-11, HTTP-14, HTTP-15, HTTP-16). Mismatches are 400 + -32020.

use base64::Engine;
use http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

use super::options::AllowList;
use crate::error::{codes, ErrorObject};

pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub(crate) const METHOD: &str = "mcp-method";
pub(crate) const NAME: &str = "mcp-name";
pub(crate) const SESSION_ID: &str = "mcp-session-id";
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
const PARAM_PREFIX: &str = "mcp-param-";

/// Why a header value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// Characters outside visible ASCII, space and tab.
    #[error("header value has invalid characters")]
    InvalidCharacters,
    /// A `=?base64?…?=` sentinel whose payload is not Base64 of UTF-8.
    #[error("malformed base64 header value")]
    MalformedBase64,
}

/// Decode one `Mcp-Name` / `Mcp-Param-*` value: plain visible ASCII as is, or the
/// `=?base64?<base64(UTF-8)>?=` form decoded (HTTP-16).
///
/// # Errors
/// See [`HeaderValueError`].
pub fn decode_header_value(raw: &[u8]) -> Result<String, HeaderValueError> {
    if !raw
        .iter()
        .all(|&b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b))
    {
        return Err(HeaderValueError::InvalidCharacters);
    }
    let s = std::str::from_utf8(raw).map_err(|_| HeaderValueError::InvalidCharacters)?;
    // Only a value with both markers is encoded; anything else (e.g. a missing `?=`) is literal.
    let Some(payload) = s
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(s.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|_| HeaderValueError::MalformedBase64)?;
    String::from_utf8(bytes).map_err(|_| HeaderValueError::MalformedBase64)
}

fn mismatch(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(codes::HEADER_MISMATCH, msg)
}

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

/// Media ranges of `Accept`; a missing header accepts everything.
fn accepts(h: &HeaderMap, ty: &str) -> bool {
    let values: Vec<&HeaderValue> = h.get_all(ACCEPT).iter().collect();
    if values.is_empty() {
        return true;
    }
    let (major, _) = ty.split_once('/').unwrap_or((ty, ""));
    values
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|r| {
            r.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .any(|r| r == ty || r == "*/*" || r.strip_suffix("/*") == Some(major))
}

/// A request POST must accept both JSON and SSE: we pick one only once the handler runs (HTTP-02).
pub(crate) fn accepts_post_answer(h: &HeaderMap) -> bool {
    accepts(h, "application/json") && accepts(h, "text/event-stream")
}

/// GET streams need `text/event-stream` (LHTTP-05).
pub(crate) fn accepts_sse(h: &HeaderMap) -> bool {
    accepts(h, "text/event-stream")
}

/// `Content-Type` must be JSON (parameters such as charset allowed).
pub(crate) fn is_json_content(h: &HeaderMap) -> bool {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim())
        .is_some_and(|v| v.eq_ignore_ascii_case("application/json"))
}

pub(crate) fn get_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// Step 3 of §0.7: `MCP-Protocol-Version` must equal the envelope's version, `Mcp-Method` the
/// body's method. A missing version header reads as 2025-03-26 (HTTP-11), which never matches.
pub(crate) fn check_version_and_method(
    h: &HeaderMap,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Result<(), ErrorObject> {
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(crate::server::era::KEY_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    if let Some(bv) = body_version {
        match h.get(PROTOCOL_VERSION) {
            None => {
                return Err(mismatch(
                    "MCP-Protocol-Version header is required and must match _meta protocolVersion",
                ))
            }
            Some(v) if v.as_bytes() != bv.as_bytes() => {
                return Err(mismatch(
                    "MCP-Protocol-Version header does not match _meta protocolVersion",
                ))
            }
            Some(_) => {}
        }
    }
    match h.get(METHOD) {
        None => Err(mismatch("Mcp-Method header is required")),
        Some(v) if v.as_bytes() != method.as_bytes() => Err(mismatch(
            "Mcp-Method header does not match the body's method",
        )),
        Some(_) => Ok(()),
    }
}

fn decoded(h: &HeaderMap, name: &str) -> Result<Option<String>, ErrorObject> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => decode_header_value(v.as_bytes())
            .map(Some)
            .map_err(|e| mismatch(format!("{name}: {e}"))),
    }
}

/// Step 7: `Mcp-Name` for `tools/call`, `prompts/get` (name) and `resources/read` (uri).
pub(crate) fn check_name(
    h: &HeaderMap,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Result<(), ErrorObject> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return Ok(()),
    };
    let Some(body) = params.and_then(|p| p.get(key)).and_then(Value::as_str) else {
        // The body is malformed; per-method validation answers it (-32602).
        return Ok(());
    };
    match decoded(h, NAME)? {
        None => Err(mismatch(format!(
            "Mcp-Name header is required for {method}"
        ))),
        Some(v) if v != body => Err(mismatch(format!(
            "Mcp-Name header does not match params.{key}"
        ))),
        Some(_) => Ok(()),
    }
}

/// One `x-mcp-header` declaration: header suffix, path to the argument, declared JSON type.
struct ParamDecl {
    header: String,
    path: Vec<String>,
}

/// Declarations reachable purely via nested `properties` (HTTP-14).
fn declarations(schema: &Value, path: &mut Vec<String>, out: &mut Vec<ParamDecl>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, sub) in props {
        path.push(k.clone());
        if let Some(hn) = sub.get("x-mcp-header").and_then(Value::as_str) {
            out.push(ParamDecl {
                header: format!("{PARAM_PREFIX}{}", hn.to_ascii_lowercase()),
                path: path.clone(),
            });
        }
        if path.len() < 32 {
            declarations(sub, path, out);
        }
        path.pop();
    }
}

fn matches(header: &str, v: &Value) -> bool {
    match v {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (n.as_i64(), header.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n.to_string() == header,
        },
        _ => false,
    }
}

/// Step 9: every `x-mcp-header` argument present in the body must be mirrored exactly, and a
/// mirrored header must have its argument in the body (HTTP-15).
pub(crate) fn check_params(
    h: &HeaderMap,
    input_schema: &Value,
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    let mut decls = Vec::new();
    declarations(input_schema, &mut Vec::new(), &mut decls);
    for d in decls {
        let mut cur = arguments;
        for seg in &d.path {
            cur = cur.and_then(|c| c.get(seg));
        }
        let body = cur.filter(|v| !v.is_null());
        match (decoded(h, &d.header)?, body) {
            (None, None) => {}
            (Some(hv), Some(bv)) if matches(&hv, bv) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!("{} header is required", d.header)));
            }
            _ => {
                return Err(mismatch(format!(
                    "{} header does not match the argument",
                    d.header
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn http16_base64_values() {
        assert_eq!(
            decode_header_value(b"plain name").as_deref(),
            Ok("plain name")
        );
        assert_eq!(
            decode_header_value(b"=?base64?w6ljaG8=?=").as_deref(),
            Ok("\u{e9}cho")
        );
        assert_eq!(
            decode_header_value(b"=?base64?!!?="),
            Err(HeaderValueError::MalformedBase64)
        );
        assert_eq!(
            decode_header_value(b"=?base64?w6lj").as_deref(),
            Ok("=?base64?w6lj"),
            "without the ?= suffix the value is literal"
        );
        assert_eq!(
            decode_header_value(b"a\x01b"),
            Err(HeaderValueError::InvalidCharacters)
        );
        assert_eq!(
            decode_header_value("é".as_bytes()),
            Err(HeaderValueError::InvalidCharacters)
        );
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

    #[test]
    fn http14_declarations_and_matching() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "X"}}}}
        }});
        let mut h = HeaderMap::new();
        let args = json!({"region": "eu", "opts": {"n": 7}});
        assert_eq!(
            check_params(&h, &schema, Some(&args)).unwrap_err().code,
            -32020
        );
        h.insert("mcp-param-region", HeaderValue::from_static("eu"));
        h.insert("mcp-param-n", HeaderValue::from_static("7"));
        assert!(check_params(&h, &schema, Some(&args)).is_ok());
        h.insert("mcp-param-n", HeaderValue::from_static("8"));
        assert!(check_params(&h, &schema, Some(&args)).is_err());
        // a header without the argument in the body is a mismatch
        let args = json!({"region": "eu"});
        assert!(check_params(&h, &schema, Some(&args)).is_err());
    }
}
