//! Changing a built server while it serves: `mcp_server_add`, `mcp_server_remove` and
//! `mcp_server_set_enabled`, the C face of core's `Server::add_*` (the JSON door `Server::add_json`, with the
//! builder's definition defaults), `Server::remove` and
//! `Server::set_enabled` (guide: docs/src/rust.md).
//!
//! A kind is named `"tool"`, `"prompt"`, `"resource"` or `"resourceTemplate"` (core's
//! `ItemKind::parse`); an item is keyed by its name, URI or URI template. Core announces every
//! change with a coalesced `notifications/*/list_changed`.
//!
//! The user data of an item is released when the last reference to its handler drops: at
//! once when the item is replaced or removed and no call is running, else after the last
//! in-flight call and its responder; or when the server goes. The handler is kept alive here
//! until the change has returned, so a finalizer never runs while core holds its registry
//! locks and may itself change the server.

use serde_json::{Map, Value};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpcore::protocol::DefinitionError;
use mcpcore::server::{BuildError, ItemKind};
use mcpcore::{Handler, Prompt, Resource, ResourceTemplate, Server, TaskSupport, Tool};

use crate::error::{mcp_error_t, FfiError};
use crate::guard::status_guard;
use crate::handle;
use crate::server::mcp_server_t;
use crate::status::mcp_status_t;
use crate::string::{json_object_arg, str_arg};
use crate::trampoline::{mcp_free_fn, mcp_handler_fn, CHandler, UserData};

/// The kind named by a C string, or a precise refusal.
///
/// # Safety
/// `kind` is NULL or valid for `kind_len` bytes.
unsafe fn kind_arg(kind: *const c_char, kind_len: usize) -> Result<ItemKind, FfiError> {
    // SAFETY: per the contract.
    let name = unsafe { str_arg(kind, kind_len, "kind") }?;
    ItemKind::parse(name).ok_or_else(|| {
        FfiError::invalid(format!(
            "unknown item kind {name:?}: expected \"tool\", \"prompt\", \"resource\" or \
             \"resourceTemplate\""
        ))
    })
}

/// Parse `def` as a definition of `kind` with the defaults core's Rust constructors give (a tool
/// without `inputSchema` takes no arguments), exactly as the builder's registrations do, and
/// add it. A malformed definition is `MCP_STATUS_INVALID_JSON`; a well-formed one core refuses
/// is `MCP_STATUS_INVALID_ARGUMENT`.
fn add_item(
    server: &Server,
    kind: ItemKind,
    def: Map<String, Value>,
    h: Arc<dyn Handler>,
) -> Result<(), FfiError> {
    let bad = |e: DefinitionError| {
        FfiError::new(mcp_status_t::InvalidJson, format!("definition_json: {e}"))
    };
    let added = match kind {
        ItemKind::Tool => {
            let mut def = def;
            let support = task_support(&mut def)?;
            let tool = Tool::from_json(Value::Object(def)).map_err(bad)?;
            server.add_task_tool(tool, support, h)
        }
        ItemKind::Prompt => {
            server.add_prompt(Prompt::from_json(Value::Object(def)).map_err(bad)?, h)
        }
        ItemKind::Resource => {
            server.add_resource(Resource::from_json(Value::Object(def)).map_err(bad)?, h)
        }
        ItemKind::ResourceTemplate => server.add_resource_template(
            ResourceTemplate::from_json(Value::Object(def)).map_err(bad)?,
            h,
        ),
        _ => return Err(FfiError::invalid("unsupported item kind")),
    };
    added.map(drop).map_err(refused)
}

/// Take the tool's task support out of its definition (TASK-L01): `taskSupport`, or the listed
/// form `execution.taskSupport`; absent means `forbidden` (core lists `execution` itself).
fn task_support(def: &mut Map<String, Value>) -> Result<TaskSupport, FfiError> {
    let value = def
        .remove("taskSupport")
        .or_else(|| def.get("execution")?.get("taskSupport").cloned());
    def.remove("execution");
    value.map_or(Ok(TaskSupport::Forbidden), |v| {
        serde_json::from_value(v).map_err(|_| {
            FfiError::new(
                mcp_status_t::InvalidJson,
                "definition_json: taskSupport must be \"forbidden\", \"optional\" or \"required\"",
            )
        })
    })
}

