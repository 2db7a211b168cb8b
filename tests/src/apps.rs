//! The MCP Apps fixture server (REQUIREMENTS EXT-03), shared by the `apps-server` stdio binary
//! and the in-process HTTP tests of `tests/apps.rs`.
//!
//! Resources: `ui://weather/dashboard` (static HTML with CSP, permissions and border
//! preference), `ui://weather/live` (HTML from a handler that leaves the MIME type out),
//! `docs://readme` (plain text), the template `ui://raw/{kind}` (answers `text/html` without the
//! app profile: what a misbehaving server sends, for the client's refusal).
//! Tools: `get_weather` (linked to the dashboard), `refresh` (app-only, linked to the live view),
//! `client_apps` (whether this request's client advertised MCP Apps).

use mcpcore::protocol::apps::{
    supports_apps, AppCsp, AppPermissions, AppResourceMeta, Requested, Visibility,
};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, RequestContext, Resource, ResourceTemplate, Server,
    Tool,
};
use serde_json::json;

/// The dashboard's HTML.
pub const DASHBOARD_HTML: &str = "<!DOCTYPE html><html><body><h1>Weather</h1></body></html>";

/// The dashboard's `_meta.ui`.
pub fn dashboard_meta() -> AppResourceMeta {
    AppResourceMeta::new()
        .csp(AppCsp {
            connect_domains: Some(vec!["https://api.weather.example".into()]),
            resource_domains: Some(vec!["https://cdn.example".into()]),
            ..AppCsp::default()
        })
        .permissions(AppPermissions {
            geolocation: Some(Requested {}),
            ..AppPermissions::default()
        })
        .prefers_border(true)
}

/// The fixture server.
pub fn server() -> Server {
    Server::builder("apps-fixture", "1")
        .app_resource(
            "ui://weather/dashboard",
            "weather_dashboard",
            DASHBOARD_HTML,
            dashboard_meta(),
        )
        .app_resource_with(
            Resource::new("ui://weather/live", "live_view").description("Live view"),
            AppResourceMeta::new().prefers_border(false),
            handler_fn(|_ctx, _| async {
                Ok::<_, HandlerError>(json!({"contents": [{"text": "<!DOCTYPE html><p>live</p>"}]}))
            }),
        )
        .resource(
            Resource::new("docs://readme", "readme").mime_type("text/plain"),
            handler_fn(|_ctx, _| async {
                Ok::<_, HandlerError>(json!({"contents": [
                    {"uri": "docs://readme", "mimeType": "text/plain", "text": "read me"}]}))
            }),
        )
        .resource_template(
            ResourceTemplate::new("ui://raw/{kind}", "raw"),
            handler_fn(|ctx: RequestContext, _| async move {
                let uri = ctx.name().unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(json!({"contents": [
                    {"uri": uri, "mimeType": "text/html", "text": "<p>plain html</p>"}]}))
            }),
        )
        .app_tool(
            Tool::new("get_weather")
                .description("Current weather")
                .input_schema(json!({"type": "object",
                    "properties": {"location": {"type": "string"}}})),
            "ui://weather/dashboard",
            handler_fn(|_ctx, _| async { Ok(CallToolResult::text("Sunny, 22°C")) }),
        )
        .tool(
            Tool::new("refresh")
                .with_ui("ui://weather/live")
                .ui_visibility(&[Visibility::App]),
            handler_fn(|_ctx, _| async { Ok(CallToolResult::text("refreshed")) }),
        )
        .tool(
            Tool::new("client_apps"),
            handler_fn(|ctx: RequestContext, _| async move {
                let on = supports_apps(&ctx.client_capabilities());
                Ok(CallToolResult::text(on.to_string()))
            }),
        )
        .build()
        .expect("the apps fixture builds")
}
