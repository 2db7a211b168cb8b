//! The JSON-level seam keeps what the typed calls learn (REQUIREMENTS HTTP-14, HTTP-15, HTTP-16,
//! TOOL-06, LOG-03). [`Client::request`] is what the C, Python and Node bindings call; it routes
//! the methods whose typed calls learn from results, or apply local state, through the same code
//! and returns the raw JSON:
//!
//! - `tools/list`: each listed tool's `x-mcp-header` declarations are learned, so later
//!   `tools/call` requests over HTTP carry its `Mcp-Param-*` headers (HTTP-15/16); tools whose
//!   declarations break HTTP-14 are dropped from the returned page with a warning; output schemas
//!   are remembered.
//! - `tools/call`: `structuredContent` is validated against the remembered output schema
//!   (TOOL-06), [`ClientError::OutputValidation`] on a mismatch.
//! - `logging/setLevel` on a 2026-07-28 connection becomes the per-request `logLevel`, as
//!   [`Client::set_log_level`] does (the era removed the method).
//!
//! Every other method (`prompts/*`, `resources/*`, `completion/complete`, custom methods) is sent
//! as is through the `input_required` driver, which is what the typed calls do too; a
//! `input_required` result no registered handler can fulfil is returned raw.

use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::peer::lock;
use super::{mrtr, CallOptions, Client, ClientError};
use crate::protocol::LoggingLevel;

fn is_input_required(v: &Value) -> bool {
    v.get("resultType").and_then(Value::as_str) == Some("input_required")
}

impl Client {
    /// [`Client::request`] after its argument checks.
    pub(super) async fn request_json(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        match method {
            "tools/list" => {
                let raw = self.drive_raw(method, params, opts).await?;
                Ok(self.learn_listed_tools(raw))
            }
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let raw = self.drive_raw(method, params, opts).await?;
                if let Some(name) = name.filter(|_| !is_input_required(&raw)) {
                    let is_error = raw.get("isError").and_then(Value::as_bool) == Some(true);
                    self.check_structured(&name, is_error, raw.get("structuredContent"))?;
                }
                Ok(raw)
            }
            "logging/setLevel" if self.is_modern() => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(LoggingLevel::parse)
                    .ok_or_else(|| {
                        ClientError::InvalidArgument("logging/setLevel needs a known level".into())
                    })?;
                self.use_modern_log_level(level);
                Ok(json!({}))
            }
            _ => self.drive_raw(method, params, opts).await,
        }
    }

    async fn drive_raw(
        &self,
        method: &str,
        params: Map<String, Value>,
        opts: &CallOptions,
    ) -> Result<Value, ClientError> {
        match mrtr::drive(self, method, params, opts).await {
            Err(ClientError::InputRequired(raw)) => Ok(raw),
            other => other,
        }
    }

    /// Learn every tool of a raw `tools/list` page; drop the ones [`Client::learn_tool`] refuses.
    fn learn_listed_tools(&self, mut raw: Value) -> Value {
        if let Some(tools) = raw.get_mut("tools").and_then(Value::as_array_mut) {
            tools.retain(|t| {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    return true;
                };
                let input = t.get("inputSchema").cloned().unwrap_or(Value::Null);
                self.learn_tool(name, &input, t.get("outputSchema"))
            });
        }
        raw
    }

    /// Learn one listed tool, for the typed and the JSON seam alike: over HTTP its `x-mcp-header`
    /// declarations (false when they break HTTP-14: the tool is dropped from the view, with a
    /// warning), and its output schema for validating `structuredContent` (TOOL-06).
    pub(super) fn learn_tool(
        &self,
        name: &str,
        input_schema: &Value,
        output_schema: Option<&Value>,
    ) -> bool {
        let transport = &self.inner.peer.transport;
        if transport.is_http() {
            if let Err(reason) = transport.learn_tool(name, input_schema) {
                tracing::warn!(tool = %name, %reason, "dropping a tool whose x-mcp-header annotations are invalid");
                return false;
            }
        }
        match output_schema {
            Some(s) => match crate::schema::compile_output(s) {
                Ok(v) => {
                    lock(&self.inner.output_schemas).insert(name.to_owned(), Arc::new(v));
                }
                Err(e) => {
                    tracing::warn!(tool = %name, error = %e, "cannot compile outputSchema; not validating it");
                }
            },
            None => {
                lock(&self.inner.output_schemas).remove(name);
            }
        }
        true
    }

    /// Validate a `tools/call` result's `structuredContent` against the tool's output schema when
    /// one is known from a listing and validation is on (TOOL-06); error results are not checked.
    ///
    /// # Errors
    /// [`ClientError::OutputValidation`].
    pub(super) fn check_structured(
        &self,
        name: &str,
        is_error: bool,
        structured: Option<&Value>,
    ) -> Result<(), ClientError> {
        if !self.inner.options.validate_structured_content || is_error {
            return Ok(());
        }
        let Some(v) = lock(&self.inner.output_schemas).get(name).cloned() else {
            return Ok(());
        };
        match structured {
            None => Err(ClientError::OutputValidation(format!(
                "tool {name} has an outputSchema but returned no structuredContent"
            ))),
            Some(sc) => v.validate(sc).map_err(ClientError::OutputValidation),
        }
    }

    /// The modern stand-in for `logging/setLevel`: the default per-request `logLevel` (logging is
    /// deprecated there; a warning is logged once).
    pub(super) fn use_modern_log_level(&self, level: LoggingLevel) {
        super::warn_once(
            &self.inner.warned_logging,
            "logging is deprecated in the modern era; using the per-request logLevel instead of logging/setLevel",
        );
        *lock(&self.inner.log_level) = Some(level);
    }
}
