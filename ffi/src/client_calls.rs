//! Client calls from C: per-call options (timeout, cancellation token, progress callback, log
//! level, `_meta`), and every operation in two forms, a completion-callback call and a
//! `..._blocking` twin (REQUIREMENTS PAGE-01, TOOL-01, TOOL-06, PRM-01, RES-01, CMP-01, CAN-01,
//! CAN-04, MRTR-01…05). The call options JSON is core's shape ([`mcpcore::options`]).
//!
//! Completion rule: when a callback call returns `MCP_STATUS_OK`, its callback is invoked exactly
//! once on a runtime thread, with the result, or with the failure (`MCP_STATUS_CANCELLED`,
//! `MCP_STATUS_TIMEOUT`, `MCP_STATUS_CLOSED`, a JSON-RPC error, ...), including when the runtime
//! shuts down first (then `MCP_STATUS_CLOSED`, on the thread that shuts it down). When it
//! returns anything else, the callback is never invoked.

use serde_json::{json, Value};
use std::ffi::{c_char, c_void};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use mcpcore::client::{CallOptions, Client, ListKind, ProgressFn};
use mcpcore::options::apply_json;
use mcpcore::LoggingLevel;

use crate::client::mcp_client_t;
use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, opt_json_arg, opt_str_arg, owned_json, str_arg};
use crate::trampoline::{
    mcp_completion_fn, mcp_free_fn, mcp_progress_fn, progress_closure, Completion, UserData,
};

// ---- cancellation tokens ----

/// A cancellation token: attach it to calls with `mcp_call_options_cancel_token`, then
/// `mcp_cancel_token_cancel` ends every pending call carrying it with `MCP_STATUS_CANCELLED` (the
/// server is told with `notifications/cancelled` where the era has it). Thread-safe.
pub struct mcp_cancel_token_t {
    token: CancellationToken,
}

/// Create a cancellation token.
///
/// @param token_out  receives the token on success.
/// @param error_out  optional detailed error.
///
/// **Ownership**: the caller owns the token and frees it with `mcp_cancel_token_free`. Calls
/// and call options that carry it keep their own reference, so it may be freed at any time.
///
/// **Thread safety**: the token is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_new(
    token_out: *mut *mut mcp_cancel_token_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        handle::require_out(token_out, "token_out")?;
        let t = handle::into_raw(mcp_cancel_token_t {
            token: CancellationToken::new(),
        });
        // SAFETY: token_out is non-NULL (checked) and writable.
        unsafe { token_out.write(t) };
        Ok(())
    })
}

/// Cancel: every pending call carrying this token ends with `MCP_STATUS_CANCELLED`, and calls
/// started with it later end that way at once. Idempotent; non-blocking. NULL is a no-op.
///
/// @param token  the token.
///
/// **Ownership**: borrows `token`.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_cancel(token: *const mcp_cancel_token_t) {
    ffi_guard((), || {
        // SAFETY: token is NULL or live (contract).
        if let Ok(t) = unsafe { handle::borrow(token, "token") } {
            t.token.cancel();
        }
    });
}

/// True once the token was cancelled (false for NULL).
///
/// @param token  the token.
///
/// **Ownership**: borrows `token`.
///
/// **Thread safety**: any thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_is_cancelled(token: *const mcp_cancel_token_t) -> bool {
    ffi_guard(false, || {
        // SAFETY: token is NULL or live (contract).
        unsafe { handle::borrow(token, "token") }.is_ok_and(|t| t.token.is_cancelled())
    })
}

/// Free a token. NULL is a no-op. Pending calls carrying it are not affected.
///
/// @param token  the token.
///
/// **Ownership**: consumes `token`.
///
/// **Thread safety**: any thread; no other call on `token` may be in flight.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_cancel_token_free(token: *mut mcp_cancel_token_t) {
    ffi_guard((), || {
        // SAFETY: token is NULL or owned (contract).
        drop(unsafe { handle::take(token) });
    });
}

// ---- call options ----

/// Options of one or more calls. Built on one thread, then read (never changed) by the calls it
/// is passed to: each call copies what it needs, so options may be freed once the call
/// function returned.
pub struct mcp_call_options_t {
    opts: CallOptions,
}

/// Create call options with the defaults (client timeout, no token, no progress callback).
///
/// @param options_out  receives the options on success.
/// @param error_out    optional detailed error.
///
/// **Ownership**: the caller owns the options and frees them with `mcp_call_options_free`.
///
/// **Thread safety**: setters on one thread at a time; calls may read the options from any
/// thread at once.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_call_options_new(
    options_out: *mut *mut mcp_call_options_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        handle::require_out(options_out, "options_out")?;
        let o = handle::into_raw(mcp_call_options_t {
            opts: CallOptions::new(),
        });
        // SAFETY: options_out is non-NULL (checked) and writable.
        unsafe { options_out.write(o) };
        Ok(())
    })
}

