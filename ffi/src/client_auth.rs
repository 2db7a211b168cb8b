//! The OAuth browser step through the C ABI (REQUIREMENTS §15): the C callback receives the
//! authorization URL and writes the redirect URL the authorization server sent the user back
//! to. Everything else (discovery, registration, PKCE, tokens) is core's, configured by the
//! `auth` object of the HTTP options JSON.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpcore::client::auth::{AuthError, AuthErrorKind, AuthorizationBrowser};
use mcpcore::BoxFuture;

use crate::client_builder::mcp_client_builder_t;
use crate::error::{mcp_error_t, FfiError};
use crate::guard::status_guard;
use crate::handle;
use crate::status::mcp_status_t;
use crate::string::NulTerminated;
use crate::trampoline::{mcp_free_fn, UserData};

/// Room the callback gets for the redirect URL (`redirect_cap` bytes).
pub const MCP_AUTH_REDIRECT_CAP: usize = 8192;

/// The browser step of the OAuth authorization code flow.
///
/// Called on a blocking worker thread (it may wait for the user): `url` (borrowed, NUL-terminated,
/// `url_len` bytes) is the authorization URL to open. Write the full redirect URL (with its
/// `code`, `state` and `iss` query parameters) to `redirect_out` (room for `redirect_cap`
/// bytes, no NUL needed) and return its length; return 0 to refuse (the connection then fails
/// with `MCP_STATUS_TRANSPORT`). Must not unwind or `longjmp`.
pub type mcp_auth_browser_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        url: *const c_char,
        url_len: usize,
        redirect_out: *mut c_char,
        redirect_cap: usize,
    ) -> usize,
>;

type BrowserFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut c_char, usize) -> usize;

/// Core's browser hook calling the C function.
pub(crate) struct CBrowser {
    func: BrowserFn,
    data: Arc<UserData>,
}

fn browser_error(m: &str) -> AuthError {
    AuthError::new(AuthErrorKind::Browser, m)
}

impl AuthorizationBrowser for CBrowser {
    fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
        let (func, data) = (self.func, self.data.clone());
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let u = NulTerminated::new(url.into_bytes());
                let mut buf = vec![0u8; MCP_AUTH_REDIRECT_CAP];
                // SAFETY: the user's callback with its own user data; `u` outlives the call and
                // `buf` is writable for its length (see `mcp_auth_browser_fn`).
                let n = unsafe {
                    func(
                        data.ptr(),
                        u.bytes().as_ptr().cast(),
                        u.bytes().len(),
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                    )
                };
                match n {
                    0 => Err(browser_error("the authorization callback refused")),
                    n if n > buf.len() => Err(browser_error(
                        "the authorization callback returned more than redirect_cap bytes",
                    )),
                    n => {
                        buf.truncate(n);
                        String::from_utf8(buf).map_err(|_| {
                            browser_error("the redirect URL from the callback is not UTF-8")
                        })
                    }
                }
            })
            .await
            .map_err(|_| browser_error("the authorization callback did not return"))?
        })
    }
}

/// Set the browser step of OAuth authorization for `mcp_client_connect_http` (whose options
/// JSON `auth` object turns authorization on). Without it, the authorization URL is fetched
/// and its redirect followed without a user (for servers that approve automatically).
///
/// @param builder         the client builder.
/// @param callback        the browser step (see `mcp_auth_browser_fn`).
/// @param user_data       passed to `callback`.
/// @param free_user_data  optional finalizer of `user_data`.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `builder`; takes ownership of `user_data` in every case.
///
/// **Thread safety**: the builder's thread. `callback` runs on a blocking worker thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`builder` or `callback`).
#[no_mangle]
pub extern "C" fn mcp_client_builder_on_authorize(
    builder: *mut mcp_client_builder_t,
    callback: mcp_auth_browser_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    status_guard(error_out, move || {
        // SAFETY: builder is NULL or a live builder used by this thread only (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        let Some(func) = callback else {
            drop(data);
            return Err(FfiError::null("callback"));
        };
        b.auth_browser = Some(Arc::new(CBrowser {
            func,
            data: Arc::new(data),
        }));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn echo_state(
        _data: *mut c_void,
        url: *const c_char,
        url_len: usize,
        out: *mut c_char,
        cap: usize,
    ) -> usize {
        // SAFETY: the engine passes `url_len` readable bytes and `cap` writable bytes.
        let url = unsafe { std::slice::from_raw_parts(url.cast::<u8>(), url_len) };
        let url = String::from_utf8_lossy(url);
        let redirect = format!(
            "http://127.0.0.1:9/cb?code=c&{}",
            url.rsplit('?').next().unwrap_or("")
        );
        let n = redirect.len().min(cap);
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(redirect.as_ptr(), out.cast::<u8>(), n) };
        n
    }

    unsafe extern "C" fn refuse(
        _: *mut c_void,
        _: *const c_char,
        _: usize,
        _: *mut c_char,
        _: usize,
    ) -> usize {
        0
    }

    unsafe extern "C" fn overflow(
        _: *mut c_void,
        _: *const c_char,
        _: usize,
        _: *mut c_char,
        cap: usize,
    ) -> usize {
        cap + 1
    }

    fn browser(func: BrowserFn) -> CBrowser {
        CBrowser {
            func,
            data: Arc::new(UserData::new(std::ptr::null_mut(), None)),
        }
    }

    #[tokio::test]
    async fn the_c_callback_gets_the_url_and_returns_the_redirect() {
        let r = browser(echo_state)
            .authorize("http://as/authorize?state=xyz".into())
            .await
            .expect("redirect");
        assert_eq!(r, "http://127.0.0.1:9/cb?code=c&state=xyz");
        for f in [refuse as BrowserFn, overflow] {
            let e = browser(f)
                .authorize("http://as/a".into())
                .await
                .unwrap_err();
            assert_eq!(e.kind(), AuthErrorKind::Browser);
        }
    }
}
