use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Content block constructors (MISC-03). Blocks are plain JSON so extra fields pass through.
pub struct Content;

impl Content {
    /// `{"type":"text","text":…}`
    pub fn text(text: impl Into<String>) -> Value {
        json!({"type": "text", "text": text.into()})
    }
    /// `{"type":"image","data":base64,"mimeType":…}`
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Value {
        json!({"type": "image", "data": data_base64.into(), "mimeType": mime_type.into()})
    }
    /// `{"type":"audio","data":base64,"mimeType":…}`
    pub fn audio(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Value {
        json!({"type": "audio", "data": data_base64.into(), "mimeType": mime_type.into()})
    }
    /// A `resource_link` block.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Value {
        json!({"type": "resource_link", "uri": uri.into(), "name": name.into()})
    }
    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: &str,
        text: impl Into<String>,
    ) -> Value {
        json!({"type": "resource", "resource": {"uri": uri.into(), "mimeType": mime_type, "text": text.into()}})
    }
}

/// `CallToolResult` (TOOL-01).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Content blocks.
    pub content: Vec<Value>,
    /// Structured result (any JSON in 2026-07-28; an object in legacy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Marks a tool-level failure the model can read and correct.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl CallToolResult {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            ..Default::default()
        }
    }
    /// A tool-level error result with one text block (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            is_error: Some(true),
            ..Default::default()
        }
    }
    /// A structured result; the serialized JSON is also put in a text block (TOOL-06).
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        Self {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            ..Default::default()
        }
    }
    /// As JSON.
    pub fn into_value(self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({"content": []}))
    }
}