fn with_options(
    options: *mut mcp_call_options_t,
    error_out: *mut *mut mcp_error_t,
    f: impl FnOnce(&mut CallOptions) -> Result<(), FfiError>,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: options is NULL or live and used by this thread only while set (contract).
        let o = unsafe { handle::borrow_mut(options, "options") }?;
        f(&mut o.opts)
    })
}

/// Per-call timeout (0 = the client's default). On expiry the call ends with
/// `MCP_STATUS_TIMEOUT` and the request is cancelled on the wire.
///
/// @param options     the options.
/// @param timeout_ms  milliseconds.
///
/// **Ownership**: borrows `options`.
///
/// **Thread safety**: the options' thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_call_options_timeout_ms(
    options: *mut mcp_call_options_t,
    timeout_ms: u64,
) -> mcp_status_t {
    with_options(options, std::ptr::null_mut(), |o| {
        o.timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
        Ok(())
    })
}

/// Attach a cancellation token (NULL detaches). Calls made with these options end with
/// `MCP_STATUS_CANCELLED` once the token is cancelled.
///
/// @param options  the options.
/// @param token    the token (borrowed; the options keep their own reference), or NULL.
///
/// **Ownership**: borrows both.
///
/// **Thread safety**: the options' thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`options`).
#[no_mangle]
pub extern "C" fn mcp_call_options_cancel_token(
    options: *mut mcp_call_options_t,
    token: *const mcp_cancel_token_t,
) -> mcp_status_t {
    with_options(options, std::ptr::null_mut(), |o| {
        // SAFETY: token is NULL or live (contract).
        o.cancel = unsafe { token.as_ref() }.map(|t| t.token.clone());
        Ok(())
    })
}

/// Receive `notifications/progress` for calls made with these options (a `progressToken` is
/// added to each request). `callback` NULL removes it.
///
/// @param options         the options.
/// @param callback        the progress callback (see `mcp_progress_fn`), or NULL.
/// @param user_data       passed to `callback`.
/// @param free_user_data  optional finalizer, called once the options and every call made with
///                        them are gone.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `options`; takes ownership of `user_data` in every case.
///
/// **Thread safety**: the options' thread; `callback` runs on runtime threads, possibly for
/// several calls at once.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`options`).
#[no_mangle]
pub extern "C" fn mcp_call_options_on_progress(
    options: *mut mcp_call_options_t,
    callback: mcp_progress_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    with_options(options, error_out, move |o| {
        o.on_progress = match callback {
            None => {
                drop(data);
                None
            }
            Some(_) => Some(progress_closure(callback, data)? as ProgressFn),
        };
        Ok(())
    })
}

/// Per-request log level on modern connections (`io.modelcontextprotocol/logLevel`; overrides
/// the client default). Ignored on legacy connections (use `logging/setLevel` there).
///
/// @param options    the options.
/// @param level      one of `mcp_log_level_t` (passed as `int`).
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `options`.
///
/// **Thread safety**: the options' thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_ARGUMENT` (unknown level).
#[no_mangle]
pub extern "C" fn mcp_call_options_log_level(
    options: *mut mcp_call_options_t,
    level: i32,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    with_options(options, error_out, |o| {
        o.log_level = Some(crate::responder::log_level(level)?);
        Ok(())
    })
}

/// Extra `_meta` entries for every request made with these options (a JSON object; replaces
/// earlier entries).
///
/// @param options    the options.
/// @param json       UTF-8 JSON object.
/// @param json_len   length of `json`.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `options`; `json` is copied.
///
/// **Thread safety**: the options' thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`.
#[no_mangle]
pub extern "C" fn mcp_call_options_meta_json(
    options: *mut mcp_call_options_t,
    json: *const c_char,
    json_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    with_options(options, error_out, |o| {
        // SAFETY: json is NULL or valid for json_len bytes.
        o.meta = unsafe { json_object_arg(json, json_len, "meta_json") }?;
        Ok(())
    })
}

/// Set call options from a JSON object (core's options shape: camelCase, unknown keys refused,
/// keys not named keep their values). Keys: `timeoutMs` (0 or null = the client's default),
/// `logLevel` (`"debug"` … `"emergency"`; modern connections), `meta` (extra `_meta` entries,
/// an object, replacing earlier ones), `noCache` (bypass the client's cache). The cancellation
/// token and the progress callback have no JSON form and are kept.
///
/// @param options    the options.
/// @param json       UTF-8 JSON object.
/// @param json_len   length of `json`.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `options`; `json` is copied.
///
/// **Thread safety**: the options' thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (unparsable, not an object, unknown key, wrong type), `MCP_STATUS_INVALID_ARGUMENT`
/// (unknown log level, a negative timeout). Nothing is changed on failure.
#[no_mangle]
pub extern "C" fn mcp_call_options_json(
    options: *mut mcp_call_options_t,
    json: *const c_char,
    json_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    with_options(options, error_out, |o| {
        // SAFETY: json is NULL or valid for json_len bytes.
        let obj = unsafe { json_object_arg(json, json_len, "options") }?;
        apply_json(o, &Value::Object(obj)).map_err(|e| FfiError::options("options", &e))
    })
}

