//! MCP Apps on the server (REQUIREMENTS EXT-01, EXT-03; SEP-1865, ext-apps 2026-01-26):
//! registering `ui://` resources, linking tools to them, and advertising the extension.
//!
//! Every door (Rust, the C ABI's JSON definitions, the bindings) ends in `add_resource` /
//! `add_tool`, so the rules live here once:
//! - a `ui://` resource always has `mimeType: text/html;profile=mcp-app` (set when absent,
//!   refused when different), and its `resources/read` contents are completed with that type,
//!   the URI and the resource's `_meta.ui` when the handler left them out;
//! - the app MIME type on a non-`ui://` URI is refused (hosts only render `ui://` resources);
//! - a tool's `_meta.ui.resourceUri` must name a registered app resource ([`check_link`],
//!   at build time, since tools and resources may be registered in any order);
//! - once an app resource exists, `io.modelcontextprotocol/ui` is advertised in
//!   `capabilities.extensions` (both eras: the legacy schema has no `extensions` member but
//!   allows extra ones, and the ext-apps specification itself negotiates it in `initialize`;
//!   LC-04 Δ).
//!
//! The extension is served through the ordinary `resources/list`, `resources/read` and
//! `tools/list` paths; nothing here adds a method. Resource templates are left alone: the spec's
//! UI resources are predeclared (a tool links to one concrete URI), so a `ui://` template is not
//! an app resource and a tool cannot link to it.

use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::builder::{BuildError, ServerBuilder, ServerOptions};
use super::handler::{handler_fn, Handler, Outcome};
use super::registry::Registry;
use super::RequestContext;
use crate::error::HandlerError;
use crate::protocol::apps::{
    extension_settings, is_app_mime_type, is_ui_uri, ui_resource_uri, AppResourceMeta,
    APP_MIME_TYPE, UI_EXTENSION,
};
use crate::protocol::{Resource, Tool};
use crate::BoxFuture;

impl ServerBuilder {
    /// Register a static UI resource: `html` is served by `resources/read` as
    /// `text/html;profile=mcp-app`, with `meta` as `_meta.ui` on the listing and the contents.
    /// A URI that is not `ui://…`, or one already registered, is reported by
    /// [`ServerBuilder::build`].
    #[must_use]
    pub fn app_resource(
        self,
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<String>,
        meta: AppResourceMeta,
    ) -> Self {
        let uri = uri.into();
        let body = json!({"contents": [{"uri": uri, "text": html.into()}]});
        let handler = handler_fn(move |_ctx: RequestContext, _| {
            let body = body.clone();
            async move { Ok::<_, HandlerError>(body) }
        });
        self.app_resource_with(Resource::new(uri, name), meta, handler)
    }

    /// Register a UI resource whose HTML a handler produces (params `{}`; answer
    /// `{"contents": [{"text": "<!DOCTYPE html>…"}]}` — the URI, MIME type and `_meta.ui` are
    /// filled in). `resource` may set a title, description or icons; its `mimeType` must be
    /// absent or the app type.
    #[must_use]
    pub fn app_resource_with(
        self,
        mut resource: Resource,
        meta: AppResourceMeta,
        handler: impl Handler,
    ) -> Self {
        if !meta.is_empty() {
            set_meta_ui(&mut resource.meta, &meta);
        }
        // Naming the app type makes `prepare_resource` refuse a URI that is not `ui://`.
        if resource.mime_type.is_none() {
            resource.mime_type = Some(APP_MIME_TYPE.to_owned());
        }
        self.resource(resource, handler)
    }

    /// Register a tool linked to the UI resource `resource_uri` (`_meta.ui.resourceUri`); the
    /// build fails unless that app resource is registered too.
    #[must_use]
    pub fn app_tool(
        self,
        tool: Tool,
        resource_uri: impl Into<String>,
        handler: impl Handler,
    ) -> Self {
        self.tool(tool.with_ui(resource_uri), handler)
    }
}

/// Put `meta` under `_meta.ui`, keeping the other `_meta` keys.
fn set_meta_ui(slot: &mut Option<Value>, meta: &AppResourceMeta) {
    let m = slot.get_or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    if let (Some(o), Ok(v)) = (m.as_object_mut(), serde_json::to_value(meta)) {
        o.insert("ui".into(), v);
    }
}

fn refused(reason: String) -> BuildError {
    BuildError::App(reason)
}

