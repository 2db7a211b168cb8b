//! Servers that change while serving, over real HTTP in both eras: tools, prompts, resources and
//! resource templates added, replaced, removed, enabled and disabled on a running server; each
//! change announced with `list_changed` to legacy sessions (their GET stream) and to
//! `subscriptions/listen` streams, coalesced; in-flight calls of a removed tool finish; list
//! cursors keep working. Every message is validated against the schema of its era.
//!
//! The tests run on `#[tokio::test]`'s single-threaded runtime: changes the test makes without
//! awaiting are all made before the server's announcement task runs, which is what makes the
//! coalescing count exact.

use mcpcore::server::Server;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Prompt, Resource, ResourceTemplate, Tool};
use mcpcore_tests::http::{check, modern_headers, HttpReply, McpHttp, WAIT};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

async fn start(page_size: Option<usize>) -> (Server, HttpListener) {
    let server = Server::builder("dynamic", "1")
        .dynamic()
        .page_size(page_size)
        .build()
        .expect("server");
    let addr = "127.0.0.1:0".parse().expect("addr");
    let listener = serve(server.clone(), addr, HttpOptions::default())
        .await
        .expect("listen");
    (server, listener)
}

fn says(text: &'static str) -> impl mcpcore::Handler {
    handler_fn(move |_ctx, _args: Value| async move {
        Ok::<_, HandlerError>(CallToolResult::text(text))
    })
}

/// A legacy session with its GET stream open (past the priming event), so every later
/// notification is on it.
async fn legacy_with_stream(l: &HttpListener) -> (McpHttp, HttpReply) {
    let mut c = McpHttp::new(l.local_addr());
    let init = c.initialize().await;
    let caps = &init.last()["result"]["capabilities"];
    // `dynamic()`: every kind is advertised, with listChanged, though nothing is registered.
    assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
    assert_eq!(caps["prompts"]["listChanged"], true, "{caps}");
    assert_eq!(caps["resources"]["listChanged"], true, "{caps}");
    let mut g = c.get(None).await;
    assert_eq!(g.status, 200);
    let prime = tokio::time::timeout(WAIT, g.next_event()).await;
    assert!(prime.expect("priming in time").is_some());
    (c, g)
}

async fn next_on(r: &mut HttpReply, era: Era, method: Option<&str>) -> Value {
    let e = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("an event in time")
        .expect("an event");
    let v: Value = serde_json::from_str(&e.data).expect("json");
    check(era, &v, method);
    v
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {list}"))
        .iter()
        .filter_map(|t| t[field].as_str().map(str::to_owned))
        .collect()
}

async fn legacy_result(c: &McpHttp, id: i64, method: &str, params: Value) -> Value {
    let ex = c.legacy(id, method, params).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    ex.last().clone()
}

