//! Typed pointer helpers: the one place where handles become raw pointers and back. Every handle
//! is a `Box<T>` handed to C; thread-safe handles hold an `Arc` inside that box.

use crate::error::FfiError;
use crate::status::mcp_status_t;

/// Box `v` and give up ownership to C.
pub(crate) fn into_raw<T>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Take back ownership of a handle (`None` for NULL).
///
/// # Safety
/// `p` is NULL or came from [`into_raw`] for the same `T` and was not taken back before.
pub(crate) unsafe fn take<T>(p: *mut T) -> Option<Box<T>> {
    if p.is_null() {
        None
    } else {
        // SAFETY: per the contract, p is a live Box<T> pointer owned by the caller.
        Some(unsafe { Box::from_raw(p) })
    }
}

/// Borrow a handle for the duration of a call.
///
/// # Safety
/// `p` is NULL or points to a live `T` that no other thread mutates during the call.
pub(crate) unsafe fn borrow<'a, T>(p: *const T, what: &str) -> Result<&'a T, FfiError> {
    // SAFETY: per the contract.
    unsafe { p.as_ref() }.ok_or_else(|| FfiError::null(what))
}

/// Mutably borrow a handle for the duration of a call.
///
/// # Safety
/// `p` is NULL or points to a live `T` not used by anyone else during the call.
pub(crate) unsafe fn borrow_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, FfiError> {
    // SAFETY: per the contract.
    unsafe { p.as_mut() }.ok_or_else(|| FfiError::null(what))
}

/// Check that an out-parameter is not NULL before doing any work.
pub(crate) fn require_out<T>(out: *mut T, what: &str) -> Result<(), FfiError> {
    if out.is_null() {
        Err(FfiError::null(what))
    } else {
        Ok(())
    }
}

/// Write `v` to `out` when `out` is not NULL. `T: Copy`, so nothing owned is ever dropped on the
/// floor when `out` is NULL.
///
/// # Safety
/// `out` is NULL or valid for writing one `T`.
pub(crate) unsafe fn write_opt<T: Copy>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: per the contract; `write` does not read or drop the old (maybe uninit) value.
        unsafe { out.write(v) };
    }
}

/// A status-only error for a NULL pointer argument.
impl FfiError {
    pub(crate) fn null(what: &str) -> Self {
        FfiError::new(mcp_status_t::NullArgument, format!("{what} is NULL"))
    }
}
