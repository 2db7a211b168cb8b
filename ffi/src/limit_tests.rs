//! `mcp_server_builder_max_concurrency(1)`: C handlers of one server never overlap, even when
//! they answer later from other threads (the slot is held until the responder is consumed).

use mcpcore::server::SessionKind;
use mcpcore::transport::NullOutbound;
use mcpcore::Id;
use serde_json::json;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::builder::*;
use crate::request::mcp_request_t;
use crate::responder::{mcp_responder_result, mcp_responder_t};
use crate::runtime::{mcp_runtime_free, mcp_runtime_new, mcp_runtime_t};
use crate::server::{mcp_server_free, mcp_server_t};
use crate::status::mcp_status_t;

static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static MAX_SEEN: AtomicUsize = AtomicUsize::new(0);

struct SendPtr(*mut mcp_responder_t);
// SAFETY: responders may be moved to any thread (documented contract).
unsafe impl Send for SendPtr {}

unsafe extern "C" fn slow(_ud: *mut c_void, _req: *const mcp_request_t, r: *mut mcp_responder_t) {
    let now = ACTIVE.fetch_add(1, Ordering::SeqCst) + 1;
    MAX_SEEN.fetch_max(now, Ordering::SeqCst);
    let r = SendPtr(r);
    std::thread::spawn(move || {
        let r = r;
        std::thread::sleep(std::time::Duration::from_millis(10));
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
        let res = br#"{"content":[]}"#;
        mcp_responder_result(r.0, res.as_ptr().cast(), res.len());
    });
}

// Long by design: one scripted scenario, step by step, against one peer process; split up, its
// steps would lose the order they depend on.
#[test]
fn max_concurrency_one_serializes_c_handlers() {
    let mut rt: *mut mcp_runtime_t = std::ptr::null_mut();
    assert_eq!(
        mcp_runtime_new(2, &mut rt, std::ptr::null_mut()),
        mcp_status_t::Ok
    );
    let mut b: *mut mcp_server_builder_t = std::ptr::null_mut();
    let (name, ver) = ("t", "1");
    assert_eq!(
        mcp_server_builder_new(
            name.as_ptr().cast(),
            1,
            ver.as_ptr().cast(),
            1,
            &mut b,
            std::ptr::null_mut()
        ),
        mcp_status_t::Ok
    );
    assert_eq!(mcp_server_builder_max_concurrency(b, 1), mcp_status_t::Ok);
    let tool = r#"{"name":"slow"}"#;
    assert_eq!(
        mcp_server_builder_add_tool(
            b,
            tool.as_ptr().cast(),
            tool.len(),
            Some(slow),
            std::ptr::null_mut(),
            None,
            std::ptr::null_mut()
        ),
        mcp_status_t::Ok
    );
    let mut s: *mut mcp_server_t = std::ptr::null_mut();
    assert_eq!(
        mcp_server_builder_build(b, rt, &mut s, std::ptr::null_mut()),
        mcp_status_t::Ok
    );
    // SAFETY: s is the live server just built.
    let server = unsafe { &*s }.inner.server.clone();
    // SAFETY: rt is live.
    let runtime = unsafe { &*rt }.inner.clone();
    let ok = runtime
        .block_on("test", async move {
            let sink = Arc::new(NullOutbound);
            let session = server.new_session(SessionKind::Stdio, sink.clone());
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}});
            session
                .handle_request(
                    Id::Num(0),
                    "initialize".into(),
                    init.as_object().cloned(),
                    sink.clone(),
                )
                .await;
            session.handle_notification("notifications/initialized", None);
            let mut tasks = Vec::new();
            for i in 1..=6 {
                let (session, sink) = (session.clone(), sink.clone());
                tasks.push(tokio::spawn(async move {
                    let p = json!({"name": "slow", "arguments": {}});
                    session
                        .handle_request(
                            Id::Num(i),
                            "tools/call".into(),
                            p.as_object().cloned(),
                            sink,
                        )
                        .await
                        .is_some_and(|r| r.result.is_ok())
                }));
            }
            let mut ok = 0;
            for t in tasks {
                if t.await.unwrap_or(false) {
                    ok += 1;
                }
            }
            ok
        })
        .expect("not on a runtime thread");
    assert_eq!(ok, 6);
    assert_eq!(MAX_SEEN.load(Ordering::SeqCst), 1, "handlers overlapped");
    mcp_server_free(s);
    mcp_runtime_free(rt);
}
