//! Typed tools and prompts: arguments and outputs are serde types, and a tool's `inputSchema` /
//! `outputSchema` are JSON Schema 2020-12 generated from them (schemars; REQUIREMENTS TOOL-03,
//! TOOL-05, TOOL-06, TOOL-07, PRM-02, JSS-01).
//!
//! Generated schemas take the same path as hand-written ones: [`ServerBuilder::tool`] checks them
//! against the 2020-12 metaschema and compiles them once (JSS-01…03), the engine validates the
//! arguments before the handler runs, and arguments that fail are answered exactly as for any
//! tool: an `isError` result naming the problem (TOOL-07). Arguments the schema accepts but serde
//! does not (a schema looser than the type) get that same result.
//!
//! ```
//! use mcpcore::{schemars, Server};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct AddArgs { a: f64, b: f64 }
//!
//! #[derive(Serialize, schemars::JsonSchema)]
//! struct AddOut { sum: f64 }
//!
//! let server = Server::builder("calc", "1.0.0")
//!     .typed_tool("add", "Add two numbers", |_ctx, args: AddArgs| async move {
//!         Ok(AddOut { sum: args.a + args.b })
//!     })
//!     .typed_tool("shout", "Upper-case the text", |_ctx, text: ShoutArgs| async move {
//!         Ok(text.text.to_uppercase()) // a String output is a text block, no outputSchema
//!     })
//!     .build()
//!     .expect("valid server");
//! # #[derive(Deserialize, schemars::JsonSchema)] struct ShoutArgs { text: String }
//! ```

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::future::Future;
use std::marker::PhantomData;

use super::handler::{BoxFuture, Handler, InputRequired, Outcome};
use super::{RequestContext, ServerBuilder};
use crate::error::HandlerError;
use crate::protocol::{CallToolResult, Tool};

/// The JSON Schema (2020-12, with `$schema`) of `T`, as schemars generates it, without the root
/// `title` schemars derives from the Rust type name (a model gains nothing from it).
pub fn schema_for<T: JsonSchema + ?Sized>() -> Value {
    let mut v: Value = schemars::SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .into();
    if let Some(o) = v.as_object_mut() {
        if o.get("title").and_then(Value::as_str) == Some(T::schema_name().as_ref()) {
            o.remove("title");
        }
    }
    v
}

/// True for a schema whose instances are JSON strings: such outputs are text, not structured.
fn is_text_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("string")
}

/// What a typed tool handler ([`tool_fn`], [`ServerBuilder::typed_tool`]) may return.
///
/// * any `T: Serialize + JsonSchema` — declared as the tool's `outputSchema` and returned as
///   `structuredContent` with its JSON mirrored in a text block (TOOL-06); a type that
///   serializes to a JSON string (`String`, `&'static str`, …) is instead one text block with
///   no `outputSchema`;
/// * [`CallToolResult`] — returned as built (tool-level errors: [`CallToolResult::error`]);
/// * [`InputRequired`] or [`Outcome`] — for multi round-trip tools (SEP-2322).
pub trait ToolOutput: Send + 'static {
    /// The `outputSchema` this output declares; `None` when it has none.
    fn output_schema() -> Option<Value>;
    /// The `tools/call` outcome. `structured` is `Self::output_schema().is_some()`, computed
    /// once when the handler is made.
    ///
    /// # Errors
    /// An internal error when the value cannot be serialized.
    fn into_outcome(self, structured: bool) -> Result<Outcome, HandlerError>;
}

impl<T: Serialize + JsonSchema + Send + 'static> ToolOutput for T {
    fn output_schema() -> Option<Value> {
        let schema = schema_for::<T>();
        (!is_text_schema(&schema)).then_some(schema)
    }
    fn into_outcome(self, structured: bool) -> Result<Outcome, HandlerError> {
        let v = serde_json::to_value(self).map_err(HandlerError::internal)?;
        let result = match (structured, v) {
            (true, v) => CallToolResult::structured(v),
            (false, Value::String(s)) => CallToolResult::text(s),
            (false, v) => CallToolResult::text(v.to_string()),
        };
        Ok(result.into())
    }
}

impl ToolOutput for CallToolResult {
    fn output_schema() -> Option<Value> {
        None
    }
    fn into_outcome(self, _structured: bool) -> Result<Outcome, HandlerError> {
        Ok(self.into())
    }
}