/// A change core refused; a kind not advertised names the C spelling of the remedy.
fn refused(e: BuildError) -> FfiError {
    match e {
        BuildError::NotAdvertised(_) => FfiError::invalid(format!(
            "{e} (options JSON \"dynamic\": true before mcp_server_builder_build)"
        )),
        other => FfiError::invalid(other.to_string()),
    }
}

/// Add a tool, prompt, resource or resource template to a server that may be serving, or
/// replace the item of that kind under the same name (URI, URI template) in place, enabled.
/// Clients are told with `notifications/{tools,prompts,resources}/list_changed` (legacy
/// sessions when `listChanged` is advertised, `subscriptions/listen` streams); changes made in
/// one go are coalesced into one notification per kind. A server built with nothing of a kind
/// does not advertise it and refuses to add one: build it with the options JSON
/// `"dynamic": true` to advertise every kind.
///
/// @param server          the server.
/// @param kind            `"tool"`, `"prompt"`, `"resource"` or `"resourceTemplate"` (UTF-8,
///                        `kind_len` bytes).
/// @param kind_len        length of `kind`.
/// @param definition_json the definition, as `mcp_server_builder_add_tool` (with
///                        `"taskSupport"`), `_add_prompt`, `_add_resource` or
///                        `_add_resource_template` take it.
/// @param definition_len  length of `definition_json`.
/// @param handler         the C handler, as for the builder call of that kind.
/// @param user_data       passed to every call of `handler`.
/// @param free_user_data  optional finalizer for `user_data`, called exactly once: after the
///                        item is replaced or removed (or the server freed) and its last
///                        in-flight call and outstanding responder are gone; before this
///                        returns when the item is refused. It runs on the thread that made
///                        that happen, never while the engine holds a lock, so it may call
///                        these functions itself.
/// @param error_out       optional detailed error.
///
/// **Ownership**: borrows `server`; copies `kind` and `definition_json`; takes ownership of
/// `user_data` in every case. The replaced item's user data is released as above: calls
/// already running finish with the handler they started with.
///
/// **Thread safety**: any thread, including inside callbacks (it never blocks on a call in
/// flight, and a handler may replace or remove its own item).
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT` (`server`, `kind`, `definition_json` or `handler`),
/// `MCP_STATUS_INVALID_UTF8`, `MCP_STATUS_INVALID_JSON` (unparsable, not an object, or not a
/// definition of that kind), `MCP_STATUS_INVALID_ARGUMENT` (an unknown kind; a kind the server
/// does not advertise, the message naming `"dynamic"`; what the builder call of that kind
/// refuses except a taken name; a task-capable tool on a server built without tasks: turn
/// them on at build with the options JSON `tasks`). A
/// refused item changes nothing.
#[no_mangle]
pub extern "C" fn mcp_server_add(
    server: *const mcp_server_t,
    kind: *const c_char,
    kind_len: usize,
    definition_json: *const c_char,
    definition_len: usize,
    handler: mcp_handler_fn,
    user_data: *mut c_void,
    free_user_data: mcp_free_fn,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    // Owned before anything can fail, so it is released on every failure path.
    let data = UserData::new(user_data, free_user_data);
    status_guard(error_out, move || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: kind is NULL or valid for kind_len bytes (contract).
        let kind = unsafe { kind_arg(kind, kind_len) }?;
        // SAFETY: definition_json is NULL or valid for definition_len bytes (contract).
        let def = unsafe { json_object_arg(definition_json, definition_len, "definition_json") }?;
        let h: Arc<dyn mcpcore::Handler> = Arc::new(CHandler::new(handler, data)?);
        // Keep a reference until core has returned: a refused handler is then released here,
        // outside core's registry locks, so its finalizer may change the server.
        let keep = h.clone();
        let outcome = add_item(&s.inner.server, kind, def, h);
        drop(keep);
        outcome
    })
}

/// Remove the item of `kind` under `key` (a tool or prompt name, a resource URI, a resource
/// template's URI template) and announce it (`list_changed`, coalesced as for
/// `mcp_server_add`). New calls get the unknown-tool (prompt, resource) error; calls already
/// running finish normally, and the item's user data is released after the last of them.
///
/// @param server       the server.
/// @param kind         `"tool"`, `"prompt"`, `"resource"` or `"resourceTemplate"`.
/// @param kind_len     length of `kind`.
/// @param key          UTF-8 name, URI or URI template.
/// @param key_len      length of `key`.
/// @param removed_out  optional; receives true when an item was removed, false when none was
///                     registered under `key` (written only on OK).
/// @param error_out    optional detailed error.
///
/// **Ownership**: borrows `server`; `kind` and `key` are copied.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`,
/// `MCP_STATUS_INVALID_ARGUMENT` (unknown kind). An unknown key is not an error.
#[no_mangle]
pub extern "C" fn mcp_server_remove(
    server: *const mcp_server_t,
    kind: *const c_char,
    kind_len: usize,
    key: *const c_char,
    key_len: usize,
    removed_out: *mut bool,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: kind is NULL or valid for kind_len bytes (contract).
        let kind = unsafe { kind_arg(kind, kind_len) }?;
        // SAFETY: key is NULL or valid for key_len bytes (contract).
        let key = unsafe { str_arg(key, key_len, "key") }?;
        let removed = s.inner.server.remove(kind, key);
        // SAFETY: removed_out is NULL or writable.
        unsafe { handle::write_opt(removed_out, removed) };
        Ok(())
    })
}

