//! Scale-out on Redis, end to end: three `demo-server --http --redis URL` workers sharing one
//! real redis-server, behind `rr-proxy`, which sends every HTTP request to the next worker (no
//! stickiness). Each test drives the deployment through the proxy only, over real HTTP, every
//! message validated against the official schemas; with one client per deployment the round
//! robin is deterministic, so consecutive requests land on consecutive workers.
//!
//! Modern era: calls, an input_required round whose retry lands on another worker (sealed
//! requestState opened there, MRTR-06 single use across workers), listen fan-out (a change
//! raised on one worker reaches a `subscriptions/listen` stream held by another, SUB-04), a
//! worker killed mid-run, Redis restarted mid-run (503 + Retry-After while down, then recovery).
//! Legacy era (LHTTP-02: any worker serves any session): separate tests, so each behaviour shows
//! on its own.

use mcpcore_tests::http::{check, collect, modern_headers, Exchange, HttpReply, McpHttp};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::stdio::envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::process::Child;

const WORKERS: usize = 3;

/// Redis, the workers and the proxy; every process is killed on drop.
struct Cluster {
    redis: RedisServer,
    workers: Vec<Child>,
    _proxy: Child,
    proxy: SocketAddr,
}

async fn start_workers(url: &str, host: &str) -> Vec<(Child, SocketAddr)> {
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let args = [
            "--http",
            "127.0.0.1:0",
            "--redis",
            url,
            "--request-state-key",
            mcpcore_tests::redis::TEST_KEY,
            "--allowed-hosts",
            host,
        ];
        workers.push(mcpcore_tests::http::spawn_example("demo-server", &args).await);
    }
    workers
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

