//! Unit tests of the authorization flow: scope choice, client authentication, the
//! authorization response checks and the options that decide where credentials go.

use super::*;
use crate::client::auth::parse_www_authenticate;

fn meta() -> ServerMetadata {
    ServerMetadata {
        issuer: "http://as/t".into(),
        token_endpoint: "http://as/t/token".into(),
        ..Default::default()
    }
}

fn prm(scopes: Option<&[&str]>) -> ResourceMetadata {
    ResourceMetadata {
        resource: "http://h/mcp".into(),
        authorization_servers: vec!["http://as/t".into()],
        scopes_supported: scopes.map(|s| s.iter().map(|x| (*x).to_owned()).collect()),
    }
}

fn scope(
    status: u16,
    header: Option<&str>,
    p: &ResourceMetadata,
    m: &ServerMetadata,
    before: &[&str],
) -> Option<String> {
    let c = header.map(|h| parse_www_authenticate(h).unwrap().remove(0));
    let t = Trigger {
        status,
        challenge: c.as_ref(),
        modern: true,
        sent: None,
    };
    let before: Vec<String> = before.iter().map(|s| (*s).to_owned()).collect();
    choose_scope(&t, p, m, &before, true)
}

#[test]
fn scope_choice_follows_auth_02() {
    let m = meta();
    let p = prm(Some(&["a", "b"]));
    assert_eq!(
        scope(401, Some("Bearer scope=\"x y\""), &p, &m, &[]).as_deref(),
        Some("x y")
    );
    assert_eq!(
        scope(401, Some("Bearer realm=\"r\""), &p, &m, &[]).as_deref(),
        Some("a b")
    );
    assert_eq!(scope(401, None, &prm(None), &m, &[]), None);
    // A 403 step-up asks for the union; a 401 takes the challenge as authoritative.
    assert_eq!(
        scope(403, Some("Bearer scope=\"w\""), &p, &m, &["r"]).as_deref(),
        Some("r w")
    );
    assert_eq!(
        scope(401, Some("Bearer scope=\"w\""), &p, &m, &["r"]).as_deref(),
        Some("w")
    );
    let mut off = meta();
    off.scopes_supported = Some(vec!["a".into(), "offline_access".into()]);
    assert_eq!(
        scope(401, None, &p, &off, &[]).as_deref(),
        Some("a b offline_access")
    );
}

#[test]
fn token_endpoint_auth_method_choice() {
    let with = |secret: Option<&str>, said: Option<&str>| ClientInfo {
        client_id: "c".into(),
        client_secret: secret.map(str::to_owned),
        auth_method: said.map(str::to_owned),
    };
    let mut m = meta();
    assert_eq!(
        auth_method(&with(Some("s"), None), &m, false),
        "client_secret_basic"
    );
    assert_eq!(auth_method(&with(None, None), &m, false), "none");
    assert_eq!(auth_method(&with(None, None), &m, true), "private_key_jwt");
    m.token_auth_methods = Some(vec!["client_secret_post".into()]);
    assert_eq!(
        auth_method(&with(Some("s"), None), &m, false),
        "client_secret_post"
    );
    assert_eq!(
        auth_method(&with(Some("s"), Some("client_secret_basic")), &m, false),
        "client_secret_post"
    );
    m.token_auth_methods = Some(vec!["none".into()]);
    assert_eq!(auth_method(&with(Some("s"), None), &m, false), "none");
    m.token_auth_methods = Some(vec!["private_key_jwt".into()]);
    assert_eq!(auth_method(&with(None, None), &m, true), "private_key_jwt");
    // Without a key, `none` is taken where the server also accepts it.
    m.token_auth_methods = Some(vec!["private_key_jwt".into(), "none".into()]);
    assert_eq!(auth_method(&with(None, None), &m, false), "none");
    assert_eq!(auth_method(&with(None, None), &m, true), "private_key_jwt");
}

#[test]
fn authorization_response_checks_follow_auth_07() {
    let mut m = meta();
    let ok = "http://cb/?code=k&state=s&iss=http%3A%2F%2Fas%2Ft";
    assert_eq!(check_redirect(ok, "s", &m).unwrap(), "k");
    // iss present is compared even when not advertised, by exact string.
    for bad in [
        "http://cb/?code=k&state=s&iss=http%3A%2F%2Fas%2Ft%2F",
        "http://cb/?code=k&state=s&iss=http%3A%2F%2Fevil",
        "http://cb/?code=k&state=other&iss=http%3A%2F%2Fas%2Ft",
        "http://cb/?state=s&iss=http%3A%2F%2Fas%2Ft",
        "http://cb/?error=access_denied&state=s",
    ] {
        let e = check_redirect(bad, "s", &m).unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::AuthorizationResponse, "{bad}");
    }
    assert!(check_redirect("http://cb/?code=k&state=s", "s", &m).is_ok());
    m.iss_supported = true;
    assert!(check_redirect("http://cb/?code=k&state=s", "s", &m).is_err());
}

