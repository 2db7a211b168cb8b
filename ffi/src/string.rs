//! Strings across the boundary: inputs are `(const char *, size_t)` UTF-8 copied before the call
//! returns (no NUL needed); outputs owned by the caller are NUL-terminated `char *` freed only by
//! [`mcp_string_free`]; borrowed outputs are NUL-terminated *and* have a length.

use serde_json::Value;
use std::ffi::{c_char, CString};

use crate::error::FfiError;
use crate::guard::ffi_guard;
use crate::status::mcp_status_t;

/// Bytes with a trailing NUL, exposed to C as a borrowed `const char *` plus a length. Interior
/// NULs are kept (the length tells the truth).
#[derive(Debug, Clone)]
pub(crate) struct NulTerminated(Vec<u8>);

impl NulTerminated {
    pub(crate) fn new(mut bytes: Vec<u8>) -> Self {
        bytes.push(0);
        Self(bytes)
    }
    pub(crate) fn json(v: &Value) -> Self {
        // Serializing a Value cannot fail (all keys are strings).
        Self::new(serde_json::to_vec(v).unwrap_or_default())
    }
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0[..self.0.len() - 1]
    }
    /// The pointer for C; writes the length to `len_out` when that is not NULL.
    pub(crate) fn expose(&self, len_out: *mut usize) -> *const c_char {
        // SAFETY: len_out is NULL or valid for one write (contract of every accessor).
        unsafe { crate::handle::write_opt(len_out, self.0.len() - 1) };
        self.0.as_ptr().cast()
    }
}

/// A required string argument.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn str_arg<'a>(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a str, FfiError> {
    // SAFETY: forwarded contract.
    unsafe { opt_str_arg(p, len, what) }?.ok_or_else(|| FfiError::null(what))
}

/// An optional string argument: NULL means absent.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn opt_str_arg<'a>(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, FfiError> {
    if p.is_null() {
        return Ok(None);
    }
    if len > isize::MAX as usize {
        return Err(FfiError::invalid(format!("{what}: length is out of range")));
    }
    // SAFETY: p is non-NULL and valid for len bytes (contract).
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map(Some).map_err(|e| {
        FfiError::new(
            mcp_status_t::InvalidUtf8,
            format!("{what} is not valid UTF-8 (at byte {})", e.valid_up_to()),
        )
    })
}

/// A required JSON argument.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn json_arg(p: *const c_char, len: usize, what: &str) -> Result<Value, FfiError> {
    // SAFETY: forwarded contract.
    unsafe { opt_json_arg(p, len, what) }?.ok_or_else(|| FfiError::null(what))
}

/// A required JSON argument kept as validated text (no tree is built: core passes it on).
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn raw_json_arg(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<Box<serde_json::value::RawValue>, FfiError> {
    // SAFETY: forwarded contract.
    let s = unsafe { str_arg(p, len, what) }?;
    serde_json::from_str(s)
        .map_err(|e| FfiError::new(mcp_status_t::InvalidJson, format!("{what}: {e}")))
}

/// An optional JSON argument: NULL means absent.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn opt_json_arg(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<Value>, FfiError> {
    // SAFETY: forwarded contract.
    let Some(s) = (unsafe { opt_str_arg(p, len, what) })? else {
        return Ok(None);
    };
    serde_json::from_str(s)
        .map(Some)
        .map_err(|e| FfiError::new(mcp_status_t::InvalidJson, format!("{what}: {e}")))
}

/// A required JSON object argument.
///
/// # Safety
/// `p` is NULL or valid for reading `len` bytes.
pub(crate) unsafe fn json_object_arg(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<serde_json::Map<String, Value>, FfiError> {
    // SAFETY: forwarded contract.
    match unsafe { json_arg(p, len, what) }? {
        Value::Object(m) => Ok(m),
        _ => Err(FfiError::new(
            mcp_status_t::InvalidJson,
            format!("{what} must be a JSON object"),
        )),
    }
}

/// A caller-owned NUL-terminated copy of `v` serialized as JSON (free with `mcp_string_free`).
pub(crate) fn owned_json(v: &Value) -> *mut c_char {
    // JSON text never contains a raw NUL byte (control characters are escaped).
    CString::new(serde_json::to_vec(v).unwrap_or_default())
        .map_or(std::ptr::null_mut(), CString::into_raw)
}

/// Free a string the library returned as owned (`char *`). NULL is a no-op.
///
/// @param s  a string returned as owned by this library.
///
/// **Ownership**: consumes `s`. Never pass a borrowed `const char *` (from accessors or
/// callbacks), and never free a library string with `free()`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_string_free(s: *mut c_char) {
    ffi_guard((), || {
        if !s.is_null() {
            // SAFETY: s came from CString::into_raw in this library (contract) and has no
            // interior NUL, so from_raw recovers the original allocation.
            drop(unsafe { CString::from_raw(s) });
        }
    });
}