impl Cluster {
    /// The proxy's port is picked before the workers start (they must allow it as `Host`), so
    /// another process may bind it first; then the whole cluster is started again on another.
    async fn start() -> Self {
        let redis = RedisServer::start();
        let mut last = String::new();
        for _ in 0..5 {
            let host = format!("127.0.0.1:{}", free_port());
            let workers = start_workers(&redis.url(0), &host).await;
            let mut args = vec!["--listen".to_owned(), host.clone()];
            for (_, addr) in &workers {
                args.extend(["--upstream".to_owned(), format!("http://{addr}")]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            match mcpcore_tests::http::try_spawn_example("rr-proxy", &args).await {
                Ok((proxy_child, proxy)) => {
                    return Self {
                        redis,
                        workers: workers.into_iter().map(|(c, _)| c).collect(),
                        _proxy: proxy_child,
                        proxy,
                    }
                }
                Err(e) => last = e,
            }
        }
        panic!("rr-proxy did not start on any of 5 free ports: {last}");
    }

    fn client(&self) -> McpHttp {
        McpHttp::new(self.proxy)
    }
}

/// A modern tools/call declaring the elicitation capability, with `extra` params merged in.
async fn call(c: &McpHttp, id: i64, name: &str, args: Value, extra: Value) -> Exchange {
    let mut params = json!({"name": name, "arguments": args,
        "_meta": envelope(json!({"elicitation": {}}))});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    c.post(&modern_headers("tools/call", Some(name)), &msg, Era::Modern)
        .await
}

/// One input_required round: the first call lands on one worker, its retry (carrying the
/// requestState that worker sealed) on the next.
async fn confirm_round(c: &McpHttp, id: i64, question: &str) -> Exchange {
    let args = json!({"question": question});
    let first = call(c, id, "confirm", args.clone(), json!({})).await;
    assert_eq!(first.status, 200, "{:?}", first.messages);
    let r = &first.last()["result"];
    assert_eq!(r["resultType"], "input_required", "{r}");
    assert_eq!(
        r["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    let state = r["requestState"].clone();
    assert!(state.is_string(), "no requestState in {r}");
    let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    call(
        c,
        id + 1,
        "confirm",
        args,
        json!({"inputResponses": answer, "requestState": state}),
    )
    .await
}

async fn listen(c: &McpHttp, id: i64) -> HttpReply {
    let msg = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": envelope(json!({})), "notifications": {"toolsListChanged": true}}});
    c.post_raw(
        &modern_headers("subscriptions/listen", None),
        msg.to_string().as_bytes(),
    )
    .await
}

async fn next_json(r: &mut HttpReply, era: Era) -> Value {
    let e = r.next_data_event().await.expect("an SSE event");
    let v: Value = serde_json::from_str(&e.data).expect("JSON event");
    check(era, &v, None);
    v
}

/// A listen stream opened on one worker hears a change raised through each of the others.
async fn assert_fan_out(c: &McpHttp, id: i64) {
    let mut stream = listen(c, id).await;
    assert_eq!(stream.status, 200);
    let ack = next_json(&mut stream, Era::Modern).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    for k in 1..WORKERS {
        let touched = call(c, id + k as i64, "touch", json!({}), json!({})).await;
        assert_eq!(touched.status, 200, "{:?}", touched.messages);
        let n = next_json(&mut stream, Era::Modern).await;
        assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_calls_are_served_by_every_worker() {
    let cl = Cluster::start().await;
    let c = cl.client();
    for i in 0..2 * WORKERS as i64 {
        let ex = call(&c, i, "echo", json!({"text": format!("hi {i}")}), json!({})).await;
        assert_eq!(ex.status, 200);
        assert_eq!(ex.text(), format!("hi {i}"));
    }
    let listed = c.modern(100, "tools/list", json!({})).await;
    let names: Vec<&str> = listed.last()["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"confirm") && names.contains(&"touch"),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_round_crosses_workers() {
    let cl = Cluster::start().await;
    let c = cl.client();
    // Three rounds: every worker opens state sealed by its predecessor.
    for i in 0..WORKERS as i64 {
        let done = confirm_round(&c, 10 * i, &format!("deploy {i}?")).await;
        assert_eq!(done.status, 200, "{:?}", done.messages);
        assert_eq!(done.text(), format!("confirmed: deploy {i}?"));
    }
    // Single use across workers (MRTR-06): the same state replayed on another worker is refused.
    let first = call(&c, 50, "confirm", json!({"question": "q"}), json!({})).await;
    let state = first.last()["result"]["requestState"].clone();
    let retry = json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "requestState": state});
    let ok = call(&c, 51, "confirm", json!({"question": "q"}), retry.clone()).await;
    assert_eq!(ok.text(), "confirmed: q");
    let replay = call(&c, 52, "confirm", json!({"question": "q"}), retry).await;
    assert!(
        replay.code().is_some(),
        "a replayed requestState was accepted: {:?}",
        replay.messages
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_fan_out_reaches_streams_on_other_workers() {
    let cl = Cluster::start().await;
    assert_fan_out(&cl.client(), 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_leaves_the_others_serving() {
    let mut cl = Cluster::start().await;
    let c = cl.client();
    // State sealed before the kill opens on the survivors.
    let first = call(&c, 1, "confirm", json!({"question": "q"}), json!({})).await;
    let state = first.last()["result"]["requestState"].clone();
    cl.workers[1].kill().await.expect("kill worker 1");
    for i in 0..2 * WORKERS as i64 {
        let ex = call(&c, 10 + i, "echo", json!({"text": "still here"}), json!({})).await;
        assert_eq!(
            ex.status, 200,
            "request {i} after the kill: {:?}",
            ex.messages
        );
        assert_eq!(ex.text(), "still here");
    }
    let retry = json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
        "requestState": state});
    let done = call(&c, 30, "confirm", json!({"question": "q"}), retry).await;
    assert_eq!(done.text(), "confirmed: q");
    // Fan-out between the two survivors.
    let mut stream = listen(&c, 40).await;
    assert_eq!(stream.status, 200);
    let ack = next_json(&mut stream, Era::Modern).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let touched = call(&c, 41, "touch", json!({}), json!({})).await;
    assert_eq!(touched.status, 200);
    let n = next_json(&mut stream, Era::Modern).await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
}

/// Poll `f` until it yields `Some` or `secs` pass.
async fn eventually<T, F, Fut>(secs: u64, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} within {secs} s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restart_gives_503_then_recovers() {
    let mut cl = Cluster::start().await;
    let c = cl.client();
    // Every worker has served a round (and so holds the shared request-state key) before.
    for i in 0..WORKERS as i64 {
        let done = confirm_round(&c, 10 * i, "before").await;
        assert_eq!(done.text(), "confirmed: before");
    }
    cl.redis.stop();
    // Work that needs Redis is refused with 503 + Retry-After and a JSON-RPC error: a listen
    // stream that could not hear the other workers would miss changes silently.
    let mut id = 100;
    let refused = eventually(10, "a 503 while Redis is down", || {
        id += 1;
        let c = c.clone();
        async move {
            let ex = collect(listen(&c, id).await, Era::Modern, None).await;
            (ex.status == 503).then_some(ex)
        }
    })
    .await;
    assert!(
        refused.header("retry-after").is_some(),
        "{:?}",
        refused.headers
    );
    assert_eq!(refused.code(), Some(-32603));
    cl.redis.restart();
    // Every worker recovers: WORKERS listen streams in a row open (one per worker).
    let mut id = 200;
    eventually(20, "every worker to recover", || {
        id += WORKERS as i64;
        let c = c.clone();
        async move {
            for k in 0..WORKERS as i64 {
                if listen(&c, id + k).await.status != 200 {
                    return None;
                }
            }
            Some(())
        }
    })
    .await;
    assert_fan_out(&c, 300).await;
    // A worker's first Redis command after the restart may still meet its dead connection: that
    // request is refused with 503 + Retry-After and the state is not consumed, so a client that
    // honours Retry-After completes the round with the same state.
    for i in 0..WORKERS as i64 {
        let args = json!({"question": "after"});
        let first = call(&c, 400 + 10 * i, "confirm", args.clone(), json!({})).await;
        let retry = json!({"requestState": first.last()["result"]["requestState"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}});
        let mut done = call(&c, 401 + 10 * i, "confirm", args.clone(), retry.clone()).await;
        for _ in 0..3 {
            if done.status != 503 {
                break;
            }
            assert!(done.header("retry-after").is_some(), "{:?}", done.headers);
            tokio::time::sleep(Duration::from_secs(1)).await;
            done = call(&c, 402 + 10 * i, "confirm", args.clone(), retry.clone()).await;
        }
        assert_eq!(done.status, 200, "{:?}", done.messages);
        assert_eq!(done.text(), "confirmed: after");
    }
}

// ---- legacy era (LHTTP-02): a session served by whichever worker gets each request. The
// demo's `confirm` tool is an input_required round; on a legacy session the shim (MRTR-09) asks
// a real `elicitation/create` on the call's POST stream, from whichever worker runs the call,
// and only when the client declared elicitation in `initialize` (otherwise -32603, nothing
// asked).

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_session_is_served_by_every_worker() {
    let cl = Cluster::start().await;
    let mut c = cl.client();
    c.initialize().await;
    for i in 0..WORKERS as i64 {
        let ex = c
            .legacy(
                i + 1,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "legacy"}}),
            )
            .await;
        assert_eq!(ex.status, 200, "{:?}", ex.messages);
        assert_eq!(ex.text(), "legacy");
    }
    let status = c.delete().await;
    assert!(status == 200 || status == 204, "DELETE: {status}");
    // The ended session is unknown to every worker (404).
    for i in 0..WORKERS as i64 {
        let ex = c.legacy(10 + i, "tools/list", json!({})).await;
        assert_eq!(
            ex.status, 404,
            "worker {i} still serves the deleted session"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_elicitation_answer_reaches_the_asking_worker() {
    let cl = Cluster::start().await;
    let mut c = cl.client();
    // initialize, notifications/initialized and the call land on three different workers.
    c.initialize_with(json!({"elicitation": {}})).await;
    let msg = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "confirm", "arguments": {"question": "ship it?"}}});
    let mut call_stream = c
        .post_raw(&c.legacy_headers(), msg.to_string().as_bytes())
        .await;
    assert_eq!(call_stream.status, 200);
    if !call_stream.content_type().starts_with("text/event-stream") {
        let body = call_stream.body().await;
        panic!("nothing asked: {}", String::from_utf8_lossy(&body));
    }
    let ask = next_json(&mut call_stream, Era::Legacy).await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    // The answer is a separate POST: the proxy hands it to another worker.
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
        "result": {"action": "accept", "content": {"ok": true}}});
    let r = c.post(&c.legacy_headers(), &answer, Era::Legacy).await;
    assert_eq!(r.status, 202);
    let done = next_json(&mut call_stream, Era::Legacy).await;
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: ship it?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_get_stream_hears_changes_from_other_workers() {
    let cl = Cluster::start().await;
    let mut c = cl.client();
    c.initialize().await;
    let mut stream = c.get(None).await;
    assert_eq!(stream.status, 200);
    for k in 1..WORKERS as i64 {
        let touched = c
            .legacy(k, "tools/call", json!({"name": "touch", "arguments": {}}))
            .await;
        assert_eq!(touched.status, 200, "{:?}", touched.messages);
        let n = next_json(&mut stream, Era::Legacy).await;
        assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    }
}

/// CAN-01 across workers: a `notifications/cancelled` for a call running on one worker, POSTed
/// through the proxy (so to the next worker), stops the handler there: the call's stream ends
/// without the result it would otherwise carry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_cancel_reaches_the_running_worker() {
    let cl = Cluster::start().await;
    let mut c = cl.client();
    c.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"ms": 4000}, "_meta": {"progressToken": "s"}}});
    let mut call_stream = c
        .post_raw(&c.legacy_headers(), msg.to_string().as_bytes())
        .await;
    assert_eq!(call_stream.status, 200);
    let p = next_json(&mut call_stream, Era::Legacy).await;
    assert_eq!(p["method"], "notifications/progress", "{p}");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "no longer needed"}});
    check(Era::Legacy, &cancel, None);
    let r = c.post(&c.legacy_headers(), &cancel, Era::Legacy).await;
    assert_eq!(r.status, 202);
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(e) = call_stream.next_data_event().await {
            let v: Value = serde_json::from_str(&e.data).expect("JSON event");
            check(Era::Legacy, &v, Some("tools/call"));
            assert!(v.get("result").is_none(), "the call ran to its end: {v}");
        }
    })
    .await;
    assert!(ended.is_ok(), "the cancelled call's stream must end");
}

