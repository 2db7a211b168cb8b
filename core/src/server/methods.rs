//! Built-in methods: lifecycle, discovery, tools, prompts, resources, completion, logging
//! (REQUIREMENTS LC-*, DISC-01, TOOL-*, PRM-*, RES-*, CMP-01, LOG-*, PAGE-01).

use serde_json::{json, Map, Value};

use super::ask;
use super::context::RequestContext;
use super::era::KEY_SERVER_INFO;
use super::handler::Outcome;
use super::pagination;
use super::registry::Registry;
use super::session::{lock, Session};
use super::ItemKind;
use crate::error::{codes, ErrorObject};
use crate::protocol::version::{is_legacy_supported, LATEST_LEGACY, MODERN_VERSIONS};
use crate::protocol::{Era, LoggingLevel};

/// Methods the engine implements itself (custom registrations may not shadow them).
pub(crate) const BUILT_IN: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "tasks/list",
];

pub(crate) type MethodResult = Result<Outcome, ErrorObject>;

fn str_param<'a>(
    params: Option<&'a Map<String, Value>>,
    key: &str,
) -> Result<&'a str, ErrorObject> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "{key} must be a string"
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "missing required parameter: {key}"
        ))),
    }
}

/// `initialize` (LC-01, LC-02; seeds: required fields, duplicate refusal).
pub(crate) fn initialize(
    session: &Session,
    params: Option<&Map<String, Value>>,
) -> Result<Value, ErrorObject> {
    let p = params.cloned().unwrap_or_default();
    let mut missing = Vec::new();
    if !p.get("protocolVersion").is_some_and(Value::is_string) {
        missing.push("protocolVersion");
    }
    if !p.get("capabilities").is_some_and(Value::is_object) {
        missing.push("capabilities");
    }
    let info_ok = p
        .get("clientInfo")
        .is_some_and(|i| i.get("name").is_some_and(Value::is_string));
    if !info_ok {
        missing.push("clientInfo");
    }
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "initialize requires {}",
            missing.join(", ")
        )));
    }
    let requested = p
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or(LATEST_LEGACY);
    let negotiated = if is_legacy_supported(requested) {
        requested
    } else {
        LATEST_LEGACY
    };
    {
        let mut st = lock(&session.legacy);
        if session.is_legacy_initialized() {
            return Err(ErrorObject::invalid_request("server already initialized"));
        }
        st.protocol_version = Some(negotiated.to_owned());
        st.client_capabilities = p.get("capabilities").cloned().unwrap_or_else(|| json!({}));
        st.client_info = p
            .get("clientInfo")
            .filter(|v| !v.is_null())
            .map(|v| v.to_string().into_boxed_str());
        session.mark_initialized();
    }
    session.lock_era(Era::Legacy);
    let inner = &session.server.inner;
    let mut caps = inner.capabilities.clone();
    if inner.tasks.is_some() {
        // TASK-L01: the 2025-11-25 experimental capability (discover never shows it).
        caps["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    let mut result = json!({
        "protocolVersion": negotiated,
        "capabilities": caps,
        "serverInfo": inner.options.server_info,
    });
    if let Some(i) = &inner.options.instructions {
        result["instructions"] = json!(i);
    }
    Ok(result)
}

/// `server/discover` (DISC-01).
pub(crate) fn discover(session: &Session) -> Value {
    let inner = &session.server.inner;
    // Every transport carries listen streams (HTTP as their own response, stdio in the
    // connection's flow), so the listChanged/subscribe promises stand everywhere.
    let mut result = json!({
        "supportedVersions": MODERN_VERSIONS,
        "capabilities": inner.capabilities,
        "_meta": {KEY_SERVER_INFO: inner.options.server_info},
    });
    if let Some(i) = &inner.options.instructions {
        result["instructions"] = json!(i);
    }
    result
}

