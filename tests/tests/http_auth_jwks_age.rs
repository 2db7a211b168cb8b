//! How long the JWT verifier trusts a JWKS fetched from a URL (AUTH-06), over a real JWKS server
//! on 127.0.0.1: `Cache-Control: max-age` capped by `jwksMaxAgeMs`, so a key the authorization
//! server withdrew stops verifying without a restart; `no-store` does not make every token a
//! fetch; a reload that fails past expiry is 503, never the old keys. And plain `http://` JWKS
//! URLs are for loopback hosts unless `jwksAllowHttp` is set.

use mcpcore::transport::http::{serve, HttpOptions};
use mcpcore_tests::auth::{claims, jwks, listen, options, server, JwksServer, TestKey};
use mcpcore_tests::http::{modern_headers, raw_request, HttpReply};
use mcpcore_tests::stdio::envelope;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

async fn call(addr: SocketAddr, token: &str) -> HttpReply {
    let mut h = modern_headers("tools/call", Some("whoami"));
    h.push(("Authorization".into(), format!("Bearer {token}")));
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": envelope(json!({}))}});
    raw_request(addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await
}

/// Call with a fresh token of `key` until the status is not 200 (bounded): the first refusal.
async fn until_refused(addr: SocketAddr, key: &TestKey) -> HttpReply {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let r = call(addr, &key.sign(&claims("alice", "mcp:tools"))).await;
        if r.status != 200 {
            return r;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a withdrawn key still verifies"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server whose verifier reads `jwks_srv`, with `tune` applied to its options.
async fn protected(
    jwks_srv: &JwksServer,
    tune: impl FnOnce(&mut mcpcore::auth::AuthOptions),
) -> mcpcore::transport::http::HttpListener {
    let mut o = options();
    o.jwks_url = Some(jwks_srv.url.clone());
    tune(&mut o);
    listen(&server(), Some(o)).await
}

#[tokio::test]
async fn auth06_a_withdrawn_key_is_refused_after_the_configured_max_age() {
    let (k1, k2) = (TestKey::generate("k1"), TestKey::generate("k2"));
    let jwks_srv = JwksServer::start(jwks(&[&k1, &k2])).await;
    // The server asks for a day; the configured cap is one second.
    *jwks_srv.cache_control.lock().expect("cc") = Some("public, max-age=86400".into());
    let l = protected(&jwks_srv, |o| {
        o.jwks_min_refresh = Duration::from_millis(200);
        o.jwks_max_age = Duration::from_secs(1);
    })
    .await;
    let addr = l.local_addr();
    assert_eq!(
        call(addr, &k1.sign(&claims("alice", "mcp:tools")))
            .await
            .status,
        200
    );
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);

    // The authorization server withdraws k1 (say, after a compromise).
    *jwks_srv.doc.lock().expect("doc") = jwks(&[&k2]);
    let mut r = until_refused(addr, &k1).await;
    assert_eq!(r.status, 401);
    assert!(r
        .header("www-authenticate")
        .is_some_and(|c| c.contains("error=\"invalid_token\"")));
    assert_eq!(r.json().await["error_description"], "unknown signing key");
    assert!(jwks_srv.hits.load(Ordering::SeqCst) >= 2, "reloaded");
    // The key that stayed still verifies.
    assert_eq!(
        call(addr, &k2.sign(&claims("bob", "mcp:tools")))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn auth06_cache_control_max_age_is_honoured_below_the_cap() {
    let (k1, k2) = (TestKey::generate("k1"), TestKey::generate("k2"));
    let jwks_srv = JwksServer::start(jwks(&[&k1, &k2])).await;
    *jwks_srv.cache_control.lock().expect("cc") = Some("max-age=1".into());
    // The default cap (1 h) would keep k1 for the whole test: only the header can expire it.
    let l = protected(&jwks_srv, |o| o.jwks_min_refresh = Duration::ZERO).await;
    let addr = l.local_addr();
    assert_eq!(
        call(addr, &k1.sign(&claims("alice", "mcp:tools")))
            .await
            .status,
        200
    );
    *jwks_srv.doc.lock().expect("doc") = jwks(&[&k2]);
    let r = until_refused(addr, &k1).await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn auth06_no_store_is_held_for_the_min_refresh_interval() {
    let k1 = TestKey::generate("k1");
    let jwks_srv = JwksServer::start(jwks(&[&k1])).await;
    *jwks_srv.cache_control.lock().expect("cc") = Some("no-store".into());
    // Default jwksMinRefreshMs (30 s): "never cache" must not turn every token into a fetch.
    let l = protected(&jwks_srv, |_| {}).await;
    for sub in ["alice", "bob", "carol"] {
        let r = call(l.local_addr(), &k1.sign(&claims(sub, "mcp:tools"))).await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn auth06_a_failed_reload_past_expiry_is_503_not_the_old_keys() {
    let k1 = TestKey::generate("k1");
    let jwks_srv = JwksServer::start(jwks(&[&k1])).await;
    let l = protected(&jwks_srv, |o| {
        o.jwks_min_refresh = Duration::from_millis(200);
        o.jwks_max_age = Duration::from_secs(1);
    })
    .await;
    let addr = l.local_addr();
    assert_eq!(
        call(addr, &k1.sign(&claims("alice", "mcp:tools")))
            .await
            .status,
        200
    );
    // The key source breaks (a document that is no JWKS).
    *jwks_srv.doc.lock().expect("doc") = json!("maintenance");
    let r = until_refused(addr, &k1).await;
    assert_eq!(r.status, 503);
    // Once the source is back, the same key verifies again (after the refresh interval).
    *jwks_srv.doc.lock().expect("doc") = jwks(&[&k1]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while call(addr, &k1.sign(&claims("alice", "mcp:tools")))
        .await
        .status
        != 200
    {
        assert!(tokio::time::Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn auth06_plain_http_jwks_off_loopback_is_refused_at_startup() {
    let listen_on = |jwks_url: &str, allow: bool| {
        let mut o = options();
        o.jwks_url = Some(jwks_url.to_owned());
        o.jwks_allow_http = allow;
        let mut h = HttpOptions::default();
        h.auth = Some(o);
        serve(server(), "127.0.0.1:0".parse().expect("addr"), h)
    };
    // Refused before listening (the detail goes to the log, not the error).
    assert!(
        listen_on("http://as.test/jwks.json", false).await.is_err(),
        "a plain-http JWKS off loopback was accepted"
    );
    for ok in ["http://localhost:9/jwks.json", "http://[::1]:9/jwks.json"] {
        assert!(listen_on(ok, false).await.is_ok(), "{ok}");
    }
    // Opting in (nothing is fetched before the first token).
    assert!(listen_on("http://as.test/jwks.json", true).await.is_ok());

    // The JSON options refuse it when applied, and `jwksAllowHttp` relaxes it.
    let mut auth = serde_json::to_value(options()).expect("json");
    auth["jwksUrl"] = json!("http://as.test/jwks.json");
    let mut h = HttpOptions::default();
    let err = mcpcore::options::apply_json(&mut h, &json!({ "auth": auth.clone() }))
        .expect_err("JSON accepted a plain-http JWKS");
    assert!(err.to_string().contains("jwksAllowHttp"), "{err}");
    auth["jwksAllowHttp"] = json!(true);
    auth["jwksMaxAgeMs"] = json!(600_000);
    mcpcore::options::apply_json(&mut h, &json!({ "auth": auth })).expect("allowed");
    let a = h.auth.expect("auth");
    assert!(a.jwks_allow_http);
    assert_eq!(a.jwks_max_age, Duration::from_secs(600));
}
