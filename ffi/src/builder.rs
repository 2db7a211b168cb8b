//! `mcp_server_builder_t`: configuration and registration of C handlers.
//!
//! Registrations take `user_data` plus an optional `free_user_data`; ownership of `user_data`
//! passes to the engine in every case, so on any failure `free_user_data` has already run when
//! the function returns. Core parses every definition (so a C definition gets the defaults a
//! Rust one gets) and refuses a registration at once when it would fail the build: a name
//! already taken, empty or holding a control character, a schema that does not compile, an
//! unparsable URI template.

use serde_json::Value;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpcore::{Prompt, Resource, ResourceTemplate, ServerBuilder, TaskSupport, Tool};

use crate::error::{mcp_error_t, FfiError};
use crate::guard::{ffi_guard, status_guard};
use crate::handle;
use crate::runtime::mcp_runtime_t;
use crate::server::{mcp_server_t, ServerState};
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, str_arg};
use crate::trampoline::{mcp_free_fn, mcp_handler_fn, CHandler, UserData};

/// A server under construction. Single-threaded: use it from one thread at a time.
pub struct mcp_server_builder_t {
    builder: Option<ServerBuilder>,
}

impl mcp_server_builder_t {
    fn inner(&mut self) -> Result<&mut ServerBuilder, FfiError> {
        self.builder
            .as_mut()
            .ok_or_else(|| FfiError::invalid("builder already used"))
    }

    fn map(&mut self, f: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Result<(), FfiError> {
        let b = self
            .builder
            .take()
            .ok_or_else(|| FfiError::invalid("builder already used"))?;
        self.builder = Some(f(b));
        Ok(())
    }
}

/// Shared body of every registration: takes ownership of the user data first, so it is released
/// on every failure path.
fn register(
    builder: *mut mcp_server_builder_t,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
    f: impl FnOnce(&mut mcp_server_builder_t, Arc<dyn mcpcore::Handler>) -> Result<(), FfiError>,
) -> mcp_status_t {
    let data = UserData::new(user_data, free_user_data);
    status_guard(error_out, move || {
        // SAFETY: builder is NULL or a live builder used by this thread only (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        b.inner()?;
        let h: Arc<dyn mcpcore::Handler> = Arc::new(CHandler::new(handler, data)?);
        f(b, h)
    })
}

/// A definition core could not parse: the argument's JSON has the wrong shape.
fn bad_definition(what: &'static str) -> impl Fn(mcpcore::protocol::DefinitionError) -> FfiError {
    move |e| FfiError::new(mcp_status_t::InvalidJson, format!("{what}: {e}"))
}

/// The definition argument `what` as core parses it (`from_json`, so a C definition gets the
/// defaults a Rust one gets): not a JSON object, or not the definition's shape, is
/// `INVALID_JSON` naming the argument.
///
/// # Safety
/// `json` is NULL or valid for `len` bytes.
unsafe fn definition<D>(
    json: *const c_char,
    len: usize,
    what: &'static str,
    from_json: fn(Value) -> Result<D, mcpcore::protocol::DefinitionError>,
) -> Result<D, FfiError> {
    // SAFETY: forwarded contract.
    let def = unsafe { json_object_arg(json, len, what) }?;
    from_json(Value::Object(def)).map_err(bad_definition(what))
}

/// Take the tool's task support out of its definition (TASK-L01): `taskSupport`, or the listed
/// form `execution.taskSupport`; absent means `forbidden`. Core adds `execution` back when the
/// tool is listed, so the definition keeps no second copy.
fn task_support(def: &mut serde_json::Map<String, Value>) -> Result<TaskSupport, FfiError> {
    let value = def
        .remove("taskSupport")
        .or_else(|| def.get("execution")?.get("taskSupport").cloned());
    def.remove("execution");
    value.map_or(Ok(TaskSupport::Forbidden), |v| {
        serde_json::from_value(v).map_err(|_| {
            FfiError::new(
                mcp_status_t::InvalidJson,
                "tool_json: taskSupport must be \"forbidden\", \"optional\" or \"required\"",
            )
        })
    })
}

/// A registration core refused (the handler, and with it the user data, is already released).
fn refused(e: mcpcore::server::BuildError) -> FfiError {
    FfiError::invalid(e.to_string())
}

/// Start building a server.
///
/// @param name         UTF-8 server name (`serverInfo.name`), `name_len` bytes.
/// @param name_len     length of `name`.
/// @param version      UTF-8 server version (`serverInfo.version`).
/// @param version_len  length of `version`.
/// @param builder_out  receives the builder on success.
/// @param error_out    optional detailed error on failure.
///
/// **Ownership**: the caller owns the builder; it is consumed by `mcp_server_builder_build` or
/// released with `mcp_server_builder_free`. Strings are copied.
///
/// **Thread safety**: a builder is single-threaded.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`.
#[no_mangle]
pub extern "C" fn mcp_server_builder_new(
    name: *const c_char,
    name_len: usize,
    version: *const c_char,
    version_len: usize,
    builder_out: *mut *mut mcp_server_builder_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        handle::require_out(builder_out, "builder_out")?;
        // SAFETY: pointers are NULL or valid for their lengths (contract).
        let name = unsafe { str_arg(name, name_len, "name") }?;
        // SAFETY: as above.
        let version = unsafe { str_arg(version, version_len, "version") }?;
        let b = handle::into_raw(mcp_server_builder_t {
            builder: Some(ServerBuilder::new(name, version)),
        });
        // SAFETY: builder_out is non-NULL (checked) and writable.
        unsafe { builder_out.write(b) };
        Ok(())
    })
}