/// One page of a list method: the items `s`'s client may see, each with its registry key.
fn list<'a>(
    s: &Session,
    reg: &Registry,
    kind: ItemKind,
    defs: impl Iterator<Item = (&'a str, Value)>,
    key: &str,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    let who = s.principal().map(|p| &**p);
    let items: Vec<Value> = defs
        .filter(|(k, _)| reg.visible(kind, k, who))
        .map(|(_, d)| d)
        .collect();
    let (page, next) = pagination::page(&items, params, s.server.inner.options.page_size)?;
    let mut out = Map::new();
    out.insert(key.to_owned(), Value::Array(page.to_vec()));
    if let Some(n) = next {
        out.insert("nextCursor".into(), Value::String(n));
    }
    if reg.visibility.is_some() {
        // The list differs between clients: no shared cache may keep it (CACHE-01).
        out.insert("cacheScope".into(), json!("private"));
    }
    Ok(Outcome::Complete(Value::Object(out)))
}

/// The registry key of a definition: its `field` (`name`, `uri`, `uriTemplate`).
fn key_of<'a>(def: &'a Value, field: &str) -> &'a str {
    def.get(field).and_then(Value::as_str).unwrap_or_default()
}

pub(crate) fn list_tools(s: &Session, params: Option<&Map<String, Value>>) -> MethodResult {
    // Only handshake-era requests reach a legacy-locked session (modern ones are refused there).
    let legacy = s.era() == Some(Era::Legacy);
    let reg = s.server.inner.registry.load();
    let defs = reg.tools.iter().map(|t| {
        let def = match &t.legacy_def {
            Some(d) if legacy => d.clone(),
            _ => t.def.clone(),
        };
        (key_of(&t.def, "name"), def)
    });
    list(s, &reg, ItemKind::Tool, defs, "tools", params)
}

pub(crate) fn list_prompts(s: &Session, params: Option<&Map<String, Value>>) -> MethodResult {
    let reg = s.server.inner.registry.load();
    let defs = reg
        .prompts
        .iter()
        .map(|t| (key_of(&t.def, "name"), t.def.clone()));
    list(s, &reg, ItemKind::Prompt, defs, "prompts", params)
}

pub(crate) fn list_resources(s: &Session, params: Option<&Map<String, Value>>) -> MethodResult {
    let reg = s.server.inner.registry.load();
    let defs = reg
        .resources
        .iter()
        .map(|t| (key_of(&t.def, "uri"), t.def.clone()));
    list(s, &reg, ItemKind::Resource, defs, "resources", params)
}

pub(crate) fn list_templates(s: &Session, params: Option<&Map<String, Value>>) -> MethodResult {
    let reg = s.server.inner.registry.load();
    let defs = reg
        .templates
        .iter()
        .map(|t| (key_of(&t.def, "uriTemplate"), t.def.clone()));
    list(
        s,
        &reg,
        ItemKind::ResourceTemplate,
        defs,
        "resourceTemplates",
        params,
    )
}

