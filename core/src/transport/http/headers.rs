//! Header rules: `Accept` (406), `Content-Type` (415), and the modern header↔body checks:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` from `x-mcp-header`
//! declarations, with `=?base64?…?=` values decoded (HTTP-09, HTTP-10, HTTP-11, HTTP-14,
//! HTTP-15, HTTP-16). Mismatches are 400 + -32020. `Origin`/`Host` live in `origin`.

use base64::Engine;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};
use serde_json::{Map, Value};

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