/// Free call options. NULL is a no-op. Calls already made with them are not affected.
///
/// @param options  the options.
///
/// **Ownership**: consumes `options`.
///
/// **Thread safety**: any thread; no call using `options` may be in its call function.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_call_options_free(options: *mut mcp_call_options_t) {
    ffi_guard((), || {
        // SAFETY: options is NULL or owned (contract).
        drop(unsafe { handle::take(options) });
    });
}

// ---- operations ----

/// Which list a list call walks (`MCP_LIST_KIND_*`; functions take it as `int`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum mcp_list_kind {
    /// `tools/list` (result key `tools`).
    Tools = 0,
    /// `prompts/list` (result key `prompts`).
    Prompts = 1,
    /// `resources/list` (result key `resources`).
    Resources = 2,
    /// `resources/templates/list` (result key `resourceTemplates`).
    ResourceTemplates = 3,
}

/// The list-kind type (`MCP_LIST_KIND_*` values of `mcp_list_kind`).
pub type mcp_list_kind_t = mcp_list_kind;

fn list_kind(v: i32) -> Result<mcp_list_kind, FfiError> {
    Ok(match v {
        0 => mcp_list_kind::Tools,
        1 => mcp_list_kind::Prompts,
        2 => mcp_list_kind::Resources,
        3 => mcp_list_kind::ResourceTemplates,
        _ => return Err(FfiError::invalid(format!("unknown list kind {v}"))),
    })
}

/// One operation, validated and owned, ready to run on the runtime.
pub(crate) enum Op {
    Request(String, Value),
    ListPage(mcp_list_kind, Option<String>),
    ListAll(mcp_list_kind),
    CallTool(String, Value),
    GetPrompt(String, Value),
    ReadResource(String),
    Complete {
        reference: Value,
        name: String,
        value: String,
        context: Option<Value>,
    },
    SetLogLevel(LoggingLevel),
    /// A task operation ([`crate::client_tasks`]).
    Task(crate::client_tasks::TaskOp),
}

/// The C list kind as core's.
fn core_kind(k: mcp_list_kind) -> ListKind {
    match k {
        mcp_list_kind::Tools => ListKind::Tools,
        mcp_list_kind::Prompts => ListKind::Prompts,
        mcp_list_kind::Resources => ListKind::Resources,
        mcp_list_kind::ResourceTemplates => ListKind::ResourceTemplates,
    }
}

async fn run(client: Client, op: Op, o: CallOptions) -> Result<Value, FfiError> {
    Ok(match op {
        Op::Request(method, params) => client.request_with(&method, params, o).await?,
        Op::ListPage(kind, cursor) => {
            client
                .list_page_json(core_kind(kind), cursor.as_deref(), o)
                .await?
        }
        Op::ListAll(kind) => client.list_all_json(core_kind(kind), o).await?,
        Op::CallTool(name, args) => json!(client.call_tool_with(&name, args, o).await?),
        Op::GetPrompt(name, args) => client.get_prompt_with(&name, args, o).await?.raw,
        Op::ReadResource(uri) => client.read_resource_with(&uri, o).await?.raw,
        Op::Complete {
            reference,
            name,
            value,
            context,
        } => {
            client
                .complete_with(reference, &name, &value, context, o)
                .await?
                .raw
        }
        Op::SetLogLevel(level) => {
            client.set_log_level_with(level, o).await?;
            json!({})
        }
        Op::Task(t) => crate::client_tasks::run(client, t, o).await?,
    })
}

/// A completion that is invoked exactly once: by [`Once::complete`], or with
/// `MCP_STATUS_CLOSED` when the task carrying it is dropped unfinished (runtime shutdown).
struct Once(Option<Completion>);

impl Once {
    fn complete(mut self, outcome: Result<Value, FfiError>) {
        if let Some(c) = self.0.take() {
            c.complete(outcome);
        }
    }
}

impl Drop for Once {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.complete(Err(FfiError::new(
                mcp_status_t::Closed,
                "the runtime shut down before the call finished",
            )));
        }
    }
}

fn call_options(options: *const mcp_call_options_t) -> CallOptions {
    // SAFETY: options is NULL or live and not being changed during the call (contract).
    unsafe { options.as_ref() }.map_or_else(CallOptions::new, |o| o.opts.clone())
}

