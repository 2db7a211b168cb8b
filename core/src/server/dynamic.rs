//! Changing a server while it serves: tools, prompts, resources and resource templates are
//! added, replaced, removed, enabled and disabled on a running [`Server`], in both eras and on
//! every transport.
//!
//! - A change copies the current registry snapshot, edits the copy and swaps it in
//!   ([`super::registry::Live`]); requests never wait for a writer, and a call that already
//!   looked its item up keeps that item (a removed tool's in-flight calls finish normally; new
//!   calls get the unknown-tool error).
//! - A registration is checked as at build (name rules, schemas, `x-mcp-header`, MCP Apps links)
//!   and refused with the same [`BuildError`]; a kind the server does not advertise is refused
//!   with [`BuildError::NotAdvertised`] (capabilities are fixed once a client has seen them:
//!   build with [`super::ServerBuilder::dynamic`] to start empty).
//! - A disabled item is absent from its list and unknown to calls and reads; enabling it brings
//!   it back in its place. Adding under a taken name (URI, URI template) replaces the item in
//!   place, enabled.
//! - Each change announces `notifications/{tools,prompts,resources}/list_changed` through
//!   [`Server::notify_tools_list_changed`]'s path (legacy sessions when `listChanged` is
//!   advertised, `subscriptions/listen` streams, and other workers through the backplane bus).
//!   Announcements are coalesced: the first change of a kind schedules one announcement on the
//!   serving runtime, and every change of that kind made before it runs rides on it, so a loop
//!   of a hundred additions sends one notification. Without a runtime (nothing serves yet) the
//!   announcement is made at once.
//! - List cursors are offsets (PAGE-01): additions are appended, so a client paging through a
//!   growing list sees them at the end; a removal ahead of a client's cursor shifts the rest by
//!   one (that client misses one item of its next page), and a cursor past the end of a list
//!   that shrank is refused with -32602 like any unknown cursor. Clients re-list from the first
//!   page on `list_changed`, which every change sends.
//! - The registry is per process: with several workers behind a Redis backplane, apply the same
//!   change on every worker (the `list_changed` fans out, the registry does not).

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use tokio::sync::Semaphore;

use super::builder::{BuildError, ServerInner};
use super::handler::Handler;
use super::registry::{PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry};
use super::tasks::TaskSupport;
use super::typed::{tool_fn, ToolOutput};
use super::{RequestContext, Server, ServerChange};
use crate::error::HandlerError;
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

/// The kinds of registered items that may change while serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool, by name.
    Tool,
    /// A prompt, by name.
    Prompt,
    /// A concrete resource, by URI.
    Resource,
    /// A resource template, by URI template.
    ResourceTemplate,
}

impl ItemKind {
    /// The kind named `"tool"`, `"prompt"`, `"resource"` or `"resourceTemplate"` (the bindings'
    /// spelling).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "tool" => Self::Tool,
            "prompt" => Self::Prompt,
            "resource" => Self::Resource,
            "resourceTemplate" => Self::ResourceTemplate,
            _ => return None,
        })
    }
    /// The capability that advertises this kind.
    fn capability(self) -> &'static str {
        match self {
            Self::Tool => "tools",
            Self::Prompt => "prompts",
            Self::Resource | Self::ResourceTemplate => "resources",
        }
    }
    /// Which list changes (resources and templates are announced together).
    fn list(self) -> usize {
        match self {
            Self::Tool => 0,
            Self::Prompt => 1,
            Self::Resource | Self::ResourceTemplate => 2,
        }
    }
}

const LIST_CHANGES: [ServerChange<'static>; 3] = [
    ServerChange::ToolsListChanged,
    ServerChange::PromptsListChanged,
    ServerChange::ResourcesListChanged,
];

/// What changes made while serving need, kept by the server.
pub(crate) struct State {
    /// The `max_concurrency` semaphore, so handlers added later are bounded too.
    slots: Option<Arc<Semaphore>>,
    /// Per list: an announcement is scheduled and has not run yet.
    pending: [AtomicBool; 3],
    /// The runtime the server serves on, for changes made from threads outside it.
    runtime: OnceLock<tokio::runtime::Handle>,
}

impl State {
    pub(crate) fn new(slots: Option<Arc<Semaphore>>) -> Self {
        Self {
            slots,
            pending: Default::default(),
            runtime: OnceLock::new(),
        }
    }
    /// Remember the current runtime (transports call this when they start serving).
    pub(crate) fn note_runtime(&self) {
        if self.runtime.get().is_none() {
            if let Ok(h) = tokio::runtime::Handle::try_current() {
                let _ = self.runtime.set(h);
            }
        }
    }
    fn bounded(&self, h: Arc<dyn Handler>) -> Arc<dyn Handler> {
        match &self.slots {
            Some(s) => super::concurrency::wrap(&h, s),
            None => h,
        }
    }
}

