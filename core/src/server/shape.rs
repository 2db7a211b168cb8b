//! Result shaping for the language bindings (MCP 2025-11-25 / 2026-07-28 `CallToolResult`,
//! `GetPromptResult`, `ReadResourceResult`, `CompleteResult`): how a handler's plain return
//! value (a string, a JSON value, a list of content blocks, bytes with a MIME type) becomes the
//! result of its method, and how a binding registers an entry from its JSON definition.
//!
//! The rules live here once so Python, Node and the C layer cannot disagree: a binding only
//! turns its language's values into JSON (and bytes into base64) and names which reply it has
//! (a value to shape, a whole result, bytes).

use base64::Engine;
use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::builder::{BuildError, ServerBuilder};
use super::handler::Handler;
use crate::protocol::apps::{is_ui_uri, APP_MIME_TYPE};
use crate::protocol::{Prompt, Resource, ResourceTemplate};

/// The most values one `completion/complete` answer carries (CompleteResult: `values`, max 100).
pub const COMPLETION_MAX_VALUES: usize = 100;

/// The MIME type a text resource gets when its definition names none.
const TEXT_DEFAULT: &str = "text/plain";
/// The MIME type a binary resource gets when its definition names none.
const BLOB_DEFAULT: &str = "application/octet-stream";

const BLOCK_TYPES: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];
const RESULT_KEYS: [&str; 4] = ["content", "structuredContent", "isError", "_meta"];

fn text_block(text: String) -> Value {
    json!({"type": "text", "text": text})
}

fn is_block(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| BLOCK_TYPES.contains(&t))
}

/// A whole CallToolResult: only result keys, and `content` a list of content blocks.
fn is_whole_tool_result(o: &Map<String, Value>) -> bool {
    o.keys().all(|k| RESULT_KEYS.contains(&k.as_str()))
        && o.get("content")
            .and_then(Value::as_array)
            .is_some_and(|c| c.iter().all(is_block))
}

/// A tool's return value as a CallToolResult: `null` is no content, a string one text block, a
/// non-empty list of content blocks the content, a whole CallToolResult itself, an object
/// `structuredContent` with its JSON as text (TOOL-05 asks for both), anything else its JSON as
/// text.
#[must_use]
pub fn tool_result(value: Value) -> Value {
    match value {
        Value::Null => json!({"content": []}),
        Value::String(s) => json!({"content": [text_block(s)]}),
        Value::Array(items) if !items.is_empty() && items.iter().all(is_block) => {
            json!({"content": items})
        }
        Value::Object(o) if is_whole_tool_result(&o) => Value::Object(o),
        Value::Object(o) => {
            let v = Value::Object(o);
            json!({"content": [text_block(v.to_string())], "structuredContent": v})
        }
        other => json!({"content": [text_block(other.to_string())]}),
    }
}

/// A tool's own failure (a thrown `ToolError`) as an `isError` result the model reads
/// (TOOL-07: tool failures are results, not protocol errors).
#[must_use]
pub fn tool_error_result(message: String) -> Value {
    json!({"content": [text_block(message)], "isError": true})
}

/// Bytes as a content block: `image/*` an image block, `audio/*` an audio block (base64 `data`).
///
/// # Errors
/// The MIME type is not `image/*` or `audio/*`.
pub fn media_block(data: &[u8], mime_type: &str) -> Result<Value, String> {
    media_block_base64(
        base64::engine::general_purpose::STANDARD.encode(data),
        mime_type,
    )
}

fn media_block_base64(data: String, mime_type: &str) -> Result<Value, String> {
    let kind = mime_type
        .split_once('/')
        .map(|(k, _)| k.to_ascii_lowercase())
        .filter(|k| k == "image" || k == "audio")
        .ok_or_else(|| format!("a tool returns image/* or audio/* media, not {mime_type:?}"))?;
    Ok(json!({"type": kind, "data": data, "mimeType": mime_type}))
}

/// A prompt's return value as a GetPromptResult: a string is one user message, a list holds
/// messages (a string being a user message), an object is the whole result.
///
/// # Errors
/// Any other value.
pub fn prompt_result(value: Value) -> Result<Value, String> {
    let user = |s: String| json!({"role": "user", "content": text_block(s)});
    match value {
        Value::String(s) => Ok(json!({"messages": [user(s)]})),
        Value::Array(items) => {
            let messages: Vec<Value> = items
                .into_iter()
                .map(|m| match m {
                    Value::String(s) => user(s),
                    other => other,
                })
                .collect();
            Ok(json!({"messages": messages}))
        }
        v @ Value::Object(_) => Ok(v),
        _ => Err("a prompt returns a string, a list of messages or an object".into()),
    }
}

/// A completion handler's return value as a CompleteResult: a list is the candidate values, an
/// object the whole result. Over [`COMPLETION_MAX_VALUES`] values are cut to that many, with
/// `total` (the handler's, else how many it gave) and `hasMore: true`; a list also gets its
/// `total`. Values that are not strings become their JSON text.
#[must_use]
pub fn completion_result(value: Value) -> Value {
    let mut v = match value {
        Value::Array(values) => {
            let total = values.len();
            json!({"completion": {"values": values, "total": total, "hasMore": false}})
        }
        other => other,
    };
    let Some(c) = v.get_mut("completion").and_then(Value::as_object_mut) else {
        return v;
    };
    if let Some(values) = c.get_mut("values").and_then(Value::as_array_mut) {
        for x in values.iter_mut() {
            if !x.is_string() {
                *x = Value::String(x.to_string());
            }
        }
        let given = values.len();
        if given > COMPLETION_MAX_VALUES {
            values.truncate(COMPLETION_MAX_VALUES);
            c.entry("total").or_insert_with(|| json!(given));
            c.insert("hasMore".into(), Value::Bool(true));
        }
    }
    v
}

