//! The OAuth 2.1 resource server over real HTTP on 127.0.0.1 (REQUIREMENTS AUTH-01, AUTH-02,
//! AUTH-06): Protected Resource Metadata, 401/400/403 challenges, JWT verification (signature,
//! audience, issuer, expiry, nbf, algorithms), per-tool scopes in both eras, the principal in
//! handlers, principal-bound `requestState` and legacy sessions.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{EncodingKey, Header};
use mcpcore::auth::AuthOptions;
use mcpcore_tests::auth::{
    claims, jwks, jwks_file, listen, now, options, server, TestKey, ISSUER, RESOURCE,
};
use mcpcore_tests::http::{modern_headers, raw_request, Exchange, HttpReply, McpHttp};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;

const PRM_URL: &str = "https://mcp.test/.well-known/oauth-protected-resource/mcp";

struct Protected {
    key: TestKey,
    listener: mcpcore::transport::http::HttpListener,
    server: mcpcore::Server,
}

async fn protected() -> Protected {
    let key = TestKey::generate("k1");
    let mut o = options();
    o.jwks_path = Some(jwks_file(&jwks(&[&key])));
    let server = server();
    let listener = listen(&server, Some(o)).await;
    Protected {
        key,
        listener,
        server,
    }
}

impl Protected {
    fn addr(&self) -> SocketAddr {
        self.listener.local_addr()
    }
    fn token(&self, sub: &str, scope: &str) -> String {
        self.key.sign(&claims(sub, scope))
    }
}

fn with_auth(mut h: Vec<(String, String)>, token: Option<&str>) -> Vec<(String, String)> {
    if let Some(t) = token {
        h.push(("Authorization".into(), format!("Bearer {t}")));
    }
    h
}

fn call_msg(id: i64, name: &str, extra: Value) -> Value {
    let mut params =
        json!({"name": name, "arguments": {}, "_meta": envelope(json!({"elicitation": {}}))});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// A modern `tools/call` with `token`, read to the end (messages schema-checked).
async fn modern_call(addr: SocketAddr, token: Option<&str>, name: &str, extra: Value) -> Exchange {
    let h = with_auth(modern_headers("tools/call", Some(name)), token);
    McpHttp::new(addr)
        .post(&h, &call_msg(1, name, extra), Era::Modern)
        .await
}

/// A modern `tools/call` with raw `Authorization` values, head only (refusals).
async fn modern_raw(addr: SocketAddr, path: &str, auth: &[&str]) -> HttpReply {
    let mut h: Vec<(&str, &str)> = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "whoami"),
    ];
    for a in auth {
        h.push(("Authorization", a));
    }
    let body = call_msg(1, "whoami", json!({})).to_string();
    raw_request(addr, "POST", path, &h, body.as_bytes()).await
}

fn text_of(ex: &Exchange) -> String {
    ex.last()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {}", ex.last()))
        .to_owned()
}

/// The `WWW-Authenticate` parameters of a reply.
fn challenge(r: &HttpReply) -> String {
    r.header("www-authenticate")
        .unwrap_or_else(|| panic!("no WWW-Authenticate on {}", r.status))
        .to_owned()
}

