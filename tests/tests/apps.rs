//! MCP Apps (REQUIREMENTS EXT-01, EXT-03; SEP-1865) over real stdio pipes and real HTTP, both
//! eras: the extension advertised by both sides, `ui://` resources listed and read with the app
//! MIME type and `_meta.ui`, tools linked through `_meta.ui.resourceUri`, invalid registrations
//! refused at build time, and the client readers. Every message the raw peers receive, and
//! every message the Rust client exchanges (through `tap`), is validated against its era's
//! schema.

use mcpcore::client::{Client, ClientBuilder, ClientError, ConnectMode, StderrMode, StdioCommand};
use mcpcore::protocol::apps::{AppResourceMeta, Visibility, APP_MIME_TYPE, UI_EXTENSION};
use mcpcore::server::BuildError;
use mcpcore::transport::http::{serve, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Resource, Server, Tool};
use mcpcore_tests::apps::{dashboard_meta, server, DASHBOARD_HTML};
use mcpcore_tests::client::{tap_args, TapLog};
use mcpcore_tests::http::McpHttp;
use mcpcore_tests::{Era, StdioPeer};
use serde_json::{json, Value};
use std::time::Duration;

const APPS_SERVER: &str = env!("CARGO_BIN_EXE_apps-server");
const TAP: &str = env!("CARGO_BIN_EXE_tap");
const BOUND: Duration = Duration::from_secs(20);

fn ui_caps() -> Value {
    json!({"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}})
}

/// The `resources/list` entry for `uri`.
fn listed<'a>(r: &'a Value, uri: &str) -> &'a Value {
    r["result"]["resources"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["uri"] == uri))
        .unwrap_or_else(|| panic!("{uri} not listed in {r}"))
}

fn tool<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["result"]["tools"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == name))
        .unwrap_or_else(|| panic!("{name} not listed in {r}"))
}

/// What both eras must show about the fixture: listing, reading, tool links.
fn check_listing_reading_links(list: &Value, dash: &Value, live: &Value, tools: &Value) {
    let d = listed(list, "ui://weather/dashboard");
    assert_eq!(d["mimeType"], APP_MIME_TYPE);
    assert_eq!(d["_meta"]["ui"], json!(dashboard_meta()));
    assert_eq!(listed(list, "docs://readme")["mimeType"], "text/plain");

    let c = &dash["result"]["contents"][0];
    assert_eq!(c["mimeType"], APP_MIME_TYPE, "{dash}");
    assert_eq!(c["text"], DASHBOARD_HTML);
    assert_eq!(
        c["_meta"]["ui"]["csp"]["connectDomains"],
        json!(["https://api.weather.example"])
    );
    assert_eq!(c["_meta"]["ui"]["permissions"], json!({"geolocation": {}}));
    // The handler left URI and type out; core fills them and the resource's `_meta.ui`.
    let l = &live["result"]["contents"][0];
    assert_eq!(l["uri"], "ui://weather/live", "{live}");
    assert_eq!(l["mimeType"], APP_MIME_TYPE);
    assert_eq!(l["_meta"]["ui"], json!({"prefersBorder": false}));

    assert_eq!(
        tool(tools, "get_weather")["_meta"]["ui"],
        json!({"resourceUri": "ui://weather/dashboard"})
    );
    assert_eq!(
        tool(tools, "refresh")["_meta"]["ui"],
        json!({"resourceUri": "ui://weather/live", "visibility": ["app"]})
    );
    assert!(tool(tools, "client_apps").get("_meta").is_none());
}

fn ui_settings(caps: &Value) -> &Value {
    &caps["extensions"][UI_EXTENSION]
}

/// EXT-03, legacy stdio: the extension in the `initialize` result (the legacy schema allows the
/// extra `extensions` member, LC-04 Δ), the client's advertisement read by the server, and the
/// ordinary resource and tool paths.
#[tokio::test]
async fn ext03_legacy_stdio_wire() {
    let mut p = StdioPeer::spawn(APPS_SERVER.as_ref(), &[]);
    let init = p.initialize("2025-11-25", ui_caps()).await;
    assert_eq!(
        ui_settings(&init["result"]["capabilities"]),
        &json!({"mimeTypes": [APP_MIME_TYPE]}),
        "{init}"
    );
    let list = p.request("resources/list", json!({})).await;
    let dash = p
        .request("resources/read", json!({"uri": "ui://weather/dashboard"}))
        .await;
    let live = p
        .request("resources/read", json!({"uri": "ui://weather/live"}))
        .await;
    let tools = p.request("tools/list", json!({})).await;
    check_listing_reading_links(&list, &dash, &live, &tools);
    let r = p.call_tool("client_apps", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "true");

    // A client that did not advertise it is seen as such.
    let mut plain = StdioPeer::spawn(APPS_SERVER.as_ref(), &[]);
    plain.initialize("2025-11-25", json!({})).await;
    let r = plain.call_tool("client_apps", json!({})).await;
    assert_eq!(r["result"]["content"][0]["text"], "false");
}