impl ToolOutput for InputRequired {
    fn output_schema() -> Option<Value> {
        None
    }
    fn into_outcome(self, _structured: bool) -> Result<Outcome, HandlerError> {
        Ok(self.into())
    }
}

impl ToolOutput for Outcome {
    fn output_schema() -> Option<Value> {
        None
    }
    fn into_outcome(self, _structured: bool) -> Result<Outcome, HandlerError> {
        Ok(self)
    }
}

/// The result for arguments a tool cannot take: `isError` so the model can correct them
/// (TOOL-07). Schema failures and typed-argument failures read the same; bindings whose own
/// schema library (a JavaScript Standard Schema, …) refuses arguments answer with it too.
pub fn invalid_arguments(tool: &str, reason: &str) -> Outcome {
    Outcome::Complete(json!({
        "content": [{"type": "text", "text": format!("Invalid arguments for tool {tool}: {reason}")}],
        "isError": true,
    }))
}

/// Deserialize tool or prompt arguments. An empty object also stands for "no arguments", so a
/// handler may take `()` or an `Option`.
fn parse_args<A: DeserializeOwned>(args: Value) -> Result<A, serde_json::Error> {
    let empty = args.as_object().is_some_and(serde_json::Map::is_empty);
    match serde_json::from_value(args) {
        Err(e) if empty => serde_json::from_value(Value::Null).map_err(|_| e),
        other => other,
    }
}

struct TypedTool<F, A, O> {
    f: F,
    structured: bool,
    _types: PhantomData<fn(A) -> O>,
}

impl<F, Fut, A, O> Handler for TypedTool<F, A, O>
where
    A: DeserializeOwned + Send + 'static,
    O: ToolOutput,
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
{
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let args = match parse_args::<A>(params) {
            Ok(a) => a,
            Err(e) => {
                let outcome = invalid_arguments(ctx.name().unwrap_or_default(), &e.to_string());
                return Box::pin(std::future::ready(Ok(outcome)));
            }
        };
        let fut = (self.f)(ctx, args);
        let structured = self.structured;
        Box::pin(async move { fut.await?.into_outcome(structured) })
    }
}

/// A tool handler taking typed arguments and returning a [`ToolOutput`]. Arguments that do not
/// deserialize into `A` are answered with the `isError` result of TOOL-07 and the handler does
/// not run. Pair it with [`Tool::typed`] (or use [`ServerBuilder::typed_tool`]) so the listed
/// schemas match the types.
pub fn tool_fn<A, O, F, Fut>(f: F) -> impl Handler
where
    A: DeserializeOwned + Send + 'static,
    O: ToolOutput,
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
{
    TypedTool {
        f,
        structured: O::output_schema().is_some(),
        _types: PhantomData,
    }
}

struct TypedPrompt<F, A>(F, PhantomData<fn(A)>);

impl<F, Fut, A, R> Handler for TypedPrompt<F, A>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Into<Outcome>,
{
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let args = match parse_args::<A>(params) {
            Ok(a) => a,
            Err(e) => {
                let name = ctx.name().unwrap_or_default();
                let err = HandlerError::invalid_params(format!(
                    "Invalid arguments for prompt {name}: {e}"
                ));
                return Box::pin(std::future::ready(Err(err)));
            }
        };
        let fut = (self.0)(ctx, args);
        Box::pin(async move { fut.await.map(Into::into) })
    }
}

/// A prompt handler taking its (string) arguments as a typed struct. Arguments that do not
/// deserialize are refused with -32602 (PRM-02) and the handler does not run.
pub fn prompt_fn<A, R, F, Fut>(f: F) -> impl Handler
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, HandlerError>> + Send + 'static,
    R: Into<Outcome>,
{
    TypedPrompt(f, PhantomData)
}

impl Tool {
    /// A tool whose `inputSchema` is generated from `In` and whose `outputSchema` is that of
    /// `Out` (none for text outputs; see [`ToolOutput`]). `In = ()` gives the recommended
    /// no-argument schema (TOOL-07). Set the description and the rest with the builder methods.
    pub fn typed<In: JsonSchema, Out: ToolOutput>(name: impl Into<String>) -> Self {
        let mut tool = Tool::new(name);
        let input = schema_for::<In>();
        if input.get("type").and_then(Value::as_str) != Some("null") {
            tool.input_schema = input;
        }
        tool.output_schema = Out::output_schema();
        tool
    }
}

