//! The borrowed request a handler callback receives. Every accessor returns UTF-8
//! that is NUL-terminated *and* has a length, valid only until the callback returns.

use serde_json::Value;
use std::ffi::c_char;
use std::sync::OnceLock;

use mcpcore::RequestContext;

use crate::guard::ffi_guard;
use crate::handle;
use crate::string::NulTerminated;

/// One request being handled. Borrowed: valid only during the handler callback, and only on the
/// callback's thread. Copy what you need before handing work to another thread.
///
/// Every text is made on the first call of its accessor: a handler pays only for what it reads.
pub struct mcp_request_t {
    method: OnceLock<NulTerminated>,
    name: OnceLock<Option<NulTerminated>>,
    params_value: Value,
    params: OnceLock<NulTerminated>,
    meta: OnceLock<Option<NulTerminated>>,
    id: OnceLock<NulTerminated>,
    ctx: RequestContext,
    version: OnceLock<Option<NulTerminated>>,
    client_caps: OnceLock<NulTerminated>,
    input_responses: OnceLock<Option<NulTerminated>>,
    state: OnceLock<Option<NulTerminated>>,
    principal: OnceLock<Option<NulTerminated>>,
    headers: OnceLock<Option<NulTerminated>>,
    trace: OnceLock<NulTerminated>,
}

impl mcp_request_t {
    pub(crate) fn new(ctx: &RequestContext, params: Value) -> Self {
        Self {
            method: OnceLock::new(),
            name: OnceLock::new(),
            params_value: params,
            params: OnceLock::new(),
            meta: OnceLock::new(),
            id: OnceLock::new(),
            ctx: ctx.clone(),
            version: OnceLock::new(),
            client_caps: OnceLock::new(),
            input_responses: OnceLock::new(),
            state: OnceLock::new(),
            principal: OnceLock::new(),
            headers: OnceLock::new(),
            trace: OnceLock::new(),
        }
    }
}

fn text(
    request: *const mcp_request_t,
    len_out: *mut usize,
    pick: impl FnOnce(&mcp_request_t) -> Option<&NulTerminated>,
) -> *const c_char {
    ffi_guard(std::ptr::null(), || {
        // SAFETY: request is NULL or the live request of the running callback (contract).
        match unsafe { handle::borrow(request, "request") } {
            Ok(r) => pick(r).map_or(std::ptr::null(), |t| t.expose(len_out)),
            Err(_) => std::ptr::null(),
        }
    })
}

/// The JSON-RPC method, e.g. `"tools/call"` or a custom method name.
///
/// @param request  the borrowed request.
/// @param len_out  if not NULL, receives the length in bytes (written only when the result is
///                 not NULL).
///
/// **Ownership**: borrowed from `request`; do not free.
///
/// **Lifetime**: valid until the handler callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL.
#[no_mangle]
pub extern "C" fn mcp_request_method(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        Some(
            r.method
                .get_or_init(|| NulTerminated::new(r.ctx.method().as_bytes().to_vec())),
        )
    })
}

/// The tool or prompt name, or the resource URI (`resources/read`), when the method has one.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter (written only when the result is not NULL).
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or the method has no name.
#[no_mangle]
pub extern "C" fn mcp_request_name(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.name
            .get_or_init(|| {
                r.ctx
                    .name()
                    .map(|n| NulTerminated::new(n.as_bytes().to_vec()))
            })
            .as_ref()
    })
}

/// The handler's params as JSON text: a tool's or prompt's `arguments` object, a resource
/// template's variables (`{}` for a concrete resource), or the whole `params` object for
/// completion and custom methods. Tool arguments were already validated against the input schema.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL.
#[no_mangle]
pub extern "C" fn mcp_request_params_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        Some(
            r.params
                .get_or_init(|| NulTerminated::json(&r.params_value)),
        )
    })
}

/// The request's `params._meta` as JSON text, as the client sent it.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or there is no `_meta`.
#[no_mangle]
pub extern "C" fn mcp_request_meta_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.meta
            .get_or_init(|| r.ctx.meta().map(NulTerminated::json))
            .as_ref()
    })
}

/// The JSON-RPC request id as JSON text (a number like `7` or a string like `"a"`).
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL.
#[no_mangle]
pub extern "C" fn mcp_request_id_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        Some(r.id.get_or_init(|| NulTerminated::json(&r.ctx.id().to_value())))
    })
}

