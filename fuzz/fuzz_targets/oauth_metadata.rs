//! The OAuth client's metadata validators (AUTH-01, AUTH-03, AUTH-05; RFC 9728 Protected
//! Resource Metadata, RFC 8414 authorization-server metadata) and its URL parser
//! (`client/auth/discovery.rs`, `client/auth/util.rs`): documents and URLs come from servers.
//!
//! Invariants: an accepted PRM names at least one authorization server and a resource that
//! covers the server; accepted AS metadata has exactly the expected issuer; a parsed URL has an
//! http(s) scheme, a lowercase non-empty authority, and discovery locations on its own origin;
//! every parsed URL covers itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::{oauth_url, parse_as, parse_prm, resource_covers};
use serde_json::Value;

const SERVER: &str = "https://mcp.example.com/mcp";
const ISSUER: &str = "https://auth.example.com/tenant";

fn check_url(s: &str) {
    let Some(u) = oauth_url(s) else {
        return;
    };
    assert!(u.scheme == "http" || u.scheme == "https", "{u:?}");
    assert!(!u.authority.is_empty(), "{u:?}");
    assert_eq!(u.authority, u.authority.to_ascii_lowercase());
    let origin = format!("{}://{}/", u.scheme, u.authority);
    for l in u.prm_urls.iter().chain(&u.as_metadata_urls) {
        assert!(l.starts_with(&origin), "{l} leaves {origin}");
    }
    assert!(resource_covers(s, s), "{s:?} does not cover itself");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check_url(&text);
    for line in text.lines() {
        check_url(line);
    }
    let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok((resource, servers)) = parse_prm(&m, SERVER) {
        assert!(!servers.is_empty());
        assert!(
            resource_covers(&resource, SERVER),
            "{resource} does not cover {SERVER}"
        );
        for s in &servers {
            check_url(s);
        }
    }
    if let Ok(issuer) = parse_as(&m, ISSUER) {
        assert_eq!(issuer, ISSUER);
    }
    if let Some(Value::String(r)) = m.get("resource") {
        check_url(r);
    }
});
