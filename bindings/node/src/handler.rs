//! `JsHandler`: core's [`Handler`] seam implemented by calling a JavaScript function, and
//! `JsClientHandler`, the same for core's [`ClientHandler`].
//!
//! The registered function is `lib/`'s wrapper `invoke(call, method, name, requestId, params)`
//! (see `CallArgs`): it always returns a Promise (sync handlers included) that resolves to the
//! JSON text of `{result}`, `{error: {code, message, data}}` (a thrown `McpError`),
//! `{inputRequired: {inputRequests, requestState?}}` (an explicit `input_required` answer,
//! SEP-2322), `{invalid: reason}` (the tool's Standard Schema refused the arguments) or
//! `{failed: detail}` (any other throw; logged on the JavaScript side), and never rejects. Here
//! the call is queued on the JavaScript thread and the task awaits the Promise: no tokio worker
//! ever blocks on JavaScript. The functions are weak threadsafe functions, so registered
//! handlers alone never keep the process alive.

use std::sync::Arc;

use mcpcore::client::ClientHandler;
use mcpcore::server::{invalid_arguments, tool_error_result, ResultShape};
use mcpcore::{
    BoxFuture, ErrorObject, Handler, HandlerError, InputRequired, Outcome, RequestContext,
};
use napi::bindgen_prelude::{FnArgs, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::Status;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::context::{Call, Shared};
use crate::stdio::{call_direct, Direct, DirectFn};

/// What a server handler's wrapper is called with: the call's number (`contextOf` makes its
/// `NativeContext` when the handler asks), the method, the target name, the JSON-RPC id, and
/// the params as JSON text.
pub type CallArgs = (f64, String, Option<String>, Value, String);

/// `invoke(call, method, name, requestId, params) → Promise<Reply>` of a server handler.
pub type InvokeFn =
    ThreadsafeFunction<FnArgs<CallArgs>, Promise<Value>, FnArgs<CallArgs>, Status, false, true>;

/// `invoke(params) → Promise<Reply>` of a client callback.
pub type ClientInvokeFn = ThreadsafeFunction<Value, Promise<Value>, Value, Status, false, true>;

/// What the JavaScript wrapper resolves to.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Reply {
    Result(Value),
    /// A plain return value, shaped by core for the entry's kind.
    Value(Value),
    /// Bytes (base64) returned by a tool (with a MIME type) or a resource.
    #[serde(rename_all = "camelCase")]
    Bytes {
        data: String,
        #[serde(default)]
        mime_type: Option<String>,
    },
    /// A thrown `ToolError`: core's `isError` result.
    ToolError(String),
    Error {
        code: i64,
        message: String,
        #[serde(default)]
        data: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    InputRequired {
        input_requests: Map<String, Value>,
        #[serde(default)]
        request_state: Option<String>,
    },
    Invalid(String),
    Failed(String),
}

/// The wrapper's reply as core's outcome; `tool` names the tool for an `invalid` reply.
fn decode(v: Value, tool: Option<&str>) -> Result<Outcome, HandlerError> {
    decode_shaped(v, tool, &ResultShape::Raw)
}

/// [`decode`] for a server entry: a plain value or bytes get core's shape for its kind; `name`
/// is the tool's name or the URI being read.
fn decode_shaped(
    v: Value,
    name: Option<&str>,
    shape: &ResultShape,
) -> Result<Outcome, HandlerError> {
    let tool = name;
    // `lib/` sends the reply as JSON text (one string across N-API instead of an object walked
    // member by member); any other value is the reply object itself.
    let reply = match v {
        Value::String(text) => serde_json::from_str::<Reply>(&text),
        other => serde_json::from_value::<Reply>(other),
    };
    match reply {
        Ok(Reply::Result(r)) => Ok(Outcome::Complete(r)),
        Ok(Reply::Value(v)) => shape
            .apply(v, name)
            .map(Outcome::Complete)
            .map_err(HandlerError::internal),
        Ok(Reply::ToolError(m)) => Ok(Outcome::Complete(tool_error_result(m))),
        Ok(Reply::Bytes { data, mime_type }) => shape
            .apply_base64(data, mime_type.as_deref(), name)
            .map(Outcome::Complete)
            .map_err(HandlerError::internal),
        Ok(Reply::InputRequired {
            input_requests,
            request_state,
        }) => Ok(Outcome::InputRequired(InputRequired {
            input_requests,
            request_state,
        })),
        // TOOL-07: the same `isError` result core gives arguments its JSON Schema refuses.
        Ok(Reply::Invalid(reason)) => Ok(invalid_arguments(tool.unwrap_or_default(), &reason)),
        Ok(Reply::Error {
            code,
            message,
            data,
        }) => {
            let mut e = ErrorObject::new(code, message);
            if let Some(d) = data {
                e = e.with_data(d);
            }
            Err(HandlerError::Rpc(e))
        }
        Ok(Reply::Failed(detail)) => Err(HandlerError::internal(detail)),
        Err(e) => Err(HandlerError::internal(format!(
            "the handler wrapper sent a malformed reply: {e}"
        ))),
    }
}

/// One registered JavaScript function: `invoke` from any thread (a threadsafe call, awaited),
/// `direct` on the JavaScript thread while it serves stdio (see [`crate::stdio`]).
pub struct JsHandler {
    pub invoke: Arc<InvokeFn>,
    pub direct: Option<Arc<DirectFn>>,
    /// How core shapes the entry's plain values (`{value}` / `{bytes}` replies).
    pub shape: Arc<ResultShape>,
}

/// Start the JavaScript call: directly when this thread is inside a stdio `feed` (no hand-off;
/// a synchronous handler's reply is ready at once), else through the threadsafe function.
async fn start(
    invoke: &InvokeFn,
    direct: Option<&DirectFn>,
    args: CallArgs,
) -> Result<Direct, HandlerError> {
    let args = match direct {
        Some(d) => match call_direct(d, args) {
            Ok(r) => {
                return r.map_err(|e| HandlerError::internal(format!("calling the handler: {e}")))
            }
            Err(args) => args,
        },
        None => args,
    };
    invoke
        .call_async(FnArgs::from(args))
        .await
        .map(Direct::Later)
        .map_err(|e| HandlerError::internal(format!("calling the handler: {e}")))
}

impl Handler for JsHandler {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let invoke = self.invoke.clone();
        let direct = self.direct.clone();
        let shape = self.shape.clone();
        Box::pin(async move {
            let shared = Shared::new(ctx.clone());
            // Core may also end a request by dropping this future (a modern HTTP client that
            // disconnects, CAN-04): the guard then aborts `ctx.signal` and releases the context.
            let mut ended = EndGuard {
                call: Call::register(shared.clone()),
                shared,
                finished: false,
            };
            // The params go as JSON text for `JSON.parse` (one string across N-API, not an
            // object built member by member).
            let args = (
                ended.call.id as f64,
                ctx.method().to_owned(),
                ctx.name().map(str::to_owned),
                ctx.id().to_value(),
                params.to_string(),
            );
            let run = async {
                let v = match start(&invoke, direct.as_deref(), args).await? {
                    Direct::Ready(v) => v,
                    Direct::Later(promise) => promise.await.map_err(|e| {
                        HandlerError::internal(format!("the handler rejected: {e}"))
                    })?,
                };
                decode_shaped(v, ctx.name(), &shape)
            };
            let r = tokio::select! {
                r = run => r,
                () = ctx.cancelled() => {
                    ended.shared.abort();
                    Err(HandlerError::cancelled())
                }
            };
            ended.finished = true;
            r
        })
    }
}

/// Ends a call however its future ends: run to completion (the context and the abort callback
/// are released) or dropped half-way (the handler is told through its abort callback first).
struct EndGuard {
    /// The call's entry in the table `contextOf` reads: gone with the guard.
    call: Call,
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.abort();
        }
        self.shared.release();
    }
}

/// A client-side callback (`onElicitation`, …).
pub struct JsClientHandler {
    pub invoke: Arc<ClientInvokeFn>,
}

impl ClientHandler for JsClientHandler {
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        let invoke = self.invoke.clone();
        Box::pin(async move {
            let promise = invoke
                .call_async(params)
                .await
                .map_err(|_| ErrorObject::internal())?;
            let v = promise.await.map_err(|_| ErrorObject::internal())?;
            match decode(v, None) {
                Ok(Outcome::Complete(v)) => Ok(v),
                Err(e) => Err(mcpcore::client::callback_error(e)),
                Ok(_) => Err(ErrorObject::internal()),
            }
        })
    }
}