/// The protocol version of this request: from the 2026-07-28 envelope, or the version the legacy
/// handshake negotiated.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or no version is known.
#[no_mangle]
pub extern "C" fn mcp_request_protocol_version(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.version
            .get_or_init(|| {
                r.ctx
                    .protocol_version()
                    .map(|v| NulTerminated::new(v.into_bytes()))
            })
            .as_ref()
    })
}

/// True when this request uses the modern (2026-07-28) per-request envelope.
///
/// @param request  the borrowed request (NULL → false).
///
/// **Ownership**: borrows `request`.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_request_is_modern(request: *const mcp_request_t) -> bool {
    ffi_guard(false, || {
        // SAFETY: request is NULL or live (contract).
        unsafe { handle::borrow(request, "request") }.is_ok_and(|r| r.ctx.is_modern())
    })
}

/// The client's capabilities as a JSON object: from this request's envelope (modern) or from
/// `initialize` (legacy).
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL.
#[no_mangle]
pub extern "C" fn mcp_request_client_capabilities_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        Some(
            r.client_caps
                .get_or_init(|| NulTerminated::json(&r.ctx.client_capabilities())),
        )
    })
}

/// The `inputResponses` object of a retried request (modern multi-round-trip), as JSON text.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or this is not a retry with input responses.
#[no_mangle]
pub extern "C" fn mcp_request_input_responses_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.input_responses
            .get_or_init(|| {
                r.ctx
                    .input_responses()
                    .map(|m| NulTerminated::json(&Value::Object(m.clone())))
            })
            .as_ref()
    })
}

/// The `requestState` of a retried request: the opaque text an earlier
/// `mcp_responder_input_required` call returned.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or there is no state.
#[no_mangle]
pub extern "C" fn mcp_request_state(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.state
            .get_or_init(|| {
                r.ctx
                    .request_state()
                    .map(|s| NulTerminated::new(s.as_bytes().to_vec()))
            })
            .as_ref()
    })
}

/// The verified principal of the request's access token, as core's `Principal` JSON
/// (`{"subject", "issuer", "scopes", "clientId", "expiresAt", "claims"}`), on an endpoint
/// protected by `mcp_server_listen_http_auth` (AUTH-06).
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or the request carries no verified token (an
/// unprotected endpoint, stdio).
#[no_mangle]
pub extern "C" fn mcp_request_principal_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.principal
            .get_or_init(|| {
                r.ctx
                    .principal()
                    .and_then(|p| serde_json::to_value(p).ok())
                    .map(|v| NulTerminated::json(&v))
            })
            .as_ref()
    })
}

/// The headers of the HTTP request that carried this request, as a JSON object of lower-case
/// names to values (a repeated header's values joined with `", "`), on a Streamable HTTP endpoint
/// (`mcp_server_listen_http`). Every header is there, `Authorization` included: use
/// `mcp_request_principal_json` for who is calling, and never pass the client's token on to
/// another service (AUTH-06).
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL or the request did not come over HTTP (stdio, a
/// connection handle, a request relayed from another worker).
#[no_mangle]
pub extern "C" fn mcp_request_headers_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        r.headers
            .get_or_init(|| r.ctx.http_headers_json().map(|v| NulTerminated::json(&v)))
            .as_ref()
    })
}

/// The W3C trace context of the server span handling this request, as a JSON object
/// `{"traceparent": "00-<trace id>-<span id>-01", "tracestate"?: "..."}`: in the caller's trace
/// when the request carried one (`_meta.traceparent`, or over HTTP the `traceparent` header),
/// else a new trace. Start the handler's own spans as children of it.
///
/// @param request  the borrowed request.
/// @param len_out  optional length out-parameter.
///
/// **Ownership**: borrowed; do not free.
///
/// **Lifetime**: until the callback returns.
///
/// **Thread safety**: the callback's thread only.
///
/// **Errors**: NULL when `request` is NULL.
#[no_mangle]
pub extern "C" fn mcp_request_trace_context_json(
    request: *const mcp_request_t,
    len_out: *mut usize,
) -> *const c_char {
    text(request, len_out, |r| {
        Some(
            r.trace
                .get_or_init(|| NulTerminated::json(&r.ctx.trace_context().to_json())),
        )
    })
}
