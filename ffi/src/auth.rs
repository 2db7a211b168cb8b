//! The OAuth resource server from C (REQUIREMENTS AUTH-06): `mcp_server_listen_http_auth`
//! serves Streamable HTTP with core's authorization gate and a C token verifier. Core does
//! every protocol part (metadata, challenges, scopes, bindings); the callback only says who a
//! token speaks for, as core's `Principal` JSON, or refuses it.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use mcpcore::auth::{AuthOptions, Principal, TokenVerifier, VerifyError};
use mcpcore::transport::http::HttpOptions;
use mcpcore::BoxFuture;

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::str_arg;
use crate::trampoline::{mcp_free_fn, UserData};
use crate::transport::{listen, mcp_listener_t, ListenArgs};

/// The verdict on one token, borrowed by a `mcp_token_verifier_fn` for the duration of the call.
/// Decide with `mcp_token_verdict_accept` or `mcp_token_verdict_refuse`; undecided means refused.
pub struct mcp_token_verdict_t {
    outcome: Option<Result<Principal, VerifyError>>,
}

/// A token verifier callback.
///
/// Called on a blocking-pool thread of the runtime (it may block, e.g. for token
/// introspection), possibly concurrently. `token` is the bearer token, NUL-terminated,
/// `token_len` bytes, valid until the callback returns; `verdict` likewise. The verifier MUST
/// refuse tokens not issued for this server (audience, RFC 8707), expired ones, and ones of an
/// untrusted issuer. It must not unwind or `longjmp`.
pub type mcp_token_verifier_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        token: *const c_char,
        token_len: usize,
        verdict: *mut mcp_token_verdict_t,
    ),
>;

/// Accept the token as `principal_json`: core's `Principal` shape, `{"subject": "…",
/// "issuer"?, "scopes"?: ["…"], "clientId"?, "expiresAt"? (Unix seconds), "claims"?}`.
///
/// @param verdict          the verdict passed to the callback.
/// @param principal_json   UTF-8 JSON, `principal_len` bytes.
///
/// **Ownership**: borrows everything; the JSON is copied.
///
/// **Thread safety**: only inside the verifier callback that received `verdict`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (not a principal: the verdict stays undecided, so the token is refused).
#[no_mangle]
pub extern "C" fn mcp_token_verdict_accept(
    verdict: *mut mcp_token_verdict_t,
    principal_json: *const c_char,
    principal_len: usize,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: verdict is NULL or the live verdict of the running callback (contract).
        let v = unsafe { verdict.as_mut() }.ok_or_else(|| FfiError::null("verdict"))?;
        // SAFETY: principal_json is NULL or valid for principal_len bytes.
        let s = unsafe { str_arg(principal_json, principal_len, "principal_json") }?;
        let p: Principal = serde_json::from_str(s).map_err(|e| {
            FfiError::new(mcp_status_t::InvalidJson, format!("principal_json: {e}"))
        })?;
        v.outcome = Some(Ok(p));
        Ok(())
    })
}

/// Refuse the token (401 `invalid_token`); `reason` (may be NULL) becomes the challenge's
/// `error_description`, so keep it short and free of internal details.
///
/// **Thread safety**: only inside the verifier callback that received `verdict`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (verdict), `MCP_STATUS_INVALID_UTF8`.
#[no_mangle]
pub extern "C" fn mcp_token_verdict_refuse(
    verdict: *mut mcp_token_verdict_t,
    reason: *const c_char,
    reason_len: usize,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: verdict is NULL or the live verdict of the running callback (contract).
        let v = unsafe { verdict.as_mut() }.ok_or_else(|| FfiError::null("verdict"))?;
        let why = if reason.is_null() {
            "token refused"
        } else {
            // SAFETY: reason is valid for reason_len bytes (contract).
            unsafe { str_arg(reason, reason_len, "reason") }?
        };
        v.outcome = Some(Err(VerifyError::Invalid(why.to_owned())));
        Ok(())
    })
}

struct CVerifier {
    func: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut mcp_token_verdict_t),
    data: Arc<UserData>,
}

impl TokenVerifier for CVerifier {
    fn verify(&self, token: &str) -> BoxFuture<Result<Principal, VerifyError>> {
        let (func, data) = (self.func, self.data.clone());
        // Core hands over token68 only, which has no NUL.
        let token = CString::new(token).ok();
        Box::pin(async move {
            let token = token.ok_or_else(|| VerifyError::Invalid("malformed token".into()))?;
            let run = move || {
                let mut v = mcp_token_verdict_t { outcome: None };
                let len = token.as_bytes().len();
                // SAFETY: the user's verifier with its own user data, a NUL-terminated token and
                // a verdict that both outlive the call (see `mcp_token_verifier_fn`).
                unsafe { func(data.ptr(), token.as_ptr(), len, &mut v) };
                v.outcome
            };
            match tokio::task::spawn_blocking(move || ffi_guard(None, run)).await {
                Ok(Some(outcome)) => outcome,
                Ok(None) => Err(VerifyError::Invalid("token refused".into())),
                Err(_) => Err(VerifyError::Unavailable("verifier failed".into())),
            }
        })
    }
}

/// Listen for Streamable HTTP like `mcp_server_listen_http`, protected as an OAuth 2.1 resource
/// server whose tokens `verifier` checks.
///
/// @param options_json  required: core's `HttpOptions` shape (see `mcp_server_listen_http`) with
///                      an `auth` object: `resource` (this server's URL; PRM `resource`),
///                      `authorizationServers` (at least one issuer), optional
///                      `scopesSupported`, `requiredScopes`, `toolScopes` (`{"tool":
///                      ["scope"]}`), `resourceMetadataUrl`, `clockSkewMs` [60000: tolerance
///                      for `expiresAt`]. The JWT keys (`issuer`, `jwksPath`, `jwksUrl`, …)
///                      are not used: the callback verifies.
/// @param verifier      the token verifier (required).
/// @param user_data     passed to `verifier`.
/// @param free_fn       optional finalizer of `user_data`, called once when the listener and
///                      every request using it are gone (or at once on failure).
///
/// The other parameters, ownership and thread safety are those of `mcp_server_listen_http`.
///
/// **Errors**: as `mcp_server_listen_http`; `MCP_STATUS_NULL_ARGUMENT` for a NULL verifier or
/// options; `MCP_STATUS_INVALID_ARGUMENT` when `auth` is missing or invalid.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mcp_server_listen_http_auth(
    server: *const mcp_server_t,
    addr: *const c_char,
    addr_len: usize,
    options_json: *const c_char,
    options_len: usize,
    verifier: mcp_token_verifier_fn,
    user_data: *mut c_void,
    free_fn: mcp_free_fn,
    listener_out: *mut *mut mcp_listener_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_fn);
    status_guard(error_out, move || {
        let func = verifier.ok_or_else(|| FfiError::null("verifier"))?;
        if options_json.is_null() {
            return Err(FfiError::null("options_json"));
        }
        let v: Arc<dyn TokenVerifier> = Arc::new(CVerifier {
            func,
            data: Arc::new(data),
        });
        let mut base = HttpOptions::default();
        // The verifier has no JSON form: set first, kept through the patch (`auth` must be in
        // `options_json`, or the empty resource is refused).
        base.auth = Some(AuthOptions::default().with_verifier(v));
        let args = ListenArgs {
            server,
            addr,
            addr_len,
            options_json,
            options_len,
            listener_out,
        };
        listen(&args, base)
    })
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
