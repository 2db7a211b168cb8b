//! The default, in-process [`TaskStore`]: bounded (`max_tasks`, refusal past the cap) and
//! TTL-reaping (an expired task is removed, freeing its memory, before the cap is checked and
//! whenever it is looked up).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{now_ms, TaskRecord, TaskStore, TaskStoreError};
use crate::future::BoxFuture;

struct Shared {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    changed: tokio::sync::Notify,
    max_tasks: usize,
}

/// Tasks in a bounded in-process map. Cheap to clone (shared).
#[derive(Clone)]
pub struct MemoryTaskStore {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("max_tasks", &self.shared.max_tasks)
            .field("len", &self.len())
            .finish()
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_TASKS)
    }
}

fn lock(m: &Mutex<HashMap<String, TaskRecord>>) -> MutexGuard<'_, HashMap<String, TaskRecord>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl MemoryTaskStore {
    /// The default bound on stored tasks.
    pub const DEFAULT_MAX_TASKS: usize = 10_000;

    /// A store holding at most `max_tasks` live tasks (at least 1).
    pub fn new(max_tasks: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                tasks: Mutex::new(HashMap::new()),
                changed: tokio::sync::Notify::new(),
                max_tasks: max_tasks.max(1),
            }),
        }
    }
    /// Records held now (expired ones included until reaped).
    pub fn len(&self) -> usize {
        lock(&self.shared.tasks).len()
    }
    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Drop expired records now; returns how many.
    pub fn reap_now(&self) -> usize {
        let n = {
            let now = now_ms();
            let mut m = lock(&self.shared.tasks);
            let before = m.len();
            m.retain(|_, r| !r.is_expired(now));
            let keep = m.len().max(16);
            m.shrink_to(keep);
            before - m.len()
        };
        if n > 0 {
            self.shared.changed.notify_waiters();
        }
        n
    }

    fn get_now(&self, task_id: &str) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let mut m = lock(&self.shared.tasks);
        match m.get(task_id) {
            Some(r) if r.is_expired(now) => {
                m.remove(task_id);
                Err(TaskStoreError::NotFound)
            }
            Some(r) => Ok(r.clone()),
            None => Err(TaskStoreError::NotFound),
        }
    }

    fn create_now(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        let max = self.shared.max_tasks;
        if lock(&self.shared.tasks).len() >= max {
            self.reap_now();
        }
        let mut m = lock(&self.shared.tasks);
        if m.len() >= max {
            return Err(TaskStoreError::Full { max });
        }
        if m.contains_key(&record.task_id) {
            return Err(TaskStoreError::Conflict);
        }
        record.version = 1;
        m.insert(record.task_id.clone(), record.clone());
        Ok(record)
    }

    fn update_now(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let stored = {
            let mut m = lock(&self.shared.tasks);
            let Some(cur) = m.get_mut(&record.task_id) else {
                return Err(TaskStoreError::NotFound);
            };
            if cur.is_expired(now) {
                m.remove(&record.task_id);
                return Err(TaskStoreError::NotFound);
            }
            if cur.version != record.version {
                return Err(TaskStoreError::Conflict);
            }
            record.version += 1;
            *cur = record.clone();
            record
        };
        self.shared.changed.notify_waiters();
        Ok(stored)
    }

    fn list_now(
        &self,
        owner: Option<&str>,
        legacy: bool,
        cursor: Option<&str>,
        limit: usize,
    ) -> (Vec<TaskRecord>, Option<String>) {
        let now = now_ms();
        let mut live: Vec<TaskRecord> = lock(&self.shared.tasks)
            .values()
            .filter(|r| !r.is_expired(now) && r.legacy == legacy && r.owner.as_deref() == owner)
            .cloned()
            .collect();
        live.sort_by(|a, b| (a.created_at_ms, &a.task_id).cmp(&(b.created_at_ms, &b.task_id)));
        let start = cursor
            .and_then(|c| live.iter().position(|r| r.task_id == c))
            .map_or(0, |i| i + 1);
        let limit = limit.max(1);
        let page: Vec<TaskRecord> = live.iter().skip(start).take(limit).cloned().collect();
        let next = (start + page.len() < live.len())
            .then(|| page.last().map(|r| r.task_id.clone()))
            .flatten();
        (page, next)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let r = self.create_now(record);
        Box::pin(async move { r })
    }
    fn get(&self, task_id: &str) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let r = self.get_now(task_id);
        Box::pin(async move { r })
    }
    fn update(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let r = self.update_now(record);
        Box::pin(async move { r })
    }
    fn list(
        &self,
        owner: Option<String>,
        legacy: bool,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<super::TaskPage, TaskStoreError>> {
        let r = self.list_now(owner.as_deref(), legacy, cursor.as_deref(), limit);
        Box::pin(async move { Ok(r) })
    }
    fn wait_for_change(
        &self,
        task_id: &str,
        seen_version: u64,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let this = self.clone();
        let id = task_id.to_owned();
        Box::pin(async move {
            loop {
                let notified = this.shared.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let rec = this.get_now(&id)?;
                if rec.version != seen_version {
                    return Ok(rec);
                }
                // Wake at the TTL at the latest, so a waiter learns of the expiry.
                let until_expiry = rec
                    .expires_at_ms()
                    .map(|e| std::time::Duration::from_millis(e.saturating_sub(now_ms()) + 1));
                match until_expiry {
                    Some(d) => {
                        let _ = tokio::time::timeout(d, notified).await;
                    }
                    None => notified.await,
                }
            }
        })
    }
    fn reap_expired(&self) -> BoxFuture<usize> {
        let n = self.reap_now();
        Box::pin(async move { n })
    }
}
