//! `WWW-Authenticate` parsing (RFC 9110 §11.6.1, RFC 6750 §3; AUTH-01, AUTH-02;
//! `client/auth/challenge.rs`): the header of a server's 401 or 403.
//!
//! Invariants: schemes and parameter names are non-empty lowercase tokens; a parse result
//! written back in canonical form (`scheme name="value", …`, values quoted and escaped) parses
//! to the same challenges.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::client::auth::{parse_www_authenticate, Challenge};

/// The cap of the parser (a longer header is refused unscanned).
const MAX_HEADER: usize = 8 * 1024;

fn token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn canonical(chs: &[Challenge]) -> String {
    chs.iter()
        .map(|c| {
            let params: Vec<String> = c
                .params
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
                .collect();
            if params.is_empty() {
                c.scheme.clone()
            } else {
                format!("{} {}", c.scheme, params.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(chs) = parse_www_authenticate(text) else {
        return;
    };
    for c in &chs {
        assert!(
            token(&c.scheme) && c.scheme == c.scheme.to_ascii_lowercase(),
            "{c:?}"
        );
        for (k, _) in &c.params {
            assert!(token(k) && *k == k.to_ascii_lowercase(), "{c:?}");
        }
    }
    let again = canonical(&chs);
    if again.len() <= MAX_HEADER {
        assert_eq!(
            parse_www_authenticate(&again).ok().as_ref(),
            Some(&chs),
            "{again:?}"
        );
    }
});
