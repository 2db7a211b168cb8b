//! The client side of MCP tasks, both eras (REQUIREMENTS TASK-L01, TASK-M01…M04, HTTP-09).
//!
//! - Modern (2026-07-28 + the `io.modelcontextprotocol/tasks` extension): a task call lists the
//!   extension under the envelope's client capabilities *on that request only* (TASK-M01); the
//!   server may then answer `tools/call` with `resultType: "task"` and the task flattened into the
//!   result (TASK-M02). `tasks/get`, `tasks/update` and `tasks/cancel` carry `taskId` (mirrored
//!   into `Mcp-Name` over HTTP, HTTP-09); `tasks/list` and `tasks/result` do not exist (TASK-M03).
//! - Legacy 2025-11-25: a task call adds `task: {ttl?}` to the params and the server answers
//!   `CreateTaskResult {task}`; `tasks/get`, `tasks/result` (blocks until terminal), `tasks/list`
//!   and `tasks/cancel` exist (TASK-L01).
//!
//! A server may answer synchronously even when asked for a task, so a task call returns
//! [`TaskCallOutcome`]. Everything a server says about a task is checked: an unknown status or a
//! malformed task is a [`ClientError::Protocol`] naming the field, never a panic.

use serde_json::{json, Map, Value};
use std::time::Duration;

use super::types::ListPage;
use super::{mrtr, CallOptions, Client, ClientError, Era};
use crate::protocol::CallToolResult;

/// The tasks extension identifier (EXT-03).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Add the tasks extension to a modern client capabilities object (TASK-M01).
pub(crate) fn opt_in(caps: &mut Value) {
    let Some(caps) = caps.as_object_mut() else {
        return;
    };
    let ext = caps
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if !ext.is_object() {
        *ext = Value::Object(Map::new());
    }
    if let Some(ext) = ext.as_object_mut() {
        ext.entry(TASKS_EXTENSION).or_insert_with(|| json!({}));
    }
}

/// Where a task is in its life (TASK-L01: the last three are terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input from the client (modern: the task's `inputRequests`).
    InputRequired,
    /// Done; the result is available.
    Completed,
    /// Ended in an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Parse a wire name (`None` for anything else).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// True for `completed`, `failed` and `cancelled`: the status never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One task as the server described it, either era.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskInfo {
    /// The task identifier.
    pub task_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    pub status_message: Option<String>,
    /// When it was created (ISO 8601, as sent).
    pub created_at: Option<String>,
    /// When it last changed (ISO 8601, as sent).
    pub last_updated_at: Option<String>,
    /// How long the server keeps it after creation, in milliseconds (`None`: unlimited or not
    /// said); modern `ttlMs`, legacy `ttl`.
    pub ttl_ms: Option<u64>,
    /// The polling interval the server suggests, in milliseconds; modern `pollIntervalMs`,
    /// legacy `pollInterval`.
    pub poll_interval_ms: Option<u64>,
    /// Modern `input_required`: what the task waits for, keyed (answered with `tasks/update`).
    pub input_requests: Option<Map<String, Value>>,
    /// Modern `completed`: the result of the original request.
    pub result: Option<Value>,
    /// Modern `failed`: the JSON-RPC error the request ended in.
    pub error: Option<Value>,
    /// The object the task was read from.
    pub raw: Value,
}

fn opt_str(o: &Map<String, Value>, key: &str) -> Result<Option<String>, ClientError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ClientError::Protocol(format!(
            "the task's {key} must be a string"
        ))),
    }
}

/// A non-negative integer in milliseconds under `modern` or `legacy`, else `None`.
fn opt_ms(o: &Map<String, Value>, modern: &str, legacy: &str) -> Result<Option<u64>, ClientError> {
    let (key, v) = match (o.get(modern), o.get(legacy)) {
        (Some(v), _) => (modern, v),
        (None, Some(v)) => (legacy, v),
        (None, None) => return Ok(None),
    };
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n.as_u64().map(Some).ok_or_else(|| {
            ClientError::Protocol(format!(
                "the task's {key} must be a non-negative integer, got {n}"
            ))
        }),
        _ => Err(ClientError::Protocol(format!(
            "the task's {key} must be a number or null"
        ))),
    }
}

fn opt_obj(o: &Map<String, Value>, key: &str) -> Result<Option<Map<String, Value>>, ClientError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m.clone())),
        Some(_) => Err(ClientError::Protocol(format!(
            "the task's {key} must be an object"
        ))),
    }
}

