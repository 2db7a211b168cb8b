//! Tool schema handling (REQUIREMENTS JSS-01…03, TOOL-03, TOOL-05; issue: SEP-1303).
//!
//! Schemas are checked and compiled once, at registration: the 2020-12 metaschema must accept
//! them, nesting is bounded (64), the number of subschemas is bounded (10,000), and every
//! `$ref`/`$dynamicRef` must be same-document (`#…`). Nothing is ever fetched.

use serde_json::Value;

/// Deepest accepted schema nesting.
pub const MAX_SCHEMA_DEPTH: usize = 64;
/// Most subschemas (objects) in one schema.
pub const MAX_SUBSCHEMAS: usize = 10_000;

/// A compiled schema.
pub struct Validator {
    inner: jsonschema::Validator,
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Validator")
    }
}

impl Validator {
    /// Validate an instance. `Err` carries an actionable message naming the failing location.
    ///
    /// # Errors
    /// A description of the first few violations.
    pub fn validate(&self, instance: &Value) -> Result<(), String> {
        if self.inner.is_valid(instance) {
            return Ok(());
        }
        let msgs: Vec<String> = self
            .inner
            .iter_errors(instance)
            .take(5)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "(root)".to_owned()
                } else {
                    path
                };
                format!("{at}: {e}")
            })
            .collect();
        Err(msgs.join("; "))
    }
}

fn check_bounds(schema: &Value) -> Result<(), String> {
    let mut count = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(schema, 1)];
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!("schema nesting exceeds {MAX_SCHEMA_DEPTH} levels"));
        }
        match v {
            Value::Object(map) => {
                count += 1;
                if count > MAX_SUBSCHEMAS {
                    return Err(format!("schema has more than {MAX_SUBSCHEMAS} subschemas"));
                }
                for key in ["$ref", "$dynamicRef"] {
                    if let Some(r) = map.get(key) {
                        match r.as_str() {
                            Some(s) if s.starts_with('#') => {}
                            _ => {
                                return Err(format!(
                                    "{key} {r} is not a same-document reference; external references are never fetched"
                                ))
                            }
                        }
                    }
                }
                for (k, child) in map {
                    // `const`, `enum`, `default` and `examples` hold instances, not schemas.
                    if matches!(k.as_str(), "const" | "enum" | "default" | "examples") {
                        continue;
                    }
                    stack.push((child, depth + 1));
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

fn compile(schema: &Value) -> Result<Validator, String> {
    check_bounds(schema)?;
    jsonschema::meta::validate(schema)
        .map_err(|e| format!("schema is not valid JSON Schema: {e}"))?;
    let inner =
        jsonschema::validator_for(schema).map_err(|e| format!("schema cannot be compiled: {e}"))?;
    Ok(Validator { inner })
}

/// Compile a tool input schema: any 2020-12 schema whose root is `type: "object"`.
///
/// # Errors
/// Why the schema is refused.
pub fn compile_input(schema: &Value) -> Result<Validator, String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("inputSchema must have \"type\": \"object\" at its root".into());
    }
    compile(schema)
}

/// Compile an output schema: any 2020-12 schema, used verbatim (nothing injected).
///
/// # Errors
/// Why the schema is refused.
pub fn compile_output(schema: &Value) -> Result<Validator, String> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err("outputSchema must be a JSON Schema object".into());
    }
    compile(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jss_bounds() {
        let mut deep = json!({"type": "string"});
        for _ in 0..70 {
            deep = json!({"type": "array", "items": deep});
        }
        let root = json!({"type": "object", "properties": {"x": deep}});
        assert!(compile_input(&root).unwrap_err().contains("nesting"));

        let props: serde_json::Map<String, Value> = (0..10_001)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        let wide = json!({"type": "object", "properties": props});
        assert!(compile_input(&wide).unwrap_err().contains("subschemas"));

        let ext =
            json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}});
        assert!(compile_input(&ext).unwrap_err().contains("same-document"));

        let local = json!({"type": "object", "$defs": {"n": {"type": "integer"}},
            "properties": {"x": {"$ref": "#/$defs/n"}}});
        let v = compile_input(&local).unwrap();
        assert!(v.validate(&json!({"x": 1})).is_ok());
        assert!(v.validate(&json!({"x": "a"})).unwrap_err().contains("/x"));
    }

    #[test]
    fn input_root_must_be_object() {
        assert!(compile_input(&json!({"type": "string"})).is_err());
        assert!(
            compile_output(&json!({"oneOf": [{"type": "string"}, {"type": "number"}]})).is_ok()
        );
        assert!(
            compile_input(&json!({"type": "object", "properties": {"a": {"type": 5}}})).is_err()
        );
    }
}
