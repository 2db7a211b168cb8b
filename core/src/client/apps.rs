//! MCP Apps on the client (REQUIREMENTS EXT-01, EXT-03; SEP-1865, ext-apps 2026-01-26):
//! whether the server offers the extension, and reading a tool's UI resource with the checks a
//! host owes before rendering it (a `ui://` URI, the `text/html;profile=mcp-app` type).
//!
//! A tool's link is read with [`crate::Tool::ui_resource_uri`]; the client advertises the
//! extension when [`super::ClientOptions::apps`] is on.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use super::{CallOptions, Client, ClientError};
use crate::protocol::apps::{is_app_mime_type, is_ui_uri, supports_apps, AppResourceMeta};

/// A UI resource as read: its HTML and `_meta.ui`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AppContent {
    /// The URI of the content item.
    pub uri: String,
    /// The MIME type the server declared (the app type, compared loosely).
    pub mime_type: String,
    /// The HTML document (decoded from `blob` when the server sent base64).
    pub html: String,
    /// `_meta.ui` of the content item (CSP, permissions, domain, border), when sent.
    pub meta: Option<Value>,
    /// The raw `resources/read` result.
    pub raw: Value,
}

impl AppContent {
    /// The JSON form the bindings hand out: `{"uri", "mimeType", "html", "meta"}` (`meta` is
    /// `_meta.ui` or `null`).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "uri": self.uri,
            "mimeType": self.mime_type,
            "html": self.html,
            "meta": self.meta,
        })
    }

    /// `_meta.ui` parsed into its known fields (unknown ones are ignored).
    pub fn ui_meta(&self) -> Option<AppResourceMeta> {
        serde_json::from_value(self.meta.clone()?).ok()
    }
}

impl Client {
    /// Whether the server advertised `io.modelcontextprotocol/ui` with the app MIME type
    /// (in `capabilities.extensions`, or `experimental` for servers that predate it).
    pub fn server_supports_apps(&self) -> bool {
        supports_apps(&self.server_capabilities())
    }

    /// Read the UI resource `uri` (`resources/read`) and check it is an app.
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] for a URI that is not `ui://…` (nothing is sent);
    /// [`ClientError::Protocol`] when the result has no content for it, a MIME type other than
    /// `text/html;profile=mcp-app`, or neither UTF-8 `text` nor a base64 `blob`; otherwise as
    /// [`Client::read_resource`].
    pub async fn read_app_resource(&self, uri: &str) -> Result<AppContent, ClientError> {
        self.read_app_resource_with(uri, CallOptions::default())
            .await
    }

    /// [`Client::read_app_resource`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::read_app_resource`].
    pub async fn read_app_resource_with(
        &self,
        uri: &str,
        opts: CallOptions,
    ) -> Result<AppContent, ClientError> {
        if !is_ui_uri(uri) {
            return Err(ClientError::InvalidArgument(format!(
                "{uri:?} is not a ui:// URI (MCP Apps resources use the ui scheme)"
            )));
        }
        let read = self.read_resource_with(uri, opts).await?;
        app_content(uri, read.raw)
    }
}

/// Pick the content item for `uri` (or the only one) and check it.
pub(crate) fn app_content(uri: &str, raw: Value) -> Result<AppContent, ClientError> {
    let bad = |why: String| ClientError::Protocol(format!("UI resource {uri}: {why}"));
    let items = raw
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let item = items
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| items.first())
        .ok_or_else(|| bad("the result has no contents".into()))?;
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
    if !is_app_mime_type(mime) {
        return Err(bad(format!(
            "mimeType {mime:?} is not text/html;profile=mcp-app"
        )));
    }
    let html = if let Some(t) = item.get("text").and_then(Value::as_str) {
        t.to_owned()
    } else if let Some(b) = item.get("blob").and_then(Value::as_str) {
        let bytes = STANDARD
            .decode(b)
            .map_err(|_| bad("blob is not valid base64".into()))?;
        String::from_utf8(bytes).map_err(|_| bad("blob is not UTF-8 HTML".into()))?
    } else {
        return Err(bad("content has neither text nor blob".into()));
    };
    Ok(AppContent {
        uri: item
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or(uri)
            .to_owned(),
        mime_type: mime.to_owned(),
        html,
        meta: item.get("_meta").and_then(|m| m.get("ui")).cloned(),
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn picks_the_matching_item_and_decodes_blobs() {
        let raw = json!({"contents": [
            {"uri": "ui://other", "mimeType": "text/plain", "text": "x"},
            {"uri": "ui://a", "mimeType": "text/html; profile=mcp-app",
             "blob": STANDARD.encode("<p>hi</p>"), "_meta": {"ui": {"prefersBorder": false}}}
        ]});
        let c = app_content("ui://a", raw).expect("app content");
        assert_eq!(c.html, "<p>hi</p>");
        assert_eq!(c.ui_meta().and_then(|m| m.prefers_border), Some(false));
        assert_eq!(
            c.to_json(),
            json!({"uri": "ui://a", "mimeType": "text/html; profile=mcp-app",
                   "html": "<p>hi</p>", "meta": {"prefersBorder": false}})
        );
    }

    #[test]
    fn refuses_wrong_type_and_empty_results() {
        let wrong = json!({"contents": [{"uri": "ui://a", "mimeType": "text/html", "text": "x"}]});
        let e = app_content("ui://a", wrong).expect_err("wrong type");
        assert!(
            matches!(e, ClientError::Protocol(ref m) if m.contains("mimeType")),
            "{e}"
        );
        let e = app_content("ui://a", json!({"contents": []})).expect_err("empty");
        assert!(matches!(e, ClientError::Protocol(_)), "{e}");
        let bad = json!({"contents": [{"uri": "ui://a", "mimeType": "text/html;profile=mcp-app",
            "blob": "%%%"}]});
        assert!(app_content("ui://a", bad).is_err());
    }
}
