//! The embedding entry points' error paths (NULL arguments, bad options JSON, feeding after the
//! end, the body cap, a refused `*error_out`) and one round trip each: an HTTP exchange answered
//! through its callbacks, and a connection answering a ping through its output callback.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use crate::client::mcp_client_connect_in_memory;
use crate::connection::*;
use crate::embed_http::*;
use crate::error::{mcp_error_free, mcp_error_message};
use crate::runtime::{mcp_runtime_free, mcp_runtime_t};
use crate::server::{mcp_server_free, mcp_server_t};
use crate::server_dynamic::tests::server;
use crate::status::mcp_status_t;

const WAIT: Duration = Duration::from_secs(20);

fn done(rt: *mut mcp_runtime_t, s: *mut mcp_server_t) {
    mcp_server_free(s);
    mcp_runtime_free(rt);
}

fn message(err: *mut crate::error::mcp_error_t) -> String {
    assert!(!err.is_null());
    let mut len = 0;
    let p = mcp_error_message(err, &mut len);
    // SAFETY: a borrowed message of `len` bytes, valid until the error is freed.
    let m = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
        .into_owned();
    mcp_error_free(err);
    m
}

fn endpoint(
    s: *const mcp_server_t,
    json: Option<&str>,
) -> (mcp_status_t, *mut mcp_http_endpoint_t, String) {
    let (p, l) = json.map_or((ptr::null(), 0), |j| (j.as_ptr().cast::<c_char>(), j.len()));
    let mut ep = ptr::null_mut();
    let mut err = ptr::null_mut();
    let st = mcp_http_endpoint_new(s, p, l, &mut ep, &mut err);
    let m = if err.is_null() {
        String::new()
    } else {
        message(err)
    };
    (st, ep, m)
}

