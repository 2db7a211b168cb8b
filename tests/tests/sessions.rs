//! Routing across several live sessions of one server (REQUIREMENTS SUB-06, SUB-07, LHTTP-05,
//! LHTTP-08). A stdio process has one session, so these drive sessions
//! in process through the transport seam (`Server::new_session` + an `Outbound` channel);
//! every frame is still validated against the 2025-11-25 schema.

use mcpcore::server::{Session, SessionKind};
use mcpcore::{handler_fn, HandlerError, Id, RequestContext, Resource, Server, Tool};
use mcpcore_tests::{validate_message, Era};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

struct Conn {
    session: Arc<Session>,
    tx: mpsc::Sender<Vec<u8>>,
    rx: mpsc::Receiver<Vec<u8>>,
}

impl Conn {
    fn open(server: &Server) -> Self {
        let (tx, rx) = mpsc::channel(64);
        let session = server.new_session(SessionKind::Stdio, Arc::new(tx.clone()));
        Self { session, tx, rx }
    }

    async fn request(&self, id: i64, method: &str, params: Value) -> Value {
        let params: Option<Map<String, Value>> = params.as_object().cloned();
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            self.session.handle_request(
                Id::Num(id),
                method.to_owned(),
                params,
                Arc::new(self.tx.clone()),
            ),
        )
        .await
        .expect("bounded")
        .expect("not cancelled");
        let frame: Value =
            serde_json::from_slice(&mcpcore::server::encode_reply(&Id::Num(id), &reply))
                .expect("json");
        validate_message(Era::Legacy, &frame, Some(method)).expect("schema-valid response");
        frame
    }

    async fn initialize(&self) {
        let r = self
            .request(
                1,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
            )
            .await;
        assert!(r.get("result").is_some(), "{r}");
    }

    /// Everything queued for this connection right now, each frame schema-checked.
    fn drain(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(f) = self.rx.try_recv() {
            let v: Value = serde_json::from_slice(&f).expect("json");
            validate_message(Era::Legacy, &v, None).expect("schema-valid message");
            out.push(v);
        }
        out
    }
}

fn server() -> Server {
    Server::builder("routing", "1")
        .tool(
            Tool::new("ping-client"),
            handler_fn(|ctx: RequestContext, _a: Value| async move {
                let r = ctx.ping_client(Some(Duration::from_secs(10))).await?;
                Ok::<_, HandlerError>(json!({"content": [], "structuredContent": {"answer": r}}))
            }),
        )
        .resource(
            Resource::new("fix://x", "x"),
            handler_fn(
                |_c, _v: Value| async move { Ok::<_, HandlerError>(json!({"contents": []})) },
            ),
        )
        .build()
        .expect("build")
}

/// SUB-06: a list change reaches every live initialized session, and no other.
#[tokio::test]
async fn sub06_list_changed_reaches_every_initialized_session() {
    let server = server();
    let mut a = Conn::open(&server);
    let mut b = Conn::open(&server);
    let mut c = Conn::open(&server);
    a.initialize().await;
    c.initialize().await;
    assert_eq!(server.notify_tools_list_changed(), 2);
    assert_eq!(server.notify_resources_list_changed(), 2);
    for conn in [&mut a, &mut c] {
        let got: Vec<Value> = conn
            .drain()
            .into_iter()
            .map(|m| m["method"].clone())
            .collect();
        assert_eq!(
            got,
            [
                "notifications/tools/list_changed",
                "notifications/resources/list_changed"
            ]
        );
    }
    assert!(
        b.drain().is_empty(),
        "an uninitialized session hears nothing"
    );
    drop(c);
    assert_eq!(
        server.notify_tools_list_changed(),
        1,
        "closed sessions drop out"
    );
}

/// SUB-07: `notifications/resources/updated` reaches only the sessions subscribed to the URI.
#[tokio::test]
async fn sub07_resource_updated_only_to_subscribers() {
    let server = server();
    let mut a = Conn::open(&server);
    let mut b = Conn::open(&server);
    a.initialize().await;
    b.initialize().await;
    let r = a
        .request(2, "resources/subscribe", json!({"uri": "fix://x"}))
        .await;
    assert_eq!(r["result"], json!({}));
    assert_eq!(server.notify_resource_updated("fix://x"), 1);
    assert_eq!(server.notify_resource_updated("fix://y"), 0);
    assert_eq!(
        a.drain(),
        [
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "fix://x"}})
        ]
    );
    assert!(b.drain().is_empty());
}

/// LHTTP-08: a server→client request goes to the session that owns the
/// originating request, never broadcast; its answer is routed back by id.
#[tokio::test]
async fn server_request_routed_to_owning_session() {
    let server = server();
    let mut a = Conn::open(&server);
    let mut b = Conn::open(&server);
    a.initialize().await;
    b.initialize().await;
    let session = a.session.clone();
    let tx = a.tx.clone();
    let call = tokio::spawn(async move {
        session
            .handle_request(
                Id::Num(9),
                "tools/call".into(),
                json!({"name": "ping-client"}).as_object().cloned(),
                Arc::new(tx),
            )
            .await
    });
    let frame = tokio::time::timeout(Duration::from_secs(10), a.rx.recv())
        .await
        .expect("bounded")
        .expect("frame");
    let req: Value = serde_json::from_slice(&frame).expect("json");
    validate_message(Era::Legacy, &req, None).expect("schema-valid request");
    assert_eq!(req["method"], "ping");
    assert!(b.drain().is_empty(), "never broadcast");
    // The other session cannot answer it.
    let id = Id::from_value(&req["id"]).expect("id");
    assert!(!b.session.deliver_response(&id, Ok(json!({}))));
    assert!(a.session.deliver_response(&id, Ok(json!({}))));
    let reply = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("bounded")
        .expect("join")
        .expect("answered");
    assert_eq!(
        reply.result.expect("ok").into_value()["structuredContent"]["answer"],
        json!({})
    );
}