/// Apply the app rules to a resource about to be registered; the handler of a `ui://` resource
/// comes back wrapped so its contents are completed.
///
/// # Errors
/// [`BuildError::App`]: a `ui://` resource with another MIME type, or the app MIME type on a
/// URI of another scheme.
pub(super) fn prepare_resource(
    resource: &mut Resource,
    handler: Arc<dyn Handler>,
) -> Result<Arc<dyn Handler>, BuildError> {
    let app_mime = resource.mime_type.as_deref().map(is_app_mime_type);
    if !is_ui_uri(&resource.uri) {
        if app_mime == Some(true) {
            return Err(refused(format!(
                "resource {}: the {APP_MIME_TYPE} MIME type needs a ui:// URI",
                resource.uri
            )));
        }
        return Ok(handler);
    }
    if app_mime == Some(false) {
        return Err(refused(format!(
            "resource {}: a ui:// resource must have mimeType {APP_MIME_TYPE}",
            resource.uri
        )));
    }
    resource.mime_type = Some(APP_MIME_TYPE.to_owned());
    let ui = resource
        .meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .filter(|u| u.is_object())
        .cloned();
    Ok(Arc::new(AppHandler {
        inner: handler,
        uri: resource.uri.clone(),
        ui,
    }))
}

/// Check every tool's `_meta.ui.resourceUri` against the registered app resources, and
/// advertise the extension when any app resource exists (unless the options already declare
/// it, which wins).
///
/// # Errors
/// [`BuildError::App`] naming the tool and its link.
pub(super) fn finish(options: &mut ServerOptions, registry: &Registry) -> Result<(), BuildError> {
    for t in registry.tools.iter() {
        check_link(&t.def, registry)?;
    }
    let any_app = registry.resources.iter().any(|r| {
        r.def
            .get("uri")
            .and_then(Value::as_str)
            .is_some_and(is_ui_uri)
    });
    if any_app && !options.extensions.contains_key(UI_EXTENSION) {
        options
            .extensions
            .insert(UI_EXTENSION.into(), extension_settings());
    }
    Ok(())
}

/// Check a tool definition's `_meta.ui.resourceUri` against the app resources of `registry`
/// (at build, and when a tool is added while serving).
///
/// # Errors
/// [`BuildError::App`] naming the tool and its link.
pub(super) fn check_link(tool_def: &Value, registry: &Registry) -> Result<(), BuildError> {
    let Some(link) = tool_def.get("_meta").and_then(ui_resource_uri) else {
        return Ok(());
    };
    let name = tool_def.get("name").and_then(Value::as_str).unwrap_or("");
    let registered = registry.resource(link).is_some_and(|r| {
        r.def
            .get("mimeType")
            .and_then(Value::as_str)
            .is_some_and(is_app_mime_type)
    });
    if !is_ui_uri(link) || !registered {
        return Err(refused(format!(
            "tool {name}: _meta.ui.resourceUri {link:?} is not a registered ui:// app resource"
        )));
    }
    Ok(())
}

/// A `ui://` resource's handler: completes each content item with the URI, the app MIME type
/// and the resource's `_meta.ui` when the handler left them out. A content item with another
/// MIME type is the server's bug: logged, and the reader gets a generic -32603.
struct AppHandler {
    inner: Arc<dyn Handler>,
    uri: String,
    ui: Option<Value>,
}

impl Handler for AppHandler {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let fut = self.inner.call(ctx, params);
        let uri = self.uri.clone();
        let ui = self.ui.clone();
        Box::pin(async move {
            let mut out = fut.await?.parsed();
            if let Outcome::Complete(v) = &mut out {
                complete_contents(v, &uri, ui.as_ref())?;
            }
            Ok(out)
        })
    }
}

fn complete_contents(v: &mut Value, uri: &str, ui: Option<&Value>) -> Result<(), HandlerError> {
    let Some(items) = v.get_mut("contents").and_then(Value::as_array_mut) else {
        return Ok(()); // the caller answers -32603 for a missing contents array
    };
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        item.entry("uri").or_insert_with(|| json!(uri));
        let mime = item
            .entry("mimeType")
            .or_insert_with(|| json!(APP_MIME_TYPE));
        if !mime.as_str().is_some_and(is_app_mime_type) {
            tracing::error!(uri, mime = %mime, "a ui:// resource handler answered another MIME type");
            return Err(HandlerError::internal(
                "ui:// resource contents with a MIME type other than the app type",
            ));
        }
        if let Some(ui) = ui {
            let meta = item.entry("_meta").or_insert_with(|| json!({}));
            if let Some(m) = meta.as_object_mut() {
                m.entry("ui").or_insert_with(|| ui.clone());
            }
        }
    }
    Ok(())
}
