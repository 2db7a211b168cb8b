//! `subscriptions/listen` over modern HTTP (REQUIREMENTS SUB-01…06, HTTP-06). Every message is
//! validated against the 2026-07-28 schema.

use mcpcore::transport::http::HttpOptions;
use mcpcore::Limits;
use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::{check, collect, modern_headers, HttpReply, McpHttp, WAIT};
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

const SUB_KEY: &str = "io.modelcontextprotocol/subscriptionId";

async fn listen(c: &McpHttp, id: Value, notifications: Option<Value>) -> HttpReply {
    let mut params = json!({"_meta": envelope(json!({}))});
    if let Some(n) = notifications {
        params["notifications"] = n;
    }
    let msg =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    c.post_raw(
        &modern_headers("subscriptions/listen", None),
        msg.to_string().as_bytes(),
    )
    .await
}

async fn next(r: &mut HttpReply) -> Value {
    let e = r.next_data_event().await.expect("an event");
    let v: Value = serde_json::from_str(&e.data).expect("json");
    check(Era::Modern, &v, Some("subscriptions/listen"));
    v
}

#[tokio::test]
async fn sub01_filter_is_required() {
    let f = Fixture::start().await;
    let r = listen(&f.client(), json!(1), None).await;
    let ex = collect(r, Era::Modern, None).await;
    assert_eq!((ex.status, ex.code()), (400, Some(-32602)));
    let r = listen(&f.client(), json!(2), Some(json!("all"))).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn sub02_to_06_ack_then_only_requested_types_with_subscription_id() {
    let f = Fixture::start().await;
    let mut r = listen(
        &f.client(),
        json!("s1"),
        Some(json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert!(r.header("mcp-session-id").is_none());
    let ack = next(&mut r).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_KEY], "s1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]})
    );
    // Unrequested and unsubscribed changes are not delivered; the next event is the first
    // requested one.
    f.server.notify_prompts_list_changed();
    f.server.notify_resources_list_changed();
    f.server.notify_resource_updated("demo://other");
    assert!(f.server.notify_tools_list_changed() >= 1);
    let n = next(&mut r).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(n["params"]["_meta"][SUB_KEY], "s1");
    f.server.notify_resource_updated("demo://readme/section");
    let n = next(&mut r).await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "demo://readme/section");
    assert_eq!(n["params"]["_meta"][SUB_KEY], "s1");
}

#[tokio::test]
async fn sub06_only_advertised_types_are_honoured() {
    let f = Fixture::with_server_options(Limits::default(), HttpOptions::default(), |o| {
        o.tools_list_changed = false;
        o.resources_subscribe = false;
    })
    .await;
    let mut r = listen(
        &f.client(),
        json!(1),
        Some(json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["demo://readme"]})),
    )
    .await;
    let ack = next(&mut r).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    // discover strips what cannot be delivered
    let ex = f.client().modern(2, "server/discover", json!({})).await;
    assert_eq!(
        ex.last()["result"]["capabilities"]["tools"]["listChanged"],
        false
    );
}

#[tokio::test]
async fn listen_cap_is_503_and_closing_frees_the_slot() {
    let mut opts = HttpOptions::default();
    opts.max_listen_streams = 1;
    let f = Fixture::with(Limits::default(), opts).await;
    let c = f.client();
    let mut first = listen(&c, json!(1), Some(json!({"toolsListChanged": true}))).await;
    let _ = next(&mut first).await;
    let r = listen(&c, json!(2), Some(json!({"toolsListChanged": true}))).await;
    assert_eq!(r.status, 503);
    first.close();
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.listener.service().listen_stream_count() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "closed listen stream kept its slot"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut again = listen(&c, json!(3), Some(json!({"toolsListChanged": true}))).await;
    assert_eq!(again.status, 200);
    let _ = next(&mut again).await;
}

async fn wait_for_streams(f: &Fixture, n: usize) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while f.listener.service().listen_stream_count() != n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "listen stream count never reached {n}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SUB-03, JR-01: a subscription id is the client's own request id, unique only among that
/// client's requests, so unrelated clients listening with the same id (every SDK starts at 0 or
/// 1) each get their stream and every notification, tagged with that id. Over HTTP a
/// subscription is addressed only through its stream (SUB-05, HTTP-04): another client's
/// `notifications/cancelled` for the same id, or closing its own stream, leaves it untouched.
#[tokio::test]
async fn sub03_same_id_from_unrelated_clients_never_collides() {
    let f = Fixture::start().await;
    let tools = || Some(json!({"toolsListChanged": true}));
    let mut a = listen(&f.client(), json!(1), tools()).await;
    let mut b = listen(&f.client(), json!(1), tools()).await;
    assert_eq!((a.status, b.status), (200, 200));
    for r in [&mut a, &mut b] {
        let ack = next(r).await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][SUB_KEY], 1);
    }
    assert_eq!(f.server.notify_tools_list_changed(), 2);
    for r in [&mut a, &mut b] {
        let n = next(r).await;
        assert_eq!(n["method"], "notifications/tools/list_changed");
        assert_eq!(n["params"]["_meta"][SUB_KEY], 1);
    }
    // Client B "cancels subscription 1" the stdio way: over HTTP that names nothing (202).
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": envelope(json!({}))}});
    let ex = f
        .client()
        .post(
            &modern_headers("notifications/cancelled", None),
            &cancel,
            Era::Modern,
        )
        .await;
    assert_eq!(ex.status, 202);
    // Client B ends its subscription by closing its stream; A's stays.
    b.close();
    wait_for_streams(&f, 1).await;
    // A third client may take id 1 too while A holds it.
    let mut c = listen(&f.client(), json!(1), tools()).await;
    assert_eq!(c.status, 200);
    let _ = next(&mut c).await;
    assert_eq!(f.server.notify_tools_list_changed(), 2);
    for r in [&mut a, &mut c] {
        let n = next(r).await;
        assert_eq!(n["method"], "notifications/tools/list_changed");
        assert_eq!(n["params"]["_meta"][SUB_KEY], 1);
    }
}

#[tokio::test]
async fn http06_keepalive_comments() {
    let mut opts = HttpOptions::default();
    opts.keepalive = Some(Duration::from_millis(30));
    let f = Fixture::with(Limits::default(), opts).await;
    let mut r = listen(&f.client(), json!(1), Some(json!({}))).await;
    let _ = next(&mut r).await;
    let e = r.next_event().await.expect("keep-alive");
    assert!(e.comment, "expected a comment line, got {e:?}");
}

#[tokio::test]
async fn slow_subscriber_never_blocks_others() {
    let f = Fixture::start().await;
    let c = f.client();
    // `stalled` never reads; `live` must still get every change.
    let mut stalled = listen(
        &c,
        json!("stalled"),
        Some(json!({"toolsListChanged": true})),
    )
    .await;
    let _ = next(&mut stalled).await;
    let mut live = listen(&c, json!("live"), Some(json!({"toolsListChanged": true}))).await;
    let _ = next(&mut live).await;
    for _ in 0..2000 {
        f.server.notify_tools_list_changed();
    }
    let n = next(&mut live).await;
    assert_eq!(n["params"]["_meta"][SUB_KEY], "live");
}
