//! Running a task's handler to its end: on its own tokio task with its own cancellation token
//! (CAN-03, TASK-M03), parking in `input_required` when the handler needs client input, and
//! writing the terminal status, result or error into the store.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

use super::{wire, TaskEngine};
use crate::error::{codes, ErrorObject};
use crate::server::context::RequestContext;
use crate::server::handler::{InputRequired, Outcome};
use crate::server::mrtr::{self, Retry};
use crate::server::NullOutbound;
use crate::server::{ask, methods, Outbound, ServerChange};
use crate::tasks::{modify, TaskRecord, TaskStatus};

/// Tell the client(s) about a task's new state: legacy tasks with `notifications/tasks/status`
/// on the session that created them (TASK-L01), modern ones with `notifications/tasks` to the
/// listen streams that asked for the id (TASK-M04).
pub(crate) fn announce(ctx: &RequestContext, rec: &TaskRecord) {
    let session = ctx.session();
    if rec.legacy {
        let params = Value::Object(wire::legacy_task(rec));
        session.notify("notifications/tasks/status", Some(&params));
    } else {
        let state = Value::Object(wire::modern_state(rec));
        // Every worker's listen streams: the stream that asked may live on another one.
        session
            .server
            .raise(ServerChange::Task(&rec.task_id, &state));
    }
}

/// Start the handler of the task `rec` created for the request `ctx`.
pub(crate) fn spawn(
    engine: Arc<TaskEngine>,
    ctx: &RequestContext,
    params: Option<Map<String, Value>>,
    rec: &TaskRecord,
) {
    let token = engine.register(&rec.task_id);
    // A modern task's progress/logs after its request was answered have no stream: dropped.
    let sink: Arc<dyn Outbound> = if rec.legacy {
        ctx.session().outbound().clone()
    } else {
        Arc::new(NullOutbound)
    };
    let retry = Retry {
        input_responses: ctx.input_responses().cloned(),
        request_state: ctx.request_state().map(str::to_owned),
    };
    let tctx = ctx.for_task(
        &rec.task_id,
        token,
        sink,
        retry,
        ctx.take_asks().for_rerun(),
    );
    let runner = Runner {
        engine,
        task_id: rec.task_id.clone(),
        legacy: rec.legacy,
        params,
    };
    let done = tokio_util::sync::CancellationToken::new();
    if runner.engine.store.is_shared() {
        tokio::spawn(watch_remote_cancel(
            runner.engine.clone(),
            rec.clone(),
            tctx.cancellation_token().clone(),
            done.clone(),
        ));
    }
    tokio::spawn(async move {
        runner.run(tctx).await;
        done.cancel();
        runner.engine.unregister(&runner.task_id);
    });
}