impl TaskInfo {
    /// Read a task: a flattened task (modern results and pushes, legacy `tasks/get`) or an
    /// object whose `task` member is one (legacy `CreateTaskResult`, a push wrapping the task).
    ///
    /// # Errors
    /// [`ClientError::Protocol`] naming the missing or malformed field, or the unknown status.
    pub fn parse(v: &Value) -> Result<Self, ClientError> {
        let Some(outer) = v.as_object() else {
            return Err(ClientError::Protocol("a task must be a JSON object".into()));
        };
        let o = match outer.get("task") {
            Some(Value::Object(inner)) if !outer.contains_key("taskId") => inner,
            _ => outer,
        };
        let task_id = match o.get("taskId") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => {
                return Err(ClientError::Protocol("the task's taskId is empty".into()))
            }
            Some(_) => {
                return Err(ClientError::Protocol(
                    "the task's taskId must be a string".into(),
                ))
            }
            None => return Err(ClientError::Protocol("the task has no taskId".into())),
        };
        let status = match o.get("status") {
            Some(Value::String(s)) => TaskStatus::parse(s).ok_or_else(|| {
                ClientError::Protocol(format!("task {task_id} has an unknown status {s:?}"))
            })?,
            Some(_) => {
                return Err(ClientError::Protocol(format!(
                    "task {task_id}'s status must be a string"
                )))
            }
            None => {
                return Err(ClientError::Protocol(format!(
                    "task {task_id} has no status"
                )))
            }
        };
        let result = opt_obj(o, "result")?.map(Value::Object);
        let error = opt_obj(o, "error")?.map(Value::Object);
        Ok(TaskInfo {
            status_message: opt_str(o, "statusMessage")?,
            created_at: opt_str(o, "createdAt")?,
            last_updated_at: opt_str(o, "lastUpdatedAt")?,
            ttl_ms: opt_ms(o, "ttlMs", "ttl")?,
            poll_interval_ms: opt_ms(o, "pollIntervalMs", "pollInterval")?,
            input_requests: opt_obj(o, "inputRequests")?,
            result,
            error,
            raw: Value::Object(o.clone()),
            task_id,
            status,
        })
    }
}

/// What a task call ended in: the server may answer synchronously even when asked for a task.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskCallOutcome {
    /// The server answered at once.
    Completed(CallToolResult),
    /// The server created a task: follow it with [`Client::wait_task`] or [`Client::get_task`].
    Task(TaskInfo),
}

impl TaskCallOutcome {
    /// The one JSON shape every binding hands out: `{"kind": "task", "task": <Task as sent>}`
    /// or `{"kind": "result", "result": <CallToolResult>}`. `kind` lets a C caller switch on
    /// one string; Python and Node read `task`/`result` and return a `Task` or the result.
    pub fn to_json(&self) -> Value {
        match self {
            TaskCallOutcome::Completed(r) => json!({"kind": "result", "result": r}),
            TaskCallOutcome::Task(t) => json!({"kind": "task", "task": t.raw}),
        }
    }
}

/// Options of a task call.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TaskCallOptions {
    /// How long the server should keep the task (legacy `task.ttl`; modern servers choose).
    pub ttl: Option<Duration>,
    /// Timeout, cancellation, progress, log level and `_meta` of the request itself.
    pub call: CallOptions,
}

impl TaskCallOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask the server to keep the task this long (legacy `task.ttl`).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }
    /// The options of the request itself.
    #[must_use]
    pub fn call(mut self, call: CallOptions) -> Self {
        self.call = call;
        self
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn task_params(task_id: &str) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("taskId".into(), json!(task_id));
    p
}

impl Client {
    /// Options of a request about a task: modern requests opt into the extension (a server
    /// without it answers -32021, TASK-M04).
    pub(crate) fn task_opts(&self, opts: &CallOptions) -> CallOptions {
        let mut o = opts.clone();
        o.tasks_opt_in = self.is_modern();
        o
    }

    fn legacy_only(&self, method: &str) -> Result<(), ClientError> {
        if self.is_modern() {
            return Err(ClientError::InvalidArgument(format!(
                "{method} does not exist in the modern era (TASK-M03)"
            )));
        }
        Ok(())
    }

