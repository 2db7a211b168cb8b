//! The registry: definitions pre-serialized, schemas pre-compiled, lookups by key.
//!
//! A registry is an immutable snapshot. The server holds the current one in a [`Live`] cell:
//! every request loads the snapshot (a read lock held only to clone an `Arc`), and a change made
//! while serving (see `dynamic`) copies the snapshot, edits the copy and swaps it in. Entries
//! are behind `Arc`s, so a copy costs one pointer per entry, and a call that already holds its
//! entry keeps running when the entry is removed or replaced.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use super::builder::BuildError;
use super::handler::Handler;
use super::tasks::TaskSupport;
use super::uri_template::UriTemplate;
use crate::protocol::mcp_header::{self, ParamHeader};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use crate::schema::{self, Validator};

pub(crate) struct ToolEntry {
    pub def: Value,
    /// The legacy (≤ 2025-11-25) view when it differs: a non-object `outputSchema` is omitted,
    /// since legacy schemas require `type: "object"` at its root (TOOL-05).
    pub legacy_def: Option<Value>,
    pub input: Validator,
    pub output: Option<Validator>,
    /// The `x-mcp-header` declarations of `inputSchema`, checked at registration (HTTP-14).
    pub param_headers: Arc<[ParamHeader]>,
    pub handler: Arc<dyn Handler>,
    /// Whether it may run as a task (TASK-L01 `execution.taskSupport`).
    pub task_support: TaskSupport,
    /// Runs on the request before a task is created (MRTR rounds first, SEP-2663).
    pub gate: Option<Arc<dyn Handler>>,
}

pub(crate) struct PromptEntry {
    pub def: Value,
    pub required: Vec<String>,
    pub handler: Arc<dyn Handler>,
}

pub(crate) struct ResourceEntry {
    pub def: Value,
    pub handler: Arc<dyn Handler>,
}

pub(crate) struct TemplateEntry {
    pub def: Value,
    pub template: UriTemplate,
    pub handler: Arc<dyn Handler>,
}

/// Registered names and URIs must be non-empty and free of control characters: a NUL cuts a C
/// string short (every binding hands names back as C or host strings), and a control character
/// cannot travel in the `Mcp-Name` header unencoded (HTTP-16). Tool names should also keep to
/// TOOL-04's `[A-Za-z0-9_.-]{1,128}`, which is not enforced.
pub(super) fn check_name(what: &'static str, name: &str) -> Result<(), BuildError> {
    let reason = if name.is_empty() {
        "must not be empty"
    } else if name.chars().any(char::is_control) {
        "must not contain control characters (NUL included)"
    } else {
        return Ok(());
    };
    Err(BuildError::Name {
        what,
        name: name.to_owned(),
        reason,
    })
}

/// The pre-serialized `*/list` form of a definition.
pub(super) fn definition(d: &impl serde::Serialize) -> Result<Value, BuildError> {
    serde_json::to_value(d).map_err(|e| BuildError::Option(e.to_string()))
}

impl ToolEntry {
    /// Check and compile a tool (name rules, schemas, `x-mcp-header` declarations, HTTP-14) and
    /// show `support` in its definition (`execution.taskSupport`).
    pub(super) fn new(
        tool: Tool,
        handler: Arc<dyn Handler>,
        support: TaskSupport,
        gate: Option<Arc<dyn Handler>>,
    ) -> Result<(String, Self), BuildError> {
        check_name("tool", &tool.name)?;
        let schema_error = |reason| BuildError::Schema {
            tool: tool.name.clone(),
            reason,
        };
        let input = schema::compile_input(&tool.input_schema).map_err(schema_error)?;
        let param_headers = mcp_header::declarations(&tool.input_schema).map_err(|reason| {
            BuildError::McpHeader {
                tool: tool.name.clone(),
                reason,
            }
        })?;
        let output = tool
            .output_schema
            .as_ref()
            .map(schema::compile_output)
            .transpose()
            .map_err(schema_error)?;
        let mut def = definition(&tool)?;
        if support != TaskSupport::Forbidden {
            if let Some(o) = def.as_object_mut() {
                o.insert(
                    "execution".into(),
                    serde_json::json!({"taskSupport": support.as_str()}),
                );
            }
        }
        let legacy_def = tool
            .output_schema
            .as_ref()
            .filter(|s| s.get("type").and_then(Value::as_str) != Some("object"))
            .map(|_| {
                let mut d = def.clone();
                if let Some(o) = d.as_object_mut() {
                    o.remove("outputSchema");
                }
                d
            });
        let entry = Self {
            def,
            legacy_def,
            input,
            output,
            param_headers: param_headers.into(),
            handler,
            task_support: support,
            gate,
        };
        Ok((tool.name, entry))
    }
}

