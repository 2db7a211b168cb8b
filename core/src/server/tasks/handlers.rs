//! The `tasks/*` methods.
//!
//! Modern (TASK-M01, TASK-M03): every one needs the extension in THIS request's capabilities
//! (-32021 first); `tasks/get` → the full state; `tasks/update` → empty ack, answers stored by
//! key (unknown and already answered keys ignored); `tasks/cancel` → empty ack, idempotent on a
//! terminal task; `tasks/list` and `tasks/result` do not exist (-32601).
//!
//! Legacy (TASK-L01): `tasks/get` and `tasks/cancel` → the `Task`; `tasks/result` waits until the
//! task is terminal and answers the original result with `_meta[related-task]`, or its error;
//! `tasks/list` pages the caller's tasks.
//!
//! An unknown, expired or foreign (another principal's, the other era's) id is -32602.

use serde_json::{json, Map, Value};

use super::runner::announce;
use super::{missing_extension, opted_in, owner_of, wire, TaskEngine, RELATED_TASK};
use crate::error::{codes, ErrorObject};
use crate::server::context::RequestContext;
use crate::server::handler::Outcome;
use crate::server::methods::MethodResult;
use crate::tasks::{modify, TaskRecord, TaskStatus, TaskStoreError};

/// Methods of the legacy experimental tasks.
const LEGACY_METHODS: &[&str] = &["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];

/// Serve `method` when it is a tasks method of the request's era; `None` when it is not one
/// (the caller answers -32601).
pub(crate) async fn handle(
    engine: &TaskEngine,
    ctx: &RequestContext,
    method: &str,
    p: Option<&Map<String, Value>>,
) -> Option<MethodResult> {
    if ctx.is_modern() {
        if !matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel") {
            return None;
        }
        if !opted_in(ctx) {
            return Some(Err(missing_extension()));
        }
        return Some(modern(engine, ctx, method, p).await);
    }
    if !LEGACY_METHODS.contains(&method) {
        return None;
    }
    Some(legacy(engine, ctx, method, p).await)
}

fn task_id(p: Option<&Map<String, Value>>) -> Result<&str, ErrorObject> {
    match p.and_then(|p| p.get("taskId")) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ErrorObject::invalid_params("taskId must be a string")),
        None => Err(ErrorObject::invalid_params(
            "missing required parameter: taskId",
        )),
    }
}

/// The record if the caller may see it: same era, same principal.
async fn visible(
    engine: &TaskEngine,
    ctx: &RequestContext,
    id: &str,
) -> Result<TaskRecord, ErrorObject> {
    let rec = engine
        .store
        .get(id)
        .await
        .map_err(|e| e.to_error_object())?;
    if rec.legacy == ctx.is_modern() || rec.owner != owner_of(ctx) {
        return Err(TaskStoreError::NotFound.to_error_object());
    }
    Ok(rec)
}

fn complete(v: Value) -> MethodResult {
    Ok(Outcome::Complete(v))
}

async fn modern(
    engine: &TaskEngine,
    ctx: &RequestContext,
    method: &str,
    p: Option<&Map<String, Value>>,
) -> MethodResult {
    let id = task_id(p)?;
    let rec = visible(engine, ctx, id).await?;
    match method {
        "tasks/get" => complete(Value::Object(wire::modern_state(&rec))),
        "tasks/update" => {
            let responses = match p.and_then(|p| p.get("inputResponses")) {
                Some(Value::Object(m)) => m.clone(),
                _ => {
                    return Err(ErrorObject::invalid_params(
                        "inputResponses must be an object",
                    ))
                }
            };
            update(engine, ctx, id, &responses).await?;
            complete(json!({}))
        }
        _ => {
            cancel(engine, ctx, id).await?;
            complete(json!({}))
        }
    }
}

