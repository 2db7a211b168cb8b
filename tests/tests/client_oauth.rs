//! The HTTP client's OAuth 2.1 authorization (REQUIREMENTS §15) against a scripted resource
//! server + authorization server on 127.0.0.1 (one origin, the issuer): the full
//! authorization-code flow on the wire (AUTH-01, 03, 04, 05, 06, 08), refresh on a later 401
//! (AUTH-09), the refusals that must happen before any code is redeemed (no S256, a wrong
//! `state`, AUTH-04, AUTH-07), bounded step-up (AUTH-02), DPoP-bound tokens with nonces
//! (RFC 9449), and hostile token endpoints, whose errors are precise and never carry a secret
//! (nor do the logs).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use mcpcore::client::auth::{browser_fn, AuthError, AuthErrorKind, OAuthOptions};
use mcpcore::client::{Client, ClientError, HttpClientOptions};
use mcpcore_tests::scripted::{form, get, json_resp, legacy, origin, raw, Act, Req, Scripted};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SECRET: &str = "s3cr3t-client-value";
const BOUND: Duration = Duration::from_secs(20);

/// How the scripted authorization server behaves.
#[derive(Clone)]
struct Cfg {
    s256: bool,
    /// The token endpoint's answer: `None` = a good token response.
    token: Option<fn(&Req) -> Act>,
    refresh_token: bool,
    /// Answer 403 insufficient_scope to every authorized call.
    always_forbidden: bool,
    /// Refuse refresh requests with an error that echoes the request (secrets included).
    refresh_echo: bool,
    /// Advertise DPoP (ES256), demand nonces at both servers and bind tokens.
    dpop: bool,
}

impl Default for Cfg {
    fn default() -> Self {
        Self {
            s256: true,
            token: None,
            refresh_token: false,
            always_forbidden: false,
            refresh_echo: false,
            dpop: false,
        }
    }
}

#[derive(Default)]
struct State {
    challenge: Option<String>,
    issued: u32,
    /// Tokens the resource server accepts.
    valid: Vec<String>,
    /// DPoP proof ids seen by the resource server (a replay is refused).
    jtis: Vec<String>,
}

fn bearer(r: &Req) -> Option<String> {
    r.head
        .lines()
        .find_map(|l| l.strip_prefix("authorization: bearer "))
        .map(|t| t.trim().to_owned())
}