impl PromptEntry {
    pub(super) fn new(
        prompt: Prompt,
        handler: Arc<dyn Handler>,
    ) -> Result<(String, Self), BuildError> {
        check_name("prompt", &prompt.name)?;
        let required = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect();
        let def = definition(&prompt)?;
        let entry = Self {
            def,
            required,
            handler,
        };
        Ok((prompt.name, entry))
    }
}

impl ResourceEntry {
    /// Also applies the MCP Apps rules to `ui://` resources (EXT-03).
    pub(super) fn new(
        mut resource: Resource,
        handler: Arc<dyn Handler>,
    ) -> Result<(String, Self), BuildError> {
        check_name("resource", &resource.uri)?;
        let handler = super::apps::prepare_resource(&mut resource, handler)?;
        let def = definition(&resource)?;
        Ok((resource.uri, Self { def, handler }))
    }
}

impl TemplateEntry {
    pub(super) fn new(
        template: ResourceTemplate,
        handler: Arc<dyn Handler>,
    ) -> Result<(String, Self), BuildError> {
        check_name("resource template", &template.uri_template)?;
        let parsed =
            UriTemplate::parse(&template.uri_template).map_err(|reason| BuildError::Template {
                template: template.uri_template.clone(),
                reason,
            })?;
        let def = definition(&template)?;
        let entry = Self {
            def,
            template: parsed,
            handler,
        };
        Ok((template.uri_template, entry))
    }
}

/// One registered item and whether it is enabled.
struct Slot<E> {
    key: String,
    entry: Arc<E>,
    enabled: bool,
}

impl<E> Clone for Slot<E> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            entry: self.entry.clone(),
            enabled: self.enabled,
        }
    }
}

/// Items of one kind in registration order, indexed by name (or URI, or URI template). A
/// disabled item is kept, but lookups and listings skip it.
pub(crate) struct Table<E> {
    slots: Vec<Slot<E>>,
    index: HashMap<String, usize, foldhash::fast::RandomState>,
}

impl<E> Default for Table<E> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<E> Clone for Table<E> {
    fn clone(&self) -> Self {
        Self {
            slots: self.slots.clone(),
            index: self.index.clone(),
        }
    }
}

impl<E> Table<E> {
    /// The enabled item under `key`.
    pub fn get(&self, key: &str) -> Option<&Arc<E>> {
        let slot = self.slots.get(*self.index.get(key)?)?;
        slot.enabled.then_some(&slot.entry)
    }
    /// Whether `key` is registered, enabled or not.
    pub fn contains(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }
    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// The enabled items, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<E>> {
        self.slots.iter().filter(|s| s.enabled).map(|s| &s.entry)
    }
    /// Register `entry` under `key`, enabled; a registration under the same key is replaced in
    /// place (so it keeps its position in listings). Returns whether one was replaced.
    pub fn insert(&mut self, key: String, entry: E) -> bool {
        let entry = Arc::new(entry);
        if let Some(&i) = self.index.get(&key) {
            if let Some(slot) = self.slots.get_mut(i) {
                slot.entry = entry;
                slot.enabled = true;
                return true;
            }
        }
        self.index.insert(key.clone(), self.slots.len());
        self.slots.push(Slot {
            key,
            entry,
            enabled: true,
        });
        false
    }
    /// Remove the item under `key`; false when none is registered.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(i) = self.index.remove(key) else {
            return false;
        };
        self.slots.remove(i);
        for (j, s) in self.slots.iter().enumerate().skip(i) {
            self.index.insert(s.key.clone(), j);
        }
        true
    }
    /// Enable or disable the item under `key`: `None` when none is registered, else whether its
    /// state changed.
    pub fn set_enabled(&mut self, key: &str, on: bool) -> Option<bool> {
        let slot = self.slots.get_mut(*self.index.get(key)?)?;
        let changed = slot.enabled != on;
        slot.enabled = on;
        Some(changed)
    }
    /// Every registered entry, mutably: only while building, when no request holds one (an
    /// entry already shared is left alone).
    pub fn entries_mut(&mut self) -> impl Iterator<Item = &mut E> {
        self.slots
            .iter_mut()
            .filter_map(|s| Arc::get_mut(&mut s.entry))
    }
    /// The entry registered last, mutably (while building, see [`Self::entries_mut`]).
    pub fn last_mut(&mut self) -> Option<&mut E> {
        self.slots
            .last_mut()
            .and_then(|s| Arc::get_mut(&mut s.entry))
    }
}

