//! Task records as the two wires show them.
//!
//! Modern (TASK-M02/M03, SEP-2663): `Task` = `{taskId, status, statusMessage?, createdAt,
//! lastUpdatedAt, ttlMs (number|null), pollIntervalMs?}`, flattened into `CreateTaskResult`
//! (`resultType: "task"`) and into `tasks/get` with the status-specific `inputRequests` /
//! `result` / `error`. Never a `requestState`.
//!
//! Legacy (TASK-L01, 2025-11-25 schema `Task`): `{taskId, status, statusMessage?, createdAt,
//! lastUpdatedAt, ttl (integer|null), pollInterval?}`; `CreateTaskResult` wraps it as `{task}`.

use serde_json::{json, Map, Value};

use crate::tasks::{iso8601, TaskRecord, TaskStatus};

fn base(rec: &TaskRecord, ttl_key: &str, poll_key: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), json!(rec.task_id));
    m.insert("status".into(), json!(rec.status.as_str()));
    if let Some(msg) = &rec.status_message {
        m.insert("statusMessage".into(), json!(msg));
    }
    m.insert("createdAt".into(), json!(iso8601(rec.created_at_ms)));
    m.insert(
        "lastUpdatedAt".into(),
        json!(iso8601(rec.last_updated_at_ms)),
    );
    m.insert(ttl_key.into(), json!(rec.ttl_ms));
    if let Some(p) = rec.poll_interval_ms {
        m.insert(poll_key.into(), json!(p));
    }
    m
}

/// The modern `Task` fields.
pub(crate) fn modern_task(rec: &TaskRecord) -> Map<String, Value> {
    base(rec, "ttlMs", "pollIntervalMs")
}

/// The full modern task state: `Task` plus the status-specific field (`tasks/get`,
/// `notifications/tasks`).
pub(crate) fn modern_state(rec: &TaskRecord) -> Map<String, Value> {
    let mut m = modern_task(rec);
    match rec.status {
        TaskStatus::InputRequired => {
            m.insert(
                "inputRequests".into(),
                Value::Object(rec.input_requests.clone()),
            );
        }
        TaskStatus::Completed => {
            if let Some(r) = &rec.result {
                m.insert("result".into(), r.clone());
            }
        }
        TaskStatus::Failed => {
            if let Some(e) = &rec.error {
                m.insert("error".into(), json!(e));
            }
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    m
}

/// `CreateTaskResult` of the modern wire.
pub(crate) fn modern_create(rec: &TaskRecord) -> Value {
    let mut m = modern_task(rec);
    m.insert("resultType".into(), json!("task"));
    Value::Object(m)
}

/// The legacy `Task`.
pub(crate) fn legacy_task(rec: &TaskRecord) -> Map<String, Value> {
    base(rec, "ttl", "pollInterval")
}

/// `CreateTaskResult` of the legacy wire.
pub(crate) fn legacy_create(rec: &TaskRecord) -> Value {
    json!({"task": legacy_task(rec)})
}