/// A scheduled announcement: clears its pending flag when it runs, and also when it is dropped
/// unrun (a runtime shutting down), so later changes are announced again. It holds the server
/// weakly: a server dropped meanwhile has no one left to tell.
struct Due {
    server: Weak<ServerInner>,
    list: usize,
}

impl Due {
    fn fire(self) {
        if let Some(inner) = self.server.upgrade() {
            inner.dynamic.pending[self.list].store(false, Ordering::SeqCst);
            Server { inner }.raise(LIST_CHANGES[self.list]);
        }
    }
}

impl Drop for Due {
    fn drop(&mut self) {
        if let Some(inner) = self.server.upgrade() {
            inner.dynamic.pending[self.list].store(false, Ordering::SeqCst);
        }
    }
}

/// One registration on a running server, as returned by the `add_*` methods (the TypeScript
/// SDK's `RegisteredTool`): enable, disable or remove it later. It holds the server weakly;
/// once the server is gone every call returns `false`.
#[derive(Clone)]
pub struct Registration {
    server: Weak<ServerInner>,
    kind: ItemKind,
    key: String,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("kind", &self.kind)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// What kind of item this is.
    pub fn kind(&self) -> ItemKind {
        self.kind
    }
    /// Its name, URI or URI template.
    pub fn key(&self) -> &str {
        &self.key
    }
    fn server(&self) -> Option<Server> {
        self.server.upgrade().map(|inner| Server { inner })
    }
    /// Enable it; false when it is no longer registered.
    pub fn enable(&self) -> bool {
        self.server()
            .is_some_and(|s| s.set_enabled(self.kind, &self.key, true))
    }
    /// Disable it; false when it is no longer registered.
    pub fn disable(&self) -> bool {
        self.server()
            .is_some_and(|s| s.set_enabled(self.kind, &self.key, false))
    }
    /// Remove it; false when it was no longer registered.
    pub fn remove(&self) -> bool {
        self.server()
            .is_some_and(|s| s.remove(self.kind, &self.key))
    }
}

/// A checked item ready to go into the registry.
enum Item {
    Tool(ToolEntry),
    Prompt(PromptEntry),
    Resource(ResourceEntry),
    Template(TemplateEntry),
}

impl Server {
    /// Add a tool while serving, or replace the one of the same name (in place, enabled); the
    /// change is announced with `notifications/tools/list_changed` (coalesced, see below).
    ///
    /// ```
    /// use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
    ///
    /// let server = Server::builder("demo", "1.0").dynamic().build()?;
    /// // … serve it (stdio or HTTP), then, from any task or thread:
    /// let echo = server.add_tool(
    ///     Tool::new("echo").description("Echo the arguments"),
    ///     handler_fn(|_ctx, args: serde_json::Value| async move {
    ///         Ok::<_, HandlerError>(CallToolResult::text(args.to_string()))
    ///     }),
    /// )?;
    /// echo.disable(); // gone from tools/list; calling it is "Unknown tool"
    /// echo.enable(); // back
    /// assert!(server.remove_tool("echo"));
    /// # Ok::<(), mcpcore::server::BuildError>(())
    /// ```
    ///
    /// (The guide's "Changing a server while it serves", docs/src/rust.md, shows this example: keep them alike.)
    /// Many changes made in one go (without yielding to the runtime) send one `list_changed`
    /// per kind. Calls already running when a tool is removed or replaced finish with the
    /// handler they started with.
    ///
    /// # Errors
    /// As [`super::ServerBuilder::add_tool`] (but a taken name is replaced, not refused), and
    /// [`BuildError::NotAdvertised`] when the server does not advertise tools.
    pub fn add_tool(&self, tool: Tool, handler: impl Handler) -> Result<Registration, BuildError> {
        self.add_task_tool(tool, TaskSupport::Forbidden, Arc::new(handler))
    }

    /// Add (or replace) a tool that may or must run as a task.
    ///
    /// # Errors
    /// As [`Self::add_tool`], and [`BuildError::Option`] for a task-capable tool on a server
    /// built without tasks.
    pub fn add_task_tool(
        &self,
        tool: Tool,
        support: TaskSupport,
        handler: Arc<dyn Handler>,
    ) -> Result<Registration, BuildError> {
        if support != TaskSupport::Forbidden && self.inner.tasks.is_none() {
            return Err(BuildError::Option(format!(
                "tool {}: tasks are off on this server (turn them on at build)",
                tool.name
            )));
        }
        let handler = self.inner.dynamic.bounded(handler);
        let (key, entry) = ToolEntry::new(tool, handler, support, None)?;
        self.put(ItemKind::Tool, key, Item::Tool(entry))
    }