fn serve(cfg: &Cfg, st: &Mutex<State>, r: &Req) -> Act {
    let o = origin(r);
    let path = r.target.split('?').next().unwrap_or_default();
    let challenge = format!(
        "Bearer resource_metadata=\"{o}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\""
    );
    match path {
        "/.well-known/oauth-protected-resource/mcp" => json_resp(
            200,
            &json!({"resource": format!("{o}/mcp"), "authorization_servers": [o]}),
        ),
        "/.well-known/oauth-authorization-server" => {
            let mut m = json!({"issuer": o, "authorization_endpoint": format!("{o}/authorize"),
                "token_endpoint": format!("{o}/token"), "registration_endpoint": format!("{o}/register"),
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "authorization_response_iss_parameter_supported": true});
            if cfg.s256 {
                m["code_challenge_methods_supported"] = json!(["S256"]);
            }
            if cfg.dpop {
                m["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            json_resp(200, &m)
        }
        "/register" => json_resp(
            201,
            &json!({"client_id": "dyn-client", "client_secret": SECRET}),
        ),
        "/authorize" => {
            let q = form(&r.target);
            st.lock().unwrap().challenge = get(&q, "code_challenge").map(str::to_owned);
            let loc = format!(
                "{}?code=the-code&state={}&iss={}",
                get(&q, "redirect_uri").unwrap_or_default(),
                get(&q, "state").unwrap_or_default(),
                o
            );
            raw(302, "", &format!("location: {loc}\r\n"), b"")
        }
        "/token" => token(cfg, st, r),
        _ if cfg.dpop => dpop_resource(st, r, &challenge),
        _ => {
            let ok = bearer(r).is_some_and(|t| st.lock().unwrap().valid.contains(&t));
            if !ok {
                return raw(401, "", &format!("www-authenticate: {challenge}\r\n"), b"");
            }
            if cfg.always_forbidden {
                let c = format!("Bearer error=\"insufficient_scope\", scope=\"mcp:admin\", resource_metadata=\"{o}/.well-known/oauth-protected-resource/mcp\"");
                return raw(403, "", &format!("www-authenticate: {c}\r\n"), b"");
            }
            legacy(r)
        }
    }
}

fn token(cfg: &Cfg, st: &Mutex<State>, r: &Req) -> Act {
    if let Some(f) = cfg.token {
        return f(r);
    }
    let body = form(&r.text);
    if cfg.dpop {
        match proof(r) {
            Some(c) if c["nonce"] == "an1" && c["htm"] == "POST" && c.get("ath").is_none() => {}
            Some(_) => {
                return raw(
                    400,
                    "application/json",
                    "dpop-nonce: an1\r\n",
                    br#"{"error":"use_dpop_nonce"}"#,
                )
            }
            None => return json_resp(400, &json!({"error": "invalid_dpop_proof"})),
        }
    }
    if cfg.refresh_echo && get(&body, "grant_type") == Some("refresh_token") {
        let echo = format!("{} {}", r.text, r.head);
        return json_resp(
            400,
            &json!({"error": "invalid_grant", "error_description": echo}),
        );
    }
    let mut s = st.lock().unwrap();
    match get(&body, "grant_type") {
        Some("authorization_code") => {
            let v = get(&body, "code_verifier").unwrap_or_default();
            let c = URL_SAFE_NO_PAD.encode(Sha256::digest(v.as_bytes()));
            if s.challenge.as_deref() != Some(c.as_str()) || get(&body, "code") != Some("the-code")
            {
                return json_resp(400, &json!({"error": "invalid_grant"}));
            }
        }
        Some("refresh_token") if get(&body, "refresh_token") == Some("rt-1") => {}
        _ => return json_resp(400, &json!({"error": "invalid_grant"})),
    }
    s.issued += 1;
    let t = format!("tok-{}", s.issued);
    s.valid = vec![t.clone()];
    let kind = if cfg.dpop { "DPoP" } else { "Bearer" };
    let mut resp = json!({"access_token": t, "token_type": kind, "expires_in": 60});
    if cfg.refresh_token {
        resp["refresh_token"] = json!("rt-1");
    }
    json_resp(200, &resp)
}

/// The claims of the request's DPoP proof, if it has a well-formed one (typ, public jwk).
fn proof(r: &Req) -> Option<Value> {
    let jwt = r.raw_head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("dpop").then(|| v.trim().to_owned())
    })?;
    let parts: Vec<&str> = jwt.split('.').collect();
    let dec = |s: &str| -> Option<Value> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(s).ok()?).ok()
    };
    let header = dec(parts.first()?)?;
    let ok = parts.len() == 3
        && header["typ"] == "dpop+jwt"
        && header["jwk"]["kty"] == "EC"
        && header["jwk"].get("d").is_none();
    ok.then(|| dec(parts[1])).flatten()
}

/// The resource server's DPoP rules: the DPoP scheme, a proof bound to the token (`ath`) for
/// this method and URL, with the server's nonce (else 401 `use_dpop_nonce`).
fn dpop_resource(st: &Mutex<State>, r: &Req, challenge: &str) -> Act {
    let token = r
        .raw_head
        .lines()
        .find_map(|l| l.strip_prefix("authorization: DPoP "))
        .map(|t| t.trim().to_owned());
    let Some(token) = token.filter(|t| st.lock().unwrap().valid.contains(t)) else {
        return raw(401, "", &format!("www-authenticate: {challenge}\r\n"), b"");
    };
    let Some(c) = proof(r) else {
        return raw(
            401,
            "",
            "www-authenticate: DPoP error=\"invalid_dpop_proof\"\r\n",
            b"",
        );
    };
    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()));
    let url = format!("{}/mcp", origin(r));
    if c["ath"] != ath.as_str() || c["htm"] != r.method.as_str() || c["htu"] != url.as_str() {
        return raw(
            401,
            "",
            "www-authenticate: DPoP error=\"invalid_dpop_proof\"\r\n",
            b"",
        );
    }
    if c["nonce"] != "rn1" {
        let h = "www-authenticate: DPoP error=\"use_dpop_nonce\"\r\ndpop-nonce: rn1\r\n";
        return raw(401, "", h, b"");
    }
    let mut s = st.lock().unwrap();
    let jti = c["jti"].as_str().unwrap_or_default().to_owned();
    if s.jtis.contains(&jti) {
        return raw(
            401,
            "",
            "www-authenticate: DPoP error=\"invalid_dpop_proof\"\r\n",
            b"",
        );
    }
    s.jtis.push(jti);
    drop(s);
    legacy(r)
}

struct Fixture {
    server: Scripted,
    state: Arc<Mutex<State>>,
}

