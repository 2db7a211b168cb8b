//! Several workers sharing one Redis backplane, each serving real HTTP on 127.0.0.1 (the
//! deployment the backplane exists for: a load balancer may send each request to any worker).
//! Each worker gets its own `Backplane::redis` built from the URL, as separate processes would.
//! Every message is validated against the 2026-07-28 schema.
//!
//! - SUB-04 / TASK-M04 across workers: a listen stream on one worker hears list changes,
//!   resource updates and task states raised on another, once;
//! - MRTR-06 across workers: a state sealed on one worker opens on another and is refused as a
//!   replay on a third; key rotation through `requestState.keys`;
//! - Redis down: 503 + `Retry-After` for what needs it, recovery without restarting workers.

use mcpcore::backplane::Backplane;
use mcpcore::server::TaskSupport;
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, InputRequired, Outcome, Resource, Server, Tool,
};
use mcpcore_tests::era::{text, with_envelope};
use mcpcore_tests::http::{check, collect, modern_headers, Exchange, HttpReply, McpHttp};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const SUB_KEY: &str = "io.modelcontextprotocol/subscriptionId";
const WAIT: Duration = Duration::from_secs(20);
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A worker: a server on `backplane` with an MRTR tool (`gate`), a task tool (`slow`, finishing
/// when `release` is notified) and a resource, served over HTTP.
struct Worker {
    server: Server,
    listener: HttpListener,
}

impl Worker {
    async fn start(backplane: Backplane, release: Arc<Notify>) -> Self {
        let b = Server::builder("w", "1")
            .backplane(backplane)
            .request_state_keys(mcpcore_tests::redis::test_keys());
        Self::start_with(b, release).await
    }

    async fn start_with(builder: mcpcore::ServerBuilder, release: Arc<Notify>) -> Self {
        let server = builder
            .tool(
                Tool::new("gate").input_schema(json!({"type": "object"})),
                handler_fn(|ctx, args: Value| async move {
                    let q = args.get("q").cloned().unwrap_or(Value::Null);
                    Ok::<Outcome, HandlerError>(match ctx.request_state() {
                        Some(s) => CallToolResult::text(format!("{s}:{q}")).into(),
                        None => InputRequired::new().state("resume").into(),
                    })
                }),
            )
            .task_tool(
                Tool::new("slow").input_schema(json!({"type": "object"})),
                TaskSupport::Required,
                handler_fn(move |_ctx, _args: Value| {
                    let release = release.clone();
                    async move {
                        release.notified().await;
                        Ok::<Outcome, HandlerError>(CallToolResult::text("slow done").into())
                    }
                }),
            )
            .resource(
                Resource::new("demo://doc", "doc"),
                handler_fn(|_ctx, _vars: Value| async move {
                    Ok::<Outcome, HandlerError>(
                        mcpcore::ReadResourceResult::text("demo://doc", "text/plain", "x").into(),
                    )
                }),
            )
            .build()
            .expect("server");
        let addr = "127.0.0.1:0".parse().expect("addr");
        let listener = serve(server.clone(), addr, HttpOptions::default())
            .await
            .expect("listen");
        let w = Self { server, listener };
        w.wait_available(true).await;
        w
    }

    fn client(&self) -> McpHttp {
        McpHttp::new(self.listener.local_addr())
    }

    /// Wait until the worker's backplane is (un)reachable as `up` says.
    async fn wait_available(&self, up: bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.server.backplane_available() != up {
            assert!(
                tokio::time::Instant::now() < deadline,
                "backplane availability never became {up}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn redis_backplane(redis: &RedisServer, prefix: &str) -> Backplane {
    Backplane::redis(&redis.url(0))
        .expect("url")
        .with_prefix(prefix)
}

async fn listen(c: &McpHttp, id: &str, filter: Value) -> HttpReply {
    let caps = json!({"extensions": {TASKS: {}}});
    let params = with_envelope(json!({"notifications": filter}), caps);
    let msg =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    c.post_raw(
        &modern_headers("subscriptions/listen", None),
        msg.to_string().as_bytes(),
    )
    .await
}

async fn next(r: &mut HttpReply) -> Value {
    let e = tokio::time::timeout(WAIT, r.next_data_event())
        .await
        .expect("an event in time")
        .expect("an event");
    let v: Value = serde_json::from_str(&e.data).expect("json");
    check(Era::Modern, &v, None);
    v
}

async fn gate(c: &McpHttp, id: i64, state: Option<&str>) -> Exchange {
    let mut params = json!({"name": "gate", "arguments": {"q": 1}});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    c.modern(id, "tools/call", params).await
}

fn state_of(ex: &Exchange) -> String {
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    assert_eq!(ex.last()["result"]["resultType"], "input_required");
    ex.last()["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned()
}

fn assert_invalid_state(ex: &Exchange) {
    assert_eq!(ex.status, 400, "{:?}", ex.messages);
    assert_eq!(ex.last()["error"]["code"], -32602);
    assert_eq!(
        ex.last()["error"]["message"],
        "Invalid or expired requestState"
    );
}

/// SUB-04 across workers: worker 1's listen stream hears what worker 2 raises, and worker 2's
/// own stream hears its own change exactly once (its message comes back from Redis and is
/// skipped).
#[tokio::test]
async fn listen_on_one_worker_hears_changes_raised_on_another() {
    let redis = RedisServer::start();
    let release = Arc::new(Notify::new());
    let w1 = Worker::start(redis_backplane(&redis, "bus1:"), release.clone()).await;
    let w2 = Worker::start(redis_backplane(&redis, "bus1:"), release.clone()).await;
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://doc"]});
    let mut s1 = listen(&w1.client(), "s1", filter.clone()).await;
    assert_eq!(s1.status, 200);
    let ack = next(&mut s1).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let mut s2 = listen(&w2.client(), "s2", filter).await;
    let _ = next(&mut s2).await;

    assert_eq!(w2.server.notify_tools_list_changed(), 1, "w2's own stream");
    w2.server.notify_resource_updated("demo://doc");
    for (s, sub) in [(&mut s1, "s1"), (&mut s2, "s2")] {
        let n = next(s).await;
        assert_eq!(n["method"], "notifications/tools/list_changed");
        assert_eq!(n["params"]["_meta"][SUB_KEY], sub);
        let n = next(s).await;
        assert_eq!(n["method"], "notifications/resources/updated", "{n}");
        assert_eq!(n["params"]["uri"], "demo://doc");
    }
    // s1 heard both through Redis, so w2's own copies came back to w2 before what w1 raises
    // now: had w2 delivered them again, s2's next event would be a tools/list_changed. An
    // unsubscribed URI is not delivered.
    w1.server.notify_resource_updated("demo://elsewhere");
    w1.server.notify_resource_updated("demo://doc");
    let n = next(&mut s2).await;
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], "demo://doc");
    // A worker under another prefix is another deployment: it hears nothing of this one.
    let other = Worker::start(redis_backplane(&redis, "bus1-other:"), release.clone()).await;
    let other2 = Worker::start(redis_backplane(&redis, "bus1-other:"), release).await;
    let mut s3 = listen(
        &other.client(),
        "s3",
        json!({"toolsListChanged": true, "resourcesListChanged": true}),
    )
    .await;
    let _ = next(&mut s3).await;
    w1.server.notify_tools_list_changed();
    // Redis handled w1's message before other2's (s2 heard it), so s3 would see it first.
    assert_eq!(
        next(&mut s2).await["method"],
        "notifications/tools/list_changed"
    );
    other2.server.notify_resources_list_changed();
    assert_eq!(
        next(&mut s3).await["method"],
        "notifications/resources/list_changed"
    );
}

/// TASK-M04 across workers: a task created and run on worker 2 pushes its states to a listen
/// stream on worker 1 that named it.
#[tokio::test]
async fn task_states_reach_a_listen_stream_on_another_worker() {
    let redis = RedisServer::start();
    let release = Arc::new(Notify::new());
    let w1 = Worker::start(redis_backplane(&redis, "bus2:"), release.clone()).await;
    let w2 = Worker::start(redis_backplane(&redis, "bus2:"), release.clone()).await;
    let caps = json!({"extensions": {TASKS: {}}});
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": with_envelope(json!({"name": "slow", "arguments": {}}), caps)});
    let ex = w2
        .client()
        .post(
            &modern_headers("tools/call", Some("slow")),
            &msg,
            Era::Modern,
        )
        .await;
    assert_eq!(
        ex.last()["result"]["resultType"],
        "task",
        "{:?}",
        ex.messages
    );
    let id = ex.last()["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let mut s1 = listen(&w1.client(), "t1", json!({"taskIds": [id]})).await;
    assert_eq!(s1.status, 200);
    let ack = next(&mut s1).await;
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    release.notify_one();
    loop {
        let n = next(&mut s1).await;
        assert_eq!(n["method"], "notifications/tasks", "{n}");
        assert_eq!(n["params"]["taskId"], id.as_str());
        assert_eq!(n["params"]["_meta"][SUB_KEY], "t1");
        if n["params"]["status"] == "completed" {
            assert_eq!(n["params"]["result"]["content"][0]["text"], "slow done");
            break;
        }
    }
}

/// MRTR-06 across workers sharing one configured key ring: sealed on worker 1, completed on
/// worker 2, refused as a replay on worker 3.
#[tokio::test]
async fn sealed_on_one_worker_completes_on_another_and_replay_is_refused_on_a_third() {
    let redis = RedisServer::start();
    let release = Arc::new(Notify::new());
    let mut ws = Vec::new();
    for _ in 0..3 {
        ws.push(Worker::start(redis_backplane(&redis, "mrtr:"), release.clone()).await);
    }
    let state = state_of(&gate(&ws[0].client(), 1, None).await);
    let done = gate(&ws[1].client(), 2, Some(&state)).await;
    assert_eq!(done.status, 200, "{:?}", done.messages);
    assert_eq!(text(done.last()), "resume:1");
    assert_invalid_state(&gate(&ws[2].client(), 3, Some(&state)).await);
    assert_invalid_state(&gate(&ws[0].client(), 4, Some(&state)).await);
    // Another deployment (prefix, keys) shares neither the key nor the claims.
    let b = Server::builder("w", "1")
        .backplane(redis_backplane(&redis, "mrtr-other:"))
        .request_state_keys(mcpcore_tests::redis::keys(7));
    let other = Worker::start_with(b, release).await;
    let fresh = state_of(&gate(&ws[0].client(), 5, None).await);
    assert_invalid_state(&gate(&other.client(), 6, Some(&fresh)).await);
    assert_eq!(
        text(gate(&ws[2].client(), 7, Some(&fresh)).await.last()),
        "resume:1"
    );
}

fn key(id: &str, byte: u8) -> Value {
    use base64::Engine;
    json!({"id": id, "key": base64::engine::general_purpose::STANDARD.encode([byte; 32])})
}

/// A worker configured through the JSON options only (as C and the bindings configure it).
async fn json_worker(patch: Value) -> Worker {
    let mut bad = None;
    let b = Server::builder("w", "1").options(|o| {
        bad = mcpcore::options::apply_json(o, &patch).err();
    });
    assert!(bad.is_none(), "{bad:?}");
    Worker::start_with(b, Arc::new(Notify::new())).await
}

/// Key rotation without downtime: `requestState.keys` lists the current key first, then keys
/// that only open. Old-key states open on a rotated worker, new states are sealed with the new
/// key, and a key retired from the ring is refused. All through the JSON options.
#[tokio::test]
async fn key_rotation_through_json_options() {
    let redis = RedisServer::start();
    let opts = |keys: Value| json!({"redis": redis.url(0), "redisPrefix": "rot:", "requestState": {"keys": keys}});
    let old = json_worker(opts(json!([key("k1", 1)]))).await;
    let rotated = json_worker(opts(json!([key("k2", 2), key("k1", 1)]))).await;
    let retired = json_worker(opts(json!([key("k3", 3), key("k2", 2)]))).await;
    assert!(old.server.backplane().is_redis());
    assert_eq!(old.server.backplane().prefix(), Some("rot:"));

    let by_k1 = state_of(&gate(&old.client(), 1, None).await);
    let by_k1_again = state_of(&gate(&old.client(), 2, None).await);
    assert_eq!(
        text(gate(&rotated.client(), 3, Some(&by_k1)).await.last()),
        "resume:1"
    );
    let by_k2 = state_of(&gate(&rotated.client(), 4, None).await);
    // The rotated worker seals with k2: the old worker (k1 only) cannot open it.
    assert_invalid_state(&gate(&old.client(), 5, Some(&by_k2)).await);
    assert_eq!(
        text(gate(&retired.client(), 6, Some(&by_k2)).await.last()),
        "resume:1"
    );
    assert_invalid_state(&gate(&retired.client(), 7, Some(&by_k1_again)).await);
    // The claim is shared: by_k1 was used on `rotated`, `old` refuses it too.
    assert_invalid_state(&gate(&old.client(), 8, Some(&by_k1)).await);
}

/// Redis stopped: opening a sealed state (its single-use claim) and listening get 503 with
/// `Retry-After` and a JSON-RPC error; an open listen stream ends (changes from other workers
/// could be missed). Redis restarted: the same workers serve again, with no restart.
#[tokio::test]
async fn redis_down_is_503_with_retry_after_then_recovers() {
    let mut redis = RedisServer::start();
    let release = Arc::new(Notify::new());
    let keys = json!({"keys": [key("k1", 9)]});
    let mk = || {
        let mut b = Server::builder("w", "1").backplane(redis_backplane(&redis, "down:"));
        let mut bad = None;
        b = b.options(|o| {
            bad = mcpcore::options::apply_json(o, &json!({"requestState": keys})).err()
        });
        assert!(bad.is_none());
        b
    };
    let w1 = Worker::start_with(mk(), release.clone()).await;
    let w2 = Worker::start_with(mk(), release.clone()).await;
    let state = state_of(&gate(&w1.client(), 1, None).await);
    let mut stream = listen(&w1.client(), "l", json!({"toolsListChanged": true})).await;
    let _ = next(&mut stream).await;

    redis.stop();
    w2.wait_available(false).await;
    // The live stream ends rather than silently missing changes.
    let ended = tokio::time::timeout(WAIT, async {
        while let Some(e) = stream.next_data_event().await {
            let v: Value = serde_json::from_str(&e.data).expect("json");
            check(Era::Modern, &v, None);
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the listen stream stayed open with the bus down"
    );

    let ex = gate(&w2.client(), 2, Some(&state)).await;
    assert_eq!(ex.status, 503, "{:?}", ex.messages);
    assert_eq!(ex.header("retry-after"), Some("1"));
    assert_eq!(ex.last()["error"]["code"], -32603);
    let r = listen(&w2.client(), "l2", json!({"toolsListChanged": true})).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    let ex = collect(r, Era::Modern, Some("subscriptions/listen")).await;
    assert_eq!(ex.code(), Some(-32603));
    // What needs no Redis still works: a first round is sealed with the configured key.
    let fresh = state_of(&gate(&w2.client(), 3, None).await);

    redis.restart();
    w1.wait_available(true).await;
    w2.wait_available(true).await;
    // The state refused while Redis was down was not consumed: it works now, once.
    let done = gate(&w1.client(), 4, Some(&state)).await;
    assert_eq!(done.status, 200, "{:?}", done.messages);
    assert_invalid_state(&gate(&w2.client(), 5, Some(&state)).await);
    assert_eq!(
        text(gate(&w1.client(), 6, Some(&fresh)).await.last()),
        "resume:1"
    );
    let mut s = listen(&w1.client(), "l3", json!({"toolsListChanged": true})).await;
    assert_eq!(s.status, 200);
    let _ = next(&mut s).await;
    w2.server.notify_tools_list_changed();
    assert_eq!(
        next(&mut s).await["method"],
        "notifications/tools/list_changed"
    );
}

/// While Redis is down the outbound queue stays bounded: changes past it are dropped and
/// counted, not stored; once Redis is back the same worker publishes again.
#[tokio::test]
async fn outbound_queue_is_bounded_while_redis_is_down() {
    let mut redis = RedisServer::start();
    let release = Arc::new(Notify::new());
    let w1 = Worker::start(
        redis_backplane(&redis, "q:").with_bus_queue(4),
        release.clone(),
    )
    .await;
    let w2 = Worker::start(redis_backplane(&redis, "q:"), release).await;
    redis.stop();
    w1.wait_available(false).await;
    for _ in 0..20 {
        w1.server.notify_tools_list_changed();
    }
    // 4 queued, at most one more in the publisher's hands, the rest dropped.
    let dropped = w1.server.backplane().dropped_notifications();
    assert!((15..=16).contains(&dropped), "dropped {dropped}");

    redis.restart();
    w1.wait_available(true).await;
    w2.wait_available(true).await;
    let mut s = listen(
        &w2.client(),
        "q",
        json!({"resourceSubscriptions": ["demo://doc"]}),
    )
    .await;
    assert_eq!(s.status, 200);
    let _ = next(&mut s).await;
    w1.server.notify_resource_updated("demo://doc");
    let n = next(&mut s).await;
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(w1.server.backplane().dropped_notifications(), dropped);
}
