//! RFC 6570 level-1 URI templates (`{var}` simple string expansion), matched against URIs.

use serde_json::{Map, Value};

/// A parsed level-1 template: literal segments and variable names, alternating.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    literals: Vec<String>,
    vars: Vec<String>,
}

impl UriTemplate {
    /// Parse `a{x}b{y}`. Variables must be non-empty `[A-Za-z0-9_.%]` names; adjacent variables
    /// (`{a}{b}`) are refused since they cannot be matched unambiguously.
    ///
    /// # Errors
    /// Why the template is refused.
    pub fn parse(t: &str) -> Result<Self, String> {
        let mut literals = vec![String::new()];
        let mut vars = Vec::new();
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
            let name = &after[1..close];
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
            {
                return Err(format!(
                    "unsupported expression {{{name}}} (only level-1 {{var}})"
                ));
            }
            if !vars.is_empty() && literals.last().is_some_and(String::is_empty) {
                return Err("adjacent variables cannot be matched".into());
            }
            vars.push(name.to_owned());
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

    /// The variable names.
    pub fn variables(&self) -> &[String] {
        &self.vars
    }

    /// Match a URI; variables match non-empty text without `/`, `?` or `#`.
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
            if value.is_empty() || value.contains(['/', '?', '#']) {
                return None;
            }
            out.insert(var.clone(), Value::String(value.to_owned()));
            rest = &rest[end + next_lit.len()..];
        }
        rest.is_empty().then_some(out)
    }
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
        assert!(UriTemplate::parse("x{+y}").is_err());
        assert!(UriTemplate::parse("x{a}{b}").is_err());
        assert!(UriTemplate::parse("x{a").is_err());
    }
}