/// Enable or disable the item of `kind` under `key`. A disabled item is absent from its list,
/// and calling or reading it is the same error as for an unknown one; enabling it brings it
/// back in its place. A change of state is announced (`list_changed`, coalesced as for
/// `mcp_server_add`); setting the state it already has announces nothing.
///
/// @param server     the server.
/// @param kind       `"tool"`, `"prompt"`, `"resource"` or `"resourceTemplate"`.
/// @param kind_len   length of `kind`.
/// @param key        UTF-8 name, URI or URI template.
/// @param key_len    length of `key`.
/// @param enabled    true to enable, false to disable.
/// @param found_out  optional; receives false when no item is registered under `key` (nothing
///                   changed), true otherwise (written only on OK).
/// @param error_out  optional detailed error.
///
/// **Ownership**: borrows `server`; `kind` and `key` are copied.
///
/// **Thread safety**: any thread, including inside callbacks.
///
/// **Errors**: `MCP_STATUS_NULL_ARGUMENT`, `MCP_STATUS_INVALID_UTF8`,
/// `MCP_STATUS_INVALID_ARGUMENT` (unknown kind). An unknown key is not an error.
#[no_mangle]
pub extern "C" fn mcp_server_set_enabled(
    server: *const mcp_server_t,
    kind: *const c_char,
    kind_len: usize,
    key: *const c_char,
    key_len: usize,
    enabled: bool,
    found_out: *mut bool,
    error_out: *mut *mut mcp_error_t,
) -> mcp_status_t {
    status_guard(error_out, || {
        // SAFETY: server is NULL or live (contract).
        let s = unsafe { handle::borrow(server, "server") }?;
        // SAFETY: kind is NULL or valid for kind_len bytes (contract).
        let kind = unsafe { kind_arg(kind, kind_len) }?;
        // SAFETY: key is NULL or valid for key_len bytes (contract).
        let key = unsafe { str_arg(key, key_len, "key") }?;
        let found = s.inner.server.set_enabled(kind, key, enabled);
        // SAFETY: found_out is NULL or writable.
        unsafe { handle::write_opt(found_out, found) };
        Ok(())
    })
}

#[cfg(test)]
#[path = "server_dynamic_tests.rs"]
pub(crate) mod tests;