    /// Add (or replace) a typed tool ([`super::ServerBuilder::typed_tool`] while serving).
    ///
    /// # Errors
    /// As [`Self::add_tool`].
    pub fn add_typed_tool<A, O, F, Fut>(
        &self,
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Result<Registration, BuildError>
    where
        A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
        O: ToolOutput,
        F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        let tool = Tool::typed::<A, O>(name).description(description);
        self.add_tool(tool, tool_fn(f))
    }

    /// Add (or replace) a prompt; announced with `notifications/prompts/list_changed`.
    ///
    /// # Errors
    /// As [`super::ServerBuilder::add_prompt`] (a taken name is replaced), and
    /// [`BuildError::NotAdvertised`].
    pub fn add_prompt(
        &self,
        prompt: Prompt,
        handler: impl Handler,
    ) -> Result<Registration, BuildError> {
        let handler = self.inner.dynamic.bounded(Arc::new(handler));
        let (key, entry) = PromptEntry::new(prompt, handler)?;
        self.put(ItemKind::Prompt, key, Item::Prompt(entry))
    }

    /// Add (or replace) a concrete resource; announced with
    /// `notifications/resources/list_changed`.
    ///
    /// # Errors
    /// As [`super::ServerBuilder::add_resource`] (a taken URI is replaced), and
    /// [`BuildError::NotAdvertised`].
    pub fn add_resource(
        &self,
        resource: Resource,
        handler: impl Handler,
    ) -> Result<Registration, BuildError> {
        let handler = self.inner.dynamic.bounded(Arc::new(handler));
        let (key, entry) = ResourceEntry::new(resource, handler)?;
        self.put(ItemKind::Resource, key, Item::Resource(entry))
    }

