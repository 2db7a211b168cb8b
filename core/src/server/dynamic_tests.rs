//! Checks of changes made while serving that need no wire: refusals are as precise as at build,
//! handles outlive their server safely, the JSON door serves every kind, and announcements
//! without a runtime are made at once.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use super::ItemKind;
use crate::server::test_support::{call_tool, legacy_session, request};
use crate::server::{BuildError, ChangeSink, ServerChange};
use crate::{handler_fn, CallToolResult, Handler, HandlerError, Server, Tool};

fn ok() -> Arc<dyn Handler> {
    Arc::new(handler_fn(|_ctx, _a: Value| async {
        Ok::<_, HandlerError>(CallToolResult::text("ok"))
    }))
}

#[derive(Default)]
struct Count(AtomicUsize);
impl ChangeSink for Count {
    fn on_change(&self, _c: ServerChange<'_>) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst);
        1
    }
}

#[test]
fn kinds_not_advertised_are_refused() {
    let server = Server::builder("s", "1").build().expect("server");
    let e = server.add_tool(Tool::new("t"), ok()).expect_err("refused");
    assert!(matches!(e, BuildError::NotAdvertised("tools")), "{e}");
    let e = server
        .add_json(ItemKind::Prompt, json!({"name": "p"}), ok())
        .expect_err("refused");
    assert!(matches!(e, BuildError::NotAdvertised("prompts")), "{e}");
    // A server with one tool at build advertises tools, and so may add more.
    let server = Server::builder("s", "1")
        .tool(Tool::new("a"), ok())
        .build()
        .expect("server");
    assert!(server.add_tool(Tool::new("b"), ok()).is_ok());
}

#[test]
fn registrations_are_checked_as_at_build() {
    let server = Server::builder("s", "1").dynamic().build().expect("server");
    let bad_schema = Tool::new("t").input_schema(json!({"type": "nope"}));
    assert!(matches!(
        server.add_tool(bad_schema, ok()),
        Err(BuildError::Schema { .. })
    ));
    assert!(matches!(
        server.add_tool(Tool::new("a\0b"), ok()),
        Err(BuildError::Name { what: "tool", .. })
    ));
    let bad_header = Tool::new("h").input_schema(json!({"type": "object",
        "properties": {"x": {"type": "object", "x-mcp-header": "X"}}}));
    assert!(matches!(
        server.add_tool(bad_header, ok()),
        Err(BuildError::McpHeader { .. })
    ));
    let e = server
        .add_json(
            ItemKind::ResourceTemplate,
            json!({"uriTemplate": "x://{", "name": "t"}),
            ok(),
        )
        .expect_err("unparsable template");
    assert!(matches!(e, BuildError::Template { .. }), "{e}");
    let e = server
        .add_json(ItemKind::Resource, json!({"uri": 7}), ok())
        .expect_err("not a resource");
    assert!(
        matches!(e, BuildError::Option(ref m) if m.starts_with("resource:")),
        "{e}"
    );
    let e = server
        .add_json(
            ItemKind::Tool,
            json!({"name": "t", "inputSchema": {"type": "object"}, "taskSupport": "optional"}),
            ok(),
        )
        .expect_err("tasks are off");
    assert!(e.to_string().contains("tasks are off"), "{e}");
    let linked = Tool::new("app").with_ui("ui://missing");
    assert!(matches!(
        server.add_tool(linked, ok()),
        Err(BuildError::App(_))
    ));
    // Nothing refused was registered.
    assert!(!server.remove_tool("t") && !server.remove_tool("app"));
}

#[tokio::test]
async fn json_door_serves_every_kind_and_handles_outlive_the_server() {
    let server = Server::builder("s", "1").dynamic().build().expect("server");
    let t = server
        .add_json(
            ItemKind::Tool,
            json!({"name": "t", "inputSchema": {"type": "object"}}),
            ok(),
        )
        .expect("tool");
    assert_eq!((t.kind(), t.key()), (ItemKind::Tool, "t"));
    for (kind, def, key) in [
        (ItemKind::Prompt, json!({"name": "p"}), "p"),
        (
            ItemKind::Resource,
            json!({"uri": "x://r", "name": "r"}),
            "x://r",
        ),
        (
            ItemKind::ResourceTemplate,
            json!({"uriTemplate": "x://{id}", "name": "t"}),
            "x://{id}",
        ),
    ] {
        let h = server.add_json(kind, def, ok()).expect("added");
        assert!(h.disable() && h.enable() && h.remove(), "{kind:?}");
        assert!(!server.remove(kind, key), "{kind:?} removed once");
    }
    assert_eq!(
        ItemKind::parse("resourceTemplate"),
        Some(ItemKind::ResourceTemplate)
    );
    assert_eq!(ItemKind::parse("tools"), None);
    let s = legacy_session(&server).await;
    let r = call_tool(&s, 1, "t", json!({})).await.expect("called");
    assert_eq!(r["content"][0]["text"], "ok");
    drop(s);
    drop(server);
    assert!(!t.disable() && !t.remove(), "the server is gone");
}

