//! MCP Apps wire vocabulary (REQUIREMENTS EXT-01, EXT-03; SEP-1865, ext-apps specification
//! 2026-01-26): the `io.modelcontextprotocol/ui` extension identifier, the app MIME type, the
//! `_meta.ui` shapes of a UI resource and of a tool, and the readers of those shapes.
//!
//! Behaviour (what a server refuses at build time, what a client checks when reading) lives in
//! `server/apps.rs` and `client/apps.rs`; this module only names and parses.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::Tool;

/// The extension identifier (EXT-03), key of `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The one MIME type the 2026-01-26 revision defines for UI resources.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The URI scheme every UI resource uses.
pub const UI_SCHEME: &str = "ui";

/// Whether `uri` is a `ui://` URI with something after the scheme. The scheme is compared
/// ASCII-case-insensitively (RFC 3986 §3.1: schemes are case-insensitive).
pub fn is_ui_uri(uri: &str) -> bool {
    uri.split_once("://")
        .is_some_and(|(scheme, rest)| scheme.eq_ignore_ascii_case(UI_SCHEME) && !rest.is_empty())
}

/// Whether `mime` is the app MIME type, ignoring ASCII case and blanks around the parameter
/// separator (`text/html; profile=mcp-app` names the same type, RFC 9110 §8.3.1).
pub fn is_app_mime_type(mime: &str) -> bool {
    let norm: String = mime
        .split(';')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(";");
    norm == APP_MIME_TYPE
}

/// The settings a client advertises for the extension (`{"mimeTypes": [...]}`), and the ones a
/// server advertises back once it registers an app resource.
pub fn extension_settings() -> Value {
    json!({ "mimeTypes": [APP_MIME_TYPE] })
}

/// Whether a capabilities object (client or server, either era) declares the UI extension with
/// the app MIME type. `extensions` is the SEP-2133 place; `experimental` is read too because
/// peers from before the extensions framework advertised it there (LC-04 Δ). Settings without
/// a `mimeTypes` list count as the HTML default the extension defines.
pub fn supports_apps(capabilities: &Value) -> bool {
    ["extensions", "experimental"].iter().any(|k| {
        capabilities
            .get(*k)
            .and_then(|e| e.get(UI_EXTENSION))
            .and_then(Value::as_object)
            .is_some_and(|s| match s.get("mimeTypes").and_then(Value::as_array) {
                Some(types) => types
                    .iter()
                    .any(|t| t.as_str().is_some_and(is_app_mime_type)),
                None => !s.contains_key("mimeTypes"),
            })
    })
}

/// An empty JSON object: how the spec spells a requested permission (`"camera": {}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requested {}

/// Content Security Policy origins a UI resource needs (`_meta.ui.csp`). Omitted lists mean
/// none: the host applies its restrictive default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppCsp {
    /// Origins for fetch/XHR/WebSocket (`connect-src`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for images, scripts, styles, fonts, media.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested iframes (`frame-src`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs (`base-uri`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
}

/// Browser permissions a UI resource requests (`_meta.ui.permissions`); a host may refuse them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppPermissions {
    /// Camera.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera: Option<Requested>,
    /// Microphone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub microphone: Option<Requested>,
    /// Geolocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Requested>,
    /// Clipboard write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<Requested>,
}

/// `_meta.ui` of a UI resource (listed and stamped on its `resources/read` contents).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AppResourceMeta {
    /// CSP origins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csp: Option<AppCsp>,
    /// Requested permissions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<AppPermissions>,
    /// A dedicated sandbox origin (format defined by each host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Ask the host for (`true`) or against (`false`) a visible border; `None` lets it decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl AppResourceMeta {
    /// No metadata (the host's defaults apply).
    pub fn new() -> Self {
        Self::default()
    }
    /// Set the CSP origins.
    #[must_use]
    pub fn csp(mut self, csp: AppCsp) -> Self {
        self.csp = Some(csp);
        self
    }
    /// Set the requested permissions.
    #[must_use]
    pub fn permissions(mut self, p: AppPermissions) -> Self {
        self.permissions = Some(p);
        self
    }
    /// Set the dedicated domain.
    #[must_use]
    pub fn domain(mut self, d: impl Into<String>) -> Self {
        self.domain = Some(d.into());
        self
    }
    /// Set the border preference.
    #[must_use]
    pub fn prefers_border(mut self, on: bool) -> Self {
        self.prefers_border = Some(on);
        self
    }
    /// Whether nothing is set (then no `_meta.ui` is sent).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// Who may call a tool linked to a UI (`_meta.ui.visibility`; default both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The agent sees and calls it.
    Model,
    /// The app of this server calls it.
    App,
}

impl Tool {
    /// Link this tool to the UI resource `uri` (`_meta.ui.resourceUri`), keeping any other
    /// `_meta` entries. [`crate::ServerBuilder::build`] refuses the tool unless `uri` is a
    /// registered `ui://` app resource.
    #[must_use]
    pub fn with_ui(self, uri: impl Into<String>) -> Self {
        self.set_ui("resourceUri", Value::String(uri.into()))
    }

