//! [`RedisTaskStore`]: the [`TaskStore`] of several server processes sharing one Redis, so a
//! task created through one worker is read, updated, waited on, listed and cancelled through any
//! other (TASK-L01 for the 2025-11-25 tasks, TASK-M01…M04 for the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663).
//!
//! - Records are JSON in a hash `{prefix}tasks:{id}` whose Redis TTL follows the record's TTL;
//!   every write is an atomic compare-and-set on the stored version (a Lua script), and so is
//!   the cap (`max_tasks`, counted over every worker).
//! - `wait_for_change` wakes on a per-prefix pub/sub channel every update publishes to, so a
//!   waiter wakes when ANOTHER process changes the task; it also re-reads at a bounded interval,
//!   so a message lost while Redis reconnects delays a waiter, never strands it.
//! - Redis down: each call fails within the configured timeout with [`TaskStoreError::Backend`]
//!   (answered as a generic -32603; the details go to the log only); nothing queues in memory;
//!   the connection manager reconnects with backoff and re-subscribes when Redis returns.

mod scripts;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind, Script, Value};
use tokio::sync::{broadcast, OnceCell};

use crate::future::BoxFuture;
use crate::tasks::{now_ms, TaskPage, TaskRecord, TaskStore, TaskStoreError};

/// Ids reaped per script run (bounds the time one script blocks Redis).
const REAP_BATCH: usize = 1000;
/// Expired ids swept by every create (keeps the index from growing between reaps).
const CREATE_SWEEP: usize = 100;
/// Most index entries one `list` call reads past dead ones before it returns a short page.
const LIST_SCAN_MAX: usize = 10_000;
/// Longest cursor accepted; a longer one (never minted here) restarts the listing.
const MAX_CURSOR_LEN: usize = 512;

/// Limits of a [`RedisTaskStore`]. Every field has a safe default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RedisTaskOptions {
    /// Most live tasks across every worker sharing the prefix (default 10 000); past it a
    /// task-creating call fails with -32603 saying the store is full.
    pub max_tasks: usize,
    /// Bound on every store call, connecting included (default 5 s).
    pub op_timeout: Duration,
    /// Bound on one connection attempt (default 2 s).
    pub connect_timeout: Duration,
    /// How often a waiter re-reads its task even without a change message (default 5 s).
    pub recheck_interval: Duration,
    /// Change messages buffered for this process's waiters (default 1024); a waiter that falls
    /// behind re-reads its task instead.
    pub change_buffer: usize,
}

impl Default for RedisTaskOptions {
    fn default() -> Self {
        Self {
            max_tasks: crate::tasks::MemoryTaskStore::DEFAULT_MAX_TASKS,
            op_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            recheck_interval: Duration::from_secs(5),
            change_buffer: 1024,
        }
    }
}

/// The key names of one prefix.
struct Keys {
    /// `{prefix}tasks:`, followed by a task id.
    record: String,
    all: String,
    where_: String,
    list: String,
    channel: String,
}

impl Keys {
    fn new(prefix: &str) -> Self {
        Self {
            record: format!("{prefix}tasks:"),
            all: format!("{prefix}tasks.all"),
            where_: format!("{prefix}tasks.where"),
            list: format!("{prefix}tasks.list:"),
            channel: format!("{prefix}tasks.changed"),
        }
    }
    fn record(&self, id: &str) -> String {
        format!("{}{id}", self.record)
    }
    /// One sorted set per era and owner (`-` = no owner, `=` + binding key otherwise).
    fn list(&self, legacy: bool, owner: Option<&str>) -> String {
        let era = if legacy { 'l' } else { 'm' };
        match owner {
            Some(o) => format!("{}{era}:={o}", self.list),
            None => format!("{}{era}:-", self.list),
        }
    }
}

/// The list member of a record: zero-padded creation time, then the id, so lexical order is
/// `(created_at_ms, task_id)` order, the same as the in-process store's.
fn member(r: &TaskRecord) -> String {
    format!("{:020}:{}", r.created_at_ms, r.task_id)
}

