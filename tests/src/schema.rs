//! Validation against the official MCP schemas.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// Which revision's schema applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2025-11-25 (and the older handshake versions it subsumes).
    Legacy,
    /// 2026-07-28.
    Modern,
}

impl Era {
    fn dir(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }
}

/// Where the official schemas are read from: `$MCP_SHARED_DIR/spec`, else `../shared/spec` beside
/// the checkout when present, else the vendored copies in `spec/` (a clone anywhere still works).
pub fn spec_dir() -> PathBuf {
    if let Ok(p) = std::env::var("MCP_SHARED_DIR") {
        return PathBuf::from(p).join("spec");
    }
    let shared = crate::workspace_root().join("../shared/spec");
    if shared.join("2026-07-28/schema.json").exists() {
        shared
    } else {
        crate::workspace_root().join("spec")
    }
}

fn document(era: Era) -> &'static Value {
    static DOCS: OnceLock<Mutex<HashMap<Era, &'static Value>>> = OnceLock::new();
    let docs = DOCS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = docs
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    g.entry(era).or_insert_with(|| {
        let path = spec_dir().join(era.dir()).join("schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        Box::leak(Box::new(serde_json::from_str(&text).expect("schema JSON")))
    })
}

type ValidatorCache = Mutex<HashMap<(Era, String), Arc<jsonschema::Validator>>>;

fn validator(era: Era, def: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<ValidatorCache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut g = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    g.entry((era, def.to_owned()))
        .or_insert_with(|| {
            let doc = document(era);
            assert!(
                doc["$defs"].get(def).is_some(),
                "no $defs/{def} in the {era:?} schema"
            );
            let schema = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": format!("#/$defs/{def}"),
                "$defs": doc["$defs"],
            });
            Arc::new(jsonschema::validator_for(&schema).expect("compile schema"))
        })
        .clone()
}

/// Validate `value` against `$defs/<def>` of the era's schema.
///
/// # Errors
/// The violations, joined.
pub fn validate_def(era: Era, def: &str, value: &Value) -> Result<(), String> {
    let v = validator(era, def);
    if v.is_valid(value) {
        return Ok(());
    }
    Err(v
        .iter_errors(value)
        .take(5)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("; "))
}

/// Validate `value` against `$defs/<def>` of the tasks extension's wire shapes
/// (`tests/schemas/tasks-extension.json`: SEP-2663 is not in the 2026-07-28 schema).
///
/// # Errors
/// The violations, joined.
pub fn validate_tasks_ext(def: &str, value: &Value) -> Result<(), String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let v = {
        let mut g = CACHE
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.entry(def.to_owned())
            .or_insert_with(|| {
                let path = crate::workspace_root().join("tests/schemas/tasks-extension.json");
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                let doc: Value = serde_json::from_str(&text).expect("tasks schema JSON");
                assert!(
                    doc["$defs"].get(def).is_some(),
                    "no $defs/{def} in the tasks schema"
                );
                let schema = json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$ref": format!("#/$defs/{def}"),
                    "$defs": doc["$defs"],
                });
                Arc::new(jsonschema::validator_for(&schema).expect("compile tasks schema"))
            })
            .clone()
    };
    if v.is_valid(value) {
        return Ok(());
    }
    Err(v
        .iter_errors(value)
        .take(5)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("; "))
}

/// The tasks extension's checks of a modern message (`None`: not a tasks message).
fn tasks_ext_check(msg: &Value, method: Option<&str>) -> Option<Result<(), String>> {
    if msg.get("method").and_then(Value::as_str) == Some("notifications/tasks") {
        return Some(validate_tasks_ext("TaskNotification", msg));
    }
    let result = msg.get("result")?;
    if result.get("resultType").and_then(Value::as_str) == Some("task") {
        return Some(validate_tasks_ext("CreateTaskResult", result));
    }
    match method? {
        "tasks/get" => Some(validate_tasks_ext("GetTaskResult", result)),
        "tasks/update" | "tasks/cancel" => Some(validate_tasks_ext("TaskAck", result)),
        _ => None,
    }
}

