//! Turning tasks on ([`TaskOptions`], [`ServerBuilder::tasks`]) and registering task-capable
//! tools ([`ServerBuilder::task_tool`], [`ServerBuilder::add_task_tool`], and
//! [`ServerBuilder::add_tool_json`] for the bindings' JSON definitions).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

use super::TaskSupport;
use crate::server::builder::{BuildError, ServerBuilder};
use crate::server::handler::Handler;
use crate::tasks::TaskStore;
use crate::Tool;

/// How tasks behave. Every field has a safe default.
///
/// JSON shape (the `tasks` key of the server options, see [`crate::options`]): `defaultTtlMs`,
/// `maxTtlMs`, `pollIntervalMs`, `maxTasks`, `listPageSize`, `maxListenTaskIds`. A store has no JSON form; a patch
/// keeps it.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct TaskOptions {
    /// Retention of a task from creation when the client asks for none (default 1 h).
    #[serde(rename = "defaultTtlMs", with = "crate::options::millis")]
    pub default_ttl: Duration,
    /// The longest retention a client may ask for (default 24 h); longer asks are clamped.
    #[serde(rename = "maxTtlMs", with = "crate::options::millis")]
    pub max_ttl: Duration,
    /// The polling interval suggested to clients (default 1 s).
    #[serde(rename = "pollIntervalMs", with = "crate::options::millis")]
    pub poll_interval: Duration,
    /// Most live tasks of the default in-process store (default 10 000); past it a task-creating
    /// call fails with -32603 saying the store is full. Unused when `store` is set.
    pub max_tasks: usize,
    /// Page size of legacy `tasks/list` (default 100).
    pub list_page_size: usize,
    /// Most task ids one `subscriptions/listen` may name in `taskIds` (default 1 000; more is
    /// -32602).
    pub max_listen_task_ids: usize,
    /// Where tasks live; `None`: a [`crate::tasks::MemoryTaskStore`] of `max_tasks`.
    #[serde(skip)]
    pub store: Option<Arc<dyn TaskStore>>,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("default_ttl", &self.default_ttl)
            .field("max_ttl", &self.max_ttl)
            .field("poll_interval", &self.poll_interval)
            .field("max_tasks", &self.max_tasks)
            .field("list_page_size", &self.list_page_size)
            .field("max_listen_task_ids", &self.max_listen_task_ids)
            .field("store", &self.store.as_ref().map(|_| "custom"))
            .finish()
    }
}

impl Default for TaskOptions {
    fn default() -> Self {
        Self {
            default_ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(1),
            max_tasks: crate::tasks::MemoryTaskStore::DEFAULT_MAX_TASKS,
            list_page_size: 100,
            max_listen_task_ids: 1000,
            store: None,
        }
    }
}

impl crate::options::JsonOptions for TaskOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        let range = |m: &str| Err(crate::options::OptionsError::Range(m.into()));
        if self.default_ttl.is_zero() || self.max_ttl.is_zero() {
            return range("tasks defaultTtlMs and maxTtlMs must be positive");
        }
        if self.default_ttl > self.max_ttl {
            return range("tasks defaultTtlMs must not exceed maxTtlMs");
        }
        if self.poll_interval.is_zero() {
            return range("tasks pollIntervalMs must be positive");
        }
        if self.max_tasks == 0 || self.list_page_size == 0 {
            return range("tasks maxTasks and listPageSize must be positive");
        }
        Ok(())
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        self.store = from.store.clone();
    }
}

impl ServerBuilder {
    /// Turn tasks on (both eras): advertise the extension in `server/discover` and the legacy
    /// `tasks` capability in `initialize`, and serve `tasks/*`.
    #[must_use]
    pub fn tasks(self, opts: TaskOptions) -> Self {
        self.options(|o| o.tasks = Some(opts))
    }

    /// Register a tool that may (or must) run as a task. Registering one turns tasks on with
    /// the default [`TaskOptions`] unless [`Self::tasks`] set them.
    #[must_use]
    pub fn task_tool(self, tool: Tool, support: TaskSupport, handler: impl Handler) -> Self {
        self.keep(|b| b.add_task_tool(tool, support, Arc::new(handler)))
    }