async fn start(cfg: Cfg) -> Fixture {
    let state = Arc::new(Mutex::new(State::default()));
    let st = state.clone();
    let server = Scripted::start(move |r| serve(&cfg, &st, r)).await;
    Fixture { server, state }
}

fn options(o: OAuthOptions) -> HttpClientOptions {
    let mut h = HttpClientOptions::default();
    h.listen_stream = false;
    h.auth = Some(o);
    h
}

fn oauth() -> OAuthOptions {
    let mut o = OAuthOptions::default();
    o.redirect_uri = "http://127.0.0.1:9/callback".into();
    o
}

async fn connect(url: &str, o: HttpClientOptions) -> Result<Client, ClientError> {
    tokio::time::timeout(BOUND, Client::builder().connect_http(url, o))
        .await
        .expect("bounded")
}

/// The scripted authorization server's issuer: the server's origin.
fn issuer(f: &Fixture) -> String {
    f.server.url.trim_end_matches("/mcp").to_owned()
}

fn requests_to(f: &Fixture, path: &str) -> Vec<Req> {
    f.server
        .requests()
        .into_iter()
        .filter(|r| r.target.split('?').next() == Some(path))
        .collect()
}

fn auth_kind(e: &ClientError) -> AuthErrorKind {
    match e {
        ClientError::Auth(a) => a.kind(),
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

/// AUTH-01/03/04/05/06/08: 401 → PRM (from the challenge) → AS metadata → DCR → code + PKCE
/// with `resource` on both requests → the call goes through with `Authorization: Bearer`.
#[tokio::test]
async fn authorization_code_flow_on_the_wire() {
    let f = start(Cfg::default()).await;
    let c = connect(&f.server.url, options(oauth()))
        .await
        .expect("connects");
    let r = c
        .call_tool("echo", json!({}))
        .await
        .expect("authorized call");
    assert_eq!(r.content[0]["text"], "ok");
    let resource = f.server.url.clone();
    let auth = requests_to(&f, "/authorize");
    assert_eq!(auth.len(), 1);
    let q = form(&auth[0].target);
    assert_eq!(get(&q, "resource"), Some(resource.as_str()));
    assert_eq!(get(&q, "code_challenge_method"), Some("S256"));
    assert_eq!(get(&q, "scope"), Some("mcp:read"), "the challenge's scope");
    assert_eq!(get(&q, "client_id"), Some("dyn-client"));
    let tok = requests_to(&f, "/token");
    let body = form(&tok[0].text);
    assert_eq!(get(&body, "resource"), Some(resource.as_str()));
    assert!(
        tok[0].head.contains("authorization: basic "),
        "client_secret_basic"
    );
    let reg: Value = requests_to(&f, "/register")[0].body.clone();
    // The first request is the modern `server/discover` probe: modern registration (AUTH-08).
    assert_eq!(reg["application_type"], "native", "{reg}");
    assert_eq!(reg["redirect_uris"], json!(["http://127.0.0.1:9/callback"]));
    for r in requests_to(&f, "/mcp").iter().skip(1) {
        assert_eq!(bearer(r).as_deref(), Some("tok-1"), "{}", r.head);
        assert!(!r.target.contains("tok-1"), "never in the query");
    }
    c.close().await;
}

/// AUTH-09: a 401 for a held token is answered with the refresh token, not a new
/// authorization.
#[tokio::test]
async fn a_rejected_token_is_refreshed() {
    let f = start(Cfg {
        refresh_token: true,
        ..Cfg::default()
    })
    .await;
    let c = connect(&f.server.url, options(oauth()))
        .await
        .expect("connects");
    c.call_tool("echo", json!({})).await.expect("first call");
    f.state.lock().unwrap().valid.clear();
    c.call_tool("echo", json!({})).await.expect("after refresh");
    assert_eq!(requests_to(&f, "/authorize").len(), 1);
    let grants: Vec<String> = requests_to(&f, "/token")
        .iter()
        .filter_map(|r| get(&form(&r.text), "grant_type").map(str::to_owned))
        .collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    c.close().await;
}

/// AUTH-04: no `S256` in the metadata ⇒ no authorization request at all.
#[tokio::test]
async fn pkce_without_s256_is_refused() {
    let f = start(Cfg {
        s256: false,
        ..Cfg::default()
    })
    .await;
    let e = connect(&f.server.url, options(oauth()))
        .await
        .expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::PkceUnsupported);
    assert!(requests_to(&f, "/authorize").is_empty());
}

/// AUTH-07 / RFC 6749 §10.12: a redirect with another `state` is rejected before the code is
/// redeemed; the user's browser callback is what returned it.
#[tokio::test]
async fn a_wrong_state_is_rejected_before_the_token_request() {
    let f = start(Cfg::default()).await;
    let mut h = options(oauth());
    let seen = Arc::new(Mutex::new(String::new()));
    let s2 = seen.clone();
    h.auth_hooks.browser = Some(browser_fn(move |url: String| {
        *s2.lock().unwrap() = url.clone();
        let iss = url
            .split("/authorize")
            .next()
            .unwrap_or_default()
            .to_owned();
        async move {
            Ok::<_, AuthError>(format!(
                "http://127.0.0.1:9/callback?code=the-code&state=forged&iss={iss}"
            ))
        }
    }));
    let e = connect(&f.server.url, h).await.expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::AuthorizationResponse);
    assert!(seen.lock().unwrap().contains("code_challenge="));
    assert!(requests_to(&f, "/token").is_empty());
}

