//! RFC 6570 URI templates matched against URIs (REQUIREMENTS RES-01): level-1 simple string
//! expansion `{var}` plus reserved expansion `{+var}`.
//!
//! Matching inverts the expansion. A `{var}` value was percent-encoded for everything outside
//! the unreserved set, so it never contains a raw `/`, `?` or `#`; a `{+var}` value keeps
//! reserved characters raw, so it may span `/` (e.g. `file:///{+path}`). Either way the matched
//! text is percent-decoded before the handler sees it (`%2F` → `/`, `%20` → space); a malformed
//! escape or an escape that does not decode to UTF-8 means the URI does not match.

use serde_json::{Map, Value};

/// One variable of a template.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    /// `{+name}`: reserved expansion.
    reserved: bool,
}

/// A parsed template: literal segments and variables, alternating.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    literals: Vec<String>,
    vars: Vec<Var>,
}

impl UriTemplate {
    /// Parse `a{x}b{+y}`. Variables must be non-empty `[A-Za-z0-9_.%]` names, optionally with the
    /// `+` operator; adjacent variables (`{a}{b}`) are refused since they cannot be matched
    /// unambiguously.
    ///
    /// # Errors
    /// Why the template is refused.
    pub fn parse(t: &str) -> Result<Self, String> {
        let mut literals = vec![String::new()];
        let mut vars: Vec<Var> = Vec::new();
        let mut rest = t;
        while let Some(open) = rest.find('{') {
            let (lit, after) = rest.split_at(open);
            if lit.contains('}') {
                return Err("unbalanced '}'".into());
            }
            if let Some(last) = literals.last_mut() {
                last.push_str(lit);
            }
            let close = after.find('}').ok_or("unclosed '{'")?;
            let expr = &after[1..close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(n) => (true, n),
                None => (false, expr),
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
            {
                return Err(format!(
                    "unsupported expression {{{expr}}} (only {{var}} and {{+var}})"
                ));
            }
            if !vars.is_empty() && literals.last().is_some_and(String::is_empty) {
                return Err("adjacent variables cannot be matched".into());
            }
            vars.push(Var {
                name: name.to_owned(),
                reserved,
            });
            literals.push(String::new());
            rest = &after[close + 1..];
        }
        if rest.contains('}') {
            return Err("unbalanced '}'".into());
        }
        if let Some(last) = literals.last_mut() {
            last.push_str(rest);
        }
        Ok(Self { literals, vars })
    }

    /// The variable names (without operators).
    #[cfg(test)]
    fn variables(&self) -> Vec<&str> {
        self.vars.iter().map(|v| v.name.as_str()).collect()
    }

    /// Match a URI and return the percent-decoded variables. A `{var}` matches non-empty text
    /// without `/`, `?` or `#`; a `{+var}` matches any non-empty text.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut rest = uri.strip_prefix(self.literals[0].as_str())?;
        let mut out = Map::new();
        for (i, var) in self.vars.iter().enumerate() {
            let next_lit = &self.literals[i + 1];
            let is_last = i + 1 == self.vars.len();
            let end = if is_last && next_lit.is_empty() {
                rest.len()
            } else if is_last {
                rest.strip_suffix(next_lit.as_str())?.len()
            } else {
                rest.find(next_lit.as_str())?
            };
            let value = &rest[..end];
            if value.is_empty() || (!var.reserved && value.contains(['/', '?', '#'])) {
                return None;
            }
            out.insert(var.name.clone(), Value::String(percent_decode(value)?));
            rest = &rest[end + next_lit.len()..];
        }
        rest.is_empty().then_some(out)
    }
}

/// Decode `%XX` escapes; `None` for a malformed escape or a result that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level1_matching() {
        let t = UriTemplate::parse("test://items/{id}/part/{part}").unwrap();
        let m = t.matches("test://items/42/part/a").unwrap();
        assert_eq!(m["id"], "42");
        assert_eq!(m["part"], "a");
        assert!(t.matches("test://items/42/part/").is_none());
        assert!(t.matches("test://items/4/2/part/a").is_none());
        assert!(t.matches("test://other/42/part/a").is_none());
        let t = UriTemplate::parse("file:///{name}.txt").unwrap();
        assert_eq!(t.matches("file:///a.txt").unwrap()["name"], "a");
        assert!(UriTemplate::parse("x{#y}").is_err());
        assert!(UriTemplate::parse("x{+}").is_err());
        assert!(UriTemplate::parse("x{a}{b}").is_err());
        assert!(UriTemplate::parse("x{a").is_err());
    }

    #[test]
    fn res01_values_are_percent_decoded() {
        let t = UriTemplate::parse("test://items/{id}").unwrap();
        assert_eq!(t.matches("test://items/a%20b").unwrap()["id"], "a b");
        assert_eq!(t.matches("test://items/a%2Fb").unwrap()["id"], "a/b");
        assert_eq!(t.matches("test://items/caf%C3%A9").unwrap()["id"], "café");
        assert_eq!(t.matches("test://items/100%25").unwrap()["id"], "100%");
        for bad in ["test://items/%zz", "test://items/a%2", "test://items/%FF"] {
            assert!(t.matches(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn res01_reserved_expansion_spans_slashes() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(t.variables(), ["path"]);
        assert_eq!(t.matches("file:///a/b/c.txt").unwrap()["path"], "a/b/c.txt");
        assert_eq!(t.matches("file:///a%20b/c").unwrap()["path"], "a b/c");
        let t = UriTemplate::parse("repo://{owner}/{+path}/blob").unwrap();
        let m = t.matches("repo://me/src/lib.rs/blob").unwrap();
        assert_eq!(
            (m["owner"].as_str(), m["path"].as_str()),
            (Some("me"), Some("src/lib.rs"))
        );
        assert!(t.matches("repo://me//blob").is_none());
    }
}