/// Set the server's instructions for the model.
///
/// @param builder   the builder.
/// @param text      UTF-8 instructions.
/// @param text_len  length of `text`.
/// @param error_out optional detailed error.
///
/// **Ownership**: borrows `builder`; `text` is copied.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`.
#[no_mangle]
pub extern "C" fn mcp_server_builder_instructions(
    builder: *mut mcp_server_builder_t,
    text: *const c_char,
    text_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: builder is NULL or live (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        // SAFETY: text is NULL or valid for text_len bytes.
        let text = unsafe { str_arg(text, text_len, "text") }?.to_owned();
        b.map(|sb| sb.instructions(text))
    })
}

/// Limit how many handler calls of this server run at once, across all its connections (0 =
/// unlimited, the default; the same as the `maxConcurrency` option). Calls over the limit wait
/// for a slot; they are not refused. With 1, C handlers never run concurrently, so they need
/// not be reentrant. A call holds its slot until its responder is consumed.
///
/// @param builder  the builder.
/// @param n        the limit.
///
/// **Ownership**: borrows `builder`.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_server_builder_max_concurrency(
    builder: *mut mcp_server_builder_t,
    n: usize,
) -> mcp_status_t {
    status_guard(std::ptr::null_mut(), || {
        // SAFETY: builder is NULL or live (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        b.map(|sb| sb.options(|o| o.max_concurrency = (n > 0).then_some(n)))
    })
}

