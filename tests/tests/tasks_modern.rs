//! The `io.modelcontextprotocol/tasks` extension on the 2026-07-28 wire (TASK-M01…M04, HTTP-09,
//! SUB-01, SUB-04), over real stdio pipes and real HTTP, every message schema-checked (the task
//! shapes against tests/schemas/tasks-extension.json).

use mcpcore_tests::http::{modern_headers, raw_request};
use mcpcore_tests::tasks::{ext_caps, terminal, Conn, EXT};
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;

async fn both() -> Vec<Conn> {
    vec![Conn::stdio(&[], Era::Modern), Conn::http(&[]).await]
}

fn task_id(r: &Value) -> String {
    assert_eq!(
        r["result"]["resultType"], "task",
        "not a CreateTaskResult: {r}"
    );
    r["result"]["taskId"].as_str().expect("taskId").to_owned()
}

/// TASK-M01/M02: advertised in discover; a task only with THIS request's opt-in; -32021 for a
/// task-required tool without it (with the extension named in `data`).
#[tokio::test]
async fn m01_m02_opt_in_decides_per_request() {
    for mut c in both().await {
        let d = c.modern("server/discover", json!({}), json!({})).await;
        assert!(
            d["result"]["capabilities"]["extensions"][EXT].is_object(),
            "{d}"
        );
        assert!(d["result"]["capabilities"].get("tasks").is_none());
        let tools = c.modern("tools/list", json!({}), json!({})).await;
        let slow = tools["result"]["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "slow_compute"))
            .cloned()
            .expect("slow_compute listed");
        assert_eq!(slow["execution"]["taskSupport"], "optional");
        let call = json!({"name": "slow_compute", "arguments": {"seconds": 0}});
        let plain = c.modern("tools/call", call.clone(), json!({})).await;
        assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
        assert!(plain["result"].get("taskId").is_none());
        let task = c.modern("tools/call", call, ext_caps()).await;
        let id = task_id(&task);
        assert!(task["result"]["ttlMs"].as_u64().is_some_and(|t| t > 0));
        assert!(task["result"].get("requestState").is_none());
        // Durably created: readable at once.
        let got = c
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(got["result"]["taskId"], id.as_str());
        let done = c.modern_until(&id, terminal).await;
        assert_eq!(done["status"], "completed");
        assert!(done["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Computed")));
        let e = c
            .modern("tools/call", json!({"name": "failing_job"}), json!({}))
            .await;
        assert_eq!(e["error"]["code"], -32021, "{e}");
        assert!(e["error"]["data"]["requiredCapabilities"]["extensions"][EXT].is_object());
        // A legacy `task` hint never promotes a sync tool.
        let g = c
            .modern(
                "tools/call",
                json!({"name": "greet", "arguments": {"name": "x"}, "task": {"ttl": 5}}),
                ext_caps(),
            )
            .await;
        assert_eq!(g["result"]["resultType"], "complete");
    }
}

/// TASK-M03/M01: tasks/* need the extension (-32021 before anything else); unknown ids -32602;
/// tasks/list and tasks/result are gone (-32601); failures and tool errors.
#[tokio::test]
async fn m03_methods_gating_and_outcomes() {
    for mut c in both().await {
        for m in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let p = json!({"taskId": "nope", "inputResponses": {}});
            let r = c.modern(m, p, json!({})).await;
            assert_eq!(r["error"]["code"], -32021, "{m}: {r}");
        }
        let r = c
            .modern("tasks/get", json!({"taskId": "nope"}), ext_caps())
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        for m in ["tasks/list", "tasks/result"] {
            let r = c.modern(m, json!({"taskId": "x"}), ext_caps()).await;
            assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
        }
        let t = c
            .modern("tools/call", json!({"name": "failing_job"}), ext_caps())
            .await;
        let done = c.modern_until(&task_id(&t), terminal).await;
        assert_eq!(done["status"], "completed");
        assert_eq!(done["result"]["isError"], true);
        let t = c
            .modern(
                "tools/call",
                json!({"name": "protocol_error_job"}),
                ext_caps(),
            )
            .await;
        let done = c.modern_until(&task_id(&t), terminal).await;
        assert_eq!(done["status"], "failed");
        assert_eq!(done["error"]["code"], -32603);
        assert!(done.get("result").is_none());
    }
}