/// How a binding's replies become the result of one registered entry.
#[derive(Debug, Clone)]
pub enum ResultShape {
    /// `tools/call` ([`tool_result`]).
    Tool,
    /// `prompts/get` ([`prompt_result`]).
    Prompt,
    /// `resources/read` of a resource or template: the MIME type its definition names (the app
    /// type for a `ui://` resource that names none).
    Resource {
        /// The definition's `mimeType`.
        mime_type: Option<String>,
    },
    /// `completion/complete` ([`completion_result`]).
    Completion,
    /// Anything else (a tool's gate): the value as is.
    Raw,
}

impl ResultShape {
    /// The shape of an entry of `kind` (`"tool"`, `"prompt"`, `"resource"`,
    /// `"resource_template"`, `"completion"`, `"gate"`) registered with `def`.
    #[must_use]
    pub fn of(kind: &str, def: &Value) -> Self {
        match kind {
            "tool" => Self::Tool,
            "prompt" => Self::Prompt,
            "resource" | "resource_template" => {
                let mime = def.get("mimeType").and_then(Value::as_str);
                let ui = def
                    .get("uri")
                    .and_then(Value::as_str)
                    .is_some_and(is_ui_uri);
                Self::Resource {
                    mime_type: mime.or(ui.then_some(APP_MIME_TYPE)).map(str::to_owned),
                }
            }
            "completion" => Self::Completion,
            _ => Self::Raw,
        }
    }

    /// `value` as this entry's result; `uri` is the URI being read (resources).
    ///
    /// # Errors
    /// A value the method has no result for (a prompt returning a number).
    pub fn apply(&self, value: Value, uri: Option<&str>) -> Result<Value, String> {
        match self {
            Self::Tool => Ok(tool_result(value)),
            Self::Prompt => prompt_result(value),
            Self::Completion if value.is_array() || value.is_object() => {
                Ok(completion_result(value))
            }
            Self::Completion => {
                Err("a completion handler returns a list or a CompleteResult".into())
            }
            Self::Raw => Ok(value),
            Self::Resource { mime_type } => Ok(match value {
                v @ Value::Object(_) => v,
                other => {
                    let text = match other {
                        Value::String(s) => s,
                        v => v.to_string(),
                    };
                    let mime = mime_type.as_deref().unwrap_or(TEXT_DEFAULT);
                    json!({"contents": [{"uri": uri.unwrap_or_default(), "mimeType": mime, "text": text}]})
                }
            }),
        }
    }

    /// Bytes as this entry's result: a resource's blob, a tool's media block (`mime_type`, or
    /// the resource's own type).
    ///
    /// # Errors
    /// A tool's bytes without an `image/*` or `audio/*` type; bytes from a prompt or completion.
    pub fn apply_bytes(
        &self,
        data: &[u8],
        mime_type: Option<&str>,
        uri: Option<&str>,
    ) -> Result<Value, String> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(data);
        self.apply_base64(b64, mime_type, uri)
    }

    /// [`ResultShape::apply_bytes`] for bytes the binding already holds as base64 (a
    /// JavaScript `Buffer`'s `toString('base64')`).
    ///
    /// # Errors
    /// As [`ResultShape::apply_bytes`].
    pub fn apply_base64(
        &self,
        b64: String,
        mime_type: Option<&str>,
        uri: Option<&str>,
    ) -> Result<Value, String> {
        match self {
            Self::Tool => {
                let mime = mime_type.ok_or("a tool returning bytes needs a MIME type")?;
                Ok(json!({"content": [media_block_base64(b64, mime)?]}))
            }
            Self::Resource { mime_type: own } => {
                let mime = mime_type.or(own.as_deref()).unwrap_or(BLOB_DEFAULT);
                Ok(
                    json!({"contents": [{"uri": uri.unwrap_or_default(), "mimeType": mime, "blob": b64}]}),
                )
            }
            _ => Err("only tools and resources return bytes".into()),
        }
    }
}

impl ServerBuilder {
    /// Register an entry from its JSON definition, the one door the bindings use: `kind` is
    /// `"tool"` (optionally with a `gate` run before its task is created), `"prompt"`,
    /// `"resource"`, `"resource_template"` or `"completion"` (no definition; a later one
    /// replaces it). The definition is parsed by `Tool/Prompt/Resource/ResourceTemplate::
    /// from_json`, exactly as the C ABI does.
    ///
    /// # Errors
    /// An unknown kind, a refused definition, or a registration the builder refuses.
    pub fn add_json(
        &mut self,
        kind: &str,
        def: Value,
        handler: Arc<dyn Handler>,
        gate: Option<Arc<dyn Handler>>,
    ) -> Result<(), String> {
        let refused = |e: BuildError| e.to_string();
        match kind {
            "tool" => match gate {
                Some(g) => self.add_gated_tool_json(def, g, handler),
                None => self.add_tool_json(def, handler),
            }
            .map_err(refused),
            "prompt" => {
                let p = Prompt::from_json(def).map_err(|e| e.to_string())?;
                self.add_prompt(p, handler).map_err(refused)
            }
            "resource" => {
                let r = Resource::from_json(def).map_err(|e| e.to_string())?;
                self.add_resource(r, handler).map_err(refused)
            }
            "resource_template" => {
                let t = ResourceTemplate::from_json(def).map_err(|e| e.to_string())?;
                self.add_resource_template(t, handler).map_err(refused)
            }
            "completion" => {
                self.registry.completion = Some(handler);
                Ok(())
            }
            other => Err(format!("unknown entry kind {other:?}")),
        }
    }
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