/// Set options from a JSON object: core's `ServerOptions` shape (camelCase keys, durations in
/// milliseconds as `...Ms`), applied as a patch: keys not named keep their values, and the
/// nested `limits`, `requestState` and `tasks` objects are patches too. Every key, with its default in
/// brackets (as JSON):
/// - identity (`serverInfo`): `name`, `version` [as given to `mcp_server_builder_new`],
///   `title` [null], `description` [null], `websiteUrl` [null], `icons` [null];
/// - `instructions` [null]; `pageSize` [null: every list in one page];
/// - `dynamic` [false: a kind is advertised when one is registered before the build; true
///   advertises tools, prompts and resources, so `mcp_server_add` can add any kind later];
/// - capabilities: `logging` [true], `toolsListChanged` [true], `promptsListChanged` [true],
///   `resourcesListChanged` [true], `resourcesSubscribe` [true], `extensions` [{}];
/// - cache hints on modern results: `cacheTtlMs` [0], `cacheScope` ["private"; or "public"],
///   `legacyCacheHints` [false: none on legacy results];
/// - `maxConcurrency` [null: unlimited; 0 too]: handler calls running at once, the rest wait
///   (as `mcp_server_builder_max_concurrency`);
/// - `metrics` [false: true records operation metrics by the OpenTelemetry MCP conventions,
///   read with `mcp_server_metrics_text` or an HTTP listener's `metricsPath`],
///   `metricsMaxSeries` [1000: targets a peer names past it are counted as `_other`];
/// - `legacyInputShim` [true: `input_required` on legacy sessions becomes real server requests],
///   `stampServerInfo` [true: modern results carry `_meta` serverInfo];
/// - `limits`: `maxMessageBytes` [4194304], `maxJsonDepth` [64], `maxBatchLen` [100],
///   `maxInflight` [10000: per connection or session; past it a request gets -32603 "Server
///   busy"], `shutdownGraceMs` [2000: after stdin EOF or `mcp_server_shutdown`, requests in
///   flight get this long, then are cancelled], `peerRequestTimeoutMs` [600000: server to
///   client requests], `maxOutboundQueue` [1000: messages], `maxOutboundBytes` [8388608: stdio
///   stops reading input while this much output is unread], `maxMrtrRounds` [8],
///   `stdioIdleSpinUs` [50], `handlerTimeoutMs` [null: none; 0 too; past it the handler is
///   cancelled and the peer gets -32603 "Request timed out", CAN-04];
/// - `requestState` (modern `input_required` rounds, MRTR-06): `seal` [true], `ttlMs`
///   [300000], `audience` [null], `singleUse` [true: a replayed state gets -32602],
///   `replayCacheCapacity` [100000], `keys` [null: a random key of this process (refused with
///   `redis`: every worker needs the same configured ring, never kept in Redis); else
///   `[{"id": "k2", "key": "<base64 of 32 bytes>"}, ...]`, the first seals and opens, the rest
///   only open];
/// - `redis` [null: nothing shared; else `"redis://host:port/db"`: workers share listen
///   notifications, single use of states, tasks; while Redis is down work needing it gets
///   -32603, HTTP 503 with `Retry-After`], `redisPrefix` ["mcp:"], `redisConnectTimeoutMs`
///   [10000: the listen call fails when Redis is not reached by then],
///   `redisWaitMs` [2000: how long a request waits for a reconnect before the 503; 0: none];
/// - `tasks` [null: off until a tool with `taskSupport` is registered] (TASK-L01, TASK-M01):
///   `defaultTtlMs` [3600000], `maxTtlMs` [86400000], `pollIntervalMs` [1000], `maxTasks`
///   [10000], `listPageSize` [100], `maxListenTaskIds` [1000].
///
/// An unknown key or a wrong type is refused with `MCP_STATUS_INVALID_JSON`, a value out of
/// range (a bad `cacheScope`, a negative number, a `requestState` value) with
/// `MCP_STATUS_INVALID_ARGUMENT`; nothing is applied then. A zero limit or `pageSize` is
/// reported by `mcp_server_builder_build` (`MCP_STATUS_INVALID_ARGUMENT`).
///
/// @param builder    the builder.
/// @param json       UTF-8 JSON object.
/// @param json_len   length of `json`.
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `builder`; `json` is copied.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (unparsable, not an object, unknown key or wrong type), `MCP_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_server_builder_options_json(
    builder: *mut mcp_server_builder_t,
    json: *const c_char,
    json_len: usize,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: builder is NULL or live (contract).
        let b = unsafe { handle::borrow_mut(builder, "builder") }?;
        // SAFETY: json is NULL or valid for json_len bytes.
        let patch = Value::Object(unsafe { json_object_arg(json, json_len, "options") }?);
        let mut outcome = Ok(());
        b.map(|sb| sb.options(|o| outcome = mcpcore::options::apply_json(o, &patch)))?;
        outcome.map_err(|e| FfiError::options("options", &e))
    })
}

/// Register a tool.
///
/// @param builder         the builder.
/// @param tool_json       the tool definition as listed by `tools/list`: `{"name": ...,
///                        "description": ..., "inputSchema": {...}, "outputSchema": {...},
///                        "annotations": {...}}`; without `inputSchema` the tool takes no
///                        arguments (`{"type": "object", "additionalProperties": false}`, as
///                        core's `Tool::new`). Core validates arguments against `inputSchema`
///                        before the handler runs (arguments that fail it are answered with an
///                        `isError` result naming the problem, TOOL-07, and the handler is not
///                        called) and `structuredContent` against `outputSchema` after. MCP Apps
///                        (EXT-03): `"_meta": {"ui": {"resourceUri": "ui://...", "visibility":
///                        ["model", "app"]}}` links the tool to a UI resource, which must be
///                        registered (before or after) or `mcp_server_builder_build` fails.
///                        Tasks (TASK-L01): `"taskSupport": "optional"` or `"required"` (or
///                        `"execution": {"taskSupport": ...}`) makes the tool task-capable and
///                        turns tasks on (options JSON `tasks` sets their limits); default
///                        `"forbidden"`.
/// @param tool_len        length of `tool_json`.
/// @param handler         the C handler; its params are the tool's `arguments` object.
/// @param user_data       passed to every call of `handler`.
/// @param free_user_data  optional finalizer for `user_data`, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `builder`; copies `tool_json`; takes ownership of `user_data` in every
/// case (on failure `free_user_data` has run before this returns).
///
/// **Thread safety**: the builder's thread. `handler` will be called on runtime threads,
/// possibly concurrently.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`
/// (not a tool definition), `MCP_STATUS_INVALID_ARGUMENT` (a name already registered, empty or
/// with a control character such as NUL; a schema that does not compile, or an `x-mcp-header`
/// declaration HTTP-14 refuses). A refused tool is not registered; the builder stays usable.
#[no_mangle]
pub extern "C" fn mcp_server_builder_add_tool(
    builder: *mut mcp_server_builder_t,
    tool_json: *const c_char,
    tool_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| {
            // SAFETY: tool_json is NULL or valid for tool_len bytes (contract).
            let mut def = unsafe { json_object_arg(tool_json, tool_len, "tool_json") }?;
            let support = task_support(&mut def)?;
            let tool = Tool::from_json(Value::Object(def)).map_err(bad_definition("tool_json"))?;
            b.inner()?.add_task_tool(tool, support, h).map_err(refused)
        },
    )
}

