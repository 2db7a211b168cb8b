//! `mcp_server_listen_http_auth` over real HTTP on 127.0.0.1: a C verifier callback decides,
//! core challenges, and the principal reaches a C handler through `mcp_request_principal_json`.

use serde_json::{json, Value};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::builder::*;
use crate::request::{mcp_request_principal_json, mcp_request_t};
use crate::responder::{mcp_responder_result, mcp_responder_t};
use crate::runtime::{mcp_runtime_free, mcp_runtime_new, mcp_runtime_t};
use crate::server::mcp_server_free;
use crate::transport::{mcp_listener_free, mcp_listener_port};
use mcpcore_tests::http::{modern_headers, raw_request};
use mcpcore_tests::stdio::envelope;

static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn whoami(_ud: *mut c_void, req: *const mcp_request_t, r: *mut mcp_responder_t) {
    let mut len = 0usize;
    let p = mcp_request_principal_json(req, &mut len);
    let who = if p.is_null() {
        "none".to_owned()
    } else {
        // SAFETY: p is valid for len bytes until this callback returns.
        let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
        String::from_utf8_lossy(b).into_owned()
    };
    let res = json!({"content": [{"type": "text", "text": who}]}).to_string();
    mcp_responder_result(r, res.as_ptr().cast(), res.len());
}

unsafe extern "C" fn verify(
    _ud: *mut c_void,
    token: *const c_char,
    len: usize,
    verdict: *mut mcp_token_verdict_t,
) {
    // SAFETY: token is valid for len bytes during the call.
    let t = unsafe { std::slice::from_raw_parts(token.cast::<u8>(), len) };
    match t {
        b"tok-alice" => {
            let p = r#"{"subject":"alice","scopes":["mcp:tools"],"clientId":"c1"}"#;
            assert_eq!(
                mcp_token_verdict_accept(verdict, p.as_ptr().cast(), p.len()),
                mcp_status_t::Ok
            );
        }
        b"tok-not-json" => {
            let p = r#"{"who":"x"}"#;
            assert_eq!(
                mcp_token_verdict_accept(verdict, p.as_ptr().cast(), p.len()),
                mcp_status_t::InvalidJson
            );
        }
        _ => {
            let why = "unknown token";
            mcp_token_verdict_refuse(verdict, why.as_ptr().cast(), why.len());
        }
    }
}

unsafe extern "C" fn count_free(_ud: *mut c_void) {
    FREED.fetch_add(1, Ordering::SeqCst);
}

fn build(rt: *mut mcp_runtime_t) -> *mut mcp_server_t {
    let mut b: *mut mcp_server_builder_t = std::ptr::null_mut();
    let (name, ver) = ("t", "1");
    let st = mcp_server_builder_new(
        name.as_ptr().cast(),
        1,
        ver.as_ptr().cast(),
        1,
        &mut b,
        std::ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    let tool = r#"{"name":"whoami","inputSchema":{"type":"object"}}"#;
    let st = mcp_server_builder_add_tool(
        b,
        tool.as_ptr().cast(),
        tool.len(),
        Some(whoami),
        std::ptr::null_mut(),
        None,
        std::ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    let mut s: *mut mcp_server_t = std::ptr::null_mut();
    let st = mcp_server_builder_build(b, rt, &mut s, std::ptr::null_mut());
    assert_eq!(st, mcp_status_t::Ok);
    s
}

fn listen_auth(s: *mut mcp_server_t, opts: &Value) -> (mcp_status_t, *mut mcp_listener_t) {
    let addr = "127.0.0.1:0";
    let o = opts.to_string();
    let mut l: *mut mcp_listener_t = std::ptr::null_mut();
    let st = mcp_server_listen_http_auth(
        s,
        addr.as_ptr().cast(),
        addr.len(),
        o.as_ptr().cast(),
        o.len(),
        Some(verify),
        std::ptr::null_mut(),
        Some(count_free),
        &mut l,
        std::ptr::null_mut(),
    );
    (st, l)
}

async fn call(port: u16, token: &str) -> (u16, Option<String>, Value) {
    let addr = format!("127.0.0.1:{port}").parse().expect("addr");
    let auth = format!("Bearer {token}");
    let mut h = modern_headers("tools/call", Some("whoami"));
    h.push(("Authorization".into(), auth));
    let hv: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": envelope(json!({}))}});
    let mut r = raw_request(addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await;
    let challenge = r.header("www-authenticate").map(str::to_owned);
    (r.status, challenge, r.json().await)
}

#[test]
fn c_verifier_decides_and_the_principal_reaches_c_handlers() {
    let mut rt: *mut mcp_runtime_t = std::ptr::null_mut();
    assert_eq!(
        mcp_runtime_new(2, &mut rt, std::ptr::null_mut()),
        mcp_status_t::Ok
    );
    let s = build(rt);
    // `auth` is required, and validated.
    let (st, _) = listen_auth(s, &json!({}));
    assert_eq!(st, mcp_status_t::InvalidArgument);
    let (st, _) = listen_auth(s, &json!({"auth": {"resource": "https://mcp.test/mcp"}}));
    assert_eq!(st, mcp_status_t::InvalidArgument);
    assert_eq!(
        FREED.load(Ordering::SeqCst),
        2,
        "user data freed on failure"
    );
    let opts = json!({"auth": {"resource": "https://mcp.test/mcp",
        "authorizationServers": ["https://as.test"], "requiredScopes": ["mcp:tools"]}});
    let (st, l) = listen_auth(s, &opts);
    assert_eq!(st, mcp_status_t::Ok);
    let port = mcp_listener_port(l);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    client.block_on(async {
        let (status, _, v) = call(port, "tok-alice").await;
        assert_eq!(status, 200, "{v}");
        let text = v["result"]["content"][0]["text"].as_str().expect("text");
        let who: Value = serde_json::from_str(text).expect("principal JSON");
        assert_eq!(who["subject"], "alice");
        assert_eq!(who["scopes"], json!(["mcp:tools"]));
        assert_eq!(who["clientId"], "c1");
        for (tok, desc) in [
            ("tok-bob", "unknown token"),
            ("tok-not-json", "token refused"),
        ] {
            let (status, c, v) = call(port, tok).await;
            assert_eq!(status, 401, "{tok}");
            let c = c.expect("challenge");
            assert!(c.starts_with("Bearer error=\"invalid_token\""), "{c}");
            assert_eq!(v["error_description"], desc);
        }
    });
    mcp_listener_free(l);
    mcp_server_free(s);
    mcp_runtime_free(rt);
    assert_eq!(
        FREED.load(Ordering::SeqCst),
        3,
        "user data freed with the listener"
    );
}
