//! Results of `prompts/get` (PRM-01) and `resources/read` (RES-01), with builders. Content blocks
//! and resource contents stay plain JSON so extra fields (annotations, `_meta`) pass through.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::content::Content;

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `"user"`
    User,
    /// `"assistant"`
    Assistant,
}

/// One message of a prompt: a role and one content block (MISC-03).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// The speaker.
    pub role: Role,
    /// One content block (see [`Content`]).
    pub content: Value,
}

impl PromptMessage {
    /// A message with any content block.
    pub fn new(role: Role, content: Value) -> Self {
        Self { role, content }
    }
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, Content::text(text))
    }
    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, Content::text(text))
    }
}

/// `GetPromptResult` (PRM-01): an optional description and the messages.
///
/// ```
/// use mcpcore::{Content, GetPromptResult, Role};
/// let r = GetPromptResult::new()
///     .description("A code review")
///     .user("Review this function.")
///     .message(Role::User, Content::embedded_text("file:///a.rs", "text/x-rust", "fn a() {}"))
///     .assistant("Looking at it now.");
/// assert_eq!(r.messages.len(), 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description of the prompt as instantiated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl GetPromptResult {
    /// No messages yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Set the description.
    #[must_use]
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
    /// Add a message with any content block (text, image, audio, resource link, embedded).
    #[must_use]
    pub fn message(mut self, role: Role, content: Value) -> Self {
        self.messages.push(PromptMessage::new(role, content));
        self
    }
    /// Add a user message with one text block.
    #[must_use]
    pub fn user(self, text: impl Into<String>) -> Self {
        self.message(Role::User, Content::text(text))
    }
    /// Add an assistant message with one text block.
    #[must_use]
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.message(Role::Assistant, Content::text(text))
    }
    /// Set `_meta`.
    #[must_use]
    pub fn meta(mut self, m: Value) -> Self {
        self.meta = Some(m);
        self
    }
    /// As JSON.
    pub fn into_value(self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({"messages": []}))
    }
}

/// `ReadResourceResult` (RES-01): text or blob contents, each naming its URI.
///
/// ```
/// use mcpcore::ReadResourceResult;
/// let r = ReadResourceResult::text("demo://readme", "text/plain", "hello")
///     .and_blob("demo://logo", "image/png", "iVBORw0KGgo=");
/// assert_eq!(r.contents[1]["blob"], "iVBORw0KGgo=");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// `TextResourceContents` / `BlobResourceContents` objects.
    pub contents: Vec<Value>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ReadResourceResult {
    /// No contents yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// One text contents `{uri, mimeType, text}`.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::new().and_text(uri, mime_type, text)
    }
    /// One blob contents `{uri, mimeType, blob}` (`blob` is base64).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob_base64: impl Into<String>,
    ) -> Self {
        Self::new().and_blob(uri, mime_type, blob_base64)
    }
    /// Add text contents.
    #[must_use]
    pub fn and_text(
        mut self,
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        self.contents
            .push(json!({"uri": uri.into(), "mimeType": mime_type.into(), "text": text.into()}));
        self
    }
    /// Add blob contents (`blob` is base64).
    #[must_use]
    pub fn and_blob(
        mut self,
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob_base64: impl Into<String>,
    ) -> Self {
        self.contents.push(
            json!({"uri": uri.into(), "mimeType": mime_type.into(), "blob": blob_base64.into()}),
        );
        self
    }
    /// Set `_meta`.
    #[must_use]
    pub fn meta(mut self, m: Value) -> Self {
        self.meta = Some(m);
        self
    }
    /// As JSON.
    pub fn into_value(self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({"contents": []}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes() {
        let p = GetPromptResult::new()
            .description("d")
            .user("hi")
            .message(Role::Assistant, Content::image("AAAA", "image/png"));
        assert_eq!(
            p.into_value(),
            json!({"description": "d", "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
            ]})
        );
        let r =
            ReadResourceResult::text("a://x", "text/plain", "t").and_blob("a://y", "b/c", "AA==");
        assert_eq!(
            r.into_value(),
            json!({"contents": [
                {"uri": "a://x", "mimeType": "text/plain", "text": "t"},
                {"uri": "a://y", "mimeType": "b/c", "blob": "AA=="},
            ]})
        );
    }
}
