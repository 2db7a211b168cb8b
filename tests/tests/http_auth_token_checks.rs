//! Token checks of the resource server over real HTTP on 127.0.0.1 (AUTH-06): an
//! `access_token` query parameter is refused however its name is encoded, and the JWS `typ`
//! must name an access token (RFC 9068 §4) so that an ID or logout token of the same issuer
//! whose `aud` happens to fit is not taken for one (`tokenTypes`, `requireTokenType`).

use mcpcore::auth::AuthOptions;
use mcpcore_tests::auth::{claims, jwks, jwks_file, listen, options, server, TestKey};
use mcpcore_tests::http::{raw_request, HttpReply};
use mcpcore_tests::stdio::envelope;
use serde_json::json;
use std::net::SocketAddr;

async fn post(addr: SocketAddr, path: &str, token: &str) -> HttpReply {
    let auth = format!("Bearer {token}");
    let h: Vec<(&str, &str)> = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "whoami"),
        ("Authorization", &auth),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": envelope(json!({}))}});
    raw_request(addr, "POST", path, &h, body.to_string().as_bytes()).await
}

/// A server verifying `key`'s tokens, `tune` applied to its options; its address and the
/// listener (which stops when dropped).
async fn protected(
    key: &TestKey,
    tune: impl FnOnce(&mut AuthOptions),
) -> (SocketAddr, mcpcore::transport::http::HttpListener) {
    let mut o = options();
    o.jwks_path = Some(jwks_file(&jwks(&[key])));
    tune(&mut o);
    let l = listen(&server(), Some(o)).await;
    (l.local_addr(), l)
}

#[tokio::test]
async fn auth06_encoded_access_token_query_names_are_400() {
    let key = TestKey::generate("k1");
    let (addr, _l) = protected(&key, |_| {}).await;
    let good = key.sign(&claims("alice", "mcp:tools"));
    assert_eq!(post(addr, "/mcp?x=1", &good).await.status, 200);
    for q in [
        "access_token=abc",
        "access%5Ftoken=abc",
        "%61ccess_token=abc",
        "x=1&%61%63%63%65%73%73%5F%74%6F%6B%65%6E=abc",
        "ACCESS_TOKEN=abc",
    ] {
        let mut r = post(addr, &format!("/mcp?{q}"), &good).await;
        assert_eq!(r.status, 400, "{q}");
        assert!(r
            .header("www-authenticate")
            .is_some_and(|c| c.starts_with("Bearer error=\"invalid_request\"")));
        assert_eq!(r.json().await["error"], "invalid_request", "{q}");
    }
    // Other names stay harmless.
    for q in ["access+token=1", "access_token_hint=1", "q=access_token"] {
        assert_eq!(
            post(addr, &format!("/mcp?{q}"), &good).await.status,
            200,
            "{q}"
        );
    }
}

#[tokio::test]
async fn auth06_typ_must_name_an_access_token() {
    let key = TestKey::generate("k1");
    let (addr, _l) = protected(&key, |_| {}).await;
    let c = claims("alice", "mcp:tools");
    // RFC 9068 types, the common `JWT`, and no `typ` at all are accepted by default.
    for typ in [
        Some("at+jwt"),
        Some("application/at+jwt"),
        Some("AT+JWT"),
        Some("JWT"),
        None,
    ] {
        assert_eq!(
            post(addr, "/mcp", &key.sign_typ(typ, &c)).await.status,
            200,
            "{typ:?}"
        );
    }
    // An OIDC logout token or an ID token labelled as such, with a fitting aud and signature.
    for typ in ["logout+jwt", "id_token+jwt", "secevent+jwt", "dpop+jwt"] {
        let mut r = post(addr, "/mcp", &key.sign_typ(Some(typ), &c)).await;
        assert_eq!(r.status, 401, "{typ}");
        assert!(r
            .header("www-authenticate")
            .is_some_and(|v| v.contains("error=\"invalid_token\"")));
        assert_eq!(
            r.json().await["error_description"],
            "token type is not an access token"
        );
    }
}

#[tokio::test]
async fn auth06_strict_and_relaxed_token_types() {
    let key = TestKey::generate("k1");
    let c = claims("alice", "mcp:tools");
    // Strict RFC 9068: only at+jwt, and typ is required (set through the JSON shape).
    let (addr, _l) = protected(&key, |o| {
        let mut j = serde_json::to_value(&*o).expect("json");
        j["tokenTypes"] = json!(["at+jwt"]);
        j["requireTokenType"] = json!(true);
        *o = serde_json::from_value(j).expect("options");
    })
    .await;
    assert_eq!(
        post(addr, "/mcp", &key.sign_typ(Some("at+jwt"), &c))
            .await
            .status,
        200
    );
    for typ in [Some("JWT"), None] {
        assert_eq!(
            post(addr, "/mcp", &key.sign_typ(typ, &c)).await.status,
            401,
            "{typ:?}"
        );
    }
    // Relaxed: an empty list accepts any typ.
    let (addr, _l2) = protected(&key, |o| o.token_types.clear()).await;
    let r = post(addr, "/mcp", &key.sign_typ(Some("logout+jwt"), &c)).await;
    assert_eq!(r.status, 200);
}