/// Legacy era: adding, disabling, enabling and removing a tool each send
/// `notifications/tools/list_changed` on the session's GET stream, `tools/list` follows, and a
/// disabled or removed tool is called with the very error of a tool never registered.
#[tokio::test]
async fn legacy_tool_changes_are_announced_and_listed() {
    let (server, l) = start(None).await;
    let (c, mut g) = legacy_with_stream(&l).await;
    let late = server
        .add_tool(Tool::new("late"), says("hello"))
        .expect("add");
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let list = legacy_result(&c, 1, "tools/list", json!({})).await;
    assert_eq!(names(&list["result"], "tools", "name"), ["late"]);
    let r = legacy_result(&c, 2, "tools/call", json!({"name": "late"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "hello");
    let unknown = legacy_result(&c, 3, "tools/call", json!({"name": "never"})).await;
    assert_eq!(unknown["error"]["code"], -32602);

    assert!(late.disable());
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let list = legacy_result(&c, 4, "tools/list", json!({})).await;
    assert!(names(&list["result"], "tools", "name").is_empty());
    let e = legacy_result(&c, 5, "tools/call", json!({"name": "late"})).await;
    assert_eq!(e["error"]["code"], unknown["error"]["code"]);
    assert_eq!(e["error"]["message"], "Invalid params: Unknown tool: late");
    // Disabling again changes nothing and announces nothing: the next event is the prompt's.
    assert!(server.disable_tool("late"));
    server
        .add_prompt(Prompt::new("mark"), says("x"))
        .expect("marker");
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/prompts/list_changed");

    assert!(server.enable_tool("late"));
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let r = legacy_result(&c, 6, "tools/call", json!({"name": "late"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "hello");

    // Replacing keeps the name and serves the new handler.
    server
        .add_tool(Tool::new("late"), says("v2"))
        .expect("replace");
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let r = legacy_result(&c, 7, "tools/call", json!({"name": "late"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "v2");

    assert!(late.remove());
    assert!(!server.remove_tool("late"), "already gone");
    let n = next_on(&mut g, Era::Legacy, None).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let e = legacy_result(&c, 8, "tools/call", json!({"name": "late"})).await;
    assert_eq!(e["error"]["message"], "Invalid params: Unknown tool: late");
    let list = legacy_result(&c, 9, "tools/list", json!({})).await;
    assert!(names(&list["result"], "tools", "name").is_empty());
    l.shutdown().await;
}

async fn listen_all(c: &McpHttp) -> HttpReply {
    let params = json!({"_meta": envelope(json!({})), "notifications": {
        "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}});
    let msg =
        json!({"jsonrpc": "2.0", "id": "dyn", "method": "subscriptions/listen", "params": params});
    let mut r = c
        .post_raw(
            &modern_headers("subscriptions/listen", None),
            msg.to_string().as_bytes(),
        )
        .await;
    assert_eq!(r.status, 200);
    let ack = next_on(&mut r, Era::Modern, Some("subscriptions/listen")).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
    r
}

async fn modern_result(c: &McpHttp, id: i64, method: &str, params: Value) -> Value {
    let ex = c.modern(id, method, params).await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    ex.last().clone()
}

/// Modern era: prompts, resources and templates added and changed while serving reach a
/// `subscriptions/listen` stream as their list changes, and their lists, `prompts/get` and
/// `resources/read` follow.
#[tokio::test]
async fn modern_listen_hears_prompt_resource_and_template_changes() {
    let (server, l) = start(None).await;
    let c = McpHttp::new(l.local_addr());
    let mut s = listen_all(&c).await;
    let listen = Some("subscriptions/listen");

    server
        .add_prompt(
            Prompt::new("hi"),
            handler_fn(|_ctx, _a: Value| async {
                Ok::<_, HandlerError>(json!({"messages": [{"role": "user",
                    "content": {"type": "text", "text": "hi there"}}]}))
            }),
        )
        .expect("prompt");
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/prompts/list_changed");
    let list = modern_result(&c, 1, "prompts/list", json!({})).await;
    assert_eq!(names(&list["result"], "prompts", "name"), ["hi"]);
    let got = modern_result(&c, 2, "prompts/get", json!({"name": "hi"})).await;
    assert_eq!(got["result"]["messages"][0]["content"]["text"], "hi there");

    let read = |text: &'static str| {
        handler_fn(move |_ctx, _v: Value| async move {
            Ok::<_, HandlerError>(json!({"contents": [{"uri": "x://doc", "text": text}]}))
        })
    };
    server
        .add_resource(Resource::new("x://doc", "doc"), read("doc"))
        .expect("resource");
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/resources/list_changed");
    let list = modern_result(&c, 3, "resources/list", json!({})).await;
    assert_eq!(names(&list["result"], "resources", "uri"), ["x://doc"]);
    let r = modern_result(&c, 4, "resources/read", json!({"uri": "x://doc"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "doc");

    server
        .add_resource_template(
            ResourceTemplate::new("x://item/{id}", "item"),
            handler_fn(|_ctx, v: Value| async move {
                let id = v["id"].as_str().unwrap_or_default().to_owned();
                Ok::<_, HandlerError>(
                    json!({"contents": [{"uri": format!("x://item/{id}"), "text": id}]}),
                )
            }),
        )
        .expect("template");
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/resources/list_changed");
    let list = modern_result(&c, 5, "resources/templates/list", json!({})).await;
    assert_eq!(
        names(&list["result"], "resourceTemplates", "uriTemplate"),
        ["x://item/{id}"]
    );
    let r = modern_result(&c, 6, "resources/read", json!({"uri": "x://item/7"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "7");

    // Disabled: absent from the list, and read as an unknown resource (RES-02).
    assert!(server.disable_resource("x://doc"));
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/resources/list_changed");
    let list = modern_result(&c, 7, "resources/list", json!({})).await;
    assert!(names(&list["result"], "resources", "uri").is_empty());
    let e = modern_result(&c, 8, "resources/read", json!({"uri": "x://doc"})).await;
    assert_eq!(e["error"]["code"], -32602);
    assert_eq!(e["error"]["data"]["uri"], "x://doc");

    assert!(server.remove_resource_template("x://item/{id}"));
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/resources/list_changed");
    let e = modern_result(&c, 9, "resources/read", json!({"uri": "x://item/7"})).await;
    assert_eq!(e["error"]["code"], -32602);

    assert!(server.disable_prompt("hi"));
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/prompts/list_changed");
    let e = modern_result(&c, 10, "prompts/get", json!({"name": "hi"})).await;
    assert_eq!(e["error"]["message"], "Invalid params: Unknown prompt: hi");
    // A tool change reaches the same stream.
    server.add_tool(Tool::new("t"), says("t")).expect("tool");
    let n = next_on(&mut s, Era::Modern, listen).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    l.shutdown().await;
}

/// A hundred `add_tool` calls in a row send one `tools/list_changed`, on a legacy GET stream
/// and on a listen stream alike: the two events after them are that one and the prompt change
/// made right after the hundred (in either order), and the next one is the resource change made
/// once both were seen, not a second tool change.
#[tokio::test]
async fn a_hundred_changes_send_one_list_changed() {
    let (server, l) = start(None).await;
    let (c, g) = legacy_with_stream(&l).await;
    let s = listen_all(&McpHttp::new(l.local_addr())).await;
    let mut streams = [
        (g, Era::Legacy, None),
        (s, Era::Modern, Some("subscriptions/listen")),
    ];
    for i in 0..100 {
        server
            .add_tool(Tool::new(format!("t{i}")), says("x"))
            .expect("add");
    }
    server
        .add_prompt(Prompt::new("marker"), says("x"))
        .expect("marker");
    for (stream, era, method) in &mut streams {
        let mut seen = Vec::new();
        for _ in 0..2 {
            let n = next_on(stream, *era, *method).await;
            seen.push(n["method"].as_str().unwrap_or_default().to_owned());
        }
        seen.sort();
        assert_eq!(
            seen,
            [
                "notifications/prompts/list_changed",
                "notifications/tools/list_changed"
            ],
            "{era:?}"
        );
    }
    server
        .add_resource(Resource::new("x://r", "r"), says("x"))
        .expect("resource");
    for (stream, era, method) in &mut streams {
        let n = next_on(stream, *era, *method).await;
        assert_eq!(
            n["method"], "notifications/resources/list_changed",
            "one tools/list_changed for the hundred additions ({era:?})"
        );
    }
    let list = legacy_result(&c, 1, "tools/list", json!({})).await;
    assert_eq!(names(&list["result"], "tools", "name").len(), 100);
    l.shutdown().await;
}

/// A call running when its tool is removed (or replaced) finishes with the handler it started
/// with; calls made after the removal get the unknown-tool error, and after a re-registration
/// the new handler.
#[tokio::test]
async fn in_flight_call_of_a_removed_tool_completes() {
    let (server, l) = start(None).await;
    let entered = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(AtomicBool::new(false));
    let (e, r, st) = (entered.clone(), release.clone(), started.clone());
    server
        .add_tool(
            Tool::new("slow"),
            handler_fn(move |_ctx, _a: Value| {
                let (e, r, st) = (e.clone(), r.clone(), st.clone());
                async move {
                    st.store(true, Ordering::SeqCst);
                    e.notify_one();
                    r.notified().await;
                    Ok::<_, HandlerError>(CallToolResult::text("v1 finished"))
                }
            }),
        )
        .expect("add");
    let c = McpHttp::new(l.local_addr());
    let c2 = c.clone();
    let call =
        tokio::spawn(async move { c2.modern(1, "tools/call", json!({"name": "slow"})).await });
    tokio::time::timeout(WAIT, entered.notified())
        .await
        .expect("the handler started");
    assert!(started.load(Ordering::SeqCst));
    assert!(server.remove_tool("slow"));
    let e = modern_result(&c, 2, "tools/call", json!({"name": "slow"})).await;
    assert_eq!(e["error"]["message"], "Invalid params: Unknown tool: slow");
    server
        .add_tool(Tool::new("slow"), says("v2"))
        .expect("re-add");
    let r = modern_result(&c, 3, "tools/call", json!({"name": "slow"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "v2");
    release.notify_one();
    let ex = tokio::time::timeout(WAIT, call)
        .await
        .expect("in time")
        .expect("join");
    assert_eq!(ex.status, 200);
    assert_eq!(ex.last()["result"]["content"][0]["text"], "v1 finished");
    l.shutdown().await;
}

/// PAGE-01 with a changing list: a cursor handed out before an addition still pages on and
/// reaches the addition at the end; one past the end of a list that shrank is -32602, never a
/// panic or an empty success that hides the change.
#[tokio::test]
async fn cursors_survive_a_changing_list() {
    let (server, l) = start(Some(2)).await;
    for n in ["a", "b", "c"] {
        server.add_tool(Tool::new(n), says("x")).expect("add");
    }
    let c = McpHttp::new(l.local_addr());
    let p1 = modern_result(&c, 1, "tools/list", json!({})).await;
    assert_eq!(names(&p1["result"], "tools", "name"), ["a", "b"]);
    let cursor = p1["result"]["nextCursor"].clone();
    server.add_tool(Tool::new("d"), says("x")).expect("add d");
    let p2 = modern_result(&c, 2, "tools/list", json!({"cursor": cursor})).await;
    assert_eq!(names(&p2["result"], "tools", "name"), ["c", "d"]);
    assert!(p2["result"].get("nextCursor").is_none());
    let p2 = modern_result(&c, 3, "tools/list", json!({"cursor": cursor})).await;
    assert_eq!(names(&p2["result"], "tools", "name"), ["c", "d"]);
    for n in ["a", "b", "c"] {
        assert!(server.remove_tool(n));
    }
    let e = modern_result(&c, 4, "tools/list", json!({"cursor": cursor})).await;
    assert_eq!(e["error"]["code"], -32602);
    let p = modern_result(&c, 5, "tools/list", json!({})).await;
    assert_eq!(names(&p["result"], "tools", "name"), ["d"]);
    l.shutdown().await;
}

/// With a Redis backplane a change made on one worker reaches listen streams on the others, but
/// the registry itself stays per worker: the same change must be applied on every worker
/// (guide: docs/src/rust.md, "Changing a server while it serves").
#[tokio::test]
async fn a_change_on_one_worker_reaches_listen_streams_on_another() {
    let redis = mcpcore_tests::redis::RedisServer::start();
    let mut workers = Vec::new();
    for _ in 0..2 {
        let backplane = mcpcore::backplane::Backplane::redis(&redis.url(0))
            .expect("url")
            .with_prefix("dyn:");
        let server = Server::builder("dynamic", "1")
            .dynamic()
            .backplane(backplane)
            .request_state_keys(mcpcore_tests::redis::test_keys())
            .build()
            .expect("server");
        let addr = "127.0.0.1:0".parse().expect("addr");
        let listener = serve(server.clone(), addr, HttpOptions::default())
            .await
            .expect("listen");
        // `serve` returns once the backplane is connected and subscribed.
        assert!(server.backplane_available());
        workers.push((server, listener));
    }
    let c1 = McpHttp::new(workers[0].1.local_addr());
    let mut s1 = listen_all(&c1).await;
    workers[1]
        .0
        .add_tool(Tool::new("late"), says("x"))
        .expect("add on worker 2");
    let n = next_on(&mut s1, Era::Modern, Some("subscriptions/listen")).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    let list = modern_result(&c1, 1, "tools/list", json!({})).await;
    assert!(
        names(&list["result"], "tools", "name").is_empty(),
        "worker 1's registry did not change"
    );
    workers[0]
        .0
        .add_tool(Tool::new("late"), says("x"))
        .expect("add on worker 1");
    let list = modern_result(&c1, 2, "tools/list", json!({})).await;
    assert_eq!(names(&list["result"], "tools", "name"), ["late"]);
    for (_, l) in workers {
        l.shutdown().await;
    }
}
