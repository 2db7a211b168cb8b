//! `x-mcp-header` and the `Mcp-Name` / `Mcp-Param-*` request headers of the modern era over HTTP
//! (REQUIREMENTS HTTP-10, HTTP-14, HTTP-15, HTTP-16). One definition, shared by the server's
//! registration check, the HTTP server's header↔body check and the HTTP client.
//!
//! Declaration rules (HTTP-14): the value is a non-empty RFC 9110 token (`tchar`, so no CR/LF/CTL
//! or spaces); unique case-insensitively within the schema; only on a property whose `type` is
//! `string`, `integer` or `boolean` (optionally together with `"null"`; never `number`); and only
//! on properties reachable purely through nested `properties` keywords, never through `items`,
//! composition (`anyOf`/`oneOf`/`allOf`/`not`), conditionals, `$defs` or other subschema keywords.
//! A server refuses to register a tool that breaks them; a client over HTTP drops it from its view.
//!
//! Value encoding (HTTP-16): a value that is not plain visible ASCII (or has leading or trailing
//! whitespace, control characters, or already looks like the sentinel) travels as
//! `=?base64?<base64 of UTF-8>?=`; the receiver decodes before comparing.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

/// The schema annotation.
const KEY: &str = "x-mcp-header";
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
/// Largest integer a header may mirror (±(2^53−1), HTTP-14).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
/// Nesting beyond which a schema is refused rather than walked (schemas may come from a peer).
const MAX_DEPTH: usize = 128;

/// Keywords whose value maps names to subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is one subschema (or, for `items`, possibly an array of them).
const SCHEMA_ONE: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// HTTP-10: the params key `Mcp-Name` mirrors for `method` (`None`: the method sends no
/// `Mcp-Name`).
pub fn name_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // The tasks extension routes its methods by task (HTTP-09, SEP-2663).
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// HTTP-15: true for the method whose `arguments` are mirrored into `Mcp-Param-*` headers (the
/// declarations are those of the tool `params.name` names).
pub fn mirrors_arguments(method: &str) -> bool {
    method == "tools/call"
}

/// One `x-mcp-header` declaration: the header suffix and the property path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `Name` of `Mcp-Param-{Name}`, as declared.
    pub name: String,
    /// Property names from the arguments root.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// The header field name, `Mcp-Param-{Name}`.
    pub fn header_name(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The argument this declaration mirrors; a JSON `null` reads as absent.
    pub fn argument<'a>(&self, arguments: Option<&'a Value>) -> Option<&'a Value> {
        let mut cur = arguments;
        for seg in &self.path {
            cur = cur.and_then(|c| c.get(seg));
        }
        cur.filter(|v| !v.is_null())
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Every `x-mcp-header` declaration of a tool's `inputSchema`, checked against the rules above.
///
/// # Errors
/// The first offending declaration, with its JSON pointer.
pub fn declarations(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut walk = Walk::default();
    walk.schema(schema, "", Some(&[]), 0)?;
    Ok(walk.out)
}

#[derive(Default)]
struct Walk {
    /// Lowercased names seen so far (uniqueness is case-insensitive).
    seen: Vec<String>,
    out: Vec<ParamHeader>,
}

impl Walk {
    /// `props`: the property path while the walk is still purely through `properties`.
    fn schema(
        &mut self,
        schema: &Value,
        at: &str,
        props: Option<&[String]>,
        depth: usize,
    ) -> Result<(), String> {
        let Some(obj) = schema.as_object() else {
            return Ok(());
        };
        if depth > MAX_DEPTH {
            return Err(format!("{at}: the schema nests too deeply"));
        }
        if let Some(decl) = obj.get(KEY) {
            self.declaration(decl, obj.get("type"), &format!("{at}/{KEY}"), props)?;
        }
        for (k, v) in obj {
            let k = k.as_str();
            if SCHEMA_MAPS.contains(&k) {
                let Some(m) = v.as_object() else { continue };
                for (name, sub) in m {
                    let path = format!("{at}/{k}/{}", pointer_escape(name));
                    let deeper = props.filter(|_| k == "properties").map(|p| {
                        let mut p = p.to_vec();
                        p.push(name.clone());
                        p
                    });
                    self.schema(sub, &path, deeper.as_deref(), depth + 1)?;
                }
            } else if SCHEMA_ONE.contains(&k) || SCHEMA_LISTS.contains(&k) {
                match v {
                    Value::Array(a) => {
                        for (i, sub) in a.iter().enumerate() {
                            self.schema(sub, &format!("{at}/{k}/{i}"), None, depth + 1)?;
                        }
                    }
                    other => self.schema(other, &format!("{at}/{k}"), None, depth + 1)?,
                }
            }
        }
        Ok(())
    }

