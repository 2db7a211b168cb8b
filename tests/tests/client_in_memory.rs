//! `Client::connect_in_memory` and `ClientBuilder::connect_io`: mcpcore's client on a `Server` in
//! the same process over a bounded in-memory pipe served by `serve_io`, with the stdio framing
//! and negotiation (REQUIREMENTS STDIO-01…04, DISC-02, ELIC-01, MRTR-09): both eras, tools, a
//! server→client request answered by a client callback, and closing ends the server's side.

use mcpcore::client::{client_handler_fn, Client, ClientBuilder, ConnectMode, Era};
use mcpcore::transport::stdio::serve_io;
use mcpcore::{handler_fn, CallToolResult, HandlerError, RequestContext, Server, Tool};
use mcpcore_tests::asking::name_form;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(20);
const MODES: [(ConnectMode, Era); 3] = [
    (ConnectMode::Auto, Era::Modern),
    (ConnectMode::Modern, Era::Modern),
    (ConnectMode::Legacy, Era::Legacy),
];

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

/// `echo {text}` and `ask` (an elicitation through `request_client`: a real server→client
/// request on legacy, an `input_required` round on 2026-07-28); advertises `tools.listChanged`
/// so a live legacy connection counts in `notify_tools_list_changed`.
fn server() -> Server {
    server_with(|_| {})
}

fn server_with(edit: impl FnOnce(&mut mcpcore::ServerOptions)) -> Server {
    Server::builder("in-memory", "1")
        .options(|o| {
            o.tools_list_changed = true;
            edit(o);
        })
        .tool(
            Tool::new("echo").input_schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            handler_fn(|_ctx, args: Value| async move {
                let t = args.get("text").and_then(Value::as_str).unwrap_or_default();
                Ok::<_, HandlerError>(CallToolResult::text(t))
            }),
        )
        .tool(
            Tool::new("ask"),
            handler_fn(|ctx: RequestContext, _args: Value| async move {
                let answer = ctx
                    .request_client("elicitation/create", Some(name_form()))
                    .await?;
                Ok::<_, HandlerError>(CallToolResult::structured(json!({"elicited": answer})))
            }),
        )
        .build()
        .expect("server")
}

/// A builder whose elicitation callback answers "Ada" and counts its calls.
fn eliciting(asked: &Arc<AtomicUsize>) -> ClientBuilder {
    let asked = asked.clone();
    Client::builder().on_elicitation(client_handler_fn(move |p: Value| {
        asked.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(p["message"], "Your name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        }
    }))
}

/// Each mode negotiates its era (auto adopts 2026-07-28, as over stdio); the tools are listed
/// and called, and a frame far larger than the pipe's buffer passes both ways.
#[tokio::test]
async fn in_memory_lists_and_calls_tools_in_each_mode() {
    let s = server();
    for (mode, era) in MODES {
        let c = bounded(Client::builder().mode(mode).connect_in_memory(&s))
            .await
            .expect("connect");
        assert_eq!(c.era(), Some(era), "{mode:?}");
        let tools = bounded(c.list_all_tools()).await.expect("tools/list");
        let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["ask", "echo"], "{mode:?}");
        let r = bounded(c.call_tool("echo", json!({"text": "hi"})))
            .await
            .expect("call");
        assert_eq!(r.content[0]["text"], "hi", "{mode:?}");
        let big = "x".repeat(8 * mcpcore::client::IN_MEMORY_BUFFER);
        let r = bounded(c.call_tool("echo", json!({"text": big})))
            .await
            .expect("a large call");
        assert_eq!(r.content[0]["text"].as_str().map(str::len), Some(big.len()));
        c.close().await;
    }
    let c = bounded(Client::connect_in_memory(&s))
        .await
        .expect("the shortcut connects");
    assert_eq!(c.era(), Some(Era::Modern), "the shortcut negotiates (auto)");
    c.close().await;
}

/// The server asks the client for an elicitation from inside a tool: the builder's callback
/// answers it in both eras, once each (on 2026-07-28 the answer rides the retried call).
#[tokio::test]
async fn in_memory_server_requests_reach_the_builders_callback_in_both_eras() {
    let s = server();
    for (mode, era) in MODES {
        let asked = Arc::new(AtomicUsize::new(0));
        let c = bounded(eliciting(&asked).mode(mode).connect_in_memory(&s))
            .await
            .expect("connect");
        assert_eq!(c.era(), Some(era), "{mode:?}");
        let r = bounded(c.call_tool("ask", json!({})))
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(
            r.structured_content,
            Some(json!({"elicited": {"action": "accept", "content": {"name": "Ada"}}})),
            "{mode:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1, "{mode:?}");
        c.close().await;
    }
}

/// A live legacy connection is one peer of the server; once `close` returns it is gone, because
/// the in-memory pipe's server side has ended (not merely been left behind). The server's grace
/// is far longer than the test's bound: `close` returns within it only because the server read
/// EOF and finished at once, not because the client gave up on it after the grace.
#[tokio::test]
async fn closing_an_in_memory_client_ends_the_server_side() {
    let s = server_with(|o| o.limits.shutdown_grace = Duration::from_secs(60));
    let seen = Arc::new(AtomicUsize::new(0));
    let n = seen.clone();
    let (told_tx, mut told) = tokio::sync::mpsc::unbounded_channel();
    let c = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .on_notification(move |method, _| {
                if method == "notifications/tools/list_changed" {
                    n.fetch_add(1, Ordering::SeqCst);
                    let _ = told_tx.send(());
                }
            })
            .connect_in_memory(&s),
    )
    .await
    .expect("connect");
    assert_eq!(s.notify_tools_list_changed(), 1, "the connection is live");
    bounded(told.recv()).await.expect("the client is told");
    bounded(c.close()).await;
    assert!(c.is_closed());
    assert_eq!(
        s.notify_tools_list_changed(),
        0,
        "the server side ended with close"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

/// `connect_io` over streams the caller serves: closing the client, or dropping it without
/// closing, lets `serve_io` read EOF and return.
#[tokio::test]
async fn connect_io_close_or_drop_ends_serve_io() {
    let s = server();
    for close in [true, false] {
        for (mode, era) in MODES {
            let (ours, theirs) = tokio::io::duplex(4096);
            let (sr, sw) = tokio::io::split(theirs);
            let srv = s.clone();
            let served = tokio::spawn(async move { serve_io(&srv, sr, sw).await });
            let (r, w) = tokio::io::split(ours);
            let c = bounded(Client::builder().mode(mode).connect_io(r, w))
                .await
                .expect("connect");
            assert_eq!(c.era(), Some(era), "{mode:?}");
            let out = bounded(c.call_tool("echo", json!({"text": "io"})))
                .await
                .expect("call");
            assert_eq!(out.content[0]["text"], "io");
            if close {
                c.close().await;
            } else {
                drop(c);
            }
            bounded(served)
                .await
                .expect("the serving task")
                .unwrap_or_else(|e| panic!("serve_io ends cleanly ({mode:?}, close {close}): {e}"));
        }
    }
}
