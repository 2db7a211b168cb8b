//! The panic boundary: every `extern "C"` body runs inside [`ffi_guard`] or [`status_guard`], so
//! a Rust panic becomes `MCP_STATUS_PANIC` (or a documented NULL/0/false default) and never unwinds
//! into C (the rustls-ffi habit).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{mcp_error_t, FfiError};
use crate::handle;
use crate::status::mcp_status_t;

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("panic")
}

/// Run `f`; on a panic, log it and return `default`.
pub(crate) fn ffi_guard<R>(default: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            tracing::error!(
                panic = panic_message(&*payload),
                "panic caught at the C boundary"
            );
            default
        }
    }
}

/// Run `f` and turn its outcome into a status. On failure (including a caught panic) a detailed
/// [`mcp_error_t`] is written to `error_out` when it is not NULL; on success `error_out` is left
/// untouched.
///
/// `*error_out` must be NULL on entry: writing over an error the caller still holds would leak
/// it, so a non-NULL one refuses the call with `MCP_STATUS_INVALID_ARGUMENT` before `f` runs and
/// is left as it was. `f` is dropped unrun then, so what it owns (user data, a consumed
/// builder) is released exactly as on any other failure.
pub(crate) fn status_guard(
    error_out: *mut *mut mcp_error_t,
    f: impl FnOnce() -> Result<(), FfiError>,
) -> mcp_status_t {
    // SAFETY: error_out is NULL or valid for reading one pointer (contract of every entry point
    // that takes it; the header requires `*error_out` to be initialized to NULL).
    if !error_out.is_null() && !unsafe { error_out.read() }.is_null() {
        tracing::warn!("refused a call whose *error_out was not NULL on entry");
        return mcp_status_t::InvalidArgument;
    }
    let outcome = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = panic_message(&*payload);
            tracing::error!(panic = msg, "panic caught at the C boundary");
            Err(FfiError::new(
                mcp_status_t::Panic,
                format!("internal panic: {msg}"),
            ))
        }
    };
    match outcome {
        Ok(()) => mcp_status_t::Ok,
        Err(e) => {
            let status = e.status;
            // Writing the error must not panic either (allocation aside, it cannot).
            if !error_out.is_null() {
                let _ = catch_unwind(AssertUnwindSafe(|| {
                    // SAFETY: error_out is non-NULL and points to writable storage for one
                    // pointer (documented contract of every entry point that takes it).
                    unsafe { error_out.write(handle::into_raw(mcp_error_t::from(e))) };
                }));
            }
            status
        }
    }
}

/// Fail with `MCP_STATUS_WOULD_DEADLOCK` when called on a runtime thread (inside a callback or a
/// task), where blocking would stall or deadlock the engine.
pub(crate) fn forbid_runtime_thread(what: &str) -> Result<(), FfiError> {
    mcpcore::runtime::ensure_may_block().map_err(|e| FfiError::runtime(what, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn a_panic_becomes_the_panic_status_with_an_error_object() {
        let mut err: *mut mcp_error_t = ptr::null_mut();
        let st = status_guard(&mut err, || panic!("boom"));
        assert_eq!(st, mcp_status_t::Panic);
        assert!(!err.is_null());
        // SAFETY: err was just produced by status_guard.
        let e = unsafe { Box::from_raw(err) };
        assert_eq!(e.status(), mcp_status_t::Panic);
        assert!(e.message().contains("boom"));
    }

    #[test]
    fn a_panic_in_a_value_function_returns_the_default() {
        let v: *const u8 = ffi_guard(ptr::null(), || panic!("boom"));
        assert!(v.is_null());
    }

    /// A non-NULL `*error_out` on entry: refused, untouched, and the work is not done (its
    /// captured ownership is dropped).
    #[test]
    fn a_non_null_error_out_is_refused_untouched() {
        let sentinel = std::ptr::dangling_mut::<mcp_error_t>();
        let mut err = sentinel;
        let ran = std::cell::Cell::new(false);
        let st = status_guard(&mut err, || {
            ran.set(true);
            Ok(())
        });
        assert_eq!(st, mcp_status_t::InvalidArgument);
        assert_eq!(err, sentinel);
        assert!(!ran.get());
    }

    #[test]
    fn success_leaves_error_out_untouched() {
        let mut err: *mut mcp_error_t = ptr::null_mut();
        assert_eq!(status_guard(&mut err, || Ok(())), mcp_status_t::Ok);
        assert!(err.is_null());
    }

    #[test]
    fn blocking_is_refused_on_runtime_threads() {
        assert!(forbid_runtime_thread("x").is_ok());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let r = rt.block_on(async { forbid_runtime_thread("x") });
        assert_eq!(r.map_err(|e| e.status), Err(mcp_status_t::WouldDeadlock));
    }
}
