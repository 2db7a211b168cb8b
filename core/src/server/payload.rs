//! A result object as core sends it: a [`Value`] tree, or JSON text a handler produced that core
//! passes through unparsed.
//!
//! C handlers answer with JSON text. Building a `Value` tree from it only to serialize it again
//! costs an allocation per key, string and object, and was most of a C handler's overhead over a
//! Rust one. Core reads what it needs (which top-level members are present) with one borrowed
//! scan and keeps the text when the result needs no reshaping; anything unusual falls back to
//! the tree, so both forms follow the same rules.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// A result object: a tree, or validated JSON text kept as written.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A JSON tree.
    Value(Value),
    /// Validated JSON text (no surrounding whitespace), sent as it is.
    Json(Box<RawValue>),
}

impl Payload {
    /// The result as a tree (parsing the text form).
    pub fn into_value(self) -> Value {
        match self {
            Self::Value(v) => v,
            Self::Json(raw) => parse(&raw),
        }
    }

    /// A copy of the result as a tree.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Value(v) => v.clone(),
            Self::Json(raw) => parse(raw),
        }
    }

    /// The tree, when the result is held as one.
    pub fn as_value(&self) -> Option<&Value> {
        match self {
            Self::Value(v) => Some(v),
            Self::Json(_) => None,
        }
    }
}

/// Text validated by `RawValue` is JSON, and serde_json's tree accepts the same nesting depth,
/// so this does not fail; `Null` is the answer if it ever did (never a panic).
fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

impl From<Value> for Payload {
    fn from(v: Value) -> Self {
        Self::Value(v)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Value(a), Self::Value(b)) => a == b,
            (a, b) => a.to_value() == b.to_value(),
        }
    }
}

impl PartialEq<Value> for Payload {
    fn eq(&self, other: &Value) -> bool {
        match self {
            Self::Value(v) => v == other,
            Self::Json(raw) => &parse(raw) == other,
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(v) => v.serialize(s),
            Self::Json(raw) => raw.serialize(s),
        }
    }
}

/// What one scan of a JSON result object found at its top level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TopLevel {
    pub content: bool,
    pub structured_content: bool,
    pub meta: bool,
    pub result_type: bool,
    pub cache_hints: bool,
}

/// Scan `raw`'s top-level member names without building a tree. `None` when it is not an
/// object, a name core looks at appears twice, or a name is written with escapes: the tree path
/// then decides (keeping the last duplicate, as a `Map` does).
///
/// `raw` was validated when it was made, so values are skipped by counting brackets and
/// strings rather than parsed; malformed text still ends in `None`, never a panic.
pub(crate) fn top_level(raw: &RawValue) -> Option<TopLevel> {
    scan(raw.get().as_bytes())
}

