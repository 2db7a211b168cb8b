//! The client operations on prompts, resources, completion and logging exported to C, each as a
//! completion-callback call and a `..._blocking` twin over the shared bodies in
//! [`crate::client_calls`] (REQUIREMENTS PRM-01, RES-01, CMP-01, LOG-03, MRTR-01…05). Requests,
//! lists and tool calls are in [`crate::client_ops`].
//!
//! Pointer contract of every function here: each `(const char *, size_t)` pair is NULL or valid
//! for that many bytes; `client` and `options` are NULL or live handles.

use serde_json::Value;
use std::ffi::{c_char, c_void};

use crate::client::mcp_client_t;
use crate::client_calls::{args, blocking, mcp_call_options_t, submit, Op};
use crate::error::{mcp_error_t, FfiError};
use crate::status::mcp_status_t;
use crate::trampoline::mcp_completion_fn;

// The operation each entry point and its `..._blocking` twin run, built from the C arguments
// in one place so that the two forms validate alike.

/// `mcp_client_complete`: the reference (required), the argument's name and partial value, and
/// the optional context, each a `(pointer, length)` pair.
///
/// # Safety
/// The module contract.
unsafe fn complete_op(
    (reference_json, reference_len): (*const c_char, usize),
    (argument_name, argument_name_len): (*const c_char, usize),
    (argument_value, argument_value_len): (*const c_char, usize),
    (context_json, context_len): (*const c_char, usize),
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    let reference =
        match unsafe { args::opt_object(reference_json, reference_len, "reference_json") }? {
            Value::Null => return Err(FfiError::null("reference_json")),
            v => v,
        };
    // SAFETY: forwarded contract.
    let name = unsafe { args::string(argument_name, argument_name_len, "argument_name") }?;
    // SAFETY: forwarded contract.
    let value = unsafe { args::string(argument_value, argument_value_len, "argument_value") }?;
    // SAFETY: forwarded contract.
    let context = match unsafe { args::opt_object(context_json, context_len, "context_json") }? {
        Value::Null => None,
        v => Some(v),
    };
    Ok(Op::Complete {
        reference,
        name,
        value,
        context,
    })
}