/// Store the answers to pending requests; the task goes back to `working` once none is left.
async fn update(
    engine: &TaskEngine,
    ctx: &RequestContext,
    id: &str,
    responses: &Map<String, Value>,
) -> Result<(), ErrorObject> {
    let mut changed_status = false;
    let rec = modify(&*engine.store, id, |r| {
        changed_status = false;
        if r.status != TaskStatus::InputRequired {
            return false;
        }
        let mut any = false;
        for (k, v) in responses {
            // Unknown and already answered keys are ignored (TASK-M03).
            if r.input_requests.remove(k).is_some() {
                r.input_responses.insert(k.clone(), v.clone());
                any = true;
            }
        }
        if r.input_requests.is_empty() {
            r.status = TaskStatus::Working;
            changed_status = true;
        }
        any
    })
    .await
    .map_err(|e| e.to_error_object())?;
    if changed_status {
        announce(ctx, &rec);
    }
    Ok(())
}

/// Mark the task cancelled (unless terminal) and cancel its handler's token (cooperative).
async fn cancel(
    engine: &TaskEngine,
    ctx: &RequestContext,
    id: &str,
) -> Result<TaskRecord, ErrorObject> {
    let mut changed = false;
    let rec = modify(&*engine.store, id, |r| {
        changed = !r.status.is_terminal();
        if changed {
            r.status = TaskStatus::Cancelled;
            r.status_message = Some("Cancelled by the client".into());
            r.input_requests.clear();
        }
        changed
    })
    .await
    .map_err(|e| e.to_error_object())?;
    engine.cancel_local(id);
    if changed {
        announce(ctx, &rec);
    }
    Ok(rec)
}

async fn legacy(
    engine: &TaskEngine,
    ctx: &RequestContext,
    method: &str,
    p: Option<&Map<String, Value>>,
) -> MethodResult {
    if method == "tasks/list" {
        let cursor = match p.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(_) => return Err(ErrorObject::invalid_params("cursor must be a string")),
        };
        let (page, next) = engine
            .store
            .list(owner_of(ctx), true, cursor, engine.opts.list_page_size)
            .await
            .map_err(|e| e.to_error_object())?;
        let tasks: Vec<Value> = page
            .iter()
            .map(|r| Value::Object(wire::legacy_task(r)))
            .collect();
        let mut out = json!({"tasks": tasks});
        if let Some(n) = next {
            out["nextCursor"] = json!(n);
        }
        return complete(out);
    }
    let id = task_id(p)?;
    let rec = visible(engine, ctx, id).await?;
    match method {
        "tasks/get" => complete(Value::Object(wire::legacy_task(&rec))),
        "tasks/cancel" => {
            if rec.status.is_terminal() {
                return Err(ErrorObject::invalid_params(format!(
                    "Cannot cancel task: already {}",
                    rec.status.as_str()
                )));
            }
            let rec = cancel(engine, ctx, id).await?;
            complete(Value::Object(wire::legacy_task(&rec)))
        }
        _ => legacy_result(engine, ctx, rec).await,
    }
}

/// `tasks/result`: wait until terminal (or until the request is cancelled), then the original
/// result tagged with the task, or the task's error.
async fn legacy_result(
    engine: &TaskEngine,
    ctx: &RequestContext,
    mut rec: TaskRecord,
) -> MethodResult {
    while !rec.status.is_terminal() {
        rec = tokio::select! {
            () = ctx.cancelled() => return Err(ErrorObject::internal()),
            r = engine.store.wait_for_change(&rec.task_id, rec.version) => {
                r.map_err(|e| e.to_error_object())?
            }
        };
    }
    match rec.status {
        TaskStatus::Completed => {
            let mut v = rec.result.unwrap_or_else(|| json!({"content": []}));
            if let Some(o) = v.as_object_mut() {
                let meta = o.entry("_meta").or_insert_with(|| json!({}));
                if let Some(m) = meta.as_object_mut() {
                    m.insert(RELATED_TASK.into(), json!({"taskId": rec.task_id}));
                }
            }
            complete(v)
        }
        TaskStatus::Failed => Err(rec.error.unwrap_or_else(ErrorObject::internal)),
        _ => Err(ErrorObject::new(
            codes::INTERNAL_ERROR,
            "Task was cancelled",
        )),
    }
}