fn scan(b: &[u8]) -> Option<TopLevel> {
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut t = TopLevel::default();
    let mut hints = (false, false);
    let mut i = 1;
    loop {
        i = skip_ws(b, i);
        match *b.get(i)? {
            b'}' => {
                t.cache_hints = hints.0 || hints.1;
                return Some(t);
            }
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let start = i + 1;
        let end = start
            + b.get(start..)?
                .iter()
                .position(|&c| c == b'"' || c == b'\\')?;
        if b[end] == b'\\' {
            return None;
        }
        let seen = match &b[start..end] {
            b"content" => Some(&mut t.content),
            b"structuredContent" => Some(&mut t.structured_content),
            b"_meta" => Some(&mut t.meta),
            b"resultType" => Some(&mut t.result_type),
            b"ttlMs" => Some(&mut hints.0),
            b"cacheScope" => Some(&mut hints.1),
            _ => None,
        };
        if let Some(seen) = seen {
            if *seen {
                return None;
            }
            *seen = true;
        }
        i = skip_ws(b, end + 1);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_value(b, i + 1)?;
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The index just past the string whose opening quote is before `i`.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let at = i + b.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
        if b[at] == b'"' {
            return Some(at + 1);
        }
        i = at + 2; // an escape: the next byte is escaped (`\uXXXX` digits are plain bytes)
    }
}

/// Skip one value starting at or after `i`: returns the index just past it (a scalar ends at
/// the `,` or `}` that follows it, which is not consumed).
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => {
                i = skip_string(b, i + 1)?;
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(i),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
}

/// The members a modern JSON-text result gets in front: `resultType` and, when `info` is given,
/// `_meta` with the server's identity under `key` (META-02). Made once per server.
pub(crate) fn complete_head(key: &str, info: Option<&Value>) -> String {
    let mut out = String::from(r#""resultType":"complete""#);
    if let Some(info) = info {
        out.push_str(r#","_meta":{"#);
        push_json(&mut out, key);
        out.push(':');
        push_json(&mut out, info);
        out.push('}');
    }
    out
}

/// `raw` with `head` (from `complete_head`) put first; `raw` must be an object holding neither
/// `resultType` nor `_meta` (`top_level` says so).
pub(crate) fn stamp_modern(raw: &RawValue, head: &str) -> Box<RawValue> {
    let text = raw.get();
    let Some(rest) = text.strip_prefix('{').map(str::trim_start) else {
        return raw.to_owned();
    };
    let mut out = String::with_capacity(text.len() + head.len() + 2);
    out.push('{');
    out.push_str(head);
    if !rest.starts_with('}') {
        out.push(',');
    }
    out.push_str(rest);
    // Both parts are JSON already, so this only re-checks what was just written.
    RawValue::from_string(out).unwrap_or_else(|_| raw.to_owned())
}

fn push_json<T: Serialize + ?Sized>(out: &mut String, v: &T) {
    if let Ok(s) = serde_json::to_string(v) {
        out.push_str(&s);
    }
}

impl super::Session {
    /// `stamp_complete` for a JSON-text result: the text is kept (and, modern, given
    /// `resultType` and the server's identity in front) when the result is an object that needs
    /// none of `stamp_complete`'s edits: no cache hints to add, no stale members to drop, no
    /// `_meta` or `resultType` of its own to merge with. Anything else is parsed and stamped as
    /// a tree.
    pub(super) fn stamp_complete_json(
        &self,
        method: &str,
        raw: Box<RawValue>,
        modern: bool,
        retried: bool,
    ) -> Payload {
        let opts = &self.server.inner.options;
        let cacheable =
            (modern || opts.legacy_cache_hints) && super::dispatch::CACHEABLE.contains(&method);
        let plain = top_level(&raw).filter(|t| {
            !cacheable
                && if modern {
                    !t.meta && !t.result_type
                } else {
                    !(super::methods::BUILT_IN.contains(&method)
                        && (t.result_type || t.cache_hints))
                }
        });
        match plain {
            Some(_) if modern => {
                Payload::Json(stamp_modern(&raw, &self.server.inner.complete_head))
            }
            Some(_) => Payload::Json(raw),
            None => {
                let v = Payload::Json(raw).into_value();
                let mut v = self.stamp_complete(method, v, modern, retried);
                if modern && opts.stamp_server_info {
                    super::era::stamp_server_info(&mut v, &self.server.inner.server_info);
                }
                v.into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(s: &str) -> Box<RawValue> {
        serde_json::from_str(s).expect("json")
    }

    #[test]
    fn top_level_sees_members_null_included() {
        let t = top_level(&raw(
            r#" {"content": null, "_meta": {"content": 1}, "x": [1]} "#,
        ));
        let t = t.expect("object");
        assert!(t.content && t.meta && !t.structured_content && !t.result_type);
        assert!(!t.cache_hints);
        let t = top_level(&raw(
            r#"{"ttlMs": 5, "resultType": "x", "structuredContent": {}}"#,
        ));
        let t = t.expect("object");
        assert!(t.cache_hints && t.result_type && t.structured_content && !t.content);
    }

    #[test]
    fn top_level_refuses_non_objects_and_duplicates() {
        // A derived struct would accept an array as a sequence: the leading `{` check stops it.
        assert_eq!(top_level(&raw("[1, 2, 3, 4, 5, 6]")), None);
        assert_eq!(top_level(&raw(r#""text""#)), None);
        assert_eq!(top_level(&raw(r#"{"content": [], "content": []}"#)), None);
        assert_eq!(
            top_level(&raw(r#"{"\u0063ontent": []}"#)),
            None,
            "escaped name"
        );
    }

    #[test]
    fn top_level_skips_values_of_every_kind() {
        let text = r#"{"a": "x\"}{,\\", "b": [1, {"content": "]"}, [[]]], "c": -1.5e3,
            "d": true, "e": null, "f": {"g": {"_meta": {}}}, "content": [], "h": "\u007d"}"#;
        let t = top_level(&raw(text)).expect("object");
        assert_eq!(
            t,
            TopLevel {
                content: true,
                ..TopLevel::default()
            },
            "names inside nested values and strings are not members"
        );
        let t = top_level(&raw(r#"{"x":1,"_meta":{"a":[]},"resultType":"y"}"#)).expect("object");
        assert!(t.meta && t.result_type && !t.content);
        assert_eq!(top_level(&raw("{}")), Some(TopLevel::default()));
    }

    #[test]
    fn top_level_never_panics_on_text_that_was_not_validated() {
        for bad in [
            r#"{"a"#,
            r#"{"a":"#,
            r#"{"a":[1,"#,
            r#"{"a":"\"#,
            "{",
            r#"{"a" 1}"#,
            "{1}",
        ] {
            // `RawValue` refuses these, so the byte scanner is fed them directly.
            assert_eq!(scan(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn stamp_modern_puts_type_and_identity_first() {
        let info = json!({"name": "s", "version": "1"});
        let head = complete_head("k/serverInfo", Some(&info));
        let out = stamp_modern(&raw(r#"{"content":[]}"#), &head);
        let v: Value = serde_json::from_str(out.get()).expect("json");
        assert_eq!(
            v,
            json!({"resultType": "complete", "_meta": {"k/serverInfo": info}, "content": []})
        );
        let empty = stamp_modern(&raw("{ }"), &complete_head("k", None));
        assert_eq!(empty.get(), r#"{"resultType":"complete"}"#);
    }

    #[test]
    fn payload_compares_by_value_across_forms() {
        let text = Payload::Json(raw(r#"{"b": 1, "a": [true]}"#));
        assert_eq!(text, json!({"a": [true], "b": 1}));
        assert_eq!(text, Payload::Value(json!({"b": 1, "a": [true]})));
        assert_eq!(text.clone().into_value(), json!({"a": [true], "b": 1}));
        assert_eq!(
            serde_json::to_string(&text).expect("ser"),
            r#"{"b": 1, "a": [true]}"#
        );
    }
}
