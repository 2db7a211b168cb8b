//! Modern HTTP request headers (REQUIREMENTS HTTP-09, HTTP-14, HTTP-15, HTTP-16).
//!
//! `Mcp-Name` and `Mcp-Param-*` values that are not plain visible ASCII (or that have leading or
//! trailing whitespace, control characters, or already look like the sentinel) are sent as
//! `=?base64?<base64 of UTF-8>?=`. Tool `x-mcp-header` annotations are validated once, when the
//! tool is listed; a tool that breaks the rules is dropped from the HTTP view.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Largest integer a header may mirror (±(2^53−1)).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

fn looks_like_sentinel(s: &str) -> bool {
    s.starts_with("=?base64?") && s.ends_with("?=")
}

/// Encode a header value (HTTP-16).
pub fn encode_value(s: &str) -> String {
    let plain = s
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let trimmed = s.trim_matches(|c| c == ' ' || c == '\t') == s;
    if plain && trimmed && !looks_like_sentinel(s) {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(s.as_bytes()))
    }
}

/// Decode a header value (the inverse of [`encode_value`]); `None` for a malformed sentinel.
#[cfg(test)]
fn decode_value(s: &str) -> Option<String> {
    if let Some(inner) = s
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        let bytes = STANDARD.decode(inner).ok()?;
        return String::from_utf8(bytes).ok();
    }
    Some(s.to_owned())
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// One `x-mcp-header` declaration: the header suffix and the property path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `Name` of `Mcp-Param-{Name}`.
    pub name: String,
    /// Property names from the arguments root.
    pub path: Vec<String>,
}

fn count_annotations(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("x-mcp-header"))
                + m.iter()
                    .filter(|(k, _)| {
                        !matches!(k.as_str(), "const" | "enum" | "default" | "examples")
                    })
                    .map(|(_, c)| count_annotations(c))
                    .sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

fn walk(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
    depth: usize,
) -> Result<(), String> {
    if depth > 64 {
        return Err("schema too deep".into());
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (k, sub) in props {
        let Some(sub) = sub.as_object() else { continue };
        path.push(k.clone());
        if let Some(h) = sub.get("x-mcp-header") {
            let name = h.as_str().ok_or("x-mcp-header must be a string")?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(format!("x-mcp-header {name:?} is not a non-empty token"));
            }
            let ty = sub.get("type").and_then(Value::as_str);
            if !matches!(ty, Some("string" | "integer" | "boolean")) {
                return Err(format!(
                    "x-mcp-header {name:?} is on a property whose type is not string, integer or boolean"
                ));
            }
            out.push(ParamHeader {
                name: name.to_owned(),
                path: path.clone(),
            });
        }
        walk(sub, path, out, depth + 1)?;
        path.pop();
    }
    Ok(())
}

/// The valid `x-mcp-header` declarations of an input schema, or why the tool must be dropped
/// (HTTP-14): tokens only, unique case-insensitively, only on string/integer/boolean
/// properties reachable through nested `properties`.
///
/// # Errors
/// The rule that is broken.
pub fn tool_param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut out = Vec::new();
    if let Some(root) = input_schema.as_object() {
        walk(root, &mut Vec::new(), &mut out, 0)?;
    }
    if count_annotations(input_schema) != out.len() {
        return Err(
            "x-mcp-header is only allowed on properties reached through nested properties".into(),
        );
    }
    let mut seen = HashSet::new();
    for h in &out {
        if !seen.insert(h.name.to_ascii_lowercase()) {
            return Err(format!("duplicate x-mcp-header {:?}", h.name));
        }
    }
    Ok(out)
}

/// The `Mcp-Param-*` headers for `arguments` (HTTP-15): strings as-is (encoded when needed),
/// integers in decimal, booleans `true`/`false`; null or absent values send no header.
pub fn param_headers(decls: &[ParamHeader], arguments: Option<&Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(args) = arguments else { return out };
    for d in decls {
        let mut cur = args;
        let mut found = true;
        for k in &d.path {
            match cur.get(k) {
                Some(v) => cur = v,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        let value = match cur {
            Value::String(s) => encode_value(s),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => match n.as_i64() {
                Some(i) if i.abs() <= MAX_SAFE_INTEGER => i.to_string(),
                _ => continue,
            },
            _ => continue,
        };
        out.push((format!("Mcp-Param-{}", d.name), value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn http16_encoding() {
        assert_eq!(encode_value("lookup"), "lookup");
        assert_eq!(encode_value("a b"), "a b");
        for s in [
            " lead",
            "trail ",
            "caf\u{e9}",
            "line\nbreak",
            "=?base64?abc?=",
        ] {
            let e = encode_value(s);
            assert!(
                e.starts_with("=?base64?") && e.ends_with("?="),
                "{s:?} → {e}"
            );
            assert_eq!(decode_value(&e).as_deref(), Some(s));
        }
        assert_eq!(encode_value("caf\u{e9}"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(decode_value("=?base64?!!?="), None);
    }

    #[test]
    fn http14_rules() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let d = tool_param_headers(&ok).unwrap();
        assert_eq!(d.len(), 2);
        for bad in [
            json!({"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "bad name"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}}),
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}]}),
        ] {
            assert!(tool_param_headers(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn http15_mirroring() {
        let decls = tool_param_headers(&json!({"type": "object", "properties": {
            "s": {"type": "string", "x-mcp-header": "S"},
            "i": {"type": "integer", "x-mcp-header": "I"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "n": {"type": "string", "x-mcp-header": "Null"},
        }}))
        .unwrap();
        let h = param_headers(
            &decls,
            Some(&json!({"s": "é", "i": 42, "b": false, "n": null})),
        );
        assert!(h.contains(&("Mcp-Param-S".into(), "=?base64?w6k=?=".into())));
        assert!(h.contains(&("Mcp-Param-I".into(), "42".into())));
        assert!(h.contains(&("Mcp-Param-B".into(), "false".into())));
        assert_eq!(h.len(), 3);
    }
}