    /// `tools/call` asking for a task: modern requests list the tasks extension in their
    /// capabilities (TASK-M01), legacy ones add `task: {ttl}` (TASK-L01). `input_required`
    /// before the task exists is answered through the registered handlers, as for
    /// [`Client::call_tool`].
    ///
    /// # Errors
    /// A malformed task, or a [`CallToolResult`] that does not parse, is a
    /// [`ClientError::Protocol`]; otherwise as [`Client::call_tool`].
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        opts: TaskCallOptions,
    ) -> Result<TaskCallOutcome, ClientError> {
        let mut p = Map::new();
        p.insert("name".into(), json!(name));
        if !arguments.is_null() {
            p.insert("arguments".into(), arguments);
        }
        let modern = self.is_modern();
        if !modern {
            let mut task = Map::new();
            if let Some(t) = opts.ttl {
                task.insert("ttl".into(), json!(millis(t)));
            }
            p.insert("task".into(), Value::Object(task));
        }
        let call = self.task_opts(&opts.call);
        let raw = mrtr::drive(self, "tools/call", p, &call).await?;
        let is_task = if modern {
            raw.get("resultType").and_then(Value::as_str) == Some("task")
        } else {
            raw.get("task").is_some()
        };
        if is_task {
            return Ok(TaskCallOutcome::Task(TaskInfo::parse(&raw)?));
        }
        Ok(TaskCallOutcome::Completed(self.tool_result(name, raw)?))
    }

    /// A `CallToolResult`, its `structuredContent` checked as [`Client::call_tool`] does.
    pub(crate) fn tool_result(
        &self,
        name: &str,
        raw: Value,
    ) -> Result<CallToolResult, ClientError> {
        let result: CallToolResult = serde_json::from_value(raw)
            .map_err(|e| ClientError::Protocol(format!("invalid CallToolResult: {e}")))?;
        let is_error = result.is_error == Some(true);
        self.check_structured(name, is_error, result.structured_content.as_ref())?;
        Ok(result)
    }

    /// `tasks/get`: the task's current state (modern: with `inputRequests`, `result` or
    /// `error` by status, TASK-M03).
    ///
    /// # Errors
    /// A malformed task is a [`ClientError::Protocol`]; see [`ClientError`].
    pub async fn get_task(&self, task_id: &str) -> Result<TaskInfo, ClientError> {
        self.get_task_with(task_id, CallOptions::default()).await
    }

    /// [`Client::get_task`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::get_task`].
    pub async fn get_task_with(
        &self,
        task_id: &str,
        opts: CallOptions,
    ) -> Result<TaskInfo, ClientError> {
        let mut o = self.task_opts(&opts);
        o.no_cache = true;
        let raw = self
            .request_once("tasks/get", task_params(task_id), &o)
            .await?;
        let info = TaskInfo::parse(&raw)?;
        if info.task_id != task_id {
            return Err(ClientError::Protocol(format!(
                "tasks/get for {task_id} answered task {}",
                info.task_id
            )));
        }
        Ok(info)
    }

    /// `tasks/cancel`: ask the server to cancel the task (cooperative; never
    /// `notifications/cancelled`, which does not cancel tasks, TASK-M03). Legacy servers answer
    /// the task's state, returned here; modern servers answer an empty acknowledgement (`None`).
    ///
    /// # Errors
    /// See [`ClientError`]; a legacy answer that is not a task is a [`ClientError::Protocol`].
    pub async fn cancel_task(&self, task_id: &str) -> Result<Option<TaskInfo>, ClientError> {
        self.cancel_task_with(task_id, CallOptions::default()).await
    }

    /// [`Client::cancel_task`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::cancel_task`].
    pub async fn cancel_task_with(
        &self,
        task_id: &str,
        opts: CallOptions,
    ) -> Result<Option<TaskInfo>, ClientError> {
        let o = self.task_opts(&opts);
        let raw = self
            .request_once("tasks/cancel", task_params(task_id), &o)
            .await?;
        if self.is_modern() {
            return Ok(None);
        }
        TaskInfo::parse(&raw).map(Some)
    }

    /// `tasks/update` (modern): answer a task's `inputRequests` by key (TASK-M03). The wait
    /// loop ([`Client::wait_task`]) does this through the registered handlers; this is the
    /// manual form.
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] on a legacy connection (its servers ask through
    /// server→client requests instead); see [`ClientError`].
    pub async fn update_task(
        &self,
        task_id: &str,
        input_responses: Map<String, Value>,
    ) -> Result<(), ClientError> {
        self.update_task_with(task_id, input_responses, CallOptions::default())
            .await
    }

    /// [`Client::update_task`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::update_task`].
    pub async fn update_task_with(
        &self,
        task_id: &str,
        input_responses: Map<String, Value>,
        opts: CallOptions,
    ) -> Result<(), ClientError> {
        if !self.is_modern() {
            return Err(ClientError::InvalidArgument(
                "tasks/update exists only in the modern era; legacy servers ask through \
                 server requests"
                    .into(),
            ));
        }
        let mut p = task_params(task_id);
        p.insert("inputResponses".into(), Value::Object(input_responses));
        let o = self.task_opts(&opts);
        self.request_once("tasks/update", p, &o).await.map(|_| ())
    }

    /// `tasks/list` (legacy only; the modern extension has none, TASK-M03).
    ///
    /// # Errors
    /// [`ClientError::InvalidArgument`] on a modern connection; a malformed task is a
    /// [`ClientError::Protocol`].
    pub async fn list_tasks(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListPage<TaskInfo>, ClientError> {
        self.list_tasks_with(cursor, CallOptions::default()).await
    }

    /// [`Client::list_tasks`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::list_tasks`].
    pub async fn list_tasks_with(
        &self,
        cursor: Option<&str>,
        opts: CallOptions,
    ) -> Result<ListPage<TaskInfo>, ClientError> {
        self.legacy_only("tasks/list")?;
        let mut p = Map::new();
        if let Some(c) = cursor {
            p.insert("cursor".into(), json!(c));
        }
        let mut o = opts;
        o.no_cache = true;
        let raw = self.request_once("tasks/list", p, &o).await?;
        let Some(list) = raw.get("tasks").and_then(Value::as_array) else {
            return Err(ClientError::Protocol(
                "tasks/list answered without a tasks array".into(),
            ));
        };
        let items = list.iter().map(TaskInfo::parse).collect::<Result<_, _>>()?;
        let next_cursor = match raw.get("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Err(ClientError::Protocol(
                    "tasks/list nextCursor must be a string".into(),
                ))
            }
        };
        Ok(ListPage {
            items,
            next_cursor,
            cache: super::types::ResultCacheHints::of(&raw),
            meta: raw.get("_meta").cloned(),
            raw,
        })
    }

    /// The result of a tool-call task. Legacy: `tasks/result`, which blocks until the task is
    /// terminal (a failed task's error arrives as the call's error). Modern: the `result` of a
    /// completed task from `tasks/get`.
    ///
    /// # Errors
    /// Modern: [`ClientError::InvalidArgument`] while the task is not terminal (use
    /// [`Client::wait_task`]), the task's error as [`ClientError::Rpc`] when it failed,
    /// [`ClientError::Protocol`] when it was cancelled or its result is malformed.
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        self.task_result_with(task_id, CallOptions::default()).await
    }

    /// [`Client::task_result`] with per-call options.
    ///
    /// # Errors
    /// As [`Client::task_result`].
    pub async fn task_result_with(
        &self,
        task_id: &str,
        opts: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        if self.era() == Some(Era::Legacy) {
            let mut o = opts;
            o.no_cache = true;
            let raw = self
                .request_once("tasks/result", task_params(task_id), &o)
                .await?;
            return self.tool_result("", raw);
        }
        let info = self.get_task_with(task_id, opts).await?;
        self.terminal_result(&info)
    }

    /// The tool result of a terminal modern task, or the error it ended in.
    pub(crate) fn terminal_result(&self, info: &TaskInfo) -> Result<CallToolResult, ClientError> {
        match info.status {
            TaskStatus::Completed => match &info.result {
                Some(r) => self.tool_result("", r.clone()),
                None => Err(ClientError::Protocol(format!(
                    "task {} completed without a result",
                    info.task_id
                ))),
            },
            TaskStatus::Failed => Err(failed(info)),
            TaskStatus::Cancelled => Err(ClientError::Protocol(format!(
                "task {} was cancelled{}",
                info.task_id,
                info.status_message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ))),
            s => Err(ClientError::InvalidArgument(format!(
                "task {} is still {s}; wait for it first",
                info.task_id
            ))),
        }
    }
}