/// Shared body of every callback call.
pub(crate) fn submit(
    client: *const mcp_client_t,
    options: *const mcp_call_options_t,
    callback: mcp_completion_fn,
    user_data: *mut c_void,
    error_out: *mut *mut mcp_error_t,
    op: impl FnOnce() -> Result<Op, FfiError>,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: client is NULL or live (contract).
        let c = unsafe { handle::borrow(client, "client") }?;
        let completion = Completion::new(callback, user_data)?;
        let op = op()?;
        if c.client.is_closed() {
            return Err(FfiError::new(mcp_status_t::Closed, "the client is closed"));
        }
        let opts = call_options(options);
        let once = Once(Some(completion));
        let cl = c.client.clone();
        c.runtime.spawn(async move {
            let r = run(cl, op, opts).await;
            once.complete(r);
        });
        Ok(())
    })
}

/// Shared body of every blocking call.
pub(crate) fn blocking(
    what: &str,
    client: *const mcp_client_t,
    options: *const mcp_call_options_t,
    result_out: *mut *mut c_char,
    error_out: *mut *mut mcp_error_t,
    op: impl FnOnce() -> Result<Op, FfiError>,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: client is NULL or live (contract).
        let c = unsafe { handle::borrow(client, "client") }?;
        handle::require_out(result_out, "result_out")?;
        let op = op()?;
        crate::guard::forbid_runtime_thread(what)?;
        let v = c
            .runtime
            .run(what, run(c.client.clone(), op, call_options(options)))??;
        // SAFETY: result_out is non-NULL (checked) and writable.
        unsafe { result_out.write(owned_json(&v)) };
        Ok(())
    })
}

/// Validated inputs, shared by the operation entry points in `client_ops`.
pub(crate) mod args {
    use super::*;

    /// A required UTF-8 string, owned.
    ///
    /// # Safety
    /// `p` is NULL or valid for `len` bytes.
    pub(crate) unsafe fn string(
        p: *const c_char,
        len: usize,
        what: &str,
    ) -> Result<String, FfiError> {
        // SAFETY: forwarded contract.
        Ok(unsafe { str_arg(p, len, what) }?.to_owned())
    }

    /// An optional UTF-8 string, owned.
    ///
    /// # Safety
    /// `p` is NULL or valid for `len` bytes.
    pub(crate) unsafe fn opt_string(
        p: *const c_char,
        len: usize,
        what: &str,
    ) -> Result<Option<String>, FfiError> {
        // SAFETY: forwarded contract.
        Ok(unsafe { opt_str_arg(p, len, what) }?.map(str::to_owned))
    }

    /// An optional JSON object (NULL → `null`, meaning "none").
    ///
    /// # Safety
    /// `p` is NULL or valid for `len` bytes.
    pub(crate) unsafe fn opt_object(
        p: *const c_char,
        len: usize,
        what: &str,
    ) -> Result<Value, FfiError> {
        // SAFETY: forwarded contract.
        match unsafe { opt_json_arg(p, len, what) }? {
            None => Ok(Value::Null),
            Some(v @ Value::Object(_)) => Ok(v),
            Some(_) => Err(FfiError::new(
                mcp_status_t::InvalidJson,
                format!("{what} must be a JSON object"),
            )),
        }
    }

    /// The operation `make` builds from a required UTF-8 name and an optional JSON object
    /// (NULL → `null`), read in that order: a request (method, params), a tool call and a
    /// prompt get (name, arguments).
    ///
    /// # Safety
    /// Each pointer is NULL or valid for its length.
    pub(crate) unsafe fn named(
        name: *const c_char,
        name_len: usize,
        name_what: &str,
        object: *const c_char,
        object_len: usize,
        object_what: &str,
        make: fn(String, Value) -> Op,
    ) -> Result<Op, FfiError> {
        // SAFETY: forwarded contract.
        let name = unsafe { string(name, name_len, name_what) }?;
        // SAFETY: forwarded contract.
        let object = unsafe { opt_object(object, object_len, object_what) }?;
        Ok(make(name, object))
    }

    /// The operation `make` builds from a required UTF-8 `name` and optional `arguments_json`:
    /// a tool call and a prompt get.
    ///
    /// # Safety
    /// Each pointer is NULL or valid for its length.
    pub(crate) unsafe fn named_arguments(
        name: *const c_char,
        name_len: usize,
        arguments_json: *const c_char,
        arguments_len: usize,
        make: fn(String, Value) -> Op,
    ) -> Result<Op, FfiError> {
        // SAFETY: forwarded contract.
        unsafe {
            named(
                name,
                name_len,
                "name",
                arguments_json,
                arguments_len,
                "arguments_json",
                make,
            )
        }
    }

    pub(crate) fn kind(v: i32) -> Result<mcp_list_kind, FfiError> {
        list_kind(v)
    }
}