/// TASK-M03: `tasks/cancel` cancels cooperatively (empty ack, idempotent); a
/// `notifications/cancelled` naming the creating request never does.
#[tokio::test]
async fn m03_cancel_vs_notifications_cancelled() {
    for mut c in both().await {
        let call = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
        let t = c.modern("tools/call", call, ext_caps()).await;
        let id = task_id(&t);
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": t["id"].clone(), "reason": "not for tasks",
            "_meta": mcpcore_tests::stdio::envelope(ext_caps())}});
        match &mut c {
            Conn::Stdio(p) => p.send(&cancelled).await,
            Conn::Http(h, _) => {
                let ex = h
                    .post(
                        &modern_headers("notifications/cancelled", None),
                        &cancelled,
                        Era::Modern,
                    )
                    .await;
                assert_eq!(ex.status, 202);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let r = c
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(r["result"]["status"], "working", "{r}");
        for _ in 0..2 {
            let ack = c
                .modern("tasks/cancel", json!({"taskId": id}), ext_caps())
                .await;
            assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
            assert!(ack["result"].get("status").is_none());
        }
        let r = c
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(r["result"]["status"], "cancelled");
    }
}

/// TASK-M03 with MRTR inside a task: `input_required` with `inputRequests`, unknown keys ignored,
/// a partial update keeps the rest pending, answers resume the handler; `request_client` in a
/// task works the same way. No `requestState` anywhere on the task wire.
#[tokio::test]
async fn m03_input_inside_a_task() {
    for mut c in both().await {
        let t = c
            .modern("tools/call", json!({"name": "multi_input"}), ext_caps())
            .await;
        let id = task_id(&t);
        let parked = c.modern_until(&id, |s| s == "input_required").await;
        let keys: Vec<String> = parked["inputRequests"]
            .as_object()
            .expect("inputRequests")
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys.len(), 2, "{parked}");
        assert!(parked.get("requestState").is_none());
        let ans = |n: &str| json!({"action": "accept", "content": {"name": n}});
        let upd =
            json!({"taskId": id, "inputResponses": {"bogus": ans("x"), keys[0].clone(): ans("A")}});
        let ack = c.modern("tasks/update", upd, ext_caps()).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        let r = c
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(r["result"]["status"], "input_required");
        let left: Vec<&String> = r["result"]["inputRequests"]
            .as_object()
            .expect("pending")
            .keys()
            .collect();
        assert_eq!(left, [&keys[1]]);
        let upd = json!({"taskId": id, "inputResponses": {keys[1].clone(): ans("B")}});
        c.modern("tasks/update", upd, ext_caps()).await;
        let done = c.modern_until(&id, terminal).await;
        assert_eq!(done["result"]["content"][0]["text"], "Got A and B");
        // request_client inside a task.
        let t = c
            .modern("tools/call", json!({"name": "ask_job"}), ext_caps())
            .await;
        let id = task_id(&t);
        let parked = c.modern_until(&id, |s| s == "input_required").await;
        let key = parked["inputRequests"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .expect("a key");
        let upd = json!({"taskId": id, "inputResponses": {key: ans("Zoe")}});
        c.modern("tasks/update", upd, ext_caps()).await;
        let done = c.modern_until(&id, terminal).await;
        assert_eq!(done["result"]["content"][0]["text"], "Hi Zoe", "{done}");
    }
}

/// MRTR rounds complete on the request before the task exists (SEP-2663 composition).
#[tokio::test]
async fn mrtr_rounds_before_task_creation() {
    for mut c in both().await {
        let call = json!({"name": "test_tool_with_task"});
        let r1 = c.modern("tools/call", call.clone(), ext_caps()).await;
        assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
        assert!(r1["result"].get("taskId").is_none());
        let mut retry = call;
        retry["inputResponses"] =
            json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});
        if let Some(s) = r1["result"].get("requestState") {
            retry["requestState"] = s.clone();
        }
        let r2 = c.modern("tools/call", retry, ext_caps()).await;
        let id = task_id(&r2);
        assert!(r2["result"].get("requestState").is_none());
        let done = c.modern_until(&id, terminal).await;
        assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice!");
    }
}

