//! `mcpcore` and OAuth 2.1 (AUTH-01…09) on the wire: a 401 starts the flow, the browser step
//! prints the authorization URL and takes the redirect on its loopback port (the test plays the
//! browser), the call goes through with the token, and the token is kept in a 0600 file the next
//! run uses without asking again.

mod common;

use common::LIMIT;
use mcpcore_tests::http::raw_request;
use mcpcore_tests::scripted::{form, get, json_resp, legacy, origin, raw, Act, Req, Scripted};
use serde_json::{json, Value};
use std::net::SocketAddr;
use tokio::io::AsyncBufReadExt;

fn bearer(r: &Req) -> Option<&str> {
    r.head
        .lines()
        .find_map(|l| l.strip_prefix("authorization: bearer "))
        .map(str::trim)
}

/// Resource server and authorization server in one origin; `tok-1` is the one good token.
fn script(r: &Req) -> Act {
    let o = origin(r);
    match r.target.split('?').next().unwrap_or_default() {
        "/.well-known/oauth-protected-resource/mcp" => json_resp(
            200,
            &json!({"resource": format!("{o}/mcp"), "authorization_servers": [o]}),
        ),
        "/.well-known/oauth-authorization-server" => json_resp(
            200,
            &json!({"issuer": o, "authorization_endpoint": format!("{o}/authorize"),
                "token_endpoint": format!("{o}/token"), "registration_endpoint": format!("{o}/register"),
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true}),
        ),
        "/register" => json_resp(201, &json!({"client_id": "cli-client"})),
        "/authorize" => {
            let q = form(&r.target);
            let loc = format!(
                "{}?code=the-code&state={}&iss={}",
                get(&q, "redirect_uri").unwrap_or_default(),
                get(&q, "state").unwrap_or_default(),
                o.replace(':', "%3A").replace('/', "%2F")
            );
            raw(302, "", &format!("location: {loc}\r\n"), b"")
        }
        "/token" => json_resp(
            200,
            &json!({"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600}),
        ),
        _ if bearer(r) == Some("tok-1") => legacy(r),
        _ => {
            let c = format!(
                "Bearer resource_metadata=\"{o}/.well-known/oauth-protected-resource/mcp\""
            );
            raw(401, "", &format!("www-authenticate: {c}\r\n"), b"")
        }
    }
}

fn addr_of(url: &str) -> SocketAddr {
    let rest = url.split("://").nth(1).expect("a URL");
    rest.split('/')
        .next()
        .expect("host")
        .parse()
        .expect("an address")
}

/// GET `url` as a browser would, returning the `Location` it redirects to.
async fn visit(url: &str) -> Option<String> {
    let addr = addr_of(url);
    let path = format!("/{}", url.split("://").nth(1)?.split_once('/')?.1);
    let r = raw_request(addr, "GET", &path, &[], b"").await;
    r.headers
        .iter()
        .find(|(k, _)| k == "location")
        .map(|(_, v)| v.clone())
}

#[tokio::test]
async fn the_browser_step_runs_once_and_the_token_is_kept() {
    let server = Scripted::start(script).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = std::env::temp_dir().join(format!("mcpcore-cli-oauth-{}", std::process::id()));
    let cache = dir.join("oauth.json").display().to_string();
    let port_arg = port.to_string();
    let args = [
        "call",
        "--no-check",
        "--oauth-port",
        &port_arg,
        "--token-cache",
        &cache,
        &server.url,
        "echo",
        "text=hi",
    ];
    let mut child = common::spawn(&args);
    // The browser: read the URL mcpcore prints, follow it to the loopback redirect.
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(LIMIT, async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(u) = l.trim().strip_prefix(&format!(
                "{}/authorize",
                server.url.trim_end_matches("/mcp")
            )) {
                return format!("{}/authorize{u}", server.url.trim_end_matches("/mcp"));
            }
        }
        panic!("no authorization URL printed");
    })
    .await
    .expect("the authorization URL in time");
    let back = visit(&url)
        .await
        .expect("the authorization server redirects");
    assert!(
        back.starts_with(&format!("http://127.0.0.1:{port}/callback?code=the-code")),
        "{back}"
    );
    assert!(visit(&back).await.is_none(), "the loopback page is the end");
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("mcpcore finishes")
        .expect("output");
    let mut rest = String::new();
    while let Ok(Some(l)) = lines.next_line().await {
        rest.push_str(&l);
    }
    assert_eq!(out.status.code(), Some(0), "{rest}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["content"][0]["text"], "ok");

    // Kept for its owner only, and used by the next run without a browser step.
    let kept = std::fs::read_to_string(&cache).expect("the token file");
    assert!(kept.contains("tok-1"), "{kept}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let o = common::mcpcore(&args, "").await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("Open this URL"));
    let authorizations = server
        .requests()
        .iter()
        .filter(|r| r.target.starts_with("/authorize"))
        .count();
    assert_eq!(authorizations, 1);
    // `--no-oauth`: the 401 is a failure to connect (exit 3), and nothing is asked.
    let o = common::mcpcore(
        &["call", "--no-oauth", "--no-check", &server.url, "echo"],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(3));
    let _ = std::fs::remove_dir_all(dir);
}
