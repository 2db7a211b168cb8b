//! Keys, tokens and a protected server for the resource-server tests (AUTH-01, AUTH-06):
//! EC P-256 keys generated with ring at test time, JWTs signed with jsonwebtoken, a JWKS file
//! or a tiny JWKS HTTP server on 127.0.0.1.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcpcore::auth::AuthOptions;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, InputRequired, Outcome, Server, Tool};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The resource URL the test servers protect.
pub const RESOURCE: &str = "https://mcp.test/mcp";
/// The authorization server (token issuer).
pub const ISSUER: &str = "https://as.test";

/// A fixed 2048-bit RSA key (PKCS#1 DER, base64) for RS256 tokens: ring verifies RSA but cannot
/// generate RSA keys, so this one was generated once for these tests. It signs test tokens only.
const RSA_TEST_KEY: &str = concat!(
    "MIIEogIBAAKCAQEArAd7iRFKhXrz5VRCys/PKtDjBGoNEXPYDsKs8u/ji5gpi1yidNdlqlVySzAm8fSvXefxog1q9C",
    "GhFp6hPoKb4mpOR2Id7BjZBTYJo7aHotntdlaW5X3m/My0JZnb27v/liNrtw/nGjhdFJaTkApxJE/jYTGnryxzJUm2",
    "T0KfTzfllkvXGqHWvOFZzgFosDp7Hpkut82fMC9+BCZxEdUZaF9P/Uu/Xpd0OhXwGdIhfkYB/2I9T+py3GXuEva+/q",
    "L9Y6inn03neE6ed4v80rlgIDjxCd3J0wt5LsIZw63iki7psbURbmiE9cSCUqW4rvQINWpCsZh05Hcx23TYHM/H2wID",
    "AQABAoIBAAW2HTgF7sXzY5E7v23xVqJIG3QO5fksMez83KDCLc6kJ3jyLeNC2s68FdaA4OzL4Aig8JOd7hebMuMdMs",
    "2a/ibsZZtBcCyMVKQze5VyXsVy28s/1l8EfjyVZUO8UcwqoofZtt6gigkuUYojR6noFtfgSR8gdr3o9A0LCfZOssWp",
    "T4T4OGJgVeQrfFyXLKnGNqD/sE7M6pikNU2mvKeooa0geh43uyA+1bkX1sC+ylPyJq9Ho039GpKaOWWiek+dF3lCai",
    "WrW49MH/MTIXiKd7DCdGPUXUAqBfQ/5Co/36Oy/0UJM0d7RVwpRkU1342rV3VDYxampDhMoQR6emIKdMUCgYEA8YU+",
    "jiacFO3hotSzfsk+dYe/ZxxzBMx+vHVCI/S8iWa4w58XU7or8FR5qyHVtnk1AI6BCBNczY6efoJOXivLFn80OdwBMM",
    "9l+5zZuUMZJMKLDW0I9vlPTyHNFnM9QaeeFU87lKhAUwjRhsuPPES+F3fNBHDZg5Z6gPJtMOx0RR0CgYEAtle3I4Hy",
    "3IQRAagoGLxFLRO+la7HrrKpInHihRxRLKygQ50wKf4yOG3USrRPHySezheZgZmcRF7D2OxOkuUmfGRXKbpqgyrCfI",
    "2pURJAQZMyGOqmiUDZEvo/k+WfkRpCW1ALmUjE2mW/GrBPNFNv3vtc2AtmqCsywYa/ld8ih1cCgYAcDktm/esxrzR/",
    "0s+LEduUkZFVbAOcchji0Yg+Xwaru2gJKWjvS/ggsd90VrjZupjCmMs6Ye1s331f2sk5vUKZOWuasQjeX6lMIjtUfw",
    "vjrkmy5JCfB/UDjzyguABMqSj+9rZIHYdjXenhC7J24NFoLn19X5KU650Nb5vpi/4xrQKBgDrgPbEIX4uWVQts6W17",
    "NPbmHi6knbMp2vTVQufqCcfcAW9zjL6yZjLUO6zXZYjPwTsYYad4Gv30f1ZGjuRdezzFBWPi3kt1/hBLiXU06GyEA7",
    "QJ6DX/K1g2V1sA1LH8gZqMUQJwfadrHPaYISrrGf8suIDFxaLdN+lHAgt5XePHAoGAHRDdIObDz5RbzBZCKOQgNUWs",
    "1Jdfmbp/171K/55JLaFSN7KY+wKCAnEoaJ95hv+knfYgOvoqo8CtHoBMN4OVHM0NZlOl4+lP3oKpqYqpDcEbEuHNs0",
    "lCfoaa4FCydmNbZ9gdNQJ9wg5rTQ2qrlFJuu8bxDbBjfcYgVVZx5gFm7c=",
);

