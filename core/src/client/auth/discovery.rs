//! Protected Resource Metadata (RFC 9728, AUTH-01) and authorization-server metadata
//! (RFC 8414 / OpenID Discovery, AUTH-03) discovery and validation.

use serde_json::{Map, Value};

use super::error::{AuthError, AuthErrorKind};
use super::fetch::Fetcher;
use super::options::OAuthOptions;
use super::util::{as_metadata_urls, prm_urls, require_secure, resource_covers, Url};

/// The parts of a Protected Resource Metadata document the flow uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier, exactly as published (sent verbatim as `resource`, AUTH-05).
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// The parts of authorization-server metadata the flow uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods: Option<Vec<String>>,
    pub token_auth_methods: Option<Vec<String>>,
    pub grant_types: Option<Vec<String>>,
    pub iss_supported: bool,
    pub cimd_supported: bool,
    pub dpop_algs: Option<Vec<String>>,
}

fn strings(
    m: &Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<Option<Vec<String>>, AuthError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    AuthError::new(
                        AuthErrorKind::ServerMetadata,
                        format!("{what}: `{key}` must be an array of strings"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(AuthError::new(
            AuthErrorKind::ServerMetadata,
            format!("{what}: `{key}` must be an array of strings"),
        )),
    }
}

fn string(m: &Map<String, Value>, key: &str, what: &str) -> Result<Option<String>, AuthError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(AuthError::new(
            AuthErrorKind::ServerMetadata,
            format!("{what}: `{key}` must be a string"),
        )),
    }
}

/// Validate a PRM document for `server` (AUTH-01, AUTH-05).
pub(crate) fn parse_prm(
    m: &Map<String, Value>,
    server: &str,
) -> Result<ResourceMetadata, AuthError> {
    let kind = AuthErrorKind::ResourceMetadata;
    let what = "protected resource metadata";
    let re = |e: AuthError| AuthError::new(kind, e.message().to_owned());
    let resource = string(m, "resource", what)
        .map_err(re)?
        .ok_or_else(|| AuthError::new(kind, format!("{what}: `resource` is missing")))?;
    let servers = strings(m, "authorization_servers", what)
        .map_err(re)?
        .unwrap_or_default();
    if servers.is_empty() {
        return Err(AuthError::new(
            kind,
            format!("{what}: `authorization_servers` is missing or empty"),
        ));
    }
    if !resource_covers(&resource, server) {
        return Err(AuthError::new(
            AuthErrorKind::ResourceMismatch,
            format!("{what}: resource {resource:?} does not identify the server {server:?}"),
        ));
    }
    Ok(ResourceMetadata {
        resource,
        authorization_servers: servers,
        scopes_supported: strings(m, "scopes_supported", what).map_err(re)?,
    })
}

/// Validate authorization-server metadata fetched for `issuer` (AUTH-03: `issuer` must be
/// exactly the issuer the URL was built from).
pub(crate) fn parse_as(m: &Map<String, Value>, issuer: &str) -> Result<ServerMetadata, AuthError> {
    let what = "authorization server metadata";
    let err = |m: String| AuthError::new(AuthErrorKind::ServerMetadata, m);
    let got =
        string(m, "issuer", what)?.ok_or_else(|| err(format!("{what}: `issuer` is missing")))?;
    if got != issuer {
        return Err(err(format!(
            "{what}: issuer {got:?} is not the expected {issuer:?}"
        )));
    }
    let token_endpoint = string(m, "token_endpoint", what)?
        .ok_or_else(|| err(format!("{what}: `token_endpoint` is missing")))?;
    // Endpoints are http(s) URLs: an authorization URL with another scheme is never handed
    // to the browser step.
    let endpoint = |k: &str| -> Result<Option<String>, AuthError> {
        let v = string(m, k, what)?;
        if let Some(u) = &v {
            Url::parse(u).map_err(|_| err(format!("{what}: `{k}` is not an http(s) URL")))?;
        }
        Ok(v)
    };
    endpoint("token_endpoint")?;
    let flag = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
    Ok(ServerMetadata {
        issuer: got,
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint,
        registration_endpoint: endpoint("registration_endpoint")?,
        scopes_supported: strings(m, "scopes_supported", what)?,
        code_challenge_methods: strings(m, "code_challenge_methods_supported", what)?,
        token_auth_methods: strings(m, "token_endpoint_auth_methods_supported", what)?,
        grant_types: strings(m, "grant_types_supported", what)?,
        iss_supported: flag("authorization_response_iss_parameter_supported"),
        cimd_supported: flag("client_id_metadata_document_supported"),
        dpop_algs: strings(m, "dpop_signing_alg_values_supported", what)?,
    })
}

