//! Header rules: `Accept` (406), `Content-Type` (415), and the modern header↔body checks:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` from `x-mcp-header`
//! declarations, with `=?base64?…?=` values decoded (HTTP-09, HTTP-10, HTTP-11, HTTP-14,
//! HTTP-15, HTTP-16). Mismatches are 400 + -32020. `Origin`/`Host` live in `origin`. Which
//! param each header mirrors, the declarations and the value encoding are
//! [`crate::protocol::mcp_header`]'s; this module only reads them off the `HeaderMap`.

use http::header::{ACCEPT, CONTENT_TYPE};
use http::HeaderMap;
use serde_json::{Map, Value};

use crate::error::{codes, ErrorObject};
use crate::protocol::envelope::claimed_version;
use crate::protocol::mcp_header::{self, ParamHeader};

pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub(crate) const METHOD: &str = "mcp-method";
pub(crate) const NAME: &str = "mcp-name";
pub(crate) const SESSION_ID: &str = "mcp-session-id";
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
const PARAM_PREFIX: &str = "mcp-param-";

fn mismatch(msg: impl Into<String>) -> ErrorObject {
    ErrorObject::new(codes::HEADER_MISMATCH, msg)
}

/// Media ranges of `Accept`; a missing header accepts everything. Compared without case and
/// without copies (checked twice on every request POST).
fn accepts(h: &HeaderMap, ty: &str) -> bool {
    let mut values = h.get_all(ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return true;
    }
    let (major, _) = ty.split_once('/').unwrap_or((ty, ""));
    values
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|r| r.split(';').next().unwrap_or("").trim())
        .any(|r| {
            r.eq_ignore_ascii_case(ty)
                || r == "*/*"
                || r.strip_suffix("/*")
                    .is_some_and(|m| m.eq_ignore_ascii_case(major))
        })
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
    if let Some(bv) = claimed_version(params) {
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

fn decoded<'h>(
    h: &'h HeaderMap,
    name: &str,
) -> Result<Option<std::borrow::Cow<'h, str>>, ErrorObject> {
    match h.get(name) {
        None => Ok(None),
        Some(v) => mcp_header::decode_value_in_place(v.as_bytes())
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
    let Some(key) = mcp_header::name_key(method) else {
        return Ok(());
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

/// Step 9: every `x-mcp-header` argument present in the body must be mirrored exactly, and a
/// mirrored header must have its argument in the body (HTTP-15).
pub(crate) fn check_params(
    h: &HeaderMap,
    decls: &[ParamHeader],
    arguments: Option<&Value>,
) -> Result<(), ErrorObject> {
    for d in decls {
        let header = format!("{PARAM_PREFIX}{}", d.name.to_ascii_lowercase());
        match (decoded(h, &header)?, d.argument(arguments)) {
            (None, None) => {}
            (Some(hv), Some(bv)) if mcp_header::mirrors(&hv, bv) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!("{header} header is required")));
            }
            _ => {
                return Err(mismatch(format!(
                    "{header} header does not match the argument"
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    /// `Accept` media ranges (HTTP-02, LHTTP-05): exact types, `*/*` and `type/*`, any case,
    /// parameters ignored, several header lines; a missing header accepts everything.
    #[test]
    fn accept_ranges() {
        let with = |lines: &[&str]| {
            let mut h = HeaderMap::new();
            for l in lines {
                h.append(ACCEPT, HeaderValue::from_str(l).expect("value"));
            }
            h
        };
        assert!(accepts_post_answer(&HeaderMap::new()));
        assert!(accepts_post_answer(&with(&[
            "application/json, text/event-stream"
        ])));
        assert!(accepts_post_answer(&with(&[
            "application/json",
            "text/event-stream"
        ])));
        assert!(accepts_post_answer(&with(&["*/*"])));
        assert!(accepts_post_answer(&with(&[
            "Application/*; q=0.9, TEXT/*"
        ])));
        assert!(accepts_post_answer(&with(&[
            " APPLICATION/JSON ;q=1 , Text/Event-Stream"
        ])));
        assert!(!accepts_post_answer(&with(&["application/json"])));
        assert!(!accepts_post_answer(&with(&[
            "application/jsonx, text/event-stream"
        ])));
        assert!(!accepts_post_answer(&with(&["app/*, text/event-stream"])));
        assert!(accepts_sse(&with(&["text/*"])));
        assert!(!accepts_sse(&with(&["text/html", "application/*"])));
    }

    #[test]
    fn http14_declarations_and_matching() {
        // A declaration under `items` never gets this far: registration refuses it (HTTP-14).
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let schema = mcp_header::declarations(&schema).expect("valid declarations");
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
