//! AUTH-06 across workers: a legacy session shared through Redis stays bound to the principal
//! that created it on every worker (REQUIREMENTS AUTH-06, LHTTP-02, TASK-L01). Two in-process
//! workers on one real `redis-server`, JWT authorization on, two users; every message is
//! checked against the 2025-11-25 schema.

use mcpcore::auth::AuthOptions;
use mcpcore::backplane::Backplane;
use mcpcore::security::{KeyRing, SealKey};
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{
    handler_fn, CallToolResult, HandlerError, Outcome, Server, TaskOptions, TaskSupport, Tool,
};
use mcpcore_tests::auth::{claims, jwks, jwks_file, options, TestKey};
use mcpcore_tests::http::{Exchange, McpHttp};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

/// A worker: `whoami` (the subject of `ctx.principal()`, or null) and the task-capable `job`,
/// sharing legacy sessions and tasks through the Redis at `url`.
async fn worker(url: &str, auth: AuthOptions) -> HttpListener {
    let bp = Backplane::redis(url)
        .expect("redis url")
        .with_prefix("own:");
    let ring = KeyRing::new(SealKey::new("k1", [7u8; 32]).expect("key"));
    let server = Server::builder("owner-test", "1")
        .options(|o| o.backplane = bp)
        .request_state_keys(ring)
        .tasks(TaskOptions::default())
        .tool(
            Tool::new("whoami").input_schema(json!({"type": "object"})),
            handler_fn(|ctx, _a: Value| async move {
                let who = ctx.principal().map(|p| p.subject.clone());
                Ok::<Outcome, HandlerError>(CallToolResult::text(json!(who).to_string()).into())
            }),
        )
        .task_tool(
            Tool::new("job").input_schema(json!({"type": "object"})),
            TaskSupport::Optional,
            handler_fn(|_ctx, _a: Value| async move {
                Ok::<CallToolResult, HandlerError>(CallToolResult::text("done"))
            }),
        )
        .build()
        .expect("server");
    let mut opts = HttpOptions::default();
    opts.auth = Some(auth);
    opts.legacy_stores.poll = Duration::from_millis(20);
    serve(server, "127.0.0.1:0".parse().expect("addr"), opts)
        .await
        .expect("listen")
}

/// One user's legacy session, sent to whichever worker the test names.
struct User {
    http: McpHttp,
    token: String,
}

impl User {
    fn headers(&self) -> Vec<(String, String)> {
        let mut h = self.http.legacy_headers();
        h.push(("Authorization".into(), format!("Bearer {}", self.token)));
        h
    }

    /// `initialize` + `notifications/initialized` on `addr`.
    async fn initialize(addr: SocketAddr, token: String) -> Self {
        let mut u = Self {
            http: McpHttp::new(addr),
            token,
        };
        let msg = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "owner-test", "version": "1"}}});
        let ex = u.http.post(&u.headers(), &msg, Era::Legacy).await;
        assert_eq!(ex.status, 200, "{:?}", ex.messages);
        u.http.session = ex.header("mcp-session-id").map(str::to_owned);
        assert!(u.http.session.is_some());
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(u.http.post(&u.headers(), &n, Era::Legacy).await.status, 202);
        u
    }

    /// The same user (session, token) talking to `addr`.
    fn at(&self, addr: SocketAddr) -> Self {
        Self {
            http: self.http.at(addr),
            token: self.token.clone(),
        }
    }

    async fn call(&self, id: i64, method: &str, params: Value) -> Exchange {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.http.post(&self.headers(), &msg, Era::Legacy).await
    }

    async fn whoami(&self, id: i64) -> String {
        let ex = self
            .call(id, "tools/call", json!({"name": "whoami", "arguments": {}}))
            .await;
        assert_eq!(ex.status, 200, "{:?}", ex.messages);
        ex.text()
    }

    /// The task ids `tasks/list` shows this user.
    async fn task_ids(&self, id: i64) -> Vec<String> {
        let ex = self.call(id, "tasks/list", json!({})).await;
        assert_eq!(ex.status, 200, "{:?}", ex.messages);
        let tasks = ex.last()["result"]["tasks"].as_array().cloned();
        let tasks = tasks.unwrap_or_else(|| panic!("{}", ex.last()));
        tasks
            .iter()
            .filter_map(|t| t["taskId"].as_str().map(str::to_owned))
            .collect()
    }
}

/// Alice initializes on A; on B (which never saw her session) a tool sees her principal, a
/// task she creates there is hers (bob's `tasks/list` and `tasks/get` on his own session do not
/// show it, hers do, on both workers), her further requests on B are served, and bob
/// presenting her session id on B, now that B holds a replica, is 404.
#[tokio::test]
async fn auth06_a_replica_keeps_the_session_owner() {
    let redis = RedisServer::start();
    let key = TestKey::generate("k1");
    let mut auth = options();
    auth.jwks_path = Some(jwks_file(&jwks(&[&key])));
    let a = worker(&redis.url(0), auth.clone()).await;
    let b = worker(&redis.url(0), auth).await;
    let (a, b) = (a.local_addr(), b.local_addr());
    let alice_token = key.sign(&claims("alice", "mcp:tools"));
    let bob_token = key.sign(&claims("bob", "mcp:tools"));

    let alice_a = User::initialize(a, alice_token).await;
    let alice_b = alice_a.at(b);
    assert_eq!(
        alice_b.whoami(1).await,
        "\"alice\"",
        "B serves alice as alice"
    );

    let made = alice_b
        .call(
            2,
            "tools/call",
            json!({"name": "job", "arguments": {}, "task": {"ttl": 60000}}),
        )
        .await;
    assert_eq!(made.status, 200, "{:?}", made.messages);
    let task = made.last()["result"]["task"]["taskId"].as_str();
    let task = task.unwrap_or_else(|| panic!("{}", made.last())).to_owned();

    let bob = User::initialize(b, bob_token.clone()).await;
    assert!(
        !bob.task_ids(1).await.contains(&task),
        "bob must not list it"
    );
    assert!(!bob.at(a).task_ids(2).await.contains(&task));
    let got = bob.call(3, "tasks/get", json!({"taskId": task})).await;
    assert!(
        got.last().get("result").is_none(),
        "bob must not read alice's task: {}",
        got.last()
    );

    assert!(
        alice_b.task_ids(3).await.contains(&task),
        "alice lists it on B"
    );
    assert!(alice_a.task_ids(4).await.contains(&task), "and on A");
    let got = alice_b.call(5, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(got.status, 200, "{:?}", got.messages);
    assert_eq!(got.last()["result"]["taskId"], task.as_str());

    // Bob with alice's session id, on the worker holding her replica.
    let thief = User {
        http: alice_b.http.clone(),
        token: bob_token,
    };
    let stolen = thief.call(6, "ping", json!({})).await;
    assert_eq!(stolen.status, 404, "{:?}", stolen.messages);
    assert_eq!(stolen.code(), Some(-32600));
    // And alice is still served there.
    assert_eq!(alice_b.whoami(7).await, "\"alice\"");
    assert_eq!(alice_b.call(8, "ping", json!({})).await.status, 200);
}