/// Check the challenge's `resource_metadata` URL before anything is fetched from it: the
/// server supplies it, so it must be https (or loopback http) and on the MCP server's own
/// origin unless `auth.allowedMetadataOrigins` names its origin (RFC 9728 §5.1, §7.3): a
/// resource must not steer the client to arbitrary hosts.
pub(crate) fn check_hinted(
    hinted: &str,
    server: &Url,
    opts: &OAuthOptions,
) -> Result<(), AuthError> {
    let kind = AuthErrorKind::ResourceMetadata;
    let what = "the challenge's resource_metadata URL";
    let h = require_secure(hinted, opts.allow_insecure_http, kind, what)?;
    let origin = h.origin();
    let allowed = origin == server.origin()
        || opts
            .allowed_metadata_origins
            .iter()
            .any(|o| Url::parse(o).is_ok_and(|u| u.origin() == origin));
    if !allowed {
        return Err(AuthError::new(
            kind,
            format!(
                "{what} is on {origin:?}, not the MCP server's origin {:?} (auth.allowedMetadataOrigins allows it)",
                server.origin()
            ),
        ));
    }
    Ok(())
}

/// Find the PRM: the challenge's `resource_metadata` first, then the well-known URIs in order
/// (AUTH-01). The last failure is reported when none works; a resource mismatch is final, and
/// so is a refused `resource_metadata` URL.
pub(crate) async fn discover_prm(
    f: &Fetcher,
    server: &str,
    hinted: Option<&str>,
    opts: &OAuthOptions,
) -> Result<ResourceMetadata, AuthError> {
    let s = Url::parse(server)?;
    if let Some(h) = hinted {
        check_hinted(h, &s, opts)?;
    }
    let mut urls: Vec<String> = hinted.map(str::to_owned).into_iter().collect();
    urls.extend(prm_urls(&s));
    let mut last = AuthError::new(AuthErrorKind::ResourceMetadata, "no PRM location");
    for u in urls {
        match fetch_json(
            f,
            &u,
            AuthErrorKind::ResourceMetadata,
            "protected resource metadata",
        )
        .await
        {
            Ok(m) => match parse_prm(&m, server) {
                Ok(p) => return Ok(p),
                Err(e) if e.kind() == AuthErrorKind::ResourceMismatch => return Err(e),
                Err(e) => last = e,
            },
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The endpoints of `meta` carry codes, secrets and tokens: https, or http to a loopback host
/// unless `allow_http` (OAuth 2.1 §1.5). Checked before any of them is used.
pub(crate) fn check_endpoints(meta: &ServerMetadata, allow_http: bool) -> Result<(), AuthError> {
    let kind = AuthErrorKind::ServerMetadata;
    let named = [
        ("token_endpoint", Some(&meta.token_endpoint)),
        (
            "authorization_endpoint",
            meta.authorization_endpoint.as_ref(),
        ),
        ("registration_endpoint", meta.registration_endpoint.as_ref()),
    ];
    for (k, v) in named {
        if let Some(u) = v {
            let what = format!("authorization server metadata: `{k}`");
            require_secure(u, allow_http, kind, &what)?;
        }
    }
    Ok(())
}

/// Find and validate the metadata of `issuer` (AUTH-03). A document whose `issuer` differs is
/// discarded (not used, not tried further: the next location would be for the same issuer).
/// The issuer and the endpoints must be https or loopback (unless `allow_http`).
pub(crate) async fn discover_as(
    f: &Fetcher,
    issuer: &str,
    allow_http: bool,
) -> Result<ServerMetadata, AuthError> {
    let kind = AuthErrorKind::ServerMetadata;
    let i = require_secure(issuer, allow_http, kind, "the authorization server")?;
    let mut last = AuthError::new(AuthErrorKind::ServerMetadata, "no metadata location");
    for u in as_metadata_urls(&i) {
        match fetch_json(
            f,
            &u,
            AuthErrorKind::ServerMetadata,
            "authorization server metadata",
        )
        .await
        {
            Ok(m) => {
                let meta = parse_as(&m, issuer)?;
                check_endpoints(&meta, allow_http)?;
                return Ok(meta);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

async fn fetch_json(
    f: &Fetcher,
    url: &str,
    kind: AuthErrorKind,
    what: &str,
) -> Result<Map<String, Value>, AuthError> {
    let r = f
        .get(url)
        .await
        .map_err(|e| AuthError::new(kind, e.message().to_owned()))?;
    if r.status != 200 {
        return Err(AuthError::new(
            kind,
            format!("{what} at {url}: HTTP {}", r.status),
        ));
    }
    r.json_object(kind, &format!("{what} at {url}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn prm_is_validated() {
        let ok = parse_prm(
            &obj(json!({"resource": "http://h/mcp", "authorization_servers": ["http://as"], "scopes_supported": ["a"]})),
            "http://h/mcp",
        )
        .unwrap();
        assert_eq!(ok.scopes_supported, Some(vec!["a".to_owned()]));
        let cases = [
            (
                json!({"authorization_servers": ["x"]}),
                AuthErrorKind::ResourceMetadata,
            ),
            (
                json!({"resource": "http://h/mcp", "authorization_servers": []}),
                AuthErrorKind::ResourceMetadata,
            ),
            (
                json!({"resource": "http://h/mcp", "authorization_servers": [1]}),
                AuthErrorKind::ResourceMetadata,
            ),
            (
                json!({"resource": 5, "authorization_servers": ["x"]}),
                AuthErrorKind::ResourceMetadata,
            ),
            (
                json!({"resource": "https://evil/mcp", "authorization_servers": ["x"]}),
                AuthErrorKind::ResourceMismatch,
            ),
        ];
        for (v, kind) in cases {
            assert_eq!(
                parse_prm(&obj(v.clone()), "http://h/mcp")
                    .unwrap_err()
                    .kind(),
                kind,
                "{v}"
            );
        }
    }

    /// OAuth 2.1 §1.5: endpoints off loopback must be https unless plain http is allowed.
    #[test]
    fn endpoints_must_be_https_off_loopback() {
        let mut m = ServerMetadata {
            issuer: "https://as.example".into(),
            token_endpoint: "https://as.example/token".into(),
            authorization_endpoint: Some("http://127.0.0.1:9/authorize".into()),
            ..Default::default()
        };
        assert!(check_endpoints(&m, false).is_ok());
        m.registration_endpoint = Some("http://as.example/register".into());
        let e = check_endpoints(&m, false).unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::ServerMetadata);
        assert!(e.message().contains("registration_endpoint"), "{e}");
        assert!(check_endpoints(&m, true).is_ok());
        m.registration_endpoint = None;
        m.token_endpoint = "http://as.example/token".into();
        assert!(check_endpoints(&m, false).is_err());
    }

    /// RFC 9728 §5.1: a challenge's metadata URL is same-origin and https-or-loopback unless
    /// the options allow its origin.
    #[test]
    fn hinted_metadata_url_is_same_origin_and_secure() {
        let server = Url::parse("http://127.0.0.1:8/mcp").unwrap();
        let mut o = OAuthOptions::default();
        let same = "http://127.0.0.1:8/.well-known/oauth-protected-resource/mcp";
        assert!(check_hinted(same, &server, &o).is_ok());
        for bad in [
            "http://127.0.0.1:9/.well-known/oauth-protected-resource",
            "https://example.com/.well-known/oauth-protected-resource",
            "http://example.com/prm",
            "file:///etc/passwd",
        ] {
            let e = check_hinted(bad, &server, &o).unwrap_err();
            assert_eq!(e.kind(), AuthErrorKind::ResourceMetadata, "{bad}");
        }
        o.allowed_metadata_origins = vec!["http://127.0.0.1:9".into(), "http://example.com".into()];
        assert!(check_hinted("http://127.0.0.1:9/prm", &server, &o).is_ok());
        assert!(
            check_hinted("http://example.com/prm", &server, &o).is_err(),
            "an allowed origin still needs https off loopback"
        );
        o.allow_insecure_http = true;
        assert!(check_hinted("http://example.com/prm", &server, &o).is_ok());
    }

    #[test]
    fn as_metadata_issuer_must_match_exactly() {
        let m = json!({"issuer": "http://as/t", "token_endpoint": "http://as/t/token",
            "authorization_response_iss_parameter_supported": true, "code_challenge_methods_supported": ["S256"]});
        let ok = parse_as(&obj(m.clone()), "http://as/t").unwrap();
        assert!(ok.iss_supported);
        for issuer in ["http://as/t/", "http://AS/t", "http://as"] {
            let e = parse_as(&obj(m.clone()), issuer).unwrap_err();
            assert_eq!(e.kind(), AuthErrorKind::ServerMetadata);
            assert!(e.message().contains("issuer"), "{e}");
        }
        let no_token = json!({"issuer": "http://as"});
        assert!(parse_as(&obj(no_token), "http://as")
            .unwrap_err()
            .message()
            .contains("token_endpoint"));
        let bad_list = json!({"issuer": "http://as", "token_endpoint": "http://as/t", "scopes_supported": "a b"});
        let e = parse_as(&obj(bad_list), "http://as").unwrap_err();
        assert!(e.message().contains("scopes_supported"), "{e}");
        let bad_scheme = json!({"issuer": "http://as", "token_endpoint": "http://as/t",
            "authorization_endpoint": "javascript:alert(1)"});
        let e = parse_as(&obj(bad_scheme), "http://as").unwrap_err();
        assert!(e.message().contains("authorization_endpoint"), "{e}");
        let bad_token = json!({"issuer": "http://as", "token_endpoint": "file:///etc/passwd"});
        assert!(parse_as(&obj(bad_token), "http://as").is_err());
    }
}
