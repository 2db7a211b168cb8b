//! The client operations exported to C for requests, lists and tool calls, each as a
//! completion-callback call and a `..._blocking` twin over the shared bodies in
//! [`crate::client_calls`] (REQUIREMENTS PAGE-01, TOOL-01, TOOL-06, MRTR-01…05). Prompts,
//! resources, completion and logging are in [`crate::client_ops_content`].
//!
//! Pointer contract of every function here: each `(const char *, size_t)` pair is NULL or valid
//! for that many bytes; `client` and `options` are NULL or live handles.

use std::ffi::{c_char, c_void};

use crate::client::mcp_client_t;
use crate::client_calls::{args, blocking, mcp_call_options_t, submit, Op};
use crate::error::{mcp_error_t, FfiError};
use crate::status::mcp_status_t;
use crate::trampoline::mcp_completion_fn;

// The operation each entry point and its `..._blocking` twin run, built from the C arguments
// in one place so that the two forms validate alike (NULL, UTF-8, JSON object).

/// `mcp_client_request`: method and params.
///
/// # Safety
/// The module contract.
unsafe fn request_op(
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    unsafe {
        args::named(
            method,
            method_len,
            "method",
            params_json,
            params_len,
            "params_json",
            Op::Request,
        )
    }
}

/// `mcp_client_list`: kind and optional cursor.
///
/// # Safety
/// The module contract.
unsafe fn list_page_op(
    kind: i32,
    cursor: *const c_char,
    cursor_len: usize,
) -> Result<Op, FfiError> {
    let kind = args::kind(kind)?;
    // SAFETY: forwarded contract.
    let cursor = unsafe { args::opt_string(cursor, cursor_len, "cursor") }?;
    Ok(Op::ListPage(kind, cursor))
}

/// Send any request (`method` + params) and get its raw result. Modern `input_required` results are driven with the registered client handlers; when none fits, the raw `input_required` result is returned as the result (drive it by hand).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the raw JSON-RPC `result` object as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param method         UTF-8 method name, e.g. `"tools/call"` or a custom method.
/// @param method_len     length of `method`.
/// @param params_json    optional JSON object of params (NULL for none). The modern envelope (`_meta`) is added by the library.
/// @param params_len     length of `params_json`.
/// @param options        optional call options (NULL for defaults); copied.
/// @param callback       the completion callback.
/// @param user_data      passed to `callback`; must stay valid until it ran.
/// @param error_out      optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED` (the client is
/// closed).
#[no_mangle]
pub extern "C" fn mcp_client_request(
    client: *const mcp_client_t,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { request_op(method, method_len, params_json, params_len) };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_request`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param method         UTF-8 method name, e.g. `"tools/call"` or a custom method.
/// @param method_len     length of `method`.
/// @param params_json    optional JSON object of params (NULL for none). The modern envelope (`_meta`) is added by the library.
/// @param params_len     length of `params_json`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the raw JSON-RPC `result` object on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_request_blocking(
    client: *const mcp_client_t,
    method: *const c_char,
    method_len: usize,
    params_json: *const c_char,
    params_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { request_op(method, method_len, params_json, params_len) };
    blocking(
        "mcp_client_request_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Fetch one page of a list (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the page: `{"tools": [...], "nextCursor": "..."}` (key per kind; `nextCursor` absent on the last page) as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param kind           one of `mcp_list_kind_t` (passed as `int`).
/// @param cursor         optional UTF-8 cursor from a previous page's `nextCursor` (NULL for the first page).
/// @param cursor_len     length of `cursor`.
/// @param options        optional call options (NULL for defaults); copied.
/// @param callback       the completion callback.
/// @param user_data      passed to `callback`; must stay valid until it ran.
/// @param error_out      optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown kind), `MCP_STATUS_CLOSED` (the client is
/// closed).
#[no_mangle]
pub extern "C" fn mcp_client_list(
    client: *const mcp_client_t,
    kind: i32,
    cursor: *const c_char,
    cursor_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { list_page_op(kind, cursor, cursor_len) };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_list`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param kind           one of `mcp_list_kind_t` (passed as `int`).
/// @param cursor         optional UTF-8 cursor from a previous page's `nextCursor` (NULL for the first page).
/// @param cursor_len     length of `cursor`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the page: `{"tools": [...], "nextCursor": "..."}` (key per kind; `nextCursor` absent on the last page) on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown kind), `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_list_blocking(
    client: *const mcp_client_t,
    kind: i32,
    cursor: *const c_char,
    cursor_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { list_page_op(kind, cursor, cursor_len) };
    blocking(
        "mcp_client_list_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Fetch a whole list, following `nextCursor` page by page (a repeated cursor ends the walk).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with `{"tools": [...]}` (key per kind) with every item as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param kind           one of `mcp_list_kind_t` (passed as `int`).
/// @param options        optional call options (NULL for defaults); copied.
/// @param callback       the completion callback.
/// @param user_data      passed to `callback`; must stay valid until it ran.
/// @param error_out      optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown kind), `MCP_STATUS_CLOSED` (the client is
/// closed).
#[no_mangle]
pub extern "C" fn mcp_client_list_all(
    client: *const mcp_client_t,
    kind: i32,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let op = || args::kind(kind).map(Op::ListAll);
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_list_all`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param kind           one of `mcp_list_kind_t` (passed as `int`).
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives `{"tools": [...]}` (key per kind) with every item on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown kind), `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_list_all_blocking(
    client: *const mcp_client_t,
    kind: i32,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let op = || args::kind(kind).map(Op::ListAll);
    blocking(
        "mcp_client_list_all_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Call a tool (`tools/call`). Modern `input_required` rounds are answered by the registered client handlers; `structuredContent` is checked against the tool's `outputSchema` when a listing made it known.
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `CallToolResult` (`{"content": [...], "structuredContent": ..., "isError": ...}`; a tool's own failure, and arguments that fail its `inputSchema` (TOOL-07), are results with `isError` true, not error statuses; a modern server's results also carry `resultType` and `_meta` `io.modelcontextprotocol/serverInfo`) as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param name           UTF-8 tool name.
/// @param name_len       length of `name`.
/// @param arguments_json optional JSON object of arguments (NULL for none).
/// @param arguments_len  length of `arguments_json`.
/// @param options        optional call options (NULL for defaults); copied.
/// @param callback       the completion callback.
/// @param user_data      passed to `callback`; must stay valid until it ran.
/// @param error_out      optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED` (the client is
/// closed).
#[no_mangle]
pub extern "C" fn mcp_client_call_tool(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        args::named_arguments(name, name_len, arguments_json, arguments_len, Op::CallTool)
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_call_tool`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param name           UTF-8 tool name.
/// @param name_len       length of `name`.
/// @param arguments_json optional JSON object of arguments (NULL for none).
/// @param arguments_len  length of `arguments_json`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the `CallToolResult` (`{"content": [...], "structuredContent": ..., "isError": ...}`; a tool's own failure is a result with `isError` true, not an error status) on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INPUT_REQUIRED` (no handler for the input the server asked for; the raw result is in the error's data), `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_blocking(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        args::named_arguments(name, name_len, arguments_json, arguments_len, Op::CallTool)
    };
    blocking(
        "mcp_client_call_tool_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}