fn id_of_member(m: &str) -> &str {
    m.get(21..).unwrap_or("")
}

struct Inner {
    client: redis::Client,
    conn: OnceCell<ConnectionManager>,
    keys: Keys,
    opts: RedisTaskOptions,
    changes: broadcast::Sender<String>,
    create: Script,
    update: Script,
    reap: Script,
    forget: Script,
}

/// Tasks in Redis, shared by every process using the same URL and prefix. Cheap to clone.
#[derive(Clone)]
pub struct RedisTaskStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: only the key prefix and limits are shown.
        f.debug_struct("RedisTaskStore")
            .field("record_keys", &self.inner.keys.record)
            .field("opts", &self.inner.opts)
            .finish_non_exhaustive()
    }
}

fn backend(what: &str, e: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Backend(format!("redis {what}: {e}"))
}

impl RedisTaskStore {
    /// A store on `url` (`redis://host:port/db`) under the key prefix `prefix` (e.g. `mcp:`),
    /// with the default [`RedisTaskOptions`]. Only validates the URL: it connects lazily on the
    /// tokio runtime at the first call, and reconnects with backoff.
    ///
    /// # Errors
    /// [`TaskStoreError::Backend`] for a URL that does not parse.
    pub fn connect(url: &str, prefix: &str) -> Result<Self, TaskStoreError> {
        Self::connect_with(url, prefix, RedisTaskOptions::default())
    }

    /// [`Self::connect`] with explicit limits.
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub fn connect_with(
        url: &str,
        prefix: &str,
        opts: RedisTaskOptions,
    ) -> Result<Self, TaskStoreError> {
        let info = url
            .into_connection_info()
            .map_err(|e| TaskStoreError::Backend(format!("invalid Redis URL: {e}")))?;
        Self::from_connection_info(info, prefix, opts)
    }

    /// A store on an already configured client (its address, database and credentials; the
    /// store switches it to RESP3). Lazy, as [`Self::connect`].
    ///
    /// # Errors
    /// As [`Self::connect`].
    pub fn from_client(
        client: &redis::Client,
        prefix: &str,
        opts: RedisTaskOptions,
    ) -> Result<Self, TaskStoreError> {
        Self::from_connection_info(client.get_connection_info().clone(), prefix, opts)
    }

    fn from_connection_info(
        info: redis::ConnectionInfo,
        prefix: &str,
        opts: RedisTaskOptions,
    ) -> Result<Self, TaskStoreError> {
        // RESP3: change messages arrive as pushes on the command connection, and the
        // connection manager re-subscribes after a reconnect.
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        let client = redis::Client::open(info.set_redis_settings(settings))
            .map_err(|e| TaskStoreError::Backend(format!("invalid Redis URL: {e}")))?;
        let (changes, _) = broadcast::channel(opts.change_buffer.max(1));
        let opts = RedisTaskOptions {
            max_tasks: opts.max_tasks.max(1),
            ..opts
        };
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                conn: OnceCell::new(),
                keys: Keys::new(prefix),
                opts,
                changes,
                create: Script::new(&scripts::create()),
                update: Script::new(scripts::UPDATE),
                reap: Script::new(&scripts::reap()),
                forget: Script::new(scripts::FORGET),
            }),
        })
    }

    /// The cap on live tasks across every worker.
    pub fn max_tasks(&self) -> usize {
        self.inner.opts.max_tasks
    }
}

