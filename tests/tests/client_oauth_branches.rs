//! The OAuth client's refusal and re-registration branches on the wire, against a scripted
//! resource server with two authorization servers on one 127.0.0.1 origin (issuers
//! `<origin>/as1` and `<origin>/as2`): AS metadata naming another issuer (AUTH-03), a PRM for
//! another resource (AUTH-01/05), RFC 9207 `iss` wrong or missing when advertised (AUTH-07),
//! AS migration with re-registration (AUTH-09), and the machine grants with
//! `client_secret_basic` and `private_key_jwt` (the assertion's signature and claims checked
//! by the scripted AS). Each test asserts on what the scripted servers observed.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use mcpcore::client::auth::{AuthErrorKind, GrantKind, OAuthOptions};
use mcpcore::client::{Client, ClientError, HttpClientOptions};
use mcpcore_tests::scripted::{form, get, json_resp, legacy, origin, raw, Act, Req, Scripted};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, UnparsedPublicKey};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const BOUND: Duration = Duration::from_secs(20);

/// The redirect's RFC 9207 `iss`.
#[derive(Clone, Copy, Default, PartialEq)]
enum Iss {
    #[default]
    Right,
    Wrong,
    Missing,
}

/// How the scripted servers behave.
#[derive(Clone, Default)]
struct Cfg {
    /// The PRM `resource` path (default `/mcp`, the server's own).
    resource_path: Option<&'static str>,
    /// The AS metadata names `<origin>/evil` as its issuer.
    wrong_issuer: bool,
    iss: Iss,
    /// `authorization_response_iss_parameter_supported`.
    iss_advertised: bool,
    /// `token_endpoint_auth_methods_supported` (default `client_secret_basic`; empty: absent).
    methods: Option<&'static [&'static str]>,
    /// The raw P-256 public key `private_key_jwt` assertions are verified with.
    client_key: Option<Vec<u8>>,
}

#[derive(Default)]
struct State {
    /// The authorization server the PRM names (`as1`, `as2`).
    current: String,
    issued: u32,
    valid: Vec<String>,
    /// The verified `private_key_jwt` claims.
    assertions: Vec<Value>,
    /// Why the token endpoint refused a client (none expected).
    refused: Vec<String>,
}

