//! Registration-time rules for `x-mcp-header` declarations in a tool's `inputSchema`
//! (REQUIREMENTS HTTP-14). A client over HTTP must drop a tool that breaks them, so the server
//! refuses to register one instead of advertising a tool nobody can call.
//!
//! Rules: the value is a non-empty RFC 9110 token (`tchar`, so no CR/LF/CTL or spaces); unique
//! case-insensitively within the schema; only on a property whose `type` is `string`, `integer`
//! or `boolean` (optionally together with `"null"`; never `number`); and only on properties
//! reachable purely through nested `properties` keywords, never through `items`, composition
//! (`anyOf`/`oneOf`/`allOf`/`not`), conditionals, `$defs` or other subschema keywords.

use serde_json::Value;

const KEY: &str = "x-mcp-header";

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

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Check every declaration in `schema`.
///
/// # Errors
/// The first offending declaration, with its JSON pointer.
pub(crate) fn check(schema: &Value) -> Result<(), String> {
    let mut seen = Vec::new();
    walk(schema, "", true, &mut seen)
}

fn walk(schema: &Value, at: &str, pure: bool, seen: &mut Vec<String>) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        return Ok(());
    };
    if let Some(decl) = obj.get(KEY) {
        let here = format!("{at}/{KEY}");
        // The root schema is the arguments object itself, not a property.
        if !pure || at.is_empty() {
            return Err(format!(
                "{here}: x-mcp-header is only allowed on properties reachable through nested \
                 `properties` (not items, composition, conditionals or $defs)"
            ));
        }
        let Some(name) = decl.as_str() else {
            return Err(format!("{here}: the header name must be a string"));
        };
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(format!(
                "{here}: {name:?} is not a valid header name token (RFC 9110 tchar)"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "{here}: header name {name:?} is declared more than once (case-insensitively)"
            ));
        }
        seen.push(lower);
        if !primitive_type(obj.get("type")) {
            return Err(format!(
                "{here}: x-mcp-header is only allowed on string, integer or boolean properties"
            ));
        }
    }
    for (k, v) in obj {
        let k = k.as_str();
        if SCHEMA_MAPS.contains(&k) {
            if let Some(m) = v.as_object() {
                for (name, sub) in m {
                    let path = format!("{at}/{k}/{}", pointer_escape(name));
                    walk(sub, &path, pure && k == "properties", seen)?;
                }
            }
        } else if SCHEMA_ONE.contains(&k) || SCHEMA_LISTS.contains(&k) {
            match v {
                Value::Array(a) => {
                    for (i, sub) in a.iter().enumerate() {
                        walk(sub, &format!("{at}/{k}/{i}"), false, seen)?;
                    }
                }
                other => walk(other, &format!("{at}/{k}"), false, seen)?,
            }
        }
    }
    Ok(())
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
        assert_eq!(check(&s), Ok(()));
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
            json!({"type": "object", "anyOf": [{"properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}]}),
            json!({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}}),
            json!({"type": "object", "if": {"properties": {
                "x": {"type": "string", "x-mcp-header": "X"}}}}),
        ];
        for s in bad {
            assert!(check(&s).is_err(), "accepted {s}");
        }
        let e = check(&with(json!({"type": "number", "x-mcp-header": "N"}))).unwrap_err();
        assert!(e.starts_with("/properties/p/x-mcp-header"), "{e}");
    }
}
