//! A scripted tasks server (REQUIREMENTS TASK-L01, TASK-M01…M04) for the client's task tests:
//! one message in, the messages to send back out, so the same script runs behind the
//! `task-server` stdio binary and behind [`crate::scripted::Scripted`] over HTTP.
//!
//! Tool names pick the task's life: `sync` (answered at once even when a task is asked for),
//! `slow` (working for two `tasks/get`, then completed), `ask` (input_required: modern
//! `inputRequests` answered by `tasks/update`; legacy an `elicitation/create` sent while the
//! client waits in `tasks/result`), `fail`, `hold` (working until `tasks/cancel`), `push`
//! (working on every poll; completes only by a push: modern on the listen stream, legacy as
//! `notifications/tasks/status` after a `tasks/get`), `badstatus` (an unknown status),
//! `malformed` (a task without `taskId`). A call that did not opt in is answered synchronously.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The tasks extension identifier.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";
const SUB_KEY: &str = "io.modelcontextprotocol/subscriptionId";
const CAPS_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The id of the elicitation a legacy `ask` task sends.
pub const ELICIT_ID: &str = "task-elicit-1";

struct Task {
    tool: String,
    status: &'static str,
    gets: u32,
    result: Option<Value>,
    message: Option<String>,
}

/// The script's state.
pub struct TaskScript {
    modern: bool,
    tasks: BTreeMap<String, Task>,
    /// A legacy `tasks/result` waiting for the elicitation's answer: (request id, task id).
    waiting: Option<(Value, String)>,
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The elicitation an `ask` task needs.
pub fn name_form() -> Value {
    json!({"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

impl TaskScript {
    /// A script for one era.
    pub fn new(modern: bool) -> Self {
        Self {
            modern,
            tasks: BTreeMap::new(),
            waiting: None,
        }
    }

    /// The task as the era shows it (modern: flattened with its status-specific fields).
    fn view(&self, id: &str) -> Value {
        let Some(t) = self.tasks.get(id) else {
            return json!({});
        };
        let mut v = json!({"taskId": id, "status": t.status,
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z"});
        if let Some(m) = &t.message {
            v["statusMessage"] = json!(m);
        }
        if !self.modern {
            v["ttl"] = json!(60000);
            v["pollInterval"] = json!(10);
            return v;
        }
        v["ttlMs"] = json!(60000);
        v["pollIntervalMs"] = json!(10);
        match t.status {
            "completed" => v["result"] = t.result.clone().unwrap_or_else(|| text("done")),
            "failed" => v["error"] = json!({"code": -32000, "message": "the tool failed"}),
            "input_required" => {
                v["inputRequests"] =
                    json!({"name": {"method": "elicitation/create", "params": name_form()}})
            }
            _ => {}
        }
        v
    }

    fn opted_in(&self, params: &Value) -> bool {
        if self.modern {
            params
                .pointer("/_meta")
                .and_then(|m| m.get(CAPS_KEY))
                .and_then(|c| c.get("extensions"))
                .and_then(|e| e.get(TASKS))
                .is_some()
        } else {
            params.get("task").is_some_and(Value::is_object)
        }
    }

    fn call(&mut self, id: &Value, params: &Value) -> Value {
        let tool = params["name"].as_str().unwrap_or_default().to_owned();
        if tool == "sync" || !self.opted_in(params) {
            let mut r = text(&format!("sync {tool}"));
            if self.modern {
                r["resultType"] = json!("complete");
            }
            return reply(id, r);
        }
        let tid = format!("t{}-{tool}", self.tasks.len() + 1);
        if tool == "malformed" {
            let bad = json!({"status": "working", "createdAt": "x", "lastUpdatedAt": "x"});
            return reply(
                id,
                if self.modern {
                    json!({"resultType": "task", "status": "working"})
                } else {
                    json!({"task": bad})
                },
            );
        }
        let status = match tool.as_str() {
            "ask" => "input_required",
            "badstatus" => "sleeping",
            _ => "working",
        };
        self.tasks.insert(
            tid.clone(),
            Task {
                tool,
                status,
                gets: 0,
                result: None,
                message: None,
            },
        );
        let v = self.view(&tid);
        if self.modern {
            let mut r = json!({"resultType": "task"});
            for (k, x) in v.as_object().cloned().unwrap_or_default() {
                if !matches!(k.as_str(), "result" | "error" | "inputRequests") {
                    r[k] = x;
                }
            }
            reply(id, r)
        } else {
            reply(id, json!({"task": v}))
        }
    }

    fn get(&mut self, id: &Value, tid: &str) -> Vec<Value> {
        let modern = self.modern;
        let Some(t) = self.tasks.get_mut(tid) else {
            return vec![error(id, -32602, "unknown task")];
        };
        t.gets += 1;
        match t.tool.as_str() {
            "slow" if t.gets >= 2 => {
                t.status = "completed";
                t.result = Some(text("slow done"));
            }
            "fail" => {
                t.status = "failed";
                t.message = Some("the tool failed".into());
            }
            _ => {}
        }
        let answer = self.wrap(id, tid);
        if modern || self.tasks.get(tid).is_none_or(|t| t.tool != "push") {
            return vec![answer];
        }
        // Legacy push: the poll says "working", the status notification (sent first, so it
        // is on the same HTTP response stream) says "completed".
        if let Some(t) = self.tasks.get_mut(tid) {
            t.status = "completed";
            t.result = Some(text("pushed"));
        }
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": self.view(tid)});
        vec![note, answer]
    }

    fn wrap(&self, id: &Value, tid: &str) -> Value {
        let mut v = self.view(tid);
        if self.modern {
            v["resultType"] = json!("complete");
        }
        reply(id, v)
    }

    fn listen(&mut self, id: &Value, params: &Value) -> Vec<Value> {
        let ids: Vec<String> = params
            .pointer("/notifications/taskIds")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut out = vec![json!({"jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUB_KEY: id}, "notifications": {"taskIds": ids}}})];
        for tid in &ids {
            if let Some(t) = self.tasks.get_mut(tid) {
                if t.tool == "push" {
                    t.status = "completed";
                    t.result = Some(text("pushed"));
                    let mut p = self.view(tid);
                    p["_meta"] = json!({SUB_KEY: id});
                    out.push(json!({"jsonrpc": "2.0", "method": "notifications/tasks",
                        "params": p}));
                    // Polls keep saying "working": only the push completes it.
                    if let Some(t) = self.tasks.get_mut(tid) {
                        t.status = "working";
                        t.tool = "pushed".into();
                    }
                }
            }
        }
        out
    }

    fn legacy_result(&mut self, id: &Value, tid: &str) -> Vec<Value> {
        let Some(t) = self.tasks.get_mut(tid) else {
            return vec![error(id, -32602, "unknown task")];
        };
        match t.status {
            "failed" => vec![error(id, -32000, "the tool failed")],
            "input_required" => {
                self.waiting = Some((id.clone(), tid.to_owned()));
                vec![
                    json!({"jsonrpc": "2.0", "id": ELICIT_ID, "method": "elicitation/create",
                    "params": name_form()}),
                ]
            }
            _ => {
                if t.status == "working" {
                    t.status = "completed";
                }
                let r = t.result.clone().unwrap_or_else(|| text("done"));
                vec![reply(id, r)]
            }
        }
    }

    /// A response from the client: the legacy elicitation's answer completes the task.
    fn answered(&mut self, msg: &Value) -> Vec<Value> {
        if msg.get("id") != Some(&json!(ELICIT_ID)) {
            return Vec::new();
        }
        let Some((rid, tid)) = self.waiting.take() else {
            return Vec::new();
        };
        let name = msg
            .pointer("/result/content/name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        let r = text(&format!("hello {name}"));
        if let Some(t) = self.tasks.get_mut(&tid) {
            t.status = "completed";
            t.result = Some(r.clone());
        }
        vec![reply(&rid, r)]
    }

    fn update(&mut self, id: &Value, params: &Value) -> Vec<Value> {
        let tid = params["taskId"].as_str().unwrap_or_default();
        let Some(t) = self.tasks.get_mut(tid) else {
            return vec![error(id, -32602, "unknown task")];
        };
        if let Some(name) = params
            .pointer("/inputResponses/name/content/name")
            .and_then(Value::as_str)
        {
            t.status = "completed";
            t.result = Some(text(&format!("hello {name}")));
        }
        vec![reply(id, json!({"resultType": "complete"}))]
    }

    fn cancel(&mut self, id: &Value, tid: &str) -> Vec<Value> {
        let Some(t) = self.tasks.get_mut(tid) else {
            return vec![error(id, -32602, "unknown task")];
        };
        if !matches!(t.status, "completed" | "failed" | "cancelled") {
            t.status = "cancelled";
            t.message = Some("cancelled by request".into());
        }
        if self.modern {
            vec![reply(id, json!({"resultType": "complete"}))]
        } else {
            vec![self.wrap(id, tid)]
        }
    }

    fn handshake(&self, id: &Value, method: &str) -> Value {
        match (method, self.modern) {
            ("server/discover", true) => reply(
                id,
                json!({"supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
                "serverInfo": {"name": "task-server", "version": "1"},
                "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
            ),
            ("initialize", false) => reply(
                id,
                json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {},
                    "requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "task-server", "version": "1"}}),
            ),
            _ => error(id, -32601, "Method not found"),
        }
    }

    /// Handle one message from the client; the messages to send back, in order.
    pub fn handle(&mut self, msg: &Value) -> Vec<Value> {
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return self.answered(msg);
        };
        let Some(id) = msg.get("id").cloned() else {
            return Vec::new(); // notifications: nothing to say
        };
        let params = msg.get("params").cloned().unwrap_or_else(|| json!({}));
        let tid = params["taskId"].as_str().unwrap_or_default().to_owned();
        match method {
            "server/discover" | "initialize" => vec![self.handshake(&id, method)],
            "ping" => vec![reply(&id, json!({}))],
            "tools/call" => vec![self.call(&id, &params)],
            "tasks/get" => self.get(&id, &tid),
            "tasks/cancel" => self.cancel(&id, &tid),
            "tasks/update" if self.modern => self.update(&id, &params),
            "subscriptions/listen" if self.modern => self.listen(&id, &params),
            "tasks/result" if !self.modern => self.legacy_result(&id, &tid),
            "tasks/list" if !self.modern => {
                let tasks: Vec<Value> = self.tasks.keys().map(|k| self.view(k)).collect();
                vec![reply(&id, json!({"tasks": tasks}))]
            }
            _ => vec![error(&id, -32601, "Method not found")],
        }
    }
}