    /// Register a task-capable tool whose `gate` runs on the request itself before any task is
    /// created: a gate answering `input_required` is an ordinary MRTR round (SEP-2322), and only
    /// when it completes is the task created and `handler` started with the same inputs
    /// (MRTR rounds complete synchronously before task creation, SEP-2663). The gate's result
    /// value is discarded.
    #[must_use]
    pub fn task_tool_with_gate(
        self,
        tool: Tool,
        support: TaskSupport,
        gate: impl Handler,
        handler: impl Handler,
    ) -> Self {
        self.keep(|b| {
            b.add_task_tool(tool, support, Arc::new(handler))?;
            b.set_last_tool_gate(Arc::new(gate));
            Ok(())
        })
    }

    /// Register a task-capable tool with a shared handler (`execution.taskSupport` is added
    /// to its definition unless `support` is [`TaskSupport::Forbidden`]).
    ///
    /// # Errors
    /// As [`Self::add_tool`].
    pub fn add_task_tool(
        &mut self,
        tool: Tool,
        support: TaskSupport,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        let entry = crate::server::registry::ToolEntry::new(tool, handler, support, None)?;
        self.add_tool_entry(entry)?;
        if support != TaskSupport::Forbidden && self.options.tasks.is_none() {
            self.options.tasks = Some(TaskOptions::default());
        }
        Ok(())
    }

    /// Register a tool from its JSON definition, the shape bindings pass: the `Tool` fields plus
    /// an optional `taskSupport` (`"forbidden" | "optional" | "required"`; `execution.taskSupport`
    /// is read too), so a handler behind the generic seam becomes task-capable without
    /// protocol code in the binding.
    ///
    /// # Errors
    /// [`BuildError::Option`] for a definition that does not parse; otherwise as
    /// [`Self::add_task_tool`].
    pub fn add_tool_json(
        &mut self,
        def: Value,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        let (tool, support) = parse_tool_json(def)?;
        self.add_task_tool(tool, support, handler)
    }

    /// [`Self::add_tool_json`] with a `gate` run on the request before any task is created, as
    /// [`Self::task_tool_with_gate`] (MRTR rounds complete before task creation, SEP-2663): the
    /// bindings' gate functions.
    ///
    /// # Errors
    /// As [`Self::add_tool_json`].
    pub fn add_gated_tool_json(
        &mut self,
        def: Value,
        gate: Arc<dyn Handler>,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        self.add_tool_json(def, handler)?;
        self.set_last_tool_gate(gate);
        Ok(())
    }
}

impl ServerBuilder {
    fn set_last_tool_gate(&mut self, gate: Arc<dyn Handler>) {
        if let Some(t) = self.registry.tools.last_mut() {
            t.gate = Some(gate);
        }
    }
}

/// A tool's JSON definition, the shape bindings pass (see [`ServerBuilder::add_tool_json`]).
///
/// # Errors
/// [`BuildError::Option`] for a definition that does not parse.
pub(crate) fn parse_tool_json(def: Value) -> Result<(Tool, TaskSupport), BuildError> {
    let support_value = def
        .get("taskSupport")
        .or_else(|| def.pointer("/execution/taskSupport"))
        .cloned()
        .unwrap_or(json!("forbidden"));
    let support: TaskSupport = serde_json::from_value(support_value)
        .map_err(|e| BuildError::Option(format!("taskSupport: {e}")))?;
    let mut def = def;
    if let Some(o) = def.as_object_mut() {
        o.remove("taskSupport");
        o.remove("execution");
    }
    // One rule for every door: a definition without `inputSchema` takes no arguments, as
    // `Tool::from_json` and `Tool::new` say (TOOL-03 needs an object schema on the wire).
    let tool = Tool::from_json(def).map_err(|e| BuildError::Option(e.to_string()))?;
    Ok((tool, support))
}