/// EXT-03, modern stdio: the extension in `server/discover`, the per-request advertisement in
/// the envelope's `clientCapabilities.extensions`.
#[tokio::test]
async fn ext03_modern_stdio_wire() {
    let mut p = StdioPeer::spawn(APPS_SERVER.as_ref(), &[]);
    p.era = Era::Modern;
    let d = p.modern("server/discover", json!({}), json!({})).await;
    assert_eq!(
        ui_settings(&d["result"]["capabilities"]),
        &json!({"mimeTypes": [APP_MIME_TYPE]}),
        "{d}"
    );
    let list = p.modern("resources/list", json!({}), ui_caps()).await;
    let dash = p
        .modern(
            "resources/read",
            json!({"uri": "ui://weather/dashboard"}),
            ui_caps(),
        )
        .await;
    let live = p
        .modern(
            "resources/read",
            json!({"uri": "ui://weather/live"}),
            ui_caps(),
        )
        .await;
    let tools = p.modern("tools/list", json!({}), ui_caps()).await;
    check_listing_reading_links(&list, &dash, &live, &tools);
    for (caps, want) in [(ui_caps(), "true"), (json!({}), "false")] {
        let r = p
            .modern("tools/call", json!({"name": "client_apps"}), caps)
            .await;
        assert_eq!(r["result"]["content"][0]["text"], want);
    }
}

/// EXT-03 over Streamable HTTP, both eras on one listener.
#[tokio::test]
async fn ext03_http_both_eras() {
    let l = serve(
        server(),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let mut h = McpHttp::new(l.local_addr());
    let init = h.initialize().await;
    assert_eq!(
        ui_settings(&init.last()["result"]["capabilities"]),
        &json!({"mimeTypes": [APP_MIME_TYPE]})
    );
    let list = h.legacy(1, "resources/list", json!({})).await;
    let dash = h
        .legacy(
            2,
            "resources/read",
            json!({"uri": "ui://weather/dashboard"}),
        )
        .await;
    let live = h
        .legacy(3, "resources/read", json!({"uri": "ui://weather/live"}))
        .await;
    let tools = h.legacy(4, "tools/list", json!({})).await;
    check_listing_reading_links(list.last(), dash.last(), live.last(), tools.last());

    let d = h.modern(5, "server/discover", json!({})).await;
    assert!(ui_settings(&d.last()["result"]["capabilities"]).is_object());
    let list = h.modern(6, "resources/list", json!({})).await;
    let dash = h
        .modern(
            7,
            "resources/read",
            json!({"uri": "ui://weather/dashboard"}),
        )
        .await;
    let live = h
        .modern(8, "resources/read", json!({"uri": "ui://weather/live"}))
        .await;
    let tools = h.modern(9, "tools/list", json!({})).await;
    check_listing_reading_links(list.last(), dash.last(), live.last(), tools.last());
}

fn tapped(log: &TapLog) -> StdioCommand {
    StdioCommand::new(TAP)
        .args(tap_args(&log.path, APPS_SERVER.as_ref(), &[]))
        .stderr(StderrMode::Null)
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f).await.expect("within bound")
}

/// The client readers against a connected client (either transport, either era).
async fn check_client_readers(c: &Client, advertised: bool) {
    assert!(c.server_supports_apps());
    let tools = bounded(c.list_all_tools()).await.expect("tools");
    let find = |n: &str| tools.iter().find(|t| t.name == n).expect("tool listed");
    assert_eq!(
        find("get_weather").ui_resource_uri(),
        Some("ui://weather/dashboard")
    );
    assert_eq!(
        find("refresh").ui_visibility_of(),
        Some(vec![Visibility::App])
    );
    assert_eq!(find("client_apps").ui_resource_uri(), None);

    let uri = find("get_weather").ui_resource_uri().expect("link");
    let app = bounded(c.read_app_resource(uri)).await.expect("app");
    assert_eq!(app.html, DASHBOARD_HTML);
    assert_eq!(app.ui_meta(), Some(dashboard_meta()));
    let live = bounded(c.read_app_resource("ui://weather/live"))
        .await
        .expect("live");
    assert_eq!(
        live.ui_meta(),
        Some(AppResourceMeta::new().prefers_border(false))
    );

    let e = bounded(c.read_app_resource("docs://readme"))
        .await
        .expect_err("not ui://");
    assert!(matches!(e, ClientError::InvalidArgument(_)), "{e}");
    let e = bounded(c.read_app_resource("ui://raw/page"))
        .await
        .expect_err("wrong type");
    assert!(
        matches!(e, ClientError::Protocol(ref m) if m.contains("text/html")),
        "{e}"
    );
    let r = bounded(c.call_tool("client_apps", json!({})))
        .await
        .expect("call");
    assert_eq!(r.content[0]["text"], advertised.to_string());
}

