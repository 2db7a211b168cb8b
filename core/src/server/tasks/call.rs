//! `tools/call` on a task-capable tool: decide whether this request becomes a task (TASK-L01:
//! a `task` param; TASK-M01: the extension in THIS request's capabilities), create the record
//! before answering (TASK-M02), and start the handler on its own.

use serde_json::{Map, Value};
use std::sync::Arc;

use super::{missing_extension, new_task_id, opted_in, owner_of, runner, wire, TaskSupport};
use crate::error::{codes, ErrorObject};
use crate::server::ask;
use crate::server::context::RequestContext;
use crate::server::handler::Outcome;
use crate::server::methods::{self, MethodResult};
use crate::server::registry::ToolEntry;
use crate::tasks::TaskRecord;

/// What the request asked for: a task (with the legacy `task.ttl`, if any) or a plain call.
fn wants_task(
    ctx: &RequestContext,
    p: Option<&Map<String, Value>>,
) -> Result<Option<Option<u64>>, ErrorObject> {
    if ctx.is_modern() {
        // A legacy `task` hint on the modern wire is tolerated and ignored (SEP-2663).
        return Ok(opted_in(ctx).then_some(None));
    }
    match p.and_then(|p| p.get("task")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(t)) => match t.get("ttl") {
            None | Some(Value::Null) => Ok(Some(None)),
            Some(v) => v.as_u64().map(|ttl| Some(Some(ttl))).ok_or_else(|| {
                ErrorObject::invalid_params("task.ttl must be a non-negative integer")
            }),
        },
        Some(_) => Err(ErrorObject::invalid_params("task must be an object")),
    }
}

/// `tools/call`, task-aware: plain calls go to [`methods::call_tool`]. The task path is boxed:
/// every `tools/call`'s future would otherwise be sized (and moved, per request) for it.
pub(crate) async fn call_tool(ctx: RequestContext, p: Option<&Map<String, Value>>) -> MethodResult {
    match as_task(&ctx, p)? {
        None => methods::call_tool(ctx, p).await,
        Some((engine, tool, ttl)) => Box::pin(start_task(ctx, p, engine, tool, ttl)).await,
    }
}

/// What a call that becomes a task needs: the engine, the tool, the requested ttl.
type TaskCall = (Arc<super::TaskEngine>, Arc<ToolEntry>, Option<u64>);

/// The task engine, the tool and the requested ttl when this call becomes a task; `None` for a
/// plain call (no engine, an unknown or task-forbidden tool, or no task asked of an optional one).
fn as_task(
    ctx: &RequestContext,
    p: Option<&Map<String, Value>>,
) -> Result<Option<TaskCall>, ErrorObject> {
    let inner = &ctx.session().server.inner;
    // Without a task engine, no lookup here: `methods::call_tool` finds the tool itself.
    let Some(engine) = inner.tasks.clone() else {
        return Ok(None);
    };
    let name = p
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Some(tool) = inner.registry.load().tool(name).cloned() else {
        return Ok(None);
    };
    if tool.task_support == TaskSupport::Forbidden {
        return Ok(None);
    }
    let Some(requested_ttl) = wants_task(ctx, p)? else {
        if tool.task_support == TaskSupport::Required {
            return Err(if ctx.is_modern() {
                missing_extension()
            } else {
                // TASK-L01: a task-required tool called without `task`.
                ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!("Tool {name} requires task-augmented execution (params.task)"),
                )
            });
        }
        return Ok(None);
    };
    Ok(Some((engine, tool, requested_ttl)))
}

/// Check the arguments, run the MRTR gate, create the task record and start the handler.
async fn start_task(
    ctx: RequestContext,
    p: Option<&Map<String, Value>>,
    engine: Arc<super::TaskEngine>,
    tool: Arc<ToolEntry>,
    requested_ttl: Option<u64>,
) -> MethodResult {
    let name = p
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Arguments are checked on the request, so a bad call is answered now, not as a task.
    let args = match p.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(ErrorObject::invalid_params("arguments must be an object")),
    };
    if let Err(msg) = tool.input.validate(&args) {
        return Ok(crate::server::typed::invalid_arguments(name, &msg));
    }
    if let Some(gate) = &tool.gate {
        // MRTR rounds complete on the request before any task exists (SEP-2663).
        let r = gate.call(ctx.clone(), args).await;
        if let Outcome::InputRequired(ir) = ask::settle(&ctx, r, "tools/call")? {
            return Ok(Outcome::InputRequired(ir));
        }
    }
    let opts = &engine.opts;
    let max = u64::try_from(opts.max_ttl.as_millis()).unwrap_or(u64::MAX);
    let default = u64::try_from(opts.default_ttl.as_millis()).unwrap_or(u64::MAX);
    let ttl = requested_ttl.unwrap_or(default).clamp(1, max);
    let mut rec = TaskRecord::new(new_task_id()?, Some(ttl), !ctx.is_modern());
    rec.poll_interval_ms = Some(
        u64::try_from(opts.poll_interval.as_millis())
            .unwrap_or(1000)
            .max(1),
    );
    rec.owner = owner_of(&ctx);
    let rec = engine
        .store
        .create(rec)
        .await
        .map_err(|e| e.to_error_object())?;
    let result = if rec.legacy {
        wire::legacy_create(&rec)
    } else {
        wire::modern_create(&rec)
    };
    runner::spawn(Arc::clone(&engine), &ctx, p.cloned(), &rec);
    Ok(Outcome::Complete(result))
}