    fn declaration(
        &mut self,
        decl: &Value,
        ty: Option<&Value>,
        here: &str,
        props: Option<&[String]>,
    ) -> Result<(), String> {
        // The root schema is the arguments object itself, not a property.
        let path = match props {
            Some(p) if !p.is_empty() => p,
            _ => {
                return Err(format!(
                    "{here}: x-mcp-header is only allowed on properties reachable through nested \
                     `properties` (not items, composition, conditionals or $defs)"
                ))
            }
        };
        let Some(name) = decl.as_str() else {
            return Err(format!("{here}: the header name must be a string"));
        };
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(format!(
                "{here}: {name:?} is not a valid header name token (RFC 9110 tchar)"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if self.seen.contains(&lower) {
            return Err(format!(
                "{here}: header name {name:?} is declared more than once (case-insensitively)"
            ));
        }
        self.seen.push(lower);
        if !primitive_type(ty) {
            return Err(format!(
                "{here}: x-mcp-header is only allowed on string, integer or boolean properties"
            ));
        }
        self.out.push(ParamHeader {
            name: name.to_owned(),
            path: path.to_vec(),
        });
        Ok(())
    }
}

/// `type` is one of string/integer/boolean, alone or with `"null"`.
fn primitive_type(t: Option<&Value>) -> bool {
    let ok = |s: &str| matches!(s, "string" | "integer" | "boolean");
    match t {
        Some(Value::String(s)) => ok(s),
        Some(Value::Array(a)) => {
            let named: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            named.len() == a.len()
                && named.iter().filter(|s| ok(s)).count() == 1
                && named.iter().all(|s| ok(s) || *s == "null")
        }
        _ => false,
    }
}

fn is_plain(b: u8) -> bool {
    b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b)
}

/// Encode one `Mcp-Name` / `Mcp-Param-*` value (HTTP-16).
pub fn encode_value(s: &str) -> String {
    let plain = s.bytes().all(is_plain);
    let trimmed = s.trim_matches(|c| c == ' ' || c == '\t') == s;
    let sentinel = s.starts_with(SENTINEL_PREFIX) && s.ends_with(SENTINEL_SUFFIX);
    if plain && trimmed && !sentinel {
        s.to_owned()
    } else {
        format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(s.as_bytes())
        )
    }
}

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
/// `=?base64?<base64(UTF-8)>?=` form decoded (HTTP-16; the inverse of [`encode_value`]).
///
/// # Errors
/// See [`HeaderValueError`].
pub fn decode_value(raw: &[u8]) -> Result<String, HeaderValueError> {
    decode_value_in_place(raw).map(std::borrow::Cow::into_owned)
}

/// [`decode_value`] borrowing a plain value (the common case: checked on every modern request
/// that names a tool) instead of copying it.
pub(crate) fn decode_value_in_place(
    raw: &[u8],
) -> Result<std::borrow::Cow<'_, str>, HeaderValueError> {
    if !raw.iter().all(|&b| is_plain(b)) {
        return Err(HeaderValueError::InvalidCharacters);
    }
    let s = std::str::from_utf8(raw).map_err(|_| HeaderValueError::InvalidCharacters)?;
    // Only a value with both markers is encoded; anything else (e.g. a missing `?=`) is literal.
    let Some(payload) = s
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Ok(std::borrow::Cow::Borrowed(s));
    };
    let bytes = STANDARD
        .decode(payload)
        .map_err(|_| HeaderValueError::MalformedBase64)?;
    String::from_utf8(bytes)
        .map(std::borrow::Cow::Owned)
        .map_err(|_| HeaderValueError::MalformedBase64)
}

/// The `Mcp-Param-*` headers for `arguments` (HTTP-15): strings as-is (encoded when needed),
/// integers within ±(2^53−1) in decimal, booleans `true`/`false`; null, absent or other values
/// send no header.
pub fn param_headers(decls: &[ParamHeader], arguments: Option<&Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in decls {
        let value = match d.argument(arguments) {
            Some(Value::String(s)) => encode_value(s),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => match n.as_i64() {
                // `unsigned_abs`: `i64::MIN.abs()` overflows (a panic in debug builds), and the
                // arguments of a tool whose schema a server sent are the caller's to choose.
                Some(i) if i.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs() => i.to_string(),
                _ => continue,
            },
            _ => continue,
        };
        out.push((d.header_name(), value));
    }
    out
}