#[test]
fn options_are_checked() {
    let mut o = OAuthOptions::default();
    assert!(o.check().is_ok());
    assert_eq!(application_type(&o.redirect_uri), "native");
    assert_eq!(application_type("https://app.example/cb"), "web");
    o.redirect_uri = "http://app.example/cb".into();
    assert!(o.check().is_err(), "plain http off loopback");
    o.redirect_uri = "https://app.example/cb".into();
    o.client_metadata_url = Some("https://app.example".into());
    assert!(o.check().is_err(), "CIMD URL without a path");
    o.client_metadata_url = Some("https://app.example/client.json".into());
    assert!(o.check().is_ok());
    o.max_auth_rounds = 0;
    assert!(o.check().is_err());
    o.max_auth_rounds = 3;
    o.grant = GrantKind::JwtBearer;
    assert!(o.check().is_err(), "jwtBearer without an assertion");
}

/// AUTH-09: static credentials need the issuer they belong to (or an allow-list, or the
/// explicit opt-out); issuers and the IdP endpoint are https or loopback.
#[test]
fn static_credentials_need_their_issuer() {
    let secret = |f: fn(&mut OAuthOptions)| {
        let mut o = OAuthOptions::default();
        f(&mut o);
        o
    };
    for o in [
        secret(|o| o.client_secret = Some("s".into())),
        secret(|o| o.private_key_pem = Some("k".into())),
        secret(|o| {
            o.grant = GrantKind::JwtBearer;
            o.assertion = Some("a".into());
        }),
        secret(|o| o.idp_id_token = Some("t".into())),
    ] {
        let e = o.check().unwrap_err();
        assert!(e.contains("auth.issuer"), "{e}");
        assert!(!e.contains("\"s\""), "{e}");
        let mut pinned = o.clone();
        pinned.issuer = Some("https://as.example".into());
        assert!(pinned.check().is_ok());
        let mut listed = o.clone();
        listed.allowed_issuers = vec!["https://as.example/t1".into()];
        assert!(listed.check().is_ok());
        let mut any = o;
        any.allow_any_issuer = true;
        assert!(any.check().is_ok());
    }
    // A public client (an id, no secret) follows the resource's metadata.
    let public = secret(|o| o.client_id = Some("pub".into()));
    assert!(public.check().is_ok());
    let mut o = OAuthOptions {
        issuer: Some("http://as.example".into()),
        ..Default::default()
    };
    assert!(o.check().unwrap_err().contains("allowInsecureHttp"));
    o.issuer = Some("http://127.0.0.1:9/as".into());
    assert!(o.check().is_ok());
    o.idp_token_endpoint = Some("http://idp.example/token".into());
    assert!(o.check().is_err());
    o.allow_insecure_http = true;
    assert!(o.check().is_ok());
    o.allowed_metadata_origins = vec!["https://meta.example/path".into()];
    assert!(o.check().is_err(), "an origin has no path");
    o.allowed_metadata_origins = vec!["https://meta.example".into()];
    assert!(o.check().is_ok());
}

/// The PRM's first trusted issuer is chosen; with static credentials an untrusted list is
/// refused, without them the first entry is followed.
#[test]
fn issuer_choice_follows_the_trust_options() {
    let o = OAuthOptions {
        issuer: Some("https://good".into()),
        client_secret: Some("s".into()),
        ..Default::default()
    };
    let a = Authorizer::new(
        "http://127.0.0.1:1/mcp",
        o,
        &AuthHooks::default(),
        &Default::default(),
    )
    .unwrap();
    let mut p = prm(None);
    p.authorization_servers = vec!["https://evil".into(), "https://good".into()];
    assert_eq!(a.choose_issuer(&p).unwrap(), "https://good");
    p.authorization_servers = vec!["https://evil".into()];
    let e = a.choose_issuer(&p).unwrap_err();
    assert_eq!(e.kind(), AuthErrorKind::UntrustedIssuer);
    assert!(e.message().contains("https://evil") && !e.message().contains("\"s\""));
    let public = Authorizer::new(
        "http://127.0.0.1:1/mcp",
        OAuthOptions::default(),
        &AuthHooks::default(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(public.choose_issuer(&p).unwrap(), "https://evil");
}
