//! The task operations the entry points of [`crate::client_tasks`] and their `..._blocking`
//! twins run, built from the C arguments (each a `(pointer, length)` pair) in one place so that
//! the two forms validate alike (REQUIREMENTS TASK-L01, TASK-M01…M04): the task options
//! (`{"ttlMs": n}`) and core's wait options ([`TaskWaitOptions`]).
//!
//! Pointer contract of every function here: each `(const char *, size_t)` pair is NULL or valid
//! for that many bytes.

use serde_json::Value;
use std::ffi::c_char;
use std::time::Duration;

use mcpcore::client::TaskWaitOptions;
use mcpcore::options::apply_json;

use crate::client_calls::{args, Op};
use crate::client_tasks::TaskOp;
use crate::error::FfiError;
use crate::status::mcp_status_t;

/// The task options JSON (`{"ttlMs": n}`, NULL for none).
///
/// # Safety
/// `p` is NULL or valid for `len` bytes.
unsafe fn ttl_arg(p: *const c_char, len: usize) -> Result<Option<Duration>, FfiError> {
    // SAFETY: forwarded contract.
    let v = unsafe { args::opt_object(p, len, "task_options_json") }?;
    let Value::Object(m) = v else {
        return Ok(None);
    };
    if let Some(k) = m.keys().find(|k| k.as_str() != "ttlMs") {
        return Err(FfiError::new(
            mcp_status_t::InvalidJson,
            format!("task_options_json: unknown key {k:?}"),
        ));
    }
    match m.get("ttlMs") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(|ms| Some(Duration::from_millis(ms)))
            .ok_or_else(|| {
                FfiError::new(
                    mcp_status_t::InvalidJson,
                    "task_options_json: ttlMs must be a non-negative integer",
                )
            }),
    }
}

/// The wait options JSON (core's shape, NULL for the defaults).
///
/// # Safety
/// `p` is NULL or valid for `len` bytes.
unsafe fn wait_arg(p: *const c_char, len: usize) -> Result<TaskWaitOptions, FfiError> {
    // SAFETY: forwarded contract.
    let v = unsafe { args::opt_object(p, len, "wait_options_json") }?;
    let mut w = TaskWaitOptions::new();
    if v.is_object() {
        apply_json(&mut w, &v).map_err(|e| FfiError::options("wait_options_json", &e))?;
    }
    Ok(w)
}

/// A task operation on one task: its identifier.
///
/// # Safety
/// The module contract.
pub(crate) unsafe fn task_id_op(
    task_id: *const c_char,
    task_id_len: usize,
    make: fn(String) -> TaskOp,
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    let id = unsafe { args::string(task_id, task_id_len, "task_id") }?;
    Ok(Op::Task(make(id)))
}

/// `mcp_client_wait_task`: the identifier and the wait options.
///
/// # Safety
/// The module contract.
pub(crate) unsafe fn wait_op(
    (task_id, task_id_len): (*const c_char, usize),
    (wait_json, wait_len): (*const c_char, usize),
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    let id = unsafe { args::string(task_id, task_id_len, "task_id") }?;
    // SAFETY: forwarded contract.
    let wait = unsafe { wait_arg(wait_json, wait_len) }?;
    Ok(Op::Task(TaskOp::Wait(id, wait)))
}

/// A tool call as a task: name, arguments and the task options' TTL, read in that order.
type TaskCall = (String, Value, Option<Duration>);

/// # Safety
/// The module contract.
unsafe fn task_call(
    (name, name_len): (*const c_char, usize),
    (arguments_json, arguments_len): (*const c_char, usize),
    (task_json, task_len): (*const c_char, usize),
) -> Result<TaskCall, FfiError> {
    // SAFETY: forwarded contract.
    let name = unsafe { args::string(name, name_len, "name") }?;
    // SAFETY: forwarded contract.
    let arguments = unsafe { args::opt_object(arguments_json, arguments_len, "arguments_json") }?;
    // SAFETY: forwarded contract.
    let ttl = unsafe { ttl_arg(task_json, task_len) }?;
    Ok((name, arguments, ttl))
}

/// `mcp_client_call_tool_as_task`.
///
/// # Safety
/// The module contract.
pub(crate) unsafe fn call_as_task_op(
    name: (*const c_char, usize),
    arguments: (*const c_char, usize),
    task_options: (*const c_char, usize),
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    let (name, arguments, ttl) = unsafe { task_call(name, arguments, task_options) }?;
    Ok(Op::Task(TaskOp::CallAsTask {
        name,
        arguments,
        ttl,
    }))
}

/// `mcp_client_call_tool_to_completion`: a task call, then the wait options.
///
/// # Safety
/// The module contract.
pub(crate) unsafe fn to_completion_op(
    name: (*const c_char, usize),
    arguments: (*const c_char, usize),
    task_options: (*const c_char, usize),
    (wait_json, wait_len): (*const c_char, usize),
) -> Result<Op, FfiError> {
    // SAFETY: forwarded contract.
    let (name, arguments, ttl) = unsafe { task_call(name, arguments, task_options) }?;
    // SAFETY: forwarded contract.
    let wait = unsafe { wait_arg(wait_json, wait_len) }?;
    Ok(Op::Task(TaskOp::ToCompletion {
        name,
        arguments,
        ttl,
        wait,
    }))
}