/// True when a decoded `Mcp-Param-*` value mirrors the argument `v` exactly (HTTP-15).
pub fn mirrors(header: &str, v: &Value) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(prop: Value) -> Value {
        json!({"type": "object", "properties": {"p": prop}})
    }

    #[test]
    fn http14_valid_declarations() {
        let s = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": ["integer", "null"], "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "X-Flag_1.~"},
            "opts": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
            "x-mcp-header": {"type": "string"},
            "d": {"type": "string", "default": {"x-mcp-header": "data, not a declaration"}}
        }});
        let d = declarations(&s).expect("valid");
        assert_eq!(d.len(), 4);
        assert!(d.contains(&ParamHeader {
            name: "Deep".into(),
            path: vec!["opts".into(), "deep".into()]
        }));
    }

    #[test]
    fn http14_invalid_declarations() {
        let bad = [
            with(json!({"type": "string", "x-mcp-header": ""})),
            with(json!({"type": "string", "x-mcp-header": "Has Space"})),
            with(json!({"type": "string", "x-mcp-header": "Bad\r\nX"})),
            with(json!({"type": "string", "x-mcp-header": "Région"})),
            with(json!({"type": "string", "x-mcp-header": 5})),
            with(json!({"type": "number", "x-mcp-header": "N"})),
            with(json!({"type": "object", "x-mcp-header": "O"})),
            with(json!({"x-mcp-header": "Untyped"})),
            with(json!({"type": ["string", "integer"], "x-mcp-header": "Two"})),
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "sAME"}}}),
            with(
                json!({"type": "array", "items": {"type": "object", "properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}}),
            ),
            with(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "I"}})),
            json!({"type": "object", "anyOf": [{"properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}]}),
            json!({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}}),
            json!({"type": "object", "if": {"properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}}),
        ];
        for s in bad {
            assert!(declarations(&s).is_err(), "accepted {s}");
        }
        let e = declarations(&with(json!({"type": "number", "x-mcp-header": "N"}))).unwrap_err();
        assert!(e.starts_with("/properties/p/x-mcp-header"), "{e}");
    }

    #[test]
    fn http16_encoding_round_trips() {
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
            assert_eq!(decode_value(e.as_bytes()).as_deref(), Ok(s));
        }
        assert_eq!(encode_value("caf\u{e9}"), "=?base64?Y2Fmw6k=?=");
    }

    #[test]
    fn http16_decoding() {
        assert_eq!(decode_value(b"plain name").as_deref(), Ok("plain name"));
        assert_eq!(
            decode_value(b"=?base64?w6ljaG8=?=").as_deref(),
            Ok("\u{e9}cho")
        );
        assert_eq!(
            decode_value(b"=?base64?!!?="),
            Err(HeaderValueError::MalformedBase64)
        );
        assert_eq!(
            decode_value(b"=?base64?w6lj").as_deref(),
            Ok("=?base64?w6lj"),
            "without the ?= suffix the value is literal"
        );
        assert_eq!(
            decode_value(b"a\x01b"),
            Err(HeaderValueError::InvalidCharacters)
        );
        assert_eq!(
            decode_value("é".as_bytes()),
            Err(HeaderValueError::InvalidCharacters)
        );
    }

    #[test]
    fn http15_mirroring() {
        let decls = declarations(&json!({"type": "object", "properties": {
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
        assert!(mirrors("42", &json!(42)));
        assert!(mirrors("false", &json!(false)));
        assert!(!mirrors("7", &json!(8)));
        assert!(!mirrors("x", &json!(null)));
    }

    /// Found writing the `mcp_header` fuzz target: an integer argument of `i64::MIN` overflowed
    /// the HTTP-14 safe-integer check (`abs`) and panicked in debug builds. Out of range, it
    /// sends no header, like any integer beyond ±(2^53−1).
    #[test]
    fn http15_extreme_integers_send_no_header() {
        let decls = declarations(&json!({"type": "object", "properties": {
            "i": {"type": "integer", "x-mcp-header": "I"},
        }}))
        .unwrap();
        for n in [
            i64::MIN,
            i64::MIN + 1,
            i64::MAX,
            MAX_SAFE_INTEGER + 1,
            -MAX_SAFE_INTEGER - 1,
        ] {
            assert!(
                param_headers(&decls, Some(&json!({"i": n}))).is_empty(),
                "{n}"
            );
        }
        for n in [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0] {
            let h = param_headers(&decls, Some(&json!({"i": n})));
            assert_eq!(h, vec![("Mcp-Param-I".to_owned(), n.to_string())]);
        }
    }

    #[test]
    fn http10_name_keys() {
        assert_eq!(name_key("tools/call"), Some("name"));
        assert_eq!(name_key("prompts/get"), Some("name"));
        assert_eq!(name_key("tasks/update"), Some("taskId"));
        assert_eq!(name_key("tasks/list"), None);
        assert_eq!(name_key("resources/read"), Some("uri"));
        assert_eq!(name_key("tools/list"), None);
        assert_eq!(name_key("tasks/get"), Some("taskId"));
        assert_eq!(name_key("tasks/cancel"), Some("taskId"));
        assert!(mirrors_arguments("tools/call"));
        assert!(!mirrors_arguments("prompts/get"));
    }
}