/// TTL: a task is gone (-32602) once its TTL ran out.
#[tokio::test]
async fn m03_expired_tasks_are_not_found() {
    let conns = vec![
        Conn::stdio(&["--ttl-ms", "300"], Era::Modern),
        Conn::http(&["--ttl-ms", "300"]).await,
    ];
    for mut c in conns {
        let call = json!({"name": "slow_compute", "arguments": {"seconds": 0}});
        let t = c.modern("tools/call", call, ext_caps()).await;
        assert_eq!(t["result"]["ttlMs"], 300);
        let id = task_id(&t);
        tokio::time::sleep(Duration::from_millis(600)).await;
        let r = c
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
}

/// HTTP-09: `Mcp-Name` must equal `params.taskId` on tasks/get|update|cancel (-32020, 400).
#[tokio::test]
async fn http09_mcp_name_is_the_task_id() {
    let mut c = Conn::http(&[]).await;
    let t = c
        .modern(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 5}}),
            ext_caps(),
        )
        .await;
    let id = task_id(&t);
    let h = c.http_client().clone();
    for (name, want) in [(Some(id.as_str()), 200), (Some("other"), 400), (None, 400)] {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params":
            mcpcore_tests::era::with_envelope(json!({"taskId": id}), ext_caps())});
        let ex = h
            .post(&modern_headers("tasks/get", name), &msg, Era::Modern)
            .await;
        assert_eq!(ex.status, want, "{name:?}: {:?}", ex.messages);
        if want == 400 {
            assert_eq!(ex.code(), Some(-32020));
        }
    }
    c.modern("tasks/cancel", json!({"taskId": id}), ext_caps())
        .await;
}

/// TASK-M04, SUB-01/SUB-04: `notifications/tasks` with the full state on a listen stream that
/// named the task; `taskIds` without the extension is -32021.
#[tokio::test]
async fn m04_task_pushes_on_listen() {
    let mut c = Conn::http(&[]).await;
    let h = c.http_client().clone();
    let listen = |caps: Value, ids: Value| {
        json!({"jsonrpc": "2.0", "id": "l1", "method": "subscriptions/listen", "params":
            mcpcore_tests::era::with_envelope(json!({"notifications": {"taskIds": ids}}), caps)})
    };
    let refused = h
        .post(
            &modern_headers("subscriptions/listen", None),
            &listen(json!({}), json!(["x"])),
            Era::Modern,
        )
        .await;
    assert_eq!(refused.code(), Some(-32021), "{:?}", refused.messages);
    let t = c
        .modern(
            "tools/call",
            json!({"name": "confirm_delete", "arguments": {"filename": "f"}}),
            ext_caps(),
        )
        .await;
    let id = task_id(&t);
    c.modern_until(&id, |s| s == "input_required").await;
    let body = listen(ext_caps(), json!([id]));
    let hdrs = modern_headers("subscriptions/listen", None);
    let hv: Vec<(&str, &str)> = hdrs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut stream = raw_request(h.addr, "POST", "/mcp", &hv, body.to_string().as_bytes()).await;
    let e = stream.next_data_event().await.expect("the acknowledgement");
    let ack: Value = serde_json::from_str(&e.data).expect("json");
    mcpcore_tests::http::check(Era::Modern, &ack, None);
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let upd = json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    c.modern("tasks/update", upd, ext_caps()).await;
    let mut statuses = Vec::new();
    while !statuses.last().is_some_and(|s: &String| terminal(s)) {
        let e = tokio::time::timeout(Duration::from_secs(10), stream.next_data_event())
            .await
            .expect("a push in time")
            .expect("event");
        let v: Value = serde_json::from_str(&e.data).expect("json");
        mcpcore_tests::http::check(Era::Modern, &v, None);
        assert_eq!(v["method"], "notifications/tasks");
        assert_eq!(v["params"]["taskId"], id.as_str());
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "l1"
        );
        if v["params"]["status"] == "completed" {
            assert_eq!(v["params"]["result"]["content"][0]["text"], "Deleted f");
        }
        statuses.push(
            v["params"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    assert_eq!(statuses, ["working", "completed"]);
}

/// Results outlive the request and its connection: a task created by one HTTP exchange is read
/// by taskId on a new connection, after the handler kept running alone.
#[tokio::test]
async fn results_survive_the_creating_connection() {
    let mut c = Conn::http(&[]).await;
    let t = c
        .modern(
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "late"}}),
            ext_caps(),
        )
        .await;
    let id = task_id(&t);
    // Every exchange above was its own TCP connection, now closed.
    let done = c.modern_until(&id, terminal).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Computed late in 0.3s"
    );
}