/// `tools/call` (TOOL-01, TOOL-06, TOOL-07, SEP-1303).
pub(crate) async fn call_tool(
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    let name = str_param(params, "name")?;
    let session = ctx.session().clone();
    // The call holds its entry: removing or replacing the tool meanwhile does not stop it.
    let reg = session.server.inner.registry.load();
    let Some(tool) = reg
        .tool(name)
        .filter(|_| reg.visible(ItemKind::Tool, name, ctx.principal()))
        .cloned()
    else {
        return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")));
    };
    drop(reg);
    let args = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(ErrorObject::invalid_params("arguments must be an object")),
    };
    if let Err(msg) = tool.input.validate(&args) {
        return Ok(super::typed::invalid_arguments(name, &msg));
    }
    let outcome = ask::settle(
        &ctx,
        tool.handler.call(ctx.clone(), args).await,
        "tools/call",
    )?;
    let mut result = match outcome {
        Outcome::Complete(v) => v,
        // JSON text with content blocks and nothing to check or mirror is sent as written.
        Outcome::CompleteJson(raw) => match super::payload::top_level(&raw) {
            Some(t) if t.content && !t.structured_content && tool.output.is_none() => {
                return Ok(Outcome::CompleteJson(raw));
            }
            _ => super::Payload::Json(raw).into_value(),
        },
        other => return Ok(other),
    };
    let Some(obj) = result.as_object_mut() else {
        tracing::error!(tool = name, "tool handler returned a non-object result");
        return Err(ErrorObject::internal());
    };
    if !obj.contains_key("content") {
        obj.insert("content".into(), json!([]));
    }
    let is_error = obj.get("isError").and_then(Value::as_bool) == Some(true);
    if let (Some(validator), false) = (&tool.output, is_error) {
        let sc = obj.get("structuredContent").cloned().unwrap_or(Value::Null);
        if obj.get("structuredContent").is_none() {
            tracing::error!(
                tool = name,
                "tool has an outputSchema but returned no structuredContent"
            );
            return Err(ErrorObject::internal());
        }
        if let Err(msg) = validator.validate(&sc) {
            tracing::error!(tool = name, %msg, "structuredContent does not match outputSchema");
            return Err(ErrorObject::internal());
        }
    }
    // A non-object structuredContent with no content blocks is mirrored as text (TOOL-06).
    let Some(sc) = obj.get("structuredContent").filter(|sc| !sc.is_object()) else {
        return Ok(Outcome::Complete(result));
    };
    let mirror = obj
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
        .then(|| sc.to_string());
    if let Some(text) = mirror {
        obj.insert("content".into(), json!([{"type": "text", "text": text}]));
    }
    // Legacy results carry only object `structuredContent` (TOOL-05); the text block stays.
    if !ctx.is_modern() {
        obj.remove("structuredContent");
    }
    Ok(Outcome::Complete(result))
}

/// Run one of the methods that may answer `input_required` (MRTR-01).
pub(crate) async fn run_mrtr(
    method: &str,
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    match method {
        "tools/call" => call_tool(ctx, params).await,
        "prompts/get" => get_prompt(ctx, params).await,
        "resources/read" => read_resource(ctx, params).await,
        other => {
            tracing::error!(method = other, "not a multi round-trip method");
            Err(ErrorObject::internal())
        }
    }
}

/// `prompts/get` (PRM-01, PRM-02).
pub(crate) async fn get_prompt(
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    let name = str_param(params, "name")?;
    let session = ctx.session().clone();
    let reg = session.server.inner.registry.load();
    let visible = reg.visible(ItemKind::Prompt, name, ctx.principal());
    let Some(prompt) = reg.prompt(name).filter(|_| visible).cloned() else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        )));
    };
    let args = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(ErrorObject::invalid_params("arguments must be an object")),
    };
    if let Some((k, _)) = args.iter().find(|(_, v)| !v.is_string()) {
        return Err(ErrorObject::invalid_params(format!(
            "argument {k} must be a string"
        )));
    }
    let missing: Vec<&str> = prompt
        .required
        .iter()
        .filter(|r| !args.contains_key(r.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "Missing required arguments for prompt {name}: {}",
            missing.join(", ")
        )));
    }
    let r = prompt.handler.call(ctx.clone(), Value::Object(args)).await;
    ask::settle(&ctx, r, "prompts/get")
}

/// -32602 "Resource not found" with `data: {uri}` (RES-02, SEP-2164).
pub(crate) fn resource_not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, format!("Resource not found: {uri}"))
        .with_data(json!({"uri": uri}))
}

/// `resources/read`: exact URIs win over templates (RES-01, RES-02).
pub(crate) async fn read_resource(
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    let uri = str_param(params, "uri")?;
    let session = ctx.session().clone();
    let reg = session.server.inner.registry.load();
    let visible = |kind, key: &str| reg.visible(kind, key, ctx.principal());
    let (handler, vars) = if let Some(r) = reg.resource(uri) {
        if !visible(ItemKind::Resource, uri) {
            return Err(resource_not_found(uri));
        }
        (r.handler.clone(), Map::new())
    } else if let Some((t, vars)) = reg.template_for(uri) {
        if !visible(ItemKind::ResourceTemplate, key_of(&t.def, "uriTemplate")) {
            return Err(resource_not_found(uri));
        }
        (t.handler.clone(), vars)
    } else {
        return Err(resource_not_found(uri));
    };
    let r = handler.call(ctx.clone(), Value::Object(vars)).await;
    let outcome = ask::settle(&ctx, r, "resources/read")?;
    if let Outcome::Complete(v) = &outcome {
        if !v.get("contents").is_some_and(Value::is_array) {
            tracing::error!(uri, "resource handler returned no contents array");
            return Err(ErrorObject::internal());
        }
    }
    Ok(outcome)
}

