//! Where the OAuth client lets the MCP server send it, on the wire against scripted servers on
//! 127.0.0.1: static credentials go only to the issuer they belong to (AUTH-09), a challenge's
//! `resource_metadata` URL must be on the MCP server's origin unless allowed (RFC 9728 §5.1),
//! and authorization-server URLs are https except on loopback (OAuth 2.1 §1.5). Every refusal
//! happens before anything is sent to the refused server; a second scripted server stands for
//! "another server" and must see no request at all. Hosts off loopback cannot be reached here,
//! so for them the test asserts the precise refusal (not a connection error).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use mcpcore::client::auth::{AuthErrorKind, GrantKind, OAuthOptions};
use mcpcore::client::{Client, ClientError, HttpClientOptions};
use mcpcore_tests::scripted::{json_resp, legacy, origin, raw, Act, Req, Scripted};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(20);
const SECRET: &str = "trust-test-client-secret";

/// What one scripted server (resource server + authorization server on one origin) answers.
#[derive(Clone, Default)]
struct Cfg {
    /// The challenge's `resource_metadata` (default: this origin's well-known PRM).
    hint: Option<String>,
    /// The PRM `resource` (default: this origin's `/mcp`).
    resource: Option<String>,
    /// The PRM `authorization_servers` (default: this origin).
    servers: Option<Vec<String>>,
    /// The metadata's `token_endpoint` (default: this origin's `/token`).
    token_endpoint: Option<String>,
}

fn path(r: &Req) -> &str {
    r.target.split('?').next().unwrap_or_default()
}

