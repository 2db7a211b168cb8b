//! The telemetry entry points: `mcp_server_metrics_text` counting a request served through a
//! connection handle (and nothing when `metrics` is off), their NULL-argument and bad-options
//! refusals. (`mcp_telemetry_configure` installs once per process: only its refusals are
//! exercised here; the C suite and the bindings' tests export for real.)

use std::ffi::c_char;
use std::ptr;
use std::sync::mpsc;
use std::time::Duration;

use crate::connection::*;
use crate::embed_tests::{free_out, on_output, Out};
use crate::request::{mcp_request_t, mcp_request_trace_context_json};
use crate::responder::{mcp_responder_result, mcp_responder_t};
use crate::runtime::mcp_runtime_free;
use crate::server::mcp_server_free;
use crate::server_dynamic::mcp_server_add;
use crate::server_dynamic::tests::server;
use crate::status::mcp_status_t;
use crate::string::mcp_string_free;
use crate::telemetry::*;

fn metrics(s: *const crate::server::mcp_server_t) -> String {
    let mut out = ptr::null_mut();
    assert_eq!(
        mcp_server_metrics_text(s, &mut out, ptr::null_mut()),
        mcp_status_t::Ok
    );
    // SAFETY: an owned NUL-terminated string from the library.
    let text = unsafe { std::ffi::CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned();
    mcp_string_free(out);
    text
}

/// A tool answering the trace context its request sees, as text.
unsafe extern "C" fn trace_tool(
    _ud: *mut std::ffi::c_void,
    req: *const mcp_request_t,
    r: *mut mcp_responder_t,
) {
    let mut len = 0;
    let p = mcp_request_trace_context_json(req, &mut len);
    // SAFETY: borrowed JSON of `len` bytes, valid while the callback runs.
    let tc = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
        .into_owned();
    let v: serde_json::Value = serde_json::from_str(&tc).unwrap_or_default();
    let tp = v["traceparent"].as_str().unwrap_or_default();
    let result = serde_json::json!({"content": [{"type": "text", "text": tp}]}).to_string();
    mcp_responder_result(r, result.as_ptr().cast(), result.len());
}

/// Feed `lines` to a connection of `s`; the answers, one per line fed.
fn exchange(s: *const crate::server::mcp_server_t, lines: &[String]) -> Vec<serde_json::Value> {
    let out = Out::default();
    let (tx, rx) = mpsc::channel();
    *out.lines.lock().unwrap() = Some(tx);
    let ud = ptr::from_ref(&out).cast_mut().cast();
    let mut c = ptr::null_mut();
    let st = mcp_connection_open(
        s,
        Some(on_output),
        ud,
        Some(free_out),
        &mut c,
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    let mut answers = Vec::new();
    for l in lines {
        let line = format!("{l}\n");
        let st = mcp_connection_feed(
            c,
            line.as_ptr().cast::<c_char>(),
            line.len(),
            ptr::null_mut(),
        );
        assert_eq!(st, mcp_status_t::Ok);
        let a = rx.recv_timeout(Duration::from_secs(20)).expect("an answer");
        answers.push(serde_json::from_str(&a).expect("json"));
    }
    assert_eq!(mcp_connection_close(c, ptr::null_mut()), mcp_status_t::Ok);
    mcp_connection_free(c);
    answers
}

/// A C handler reads the trace context of its request: the caller's trace from
/// `_meta.traceparent`, a new span id.
#[test]
fn a_c_handler_reads_the_callers_trace_context() {
    // Tools added after the build need `dynamic` (the capability is advertised up front).
    let (rt, s) = server(r#"{"dynamic": true}"#);
    let def = r#"{"name": "trace", "inputSchema": {"type": "object"}}"#;
    let st = mcp_server_add(
        s,
        c"tool".as_ptr(),
        4,
        def.as_ptr().cast(),
        def.len(),
        Some(trace_tool),
        ptr::null_mut(),
        None,
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "trace", "arguments": {}, "_meta": {
            "traceparent": tp,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}}});
    let answers = exchange(s, &[call.to_string()]);
    let seen = answers[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        seen.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{}",
        answers[0]
    );
    assert!(!seen.contains("00f067aa0ba902b7"), "a new span: {seen}");
    mcp_server_free(s);
    mcp_runtime_free(rt);
}

fn ping_through_a_connection(s: *const crate::server::mcp_server_t) {
    let answers = exchange(
        s,
        &[r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned()],
    );
    assert!(answers[0]["result"].is_object(), "{}", answers[0]);
}

#[test]
fn metrics_text_counts_what_the_server_served() {
    let (rt, s) = server(r#"{"metrics": true}"#);
    ping_through_a_connection(s);
    let text = metrics(s);
    assert!(
        text.contains(r#"mcpcore_server_requests_total{mcp_method_name="ping"} 1"#),
        "{text}"
    );
    mcp_server_free(s);
    mcp_runtime_free(rt);

    let (rt, s) = server("{}");
    ping_through_a_connection(s);
    let text = metrics(s);
    assert!(
        !text.contains(r#"mcp_method_name="ping""#),
        "off records nothing: {text}"
    );
    assert!(text.contains("mcpcore_server_requests_in_flight 0"));
    mcp_server_free(s);
    mcp_runtime_free(rt);
}

#[test]
fn telemetry_entry_points_refuse_bad_arguments() {
    let (rt, s) = server("{}");
    let mut out = ptr::null_mut();
    assert_eq!(
        mcp_server_metrics_text(ptr::null(), &mut out, ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        mcp_server_metrics_text(s, ptr::null_mut(), ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        mcp_telemetry_configure(ptr::null(), 0, ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    for (json, want) in [
        ("[1]", mcp_status_t::InvalidJson),
        (r#"{"levle": "info"}"#, mcp_status_t::InvalidJson),
        (r#"{"level": "loud"}"#, mcp_status_t::InvalidArgument),
        (
            r#"{"otlp": {"maxQueue": 0}}"#,
            mcp_status_t::InvalidArgument,
        ),
    ] {
        let st = mcp_telemetry_configure(json.as_ptr().cast(), json.len(), ptr::null_mut());
        assert_eq!(st, want, "{json}");
    }
    assert!(
        !mcp_telemetry_flush(10),
        "nothing installed: nothing exports"
    );
    mcp_server_free(s);
    mcp_runtime_free(rt);
}