/// AUTH-02: a server that keeps answering 403 insufficient_scope gets a bounded number of
/// authorization rounds, then the call fails with `Forbidden`.
#[tokio::test]
async fn step_up_is_bounded() {
    let f = start(Cfg {
        always_forbidden: true,
        ..Cfg::default()
    })
    .await;
    let e = connect(&f.server.url, options(oauth()))
        .await
        .expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::Forbidden);
    let n = requests_to(&f, "/authorize").len();
    assert_eq!(n, 3, "maxAuthRounds authorization rounds");
    let last = form(&requests_to(&f, "/authorize")[2].target);
    assert_eq!(get(&last, "scope"), Some("mcp:read mcp:admin"), "union");
}

/// Hostile token endpoints: each answer gives a precise `TokenEndpoint`/`Http` error, and no
/// message contains the client secret or the code, even when the server echoes them.
#[tokio::test]
async fn hostile_token_endpoints_get_precise_secret_free_errors() {
    type Case = (&'static str, fn(&Req) -> Act, AuthErrorKind, &'static str);
    let cases: Vec<Case> = vec![
        (
            "echoing error",
            |r| {
                json_resp(
                    400,
                    &json!({"error": "invalid_client", "error_description": format!("bad {SECRET} for {}", r.text)}),
                )
            },
            AuthErrorKind::TokenEndpoint,
            "invalid_client",
        ),
        (
            "not json",
            |_| raw(200, "text/html", "", b"<html>"),
            AuthErrorKind::TokenEndpoint,
            "not JSON",
        ),
        (
            "no access_token",
            |_| json_resp(200, &json!({"token_type": "Bearer"})),
            AuthErrorKind::TokenEndpoint,
            "access_token",
        ),
        (
            "header-breaking token",
            |_| json_resp(200, &json!({"access_token": "a\r\nx: y"})),
            AuthErrorKind::TokenEndpoint,
            "access_token",
        ),
        (
            "odd token_type",
            |_| json_resp(200, &json!({"access_token": "t", "token_type": "mac"})),
            AuthErrorKind::TokenEndpoint,
            "token_type",
        ),
        (
            "huge body",
            |_| raw(200, "application/json", "", &vec![b' '; 300 * 1024]),
            AuthErrorKind::TokenEndpoint,
            "exceeds",
        ),
    ];
    for (name, answer, kind, needle) in cases {
        let f = start(Cfg {
            token: Some(answer),
            ..Cfg::default()
        })
        .await;
        let mut o = oauth();
        o.client_id = Some("pre".into());
        o.client_secret = Some(SECRET.into());
        o.issuer = Some(issuer(&f));
        let e = connect(&f.server.url, options(o)).await.expect_err(name);
        assert_eq!(auth_kind(&e), kind, "{name}: {e}");
        let shown = format!("{e} {e:?}");
        assert!(shown.contains(needle), "{name}: {shown}");
        assert!(!shown.contains(SECRET), "{name} leaks the secret: {shown}");
        assert!(
            !shown.contains("the-code"),
            "{name} leaks the code: {shown}"
        );
    }
}

/// A malformed `WWW-Authenticate` is a precise error, not a panic or a guess.
#[tokio::test]
async fn a_malformed_challenge_is_a_precise_error() {
    let s =
        Scripted::start(|_| raw(401, "", "www-authenticate: Bearer scope=\"open\r\n", b"")).await;
    let e = connect(&s.url, options(oauth()))
        .await
        .expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::InvalidChallenge);
}

