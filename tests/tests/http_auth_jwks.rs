//! The JWT verifier's JWKS URL (AUTH-06): fetched through core's HTTP client from a tiny JWKS
//! server on 127.0.0.1, refreshed when a token names an unknown `kid`, at most once per
//! `jwksMinRefreshMs`, and an unreachable key source answered 503 without details.

use mcpcore_tests::auth::{claims, jwks, listen, options, server, JwksServer, TestKey};
use mcpcore_tests::http::{modern_headers, raw_request, HttpReply};
use mcpcore_tests::stdio::envelope;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

async fn call(addr: SocketAddr, token: &str) -> HttpReply {
    call_tool(addr, token, "whoami", json!({})).await
}

async fn call_tool(
    addr: SocketAddr,
    token: &str,
    name: &str,
    args: serde_json::Value,
) -> HttpReply {
    let auth = format!("Bearer {token}");
    let mut h = modern_headers("tools/call", Some(name));
    h.push(("Authorization".into(), auth));
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": args, "_meta": envelope(json!({}))}});
    raw_request(addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await
}

async fn description(mut r: HttpReply) -> String {
    r.json().await["error_description"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn auth06_jwks_url_fetch_and_rate_limited_refresh_on_unknown_kid() {
    let k1 = TestKey::generate("k1");
    let k2 = TestKey::generate("k2");
    let jwks_srv = JwksServer::start(jwks(&[&k1])).await;
    let mut o = options();
    o.jwks_url = Some(jwks_srv.url.clone());
    o.jwks_min_refresh = Duration::from_millis(800);
    let server = server();
    let l = listen(&server, Some(o)).await;
    let addr = l.local_addr();

    // Nothing is fetched before the first token.
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 0);
    let r = call(addr, &k1.sign(&claims("alice", "mcp:tools"))).await;
    assert_eq!(r.status, 200);
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);
    // Known keys are served from the cache.
    let r = call(addr, &k1.sign(&claims("bob", "mcp:tools"))).await;
    assert_eq!(r.status, 200);
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);

    // The key set rotates in k2. Right after a fetch, an unknown kid does not fetch again.
    *jwks_srv.doc.lock().expect("doc") = jwks(&[&k1, &k2]);
    let t2 = k2.sign(&claims("alice", "mcp:tools"));
    let r = call(addr, &t2).await;
    assert_eq!(r.status, 401);
    assert_eq!(description(r).await, "unknown signing key");
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);

    // Once the interval passed, the unknown kid triggers one refresh and verifies.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let r = call(addr, &t2).await;
    assert_eq!(r.status, 200);
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 2);

    // A burst of random kids right after costs no fetch at all.
    for i in 0..5 {
        let r = call(
            addr,
            &k2.sign_as(&format!("random-{i}"), &claims("eve", "mcp:tools")),
        )
        .await;
        assert_eq!(r.status, 401);
    }
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn auth06_unreachable_jwks_is_503_without_details() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let k1 = TestKey::generate("k1");
    let mut o = options();
    o.jwks_url = Some(format!("http://127.0.0.1:{port}/jwks.json"));
    let server = server();
    let l = listen(&server, Some(o)).await;
    let mut r = call(l.local_addr(), &k1.sign(&claims("alice", "mcp:tools"))).await;
    assert_eq!(r.status, 503);
    let body = String::from_utf8(r.body().await).expect("utf-8");
    assert!(
        !body.contains("127.0.0.1") && !body.contains("jwks"),
        "{body}"
    );
}

#[tokio::test]
async fn auth06_jwks_over_the_size_cap_is_refused() {
    let k1 = TestKey::generate("k1");
    let mut doc = jwks(&[&k1]);
    doc["padding"] = json!("x".repeat(4096));
    let jwks_srv = JwksServer::start(doc).await;
    let mut o = options();
    o.jwks_url = Some(jwks_srv.url.clone());
    o.jwks_max_bytes = 1024;
    let server = server();
    let l = listen(&server, Some(o)).await;
    let r = call(l.local_addr(), &k1.sign(&claims("alice", "mcp:tools"))).await;
    assert_eq!(r.status, 503);
    assert_eq!(jwks_srv.hits.load(Ordering::SeqCst), 1);
}

/// The demo server's `--auth FILE` flag: the JSON of `HttpOptions.auth`, served for real.
#[tokio::test]
async fn demo_server_auth_flag() {
    let key = TestKey::generate("k1");
    let mut auth = serde_json::to_value(options()).expect("options JSON");
    auth["jwksPath"] = json!(mcpcore_tests::auth::jwks_file(&jwks(&[&key])));
    let file = mcpcore_tests::auth::jwks_file(&auth); // any JSON document
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let mut child = tokio::process::Command::new(mcpcore_tests::example_bin("demo-server"))
        .args(["--http", &addr.to_string(), "--auth", &file])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn demo-server");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "demo-server did not listen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut prm = raw_request(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        b"",
    )
    .await;
    assert_eq!(prm.status, 200);
    assert_eq!(prm.json().await["resource"], mcpcore_tests::auth::RESOURCE);
    let r = call(addr, "not-a-jwt").await;
    assert_eq!(r.status, 401);
    let t = key.sign(&claims("alice", "mcp:tools"));
    let mut r = call_tool(addr, &t, "echo", json!({"text": "hi"})).await;
    assert_eq!(r.status, 200);
    let v = r.json().await;
    assert_eq!(v["result"]["content"][0]["text"], "hi", "{v}");
    child.start_kill().expect("kill");
    let _ = child.wait().await;
}
