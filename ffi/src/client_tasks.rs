//! The client side of MCP tasks exported to C (REQUIREMENTS TASK-L01, TASK-M01…M04, CAN-03):
//! call a tool as a task, read, cancel and wait for a task, and call a tool through to its
//! result, each as a completion-callback call and a `..._blocking` twin over the shared bodies
//! in [`crate::client_calls`], both forms building their operation with one function of
//! [`crate::client_task_args`]. Results are JSON strings; the protocol work (per-request opt-in,
//! polling, pushes, answering `input_required` with the registered handlers) is core's
//! ([`mcpcore::client::Client::wait_task`]).
//!
//! JSON shapes:
//! - task options (`task_options_json`, optional): `{"ttlMs": <ms>}` (legacy `task.ttl`).
//! - wait options (`wait_options_json`, optional): core's [`mcpcore::client::TaskWaitOptions`]:
//!   `pollIntervalMs`, `minPollIntervalMs`, `maxPollIntervalMs`, `timeoutMs` (0 or null =
//!   none), `followPushes`. Unknown keys are refused.
//! - a task: the object the server described it with (`taskId`, `status`, `statusMessage`,
//!   `createdAt`, `lastUpdatedAt`, modern `ttlMs`/`pollIntervalMs`/`inputRequests`/`result`/
//!   `error`, legacy `ttl`/`pollInterval`).
//! - a task call outcome: `{"kind": "result", "result": <CallToolResult>}` when the server
//!   answered at once, `{"kind": "task", "task": <task>}` when it created a task.
//!
//! Pointer contract of every function here: each `(const char *, size_t)` pair is NULL or valid
//! for that many bytes; `client` and `options` are NULL or live handles.

use serde_json::{json, Value};
use std::ffi::{c_char, c_void};
use std::time::Duration;

use mcpcore::client::{CallOptions, Client, TaskCallOptions, TaskWaitOptions};

use crate::client::mcp_client_t;
use crate::client_calls::{blocking, mcp_call_options_t, submit};
use crate::client_task_args::{call_as_task_op, task_id_op, to_completion_op, wait_op};
use crate::error::{mcp_error_t, FfiError};
use crate::status::mcp_status_t;
use crate::trampoline::mcp_completion_fn;

/// One task operation, validated and owned.
pub(crate) enum TaskOp {
    CallAsTask {
        name: String,
        arguments: Value,
        ttl: Option<Duration>,
    },
    Get(String),
    Cancel(String),
    Wait(String, TaskWaitOptions),
    Result(String),
    ToCompletion {
        name: String,
        arguments: Value,
        ttl: Option<Duration>,
        wait: TaskWaitOptions,
    },
}

/// Run a task operation; the JSON handed to C.
pub(crate) async fn run(client: Client, op: TaskOp, o: CallOptions) -> Result<Value, FfiError> {
    let call = |ttl: Option<Duration>, o: CallOptions| {
        let t = TaskCallOptions::new().call(o);
        match ttl {
            Some(d) => t.ttl(d),
            None => t,
        }
    };
    Ok(match op {
        TaskOp::CallAsTask {
            name,
            arguments,
            ttl,
        } => client
            .call_tool_as_task(&name, arguments, call(ttl, o))
            .await?
            .to_json(),
        TaskOp::Get(id) => client.get_task_with(&id, o).await?.raw,
        TaskOp::Cancel(id) => client
            .cancel_task_with(&id, o)
            .await?
            .map_or_else(|| json!({}), |t| t.raw),
        TaskOp::Wait(id, mut w) => {
            w.call = o;
            client.wait_task(&id, w).await?.raw
        }
        TaskOp::Result(id) => json!(client.task_result_with(&id, o).await?),
        TaskOp::ToCompletion {
            name,
            arguments,
            ttl,
            mut wait,
        } => {
            wait.call = o.clone();
            json!(
                client
                    .call_tool_to_completion(&name, arguments, call(ttl, o), wait)
                    .await?
            )
        }
    })
}

