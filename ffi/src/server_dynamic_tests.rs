//! `mcp_server_add` / `_remove` / `_set_enabled` on a built server: refusals with their statuses
//! and messages, finalizers exactly once, and a finalizer that changes the server itself (it
//! runs outside core's registry locks, so it cannot deadlock).

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::builder::*;
use crate::error::{mcp_error_free, mcp_error_message};
use crate::request::mcp_request_t;
use crate::responder::{mcp_responder_free, mcp_responder_t};
use crate::runtime::{mcp_runtime_free, mcp_runtime_new, mcp_runtime_t};
use crate::server::mcp_server_free;

unsafe extern "C" fn answer(_ud: *mut c_void, _req: *const mcp_request_t, r: *mut mcp_responder_t) {
    mcp_responder_free(r);
}

unsafe extern "C" fn count_free(ud: *mut c_void) {
    // SAFETY: every user data of these tests is a live `AtomicUsize` counter.
    unsafe { &*ud.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

fn ud(c: &AtomicUsize) -> *mut c_void {
    ptr::from_ref(c).cast_mut().cast()
}

/// A built server (with `options` JSON) and its runtime.
pub(crate) fn server(options: &str) -> (*mut mcp_runtime_t, *mut mcp_server_t) {
    let mut rt = ptr::null_mut();
    assert_eq!(
        mcp_runtime_new(1, &mut rt, ptr::null_mut()),
        mcp_status_t::Ok
    );
    let mut b = ptr::null_mut();
    let st = mcp_server_builder_new(c"t".as_ptr(), 1, c"1".as_ptr(), 1, &mut b, ptr::null_mut());
    assert_eq!(st, mcp_status_t::Ok);
    let st =
        mcp_server_builder_options_json(b, options.as_ptr().cast(), options.len(), ptr::null_mut());
    assert_eq!(st, mcp_status_t::Ok);
    let mut s = ptr::null_mut();
    assert_eq!(
        mcp_server_builder_build(b, rt, &mut s, ptr::null_mut()),
        mcp_status_t::Ok
    );
    (rt, s)
}

fn add(s: *const mcp_server_t, kind: &str, def: &str, data: *mut c_void) -> (mcp_status_t, String) {
    let mut err = ptr::null_mut();
    let st = mcp_server_add(
        s,
        kind.as_ptr().cast(),
        kind.len(),
        def.as_ptr().cast(),
        def.len(),
        Some(answer),
        data,
        Some(count_free),
        &mut err,
    );
    let msg = if err.is_null() {
        String::new()
    } else {
        // SAFETY: err was just produced by the call; its message is NUL-terminated.
        let m = unsafe { std::ffi::CStr::from_ptr(mcp_error_message(err, ptr::null_mut())) };
        let m = m.to_string_lossy().into_owned();
        mcp_error_free(err);
        m
    };
    (st, msg)
}

fn remove(s: *const mcp_server_t, kind: &str, key: &str) -> bool {
    let mut removed = false;
    let st = mcp_server_remove(
        s,
        kind.as_ptr().cast(),
        kind.len(),
        key.as_ptr().cast(),
        key.len(),
        &mut removed,
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    removed
}

#[test]
fn refusals_are_precise_and_release_the_user_data_before_returning() {
    let (rt, s) = server(r#"{"dynamic": true}"#);
    let freed = AtomicUsize::new(0);
    let cases: [(*const mcp_server_t, &str, &str, mcp_status_t, &str); 6] = [
        (
            ptr::null(),
            "tool",
            r#"{"name":"a"}"#,
            mcp_status_t::NullArgument,
            "server",
        ),
        (
            s,
            "widget",
            r#"{"name":"a"}"#,
            mcp_status_t::InvalidArgument,
            "resourceTemplate",
        ),
        (
            s,
            "tool",
            "{bad",
            mcp_status_t::InvalidJson,
            "definition_json",
        ),
        (
            s,
            "prompt",
            r#"{"name": 7}"#,
            mcp_status_t::InvalidJson,
            "definition_json",
        ),
        (
            s,
            "tool",
            r#"{"name":"a","taskSupport":"sometimes"}"#,
            mcp_status_t::InvalidJson,
            "taskSupport",
        ),
        (
            s,
            "tool",
            r#"{"name":""}"#,
            mcp_status_t::InvalidArgument,
            "tool",
        ),
    ];
    for (i, (srv, kind, def, want, needle)) in cases.into_iter().enumerate() {
        let (st, msg) = add(srv, kind, def, ud(&freed));
        assert_eq!(st, want, "case {i}: {msg}");
        assert!(msg.contains(needle), "case {i}: {msg:?} lacks {needle:?}");
        assert_eq!(
            freed.load(Ordering::SeqCst),
            i + 1,
            "case {i}: finalizer ran once"
        );
    }
    mcp_server_free(s);
    mcp_runtime_free(rt);
}

#[test]
fn a_kind_not_advertised_is_refused_naming_the_dynamic_option() {
    let (rt, s) = server("{}");
    let freed = AtomicUsize::new(0);
    let (st, msg) = add(s, "tool", r#"{"name":"a"}"#, ud(&freed));
    assert_eq!(st, mcp_status_t::InvalidArgument);
    assert!(msg.contains("\"dynamic\": true"), "{msg}");
    assert_eq!(freed.load(Ordering::SeqCst), 1);
    mcp_server_free(s);
    mcp_runtime_free(rt);
}

#[test]
fn replaced_and_removed_user_data_is_released_once_each() {
    let (rt, s) = server(r#"{"dynamic": true}"#);
    let (first, second, third) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    assert_eq!(
        add(s, "tool", r#"{"name":"a"}"#, ud(&first)).0,
        mcp_status_t::Ok
    );
    assert_eq!(
        add(s, "tool", r#"{"name":"a"}"#, ud(&second)).0,
        mcp_status_t::Ok
    );
    assert_eq!(first.load(Ordering::SeqCst), 1, "replaced");
    assert_eq!(second.load(Ordering::SeqCst), 0);
    let t = r#"{"uriTemplate":"notes://{id}","name":"n"}"#;
    assert_eq!(
        add(s, "resourceTemplate", t, ud(&third)).0,
        mcp_status_t::Ok
    );
    assert!(remove(s, "tool", "a"));
    assert!(!remove(s, "tool", "a"), "already gone");
    assert_eq!(second.load(Ordering::SeqCst), 1, "removed");
    let mut found = true;
    let k = "notes://{id}";
    let st = mcp_server_set_enabled(
        s,
        c"resourceTemplate".as_ptr(),
        16,
        k.as_ptr().cast(),
        k.len(),
        false,
        &mut found,
        ptr::null_mut(),
    );
    assert_eq!((st, found), (mcp_status_t::Ok, true));
    let st = mcp_server_set_enabled(
        s,
        c"prompt".as_ptr(),
        6,
        c"none".as_ptr(),
        4,
        true,
        &mut found,
        ptr::null_mut(),
    );
    assert_eq!((st, found), (mcp_status_t::Ok, false));
    assert_eq!(
        third.load(Ordering::SeqCst),
        0,
        "a disabled item keeps its user data"
    );
    mcp_server_free(s);
    mcp_runtime_free(rt);
    assert_eq!(third.load(Ordering::SeqCst), 1, "released with the server");
    assert_eq!(
        (first.load(Ordering::SeqCst), second.load(Ordering::SeqCst)),
        (1, 1)
    );
}

/// What the re-entrant finalizer needs: the server to change, and a count of its runs.
struct Reentrant {
    server: *const mcp_server_t,
    runs: AtomicUsize,
}

unsafe extern "C" fn remove_other(ud: *mut c_void) {
    // SAFETY: the user data is a live `Reentrant` (see the test).
    let r = unsafe { &*ud.cast::<Reentrant>() };
    assert!(remove(r.server, "tool", "other"));
    r.runs.fetch_add(1, Ordering::SeqCst);
}

struct SendServer(*mut mcp_server_t);
// SAFETY: the server handle is thread-safe (documented contract).
unsafe impl Send for SendServer {}

/// A finalizer that removes another item of the same server: it runs after core released its
/// registry locks, so the removal that triggered it completes instead of deadlocking.
#[test]
fn a_finalizer_may_change_the_server_that_released_it() {
    let (rt, s) = server(r#"{"dynamic": true}"#);
    let other = AtomicUsize::new(0);
    assert_eq!(
        add(s, "tool", r#"{"name":"other"}"#, ud(&other)).0,
        mcp_status_t::Ok
    );
    let r = Box::leak(Box::new(Reentrant {
        server: s,
        runs: AtomicUsize::new(0),
    }));
    let def = r#"{"name":"self"}"#;
    let st = mcp_server_add(
        s,
        c"tool".as_ptr(),
        4,
        def.as_ptr().cast(),
        def.len(),
        Some(answer),
        ptr::from_mut(r).cast(),
        Some(remove_other),
        ptr::null_mut(),
    );
    assert_eq!(st, mcp_status_t::Ok);
    let (tx, rx) = std::sync::mpsc::channel();
    let srv = SendServer(s);
    std::thread::spawn(move || {
        let srv = srv;
        tx.send(remove(srv.0, "tool", "self")).ok();
    });
    let removed = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the removal returned");
    assert!(removed);
    assert_eq!(r.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        other.load(Ordering::SeqCst),
        1,
        "the finalizer removed the other tool"
    );
    mcp_server_free(s);
    mcp_runtime_free(rt);
}
