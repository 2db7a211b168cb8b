//! The tasks extension served from C (REQUIREMENTS TASK-L01, TASK-M01..M03): `tests/c/task_server.c`
//! compiled against `include/mcpcore.h`, linked to `libmcpcore.a`, run plain, under ASan+UBSan,
//! LSan and valgrind, and driven over stdio in both eras; every message it sends is validated
//! against its era's schema. The C tools are task-capable through `"taskSupport"` in their JSON
//! definitions, the task limits come from the options JSON, and the C handler of `slow_echo`
//! answers from another thread: core runs the task around it.

mod support;

use mcpcore_tests::tasks::{ext_caps, EXT};
use mcpcore_tests::{stdio::envelope, Era, StdioPeer};
use serde_json::{json, Value};
use std::time::Duration;
use support::{build, command, variants};

const EXIT_WAIT: Duration = Duration::from_secs(60);
/// The first answer may take long under valgrind (it reads the library's debug info first).
const FIRST_WAIT: Duration = Duration::from_secs(180);
/// Polls of a task's status before giving up (the C handler answers after 100 ms; valgrind is
/// slow).
const POLLS: usize = 600;

async fn first(peer: &mut StdioPeer, method: &str, params: Value) -> Value {
    let id = json!(1);
    peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    loop {
        let m = peer
            .try_recv(FIRST_WAIT)
            .await
            .expect("first answer in time");
        if m["id"] == id && m.get("method").is_none() {
            return m;
        }
    }
}

fn slow(text: &str) -> Value {
    json!({"name": "slow_echo", "arguments": {"text": text}})
}

/// TASK-M01..M03: the opt-in makes a task whose completed state carries the C handler's
/// result; without it the same call is synchronous, and the task-required tool is -32021.
async fn modern(p: &mut StdioPeer) {
    let d = first(p, "server/discover", json!({"_meta": envelope(json!({}))})).await;
    assert!(
        d["result"]["capabilities"]["extensions"][EXT].is_object(),
        "{d}"
    );
    let task = p.modern("tools/call", slow("a"), ext_caps()).await;
    let r = &task["result"];
    assert_eq!(r["resultType"], "task", "{task}");
    assert_eq!(
        r["ttlMs"], 30000,
        "defaultTtlMs from the options JSON: {task}"
    );
    assert_eq!(r["pollIntervalMs"], 50, "{task}");
    let id = r["taskId"].as_str().expect("taskId").to_owned();
    let mut done = Value::Null;
    for _ in 0..POLLS {
        let got = p
            .modern("tasks/get", json!({"taskId": id}), ext_caps())
            .await;
        assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
        let status = got["result"]["status"].as_str().unwrap_or_default();
        assert!(matches!(status, "working" | "completed"), "{got}");
        if status == "completed" {
            done = got;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        done["result"]["result"]["content"],
        json!([{"type": "text", "text": "slow:a"}]),
        "task {id} never completed with the C result: {done}"
    );
    let sync = p.modern("tools/call", slow("b"), json!({})).await;
    assert_eq!(sync["result"]["resultType"], "complete", "{sync}");
    assert!(sync["result"].get("taskId").is_none(), "{sync}");
    assert_eq!(
        sync["result"]["content"],
        json!([{"type": "text", "text": "slow:b"}])
    );
    let e = p
        .modern("tools/call", json!({"name": "must_task"}), json!({}))
        .await;
    assert_eq!(e["error"]["code"], -32021, "{e}");
    assert!(
        e["error"]["data"]["requiredCapabilities"]["extensions"][EXT].is_object(),
        "{e}"
    );
}

/// TASK-L01: `execution.taskSupport` listed; `task: {ttl}` makes a CreateTaskResult whose
/// `tasks/result` is the C handler's result; the task-required tool without `task` is -32601.
async fn legacy(p: &mut StdioPeer) {
    let init = first(
        p,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c-task-server", "version": "1"}}),
    )
    .await;
    assert!(
        init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{init}"
    );
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let tools = p.request("tools/list", json!({})).await;
    let support = |n: &str| {
        tools["result"]["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == n))
            .map(|t| t["execution"]["taskSupport"].clone())
    };
    assert_eq!(support("slow_echo"), Some(json!("optional")), "{tools}");
    assert_eq!(support("must_task"), Some(json!("required")), "{tools}");
    assert_eq!(support("bad"), None, "a refused tool is not registered");
    let mut call = slow("c");
    call["task"] = json!({"ttl": 60000});
    let created = p.request("tools/call", call).await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000, "{created}");
    assert_eq!(task["pollInterval"], 50, "{created}");
    let id = task["taskId"].as_str().expect("taskId").to_owned();
    let result = p.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"],
        json!([{"type": "text", "text": "slow:c"}]),
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id.as_str()
    );
    let got = p.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    let e = p.request("tools/call", json!({"name": "must_task"})).await;
    assert_eq!(e["error"]["code"], -32601, "{e}");
    let created = p
        .request("tools/call", json!({"name": "must_task", "task": {}}))
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("must_task as a task: {created}"))
        .to_owned();
    let result = p.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"],
        json!([{"type": "text", "text": "must:done"}]),
        "{result}"
    );
}

#[tokio::test]
async fn c_task_server_both_eras() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("task_server", &["tests/c/task_server.c"], v);
        for era in [Era::Legacy, Era::Modern] {
            support::clear_reports(&exe);
            let (prog, args) = command(&exe, v);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut p = StdioPeer::spawn(&prog, &args);
            p.era = era;
            if era == Era::Legacy {
                legacy(&mut p).await;
            } else {
                modern(&mut p).await;
            }
            p.close_stdin();
            let status = p
                .wait_exit(EXIT_WAIT)
                .await
                .unwrap_or_else(|| panic!("{v:?}: task_server.c did not exit after EOF"));
            assert!(
                status.success(),
                "{v:?}: task_server.c exited with {status}\n{}",
                support::reports(&exe)
            );
        }
    }
}
