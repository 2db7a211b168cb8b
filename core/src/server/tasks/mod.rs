//! The server side of tasks, both eras: the 2025-11-25 experimental tasks (TASK-L01, CAN-03,
//! PROG-03) and the 2026-07-28 `io.modelcontextprotocol/tasks` extension (TASK-M01…M04, SEP-2663).
//!
//! A tool registered task-capable ([`TaskSupport`]) runs as a task when the request asks for it:
//! on the legacy wire with `params.task`, on the modern wire when THIS request's client
//! capabilities list the extension. The task record is created in the [`TaskStore`] before the
//! answer (`CreateTaskResult`) goes out (TASK-M02: durably created first), then the handler runs
//! on its own tokio task with its own cancellation token: the request, its connection or HTTP
//! exchange ending does not stop it, `notifications/cancelled` does not stop it (CAN-03), only
//! `tasks/cancel` does (cooperatively, through the token). Results outlive the request; any
//! connection of the same principal reads them by `taskId` until the TTL runs out.
//!
//! A handler that needs client input while running as a task (an `input_required` outcome, or
//! `RequestContext::request_client` on the modern wire) parks the task in `input_required` with
//! the `inputRequests`; `tasks/update` delivers the answers and the handler re-runs with them
//! (modern). On a legacy session the requests go to the client as real requests (the MRTR shim).
//! Keys on the wire are unique for the task's lifetime: a key a handler reuses in a later round is
//! renamed on the wire and mapped back. No `requestState` ever crosses the task wire: the
//! handler's state stays in process.
//!
//! Progress and log notifications of a modern task after its creating request was answered have
//! nowhere to go (the modern wire has no session stream), so they are dropped; poll `tasks/get`
//! or listen for `notifications/tasks` instead. On a legacy session they keep flowing on the
//! session's channel with the original progress token until the task ends (PROG-03).

mod builder;
mod call;
mod handlers;
mod runner;
#[cfg(test)]
mod tests;
mod wire;

pub(crate) use builder::parse_tool_json;
pub use builder::TaskOptions;
pub(crate) use call::call_tool;
pub(crate) use handlers::handle;

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::context::RequestContext;
use super::session::lock;
use crate::tasks::{MemoryTaskStore, TaskStore};

/// The extension identifier (TASK-M01).
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `_meta` key tying a legacy message to its task (TASK-L01).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Whether a tool may run as a task (`execution.taskSupport`, TASK-L01).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task (the default): a `task` hint or the extension is ignored.
    #[default]
    Forbidden,
    /// A task when the client asks (legacy `task` param) or opts in (modern extension);
    /// otherwise a plain call.
    Optional,
    /// Only as a task: without the opt-in the call fails (legacy -32601, modern -32021).
    Required,
}

impl TaskSupport {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// The running tasks of this server and where their records live.
pub(crate) struct TaskEngine {
    pub opts: TaskOptions,
    pub store: Arc<dyn TaskStore>,
    /// Cancellation tokens of the handlers running in this process, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl TaskEngine {
    pub(crate) fn new(opts: TaskOptions) -> Self {
        let store = opts
            .store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryTaskStore::new(opts.max_tasks)));
        Self {
            opts,
            store,
            running: Mutex::new(HashMap::new()),
        }
    }
    pub(crate) fn register(&self, task_id: &str) -> CancellationToken {
        let t = CancellationToken::new();
        lock(&self.running).insert(task_id.to_owned(), t.clone());
        t
    }
    fn unregister(&self, task_id: &str) {
        lock(&self.running).remove(task_id);
    }
    /// Cancel the handler of `task_id` if it runs in this process.
    fn cancel_local(&self, task_id: &str) {
        if let Some(t) = lock(&self.running).get(task_id) {
            t.cancel();
        }
    }
}

/// True when THIS request's client capabilities list the extension (TASK-M01).
pub(crate) fn opted_in(ctx: &RequestContext) -> bool {
    super::context::has_capability(&ctx.client_capabilities(), &["extensions", EXTENSION])
}

/// -32021 naming the extension (TASK-M01, TASK-M04).
pub(crate) fn missing_extension() -> crate::ErrorObject {
    crate::ErrorObject::new(
        crate::error::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: extensions.{EXTENSION}"),
    )
    .with_data(serde_json::json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}}))
}

/// The owner key of a request's tasks: its verified principal, if any (AUTH-06).
fn owner_of(ctx: &RequestContext) -> Option<String> {
    ctx.principal().map(crate::auth::Principal::binding_key)
}

/// A fresh, unguessable task id (128 random bits, hex).
fn new_task_id() -> Result<String, crate::ErrorObject> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| {
        tracing::error!(error = %e, "no randomness for a task id");
        crate::ErrorObject::internal()
    })?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}