fn header(r: &Req, name: &str) -> Option<String> {
    r.raw_head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

fn path(r: &Req) -> &str {
    r.target.split('?').next().unwrap_or_default()
}

fn serve(cfg: &Cfg, st: &Mutex<State>, r: &Req) -> Act {
    let o = origin(r);
    let p = path(r);
    if p == "/.well-known/oauth-protected-resource/mcp" {
        let current = st.lock().unwrap().current.clone();
        let res = format!("{o}{}", cfg.resource_path.unwrap_or("/mcp"));
        let body = json!({"resource": res, "authorization_servers": [format!("{o}/{current}")]});
        return json_resp(200, &body);
    }
    for a in ["as1", "as2"] {
        if p == format!("/.well-known/oauth-authorization-server/{a}") {
            return metadata(cfg, &o, a);
        }
        if let Some(rest) = p.strip_prefix(&format!("/{a}/")) {
            return authorization_server(cfg, st, r, &format!("{o}/{a}"), a, rest);
        }
    }
    if p.starts_with("/.well-known/") {
        return raw(404, "", "", b"");
    }
    let token =
        header(r, "authorization").and_then(|h| h.strip_prefix("Bearer ").map(str::to_owned));
    let presented = token.is_some();
    if !token.is_some_and(|t| st.lock().unwrap().valid.contains(&t)) {
        // RFC 6750 §3.1: a presented token that is no longer good (here: expired).
        let error = if presented {
            "error=\"invalid_token\", error_description=\"expired\", "
        } else {
            ""
        };
        let c = format!(
            "Bearer {error}resource_metadata=\"{o}/.well-known/oauth-protected-resource/mcp\""
        );
        return raw(401, "", &format!("www-authenticate: {c}\r\n"), b"");
    }
    legacy(r)
}

fn metadata(cfg: &Cfg, o: &str, a: &str) -> Act {
    let issuer = if cfg.wrong_issuer {
        format!("{o}/evil")
    } else {
        format!("{o}/{a}")
    };
    let methods = cfg.methods.unwrap_or(&["client_secret_basic"]);
    let mut m = json!({"issuer": issuer, "authorization_endpoint": format!("{o}/{a}/authorize"),
        "token_endpoint": format!("{o}/{a}/token"), "registration_endpoint": format!("{o}/{a}/register"),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": cfg.iss_advertised});
    // An empty list stands for a server that lists none (RFC 8414 default applies).
    if !methods.is_empty() {
        m["token_endpoint_auth_methods_supported"] = json!(methods);
    }
    json_resp(200, &m)
}

fn authorization_server(
    cfg: &Cfg,
    st: &Mutex<State>,
    r: &Req,
    issuer: &str,
    a: &str,
    rest: &str,
) -> Act {
    match rest {
        "register" => json_resp(
            201,
            &json!({"client_id": format!("client-{a}"), "client_secret": format!("secret-{a}")}),
        ),
        "authorize" => {
            let q = form(&r.target);
            let mut loc = format!(
                "{}?code=code-{a}&state={}",
                get(&q, "redirect_uri").unwrap_or_default(),
                get(&q, "state").unwrap_or_default(),
            );
            match cfg.iss {
                Iss::Right => loc.push_str(&format!("&iss={issuer}")),
                Iss::Wrong => loc.push_str(&format!("&iss={issuer}x")),
                Iss::Missing => {}
            }
            raw(302, "", &format!("location: {loc}\r\n"), b"")
        }
        "token" => token(cfg, st, r, issuer, a),
        _ => raw(404, "", "", b""),
    }
}

fn token(cfg: &Cfg, st: &Mutex<State>, r: &Req, issuer: &str, a: &str) -> Act {
    let body = form(&r.text);
    let mut s = st.lock().unwrap();
    if let Some(key) = &cfg.client_key {
        match verify_assertion(key, &body, issuer) {
            Ok(claims) => s.assertions.push(claims),
            Err(why) => {
                s.refused.push(why);
                return json_resp(401, &json!({"error": "invalid_client"}));
            }
        }
    }
    s.issued += 1;
    let t = format!("{a}-tok-{}", s.issued);
    s.valid = vec![t.clone()];
    let mut resp = json!({"access_token": t, "token_type": "Bearer"});
    // RFC 6749 §4.4.3: no refresh token for client_credentials.
    if get(&body, "grant_type") != Some("client_credentials") {
        resp["refresh_token"] = json!(format!("rt-{a}"));
    }
    json_resp(200, &resp)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// RFC 7523 §3 as the AS applies it: ES256 signature by the registered key, `iss` = `sub` =
/// the client id, `aud` = the issuer, unexpired, with a `jti`.
fn verify_assertion(key: &[u8], body: &[(String, String)], issuer: &str) -> Result<Value, String> {
    if get(body, "client_assertion_type")
        != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    {
        return Err("client_assertion_type".into());
    }
    let jwt = get(body, "client_assertion").ok_or("no client_assertion")?;
    let parts: Vec<&str> = jwt.split('.').collect();
    let [h, c, sig] = parts[..] else {
        return Err("not a JWS".into());
    };
    let dec = |s: &str| URL_SAFE_NO_PAD.decode(s).map_err(|e| e.to_string());
    let header: Value = serde_json::from_slice(&dec(h)?).map_err(|e| e.to_string())?;
    let claims: Value = serde_json::from_slice(&dec(c)?).map_err(|e| e.to_string())?;
    if header["alg"] != "ES256" {
        return Err(format!("alg {}", header["alg"]));
    }
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, key)
        .verify(format!("{h}.{c}").as_bytes(), &dec(sig)?)
        .map_err(|_| "bad signature".to_owned())?;
    let id = get(body, "client_id").ok_or("no client_id")?;
    let exp = claims["exp"].as_u64().unwrap_or(0);
    let ok = claims["iss"] == id
        && claims["sub"] == id
        && claims["aud"] == issuer
        && exp > now()
        && claims["jti"].as_str().is_some_and(|j| !j.is_empty());
    if ok {
        Ok(claims)
    } else {
        Err(format!("claims {claims}"))
    }
}

struct Fixture {
    server: Scripted,
    state: Arc<Mutex<State>>,
}

async fn start(cfg: Cfg) -> Fixture {
    let state = Arc::new(Mutex::new(State {
        current: "as1".into(),
        ..State::default()
    }));
    let st = state.clone();
    let server = Scripted::start(move |r| serve(&cfg, &st, r)).await;
    Fixture { server, state }
}

impl Fixture {
    /// The issuer `<origin>/<a>` of the scripted authorization server `a`.
    fn issuer(&self, a: &str) -> String {
        format!("{}/{a}", self.server.url.trim_end_matches("/mcp"))
    }

    fn to(&self, p: &str) -> Vec<Req> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| path(r) == p)
            .collect()
    }
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

fn auth_kind(e: &ClientError) -> AuthErrorKind {
    match e {
        ClientError::Auth(a) => a.kind(),
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

/// AUTH-03: metadata whose `issuer` is not the issuer its URL was built from is discarded:
/// nothing is registered, authorized or redeemed there.
#[tokio::test]
async fn metadata_naming_another_issuer_is_refused() {
    let f = start(Cfg {
        wrong_issuer: true,
        ..Cfg::default()
    })
    .await;
    let e = connect(&f.server.url, options(oauth()))
        .await
        .expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::ServerMetadata, "{e}");
    assert!(e.to_string().contains("/evil"), "{e}");
    assert_eq!(f.to("/.well-known/oauth-authorization-server/as1").len(), 1);
    for p in ["/as1/register", "/as1/authorize", "/as1/token"] {
        assert!(f.to(p).is_empty(), "{p} was used");
    }
}

/// AUTH-01/05: a PRM whose `resource` is another server's is final (no other location is
/// tried, no authorization server is contacted).
#[tokio::test]
async fn a_prm_for_another_resource_is_refused() {
    let f = start(Cfg {
        resource_path: Some("/other"),
        ..Cfg::default()
    })
    .await;
    let e = connect(&f.server.url, options(oauth()))
        .await
        .expect_err("refused");
    assert_eq!(auth_kind(&e), AuthErrorKind::ResourceMismatch, "{e}");
    let seen: Vec<String> = f
        .server
        .requests()
        .iter()
        .map(|r| path(r).to_owned())
        .collect();
    assert!(!seen.iter().any(|p| p.contains("as1")), "{seen:?}");
    assert!(
        !seen
            .iter()
            .any(|p| p == "/.well-known/oauth-protected-resource"),
        "{seen:?}"
    );
}

/// AUTH-07 (RFC 9207): an `iss` that is not the issuer, or none when the AS advertises it, is
/// rejected before the code is redeemed; an AS that does not advertise it may omit it.
#[tokio::test]
async fn redirect_iss_is_checked_before_redeeming_the_code() {
    for (iss, advertised, refused) in [
        (Iss::Wrong, true, true),
        (Iss::Wrong, false, true),
        (Iss::Missing, true, true),
        (Iss::Missing, false, false),
        (Iss::Right, true, false),
    ] {
        let f = start(Cfg {
            iss,
            iss_advertised: advertised,
            ..Cfg::default()
        })
        .await;
        let r = connect(&f.server.url, options(oauth())).await;
        assert_eq!(f.to("/as1/authorize").len(), 1);
        let tokens = f.to("/as1/token").len();
        match r {
            Err(e) if refused => {
                assert_eq!(auth_kind(&e), AuthErrorKind::AuthorizationResponse, "{e}");
                assert_eq!(tokens, 0, "the code was redeemed");
            }
            Ok(c) if !refused => {
                assert_eq!(tokens, 1);
                c.close().await;
            }
            other => panic!(
                "iss {:?} advertised {advertised}: {:?}",
                iss as u8,
                other.err()
            ),
        }
    }
}

/// AUTH-09: when the PRM names a new authorization server, the client registers with it
/// afresh; the old server's client credentials and refresh token never reach it.
#[tokio::test]
async fn a_new_authorization_server_gets_a_new_registration() {
    let f = start(Cfg::default()).await;
    let c = connect(&f.server.url, options(oauth()))
        .await
        .expect("connects");
    c.call_tool("echo", json!({})).await.expect("via as1");
    {
        let mut s = f.state.lock().unwrap();
        s.current = "as2".into();
        s.valid.clear();
    }
    c.call_tool("echo", json!({})).await.expect("via as2");
    assert_eq!(f.to("/as1/register").len(), 1);
    assert_eq!(f.to("/as2/register").len(), 1, "re-registered");
    let auth = f.to("/as2/authorize");
    assert_eq!(auth.len(), 1);
    assert_eq!(get(&form(&auth[0].target), "client_id"), Some("client-as2"));
    let tok = f.to("/as2/token");
    assert_eq!(tok.len(), 1, "no refresh attempt at as2");
    let basic = STANDARD.encode("client-as2:secret-as2");
    assert_eq!(
        header(&tok[0], "authorization"),
        Some(format!("Basic {basic}"))
    );
    for r in f.to("/as2/token").iter().chain(&f.to("/as2/authorize")) {
        let all = format!("{} {} {}", r.raw_head, r.target, r.text);
        assert!(
            !all.contains("rt-as1") && !all.contains("client-as1"),
            "{all}"
        );
    }
    let last = f.to("/mcp").pop().expect("a call");
    assert_eq!(
        header(&last, "authorization").as_deref(),
        Some("Bearer as2-tok-2")
    );
    c.close().await;
}

/// AUTH-09: pre-registered credentials bound to one issuer (`auth.issuer`) are used there only.
/// When the PRM then names another authorization server, the call fails with
/// `UntrustedIssuer` naming it, and that server receives nothing at all (not even a metadata
/// request): the MCP server does not get to choose where the secret goes.
#[tokio::test]
async fn pre_registered_credentials_stay_with_their_issuer() {
    let f = start(Cfg::default()).await;
    let mut o = oauth();
    o.client_id = Some("pre-id".into());
    o.client_secret = Some("pre-secret".into());
    o.issuer = Some(f.issuer("as1"));
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    c.call_tool("echo", json!({})).await.expect("via as1");
    assert!(f.to("/as1/register").is_empty(), "pre-registered at as1");
    let pre = STANDARD.encode("pre-id:pre-secret");
    assert_eq!(
        header(&f.to("/as1/token")[0], "authorization"),
        Some(format!("Basic {pre}"))
    );
    {
        let mut s = f.state.lock().unwrap();
        s.current = "as2".into();
        s.valid.clear();
    }
    let e = c
        .call_tool("echo", json!({}))
        .await
        .expect_err("as2 refused");
    c.close().await;
    assert_eq!(auth_kind(&e), AuthErrorKind::UntrustedIssuer, "{e}");
    let shown = format!("{e} {e:?}");
    assert!(
        shown.contains(&f.issuer("as2")),
        "names the server: {shown}"
    );
    assert!(!shown.contains("pre-secret"), "{shown}");
    let to_as2: Vec<Req> = f
        .server
        .requests()
        .into_iter()
        .filter(|r| path(r).contains("as2"))
        .collect();
    assert!(to_as2.is_empty(), "as2 was contacted: {:?}", to_as2.len());
}

/// A pre-registered public client (an id, no secret) bound to one issuer follows the PRM to
/// another authorization server by registering there (AUTH-08/09: MCP discovery); its id is not
/// sent there.
#[tokio::test]
async fn a_public_client_follows_the_prm_to_a_new_server() {
    let f = start(Cfg::default()).await;
    f.state.lock().unwrap().current = "as2".into();
    let mut o = oauth();
    o.client_id = Some("pre-id".into());
    o.issuer = Some(f.issuer("as1"));
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    c.call_tool("echo", json!({})).await.expect("via as2");
    c.close().await;
    assert_eq!(f.to("/as2/register").len(), 1, "registered with as2");
    let auth = f.to("/as2/authorize");
    assert_eq!(get(&form(&auth[0].target), "client_id"), Some("client-as2"));
    for r in f.to("/as2/token").iter().chain(&auth) {
        let all = format!("{} {} {}", r.raw_head, r.target, r.text);
        assert!(!all.contains("pre-id"), "{all}");
    }
}

/// AUTH-09: an expired access token (401 `invalid_token`) is renewed with the refresh token
/// at the same authorization server, with the registered client's authentication and
/// `resource` (AUTH-05), without a new authorization; the call is resent with the new token.
#[tokio::test]
async fn an_expired_token_is_refreshed_on_401() {
    let f = start(Cfg::default()).await;
    let c = connect(&f.server.url, options(oauth()))
        .await
        .expect("connects");
    c.call_tool("echo", json!({})).await.expect("first call");
    f.state.lock().unwrap().valid.clear();
    c.call_tool("echo", json!({})).await.expect("after refresh");
    assert_eq!(f.to("/as1/authorize").len(), 1, "no second authorization");
    let tok = f.to("/as1/token");
    assert_eq!(tok.len(), 2);
    let body = form(&tok[1].text);
    assert_eq!(get(&body, "grant_type"), Some("refresh_token"));
    assert_eq!(get(&body, "refresh_token"), Some("rt-as1"));
    assert_eq!(get(&body, "resource"), Some(f.server.url.as_str()));
    let basic = STANDARD.encode("client-as1:secret-as1");
    assert_eq!(
        header(&tok[1], "authorization"),
        Some(format!("Basic {basic}"))
    );
    let calls = f.to("/mcp");
    let refused = calls
        .iter()
        .position(|r| header(r, "authorization").as_deref() == Some("Bearer as1-tok-1"))
        .expect("the first token was used");
    assert!(refused < calls.len() - 1);
    assert_eq!(
        header(calls.last().expect("a call"), "authorization").as_deref(),
        Some("Bearer as1-tok-2"),
        "resent with the refreshed token"
    );
    c.close().await;
}

/// `client_credentials` with `client_secret_basic`: the id and secret form-encoded in the
/// Basic header (RFC 6749 §2.3.1), `resource` sent (AUTH-05), no browser step.
#[tokio::test]
async fn client_credentials_with_client_secret_basic() {
    let f = start(Cfg::default()).await;
    let mut o = oauth();
    o.grant = GrantKind::ClientCredentials;
    o.client_id = Some("svc:1".into());
    o.client_secret = Some("p@ss w/+".into());
    o.issuer = Some(f.issuer("as1"));
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    c.call_tool("echo", json!({})).await.expect("authorized");
    assert!(f.to("/as1/authorize").is_empty() && f.to("/as1/register").is_empty());
    let tok = f.to("/as1/token");
    assert_eq!(tok.len(), 1);
    let body = form(&tok[0].text);
    assert_eq!(get(&body, "grant_type"), Some("client_credentials"));
    assert_eq!(get(&body, "resource"), Some(f.server.url.as_str()));
    assert_eq!(get(&body, "client_secret"), None, "not in the body");
    let basic = header(&tok[0], "authorization").expect("Basic header");
    let basic = STANDARD
        .decode(basic.strip_prefix("Basic ").expect("Basic scheme"))
        .expect("base64");
    let basic = String::from_utf8(basic).expect("utf-8");
    let (id, secret) = basic.split_once(':').expect("id:secret");
    assert!(
        !id.contains(':') && !secret.contains(' '),
        "form-encoded: {basic}"
    );
    let decoded = form(&format!("id={id}&secret={secret}"));
    assert_eq!(get(&decoded, "id"), Some("svc:1"));
    assert_eq!(get(&decoded, "secret"), Some("p@ss w/+"));
    c.close().await;
}

/// `client_credentials` with `private_key_jwt` (RFC 7523 §2.2): the AS verifies the ES256
/// signature and the claims (`iss` = `sub` = client id, `aud` = issuer, unexpired, `jti`);
/// every token request carries a fresh assertion and no secret.
#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    let rng = SystemRandom::new();
    let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("key");
    let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).expect("pair");
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(pkcs8.as_ref())
    );
    // Listed alone, listed after `none`, and no list at all: a configured key is used.
    let lists: [&'static [&'static str]; 3] =
        [&["private_key_jwt"], &["none", "private_key_jwt"], &[]];
    for methods in lists {
        let f = start(Cfg {
            methods: Some(methods),
            client_key: Some(pair.public_key().as_ref().to_vec()),
            ..Cfg::default()
        })
        .await;
        let mut o = oauth();
        o.grant = GrantKind::ClientCredentials;
        o.client_id = Some("svc-jwt".into());
        o.private_key_pem = Some(pem.clone());
        o.issuer = Some(f.issuer("as1"));
        let c = connect(&f.server.url, options(o)).await.expect("connects");
        c.call_tool("echo", json!({})).await.expect("authorized");
        f.state.lock().unwrap().valid.clear();
        c.call_tool("echo", json!({}))
            .await
            .expect("authorized again");
        c.close().await;
        let s = f.state.lock().unwrap();
        assert!(s.refused.is_empty(), "{methods:?}: {:?}", s.refused);
        assert_eq!(s.assertions.len(), 2, "{methods:?}");
        assert_eq!(
            s.assertions[0]["aud"],
            format!("{}/as1", f.server.url.trim_end_matches("/mcp"))
        );
        assert_ne!(
            s.assertions[0]["jti"], s.assertions[1]["jti"],
            "fresh assertions"
        );
        for r in f.to("/as1/token") {
            assert!(header(&r, "authorization").is_none(), "no Basic header");
            assert_eq!(
                get(&form(&r.text), "grant_type"),
                Some("client_credentials")
            );
        }
    }
}

/// A pre-registered public client (no secret, no key) at a server that takes
/// `private_key_jwt` or `none` authenticates with `none` (its `client_id` only) instead of
/// failing for want of a key.
#[tokio::test]
async fn a_public_client_uses_none_where_private_key_jwt_is_also_offered() {
    let f = start(Cfg {
        methods: Some(&["private_key_jwt", "none"]),
        ..Cfg::default()
    })
    .await;
    let mut o = oauth();
    o.client_id = Some("public-app".into());
    let c = connect(&f.server.url, options(o)).await.expect("connects");
    c.call_tool("echo", json!({})).await.expect("authorized");
    c.close().await;
    assert!(f.to("/as1/register").is_empty(), "pre-registered");
    let tok = f.to("/as1/token");
    assert_eq!(tok.len(), 1);
    let body = form(&tok[0].text);
    assert_eq!(get(&body, "client_id"), Some("public-app"));
    assert_eq!(get(&body, "client_assertion"), None);
    assert!(header(&tok[0], "authorization").is_none());
}
