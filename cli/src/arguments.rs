//! A tool's arguments from the command line: one JSON object, or `key=value` pairs read as the
//! tool's input schema types each property (a number where it asks for a number, `true` where it
//! asks for a boolean, JSON where it asks for an object or array), and `key:=JSON` pairs taken
//! as JSON whatever the schema says. The result is checked against the schema before it is sent
//! (TOOL-03: the server would refuse it anyway, with less to go on).

use serde_json::{Map, Value};

/// Build the arguments object from `words` (`schema`: the tool's `inputSchema`, when known).
pub(crate) fn parse(
    words: &[String],
    schema: Option<&Value>,
) -> Result<Map<String, Value>, String> {
    if let [only] = words {
        if only.trim_start().starts_with('{') {
            return match serde_json::from_str(only) {
                Ok(Value::Object(m)) => Ok(m),
                Ok(_) => Err("the arguments must be a JSON object".into()),
                Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
            };
        }
    }
    let mut out = Map::new();
    for w in words {
        let (key, value) = if let Some((k, json)) = w.split_once(":=") {
            let v = serde_json::from_str(json)
                .map_err(|e| format!("{k}:= takes JSON ({e}): {json}"))?;
            (k, v)
        } else if let Some((k, text)) = w.split_once('=') {
            (k, typed(k, text, schema)?)
        } else {
            return Err(format!(
                "{w:?} is not key=value, key:=JSON or one JSON object"
            ));
        };
        if key.is_empty() {
            return Err(format!("{w:?} has no key"));
        }
        if out.insert(key.to_owned(), value).is_some() {
            return Err(format!("{key} is given twice"));
        }
    }
    Ok(out)
}

/// The JSON types a property's schema allows (`type` as a string or a list).
fn types(prop: &Value) -> Vec<&str> {
    match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `text` read as the type the schema gives property `key`.
fn typed(key: &str, text: &str, schema: Option<&Value>) -> Result<Value, String> {
    let prop = schema.and_then(|s| s.pointer(&format!("/properties/{}", pointer_escape(key))));
    let Some(prop) = prop else {
        return Ok(Value::String(text.to_owned()));
    };
    let allowed = types(prop);
    if allowed.is_empty() || allowed.contains(&"string") {
        return Ok(Value::String(text.to_owned()));
    }
    let as_json = serde_json::from_str::<Value>(text).ok();
    for t in &allowed {
        let fits = match (t, &as_json) {
            (&"integer", Some(v)) => v.is_i64() || v.is_u64(),
            (&"number", Some(v)) => v.is_number(),
            (&"boolean", Some(v)) => v.is_boolean(),
            (&"null", Some(v)) => v.is_null(),
            (&"object", Some(v)) => v.is_object(),
            (&"array", Some(v)) => v.is_array(),
            _ => false,
        };
        if fits {
            return Ok(as_json.unwrap_or(Value::Null));
        }
    }
    Err(format!(
        "{key}={text}: the tool takes {} here",
        allowed.join(" or ")
    ))
}

/// A key as a JSON Pointer segment (RFC 6901).
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Check `args` against the tool's `inputSchema`; every failure, each with where it is.
pub(crate) fn check(args: &Map<String, Value>, schema: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the tool's input schema cannot be used: {e}"))?;
    let instance = Value::Object(args.clone());
    let problems: Vec<String> = validator
        .iter_errors(&instance)
        .take(10)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the arguments do not match the tool's input schema:\n  {}",
            problems.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "text": {"type": "string"}, "n": {"type": "integer"}, "x": {"type": "number"},
            "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}},
            "maybe": {"type": ["integer", "null"]}},
            "required": ["text"], "additionalProperties": false})
    }

    #[test]
    fn pairs_are_read_as_the_schema_types_them() {
        let s = schema();
        let a = parse(
            &words(&[
                "text=42",
                "n=7",
                "x=2.5",
                "ok=true",
                r#"tags=["a"]"#,
                "maybe=null",
            ]),
            Some(&s),
        )
        .unwrap();
        assert_eq!(
            Value::Object(a),
            json!({"text": "42", "n": 7, "x": 2.5, "ok": true, "tags": ["a"], "maybe": null})
        );
        let e = parse(&words(&["n=seven"]), Some(&s)).unwrap_err();
        assert!(e.contains("n=seven") && e.contains("integer"), "{e}");
        let e = parse(&words(&["n=1.5"]), Some(&s)).unwrap_err();
        assert!(e.contains("integer"), "{e}");
    }

    #[test]
    fn json_forms_and_mistakes() {
        let a = parse(&words(&[r#"{"text": "hi", "n": 1}"#]), None).unwrap();
        assert_eq!(Value::Object(a), json!({"text": "hi", "n": 1}));
        let a = parse(&words(&["text:=123", "other=x"]), Some(&schema())).unwrap();
        assert_eq!(Value::Object(a), json!({"text": 123, "other": "x"}));
        assert!(parse(&words(&["[1]"]), None)
            .unwrap_err()
            .contains("key=value"));
        assert!(parse(&words(&["{nope"]), None)
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(parse(&words(&["a=1", "a=2"]), None)
            .unwrap_err()
            .contains("twice"));
        assert!(parse(&words(&["=1"]), None).unwrap_err().contains("no key"));
        assert!(parse(&words(&["n:={"]), None)
            .unwrap_err()
            .contains("takes JSON"));
    }

    #[test]
    fn the_schema_is_checked_before_sending() {
        let s = schema();
        assert!(check(&parse(&words(&["text=hi"]), Some(&s)).unwrap(), &s).is_ok());
        let e = check(&parse(&words(&["n=1"]), Some(&s)).unwrap(), &s).unwrap_err();
        assert!(e.contains("text"), "names the missing property: {e}");
        let e = check(
            &parse(&words(&["text=a", "extra=1"]), Some(&s)).unwrap(),
            &s,
        )
        .unwrap_err();
        assert!(e.contains("extra"), "names the unexpected property: {e}");
    }
}