fn builder(mode: ConnectMode, apps: bool) -> ClientBuilder {
    Client::builder().mode(mode).configure(|o| o.apps = apps)
}

/// EXT-03 client over stdio, both eras: the `apps` option advertises the extension (in
/// `initialize` and in every envelope), the readers work, and everything validates.
#[tokio::test]
async fn ext03_client_stdio_both_eras() {
    for (mode, era) in [
        (ConnectMode::Legacy, Era::Legacy),
        (ConnectMode::Modern, Era::Modern),
    ] {
        for apps in [true, false] {
            let log = TapLog::new("apps");
            let c = bounded(builder(mode, apps).connect_stdio(tapped(&log)))
                .await
                .expect("connect");
            check_client_readers(&c, apps).await;
            c.close().await;
            log.validate(era);
            let first = log
                .messages()
                .into_iter()
                .find(|(d, m)| *d == 'C' && m.get("method").is_some())
                .map(|(_, m)| m)
                .expect("a client request");
            let caps = match era {
                Era::Legacy => first["params"]["capabilities"].clone(),
                Era::Modern => {
                    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].clone()
                }
            };
            assert_eq!(
                ui_settings(&caps).is_object(),
                apps,
                "{mode:?} apps={apps}: {first}"
            );
        }
    }
}

/// EXT-03 client over HTTP, both eras.
#[tokio::test]
async fn ext03_client_http_both_eras() {
    let l = serve(
        server(),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let url = format!("http://{}/mcp", l.local_addr());
    for mode in [ConnectMode::Legacy, ConnectMode::Modern] {
        let c = bounded(builder(mode, true).connect_http(&url, Default::default()))
            .await
            .expect("connect");
        check_client_readers(&c, true).await;
        c.close().await;
    }
}

fn noop() -> impl mcpcore::Handler {
    handler_fn(|_ctx, _| async { Ok::<_, HandlerError>(CallToolResult::text("x")) })
}

fn app_error(b: mcpcore::ServerBuilder) -> String {
    match b.build() {
        Err(BuildError::App(m)) => m,
        Err(e) => panic!("expected an MCP Apps refusal, got {e}"),
        Ok(_) => panic!("expected an MCP Apps refusal, the build succeeded"),
    }
}

/// EXT-03: registrations a host could not render are refused when the server is built, naming
/// what is wrong; a server without app resources advertises nothing.
#[test]
fn ext03_invalid_registrations_refused() {
    let html = "<!DOCTYPE html>";
    let m = app_error(Server::builder("s", "1").app_tool(Tool::new("t"), "ui://missing", noop()));
    assert!(m.contains("tool t") && m.contains("ui://missing"), "{m}");
    // Linked to a registered resource that is not an app.
    let m = app_error(
        Server::builder("s", "1")
            .resource(Resource::new("docs://a", "a"), noop())
            .tool(Tool::new("t").with_ui("docs://a"), noop()),
    );
    assert!(m.contains("docs://a"), "{m}");
    let m = app_error(Server::builder("s", "1").app_resource(
        "https://example/x",
        "x",
        html,
        AppResourceMeta::new(),
    ));
    assert!(m.contains("ui://"), "{m}");
    let m = app_error(
        Server::builder("s", "1")
            .resource(Resource::new("ui://x", "x").mime_type("text/plain"), noop()),
    );
    assert!(m.contains(APP_MIME_TYPE), "{m}");
    // The linked resource may be registered after the tool.
    let ok = Server::builder("s", "1")
        .app_tool(Tool::new("t"), "ui://later", noop())
        .app_resource("ui://later", "later", html, AppResourceMeta::new())
        .build();
    assert!(ok.is_ok());
    // A plain `resource` registration of a ui:// URI is an app resource too (the C ABI and the
    // bindings come this way).
    let ok = Server::builder("s", "1")
        .resource(Resource::new("ui://plain", "p"), noop())
        .tool(Tool::new("t").with_ui("ui://plain"), noop())
        .build();
    assert!(ok.is_ok());
}

/// EXT-01: the extension appears only once an app resource exists.
#[tokio::test]
async fn ext03_no_app_resource_no_advertisement() {
    let s = Server::builder("s", "1")
        .resource(Resource::new("docs://a", "a"), noop())
        .build()
        .expect("build");
    let l = serve(
        s,
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let mut h = McpHttp::new(l.local_addr());
    let init = h.initialize().await;
    assert!(init.last()["result"]["capabilities"]
        .get("extensions")
        .is_none());
}