#[tokio::test]
async fn auth01_metadata_at_both_well_known_paths() {
    let p = protected().await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let mut r = raw_request(p.addr(), "GET", path, &[], b"").await;
        assert_eq!(r.status, 200, "{path}");
        assert!(r.content_type().starts_with("application/json"));
        let doc = r.json().await;
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([ISSUER]));
        assert_eq!(doc["scopes_supported"], json!(["mcp:tools", "admin"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    // Another well-known suffix is not this resource's document.
    let r = raw_request(
        p.addr(),
        "GET",
        "/.well-known/oauth-protected-resource/other",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn auth06_missing_token_is_challenged_in_both_eras() {
    let p = protected().await;
    let mut r = modern_raw(p.addr(), "/mcp", &[]).await;
    assert_eq!(r.status, 401);
    let c = challenge(&r);
    assert_eq!(
        c,
        format!("Bearer resource_metadata=\"{PRM_URL}\", scope=\"mcp:tools\"")
    );
    assert_eq!(r.json().await["error"], "unauthorized");
    // Another scheme is no bearer credential: the same challenge.
    let r = modern_raw(p.addr(), "/mcp", &["Basic dXNlcjpwYXNz"]).await;
    assert_eq!(r.status, 401);
    assert!(!challenge(&r).contains("error="));
    // Legacy initialize, GET and DELETE are gated too.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let c = McpHttp::new(p.addr());
    let r = c
        .post_raw(&c.legacy_headers(), init.to_string().as_bytes())
        .await;
    assert_eq!(r.status, 401);
    assert!(challenge(&r).contains(PRM_URL));
    for m in ["GET", "DELETE"] {
        let r = raw_request(p.addr(), m, "/mcp", &[("Mcp-Session-Id", "x")], b"").await;
        assert_eq!(r.status, 401, "{m}");
    }
    assert_eq!(p.listener.service().legacy_session_count(), 0);
}

#[tokio::test]
async fn auth06_malformed_authorization_and_query_tokens_are_400() {
    let p = protected().await;
    let good = p.token("alice", "mcp:tools");
    let bearer = format!("Bearer {good}");
    let cases: [(&str, Vec<&str>); 4] = [
        ("/mcp", vec!["Bearer"]),
        ("/mcp", vec!["Bearer two tokens"]),
        ("/mcp", vec![bearer.as_str(), bearer.as_str()]),
        ("/mcp?access_token=abc", vec![]),
    ];
    for (path, auth) in cases {
        let mut r = modern_raw(p.addr(), path, &auth).await;
        assert_eq!(r.status, 400, "{path} {auth:?}");
        assert!(challenge(&r).starts_with("Bearer error=\"invalid_request\""));
        assert_eq!(r.json().await["error"], "invalid_request");
    }
    // A good token in the query string is refused even next to a good header.
    let path = format!("/mcp?access_token={good}");
    let r = modern_raw(p.addr(), &path, &[&bearer]).await;
    assert_eq!(r.status, 400);
}

fn unsigned(header: &Value, claims: &Value) -> String {
    let enc = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.", enc(header), enc(claims))
}

#[tokio::test]
async fn auth06_invalid_tokens_are_401_invalid_token() {
    let p = protected().await;
    let other = TestKey::generate("k1"); // same kid, another key: a forged signature
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims("alice", "mcp:tools");
        f(&mut c);
        p.key.sign(&c)
    };
    let public_as_secret = {
        // Algorithm confusion: an HMAC keyed with the public key.
        let x = p.key.jwk["x"].as_str().expect("x").as_bytes().to_vec();
        let mut h = Header::new(jsonwebtoken::Algorithm::HS256);
        h.kid = Some("k1".into());
        jsonwebtoken::encode(
            &h,
            &claims("alice", "mcp:tools"),
            &EncodingKey::from_secret(&x),
        )
        .expect("hs256")
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "bad signature",
            other.sign(&claims("alice", "mcp:tools")),
            "signature invalid",
        ),
        (
            "wrong audience",
            with(&|c| c["aud"] = json!("https://other.test/mcp")),
            "audience",
        ),
        (
            "wrong issuer",
            with(&|c| c["iss"] = json!("https://evil.test")),
            "issuer",
        ),
        (
            "expired",
            with(&|c| c["exp"] = json!(now() - 3600)),
            "token expired",
        ),
        (
            "expired past the skew",
            with(&|c| c["exp"] = json!(now() - 120)),
            "token expired",
        ),
        (
            "nbf in the future",
            with(&|c| c["nbf"] = json!(now() + 3600)),
            "not yet valid",
        ),
        (
            "no audience",
            with(&|c| {
                c.as_object_mut().expect("obj").remove("aud");
            }),
            "required claim",
        ),
        (
            "alg none",
            unsigned(
                &json!({"alg": "none", "typ": "JWT"}),
                &claims("alice", "mcp:tools"),
            ),
            "malformed",
        ),
        (
            "HS256 with the public key",
            public_as_secret,
            "algorithm not allowed",
        ),
        (
            "unknown kid",
            p.key.sign_as("k-unknown", &claims("alice", "mcp:tools")),
            "unknown signing key",
        ),
        ("garbage", "not-a-jwt".into(), "malformed"),
    ];
    for (what, token, why) in cases {
        let auth = format!("Bearer {token}");
        let mut r = modern_raw(p.addr(), "/mcp", &[&auth]).await;
        assert_eq!(r.status, 401, "{what}");
        let c = challenge(&r);
        assert!(
            c.starts_with("Bearer error=\"invalid_token\""),
            "{what}: {c}"
        );
        assert!(
            c.contains(&format!("resource_metadata=\"{PRM_URL}\"")),
            "{what}: {c}"
        );
        let body = r.json().await;
        let desc = body["error_description"].as_str().unwrap_or_default();
        assert!(desc.contains(why), "{what}: {desc}");
    }
    // Within the default 60 s skew an expired token still passes, and so does a near nbf.
    let t = with(&|c| {
        c["exp"] = json!(now() - 20);
        c["nbf"] = json!(now() + 20);
    });
    let ex = modern_call(p.addr(), Some(&t), "whoami", json!({})).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
}

#[tokio::test]
async fn auth06_good_token_modern_principal_reaches_the_handler() {
    let p = protected().await;
    let t = p.token("alice", "mcp:tools extra");
    let ex = modern_call(p.addr(), Some(&t), "whoami", json!({})).await;
    assert_eq!(ex.status, 200);
    let who: Value = serde_json::from_str(&text_of(&ex)).expect("principal JSON");
    assert_eq!(
        who,
        json!({"subject": "alice", "scopes": ["mcp:tools", "extra"],
               "clientId": "test-client", "issuer": ISSUER})
    );
    // Without the required scope: 403 with the scope to ask for.
    let t = p.token("alice", "other");
    let auth = format!("Bearer {t}");
    let r = modern_raw(p.addr(), "/mcp", &[&auth]).await;
    assert_eq!(r.status, 403);
    let c = challenge(&r);
    assert!(c.starts_with("Bearer error=\"insufficient_scope\""), "{c}");
    assert!(c.ends_with("scope=\"mcp:tools\""), "{c}");
}

#[tokio::test]
async fn auth06_tool_scopes_in_the_modern_era() {
    let p = protected().await;
    let t = p.token("alice", "mcp:tools");
    let h = with_auth(modern_headers("tools/call", Some("admin_op")), Some(&t));
    let body = call_msg(1, "admin_op", json!({})).to_string();
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut r = raw_request(p.addr(), "POST", "/mcp", &hv, body.as_bytes()).await;
    assert_eq!(r.status, 403);
    let c = challenge(&r);
    assert!(c.starts_with("Bearer error=\"insufficient_scope\""), "{c}");
    assert!(
        c.contains(&format!("resource_metadata=\"{PRM_URL}\"")),
        "{c}"
    );
    assert!(c.ends_with("scope=\"mcp:tools admin\""), "{c}");
    assert_eq!(r.json().await["error"], "insufficient_scope");
    let t = p.token("alice", "mcp:tools admin");
    let ex = modern_call(p.addr(), Some(&t), "admin_op", json!({})).await;
    assert_eq!((ex.status, text_of(&ex).as_str()), (200, "done"));
}

async fn legacy_init(addr: SocketAddr, token: &str) -> McpHttp {
    legacy_init_at(addr, token, "2025-11-25").await
}

async fn legacy_init_at(addr: SocketAddr, token: &str, version: &str) -> McpHttp {
    let mut c = McpHttp::new(addr);
    c.version = version.into();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let ex = c
        .post(
            &with_auth(c.legacy_headers(), Some(token)),
            &init,
            Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    c.session = ex.header("mcp-session-id").map(str::to_owned);
    assert!(c.session.is_some());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ex = c
        .post(
            &with_auth(c.legacy_headers(), Some(token)),
            &note,
            Era::Legacy,
        )
        .await;
    assert_eq!(ex.status, 202);
    c
}

fn legacy_call(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": {}}})
}

#[tokio::test]
async fn auth06_legacy_era_principal_scopes_and_session_binding() {
    let p = protected().await;
    let alice = p.token("alice", "mcp:tools");
    let c = legacy_init(p.addr(), &alice).await;
    let h = with_auth(c.legacy_headers(), Some(&alice));
    let ex = c.post(&h, &legacy_call("whoami"), Era::Legacy).await;
    assert_eq!(ex.status, 200);
    assert!(text_of(&ex).contains("\"subject\":\"alice\""));
    // Per-tool scope in the legacy era: the same 403 challenge.
    let r = c
        .post_raw(&h, legacy_call("admin_op").to_string().as_bytes())
        .await;
    assert_eq!(r.status, 403);
    assert!(challenge(&r).ends_with("scope=\"mcp:tools admin\""));
    // A refreshed token of the same user keeps the session.
    let mut refreshed = claims("alice", "mcp:tools admin");
    refreshed["exp"] = json!(now() + 1200);
    let alice2 = p.key.sign(&refreshed);
    let ex = c
        .post(
            &with_auth(c.legacy_headers(), Some(&alice2)),
            &legacy_call("admin_op"),
            Era::Legacy,
        )
        .await;
    assert_eq!((ex.status, text_of(&ex).as_str()), (200, "done"));
    // Bob presenting alice's session id: as unknown to him (404), on POST, GET and DELETE.
    let bob = p.token("bob", "mcp:tools admin");
    let hb = with_auth(c.legacy_headers(), Some(&bob));
    let r = c
        .post_raw(&hb, legacy_call("whoami").to_string().as_bytes())
        .await;
    assert_eq!(r.status, 404);
    let sid = c.session.clone().expect("sid");
    let bearer = format!("Bearer {bob}");
    for m in ["GET", "DELETE"] {
        let h = [
            ("Mcp-Session-Id", sid.as_str()),
            ("Authorization", bearer.as_str()),
            ("Accept", "text/event-stream"),
        ];
        let r = raw_request(p.addr(), m, "/mcp", &h, b"").await;
        assert_eq!(r.status, 404, "{m}");
    }
    // Alice's session survived the attempts.
    assert_eq!(p.listener.service().legacy_session_count(), 1);
    let ex = c.post(&h, &legacy_call("whoami"), Era::Legacy).await;
    assert_eq!(ex.status, 200);
    assert!(text_of(&ex).contains("\"subject\":\"alice\""));
}

/// The first round of `confirm`: its sealed `requestState`.
async fn first_round(addr: SocketAddr, token: Option<&str>) -> String {
    let ex = modern_call(addr, token, "confirm", json!({})).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    let res = &ex.last()["result"];
    assert_eq!(res["resultType"], "input_required");
    res["requestState"].as_str().expect("state").to_owned()
}

async fn retry(addr: SocketAddr, token: Option<&str>, state: &str) -> Exchange {
    let extra = json!({"requestState": state,
                       "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}});
    modern_call(addr, token, "confirm", extra).await
}

#[tokio::test]
async fn auth06_request_state_is_bound_to_the_principal() {
    let p = protected().await;
    // The same server (same sealing keys) also on an open endpoint, for anonymous requests.
    let open = listen(&p.server, None).await;
    let alice = p.token("alice", "mcp:tools");
    let bob = p.token("bob", "mcp:tools");

    let s = first_round(p.addr(), Some(&alice)).await;
    let ex = retry(p.addr(), Some(&alice), &s).await;
    assert_eq!((ex.status, text_of(&ex).as_str()), (200, "confirmed"));

    let refused = |ex: &Exchange| {
        assert_eq!(ex.status, 400, "{:?}", ex.messages);
        assert_eq!(ex.code(), Some(-32602));
    };
    let s = first_round(p.addr(), Some(&alice)).await;
    refused(&retry(p.addr(), Some(&bob), &s).await);
    refused(&retry(open.local_addr(), None, &s).await);
    // Refusals claim nothing: alice can still use it.
    let ex = retry(p.addr(), Some(&alice), &s).await;
    assert_eq!(ex.status, 200);

    // An anonymous state does not open for a principal either.
    let s = first_round(open.local_addr(), None).await;
    refused(&retry(p.addr(), Some(&alice), &s).await);
    let ex = retry(open.local_addr(), None, &s).await;
    assert_eq!((ex.status, text_of(&ex).as_str()), (200, "confirmed"));
}

#[tokio::test]
async fn auth_options_json_shape() {
    let mut o = mcpcore::transport::http::HttpOptions::default();
    let patch = json!({"auth": {
        "resource": RESOURCE, "authorizationServers": [ISSUER], "issuer": ISSUER,
        "jwksPath": "/tmp/jwks.json", "scopesSupported": ["a"], "toolScopes": {"t": ["a"]},
        "clockSkewMs": 5000, "algorithms": ["ES256"]}});
    mcpcore::options::apply_json(&mut o, &patch).expect("auth options");
    let a = o.auth.as_ref().expect("auth");
    assert_eq!(a.clock_skew, std::time::Duration::from_secs(5));
    assert_eq!(a.tool_scopes["t"], vec!["a".to_owned()]);
    for bad in [
        json!({"auth": {"resource": RESOURCE, "authorizationServers": [ISSUER], "jwksFile": "x"}}),
        json!({"auth": {"resource": RESOURCE, "authorizationServers": [ISSUER], "issuer": ISSUER,
                        "jwksPath": "x", "algorithms": ["HS256"]}}),
        json!({"auth": {"resource": RESOURCE, "authorizationServers": [], "issuer": ISSUER,
                        "jwksPath": "x"}}),
    ] {
        let mut o = mcpcore::transport::http::HttpOptions::default();
        assert!(mcpcore::options::apply_json(&mut o, &bad).is_err(), "{bad}");
    }
    // A custom verifier survives a JSON patch of the data parts.
    let mut o = mcpcore::transport::http::HttpOptions::default();
    o.auth = Some(AuthOptions::new(RESOURCE, ISSUER).with_verifier(std::sync::Arc::new(Fixed)));
    mcpcore::options::apply_json(
        &mut o,
        &json!({"auth": {"resource": RESOURCE,
        "authorizationServers": [ISSUER], "scopesSupported": ["x"]}}),
    )
    .expect("patch");
    assert!(o.auth.as_ref().expect("auth").verifier.is_some());
}

/// A custom verifier: one opaque token for "carol", everything else refused.
struct Fixed;

impl mcpcore::auth::TokenVerifier for Fixed {
    fn verify(
        &self,
        token: &str,
    ) -> mcpcore::BoxFuture<Result<mcpcore::auth::Principal, mcpcore::auth::VerifyError>> {
        let ok = token == "opaque-carol";
        Box::pin(async move {
            if ok {
                Ok(mcpcore::auth::Principal::new(
                    "carol",
                    vec!["mcp:tools".into()],
                ))
            } else {
                Err(mcpcore::auth::VerifyError::Invalid("unknown token".into()))
            }
        })
    }
}

#[tokio::test]
async fn auth06_custom_verifier() {
    let server = server();
    let mut o = options();
    o.verifier = Some(std::sync::Arc::new(Fixed));
    let l = listen(&server, Some(o)).await;
    let ex = modern_call(l.local_addr(), Some("opaque-carol"), "whoami", json!({})).await;
    assert_eq!(ex.status, 200);
    assert!(text_of(&ex).contains("\"subject\":\"carol\""));
    let r = modern_raw(l.local_addr(), "/mcp", &["Bearer opaque-dave"]).await;
    assert_eq!(r.status, 401);
    assert!(challenge(&r).contains("error_description=\"unknown token\""));
}

#[tokio::test]
async fn auth06_rs256_tokens_and_the_algorithm_allow_list() {
    let ec = TestKey::generate("k1");
    let rsa = TestKey::rsa("r1");
    // The EC key again as "e1", published for encryption only: it never verifies a signature.
    let mut doc = jwks(&[&ec, &rsa]);
    let mut enc = ec.jwk.clone();
    enc["use"] = json!("enc");
    enc["kid"] = json!("e1");
    doc["keys"].as_array_mut().expect("keys").push(enc);
    let mut o = options();
    o.jwks_path = Some(jwks_file(&doc));
    let server = server();
    let l = listen(&server, Some(o)).await;
    let t = rsa.sign(&claims("alice", "mcp:tools"));
    let ex = modern_call(l.local_addr(), Some(&t), "whoami", json!({})).await;
    assert_eq!(ex.status, 200);
    assert!(text_of(&ex).contains("\"subject\":\"alice\""));
    // Same key, algorithms outside the allow-list (RS256, ES256): refused before any key use.
    for alg in [
        jsonwebtoken::Algorithm::RS384,
        jsonwebtoken::Algorithm::PS256,
    ] {
        let t = rsa.sign_with(alg, "r1", &claims("alice", "mcp:tools"));
        let auth = format!("Bearer {t}");
        let mut r = modern_raw(l.local_addr(), "/mcp", &[&auth]).await;
        assert_eq!(r.status, 401, "{alg:?}");
        assert_eq!(r.json().await["error_description"], "algorithm not allowed");
    }
    // An ES256 header naming the RSA key (the key does not fit the algorithm), or naming the
    // encryption key (the right key, the wrong use).
    for kid in ["r1", "e1"] {
        let t = ec.sign_as(kid, &claims("alice", "mcp:tools"));
        let auth = format!("Bearer {t}");
        let mut r = modern_raw(l.local_addr(), "/mcp", &[&auth]).await;
        assert_eq!(r.status, 401, "{kid}");
        assert_eq!(r.json().await["error_description"], "unknown signing key");
    }
    // Control: the same signature under its signing kid passes.
    let t = ec.sign(&claims("alice", "mcp:tools"));
    let ex = modern_call(l.local_addr(), Some(&t), "whoami", json!({})).await;
    assert_eq!(ex.status, 200);
}

#[tokio::test]
async fn auth06_a_batch_with_an_unauthorized_call_is_refused_whole() {
    let p = protected().await;
    let alice = p.token("alice", "mcp:tools");
    let c = legacy_init_at(p.addr(), &alice, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "admin_op", "arguments": {}}},
    ]);
    let h = with_auth(c.legacy_headers(), Some(&alice));
    let r = c.post_raw(&h, batch.to_string().as_bytes()).await;
    assert_eq!(r.status, 403);
    assert!(challenge(&r).contains("error=\"insufficient_scope\""));
    let admin = p.token("alice", "mcp:tools admin");
    let mut r = c
        .post_raw(
            &with_auth(c.legacy_headers(), Some(&admin)),
            batch.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200);
    let answers = r.json().await;
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
}
