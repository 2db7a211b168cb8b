//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3) for the parameters the MCP
//! authorization flow reads: `resource_metadata` (AUTH-01), `scope` (AUTH-02) and `error`.

use super::error::{AuthError, AuthErrorKind};

/// The parameters of one authentication challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme, lowercased (`bearer`, `dpop`, ...).
    pub scheme: String,
    /// `name=value` parameters, names lowercased, values unquoted.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of parameter `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Longest header value parsed; a longer one is refused rather than scanned.
const MAX_HEADER: usize = 8 * 1024;

fn bad(msg: impl Into<String>) -> AuthError {
    AuthError::new(AuthErrorKind::InvalidChallenge, msg)
}

fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// Parse a `WWW-Authenticate` value into its challenges. Token68 credentials are skipped.
pub fn parse_www_authenticate(value: &str) -> Result<Vec<Challenge>, AuthError> {
    if value.len() > MAX_HEADER {
        return Err(bad(format!(
            "WWW-Authenticate is longer than {MAX_HEADER} bytes"
        )));
    }
    let b = value.as_bytes();
    let mut i = 0;
    let mut out: Vec<Challenge> = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t') {
            *i += 1;
        }
    };
    let token = |i: &mut usize| -> String {
        let s = *i;
        while *i < b.len() && is_tchar(b[*i]) {
            *i += 1;
        }
        value[s..*i].to_owned()
    };
    loop {
        skip_ws(&mut i);
        while i < b.len() && b[i] == b',' {
            i += 1;
            skip_ws(&mut i);
        }
        if i >= b.len() {
            break;
        }
        let name = token(&mut i);
        if name.is_empty() {
            return Err(bad(format!(
                "WWW-Authenticate: unexpected character at byte {i}"
            )));
        }
        skip_ws(&mut i);
        if i < b.len() && b[i] == b'=' {
            // `name=value` continues the current challenge.
            i += 1;
            skip_ws(&mut i);
            let v = if i < b.len() && b[i] == b'"' {
                quoted(value, &mut i)?
            } else {
                let v = token(&mut i);
                // token68 padding (`abc==`) belongs to a credential, not a parameter.
                while i < b.len() && b[i] == b'=' {
                    i += 1;
                }
                v
            };
            let Some(ch) = out.last_mut() else {
                return Err(bad("WWW-Authenticate: a parameter before any scheme"));
            };
            ch.params.push((name.to_ascii_lowercase(), v));
        } else {
            out.push(Challenge {
                scheme: name.to_ascii_lowercase(),
                params: Vec::new(),
            });
        }
        skip_ws(&mut i);
        if i < b.len() && b[i] != b',' && !is_tchar(b[i]) {
            return Err(bad(format!(
                "WWW-Authenticate: unexpected character at byte {i}"
            )));
        }
    }
    Ok(out)
}

/// A quoted-string starting at `b[*i] == '"'`, with `\x` escapes.
fn quoted(value: &str, i: &mut usize) -> Result<String, AuthError> {
    let b = value.as_bytes();
    *i += 1;
    let mut out = Vec::new();
    while *i < b.len() {
        match b[*i] {
            b'"' => {
                *i += 1;
                return String::from_utf8(out)
                    .map_err(|_| bad("WWW-Authenticate: a quoted value is not UTF-8"));
            }
            b'\\' if *i + 1 < b.len() => {
                out.push(b[*i + 1]);
                *i += 2;
            }
            c => {
                out.push(c);
                *i += 1;
            }
        }
    }
    Err(bad("WWW-Authenticate: unterminated quoted string"))
}

/// The Bearer (or DPoP) challenge among `values`, the header's lines.
// Read by the HTTP transport only.
#[cfg_attr(not(feature = "http-client"), allow(dead_code))]
pub fn bearer_challenge<'a>(
    values: impl Iterator<Item = &'a str>,
) -> Result<Option<Challenge>, AuthError> {
    let mut found = None;
    for v in values {
        for c in parse_www_authenticate(v)? {
            if c.scheme == "bearer" || (c.scheme == "dpop" && found.is_none()) {
                found = Some(c);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_parameters_quoted_and_bare() {
        let c = parse_www_authenticate(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y?a=\"1\"", realm=r1"#,
        )
        .unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].scheme, "bearer");
        assert_eq!(c[0].param("error"), Some("insufficient_scope"));
        assert_eq!(c[0].param("SCOPE"), Some("a b"));
        assert_eq!(c[0].param("resource_metadata"), Some(r#"http://x/y?a="1""#));
        assert_eq!(c[0].param("realm"), Some("r1"));
    }

    #[test]
    fn several_challenges_and_token68() {
        let c = parse_www_authenticate(r#"Basic realm="x", Negotiate abc==, Bearer scope="s""#)
            .unwrap();
        let schemes: Vec<_> = c.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["basic", "negotiate", "bearer"]);
        let b = bearer_challenge(["Basic realm=\"x\"", "Bearer scope=\"s\""].into_iter())
            .unwrap()
            .unwrap();
        assert_eq!(b.param("scope"), Some("s"));
    }

    #[test]
    fn malformed_values_are_precise_errors() {
        for v in [
            r#"Bearer scope="open"#,
            "=x",
            r#"Bearer scope="a" ; x"#,
            "Bearer \u{1}",
        ] {
            let e = parse_www_authenticate(v).unwrap_err();
            assert_eq!(e.kind(), AuthErrorKind::InvalidChallenge, "{v:?}");
        }
        let long = format!("Bearer scope=\"{}\"", "a".repeat(MAX_HEADER));
        assert!(parse_www_authenticate(&long).is_err());
    }
}