impl Inner {
    /// The connection, created (and subscribed to the change channel) on first use.
    async fn conn(&self) -> Result<ConnectionManager, TaskStoreError> {
        let c = self
            .conn
            .get_or_try_init(|| async {
                let tx = self.changes.clone();
                let cfg = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.opts.connect_timeout))
                    .set_response_timeout(Some(self.opts.op_timeout))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_secs(1))
                    .set_push_sender(move |p: PushInfo| forward_push(&tx, p))
                    .set_automatic_resubscription();
                let mut m = ConnectionManager::new_lazy_with_config(self.client.clone(), cfg)
                    .map_err(|e| backend("connect", &e))?;
                m.subscribe(&self.keys.channel)
                    .await
                    .map_err(|e| backend("subscribe", &e))?;
                Ok::<_, TaskStoreError>(m)
            })
            .await?;
        Ok(c.clone())
    }

    /// Run `f` on the connection within the call bound.
    async fn run<T, F, Fut>(&self, what: &str, f: F) -> Result<T, TaskStoreError>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let work = async {
            let c = self.conn().await?;
            f(c).await.map_err(|e| backend(what, &e))
        };
        match tokio::time::timeout(self.opts.op_timeout, work).await {
            Ok(r) => r,
            Err(_) => Err(TaskStoreError::Backend(format!(
                "redis {what}: no answer within {:?}",
                self.opts.op_timeout
            ))),
        }
    }

    async fn get(&self, task_id: &str) -> Result<TaskRecord, TaskStoreError> {
        let key = self.keys.record(task_id);
        let (v, j): (Option<u64>, Option<String>) = self
            .run("get", |mut c| async move {
                redis::cmd("HMGET")
                    .arg(&key)
                    .arg("v")
                    .arg("j")
                    .query_async(&mut c)
                    .await
            })
            .await?;
        let (Some(v), Some(j)) = (v, j) else {
            return Err(TaskStoreError::NotFound);
        };
        let mut rec = parse(&j)?;
        rec.version = v;
        if rec.is_expired(now_ms()) {
            return Err(TaskStoreError::NotFound);
        }
        Ok(rec)
    }

    async fn create(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        record.version = 1;
        let json = serialize(&record)?;
        let k = &self.keys;
        let list = k.list(record.legacy, record.owner.as_deref());
        let mut inv = self.create.prepare_invoke();
        inv.key(k.record(&record.task_id))
            .key(&k.all)
            .key(&k.where_)
            .key(&list)
            .arg(&k.record)
            .arg(now_ms())
            .arg(self.opts.max_tasks)
            .arg(&record.task_id)
            .arg(json)
            .arg(expiry_arg(&record))
            .arg(member(&record))
            .arg(CREATE_SWEEP)
            .arg(REAP_BATCH);
        let out: String = self
            .run(
                "create",
                |mut c| async move { inv.invoke_async(&mut c).await },
            )
            .await?;
        match out.as_str() {
            "ok" => Ok(record),
            "full" => Err(TaskStoreError::Full {
                max: self.opts.max_tasks,
            }),
            "conflict" => Err(TaskStoreError::Conflict),
            other => Err(TaskStoreError::Backend(format!("create answered {other}"))),
        }
    }

    async fn update(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        // The record's own clock decides expiry (as the in-process store's); Redis's TTL is
        // set from the same instant.
        if record.is_expired(now_ms()) {
            return Err(TaskStoreError::NotFound);
        }
        let expected = record.version;
        record.version = expected.saturating_add(1);
        let json = serialize(&record)?;
        let k = &self.keys;
        let mut inv = self.update.prepare_invoke();
        inv.key(k.record(&record.task_id))
            .key(&k.all)
            .arg(expected)
            .arg(record.version)
            .arg(json)
            .arg(expiry_arg(&record))
            .arg(&record.task_id)
            .arg(&k.channel);
        let out: String = self
            .run(
                "update",
                |mut c| async move { inv.invoke_async(&mut c).await },
            )
            .await?;
        match out.as_str() {
            "ok" => Ok(record),
            "notfound" => Err(TaskStoreError::NotFound),
            "conflict" => Err(TaskStoreError::Conflict),
            other => Err(TaskStoreError::Backend(format!("update answered {other}"))),
        }
    }

    async fn reap(&self) -> Result<usize, TaskStoreError> {
        let mut total = 0usize;
        loop {
            let mut inv = self.reap.prepare_invoke();
            inv.key(&self.keys.all)
                .key(&self.keys.where_)
                .arg(&self.keys.record)
                .arg(now_ms())
                .arg(REAP_BATCH);
            let n: usize = self
                .run(
                    "reap",
                    |mut c| async move { inv.invoke_async(&mut c).await },
                )
                .await?;
            total = total.saturating_add(n);
            if n < REAP_BATCH {
                return Ok(total);
            }
        }
    }
}