/// Register a prompt.
///
/// @param builder         the builder.
/// @param prompt_json     the prompt definition: `{"name": ..., "description": ...,
///                        "arguments": [{"name": ..., "required": true}]}`. Core checks
///                        required arguments before the handler runs.
/// @param prompt_len      length of `prompt_json`.
/// @param handler         the C handler; its params are the `arguments` object.
/// @param user_data       passed to `handler`.
/// @param free_user_data  optional finalizer, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: as `mcp_server_builder_add_tool`.
///
/// **Thread safety**: as `mcp_server_builder_add_tool`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a name already registered, empty or with a control character).
#[no_mangle]
pub extern "C" fn mcp_server_builder_add_prompt(
    builder: *mut mcp_server_builder_t,
    prompt_json: *const c_char,
    prompt_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| {
            // SAFETY: prompt_json is NULL or valid for prompt_len bytes (contract).
            let p =
                unsafe { definition(prompt_json, prompt_len, "prompt_json", Prompt::from_json) }?;
            b.inner()?.add_prompt(p, h).map_err(refused)
        },
    )
}

/// Register a concrete resource.
///
/// @param builder         the builder.
/// @param resource_json   `{"uri": ..., "name": ..., "mimeType": ..., "description": ...}`.
///                        A `ui://` URI registers an MCP Apps UI resource (EXT-03): its
///                        `mimeType` is `text/html;profile=mcp-app` (set when absent), its
///                        optional `"_meta": {"ui": {"csp": ..., "permissions": ...,
///                        "domain": ..., "prefersBorder": ...}}` is listed and copied onto the
///                        read contents, and the server advertises `io.modelcontextprotocol/ui`.
/// @param resource_len    length of `resource_json`.
/// @param handler         the C handler; its params are `{}` and `mcp_request_name` is the URI.
///                        It answers a `ReadResourceResult` (`{"contents": [...]}`); for a
///                        `ui://` resource `{"contents": [{"text": "<!DOCTYPE html>..."}]}`
///                        suffices (core fills in the URI, MIME type and `_meta.ui`).
/// @param user_data       passed to `handler`.
/// @param free_user_data  optional finalizer, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: as `mcp_server_builder_add_tool`.
///
/// **Thread safety**: as `mcp_server_builder_add_tool`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a URI already registered, empty or with a control character; a
/// `ui://` URI with another `mimeType`, or `text/html;profile=mcp-app` on another scheme).
#[no_mangle]
pub extern "C" fn mcp_server_builder_add_resource(
    builder: *mut mcp_server_builder_t,
    resource_json: *const c_char,
    resource_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| {
            // SAFETY: resource_json is NULL or valid for resource_len bytes (contract).
            let r = unsafe {
                definition(
                    resource_json,
                    resource_len,
                    "resource_json",
                    Resource::from_json,
                )
            }?;
            b.inner()?.add_resource(r, h).map_err(refused)
        },
    )
}

/// Register a resource template (RFC 6570 level-1 `{var}` expressions).
///
/// @param builder         the builder.
/// @param template_json   `{"uriTemplate": "notes://{id}", "name": ..., "mimeType": ...}`.
/// @param template_len    length of `template_json`.
/// @param handler         the C handler; its params are the template variables
///                        (`{"id": "42"}`) and `mcp_request_name` is the URI.
/// @param user_data       passed to `handler`.
/// @param free_user_data  optional finalizer, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: as `mcp_server_builder_add_tool`.
///
/// **Thread safety**: as `mcp_server_builder_add_tool`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a template already registered, empty, with a control
/// character, or unparsable).
#[no_mangle]
pub extern "C" fn mcp_server_builder_add_resource_template(
    builder: *mut mcp_server_builder_t,
    template_json: *const c_char,
    template_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| {
            // SAFETY: template_json is NULL or valid for template_len bytes (contract).
            let t = unsafe {
                definition(
                    template_json,
                    template_len,
                    "template_json",
                    ResourceTemplate::from_json,
                )
            }?;
            b.inner()?.add_resource_template(t, h).map_err(refused)
        },
    )
}