/// The result definition for a method's response, per era.
pub fn result_def(era: Era, method: &str) -> Option<&'static str> {
    Some(match (era, method) {
        (_, "initialize") => "InitializeResult",
        (_, "ping")
        | (_, "logging/setLevel")
        | (_, "resources/subscribe")
        | (_, "resources/unsubscribe") => "EmptyResult",
        (Era::Modern, "server/discover") => "DiscoverResult",
        (_, "tools/list") => "ListToolsResult",
        (Era::Legacy, "tools/call") => return Some("CallToolResult|CreateTaskResult"),
        (Era::Legacy, "tasks/get") => "GetTaskResult",
        (Era::Legacy, "tasks/cancel") => "CancelTaskResult",
        (Era::Legacy, "tasks/list") => "ListTasksResult",
        (Era::Legacy, "tasks/result") => "GetTaskPayloadResult",
        (Era::Modern, "tools/call") => return Some("CallToolResult|InputRequiredResult"),
        (_, "prompts/list") => "ListPromptsResult",
        (Era::Legacy, "prompts/get") => "GetPromptResult",
        (Era::Modern, "prompts/get") => return Some("GetPromptResult|InputRequiredResult"),
        (_, "resources/list") => "ListResourcesResult",
        (_, "resources/templates/list") => "ListResourceTemplatesResult",
        (Era::Legacy, "resources/read") => "ReadResourceResult",
        (Era::Modern, "resources/read") => return Some("ReadResourceResult|InputRequiredResult"),
        (_, "completion/complete") => "CompleteResult",
        (Era::Modern, "subscriptions/listen") => "SubscriptionsListenResult",
        _ => return None,
    })
}

/// Validate one wire message; `method` names the request a response answers (if known).
///
/// # Errors
/// What is wrong with it.
pub fn validate_message(era: Era, msg: &Value, method: Option<&str>) -> Result<(), String> {
    let is_null_id_error = msg.get("error").is_some() && msg.get("id") == Some(&Value::Null);
    if is_null_id_error {
        let mut m = msg.clone();
        if let Some(o) = m.as_object_mut() {
            o.remove("id");
        }
        return validate_def(era, "JSONRPCErrorResponse", &m);
    }
    validate_def(era, "JSONRPCMessage", msg)?;
    if era == Era::Modern {
        if let Some(r) = tasks_ext_check(msg, method) {
            return r;
        }
    }
    // The tasks extension's `resultType: "task"` (TASK-M02) is not in the core schema; the task
    // tests check its shape against REQUIREMENTS.
    let modern_task = era == Era::Modern
        && msg.pointer("/result/resultType").and_then(Value::as_str) == Some("task");
    if let (Some(result), Some(method), false) = (msg.get("result"), method, modern_task) {
        if let Some(defs) = result_def(era, method) {
            let errs: Vec<String> = defs
                .split('|')
                .filter_map(|d| validate_def(era, d, result).err())
                .collect();
            if errs.len() == defs.split('|').count() {
                return Err(format!(
                    "result of {method} is not a {defs}: {}",
                    errs.join(" | ")
                ));
            }
        }
    }
    if let Some(m) = msg.get("method").and_then(Value::as_str) {
        let def = match m {
            "notifications/progress" => Some("ProgressNotification"),
            "notifications/message" => Some("LoggingMessageNotification"),
            "notifications/cancelled" => Some("CancelledNotification"),
            "notifications/resources/updated" => Some("ResourceUpdatedNotification"),
            "notifications/tools/list_changed" => Some("ToolListChangedNotification"),
            "notifications/prompts/list_changed" => Some("PromptListChangedNotification"),
            "notifications/resources/list_changed" => Some("ResourceListChangedNotification"),
            "notifications/tasks/status" if era == Era::Legacy => Some("TaskStatusNotification"),
            "notifications/subscriptions/acknowledged" if era == Era::Modern => {
                Some("SubscriptionsAcknowledgedNotification")
            }
            "sampling/createMessage" => Some("CreateMessageRequest"),
            "elicitation/create" => Some("ElicitRequest"),
            "roots/list" => Some("ListRootsRequest"),
            "notifications/tasks/status" if era == Era::Legacy => Some("TaskStatusNotification"),
            _ => None,
        };
        if let Some(d) = def {
            validate_def(era, d, msg)?;
        }
    }
    Ok(())
}