/// LHTTP-04 across processes: a call's POST stream is dropped after its first progress event;
/// the client resumes it with `Last-Event-ID` through the proxy, so on the next worker, which
/// replays the rest from the Redis event store: the remaining progress, then the result, each
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_stream_resumes_on_another_worker() {
    let cl = Cluster::start().await;
    let mut c = cl.client();
    c.initialize().await;
    let msg = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"ms": 800}, "_meta": {"progressToken": "r"}}});
    let mut call_stream = c
        .post_raw(&c.legacy_headers(), msg.to_string().as_bytes())
        .await;
    assert_eq!(call_stream.status, 200);
    let first = call_stream
        .next_data_event()
        .await
        .expect("a progress event");
    let eid = first.id.clone().expect("legacy events carry ids");
    let p: Value = serde_json::from_str(&first.data).expect("JSON event");
    check(Era::Legacy, &p, Some("tools/call"));
    assert_eq!(p["method"], "notifications/progress", "{p}");
    call_stream.close();

    let mut resumed = c.get(Some(&eid)).await;
    assert_eq!(resumed.status, 200);
    let mut seen = vec![eid];
    let mut last = Value::Null;
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(e) = resumed.next_data_event().await {
            let v: Value = serde_json::from_str(&e.data).expect("JSON event");
            check(Era::Legacy, &v, Some("tools/call"));
            seen.push(e.id.clone().expect("an event id"));
            last = v;
        }
    })
    .await;
    assert!(ended.is_ok(), "the resumed stream must end with the result");
    assert_eq!(
        last["id"], 6,
        "the result arrives on the resumed stream: {seen:?}"
    );
    assert_eq!(last["result"]["content"][0]["text"], "slept 800 ms");
    // The four progress notifications and the result, none twice.
    assert_eq!(seen.len(), 5, "{seen:?}");
    let mut uniq = seen.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), seen.len(), "no event twice: {seen:?}");
}

/// No request-state key is ever generated into Redis (where anyone who can read it could forge
/// states): a worker started with `--redis` and no key refuses to start, naming the flag and
/// its environment variable.
#[tokio::test]
async fn a_redis_worker_without_a_request_state_key_refuses_to_start() {
    let redis = RedisServer::start();
    let out = tokio::process::Command::new(mcpcore_tests::example_bin("demo-server"))
        .args(["--http", "127.0.0.1:0", "--redis", &redis.url(0)])
        .env_remove("MCPCORE_REQUEST_STATE_KEY")
        .stdin(std::process::Stdio::null())
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("exits")
        .expect("runs");
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--request-state-key"), "{err}");
    assert!(err.contains("MCPCORE_REQUEST_STATE_KEY"), "{err}");
}