/// Set the `completion/complete` handler (replaces an earlier one, whose user data is then
/// released when the server is built or the builder freed).
///
/// @param builder         the builder.
/// @param handler         the C handler; its params are the whole request params (`ref`,
///                        `argument`, `context`); it answers `{"completion": {"values": [...]}}`.
/// @param user_data       passed to `handler`.
/// @param free_user_data  optional finalizer, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: as `mcp_server_builder_add_tool`.
///
/// **Thread safety**: as `mcp_server_builder_add_tool`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`.
#[no_mangle]
pub extern "C" fn mcp_server_builder_set_completion(
    builder: *mut mcp_server_builder_t,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| b.map(|sb| sb.completion(h)),
    )
}

/// Register a custom JSON-RPC method (not one of the built-in MCP methods).
///
/// @param builder         the builder.
/// @param method          UTF-8 method name.
/// @param method_len      length of `method`.
/// @param handler         the C handler; its params are the whole request params object.
/// @param user_data       passed to `handler`.
/// @param free_user_data  optional finalizer, called exactly once.
/// @param error_out       optional detailed error.
///
/// **Ownership**: as `mcp_server_builder_add_tool`.
///
/// **Thread safety**: as `mcp_server_builder_add_tool`.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a built-in MCP method, a name already registered, empty or
/// with a control character such as NUL).
#[no_mangle]
pub extern "C" fn mcp_server_builder_add_method(
    builder: *mut mcp_server_builder_t,
    method: *const c_char,
    method_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    register(
        builder,
        handler,
        user_data,
        free_user_data,
        error_out,
        |b, h| {
            // SAFETY: method is NULL or valid for method_len bytes (contract).
            let name = unsafe { str_arg(method, method_len, "method") }?.to_owned();
            b.inner()?.add_method(name, h).map_err(refused)
        },
    )
}

/// Consumes the builder: validate everything and build a server that runs on `runtime`.
///
/// @param builder     the builder (consumed, even on error).
/// @param runtime     the runtime whose threads will run this server (borrowed; the server keeps
///                    it alive).
/// @param server_out  receives the server on success.
/// @param error_out   optional detailed error (e.g. which tool's schema was refused).
///
/// **Ownership**: consumes `builder` in every case; on failure, the user data of every
/// registration is released (finalizers run before this returns). The caller owns the server
/// and frees it with `mcp_server_free`.
///
/// **Thread safety**: the builder's thread; the server is thread-safe.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_ARGUMENT` (an out-of-range
/// option or limit; a tool whose `_meta.ui.resourceUri` names no registered `ui://` resource).
#[no_mangle]
pub extern "C" fn mcp_server_builder_build(
    builder: *mut mcp_server_builder_t,
    runtime: *const mcp_runtime_t,
    server_out: *mut *mut mcp_server_t,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // Taken before anything can fail, so the builder is consumed on every path.
    // SAFETY: builder is NULL or owned by the caller, consumed here (contract).
    let b = unsafe { handle::take(builder) };
    status_guard(error_out, move || {
        let b = b.ok_or_else(|| FfiError::null("builder"))?;
        // SAFETY: runtime is NULL or live (contract).
        let rt = unsafe { handle::borrow(runtime, "runtime") }?;
        handle::require_out(server_out, "server_out")?;
        let sb = b
            .builder
            .ok_or_else(|| FfiError::invalid("builder already used"))?;
        let server = sb.build().map_err(FfiError::from)?;
        let s = handle::into_raw(mcp_server_t {
            inner: Arc::new(ServerState::new(server, rt.inner.clone())),
        });
        // SAFETY: server_out is non-NULL (checked) and writable.
        unsafe { server_out.write(s) };
        Ok(())
    })
}

/// Release a builder that was not built. NULL is a no-op. The user data of every registration is
/// released (finalizers run before this returns).
///
/// @param builder  the builder.
///
/// **Ownership**: consumes `builder`.
///
/// **Thread safety**: the builder's thread.
///
/// **Errors**: none.
#[no_mangle]
pub extern "C" fn mcp_server_builder_free(builder: *mut mcp_server_builder_t) {
    ffi_guard((), || {
        // SAFETY: builder is NULL or owned (contract).
        drop(unsafe { handle::take(builder) });
    });
}
