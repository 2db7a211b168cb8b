//! The one JSON-level seam every binding implements.
//!
//! A [`Handler`] gets a [`RequestContext`] and the params as a JSON value and returns a boxed future
//! of an [`Outcome`] or a [`HandlerError`]. What `params` holds depends on what is registered:
//! tools and prompts get their `arguments` object, resources get the template variables
//! (an empty object for an exact URI), completion and custom methods get the whole params object.

use serde_json::{Map, Value};
use std::future::Future;

use super::RequestContext;
use crate::error::HandlerError;
pub use crate::future::BoxFuture;

/// The handler seam: object-safe, JSON-level.
pub trait Handler: Send + Sync + 'static {
    /// Handle one request.
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>>;
}

/// A shared handler is a handler, so one registration can serve several names (and a binding can
/// pass the `Arc<dyn Handler>` it built) without an adapter.
impl<H: Handler + ?Sized> Handler for std::sync::Arc<H> {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        (**self).call(ctx, params)
    }
}

/// A boxed handler (`Box<dyn Handler>`) is a handler.
impl<H: Handler + ?Sized> Handler for Box<H> {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        (**self).call(ctx, params)
    }
}

/// What a handler produced.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A complete result object.
    Complete(Value),
    /// A complete result object as JSON text (what C handlers answer). Core sends the text as it
    /// is when the result needs no reshaping, and parses it when it does, so the rules are the
    /// same as for [`Outcome::Complete`].
    CompleteJson(Box<serde_json::value::RawValue>),
    /// More input is needed from the client (SEP-2322). Only `tools/call`, `prompts/get` and
    /// `resources/read` may return it.
    InputRequired(InputRequired),
}

/// Results compare by value, whichever form (tree or text) holds them.
impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        use super::Payload;
        match (self, other) {
            (Self::InputRequired(a), Self::InputRequired(b)) => a == b,
            (Self::Complete(a), Self::Complete(b)) => a == b,
            (Self::CompleteJson(a), Self::CompleteJson(b)) => {
                Payload::Json(a.clone()) == Payload::Json(b.clone())
            }
            (Self::Complete(v), Self::CompleteJson(raw))
            | (Self::CompleteJson(raw), Self::Complete(v)) => Payload::Json(raw.clone()) == *v,
            _ => false,
        }
    }
}

impl Outcome {
    /// The same outcome with a JSON-text result parsed into a tree: for the methods whose
    /// results core reshapes (prompts, resources, completions, task results).
    pub fn parsed(self) -> Self {
        match self {
            Self::CompleteJson(raw) => Self::Complete(super::Payload::Json(raw).into_value()),
            other => other,
        }
    }
}

/// An `input_required` outcome: requests for the client and/or state to carry to the retry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    /// Key → `{method, params}` for `elicitation/create`, `sampling/createMessage`, `roots/list`.
    pub input_requests: Map<String, Value>,
    /// Opaque state the handler reads back on the retry (sealed by the engine).
    pub request_state: Option<String>,
}

impl InputRequired {
    /// An empty outcome; add requests and/or state.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the client for `method` (`elicitation/create`, `sampling/createMessage`, `roots/list`)
    /// under `key`; the answer comes back in `inputResponses[key]`.
    #[must_use]
    pub fn request(mut self, key: impl Into<String>, method: &str, params: Option<Value>) -> Self {
        let mut req = Map::new();
        req.insert("method".into(), Value::String(method.to_owned()));
        if let Some(p) = params {
            req.insert("params".into(), p);
        }
        self.input_requests.insert(key.into(), Value::Object(req));
        self
    }
    /// An `elicitation/create` request (form mode unless `params.mode` says `url`).
    #[must_use]
    pub fn elicit(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "elicitation/create", Some(params))
    }
    /// A `sampling/createMessage` request.
    #[must_use]
    pub fn sample(self, key: impl Into<String>, params: Value) -> Self {
        self.request(key, "sampling/createMessage", Some(params))
    }
    /// A `roots/list` request.
    #[must_use]
    pub fn list_roots(self, key: impl Into<String>) -> Self {
        self.request(key, "roots/list", Some(Value::Object(Map::new())))
    }
    /// State to read back on the retry through `RequestContext::request_state`.
    #[must_use]
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