/// `resources/subscribe` / `resources/unsubscribe` (legacy; SUB-07).
pub(crate) async fn subscribe(
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
    on: bool,
) -> MethodResult {
    let uri = str_param(params, "uri")?.to_owned();
    let session = ctx.session().clone();
    let reg = session.server.inner.registry.load();
    let handler = if on { &reg.subscribe } else { &reg.unsubscribe };
    if let Some(h) = handler {
        h.call(
            ctx.clone(),
            Value::Object(params.cloned().unwrap_or_default()),
        )
        .await
        .map_err(|e| {
            e.into_wire(if on {
                "resources/subscribe"
            } else {
                "resources/unsubscribe"
            })
        })?;
    }
    if on {
        session.subscribe(&uri);
    } else {
        session.unsubscribe(&uri);
    }
    Ok(Outcome::Complete(json!({})))
}

/// `completion/complete` (CMP-01).
pub(crate) async fn complete(
    ctx: RequestContext,
    params: Option<&Map<String, Value>>,
) -> MethodResult {
    let session = ctx.session().clone();
    let reg = session.server.inner.registry.load();
    let Some(handler) = &reg.completion else {
        return Err(ErrorObject::method_not_found("completion/complete"));
    };
    let p = params.cloned().unwrap_or_default();
    let r = p
        .get("ref")
        .ok_or_else(|| ErrorObject::invalid_params("missing required parameter: ref"))?;
    match r.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
            if reg.prompt(name).is_none() || !reg.visible(ItemKind::Prompt, name, ctx.principal()) {
                return Err(ErrorObject::invalid_params(format!(
                    "Unknown prompt: {name}"
                )));
            }
        }
        Some("ref/resource") => {
            let uri = r.get("uri").and_then(Value::as_str).unwrap_or_default();
            let w = ctx.principal();
            let known = (reg.resource(uri).is_some() && reg.visible(ItemKind::Resource, uri, w))
                || (reg.templates.get(uri).is_some()
                    && reg.visible(ItemKind::ResourceTemplate, uri, w));
            if !known {
                return Err(resource_not_found(uri));
            }
        }
        _ => {
            return Err(ErrorObject::invalid_params(
                "ref.type must be ref/prompt or ref/resource",
            ))
        }
    }
    if !p
        .get("argument")
        .is_some_and(|a| a.get("name").is_some_and(Value::is_string))
    {
        return Err(ErrorObject::invalid_params("argument.name is required"));
    }
    let outcome = handler
        .call(ctx.clone(), Value::Object(p))
        .await
        .map_err(|e| e.into_wire("completion/complete"))?;
    match outcome.parsed() {
        // CMP-01: at most 100 values, with `total` and `hasMore` when cut (one rule for every
        // door: Rust, C and the bindings' handlers may all return more).
        Outcome::Complete(v) => Ok(Outcome::Complete(super::shape::completion_result(v))),
        Outcome::InputRequired(_) | Outcome::CompleteJson(_) => Err(ErrorObject::internal()),
    }
}

/// `logging/setLevel` (LOG-03).
pub(crate) fn set_level(session: &Session, params: Option<&Map<String, Value>>) -> MethodResult {
    let level = str_param(params, "level")?;
    let Some(l) = LoggingLevel::parse(level) else {
        return Err(ErrorObject::invalid_params(format!(
            "unknown log level: {level}"
        )));
    };
    lock(&session.legacy).log_level = Some(l);
    Ok(Outcome::Complete(json!({})))
}