/// A failed task as an error: its JSON-RPC error when it carries one, else a protocol error
/// with the status message.
pub(crate) fn failed(info: &TaskInfo) -> ClientError {
    if let Some(e) = info
        .error
        .as_ref()
        .and_then(|e| serde_json::from_value::<crate::error::ErrorObject>(e.clone()).ok())
    {
        return ClientError::Rpc(e);
    }
    ClientError::Protocol(format!(
        "task {} failed{}",
        info.task_id,
        info.status_message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one outcome shape the C ABI, Python and Node hand out (the task as sent).
    #[test]
    fn outcome_json_is_kind_plus_its_member() {
        let raw = json!({"taskId": "t1", "status": "working"});
        let t = TaskInfo::parse(&raw).expect("task");
        assert_eq!(
            TaskCallOutcome::Task(t).to_json(),
            json!({"kind": "task", "task": t_raw(&raw)})
        );
        let r: CallToolResult = serde_json::from_value(json!({"content": []})).expect("result");
        let v = TaskCallOutcome::Completed(r.clone()).to_json();
        assert_eq!(v, json!({"kind": "result", "result": r}));
        assert_eq!(Era::Legacy.as_str(), "legacy");
        assert_eq!(Era::Modern.as_str(), "modern");
    }

    fn t_raw(v: &Value) -> Value {
        TaskInfo::parse(v).expect("task").raw
    }

    #[test]
    fn parses_both_eras_and_refuses_malformed_tasks() {
        let m = TaskInfo::parse(&json!({"resultType": "task", "taskId": "t1",
            "status": "working", "createdAt": "a", "lastUpdatedAt": "b", "ttlMs": null,
            "pollIntervalMs": 250}))
        .expect("modern");
        assert_eq!(
            (m.status, m.ttl_ms, m.poll_interval_ms),
            (TaskStatus::Working, None, Some(250))
        );
        let l = TaskInfo::parse(&json!({"task": {"taskId": "t2", "status": "input_required",
            "createdAt": "a", "lastUpdatedAt": "b", "ttl": 60000, "pollInterval": 100}}))
        .expect("legacy CreateTaskResult");
        assert_eq!(l.task_id, "t2");
        assert_eq!((l.ttl_ms, l.poll_interval_ms), (Some(60000), Some(100)));
        assert!(!l.status.is_terminal() && TaskStatus::Cancelled.is_terminal());
        for (bad, needle) in [
            (json!([]), "object"),
            (json!({"status": "working"}), "no taskId"),
            (
                json!({"taskId": 7, "status": "working"}),
                "taskId must be a string",
            ),
            (json!({"taskId": "", "status": "working"}), "empty"),
            (
                json!({"taskId": "t", "status": "sleeping"}),
                "unknown status",
            ),
            (json!({"taskId": "t"}), "no status"),
            (
                json!({"taskId": "t", "status": "working", "pollIntervalMs": -1}),
                "non-negative",
            ),
            (
                json!({"taskId": "t", "status": "working", "ttlMs": "1"}),
                "number or null",
            ),
            (
                json!({"taskId": "t", "status": "input_required", "inputRequests": []}),
                "object",
            ),
            (
                json!({"taskId": "t", "status": "completed", "result": 3}),
                "object",
            ),
            (
                json!({"taskId": "t", "status": "working", "createdAt": 3}),
                "string",
            ),
        ] {
            let e = TaskInfo::parse(&bad).expect_err("refused").to_string();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn opt_in_adds_the_extension_once() {
        let mut caps = json!({"sampling": {}, "extensions": {"x/y": {"a": 1}}});
        opt_in(&mut caps);
        opt_in(&mut caps);
        assert_eq!(
            caps,
            json!({"sampling": {}, "extensions": {"x/y": {"a": 1}, TASKS_EXTENSION: {}}})
        );
    }

    #[test]
    fn a_failed_task_surfaces_its_error() {
        let info = TaskInfo::parse(&json!({"taskId": "t", "status": "failed",
            "error": {"code": -32000, "message": "boom"}}))
        .expect("parses");
        assert_eq!(failed(&info).rpc_code(), Some(-32000));
        let bare = TaskInfo::parse(&json!({"taskId": "t", "status": "failed",
            "statusMessage": "disk full"}))
        .expect("parses");
        assert!(failed(&bare).to_string().contains("disk full"));
    }
}
