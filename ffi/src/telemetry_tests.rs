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

/// What the C log callback received: `(level, target, message)`.
static LOGGED: std::sync::Mutex<Vec<(i32, String, String)>> = std::sync::Mutex::new(Vec::new());
static LOG_FREED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe extern "C" fn on_log(
    _ud: *mut std::ffi::c_void,
    level: crate::responder::mcp_log_level_t,
    target: *const c_char,
    target_len: usize,
    message: *const c_char,
    message_len: usize,
) {
    // SAFETY: NUL-terminated UTF-8 of the given lengths, valid during the call.
    let (t, m) = unsafe {
        assert_eq!(*target.add(target_len), 0);
        assert_eq!(*message.add(message_len), 0);
        (
            std::slice::from_raw_parts(target.cast::<u8>(), target_len),
            std::slice::from_raw_parts(message.cast::<u8>(), message_len),
        )
    };
    LOGGED.lock().unwrap().push((
        level as i32,
        String::from_utf8_lossy(t).into_owned(),
        String::from_utf8_lossy(m).into_owned(),
    ));
}

unsafe extern "C" fn free_log(_ud: *mut std::ffi::c_void) {
    LOG_FREED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

const NOTE: &str = "notifications/mcpcore-ffi-note";

/// Records of the unhandled notification `NOTE` so far.
fn notes() -> Vec<(i32, String, String)> {
    LOGGED
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, _, m)| m.contains(&format!("method={NOTE}")))
        .cloned()
        .collect()
}

/// A notification nobody handles (core logs it at DEBUG), then a ping to know it was handled.
fn note_then_ping(s: *const crate::server::mcp_server_t) {
    let note = format!(r#"{{"jsonrpc":"2.0","method":"{NOTE}"}}"#);
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let out = Out::default();
    let (tx, rx) = mpsc::channel();
    *out.lines.lock().unwrap() = Some(tx);
    let ud = ptr::from_ref(&out).cast_mut().cast();
    let mut c = ptr::null_mut();
    let st = mcp_connection_open(s, Some(on_output), ud, None, &mut c, ptr::null_mut());
    assert_eq!(st, mcp_status_t::Ok);
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    for l in [&init.to_string(), initialized, &note, ping] {
        let line = format!("{l}\n");
        let st = mcp_connection_feed(c, line.as_ptr().cast(), line.len(), ptr::null_mut());
        assert_eq!(st, mcp_status_t::Ok);
    }
    for _ in 0..2 {
        rx.recv_timeout(Duration::from_secs(20)).expect("an answer");
    }
    assert_eq!(mcp_connection_close(c, ptr::null_mut()), mcp_status_t::Ok);
    mcp_connection_free(c);
}

/// Core's log events reach a C callback at the level routed (NUL-terminated target and
/// message, level as `mcp_log_level_t`); a NULL callback stops the route and releases the
/// user data; a bad level is refused and still releases it.
#[test]
fn log_events_reach_the_c_callback_at_the_level_routed() {
    use std::sync::atomic::Ordering;
    let route = |level: &str, cb: crate::telemetry::mcp_log_fn| {
        mcp_log_route(
            level.as_ptr().cast(),
            level.len(),
            cb,
            ptr::null_mut(),
            Some(free_log),
            ptr::null_mut(),
        )
    };
    let (rt, s) = server("{}");
    assert_eq!(route("info", Some(on_log)), mcp_status_t::Ok);
    note_then_ping(s);
    assert_eq!(route("debug", Some(on_log)), mcp_status_t::Ok);
    assert_eq!(
        LOG_FREED.load(Ordering::SeqCst),
        1,
        "the replaced route's user data"
    );
    note_then_ping(s);
    let got = notes();
    assert_eq!(
        got.len(),
        1,
        "only the DEBUG route passed the record: {got:?}"
    );
    assert_eq!(got[0].0, crate::responder::mcp_log_level_t::Debug as i32);
    assert!(got[0].1.starts_with("mcpcore::server"), "{got:?}");
    assert!(got[0].2.starts_with("ignoring notification"), "{got:?}");
    assert_eq!(route("trace", None), mcp_status_t::Ok);
    assert_eq!(
        LOG_FREED.load(Ordering::SeqCst),
        3,
        "stopped: both user data released"
    );
    note_then_ping(s);
    assert_eq!(notes().len(), 1, "no route, no record");
    assert_eq!(route("loud", Some(on_log)), mcp_status_t::InvalidArgument);
    assert_eq!(
        LOG_FREED.load(Ordering::SeqCst),
        4,
        "a refused call releases user data"
    );
    assert_eq!(
        mcp_log_route(ptr::null(), 0, None, ptr::null_mut(), None, ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    mcp_server_free(s);
    mcp_runtime_free(rt);
}