/// An EC P-256 (or RSA) signing key with its public JWK.
pub struct TestKey {
    /// `kid`.
    pub kid: String,
    alg: Algorithm,
    enc: EncodingKey,
    /// The public JWK.
    pub jwk: Value,
}

impl TestKey {
    /// A fresh key named `kid`.
    pub fn generate(kid: &str) -> Self {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("pkcs8");
        let kp = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("key pair");
        let public = kp.public_key().as_ref();
        assert_eq!(public.len(), 65, "uncompressed P-256 point");
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(&public[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&public[33..65]),
        });
        Self {
            kid: kid.into(),
            alg: Algorithm::ES256,
            enc: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
        }
    }

    /// The fixed RSA test key named `kid` (RS256).
    pub fn rsa(kid: &str) -> Self {
        use base64::engine::general_purpose::STANDARD;
        let der = STANDARD.decode(RSA_TEST_KEY).expect("RSA key base64");
        let kp = ring::signature::RsaKeyPair::from_der(&der).expect("RSA key");
        let public: ring::rsa::PublicKeyComponents<Vec<u8>> = kp.public().into();
        let jwk = json!({
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
            "n": URL_SAFE_NO_PAD.encode(&public.n),
            "e": URL_SAFE_NO_PAD.encode(&public.e),
        });
        Self {
            kid: kid.into(),
            alg: Algorithm::RS256,
            enc: EncodingKey::from_rsa_der(&der),
            jwk,
        }
    }

    /// Sign `claims` with this key's algorithm under its `kid`.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }

    /// Sign `claims` naming `kid` (which may not be this key's).
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        self.sign_with(self.alg, kid, claims)
    }

    /// Sign `claims` with `alg` (of this key's family) naming `kid`.
    pub fn sign_with(&self, alg: Algorithm, kid: &str, claims: &Value) -> String {
        let mut h = Header::new(alg);
        h.kid = Some(kid.into());
        jsonwebtoken::encode(&h, claims, &self.enc).expect("sign")
    }

    /// Sign `claims` with the JWS `typ` header `typ` (`None`: no `typ` at all).
    pub fn sign_typ(&self, typ: Option<&str>, claims: &Value) -> String {
        let mut h = Header::new(self.alg);
        h.kid = Some(self.kid.clone());
        h.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&h, claims, &self.enc).expect("sign")
    }
}

/// A JWKS document of `keys`.
pub fn jwks(keys: &[&TestKey]) -> Value {
    json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
}

/// Now, Unix seconds.
pub fn now() -> i64 {
    let s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    i64::try_from(s).expect("seconds")
}

/// Good claims for `sub` with `scope`.
pub fn claims(sub: &str, scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": RESOURCE, "sub": sub, "scope": scope,
           "client_id": "test-client", "iat": now(), "exp": now() + 600})
}

/// Options: required `mcp:tools`, the tool `admin_op` needs `admin`.
pub fn options() -> AuthOptions {
    let mut a = AuthOptions::new(RESOURCE, ISSUER);
    a.issuer = Some(ISSUER.into());
    a.scopes_supported = vec!["mcp:tools".into(), "admin".into()];
    a.required_scopes = vec!["mcp:tools".into()];
    a.tool_scopes
        .insert("admin_op".into(), vec!["admin".into()]);
    a
}