/// Bad auth options are refused at connect, before anything is sent, without quoting a key.
#[tokio::test]
async fn bad_auth_options_are_invalid_arguments() {
    let s = Scripted::start(legacy).await;
    let mut o = oauth();
    o.issuer = Some(s.url.trim_end_matches("/mcp").to_owned());
    o.private_key_pem =
        Some("-----BEGIN PRIVATE KEY-----\nbm90LWEta2V5\n-----END PRIVATE KEY-----".into());
    let e = connect(&s.url, options(o)).await.expect_err("refused");
    assert!(
        matches!(&e, ClientError::InvalidArgument(m) if m.contains("P-256") && !m.contains("bm90")),
        "{e:?}"
    );
    let mut o = oauth();
    o.redirect_uri = "http://app.example/cb".into();
    let e = connect(&s.url, options(o)).await.expect_err("refused");
    assert!(
        matches!(&e, ClientError::InvalidArgument(m) if m.contains("redirectUri")),
        "{e:?}"
    );
    assert!(s.requests().is_empty(), "nothing sent");
}

/// The options are JSON data in core's shape; unknown keys are refused; `Debug` hides secrets.
#[test]
fn oauth_options_json_shape() {
    let o: HttpClientOptions = serde_json::from_value(json!({"auth": {
        "clientId": "c", "clientSecret": SECRET, "redirectUri": "http://localhost:1/cb",
        "grant": "clientCredentials", "maxAuthRounds": 2}}))
    .expect("valid");
    let a = o.auth.clone().expect("auth set");
    assert_eq!(a.client_id.as_deref(), Some("c"));
    assert_eq!(a.max_auth_rounds, 2);
    assert!(!format!("{o:?}").contains(SECRET));
    assert!(
        serde_json::from_value::<HttpClientOptions>(json!({"auth": {"clientSecrt": "x"}})).is_err()
    );
    let plain = serde_json::to_value(HttpClientOptions::default()).expect("serializes");
    assert!(plain.get("auth").is_none());
}

/// RFC 9449: with DPoP on and ES256 advertised, the token request carries a proof and is
/// retried with the authorization server's nonce; the token is presented with the DPoP scheme
/// and a fresh proof (`ath`, `htm`, `htu`, the resource server's nonce) on every request.
#[tokio::test]
async fn dpop_bound_tokens_with_nonces() {
    let f = start(Cfg {
        dpop: true,
        ..Cfg::default()
    })
    .await;
    let mut o = oauth();
    o.dpop = true;
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    for _ in 0..3 {
        c.call_tool("echo", json!({})).await.expect("DPoP call");
    }
    let tokens = requests_to(&f, "/token");
    assert_eq!(tokens.len(), 2, "one nonce retry at the token endpoint");
    // The server refuses a replayed jti, so every accepted request had its own proof.
    let accepted = f.state.lock().unwrap().jtis.len();
    assert!(accepted >= 4, "{accepted} accepted proofs");
    c.close().await;
}

/// A `Write` into a shared buffer, for capturing logs.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Secrets never reach the logs: a failed refresh (whose error body echoes the request: the
/// refresh token, the client secret) is logged, then the client authorizes again; at TRACE
/// level nothing logged contains the secret, a token or the code.
#[tokio::test]
async fn secrets_never_reach_the_logs() {
    use tracing_subscriber::util::SubscriberInitExt;
    let sink = Sink::default();
    let s2 = sink.clone();
    let _guard = tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::TRACE)
        .with_writer(move || s2.clone())
        .with_ansi(false)
        .finish()
        .set_default();
    let f = start(Cfg {
        refresh_token: true,
        refresh_echo: true,
        ..Cfg::default()
    })
    .await;
    let mut o = oauth();
    o.client_id = Some("pre".into());
    o.client_secret = Some(SECRET.into());
    o.issuer = Some(issuer(&f));
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    c.call_tool("echo", json!({})).await.expect("first call");
    f.state.lock().unwrap().valid.clear();
    c.call_tool("echo", json!({}))
        .await
        .expect("authorized again");
    assert_eq!(
        requests_to(&f, "/authorize").len(),
        2,
        "refresh failed, new flow"
    );
    c.close().await;
    let logs = String::from_utf8_lossy(&sink.0.lock().unwrap()).into_owned();
    assert!(
        logs.contains("refresh failed"),
        "the failure is logged: {logs}"
    );
    for secret in [SECRET, "rt-1", "tok-1", "tok-2", "the-code"] {
        assert!(!logs.contains(secret), "{secret} in the logs:\n{logs}");
    }
}