/// Which items one client may see and use ([`super::ServerBuilder::visibility`]): the kind, the
/// registry key (a tool's or prompt's name, a resource's URI, a template's URI template) and
/// the request's verified principal.
pub(crate) type Visibility =
    Arc<dyn Fn(super::ItemKind, &str, Option<&crate::auth::Principal>) -> bool + Send + Sync>;

/// Told of the resource URIs a `subscriptions/listen` stream subscribes to: `true` when it
/// opens, `false` when it ends ([`super::ServerBuilder::on_listen_resources`]).
pub(crate) type ListenResources = Arc<dyn Fn(&[String], bool) + Send + Sync>;

#[derive(Default, Clone)]
pub(crate) struct Registry {
    pub visibility: Option<Visibility>,
    pub listen_resources: Option<ListenResources>,
    pub tools: Table<ToolEntry>,
    pub prompts: Table<PromptEntry>,
    pub resources: Table<ResourceEntry>,
    pub templates: Table<TemplateEntry>,
    pub completion: Option<Arc<dyn Handler>>,
    pub subscribe: Option<Arc<dyn Handler>>,
    pub unsubscribe: Option<Arc<dyn Handler>>,
    pub custom: HashMap<String, Arc<dyn Handler>>,
}

impl Registry {
    /// Whether `key` of `kind` is visible to `who` (everything is, without a visibility rule).
    pub fn visible(
        &self,
        kind: super::ItemKind,
        key: &str,
        who: Option<&crate::auth::Principal>,
    ) -> bool {
        self.visibility.as_ref().is_none_or(|f| f(kind, key, who))
    }
    pub fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tools.get(name)
    }
    pub fn prompt(&self, name: &str) -> Option<&Arc<PromptEntry>> {
        self.prompts.get(name)
    }
    pub fn resource(&self, uri: &str) -> Option<&Arc<ResourceEntry>> {
        self.resources.get(uri)
    }
    /// The enabled template `uri` matches first, with its variables.
    pub fn template_for(
        &self,
        uri: &str,
    ) -> Option<(&Arc<TemplateEntry>, serde_json::Map<String, Value>)> {
        self.templates
            .iter()
            .find_map(|t| t.template.matches(uri).map(|v| (t, v)))
    }
}

/// The current registry of a running server (see the module documentation).
pub(crate) struct Live {
    current: RwLock<Arc<Registry>>,
    /// Serializes writers, so two concurrent edits cannot lose one another.
    edit: Mutex<()>,
}

impl Live {
    pub fn new(registry: Registry) -> Self {
        Self {
            current: RwLock::new(Arc::new(registry)),
            edit: Mutex::new(()),
        }
    }
    /// The current snapshot. The lock is held only to clone the `Arc`, and a panic elsewhere
    /// cannot leave a snapshot half-written (writers swap whole snapshots), so poisoning is
    /// ignored.
    pub fn load(&self) -> Arc<Registry> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
    /// Edit a copy of the current snapshot and swap it in when `f` succeeds.
    ///
    /// The replaced snapshot is dropped after both locks are released: it may hold the last
    /// reference to a removed or replaced handler, whose drop runs user code (a binding's
    /// finalizer), which must neither stall readers nor deadlock by changing the registry.
    pub fn edit<R, E>(&self, f: impl FnOnce(&mut Registry) -> Result<R, E>) -> Result<R, E> {
        let writer = super::session::lock(&self.edit);
        let mut next = Registry::clone(&self.load());
        let out = f(&mut next)?;
        let old = std::mem::replace(
            &mut *self
                .current
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            Arc::new(next),
        );
        drop(writer);
        drop(old);
        Ok(out)
    }
}