/// Outside any runtime the change is announced at once, once per change.
#[test]
fn without_a_runtime_changes_are_announced_at_once() {
    let server = Server::builder("s", "1").dynamic().build().expect("server");
    let count = Arc::new(Count::default());
    server.add_change_sink(Arc::downgrade(&count) as Weak<dyn ChangeSink>);
    server.add_tool(Tool::new("a"), ok()).expect("a");
    assert_eq!(count.0.load(Ordering::SeqCst), 1);
    assert!(server.disable_tool("a"));
    assert!(server.disable_tool("a"), "still registered");
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        2,
        "no change, no announcement"
    );
    assert!(!server.enable_tool("nope"));
    assert_eq!(count.0.load(Ordering::SeqCst), 2);
}

/// Handlers added while serving are bounded by `max_concurrency` like those of the build.
#[tokio::test]
async fn added_handlers_take_the_concurrency_bound() {
    let server = Server::builder("s", "1")
        .dynamic()
        .options(|o| o.max_concurrency = Some(1))
        .build()
        .expect("server");
    let slots = server.inner.dynamic.slots.clone().expect("bounded");
    // Inside the handler the server's only slot is taken (by this very call).
    let seen = slots.clone();
    let probe = handler_fn(move |_ctx, _a: Value| {
        let free = seen.available_permits();
        async move { Ok::<_, HandlerError>(CallToolResult::text(free.to_string())) }
    });
    server.add_tool(Tool::new("t"), probe).expect("t");
    let s = legacy_session(&server).await;
    let r = call_tool(&s, 1, "t", json!({})).await.expect("called");
    assert_eq!(r["content"][0]["text"], "0", "the call held the slot");
    assert_eq!(slots.available_permits(), 1, "and gave it back");
    let listed = request(&s, 2, "tools/list", json!({})).await.expect("list");
    assert_eq!(listed["tools"][0]["name"], "t");
}

/// `ServerBuilder::visibility`: a hidden item is out of its list and unknown to every method
/// that names it, per principal; lists become private to caches (CACHE-01).
#[tokio::test]
async fn visibility_hides_items_per_principal() {
    use crate::auth::Principal;
    let read = |_ctx, _a: Value| async {
        Ok::<_, HandlerError>(json!({"contents": [{"uri": "x", "text": "t"}]}))
    };
    let server = Server::builder("s", "1")
        .dynamic()
        .visibility(|kind, key, who| {
            let admin = who.is_some_and(|p| p.scopes.iter().any(|s| s == "admin"));
            admin || !(key.starts_with("admin") || kind == ItemKind::ResourceTemplate)
        })
        .completion(handler_fn(|_ctx, _a: Value| async {
            Ok::<_, HandlerError>(json!({"completion": {"values": []}}))
        }))
        .build()
        .expect("server");
    server
        .add_tool(Tool::new("admin_reset"), ok())
        .expect("tool");
    server.add_tool(Tool::new("echo"), ok()).expect("tool");
    let p = json!({"name": "admin_prompt"});
    server.add_json(ItemKind::Prompt, p, ok()).expect("prompt");
    let r = json!({"uri": "admin://r", "name": "r"});
    server
        .add_json(ItemKind::Resource, r, Arc::new(handler_fn(read)))
        .expect("resource");
    let t = json!({"uriTemplate": "doc://{id}", "name": "doc"});
    server
        .add_json(ItemKind::ResourceTemplate, t, Arc::new(handler_fn(read)))
        .expect("template");

    let guest = legacy_session(&server).await;
    let admin = legacy_session(&server).await;
    admin.bind_principal(Some(Arc::new(Principal::new("a", vec!["admin".into()]))));
    let names = |v: &Value, k: &str| -> usize { v[k].as_array().map_or(0, Vec::len) };
    for (s, n) in [(&guest, 0), (&admin, 1)] {
        let tools = request(s, 1, "tools/list", json!({})).await.expect("list");
        assert_eq!(names(&tools, "tools"), 1 + n, "{tools}");
        let prompts = request(s, 2, "prompts/list", json!({}))
            .await
            .expect("list");
        assert_eq!(names(&prompts, "prompts"), n);
        let res = request(s, 3, "resources/list", json!({}))
            .await
            .expect("list");
        assert_eq!(names(&res, "resources"), n);
        let tpl = request(s, 4, "resources/templates/list", json!({}))
            .await
            .expect("list");
        assert_eq!(names(&tpl, "resourceTemplates"), n);
    }
    let unknown = |r: Result<Value, crate::ErrorObject>| r.expect_err("hidden").code;
    assert_eq!(
        unknown(call_tool(&guest, 5, "admin_reset", json!({})).await),
        -32602
    );
    let get = json!({"name": "admin_prompt"});
    assert_eq!(
        unknown(request(&guest, 6, "prompts/get", get).await),
        -32602
    );
    for uri in ["admin://r", "doc://7"] {
        let r = request(&guest, 7, "resources/read", json!({ "uri": uri })).await;
        assert_eq!(unknown(r), -32602, "{uri}");
        let r = request(&admin, 8, "resources/read", json!({ "uri": uri })).await;
        assert!(r.is_ok(), "{uri}: {r:?}");
    }
    let c = json!({"ref": {"type": "ref/prompt", "name": "admin_prompt"},
        "argument": {"name": "a", "value": ""}});
    assert_eq!(
        unknown(request(&guest, 9, "completion/complete", c.clone()).await),
        -32602
    );
    assert!(request(&admin, 9, "completion/complete", c).await.is_ok());
    assert!(call_tool(&admin, 10, "admin_reset", json!({}))
        .await
        .is_ok());
}