/// Write `doc` to a fresh file and return its path.
pub fn jwks_file(doc: &Value) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let p = std::env::temp_dir().join(format!(
        "mcpcore-jwks-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::write(&p, doc.to_string()).expect("write JWKS");
    p.to_string_lossy().into_owned()
}

/// The test server: `whoami` (the principal as JSON), `admin_op` (scoped), `confirm` (an
/// `input_required` round with a sealed `requestState`).
pub fn server() -> Server {
    Server::builder("auth-test", "1")
        .tool(
            Tool::new("whoami").input_schema(json!({"type": "object"})),
            handler_fn(|ctx, _a: Value| async move {
                let p = ctx.principal().map(|p| {
                    json!({"subject": p.subject, "scopes": p.scopes, "clientId": p.client_id,
                           "issuer": p.issuer})
                });
                Ok::<Outcome, HandlerError>(
                    CallToolResult::text(p.unwrap_or(Value::Null).to_string()).into(),
                )
            }),
        )
        .tool(
            Tool::new("admin_op").input_schema(json!({"type": "object"})),
            handler_fn(|_ctx, _a: Value| async move {
                Ok::<Outcome, HandlerError>(CallToolResult::text("done").into())
            }),
        )
        .tool(
            Tool::new("confirm").input_schema(json!({"type": "object"})),
            handler_fn(|ctx, _a: Value| async move {
                if ctx.request_state() == Some("step-1") {
                    return Ok::<Outcome, HandlerError>(CallToolResult::text("confirmed").into());
                }
                Ok(InputRequired::new()
                    .elicit(
                        "ok",
                        json!({"mode": "form", "message": "Proceed?", "requestedSchema": {
                            "type": "object", "properties": {"ok": {"type": "boolean"}}}}),
                    )
                    .state("step-1")
                    .into())
            }),
        )
        .build()
        .expect("server")
}

/// Serve `server` on 127.0.0.1 with `auth` (or none).
pub async fn listen(server: &Server, auth: Option<AuthOptions>) -> HttpListener {
    let mut o = HttpOptions::default();
    o.auth = auth;
    serve(server.clone(), "127.0.0.1:0".parse().expect("addr"), o)
        .await
        .expect("listen")
}

/// A tiny JWKS server: answers every GET with the current document, counting requests.
pub struct JwksServer {
    /// `http://127.0.0.1:port/jwks.json`.
    pub url: String,
    /// The document served.
    pub doc: Arc<Mutex<Value>>,
    /// Requests served.
    pub hits: Arc<AtomicUsize>,
    /// The `Cache-Control` value sent with the document, if any.
    pub cache_control: Arc<Mutex<Option<String>>>,
}

impl JwksServer {
    /// Start serving `doc`.
    pub async fn start(doc: Value) -> Self {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/jwks.json", l.local_addr().expect("addr"));
        let doc = Arc::new(Mutex::new(doc));
        let hits = Arc::new(AtomicUsize::new(0));
        let cache_control = Arc::new(Mutex::new(None::<String>));
        let (d, h, cc) = (doc.clone(), hits.clone(), cache_control.clone());
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let (d, h, cc) = (d.clone(), h.clone(), cc.clone());
                tokio::spawn(async move {
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
                    let cc = cc.lock().expect("cache-control").clone();
                    let cc = cc.map(|v| format!("Cache-Control: {v}\r\n"));
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
                        body.len(),
                        cc.unwrap_or_default()
                    );
                    let _ = s.write_all(head.as_bytes()).await;
                    let _ = s.write_all(body.as_bytes()).await;
                });
            }
        });
        Self {
            url,
            doc,
            hits,
            cache_control,
        }
    }
}

/// The authorized session the "no secret is ever logged" tests watch: a listener requiring a
/// JWT, then in both eras a call whose arguments hold `marker`, a call refused for a missing
/// scope and a call to an unknown tool (same marker), and a request with a bad token whose body
/// is the marker (401). Returns the listener (still serving) and the good token.
pub async fn secret_workload(marker: &str) -> (HttpListener, String) {
    use mcpcore::client::{Client, ConnectMode, HttpClientOptions};
    let key = TestKey::generate("k1");
    let mut o = options();
    o.jwks_path = Some(jwks_file(&jwks(&[&key])));
    let l = listen(&server(), Some(o)).await;
    let token = key.sign(&claims("alice", "mcp:tools"));
    let url = format!("http://{}/mcp", l.local_addr());
    for mode in [ConnectMode::Modern, ConnectMode::Legacy] {
        let mut h = HttpClientOptions::default();
        h.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
        let c = Client::builder()
            .mode(mode)
            .connect_http(&url, h)
            .await
            .expect("connect");
        c.call_tool("whoami", json!({"note": marker}))
            .await
            .expect("call");
        let refused = c.call_tool("admin_op", json!({"note": marker})).await;
        assert!(refused.is_err(), "admin_op needs a scope alice lacks");
        let _ = c.call_tool("no_such_tool", json!({"note": marker})).await;
        c.close().await;
    }
    let bad = format!("Bearer {token}x");
    let h = [
        ("Content-Type", "application/json"),
        ("Authorization", bad.as_str()),
    ];
    let r = crate::http::raw_request(l.local_addr(), "POST", "/mcp", &h, marker.as_bytes()).await;
    assert_eq!(r.status, 401);
    (l, token)
}

/// An example server (`demo-server`, `conformance-server`) started with `--http 127.0.0.1:0`
/// and the `--auth-jwks/--auth-issuer/--auth-audience` flags, trusting a fresh key: the child,
/// its address, and the key that signs tokens it accepts ([`ISSUER`], audience [`RESOURCE`]).
pub async fn spawn_protected_example(
    bin: &str,
) -> (tokio::process::Child, std::net::SocketAddr, TestKey) {
    let key = TestKey::generate("k1");
    let file = jwks_file(&jwks(&[&key]));
    let args = [
        "--http",
        "127.0.0.1:0",
        "--auth-jwks",
        &file,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        RESOURCE,
    ];
    let (child, addr) = crate::http::spawn_example(bin, &args).await;
    (child, addr, key)
}
