//! Two workers sharing tasks through Redis, end to end over real HTTP on 127.0.0.1 (TASK-L01,
//! TASK-M01…M03, HTTP-09): each `Server` has its own `RedisTaskStore` on one Redis and prefix, as
//! two processes behind a load balancer would. A task created through worker 1 is polled and its
//! result read through worker 2, on the 2026-07-28 wire (`tasks/get`) and on 2025-11-25 sessions
//! (`tasks/get`, `tasks/result`). Every message is checked against the official schemas.

use mcpcore::backplane::redis::{RedisTaskOptions, RedisTaskStore};
use mcpcore::transport::http::{HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, RequestContext, Server, TaskOptions, TaskSupport, Tool};
use mcpcore_tests::era::with_envelope;
use mcpcore_tests::http::{modern_headers, McpHttp};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::tasks::{ext_caps, terminal};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// A worker: a server whose `job` tool runs as a task and finishes when the test releases it.
async fn worker(
    name: &str,
    r: &RedisServer,
    recheck: Duration,
    release: Arc<Semaphore>,
) -> HttpListener {
    let mut o = RedisTaskOptions::default();
    o.recheck_interval = recheck;
    let store = RedisTaskStore::connect_with(&r.url(0), "e2e:", o).expect("url");
    let mut topts = TaskOptions::default();
    topts.store = Some(Arc::new(store));
    topts.poll_interval = Duration::from_millis(50);
    let job = handler_fn(move |ctx: RequestContext, _args: Value| {
        let release = release.clone();
        async move {
            if let Ok(p) = release.acquire().await {
                p.forget();
            }
            Ok(CallToolResult::text(format!(
                "finished {}",
                ctx.task_id().unwrap_or("-")
            )))
        }
    });
    let server = Server::builder(name, "1")
        .tasks(topts)
        .task_tool(Tool::new("job"), TaskSupport::Optional, job)
        .build()
        .expect("build");
    server
        .serve_http("127.0.0.1:0".parse().expect("addr"), HttpOptions::default())
        .await
        .expect("serve")
}

async fn modern(c: &McpHttp, method: &str, params: Value) -> Value {
    let name = params
        .get("taskId")
        .or_else(|| params.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|_| mcpcore::protocol::mcp_header::name_key(method).is_some());
    let msg = json!({"jsonrpc": "2.0", "id": 3, "method": method,
        "params": with_envelope(params, ext_caps())});
    let ex = c
        .post(&modern_headers(method, name.as_deref()), &msg, Era::Modern)
        .await;
    assert_eq!(ex.status, 200, "{:?}", ex.messages);
    ex.last().clone()
}

/// Modern era: created through worker 1, seen working and then completed (with its result)
/// through worker 2; worker 2 can also cancel a task of worker 1.
#[tokio::test]
async fn modern_task_created_on_one_worker_is_read_on_the_other() {
    let r = RedisServer::start();
    let release = Arc::new(Semaphore::new(0));
    let w1 = worker("w1", &r, Duration::from_secs(5), release.clone()).await;
    let w2 = worker("w2", &r, Duration::from_secs(5), release.clone()).await;
    let (c1, c2) = (McpHttp::new(w1.local_addr()), McpHttp::new(w2.local_addr()));
    let created = modern(&c1, "tools/call", json!({"name": "job"})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let seen = modern(&c2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(seen["result"]["status"], "working", "{seen}");
    release.add_permits(1);
    let mut done = Value::Null;
    for _ in 0..200 {
        let g = modern(&c2, "tasks/get", json!({"taskId": id})).await;
        if terminal(g["result"]["status"].as_str().unwrap_or_default()) {
            done = g["result"].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("finished {id}")
    );
    let unknown = modern(&c2, "tasks/get", json!({"taskId": "0123"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // A second task of worker 1, cancelled through worker 2: the shared record says so on both.
    let other = modern(&c1, "tools/call", json!({"name": "job"})).await;
    let oid = other["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let c = modern(&c2, "tasks/cancel", json!({"taskId": oid})).await;
    assert!(c.get("result").is_some(), "{c}");
    let g = modern(&c1, "tasks/get", json!({"taskId": oid})).await;
    assert_eq!(g["result"]["status"], "cancelled", "{g}");
    release.add_permits(1);
    w1.shutdown().await;
    w2.shutdown().await;
}

/// Legacy era: a task made on a session of worker 1 is read on a session of worker 2;
/// `tasks/result` on worker 2 blocks until worker 1's handler ends. Worker 2 re-reads only
/// once a minute, so it is the change channel that wakes it.
#[tokio::test]
async fn legacy_task_result_is_served_by_the_other_worker() {
    let r = RedisServer::start();
    let release = Arc::new(Semaphore::new(0));
    let w1 = worker("w1", &r, Duration::from_secs(5), release.clone()).await;
    let w2 = worker("w2", &r, Duration::from_secs(60), release.clone()).await;
    let mut c1 = McpHttp::new(w1.local_addr());
    let mut c2 = McpHttp::new(w2.local_addr());
    c1.initialize().await;
    c2.initialize().await;
    let created = c1
        .legacy(
            1,
            "tools/call",
            json!({"name": "job", "task": {"ttl": 60_000}}),
        )
        .await;
    let task = &created.last()["result"]["task"];
    assert_eq!(task["status"], "working", "{:?}", created.messages);
    let id = task["taskId"].as_str().expect("taskId").to_owned();
    let got = c2.legacy(2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        got.last()["result"]["status"],
        "working",
        "{:?}",
        got.messages
    );
    let listed = c2.legacy(3, "tasks/list", json!({})).await;
    let ids: Vec<&str> = listed.last()["result"]["tasks"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["taskId"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids, [id.as_str()], "{:?}", listed.messages);
    let waiting = {
        let (c2, id) = (c2.clone(), id.clone());
        tokio::spawn(async move { c2.legacy(4, "tasks/result", json!({"taskId": id})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "tasks/result waits for the handler");
    release.add_permits(1);
    let result = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("woken by the other worker's update, not the 60 s re-read")
        .expect("join");
    let res = &result.last()["result"];
    assert_eq!(
        res["content"][0]["text"],
        format!("finished {id}"),
        "{:?}",
        result.messages
    );
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    w1.shutdown().await;
    w2.shutdown().await;
}