/// Hand a change message to this process's waiters (the id; `""` = re-read everything, sent
/// when the connection dropped and messages may have been lost).
fn forward_push(
    tx: &broadcast::Sender<String>,
    p: PushInfo,
) -> Result<(), std::convert::Infallible> {
    match p.kind {
        PushKind::Message => {
            if let Some(Value::BulkString(b)) = p.data.get(1) {
                let _ = tx.send(String::from_utf8_lossy(b).into_owned());
            }
        }
        PushKind::Disconnection => {
            let _ = tx.send(String::new());
        }
        _ => {}
    }
    Ok(())
}

fn expiry_arg(r: &TaskRecord) -> String {
    r.expires_at_ms().map(|e| e.to_string()).unwrap_or_default()
}

fn serialize(r: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(r).map_err(|e| TaskStoreError::Backend(format!("serialize task: {e}")))
}

fn parse(j: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(j).map_err(|e| TaskStoreError::Backend(format!("stored task: {e}")))
}

mod list;
mod wait;

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let i = self.inner.clone();
        Box::pin(async move { i.create(record).await })
    }
    fn get(&self, task_id: &str) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let i = self.inner.clone();
        let id = task_id.to_owned();
        Box::pin(async move { i.get(&id).await })
    }
    fn update(&self, record: TaskRecord) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let i = self.inner.clone();
        Box::pin(async move { i.update(record).await })
    }
    fn list(
        &self,
        owner: Option<String>,
        legacy: bool,
        cursor: Option<String>,
        limit: usize,
    ) -> BoxFuture<Result<TaskPage, TaskStoreError>> {
        let i = self.inner.clone();
        Box::pin(async move { i.list(owner.as_deref(), legacy, cursor, limit).await })
    }
    fn wait_for_change(
        &self,
        task_id: &str,
        seen_version: u64,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let i = self.inner.clone();
        let id = task_id.to_owned();
        Box::pin(async move { i.wait_for_change(&id, seen_version).await })
    }
    fn reap_expired(&self) -> BoxFuture<usize> {
        let i = self.inner.clone();
        Box::pin(async move {
            i.reap().await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "task store reap failed");
                0
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_client_is_switched_to_resp3_keeping_its_database() {
        let c = redis::Client::open("redis://127.0.0.1:1/3").expect("url");
        let s = RedisTaskStore::from_client(&c, "p:", RedisTaskOptions::default()).expect("ok");
        let info = s.inner.client.get_connection_info().redis_settings();
        assert_eq!(info.protocol(), ProtocolVersion::RESP3);
        assert_eq!(info.db(), 3);
        assert!(RedisTaskStore::connect("ftp://x", "p:").is_err());
    }

    #[test]
    fn list_members_sort_as_creation_then_id_and_give_back_the_id() {
        let mut a = TaskRecord::new("zz", None, false);
        a.created_at_ms = 9;
        let mut b = TaskRecord::new("aa", None, false);
        b.created_at_ms = 10;
        let mut c = TaskRecord::new("ab", None, false);
        c.created_at_ms = 10;
        let (ma, mb, mc) = (member(&a), member(&b), member(&c));
        assert!(ma < mb && mb < mc);
        assert_eq!(id_of_member(&mc), "ab");
        assert_eq!(id_of_member("short"), "");
        let k = Keys::new("p:");
        assert_eq!(k.record("t1"), "p:tasks:t1");
        assert_ne!(k.list(true, None), k.list(false, None));
        assert_ne!(k.list(false, Some("-")), k.list(false, None));
    }
}
