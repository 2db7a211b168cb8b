//! Per-call overhead of a C-ABI handler against a Rust handler. A benchmark, not a test: it is
//! `#[ignore]`d, asserts nothing about time and only prints; `scripts/bench-ffi.sh` runs it in
//! release mode.
//!
//! Both servers register the same `echo` tool, one with a Rust closure, one with an
//! `extern "C"` callback through the trampoline (borrowed request with NUL-terminated JSON,
//! owned responder, result JSON parsed back). Calls go straight into a session with no
//! transport, so the difference is the cost of the C boundary itself.

use mcpcore::server::SessionKind;
use mcpcore::transport::NullOutbound;
use mcpcore::{handler_fn, HandlerError, Id, Server, Tool};
use serde_json::{json, Map, Value};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

use crate::request::{mcp_request_params_json, mcp_request_t};
use crate::responder::{mcp_responder_result, mcp_responder_t};
use crate::trampoline::{CHandler, UserData};

fn echo_tool() -> Tool {
    Tool::new("echo")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
}

/// What a minimal C handler does: read the params, answer a result that embeds them.
unsafe extern "C" fn c_echo(_ud: *mut c_void, req: *const mcp_request_t, r: *mut mcp_responder_t) {
    let mut len = 0usize;
    let p = mcp_request_params_json(req, &mut len);
    // SAFETY: p is valid for len bytes during the callback.
    let params = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    let mut out = Vec::with_capacity(len + 64);
    out.extend_from_slice(br#"{"content":[{"type":"text","text":"ok"}],"_meta":{"p":"#);
    out.extend_from_slice(params);
    out.extend_from_slice(b"}}");
    mcp_responder_result(r, out.as_ptr().cast(), out.len());
}

async fn ns_per_call(server: &Server, calls: u64) -> f64 {
    let sink = Arc::new(NullOutbound);
    let session = server.new_session(SessionKind::Stdio, sink.clone());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}});
    session
        .handle_request(
            Id::Num(0),
            "initialize".into(),
            init.as_object().cloned(),
            sink.clone(),
        )
        .await;
    session.handle_notification("notifications/initialized", None);
    let params: Map<String, Value> = json!({"name": "echo", "arguments": {"text": "hello"}})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut best = f64::MAX;
    for _round in 0..3 {
        let start = Instant::now();
        for i in 0..calls {
            let r = session
                .handle_request(
                    Id::Num(i as i64 + 1),
                    "tools/call".into(),
                    Some(params.clone()),
                    sink.clone(),
                )
                .await;
            assert!(r.is_some_and(|r| r.result.is_ok()));
        }
        best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    best
}

#[test]
#[ignore = "benchmark: run by scripts/bench-ffi.sh"]
fn handler_overhead() {
    let calls: u64 = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rust = Server::builder("bench", "1")
        .tool(
            echo_tool(),
            handler_fn(|_ctx, args: Value| async move {
                Ok::<_, HandlerError>(
                    json!({"content": [{"type": "text", "text": "ok"}], "_meta": {"p": args}}),
                )
            }),
        )
        .build()
        .expect("rust server");
    let c_handler =
        CHandler::new(Some(c_echo), UserData::new(std::ptr::null_mut(), None)).expect("handler");
    let c = Server::builder("bench", "1")
        .tool(echo_tool(), c_handler)
        .build()
        .expect("c server");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let (r, cc) = rt.block_on(async {
        let r1 = ns_per_call(&rust, calls).await;
        let c1 = ns_per_call(&c, calls).await;
        let r2 = ns_per_call(&rust, calls).await;
        let c2 = ns_per_call(&c, calls).await;
        (r1.min(r2), c1.min(c2))
    });
    println!("in-process tools/call, {calls} calls x 3 rounds x 2, best round");
    println!("rust handler:   {r:>8.0} ns/call");
    println!("C-ABI handler:  {cc:>8.0} ns/call");
    println!(
        "C-ABI overhead: {:>8.0} ns/call ({:+.1}%)",
        cc - r,
        (cc - r) / r * 100.0
    );
}