    /// Add (or replace) a resource template; announced with
    /// `notifications/resources/list_changed`.
    ///
    /// # Errors
    /// As [`super::ServerBuilder::add_resource_template`] (a taken template is replaced), and
    /// [`BuildError::NotAdvertised`].
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: impl Handler,
    ) -> Result<Registration, BuildError> {
        let handler = self.inner.dynamic.bounded(Arc::new(handler));
        let (key, entry) = TemplateEntry::new(template, handler)?;
        self.put(ItemKind::ResourceTemplate, key, Item::Template(entry))
    }

    /// The JSON door for the C ABI and the bindings: add (or replace) an item of `kind` from
    /// its JSON definition (a tool as [`super::ServerBuilder::add_tool_json`], with
    /// `taskSupport`; a prompt, resource or resource template as its MCP definition).
    ///
    /// # Errors
    /// [`BuildError::Option`] for a definition that does not parse; otherwise as the typed
    /// `add_*` method of that kind.
    pub fn add_json(
        &self,
        kind: ItemKind,
        def: Value,
        handler: Arc<dyn Handler>,
    ) -> Result<Registration, BuildError> {
        fn parse<T: DeserializeOwned>(what: &str, def: Value) -> Result<T, BuildError> {
            serde_json::from_value(def).map_err(|e| BuildError::Option(format!("{what}: {e}")))
        }
        match kind {
            ItemKind::Tool => {
                let (tool, support) = super::tasks::parse_tool_json(def)?;
                self.add_task_tool(tool, support, handler)
            }
            ItemKind::Prompt => self.add_prompt(parse("prompt", def)?, handler),
            ItemKind::Resource => self.add_resource(parse("resource", def)?, handler),
            ItemKind::ResourceTemplate => {
                self.add_resource_template(parse("resource template", def)?, handler)
            }
        }
    }

    /// Remove the item of `kind` under `key` (name, URI or URI template) and announce it;
    /// false when none is registered. Calls already running finish normally.
    pub fn remove(&self, kind: ItemKind, key: &str) -> bool {
        let removed = self.inner.registry.edit(|r| {
            let removed = match kind {
                ItemKind::Tool => r.tools.remove(key),
                ItemKind::Prompt => r.prompts.remove(key),
                ItemKind::Resource => r.resources.remove(key),
                ItemKind::ResourceTemplate => r.templates.remove(key),
            };
            // Nothing changed: keep the current snapshot.
            if removed {
                Ok(())
            } else {
                Err(())
            }
        });
        self.announce_if(removed.is_ok(), kind)
    }

    /// Enable (`on`) or disable the item of `kind` under `key`: a disabled item is absent from
    /// its list, and calling or reading it is the same error as for an unknown one. Announced
    /// when its state changes. False when none is registered.
    pub fn set_enabled(&self, kind: ItemKind, key: &str, on: bool) -> bool {
        let r = self.inner.registry.edit(|r| {
            let changed = match kind {
                ItemKind::Tool => r.tools.set_enabled(key, on),
                ItemKind::Prompt => r.prompts.set_enabled(key, on),
                ItemKind::Resource => r.resources.set_enabled(key, on),
                ItemKind::ResourceTemplate => r.templates.set_enabled(key, on),
            };
            match changed {
                Some(true) => Ok(()),
                Some(false) => Err(true),
                None => Err(false),
            }
        });
        match r {
            Ok(()) => self.announce_if(true, kind),
            Err(known) => known,
        }
    }

    /// Remove the tool `name` ([`Self::remove`]).
    pub fn remove_tool(&self, name: &str) -> bool {
        self.remove(ItemKind::Tool, name)
    }
    /// Enable the tool `name` ([`Self::set_enabled`]).
    pub fn enable_tool(&self, name: &str) -> bool {
        self.set_enabled(ItemKind::Tool, name, true)
    }
    /// Disable the tool `name` ([`Self::set_enabled`]).
    pub fn disable_tool(&self, name: &str) -> bool {
        self.set_enabled(ItemKind::Tool, name, false)
    }
    /// Remove the prompt `name` ([`Self::remove`]).
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.remove(ItemKind::Prompt, name)
    }
    /// Enable the prompt `name` ([`Self::set_enabled`]).
    pub fn enable_prompt(&self, name: &str) -> bool {
        self.set_enabled(ItemKind::Prompt, name, true)
    }
    /// Disable the prompt `name` ([`Self::set_enabled`]).
    pub fn disable_prompt(&self, name: &str) -> bool {
        self.set_enabled(ItemKind::Prompt, name, false)
    }
    /// Remove the resource `uri` ([`Self::remove`]).
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.remove(ItemKind::Resource, uri)
    }
    /// Enable the resource `uri` ([`Self::set_enabled`]).
    pub fn enable_resource(&self, uri: &str) -> bool {
        self.set_enabled(ItemKind::Resource, uri, true)
    }
    /// Disable the resource `uri` ([`Self::set_enabled`]).
    pub fn disable_resource(&self, uri: &str) -> bool {
        self.set_enabled(ItemKind::Resource, uri, false)
    }
    /// Remove the resource template `uri_template` ([`Self::remove`]).
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.remove(ItemKind::ResourceTemplate, uri_template)
    }
    /// Enable the resource template `uri_template` ([`Self::set_enabled`]).
    pub fn enable_resource_template(&self, uri_template: &str) -> bool {
        self.set_enabled(ItemKind::ResourceTemplate, uri_template, true)
    }
    /// Disable the resource template `uri_template` ([`Self::set_enabled`]).
    pub fn disable_resource_template(&self, uri_template: &str) -> bool {
        self.set_enabled(ItemKind::ResourceTemplate, uri_template, false)
    }

    /// Put a checked item in the registry (replacing one under the same key) and announce it.
    fn put(&self, kind: ItemKind, key: String, item: Item) -> Result<Registration, BuildError> {
        let capability = kind.capability();
        if self.inner.capabilities.get(capability).is_none() {
            return Err(BuildError::NotAdvertised(capability));
        }
        self.inner.registry.edit(|r: &mut Registry| {
            match item {
                Item::Tool(e) => {
                    super::apps::check_link(&e.def, r)?;
                    r.tools.insert(key.clone(), e);
                }
                Item::Prompt(e) => _ = r.prompts.insert(key.clone(), e),
                Item::Resource(e) => _ = r.resources.insert(key.clone(), e),
                Item::Template(e) => _ = r.templates.insert(key.clone(), e),
            }
            Ok::<_, BuildError>(())
        })?;
        self.announce_if(true, kind);
        Ok(Registration {
            server: Arc::downgrade(&self.inner),
            kind,
            key,
        })
    }

    /// Announce a change of `kind`'s list, coalesced (see the module documentation); returns
    /// `changed`.
    fn announce_if(&self, changed: bool, kind: ItemKind) -> bool {
        if !changed {
            return false;
        }
        let list = kind.list();
        let state = &self.inner.dynamic;
        if state.pending[list].swap(true, Ordering::SeqCst) {
            return true; // the scheduled announcement has not run: this change rides on it
        }
        let due = Due {
            server: Arc::downgrade(&self.inner),
            list,
        };
        let runtime = tokio::runtime::Handle::try_current()
            .ok()
            .or_else(|| state.runtime.get().cloned());
        match runtime {
            Some(rt) => {
                rt.spawn(async move {
                    // Let the task that made the change make the rest of its changes first.
                    tokio::task::yield_now().await;
                    due.fire();
                });
            }
            None => due.fire(),
        }
        true
    }
}

#[cfg(test)]
#[path = "dynamic_tests.rs"]
mod tests;