impl ServerBuilder {
    /// Register a typed tool: `f` takes the arguments as `A` and returns a [`ToolOutput`]; the
    /// tool's schemas are generated from `A` and the output type ([`Tool::typed`]) and checked
    /// like hand-written ones. Annotate the argument type in the closure (`|ctx, args: A|`).
    #[must_use]
    pub fn typed_tool<A, O, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: ToolOutput,
        F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        self.tool(
            Tool::typed::<A, O>(name).description(description),
            tool_fn(f),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The first addend.
        a: f64,
        b: Option<u8>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Out {
        sum: f64,
    }

    #[test]
    fn generated_schemas_are_2020_12_objects_and_compile() {
        let t = Tool::typed::<Args, Out>("add");
        assert_eq!(
            t.input_schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(t.input_schema["type"], "object");
        assert_eq!(t.input_schema["required"], json!(["a"]));
        assert_eq!(
            t.input_schema["properties"]["a"]["description"],
            "The first addend."
        );
        assert!(t.input_schema.get("title").is_none());
        let output = t.output_schema.expect("structured output");
        assert_eq!(output["type"], "object");
        assert!(crate::schema::compile_input(&t.input_schema).is_ok());
        assert!(crate::schema::compile_output(&output).is_ok());
    }

    /// Drive one legacy session in process: initialize, then `method`.
    async fn call(server: &super::super::Server, method: &str, params: Value) -> Value {
        use crate::transport::NullOutbound;
        use std::sync::Arc;
        let s = server.new_session(super::super::SessionKind::Stdio, Arc::new(NullOutbound));
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}});
        for (id, m, p) in [(1, "initialize", init), (2, method, params)] {
            let reply = s
                .handle_request(
                    crate::Id::Num(id),
                    m.into(),
                    p.as_object().cloned(),
                    Arc::new(NullOutbound),
                )
                .await
                .expect("answered");
            if id == 2 {
                return match reply.result {
                    Ok(v) => v.into_value(),
                    Err(e) => json!({"error": e}),
                };
            }
        }
        unreachable!()
    }

    /// TOOL-07, PRM-02: arguments a schema accepts but the type does not are refused the same way
    /// as schema failures, and the handler does not run.
    #[tokio::test]
    async fn serde_failures_match_schema_failures() {
        let server = super::super::Server::builder("t", "1")
            .tool(
                Tool::new("loose").input_schema(json!({"type": "object"})),
                tool_fn(|_ctx, args: Args| async move { Ok(Out { sum: args.a }) }),
            )
            .prompt(
                crate::Prompt::new("p"),
                prompt_fn(|_ctx, _args: Args| async move { Ok(json!({"messages": []})) }),
            )
            .build()
            .expect("build");
        let r = call(
            &server,
            "tools/call",
            json!({"name": "loose", "arguments": {}}),
        )
        .await;
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(
            r["content"][0]["text"],
            "Invalid arguments for tool loose: missing field `a`"
        );
        let r = call(
            &server,
            "prompts/get",
            json!({"name": "p", "arguments": {}}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert_eq!(
            r["error"]["message"],
            "Invalid params: Invalid arguments for prompt p: missing field `a`"
        );
    }

    #[test]
    fn text_and_unit_shapes() {
        let t = Tool::typed::<(), String>("now");
        assert_eq!(t.input_schema, Tool::new("x").input_schema);
        assert!(t.output_schema.is_none());
        assert_eq!(parse_args::<()>(json!({})).ok(), Some(()));
        assert!(parse_args::<()>(json!({"x": 1})).is_err());
        let Ok(Outcome::Complete(v)) = "hi".to_owned().into_outcome(false) else {
            panic!("complete")
        };
        assert_eq!(v, json!({"content": [{"type": "text", "text": "hi"}]}));
        let Ok(Outcome::Complete(v)) = (Out { sum: 3.0 }).into_outcome(true) else {
            panic!("complete")
        };
        assert_eq!(v["structuredContent"], json!({"sum": 3.0}));
        assert_eq!(v["content"][0]["text"], r#"{"sum":3.0}"#);
    }
}
