//! Task records and the task store (REQUIREMENTS TASK-L01 for the 2025-11-25 experimental tasks,
//! TASK-M01…M04 for the `io.modelcontextprotocol/tasks` extension, SEP-2663).
//!
//! A task is a durable record: what the server tells a client about a long-running request and,
//! once it ends, its result or error. The record is plain serializable data, so a store shared by
//! every worker of a deployment (e.g. Redis) can implement [`TaskStore`] as well as the default
//! in-process [`MemoryTaskStore`]: nothing in the trait is an in-process handle. Handles that only
//! make sense in the process running the handler (its cancellation token) stay in the server.
//!
//! Concurrency is optimistic: every record carries a `version`; [`TaskStore::update`] refuses a
//! record whose version is not the stored one ([`TaskStoreError::Conflict`]) and the caller
//! re-reads and retries ([`modify`]). A Redis store maps this onto `WATCH`/`MULTI`.

mod memory;
#[cfg(test)]
mod memory_tests;
mod time;

pub use memory::MemoryTaskStore;
pub use time::{iso8601, now_ms};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{codes, ErrorObject};
use crate::future::BoxFuture;

/// The status of a task (TASK-L01; the last three are terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The handler is running.
    Working,
    /// The handler waits for client input (`inputRequests`).
    InputRequired,
    /// The handler finished with a result (a tool error is a completed task with `isError`).
    Completed,
    /// The request failed with a protocol-level error.
    Failed,
    /// The task was cancelled with `tasks/cancel`.
    Cancelled,
}

impl TaskStatus {
    /// True for `completed`, `failed` and `cancelled`.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One task, as stored. Every field is plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TaskRecord {
    /// The server-minted id (unguessable; the only handle a client needs).
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Human-readable detail of the status.
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Last change, milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// Retention from creation; `None` = unlimited. Past it the task is gone (not found).
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// Created by a 2025-11-25 `task`-augmented request (legacy wire shapes) rather than the
    /// modern extension; each era sees only its own tasks.
    pub legacy: bool,
    /// The principal that created it (AUTH-06 binding key); others never see it.
    pub owner: Option<String>,
    /// Pending input requests, by wire key (status `input_required`).
    pub input_requests: Map<String, Value>,
    /// Answers received by `tasks/update` and not yet handed to the handler, by wire key.
    pub input_responses: Map<String, Value>,
    /// Every input key ever issued for this task (keys are unique for its lifetime, TASK-M03).
    pub used_keys: Vec<String>,
    /// The result, once completed.
    pub result: Option<Value>,
    /// The error, once failed.
    pub error: Option<ErrorObject>,
    /// Optimistic-concurrency version, bumped by the store on every write.
    pub version: u64,
}

impl TaskRecord {
    /// A new `working` task created now.
    pub fn new(task_id: impl Into<String>, ttl_ms: Option<u64>, legacy: bool) -> Self {
        let now = now_ms();
        Self {
            task_id: task_id.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms,
            poll_interval_ms: None,
            legacy,
            owner: None,
            input_requests: Map::new(),
            input_responses: Map::new(),
            used_keys: Vec::new(),
            result: None,
            error: None,
            version: 0,
        }
    }
    /// When the task stops existing, if it has a TTL.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|t| self.created_at_ms.saturating_add(t))
    }
    /// True once its TTL has run out at `now`.
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_at_ms().is_some_and(|e| now >= e)
    }
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No such task (never created, expired, or not visible to the caller).
    #[error("task not found")]
    NotFound,
    /// The store holds its maximum number of tasks.
    #[error("task store is full ({max} tasks)")]
    Full {
        /// The cap.
        max: usize,
    },
    /// The record changed since it was read; re-read and retry.
    #[error("task record changed concurrently")]
    Conflict,
    /// A backend failure (connection, serialization), logged and answered as -32603.
    #[error("task store backend: {0}")]
    Backend(String),
}

impl TaskStoreError {
    /// The JSON-RPC error for the peer: not found → -32602, full → -32603 saying so, anything
    /// else → a generic -32603 (backend details stay in the log).
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::NotFound => ErrorObject::invalid_params("Task not found"),
            Self::Full { .. } => ErrorObject::new(
                codes::INTERNAL_ERROR,
                "Too many tasks: the server's task store is full; retry after tasks finish or expire",
            ),
            Self::Conflict | Self::Backend(_) => {
                tracing::error!(error = %self, "task store failure");
                ErrorObject::internal()
            }
        }
    }
}

/// One page of [`TaskStore::list`]: the records and the cursor of the next page.
pub type TaskPage = (Vec<TaskRecord>, Option<String>);

/// Where tasks live. Implementations must be cheap to share (`Arc<dyn TaskStore>`) and never
/// hold a lock across an await.
pub trait TaskStore: Send + Sync + 'static {
    /// Store a new record (its `version` becomes 1).
    ///
    /// # Errors
    /// [`TaskStoreError::Full`] past the store's bound; `Conflict` for a taken id.
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;
    /// The record of `task_id`; an expired record is [`TaskStoreError::NotFound`].
    fn get(&self, task_id: &str) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;
    /// Replace a record read earlier; the stored version must equal `record.version`
    /// ([`TaskStoreError::Conflict`] otherwise). Returns the stored record (version bumped).
    fn update(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;
    /// One page of live records visible to `owner` in one era, oldest first, with the cursor of
    /// the next page.
    fn list(
        &self,
        owner: Option<String>,
        legacy: bool,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>>;
    /// Resolve with the record once its version differs from `seen_version` (at once when it
    /// already does).
    ///
    /// # Errors
    /// [`TaskStoreError::NotFound`] when the task is gone (or expires while waiting).
    fn wait_for_change(
        &self,
        task_id: &str,
        seen_version: u64,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;
    /// Drop every expired record; returns how many were dropped.
    fn reap_expired(&self) -> BoxFuture<usize>;
    /// True when other processes may write the records (a store shared by several workers):
    /// the server then watches each task it runs, so a `tasks/cancel` served by another worker
    /// still stops the handler here (TASK-M03, TASK-L01). In-process stores answer `false`.
    fn is_shared(&self) -> bool {
        false
    }
}

/// Read-modify-write with retries on [`TaskStoreError::Conflict`]. `f` returns `false` to leave
/// the record unchanged (the current record is returned).
///
/// # Errors
/// The store's error, or `Conflict` after 64 lost races.
pub async fn modify(
    store: &dyn TaskStore,
    task_id: &str,
    mut f: impl FnMut(&mut TaskRecord) -> bool,
) -> Result<TaskRecord, TaskStoreError> {
    for _ in 0..64 {
        let mut rec = store.get(task_id).await?;
        if !f(&mut rec) {
            return Ok(rec);
        }
        rec.last_updated_at_ms = now_ms().max(rec.last_updated_at_ms);
        match store.update(rec).await {
            Err(TaskStoreError::Conflict) => continue,
            other => return other,
        }
    }
    Err(TaskStoreError::Conflict)
}