impl From<Value> for Outcome {
    fn from(v: Value) -> Self {
        Outcome::Complete(v)
    }
}

impl From<crate::protocol::CallToolResult> for Outcome {
    fn from(r: crate::protocol::CallToolResult) -> Self {
        Outcome::Complete(r.into_value())
    }
}

impl From<InputRequired> for Outcome {
    fn from(v: InputRequired) -> Self {
        Outcome::InputRequired(v)
    }
}

struct FnHandler<F>(F);

impl<F, Fut, R> Handler for FnHandler<F>
where
    F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Into<Outcome>,
{
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let fut = (self.0)(ctx, params);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// Wrap an async closure as a [`Handler`]. The closure returns `Result<R, HandlerError>` for any
/// `R: Into<Outcome>` ([`crate::CallToolResult`], [`crate::GetPromptResult`],
/// [`crate::ReadResourceResult`], a JSON [`Value`], [`InputRequired`], [`Outcome`]), so
/// `Ok(CallToolResult::text("x"))` needs no type annotation. For typed arguments see
/// [`crate::tool_fn`] and [`crate::prompt_fn`].
pub fn handler_fn<F, Fut, R>(f: F) -> impl Handler
where
    F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Into<Outcome>,
{
    FnHandler(f)
}

// The prompt and resource result builders are wire types (protocol/results.rs); their
// conversion into a handler outcome lives here so `protocol` never depends on `server`.
impl From<crate::protocol::GetPromptResult> for Outcome {
    fn from(r: crate::protocol::GetPromptResult) -> Self {
        Outcome::Complete(r.into_value())
    }
}

impl From<crate::protocol::ReadResourceResult> for Outcome {
    fn from(r: crate::protocol::ReadResourceResult) -> Self {
        Outcome::Complete(r.into_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::CallToolResult;
    use crate::server::test_support::{call_tool, legacy_session};
    use crate::{Server, Tool};
    use serde_json::json;
    use std::sync::Arc;

    fn register(h: impl Handler) -> Arc<dyn Handler> {
        Arc::new(h)
    }

    /// The forms the guide shows compile with no `Ok::<_, HandlerError>` annotation.
    #[test]
    fn closures_need_no_turbofish() {
        register(handler_fn(|_ctx, _args| async move {
            Ok(CallToolResult::text("x"))
        }));
        register(handler_fn(|_ctx, args: Value| async move {
            let n: u64 = serde_json::from_value(args["n"].clone())?;
            if n == 0 {
                return Err(HandlerError::invalid_params("n must be positive"));
            }
            Ok(json!({"n": n}))
        }));
        register(handler_fn(|ctx, _args| async move {
            ctx.cancelled().await;
            Err::<Value, _>(HandlerError::cancelled())
        }));
    }

    #[test]
    fn cancelled_is_not_an_internal_failure() {
        let e = HandlerError::cancelled().into_wire("tools/call");
        assert_eq!(e.code, crate::error::codes::INTERNAL_ERROR);
        assert_eq!(e.message, "Request cancelled");
    }

    /// One `Arc<dyn Handler>` serves two tools and the completion handler, and a
    /// `Box<dyn Handler>` registers as is: no adapter is needed for shared or boxed handlers.
    #[tokio::test]
    async fn shared_and_boxed_handlers_register_directly() {
        let shared: Arc<dyn Handler> = Arc::new(handler_fn(|ctx: RequestContext, _| async move {
            let name = ctx.name().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(CallToolResult::text(name))
        }));
        let boxed: Box<dyn Handler> = Box::new(handler_fn(|_, _| async {
            Ok::<_, HandlerError>(CallToolResult::text("boxed"))
        }));
        let server = Server::builder("t", "1")
            .tool(Tool::new("a"), shared.clone())
            .tool(Tool::new("b"), shared.clone())
            .tool(Tool::new("c"), boxed)
            .completion(shared)
            .build()
            .expect("build");
        let s = legacy_session(&server).await;
        for (i, (name, want)) in [("a", "a"), ("b", "b"), ("c", "boxed")]
            .into_iter()
            .enumerate()
        {
            let r = call_tool(&s, i as i64 + 1, name, serde_json::json!({}))
                .await
                .expect("result");
            assert_eq!(r["content"][0]["text"], want);
        }
    }
}
