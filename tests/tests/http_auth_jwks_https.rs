//! The JWT verifier's JWKS over HTTPS (AUTH-06): fetched through core's TLS-capable HTTP
//! client from a JWKS server on 127.0.0.1 with a certificate of a test CA, trusted only
//! through `jwksTls` (platform roots off); a JWKS server of another CA is refused (503, no
//! details), the size cap holds over TLS too, and bad TLS options fail when the verifier is
//! built.

mod tls_util;

use mcpcore::auth::AuthOptions;
use mcpcore::client::ClientTls;
use mcpcore_tests::auth::{claims, jwks, listen, options, server, TestKey};
use mcpcore_tests::http::{modern_headers, raw_request, HttpReply};
use mcpcore_tests::stdio::envelope;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tls_util::{Ca, TempDir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsAcceptor;

/// A JWKS document served over HTTPS with a certificate of `ca` for 127.0.0.1.
struct HttpsJwks {
    url: String,
    doc: Arc<Mutex<Value>>,
    /// Requests that arrived over a completed handshake.
    hits: Arc<AtomicUsize>,
}

impl HttpsJwks {
    async fn start(ca: &Ca, doc: Value) -> Self {
        let leaf = ca.server(&["127.0.0.1", "localhost"]);
        let config = mcpcore::transport::tls::server_config_from_pem(
            leaf.cert_pem.as_bytes(),
            leaf.key_pem.as_bytes(),
            None,
        )
        .expect("server TLS");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("https://{}/jwks.json", l.local_addr().expect("addr"));
        let doc = Arc::new(Mutex::new(doc));
        let hits = Arc::new(AtomicUsize::new(0));
        let (d, h) = (doc.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((sock, _)) = l.accept().await {
                let (d, h, acceptor) = (d.clone(), h.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let Ok(mut s) = acceptor.accept(sock).await else {
                        return;
                    };
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 1024];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    h.fetch_add(1, Ordering::SeqCst);
                    let body = d.lock().expect("doc").to_string();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = s.write_all(head.as_bytes()).await;
                    let _ = s.write_all(body.as_bytes()).await;
                    let _ = s.shutdown().await;
                });
            }
        });
        Self { url, doc, hits }
    }
}

/// Trust exactly `ca` (no platform roots).
fn trusting(ca: &Ca) -> ClientTls {
    serde_json::from_value(json!({"caPem": ca.pem(), "platformRoots": false})).expect("tls")
}

async fn call(addr: SocketAddr, token: &str) -> HttpReply {
    let mut h = modern_headers("tools/call", Some("whoami"));
    h.push(("Authorization".into(), format!("Bearer {token}")));
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": envelope(json!({}))}});
    raw_request(addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await
}

#[tokio::test]
async fn auth06_jwks_over_https_with_a_private_ca() {
    let ca = Ca::new("jwks test CA");
    let k1 = TestKey::generate("k1");
    let k2 = TestKey::generate("k2");
    let srv = HttpsJwks::start(&ca, jwks(&[&k1])).await;
    // The JSON shape: `jwksTls` is the HTTP client's `tls` object.
    let mut j = serde_json::to_value(options()).expect("options JSON");
    j["jwksUrl"] = json!(srv.url);
    j["jwksTls"] = serde_json::to_value(trusting(&ca)).expect("tls JSON");
    j["jwksMinRefreshMs"] = json!(0);
    let o: AuthOptions = serde_json::from_value(j).expect("valid options");
    let server = server();
    let l = listen(&server, Some(o)).await;
    let addr = l.local_addr();
    let mut r = call(addr, &k1.sign(&claims("alice", "mcp:tools"))).await;
    let status = r.status;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&r.body().await));
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
    // A rotated key set is fetched again over the same TLS settings.
    *srv.doc.lock().expect("doc") = jwks(&[&k1, &k2]);
    let r = call(addr, &k2.sign(&claims("bob", "mcp:tools"))).await;
    assert_eq!(r.status, 200);
    assert_eq!(srv.hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn auth06_jwks_from_an_untrusted_certificate_is_503() {
    let ca = Ca::new("jwks test CA");
    let other = Ca::new("another CA");
    let k1 = TestKey::generate("k1");
    let srv = HttpsJwks::start(&ca, jwks(&[&k1])).await;
    let mut o = options();
    o.jwks_url = Some(srv.url.clone());
    o.jwks_tls = Some(trusting(&other));
    let server = server();
    let l = listen(&server, Some(o)).await;
    let mut r = call(l.local_addr(), &k1.sign(&claims("alice", "mcp:tools"))).await;
    assert_eq!(r.status, 503);
    let body = String::from_utf8(r.body().await).expect("utf-8");
    assert!(
        !body.contains("127.0.0.1") && !body.contains("certificate"),
        "{body}"
    );
    assert_eq!(
        srv.hits.load(Ordering::SeqCst),
        0,
        "no request without trust"
    );
}

#[tokio::test]
async fn auth06_jwks_size_cap_holds_over_https() {
    let ca = Ca::new("jwks test CA");
    let k1 = TestKey::generate("k1");
    let mut doc = jwks(&[&k1]);
    doc["padding"] = json!("x".repeat(4096));
    let srv = HttpsJwks::start(&ca, doc).await;
    let mut o = options();
    o.jwks_url = Some(srv.url.clone());
    o.jwks_tls = Some(trusting(&ca));
    o.jwks_max_bytes = 1024;
    let server = server();
    let l = listen(&server, Some(o)).await;
    let r = call(l.local_addr(), &k1.sign(&claims("alice", "mcp:tools"))).await;
    assert_eq!(r.status, 503);
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
}

/// Bad TLS settings and other schemes fail when the verifier is built, before any token.
#[test]
fn jwks_tls_options_are_checked_up_front() {
    let dir = TempDir::new();
    let mut o = options();
    o.jwks_url = Some("https://127.0.0.1:9/jwks.json".into());
    o.jwks_tls = Some(
        serde_json::from_value(
            json!({"caFile": dir.0.join("missing.pem"), "platformRoots": false}),
        )
        .expect("tls"),
    );
    let e = o.build_verifier().err().expect("refused");
    assert!(e.contains("jwksTls") && e.contains("missing.pem"), "{e}");
    let not_pem = dir.write("bad.pem", "not a certificate");
    o.jwks_tls = Some(
        serde_json::from_value(json!({"caFile": not_pem, "platformRoots": false})).expect("tls"),
    );
    assert!(o.build_verifier().is_err());
    o.jwks_tls = None;
    o.jwks_url = Some("ftp://127.0.0.1/jwks.json".into());
    let e = o.build_verifier().err().expect("refused");
    assert!(e.contains("https://"), "{e}");
    let bad = json!({"resource": "http://x/mcp", "authorizationServers": ["http://as"],
        "jwksTls": {"caPm": "typo"}});
    assert!(
        serde_json::from_value::<AuthOptions>(bad).is_err(),
        "unknown key refused"
    );
}