#[test]
fn endpoint_refuses_null_arguments_and_bad_options() {
    let (rt, s) = server("{}");
    assert_eq!(endpoint(ptr::null(), None).0, mcp_status_t::NullArgument);
    let st = mcp_http_endpoint_new(s, ptr::null(), 0, ptr::null_mut(), ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    let (st, ep, m) = endpoint(s, Some("{not json"));
    assert_eq!((st, ep.is_null()), (mcp_status_t::InvalidJson, true), "{m}");
    let (st, _, m) = endpoint(s, Some(r#"{"nosuchOption": 1}"#));
    assert_eq!(st, mcp_status_t::InvalidJson, "{m}");
    assert!(m.contains("nosuchOption"), "{m}");
    let (st, _, m) = endpoint(s, Some(r#"{"maxSessions": 0}"#));
    assert_eq!(st, mcp_status_t::InvalidArgument, "{m}");
    let (st, ep, m) = endpoint(s, Some(r#"{"statelessLegacy": true}"#));
    assert_eq!(st, mcp_status_t::Ok, "{m}");
    mcp_http_endpoint_free(ep);
    mcp_http_endpoint_free(ptr::null_mut());
    done(rt, s);
}

/// What one exchange's callbacks saw.
#[derive(Default)]
struct Seen {
    status: Mutex<Option<u16>>,
    headers: Mutex<Vec<(String, String)>>,
    body: Mutex<Vec<u8>>,
    ends: AtomicUsize,
    end: Mutex<Option<mpsc::Sender<mcp_status_t>>>,
}

fn seen(ud: *mut c_void) -> &'static Seen {
    // SAFETY: every exchange of these tests gets a `Seen` that outlives it (leaked per test).
    unsafe { &*ud.cast::<Seen>() }
}

unsafe fn text<'a>(p: *const c_char, len: usize) -> &'a str {
    // SAFETY: the callback's borrowed bytes.
    std::str::from_utf8(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }).unwrap_or("?")
}

unsafe extern "C" fn on_head(ud: *mut c_void, status: u16, h: *const mcp_http_header_t, n: usize) {
    let s = seen(ud);
    *s.status.lock().unwrap() = Some(status);
    // SAFETY: `n` borrowed headers.
    for h in unsafe { std::slice::from_raw_parts(h, n) } {
        // SAFETY: as above.
        let (k, v) = unsafe { (text(h.name, h.name_len), text(h.value, h.value_len)) };
        s.headers.lock().unwrap().push((k.to_owned(), v.to_owned()));
    }
}

unsafe extern "C" fn on_body(ud: *mut c_void, chunk: *const c_char, len: usize) {
    // SAFETY: `len` borrowed bytes.
    let c = unsafe { std::slice::from_raw_parts(chunk.cast::<u8>(), len) };
    seen(ud).body.lock().unwrap().extend_from_slice(c);
}

unsafe extern "C" fn on_end(ud: *mut c_void, status: mcp_status_t) {
    let s = seen(ud);
    s.ends.fetch_add(1, Ordering::SeqCst);
    if let Some(tx) = s.end.lock().unwrap().as_ref() {
        let _ = tx.send(status);
    }
}

const CBS: mcp_exchange_callbacks_t = mcp_exchange_callbacks_t {
    on_head: Some(on_head),
    on_body: Some(on_body),
    on_end: Some(on_end),
};

fn hdr(name: &'static str, value: &'static str) -> mcp_http_header_t {
    mcp_http_header_t {
        name: name.as_ptr().cast(),
        name_len: name.len(),
        value: value.as_ptr().cast(),
        value_len: value.len(),
    }
}

fn post_headers() -> Vec<mcp_http_header_t> {
    vec![
        hdr("Host", "127.0.0.1"),
        hdr("Content-Type", "application/json"),
        hdr("Accept", "application/json, text/event-stream"),
    ]
}

/// Start a POST /mcp exchange observed by a fresh `Seen`; the receiver gets `on_end`'s status.
fn start(
    ep: *const mcp_http_endpoint_t,
) -> (
    *mut mcp_http_exchange_t,
    &'static Seen,
    mpsc::Receiver<mcp_status_t>,
) {
    start_at(ep, "/mcp")
}

/// [`start`] at another request target.
fn start_at(
    ep: *const mcp_http_endpoint_t,
    target: &str,
) -> (
    *mut mcp_http_exchange_t,
    &'static Seen,
    mpsc::Receiver<mcp_status_t>,
) {
    let s: &'static Seen = Box::leak(Box::default());
    let (tx, rx) = mpsc::channel();
    *s.end.lock().unwrap() = Some(tx);
    let h = post_headers();
    let mut x = ptr::null_mut();
    let ud = ptr::from_ref(s).cast_mut().cast();
    let st = mcp_http_endpoint_exchange(
        ep,
        c"POST".as_ptr(),
        4,
        target.as_ptr().cast::<c_char>(),
        target.len(),
        h.as_ptr(),
        h.len(),
        &CBS,
        ud,
        &mut x,
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    (x, s, rx)
}

#[test]
fn exchange_refuses_null_arguments_and_invalid_utf8() {
    let (rt, s) = server("{}");
    let (_, ep, _) = endpoint(s, None);
    let h = post_headers();
    let call = |ep, m: &[u8], t: &[u8], hs: *const mcp_http_header_t, n, cbs, out| {
        mcp_http_endpoint_exchange(
            ep,
            m.as_ptr().cast(),
            m.len(),
            t.as_ptr().cast(),
            t.len(),
            hs,
            n,
            cbs,
            ptr::null_mut(),
            out,
            ptr::null_mut(),
        )
    };
    let mut x = ptr::null_mut();
    let no_end = mcp_exchange_callbacks_t {
        on_end: None,
        ..CBS
    };
    assert_eq!(
        call(ptr::null(), b"POST", b"/", h.as_ptr(), 3, &CBS, &mut x),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        call(ep, b"POST", b"/", h.as_ptr(), 3, ptr::null(), &mut x),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        call(ep, b"POST", b"/", h.as_ptr(), 3, &no_end, &mut x),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        call(ep, b"POST", b"/", ptr::null(), 3, &CBS, &mut x),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        call(ep, b"POST", b"/", h.as_ptr(), 3, &CBS, ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    assert_eq!(
        call(ep, b"POST", b"/\xff", h.as_ptr(), 3, &CBS, &mut x),
        mcp_status_t::InvalidUtf8
    );
    let bad = [mcp_http_header_t {
        name: ptr::null(),
        name_len: 4,
        ..hdr("x", "y")
    }];
    assert_eq!(
        call(ep, b"POST", b"/", bad.as_ptr(), 1, &CBS, &mut x),
        mcp_status_t::NullArgument
    );
    assert!(x.is_null(), "nothing is written on failure");
    // NULL handles are no-ops or NULL_ARGUMENT.
    mcp_http_exchange_cancel(ptr::null());
    mcp_http_exchange_free(ptr::null_mut());
    let st = mcp_http_exchange_feed(ptr::null(), c"x".as_ptr(), 1, ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    assert_eq!(
        mcp_http_exchange_end(ptr::null(), ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    mcp_http_endpoint_free(ep);
    done(rt, s);
}

/// Malformed JSON through the exchange is core's 400 with -32700; feeding after the end and
/// ending twice are CLOSED; `on_end` runs once, with OK.
#[test]
fn an_exchange_is_answered_through_its_callbacks_and_refuses_feeding_after_the_end() {
    let (rt, s) = server("{}");
    let (_, ep, _) = endpoint(s, None);
    let (x, seen, rx) = start(ep);
    assert_eq!(
        mcp_http_exchange_feed(x, c"{bad".as_ptr(), 4, ptr::null_mut()),
        mcp_status_t::Ok
    );
    assert_eq!(
        mcp_http_exchange_feed(x, ptr::null(), 0, ptr::null_mut()),
        mcp_status_t::Ok
    );
    assert_eq!(mcp_http_exchange_end(x, ptr::null_mut()), mcp_status_t::Ok);
    let mut err = ptr::null_mut();
    let st = mcp_http_exchange_feed(x, c"x".as_ptr(), 1, &mut err);
    assert_eq!(st, mcp_status_t::Closed);
    assert!(message(err).contains("already ended"));
    assert_eq!(
        mcp_http_exchange_end(x, ptr::null_mut()),
        mcp_status_t::Closed
    );
    assert_eq!(rx.recv_timeout(WAIT), Ok(mcp_status_t::Ok));
    assert_eq!(*seen.status.lock().unwrap(), Some(400));
    let body: serde_json::Value =
        serde_json::from_slice(&seen.body.lock().unwrap()).expect("a JSON body");
    assert_eq!(body["error"]["code"], -32700, "{body}");
    let headers = seen.headers.lock().unwrap();
    assert!(headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("application/json")));
    assert!(
        headers.iter().all(|(k, _)| k != "content-length"),
        "{headers:?}"
    );
    drop(headers);
    mcp_http_exchange_cancel(x); // after the end: a no-op
    mcp_http_exchange_free(x);
    assert_eq!(seen.ends.load(Ordering::SeqCst), 1);
    mcp_http_endpoint_free(ep);
    done(rt, s);
}

/// A bad JSON body at `target` through an endpoint made with `options`: the status answered.
fn status_at(options: Option<&str>, target: &str) -> Option<u16> {
    let (rt, s) = server("{}");
    let (st, ep, m) = endpoint(s, options);
    assert_eq!(st, mcp_status_t::Ok, "{m}");
    let (x, seen, rx) = start_at(ep, target);
    // A target the endpoint does not serve is answered (404) without reading the body: the
    // feed may then find core needing no more of it (CLOSED, as documented), depending on
    // which comes first.
    let fed = mcp_http_exchange_feed(x, c"{bad".as_ptr(), 4, ptr::null_mut());
    assert!(
        matches!(fed, mcp_status_t::Ok | mcp_status_t::Closed),
        "{fed:?}"
    );
    assert_eq!(mcp_http_exchange_end(x, ptr::null_mut()), mcp_status_t::Ok);
    assert_eq!(rx.recv_timeout(WAIT), Ok(mcp_status_t::Ok));
    let status = *seen.status.lock().unwrap();
    mcp_http_exchange_free(x);
    mcp_http_endpoint_free(ep);
    done(rt, s);
    status
}

/// With `path` unset the endpoint answers whatever path the host routes to it (here core parses
/// the body and answers 400/-32700, not 404); with `path` set, other paths are 404.
#[test]
fn the_host_routes_unless_a_path_is_set() {
    assert_eq!(status_at(None, "/api/tools?x=1"), Some(400));
    assert_eq!(status_at(None, "/mcp"), Some(400));
    assert_eq!(status_at(Some(r#"{"path": "/mcp"}"#), "/other"), Some(404));
    assert_eq!(status_at(Some(r#"{"path": "/mcp"}"#), "/mcp"), Some(400));
}

/// Past the server's body cap the feed says LIMIT_EXCEEDED and the answer is 413; a cancelled
/// exchange refuses further bytes and ends CANCELLED (or OK if it had already finished).
#[test]
fn the_body_cap_and_cancel() {
    let (rt, s) = server(r#"{"limits": {"maxMessageBytes": 64}}"#);
    let (_, ep, _) = endpoint(s, None);
    let (x, seen, rx) = start(ep);
    let big = [b' '; 100];
    let mut err = ptr::null_mut();
    let st = mcp_http_exchange_feed(x, big.as_ptr().cast(), big.len(), &mut err);
    assert_eq!(st, mcp_status_t::LimitExceeded);
    assert!(message(err).contains("64"));
    assert_eq!(rx.recv_timeout(WAIT), Ok(mcp_status_t::Ok));
    assert_eq!(*seen.status.lock().unwrap(), Some(413));
    mcp_http_exchange_free(x);

    let (x, _seen, rx) = start(ep);
    mcp_http_exchange_cancel(x);
    let st = mcp_http_exchange_feed(x, c"{".as_ptr(), 1, ptr::null_mut());
    assert_eq!(st, mcp_status_t::Closed);
    assert_eq!(rx.recv_timeout(WAIT), Ok(mcp_status_t::Cancelled));
    mcp_http_exchange_free(x);
    mcp_http_endpoint_free(ep);
    done(rt, s);
}

/// The output of a connection, and how often its finalizer ran.
#[derive(Default)]
pub(crate) struct Out {
    /// Everything written.
    pub(crate) all: Mutex<Vec<u8>>,
    /// A partial line.
    bytes: Mutex<Vec<u8>>,
    pub(crate) lines: Mutex<Option<mpsc::Sender<String>>>,
    freed: AtomicUsize,
}

pub(crate) unsafe extern "C" fn on_output(
    ud: *mut c_void,
    bytes: *const c_char,
    len: usize,
) -> bool {
    // SAFETY: the test's `Out`, alive for the test; `len` borrowed bytes.
    let (o, b) = unsafe {
        (
            &*ud.cast::<Out>(),
            std::slice::from_raw_parts(bytes.cast::<u8>(), len),
        )
    };
    o.all.lock().unwrap().extend_from_slice(b);
    let mut buf = o.bytes.lock().unwrap();
    buf.extend_from_slice(b);
    while let Some(i) = buf.iter().position(|&c| c == b'\n') {
        let line: Vec<u8> = buf.drain(..=i).collect();
        if let Some(tx) = o.lines.lock().unwrap().as_ref() {
            let _ = tx.send(String::from_utf8_lossy(&line).trim_end().to_owned());
        }
    }
    true
}

pub(crate) unsafe extern "C" fn free_out(ud: *mut c_void) {
    // SAFETY: as above.
    unsafe { &*ud.cast::<Out>() }
        .freed
        .fetch_add(1, Ordering::SeqCst);
}

#[test]
fn connection_refuses_null_arguments_and_releases_user_data_on_failure() {
    let (rt, s) = server("{}");
    let out = Out::default();
    let ud = ptr::from_ref(&out).cast_mut().cast();
    let mut c = ptr::null_mut();
    let st = mcp_connection_open(s, None, ud, Some(free_out), &mut c, ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    let st = mcp_connection_open(
        ptr::null(),
        Some(on_output),
        ud,
        Some(free_out),
        &mut c,
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::NullArgument);
    let st = mcp_connection_open(
        s,
        Some(on_output),
        ud,
        Some(free_out),
        ptr::null_mut(),
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::NullArgument);
    // A refused *error_out still takes the user data.
    let mut err = std::ptr::dangling_mut();
    let st = mcp_connection_open(s, Some(on_output), ud, Some(free_out), &mut c, &mut err);
    assert_eq!(st, mcp_status_t::InvalidArgument);
    assert!(c.is_null());
    assert_eq!(
        out.freed.load(Ordering::SeqCst),
        4,
        "every failure released user_data once"
    );
    let st = mcp_connection_feed(ptr::null(), c"x".as_ptr(), 1, ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    assert_eq!(
        mcp_connection_close(ptr::null(), ptr::null_mut()),
        mcp_status_t::NullArgument
    );
    mcp_connection_free(ptr::null_mut());
    done(rt, s);
}

/// A ping fed in two pieces is answered through the output callback; after close, feeding is
/// CLOSED and the finalizer has run once.
#[test]
fn a_connection_answers_and_refuses_feeding_after_close() {
    let (rt, s) = server("{}");
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
    let ping = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#.as_slice();
    let (a, b) = ping.split_at(10);
    assert_eq!(
        mcp_connection_feed(c, a.as_ptr().cast(), a.len(), ptr::null_mut()),
        mcp_status_t::Ok
    );
    assert_eq!(
        mcp_connection_feed(c, b.as_ptr().cast(), b.len(), ptr::null_mut()),
        mcp_status_t::Ok
    );
    assert_eq!(
        mcp_connection_feed(c, c"\n".as_ptr(), 1, ptr::null_mut()),
        mcp_status_t::Ok
    );
    let line = rx.recv_timeout(WAIT).expect("the answer");
    let v: serde_json::Value = serde_json::from_str(&line).expect("json");
    assert_eq!(v["id"], 7, "{v}");
    assert!(v["result"].is_object(), "{v}");
    assert_eq!(mcp_connection_close(c, ptr::null_mut()), mcp_status_t::Ok);
    assert_eq!(
        mcp_connection_close(c, ptr::null_mut()),
        mcp_status_t::Ok,
        "idempotent"
    );
    let mut err = ptr::null_mut();
    assert_eq!(
        mcp_connection_feed(c, c"x".as_ptr(), 1, &mut err),
        mcp_status_t::Closed
    );
    assert!(message(err).contains("closed"));
    mcp_connection_free(c);
    assert_eq!(out.freed.load(Ordering::SeqCst), 1);
    done(rt, s);
}

/// A frame past the cap is answered -32600 and ends the connection: close reports it, and
/// feeding is CLOSED.
#[test]
fn a_frame_past_the_cap_ends_the_connection() {
    let (rt, s) = server(r#"{"limits": {"maxMessageBytes": 64}}"#);
    let out = Out::default();
    let ud = ptr::from_ref(&out).cast_mut().cast();
    let mut c = ptr::null_mut();
    let st = mcp_connection_open(s, Some(on_output), ud, None, &mut c, ptr::null_mut());
    assert_eq!(st, mcp_status_t::Ok);
    let big = [b'x'; 200];
    assert_eq!(
        mcp_connection_feed(c, big.as_ptr().cast(), big.len(), ptr::null_mut()),
        mcp_status_t::Ok
    );
    assert_eq!(
        mcp_connection_close(c, ptr::null_mut()),
        mcp_status_t::LimitExceeded
    );
    let text = String::from_utf8_lossy(&out.all.lock().unwrap()).into_owned();
    assert!(text.contains("-32600"), "{text}");
    mcp_connection_free(c);
    done(rt, s);
}

#[test]
fn in_memory_client_refuses_null_arguments() {
    let (rt, s) = server("{}");
    let mut cl = ptr::null_mut();
    let st =
        mcp_client_connect_in_memory(rt, ptr::null_mut(), ptr::null(), &mut cl, ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    let st =
        mcp_client_connect_in_memory(ptr::null(), ptr::null_mut(), s, &mut cl, ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    let st = mcp_client_connect_in_memory(rt, ptr::null_mut(), s, ptr::null_mut(), ptr::null_mut());
    assert_eq!(st, mcp_status_t::NullArgument);
    assert!(cl.is_null());
    done(rt, s);
}