fn serve(cfg: &Mutex<Cfg>, r: &Req) -> Act {
    let cfg = cfg.lock().unwrap().clone();
    let o = origin(r);
    match path(r) {
        "/.well-known/oauth-protected-resource/mcp" | "/prm" => json_resp(
            200,
            &json!({"resource": cfg.resource.unwrap_or(format!("{o}/mcp")),
                "authorization_servers": cfg.servers.unwrap_or(vec![o])}),
        ),
        "/.well-known/oauth-authorization-server" => json_resp(
            200,
            &json!({"issuer": o, "authorization_endpoint": format!("{o}/authorize"),
                "token_endpoint": cfg.token_endpoint.unwrap_or(format!("{o}/token")),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
        ),
        "/token" => json_resp(200, &json!({"access_token": "tok", "token_type": "Bearer"})),
        p if p.starts_with("/.well-known/") => raw(404, "", "", b""),
        _ if r.head.contains("authorization: bearer tok") => legacy(r),
        _ => {
            let hint = cfg
                .hint
                .unwrap_or(format!("{o}/.well-known/oauth-protected-resource/mcp"));
            let c = format!("www-authenticate: Bearer resource_metadata=\"{hint}\"\r\n");
            raw(401, "", &c, b"")
        }
    }
}

/// A scripted server and the configuration it answers with (changeable after start).
struct Server {
    s: Scripted,
    cfg: Arc<Mutex<Cfg>>,
}

impl Server {
    async fn start() -> Self {
        let cfg = Arc::new(Mutex::new(Cfg::default()));
        let c = cfg.clone();
        let s = Scripted::start(move |r| serve(&c, r)).await;
        Self { s, cfg }
    }

    fn origin(&self) -> String {
        self.s.url.trim_end_matches("/mcp").to_owned()
    }

    fn set(&self, f: impl FnOnce(&mut Cfg)) {
        f(&mut self.cfg.lock().unwrap());
    }

    fn paths(&self) -> Vec<String> {
        self.s
            .requests()
            .iter()
            .map(|r| path(r).to_owned())
            .collect()
    }
}

/// `client_credentials` with a pre-registered secret, bound to `issuer`.
fn machine(issuer: Option<String>) -> OAuthOptions {
    let mut o = OAuthOptions::default();
    o.redirect_uri = "http://127.0.0.1:9/callback".into();
    o.grant = GrantKind::ClientCredentials;
    o.client_id = Some("svc".into());
    o.client_secret = Some(SECRET.into());
    o.issuer = issuer;
    o
}

/// A public client (Dynamic Client Registration, no secret).
fn public() -> OAuthOptions {
    let mut o = OAuthOptions::default();
    o.redirect_uri = "http://127.0.0.1:9/callback".into();
    o
}

async fn connect(url: &str, o: OAuthOptions) -> Result<Client, ClientError> {
    let mut h = HttpClientOptions::default();
    h.listen_stream = false;
    h.auth = Some(o);
    tokio::time::timeout(BOUND, Client::builder().connect_http(url, h))
        .await
        .expect("bounded")
}

fn auth_error(e: &ClientError) -> (AuthErrorKind, String) {
    match e {
        ClientError::Auth(a) => (a.kind(), a.message().to_owned()),
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

/// AUTH-09: a PRM naming another authorization server gets `UntrustedIssuer` naming it, and
/// that server sees nothing, whichever static credential is configured (secret, key,
/// assertion). A list naming both takes the configured issuer, even when it is not first.
#[tokio::test]
async fn static_credentials_are_not_sent_to_another_authorization_server() {
    let other = Server::start().await;
    let mcp = Server::start().await;
    mcp.set(|c| c.servers = Some(vec![other.origin()]));
    let mut jwt = machine(Some(mcp.origin()));
    jwt.client_secret = None;
    jwt.grant = GrantKind::JwtBearer;
    jwt.assertion = Some("workload-assertion-value".into());
    for o in [machine(Some(mcp.origin())), jwt] {
        let e = connect(&mcp.s.url, o).await.expect_err("refused");
        let (kind, msg) = auth_error(&e);
        assert_eq!(kind, AuthErrorKind::UntrustedIssuer, "{msg}");
        assert!(msg.contains(&other.origin()), "names the server: {msg}");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(SECRET) && !shown.contains("workload-assertion"));
    }
    assert!(other.s.requests().is_empty(), "{:?}", other.paths());
    mcp.set(|c| c.servers = Some(vec![other.origin(), mcp.origin()]));
    let c = connect(&mcp.s.url, machine(Some(mcp.origin())))
        .await
        .expect("the configured issuer is chosen");
    c.call_tool("echo", json!({})).await.expect("authorized");
    c.close().await;
    assert!(other.s.requests().is_empty(), "{:?}", other.paths());
    let tok: Vec<Req> = mcp
        .s
        .requests()
        .into_iter()
        .filter(|r| path(r) == "/token")
        .collect();
    let basic = STANDARD.encode(format!("svc:{SECRET}"));
    assert!(
        tok[0].raw_head.contains(&format!("Basic {basic}")),
        "the secret went here"
    );
}

/// Static credentials without an issuer are refused at connect, before anything is sent, in
/// Rust and in the JSON options the C ABI and the bindings use; `allowedIssuers` is enough.
#[tokio::test]
async fn static_credentials_without_an_issuer_are_refused_at_connect() {
    let mcp = Server::start().await;
    let e = connect(&mcp.s.url, machine(None))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, ClientError::InvalidArgument(m) if m.contains("auth.issuer") && !m.contains(SECRET)),
        "{e:?}"
    );
    let parsed: HttpClientOptions = serde_json::from_value(json!({"auth": {
        "clientId": "svc", "clientSecret": SECRET, "grant": "clientCredentials",
        "allowedIssuers": [mcp.origin()], "allowedMetadataOrigins": [],
        "allowInsecureHttp": false, "allowAnyIssuer": false}}))
    .expect("the JSON keys exist");
    let mut h = parsed.clone();
    h.listen_stream = false;
    assert!(mcp.s.requests().is_empty(), "nothing sent");
    let c = tokio::time::timeout(BOUND, Client::builder().connect_http(&mcp.s.url, h))
        .await
        .expect("bounded")
        .expect("an allowed issuer suffices");
    c.close().await;
}

/// RFC 9728 §5.1: a challenge naming a metadata URL on another origin (here another loopback
/// port) is refused before that origin is contacted; `allowedMetadataOrigins` permits it.
#[tokio::test]
async fn a_cross_origin_resource_metadata_url_is_refused() {
    let other = Server::start().await;
    let mcp = Server::start().await;
    other.set(|c| {
        c.resource = Some(mcp.s.url.clone());
        c.servers = Some(vec![mcp.origin()]);
    });
    mcp.set(|c| c.hint = Some(format!("{}/prm", other.origin())));
    let e = connect(&mcp.s.url, public()).await.expect_err("refused");
    let (kind, msg) = auth_error(&e);
    assert_eq!(kind, AuthErrorKind::ResourceMetadata, "{msg}");
    assert!(msg.contains("allowedMetadataOrigins"), "{msg}");
    assert!(other.s.requests().is_empty(), "{:?}", other.paths());
    let mut o = machine(Some(mcp.origin()));
    o.allowed_metadata_origins = vec![other.origin()];
    let c = connect(&mcp.s.url, o).await.expect("allowed origin");
    c.close().await;
    assert_eq!(other.paths(), ["/prm"], "fetched from the allowed origin");
}

/// OAuth 2.1 §1.5: plain http off loopback is refused with a precise error before any
/// connection, for a challenge's metadata URL, a PRM's authorization server and an endpoint of
/// the authorization server's metadata; nothing is sent to the token endpoint.
#[tokio::test]
async fn plain_http_off_loopback_is_refused_before_connecting() {
    let mcp = Server::start().await;
    mcp.set(|c| c.hint = Some("http://example.com/.well-known/oauth-protected-resource".into()));
    let (kind, msg) = auth_error(&connect(&mcp.s.url, public()).await.expect_err("hint"));
    assert_eq!(kind, AuthErrorKind::ResourceMetadata, "{msg}");
    assert!(msg.contains("plain http"), "{msg}");
    mcp.set(|c| {
        c.hint = None;
        c.servers = Some(vec!["http://example.com/as".into()]);
    });
    let (kind, msg) = auth_error(&connect(&mcp.s.url, public()).await.expect_err("issuer"));
    assert_eq!(kind, AuthErrorKind::ServerMetadata, "{msg}");
    assert!(
        msg.contains("plain http") && msg.contains("example.com"),
        "{msg}"
    );
    mcp.set(|c| {
        c.servers = None;
        c.token_endpoint = Some("http://example.com/token".into());
    });
    let e = connect(&mcp.s.url, machine(Some(mcp.origin())))
        .await
        .expect_err("token endpoint");
    let (kind, msg) = auth_error(&e);
    assert_eq!(kind, AuthErrorKind::ServerMetadata, "{msg}");
    assert!(msg.contains("token_endpoint"), "{msg}");
    assert!(!format!("{e:?}").contains(SECRET));
}