/// With a store shared by several workers, `tasks/cancel` may be served by another one: follow
/// the record and cancel the local handler when it turns `cancelled` (TASK-M03, TASK-L01).
/// Ends with the handler (`done`), or when the task ends or is gone. A failing store is retried
/// after a pause rather than giving up on the task.
async fn watch_remote_cancel(
    engine: Arc<TaskEngine>,
    rec: TaskRecord,
    token: tokio_util::sync::CancellationToken,
    done: tokio_util::sync::CancellationToken,
) {
    let mut seen = rec.version;
    loop {
        let changed = tokio::select! {
            () = done.cancelled() => return,
            r = engine.store.wait_for_change(&rec.task_id, seen) => r,
        };
        match changed {
            Ok(r) if r.status == TaskStatus::Cancelled => return token.cancel(),
            Ok(r) if r.status.is_terminal() => return,
            Ok(r) => seen = r.version,
            Err(crate::tasks::TaskStoreError::NotFound) => return,
            Err(_) => {
                tokio::select! {
                    () = done.cancelled() => return,
                    () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

struct Runner {
    engine: Arc<TaskEngine>,
    task_id: String,
    legacy: bool,
    params: Option<Map<String, Value>>,
}

impl Runner {
    async fn run(&self, mut ctx: RequestContext) {
        let max_rounds = ctx.session().server.inner.options.limits.max_mrtr_rounds;
        let mut rounds = 0usize;
        loop {
            let outcome = tokio::select! {
                biased;
                () = ctx.cancelled() => return self.end_cancelled(&ctx).await,
                r = methods::call_tool(ctx.clone(), self.params.as_ref()) => r,
            };
            let ir = match outcome {
                Ok(Outcome::Complete(v)) => return self.finish(&ctx, Ok(v)).await,
                Ok(Outcome::CompleteJson(raw)) => {
                    let v = crate::server::Payload::Json(raw).into_value();
                    return self.finish(&ctx, Ok(v)).await;
                }
                Err(e) => return self.finish(&ctx, Err(e)).await,
                Ok(Outcome::InputRequired(ir)) => ask::finish(&ctx, ir),
            };
            if self.legacy {
                return self.legacy_input(&ctx, ir).await;
            }
            rounds += 1;
            if rounds > max_rounds {
                let e = ErrorObject::new(
                    codes::INTERNAL_ERROR,
                    format!("Input was still required after {max_rounds} rounds; giving up"),
                );
                return self.finish(&ctx, Err(e)).await;
            }
            if let Err(e) = check_input(&ctx, &ir) {
                return self.finish(&ctx, Err(e)).await;
            }
            let state = ir.request_state;
            let Some(answers) = self.await_input(&ctx, ir.input_requests).await else {
                return self.end_cancelled(&ctx).await;
            };
            let mut retry = Retry {
                input_responses: Some(answers),
                request_state: state,
            };
            let asks = match ask::from_retry(&mut retry) {
                Ok(a) => a,
                Err(e) => return self.finish(&ctx, Err(e)).await,
            };
            let (token, sink) = (ctx.cancellation_token().clone(), ctx.sink().clone());
            ctx = ctx.for_task(&self.task_id, token, sink, retry, asks);
        }
    }

    /// Write the terminal state (a task already terminal, e.g. cancelled, keeps its state).
    async fn finish(&self, ctx: &RequestContext, result: Result<Value, ErrorObject>) {
        let r = modify(&*self.engine.store, &self.task_id, |r| {
            if r.status.is_terminal() {
                return false;
            }
            r.input_requests.clear();
            match &result {
                Ok(v) => {
                    r.status = TaskStatus::Completed;
                    r.result = Some(v.clone());
                }
                Err(e) => {
                    r.status = TaskStatus::Failed;
                    r.status_message = Some(e.message.clone());
                    r.error = Some(e.clone());
                }
            }
            true
        })
        .await;
        self.announce_written(ctx, r);
    }

    async fn end_cancelled(&self, ctx: &RequestContext) {
        let r = modify(&*self.engine.store, &self.task_id, |r| {
            if r.status.is_terminal() {
                return false;
            }
            r.status = TaskStatus::Cancelled;
            r.input_requests.clear();
            true
        })
        .await;
        self.announce_written(ctx, r);
    }

    fn announce_written(
        &self,
        ctx: &RequestContext,
        r: Result<TaskRecord, crate::tasks::TaskStoreError>,
    ) {
        match r {
            Ok(rec) => announce(ctx, &rec),
            // Expired while running: nobody can read the result any more.
            Err(e) => tracing::debug!(task = %self.task_id, error = %e, "task record gone"),
        }
    }

    /// Park the task in `input_required` with `requests` (keys unique for the task's lifetime:
    /// a reused key is renamed on the wire) and wait until `tasks/update` answered all of them.
    /// `None` when the task was cancelled or is gone.
    async fn await_input(
        &self,
        ctx: &RequestContext,
        requests: Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        let store = &*self.engine.store;
        let mut wire_to_handler: HashMap<String, String> = HashMap::new();
        let parked = modify(store, &self.task_id, |r| {
            if r.status.is_terminal() {
                return false;
            }
            wire_to_handler.clear();
            let mut wire_reqs = Map::new();
            for (key, req) in &requests {
                let mut wk = key.clone();
                let mut n = 1u32;
                while r.used_keys.contains(&wk) || wire_reqs.contains_key(&wk) {
                    wk = format!("{key}~{n}");
                    n += 1;
                }
                wire_to_handler.insert(wk.clone(), key.clone());
                wire_reqs.insert(wk, req.clone());
            }
            r.used_keys.extend(wire_reqs.keys().cloned());
            r.input_requests = wire_reqs;
            r.input_responses.clear();
            r.status = TaskStatus::InputRequired;
            r.status_message = None;
            true
        })
        .await
        .ok()?;
        if parked.status != TaskStatus::InputRequired {
            return None;
        }
        announce(ctx, &parked);
        let mut seen = parked.version;
        loop {
            let rec = tokio::select! {
                () = ctx.cancelled() => return None,
                r = store.wait_for_change(&self.task_id, seen) => r.ok()?,
            };
            if rec.status.is_terminal() {
                return None;
            }
            if rec.input_requests.is_empty() {
                // Every request is answered; `tasks/update` already set `working`.
                return Some(
                    rec.input_responses
                        .into_iter()
                        .map(|(wk, v)| (wire_to_handler.get(&wk).cloned().unwrap_or(wk), v))
                        .collect(),
                );
            }
            seen = rec.version;
        }
    }

    /// A legacy task that needs input: the status says so, and the MRTR shim asks the client
    /// with real requests on the session (MRTR-09), then the handler completes.
    async fn legacy_input(&self, ctx: &RequestContext, ir: InputRequired) {
        let parked = modify(&*self.engine.store, &self.task_id, |r| {
            if r.status.is_terminal() {
                return false;
            }
            r.status = TaskStatus::InputRequired;
            r.input_requests = ir.input_requests.clone();
            true
        })
        .await;
        if let Ok(rec) = &parked {
            announce(ctx, rec);
        }
        let session = ctx.session().clone();
        let result = tokio::select! {
            () = ctx.cancelled() => return self.end_cancelled(ctx).await,
            r = mrtr::legacy_shim(&session, ctx, self.params.as_ref(), ir) => r,
        };
        self.finish(ctx, result).await;
    }
}

/// The shape and capability checks of an in-task `input_required` (MRTR-02, MRTR-03): the
/// task's client is the one that created it, with the capabilities of that request.
fn check_input(ctx: &RequestContext, ir: &InputRequired) -> Result<(), ErrorObject> {
    if ir.input_requests.is_empty() {
        tracing::error!("a task handler asked for input without inputRequests");
        return Err(ErrorObject::internal());
    }
    ir.validate().map_err(|why| {
        tracing::error!(%why, "a task handler returned a malformed input_required outcome");
        ErrorObject::internal()
    })?;
    let caps = ctx.client_capabilities();
    for req in ir.input_requests.values() {
        mrtr::check_request(req, &caps)?;
    }
    Ok(())
}