/// Call a tool asking for a task (modern: the request opts into the tasks extension; legacy: `task: {ttl}`). The server may still answer at once.
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the outcome JSON (`{"kind": "result", ...}` or `{"kind": "task", ...}`) as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_INPUT_REQUIRED` (input no registered handler can give), `MCP_STATUS_PROTOCOL` (the server's error, or a malformed task: unknown status, no `taskId`), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param name               UTF-8 tool name.
/// @param name_len           length of `name`.
/// @param arguments_json     optional JSON object of arguments (NULL for none).
/// @param arguments_len      length of `arguments_json`.
/// @param task_options_json  optional task options JSON (`{"ttlMs": n}`; NULL for none).
/// @param task_options_len   length of `task_options_json`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_as_task(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    task_options_json: *const c_char,
    task_options_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        call_as_task_op(
            (name, name_len),
            (arguments_json, arguments_len),
            (task_options_json, task_options_len),
        )
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_call_tool_as_task`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param name               UTF-8 tool name.
/// @param name_len           length of `name`.
/// @param arguments_json     optional JSON object of arguments (NULL for none).
/// @param arguments_len      length of `arguments_json`.
/// @param task_options_json  optional task options JSON (`{"ttlMs": n}`; NULL for none).
/// @param task_options_len   length of `task_options_json`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the outcome JSON (`{"kind": "result", ...}` or `{"kind": "task", ...}`) on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INPUT_REQUIRED` (input no registered handler can give), `MCP_STATUS_PROTOCOL` (the server's error, or a malformed task: unknown status, no `taskId`), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_as_task_blocking(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    task_options_json: *const c_char,
    task_options_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        call_as_task_op(
            (name, name_len),
            (arguments_json, arguments_len),
            (task_options_json, task_options_len),
        )
    };
    blocking(
        "mcp_client_call_tool_as_task_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Read a task's current state (`tasks/get`).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the task JSON as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_PROTOCOL` (the server's error, or a malformed task), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_get_task(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Get) };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_get_task`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the task JSON on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_PROTOCOL` (the server's error, or a malformed task), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_get_task_blocking(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Get) };
    blocking(
        "mcp_client_get_task_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Ask the server to cancel a task (`tasks/cancel`; never `notifications/cancelled`).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the task JSON (legacy servers answer the task's state) or `{}` (modern acknowledgement) as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_PROTOCOL` (the server's error), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_cancel_task(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Cancel) };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_cancel_task`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the task JSON (legacy servers answer the task's state) or `{}` (modern acknowledgement) on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_PROTOCOL` (the server's error), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_cancel_task_blocking(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Cancel) };
    blocking(
        "mcp_client_cancel_task_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Wait until a task is terminal, polling at the server's pace (clamped to the wait options' bounds) or following pushes, and answering `input_required` with the registered handlers.
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the terminal task JSON (`status` completed, failed or cancelled) as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_TIMEOUT` (the wait options' `timeoutMs`; the task goes on), `MCP_STATUS_INPUT_REQUIRED` (no handler for what the task needs; the task is the error's data), `MCP_STATUS_INVALID_ARGUMENT` (wait options out of range), `MCP_STATUS_PROTOCOL`, `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param wait_options_json  optional wait options JSON (see the module docs; NULL for the defaults).
/// @param wait_options_len   length of `wait_options_json`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_wait_task(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    wait_options_json: *const c_char,
    wait_options_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        wait_op(
            (task_id, task_id_len),
            (wait_options_json, wait_options_len),
        )
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_wait_task`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param wait_options_json  optional wait options JSON (see the module docs; NULL for the defaults).
/// @param wait_options_len   length of `wait_options_json`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the terminal task JSON (`status` completed, failed or cancelled) on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_TIMEOUT` (the wait options' `timeoutMs`; the task goes on), `MCP_STATUS_INPUT_REQUIRED` (no handler for what the task needs; the task is the error's data), `MCP_STATUS_INVALID_ARGUMENT` (wait options out of range), `MCP_STATUS_PROTOCOL`, `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_wait_task_blocking(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    wait_options_json: *const c_char,
    wait_options_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        wait_op(
            (task_id, task_id_len),
            (wait_options_json, wait_options_len),
        )
    };
    blocking(
        "mcp_client_wait_task_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// The `CallToolResult` of a tool-call task (legacy `tasks/result`, which blocks until the task is terminal; modern the completed task's `result`).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `CallToolResult` JSON as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_PROTOCOL` (a failed task's error, a cancelled task), `MCP_STATUS_INVALID_ARGUMENT` (modern: the task is not terminal yet), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_task_result(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Result) };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_task_result`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param task_id            UTF-8 task identifier.
/// @param task_id_len        length of `task_id`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the `CallToolResult` JSON on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_PROTOCOL` (a failed task's error, a cancelled task), `MCP_STATUS_INVALID_ARGUMENT` (modern: the task is not terminal yet), `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_task_result_blocking(
    client: *const mcp_client_t,
    task_id: *const c_char,
    task_id_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe { task_id_op(task_id, task_id_len, TaskOp::Result) };
    blocking(
        "mcp_client_task_result_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}

/// Call a tool as a task and follow it to its result (a synchronous answer is returned as is).
///
/// Completion-callback form: returns at once; `callback` runs exactly once on a runtime thread
/// when this returned `MCP_STATUS_OK` (never otherwise), with the `CallToolResult` JSON as `result_json`, or with
/// the failure in `error`: `MCP_STATUS_PROTOCOL` (a failed task's JSON-RPC error, a cancelled or malformed task), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_INPUT_REQUIRED`, `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, ...
///
/// @param client             the client.
/// @param name               UTF-8 tool name.
/// @param name_len           length of `name`.
/// @param arguments_json     optional JSON object of arguments (NULL for none).
/// @param arguments_len      length of `arguments_json`.
/// @param task_options_json  optional task options JSON (`{"ttlMs": n}`; NULL for none).
/// @param task_options_len   length of `task_options_json`.
/// @param wait_options_json  optional wait options JSON (see the module docs; NULL for the defaults).
/// @param wait_options_len   length of `wait_options_json`.
/// @param options            optional call options (NULL for defaults); copied.
/// @param callback           the completion callback.
/// @param user_data          passed to `callback`; must stay valid until it ran.
/// @param error_out          optional detailed error when this function fails.
///
/// **Ownership**: borrows `client` and `options`; inputs are copied. `result_json` and `error`
/// are borrowed by the callback until it returns.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors** (returned, callback not invoked): `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_CLOSED`.
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_to_completion(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    task_options_json: *const c_char,
    task_options_len: usize,
    wait_options_json: *const c_char,
    wait_options_len: usize,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        to_completion_op(
            (name, name_len),
            (arguments_json, arguments_len),
            (task_options_json, task_options_len),
            (wait_options_json, wait_options_len),
        )
    };
    submit(client, options, callback, user_data, error_out, op)
}

/// Blocking twin of `mcp_client_call_tool_to_completion`: waits for the outcome on the calling thread.
///
/// @param client             the client.
/// @param name               UTF-8 tool name.
/// @param name_len           length of `name`.
/// @param arguments_json     optional JSON object of arguments (NULL for none).
/// @param arguments_len      length of `arguments_json`.
/// @param task_options_json  optional task options JSON (`{"ttlMs": n}`; NULL for none).
/// @param task_options_len   length of `task_options_json`.
/// @param wait_options_json  optional wait options JSON (see the module docs; NULL for the defaults).
/// @param wait_options_len   length of `wait_options_json`.
/// @param options            optional call options (NULL for defaults); a cancellation token
///                           in them may be cancelled from another thread.
/// @param result_out         receives the `CallToolResult` JSON on success (free with `mcp_string_free`).
/// @param error_out          optional detailed error on failure.
///
/// **Ownership**: borrows `client` and `options`; the result string is owned by the caller.
///
/// **Thread safety**: any non-runtime thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_PROTOCOL` (a failed task's JSON-RPC error, a cancelled or malformed task), `MCP_STATUS_TIMEOUT`, `MCP_STATUS_INPUT_REQUIRED`, `MCP_STATUS_CANCELLED`, `MCP_STATUS_CLOSED`, `MCP_STATUS_TRANSPORT`,
/// `MCP_STATUS_WOULD_DEADLOCK` (called inside a callback or on a runtime thread; nothing was
/// sent).
#[no_mangle]
pub extern "C" fn mcp_client_call_tool_to_completion_blocking(
    client: *const mcp_client_t,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_len: usize,
    task_options_json: *const c_char,
    task_options_len: usize,
    wait_options_json: *const c_char,
    wait_options_len: usize,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // SAFETY: every pointer pair is NULL or valid for its length (module contract).
    let op = || unsafe {
        to_completion_op(
            (name, name_len),
            (arguments_json, arguments_len),
            (task_options_json, task_options_len),
            (wait_options_json, wait_options_len),
        )
    };
    blocking(
        "mcp_client_call_tool_to_completion_blocking",
        client,
        options,
        result_out,
        error_out,
        op,
    )
}