/// Get a prompt (`prompts/get`), answering `input_required` rounds with the registered handlers.
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `GetPromptResult` (`{"description": ..., "messages": [...]}`) as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param name           UTF-8 prompt name.
/// @param name_len       length of `name`.
/// @param arguments_json optional JSON object of string arguments (NULL for none).
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
pub extern "C" fn mcp_client_get_prompt(
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
        args::named_arguments(name, name_len, arguments_json, arguments_len, Op::GetPrompt)
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_get_prompt`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param name           UTF-8 prompt name.
/// @param name_len       length of `name`.
/// @param arguments_json optional JSON object of string arguments (NULL for none).
/// @param arguments_len  length of `arguments_json`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the `GetPromptResult` (`{"description": ..., "messages": [...]}`) on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INPUT_REQUIRED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_get_prompt_blocking(
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
        args::named_arguments(name, name_len, arguments_json, arguments_len, Op::GetPrompt)
    };
    blocking(
        "mcp_client_get_prompt_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Read a resource (`resources/read`), answering `input_required` rounds with the registered handlers.
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `ReadResourceResult` (`{"contents": [...]}`) as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param uri            UTF-8 resource URI.
/// @param uri_len        length of `uri`.
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
pub extern "C" fn mcp_client_read_resource(
    client: *const mcp_client_t,
    uri: *const c_char,
    uri_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { args::string(uri, uri_len, "uri") }.map(Op::ReadResource);
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_read_resource`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param uri            UTF-8 resource URI.
/// @param uri_len        length of `uri`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the `ReadResourceResult` (`{"contents": [...]}`) on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INPUT_REQUIRED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_read_resource_blocking(
    client: *const mcp_client_t,
    uri: *const c_char,
    uri_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { args::string(uri, uri_len, "uri") }.map(Op::ReadResource);
    blocking(
        "mcp_client_read_resource_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Ask for argument completions (`completion/complete`).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `CompleteResult` (`{"completion": {"values": [...], "total": ..., "hasMore": ...}}`) as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param reference_json JSON object: `{"type":"ref/prompt","name":...}` or `{"type":"ref/resource","uri":...}`.
/// @param reference_len  length of `reference_json`.
/// @param argument_name  UTF-8 name of the argument being completed.
/// @param argument_name_len length of `argument_name`.
/// @param argument_value UTF-8 partial value typed so far.
/// @param argument_value_len length of `argument_value`.
/// @param context_json   optional JSON object of already-resolved arguments (NULL for none).
/// @param context_len    length of `context_json`.
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
pub extern "C" fn mcp_client_complete(
    client: *const mcp_client_t,
    reference_json: *const c_char,
    reference_len: usize,
    argument_name: *const c_char,
    argument_name_len: usize,
    argument_value: *const c_char,
    argument_value_len: usize,
    context_json: *const c_char,
    context_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        complete_op(
            (reference_json, reference_len),
            (argument_name, argument_name_len),
            (argument_value, argument_value_len),
            (context_json, context_len),
        )
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_complete`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param reference_json JSON object: `{"type":"ref/prompt","name":...}` or `{"type":"ref/resource","uri":...}`.
/// @param reference_len  length of `reference_json`.
/// @param argument_name  UTF-8 name of the argument being completed.
/// @param argument_name_len length of `argument_name`.
/// @param argument_value UTF-8 partial value typed so far.
/// @param argument_value_len length of `argument_value`.
/// @param context_json   optional JSON object of already-resolved arguments (NULL for none).
/// @param context_len    length of `context_json`.
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives the `CompleteResult` (`{"completion": {"values": [...], "total": ..., "hasMore": ...}}`) on success (free with `mcp_string_free`).
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
pub extern "C" fn mcp_client_complete_blocking(
    client: *const mcp_client_t,
    reference_json: *const c_char,
    reference_len: usize,
    argument_name: *const c_char,
    argument_name_len: usize,
    argument_value: *const c_char,
    argument_value_len: usize,
    context_json: *const c_char,
    context_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        complete_op(
            (reference_json, reference_len),
            (argument_name, argument_name_len),
            (argument_value, argument_value_len),
            (context_json, context_len),
        )
    };
    blocking(
        "mcp_client_complete_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Set the log level of `notifications/message` the server sends: `logging/setLevel` on legacy connections; on modern ones the level becomes the default per-request `logLevel` of later calls (no request is sent).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with `{}` as `result_json`, or
/// with the failure: `MCP_STATUS_PROTOCOL` and the server's JSON-RPC error (code, message,
/// data) in `error`, `MCP_STATUS_INPUT_REQUIRED` (an `input_required` no registered handler can
/// answer; the raw result is the error's data), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CANCELLED`,
/// `MCP_STATUS_CLOSED`, ...
///
/// @param client         the client.
/// @param level          one of `mcp_log_level_t` (passed as `int`).
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
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown level), `MCP_STATUS_CLOSED` (the client is
/// closed).
#[no_mangle]
pub extern "C" fn mcp_client_set_log_level(
    client: *const mcp_client_t,
    level: i32,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let op = || crate::responder::log_level(level).map(Op::SetLogLevel);
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_set_log_level`: waits for the outcome on the calling thread.
///
/// @param client         the client.
/// @param level          one of `mcp_log_level_t` (passed as `int`).
/// @param options        optional call options (NULL for defaults); a cancellation token in
///                       them may be cancelled from another thread (or a progress callback).
/// @param result_out     receives `{}` on success (free with `mcp_string_free`).
/// @param error_out      optional detailed error on failure (the server's JSON-RPC error for
///                       `MCP_STATUS_PROTOCOL`).
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_INVALID_ARGUMENT` (unknown level), `MCP_STATUS_CLOSED`, `MCP_STATUS_PROTOCOL`, `MCP_STATUS_TIMEOUT`,
/// `MCP_STATUS_CANCELLED`, `MCP_STATUS_TRANSPORT`, `MCP_STATUS_WOULD_DEADLOCK` (called inside a
/// callback or on a runtime thread; nothing was sent).
#[no_mangle]
pub extern "C" fn mcp_client_set_log_level_blocking(
    client: *const mcp_client_t,
    level: i32,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let op = || crate::responder::log_level(level).map(Op::SetLogLevel);
    blocking(
        "mcp_client_set_log_level_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}