    /// Restrict who may call this tool (`_meta.ui.visibility`): `[App]` hides it from the model.
    #[must_use]
    pub fn ui_visibility(self, who: &[Visibility]) -> Self {
        self.set_ui("visibility", json!(who))
    }

    fn set_ui(mut self, key: &str, v: Value) -> Self {
        let meta = self.meta.get_or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Some(m) = meta.as_object_mut() {
            let ui = m.entry("ui").or_insert_with(|| Value::Object(Map::new()));
            if !ui.is_object() {
                *ui = Value::Object(Map::new());
            }
            if let Some(u) = ui.as_object_mut() {
                u.insert(key.to_owned(), v);
            }
        }
        self
    }

    /// The UI resource this tool renders with: `_meta.ui.resourceUri`, or the deprecated flat
    /// `_meta["ui/resourceUri"]` that servers written against earlier drafts still send.
    pub fn ui_resource_uri(&self) -> Option<&str> {
        ui_resource_uri(self.meta.as_ref()?)
    }

    /// `_meta.ui.visibility` when set (absent means `[Model, App]`). Unknown entries are skipped.
    pub fn ui_visibility_of(&self) -> Option<Vec<Visibility>> {
        let list = self
            .meta
            .as_ref()?
            .get("ui")?
            .get("visibility")?
            .as_array()?;
        Some(
            list.iter()
                .filter_map(|v| serde_json::from_value(v.clone()).ok())
                .collect(),
        )
    }
}

/// [`Tool::ui_resource_uri`] of a tool in its `tools/list` JSON form (what the bindings hold).
pub fn tool_ui_resource_uri(tool: &Value) -> Option<&str> {
    ui_resource_uri(tool.get("_meta")?)
}

/// `_meta.ui.resourceUri` (or the deprecated flat key) of a tool's `_meta` object.
pub(crate) fn ui_resource_uri(meta: &Value) -> Option<&str> {
    meta.get("ui")
        .and_then(|u| u.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ui_uris_and_mime_types() {
        assert!(is_ui_uri("ui://weather/dashboard"));
        assert!(is_ui_uri("UI://x"));
        assert!(!is_ui_uri("ui://"));
        assert!(!is_ui_uri("https://x"));
        assert!(!is_ui_uri("ui:x"));
        assert!(is_app_mime_type("text/html;profile=mcp-app"));
        assert!(is_app_mime_type("Text/HTML; profile=mcp-app"));
        assert!(!is_app_mime_type("text/html"));
        assert!(!is_app_mime_type("text/html;profile=other"));
    }

    #[test]
    fn tool_links_keep_other_meta_and_read_back() {
        let t = Tool::new("t")
            .meta(json!({"x": 1}))
            .with_ui("ui://a/b")
            .ui_visibility(&[Visibility::App]);
        assert_eq!(
            t.meta,
            Some(json!({"x": 1, "ui": {"resourceUri": "ui://a/b", "visibility": ["app"]}}))
        );
        assert_eq!(t.ui_resource_uri(), Some("ui://a/b"));
        assert_eq!(t.ui_visibility_of(), Some(vec![Visibility::App]));
        let legacy = Tool::new("t").meta(json!({"ui/resourceUri": "ui://old"}));
        assert_eq!(legacy.ui_resource_uri(), Some("ui://old"));
        assert_eq!(Tool::new("t").ui_resource_uri(), None);
        let listed = serde_json::to_value(&t).expect("serializes");
        assert_eq!(tool_ui_resource_uri(&listed), Some("ui://a/b"));
        assert_eq!(tool_ui_resource_uri(&json!({"name": "t"})), None);
    }

    #[test]
    fn capability_reading_accepts_both_places() {
        assert!(supports_apps(
            &json!({"extensions": {UI_EXTENSION: extension_settings()}})
        ));
        assert!(supports_apps(&json!({"experimental": {UI_EXTENSION: {}}})));
        assert!(!supports_apps(
            &json!({"extensions": {UI_EXTENSION: {"mimeTypes": ["text/x"]}}})
        ));
        assert!(!supports_apps(&json!({"extensions": {}})));
        assert!(!supports_apps(&json!({"extensions": {UI_EXTENSION: true}})));
    }

    #[test]
    fn resource_meta_serializes_in_spec_shape() {
        let m = AppResourceMeta::new()
            .csp(AppCsp {
                connect_domains: Some(vec!["https://api.example".into()]),
                ..AppCsp::default()
            })
            .permissions(AppPermissions {
                clipboard_write: Some(Requested {}),
                ..AppPermissions::default()
            })
            .prefers_border(true);
        assert_eq!(
            serde_json::to_value(&m).expect("serializes"),
            json!({"csp": {"connectDomains": ["https://api.example"]},
                   "permissions": {"clipboardWrite": {}}, "prefersBorder": true})
        );
        assert!(AppResourceMeta::new().is_empty());
    }
}
