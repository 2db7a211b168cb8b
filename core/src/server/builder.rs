//! Building a server: configuration plus its initial registry (which may change while it serves,
//! see `dynamic`).

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::handler::Handler;
use super::mrtr::{self, RequestStateOptions};
use super::registry::{PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry};
use super::session::{lock, Session};
use super::Server;
use crate::backplane::Backplane;
use crate::limits::Limits;
use crate::protocol::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::security::{KeyRing, ReplayGuard, Sealer};

/// Cache hints stamped on cacheable modern results (CACHE-01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheHints {
    /// Freshness lifetime in milliseconds (0 = do not cache).
    pub ttl_ms: u64,
    /// `"public"` or `"private"`.
    pub scope: &'static str,
}

impl Default for CacheHints {
    fn default() -> Self {
        Self {
            ttl_ms: 0,
            scope: "private",
        }
    }
}

/// Server configuration. Every field has a safe default.
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): flat camelCase keys for the identity
/// (`name`, `version`, `title`, `description`, `websiteUrl`, `icons`) and the switches below
/// (`cacheTtlMs` and `cacheScope` for [`Self::cache_hints`], `maxConcurrency`: `null` or `0` =
/// unlimited), with `limits` and `requestState` as nested patches.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// Server identity.
    pub server_info: Implementation,
    /// Instructions for the model.
    pub instructions: Option<String>,
    /// Limits.
    pub limits: Limits,
    /// Page size for list methods; `None` = everything in one page.
    pub page_size: Option<usize>,
    /// Advertise and emit `notifications/message` logging.
    pub logging: bool,
    /// Advertise `tools.listChanged`.
    pub tools_list_changed: bool,
    /// Advertise `prompts.listChanged`.
    pub prompts_list_changed: bool,
    /// Advertise `resources.listChanged`.
    pub resources_list_changed: bool,
    /// Advertise `resources.subscribe`.
    pub resources_subscribe: bool,
    /// Cache hints for modern results (defaults: 0 / private).
    pub cache_hints: CacheHints,
    /// Also stamp cache hints on legacy results (off by default).
    pub legacy_cache_hints: bool,
    /// Extensions advertised in capabilities (SEP-2133).
    pub extensions: Map<String, Value>,
    /// Protection of `requestState` on the modern wire (sealed by default).
    pub request_state: RequestStateOptions,
    /// Serve `input_required` outcomes to legacy sessions with real server→client requests
    /// (default `true`); when `false` such outcomes fail with -32603.
    pub legacy_input_shim: bool,
    /// Stamp `_meta["io.modelcontextprotocol/serverInfo"]` on every modern result (META-02,
    /// default `true`).
    pub stamp_server_info: bool,
    /// Most handler calls of this server running at once, across all its connections and
    /// sessions (default `None`: unlimited, each connection still bounded by
    /// [`Limits::max_inflight`]). A request over the bound waits for a slot; it is not refused.
    /// A call holds its slot until its handler's future finishes (for a binding, until its
    /// responder answers). With `Some(1)` handlers never overlap, so they need not be
    /// reentrant.
    pub max_concurrency: Option<usize>,
    /// Tasks (both eras; TASK-L01, TASK-M01…M04); `None`: off. Registering a task-capable tool
    /// turns them on with the defaults.
    pub tasks: Option<super::tasks::TaskOptions>,
    /// What this server shares with the other workers of its deployment (default: nothing,
    /// [`Backplane::local`]). JSON: `redis` (URL or `null`), `redisPrefix`,
    /// `redisConnectTimeoutMs` and `redisWaitMs`. With Redis, `request_state.keys` is required
    /// while sealing is on.
    pub backplane: Backplane,
    /// Advertise tools, prompts and resources even when none is registered at build, so they
    /// can be added while serving ([`Server::add_tool`] and the rest; default `false`: a kind
    /// is advertised when one is registered at build). JSON: `dynamic`.
    pub dynamic: bool,
    /// Record operation metrics ([`Server::metrics_text`], an HTTP endpoint's `metricsPath`;
    /// default `false`: off costs one branch per request). JSON: `metrics`.
    pub metrics: bool,
    /// Most metric series kept (method × target × outcome, default 1,000): targets a peer names
    /// beyond it are counted as `_other`. JSON: `metricsMaxSeries`.
    pub metrics_max_series: usize,
}

impl ServerOptions {
    /// The defaults for a server with this identity (what [`ServerBuilder::new`] starts from).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            server_info: Implementation::new(name, version),
            instructions: None,
            limits: Limits::default(),
            page_size: None,
            logging: true,
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resources_subscribe: true,
            cache_hints: CacheHints::default(),
            legacy_cache_hints: false,
            extensions: Map::new(),
            request_state: RequestStateOptions::default(),
            legacy_input_shim: true,
            stamp_server_info: true,
            max_concurrency: None,
            tasks: None,
            backplane: Backplane::local(),
            dynamic: false,
            metrics: false,
            metrics_max_series: 1000,
        }
    }
}

/// Why building failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool's schema was refused.
    #[error("tool {tool}: {reason}")]
    Schema {
        /// Tool name.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A tool's `x-mcp-header` declaration breaks the rules of HTTP-14 (a client over HTTP
    /// would have to drop the tool).
    #[error("tool {tool}: invalid x-mcp-header declaration: {reason}")]
    McpHeader {
        /// Tool name.
        tool: String,
        /// Which declaration (JSON pointer) and why.
        reason: String,
    },
    /// Two registrations share a name or URI.
    #[error("duplicate registration: {0}")]
    Duplicate(String),
    /// A resource template could not be parsed.
    #[error("resource template {template}: {reason}")]
    Template {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// A name or URI is empty or holds a control character.
    #[error("invalid {what} name {name:?}: {reason}")]
    Name {
        /// `"tool"`, `"prompt"`, `"resource"`, `"resource template"` or `"method"`.
        what: &'static str,
        /// The refused name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A limit or option is out of range.
    #[error("invalid option: {0}")]
    Option(String),
    /// A change while serving names a kind this server does not advertise (`"tools"`,
    /// `"prompts"` or `"resources"`): build with [`ServerBuilder::dynamic`] or register one
    /// before building.
    #[error(
        "this server does not advertise {0}: build it with dynamic() to add them while serving"
    )]
    NotAdvertised(&'static str),
    /// An MCP Apps rule is broken (EXT-03): a `ui://` resource with another MIME type, the app
    /// MIME type outside `ui://`, or a tool linked to a UI resource that is not registered.
    #[error("MCP Apps: {0}")]
    App(String),
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    pub(super) options: ServerOptions,
    pub(super) registry: Registry,
    errors: Vec<BuildError>,
}

pub(crate) struct ServerInner {
    pub options: ServerOptions,
    pub registry: super::registry::Live,
    /// What changes made while serving need (see `dynamic`).
    pub dynamic: super::dynamic::State,
    pub capabilities: Value,
    /// `options.server_info` as JSON, made once: every modern result carries it (META-02).
    pub server_info: Value,
    /// The same as modern JSON-text results carry it: `"resultType":"complete","_meta":{…}`.
    pub complete_head: String,
    pub sealer: Option<Sealer>,
    /// The notification bus of the backplane and this server's place on it.
    pub bus: Arc<dyn crate::backplane::NotificationBus>,
    /// This server's origin id on the bus (its own messages come back and are skipped).
    pub origin: String,
    /// What the bus holds (weakly) to reach this server.
    pub bus_receiver: Arc<dyn crate::backplane::BusReceiver>,
    /// Claims each opened state once (MRTR-06); `None` when states are unsealed or reusable.
    pub replay: Option<Arc<dyn ReplayGuard>>,
    sessions: Mutex<HashMap<u64, Weak<Session>>>,
    next_key: AtomicU64,
    pub change_sinks: Mutex<Vec<Weak<dyn super::ChangeSink>>>,
    /// Running tasks and their store, when tasks are on.
    pub tasks: Option<Arc<super::tasks::TaskEngine>>,
    /// Operation metrics (recorded only when `options.metrics`).
    pub metrics: Arc<crate::telemetry::Metrics>,
}

impl ServerInner {
    pub(crate) fn next_session_key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }
    pub(crate) fn register_session(&self, key: u64, s: Weak<Session>) {
        lock(&self.sessions).insert(key, s);
    }
    pub(crate) fn unregister_session(&self, key: u64) {
        lock(&self.sessions).remove(&key);
    }
    /// Live sessions, collected without holding the lock while anyone writes to them.
    pub(crate) fn live_sessions(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions)
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }
}

impl ServerBuilder {
    /// A builder for a server with this identity.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            options: ServerOptions::new(name.into(), version.into()),
            registry: Registry::default(),
            errors: Vec::new(),
        }
    }

    /// Set instructions.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.options.instructions = Some(text.into());
        self
    }

    /// Replace the limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.options.limits = limits;
        self
    }

    /// Set the page size of list methods (`None` = one page).
    #[must_use]
    pub fn page_size(mut self, n: Option<usize>) -> Self {
        self.options.page_size = n;
        self
    }

    /// Set the cache hints for modern cacheable results.
    #[must_use]
    pub fn cache_hints(mut self, ttl_ms: u64, public: bool) -> Self {
        self.options.cache_hints = CacheHints {
            ttl_ms,
            scope: if public { "public" } else { "private" },
        };
        self
    }

    /// Seal `requestState` with this shared key ring (current key first) instead of a random
    /// per-process key, so every worker holding the ring accepts the others' states.
    #[must_use]
    pub fn request_state_keys(mut self, ring: KeyRing) -> Self {
        self.options.request_state.keys = Some(ring);
        self
    }

    /// Turn `requestState` sealing on (the default) or off (states then cross verbatim).
    #[must_use]
    pub fn seal_request_state(mut self, on: bool) -> Self {
        self.options.request_state.seal = on;
        self
    }

    /// Remember used states in `guard` (e.g. a store shared by every worker of a deployment)
    /// instead of the in-process cache, so a state is accepted once across all of them.
    #[must_use]
    pub fn request_state_replay_guard(mut self, guard: Arc<dyn ReplayGuard>) -> Self {
        self.options.request_state.replay_guard = Some(guard);
        self
    }

    /// Share state with the other workers of a deployment through `backplane` (default:
    /// [`Backplane::local`], nothing shared). With a Redis backplane, changes reach every
    /// worker's listen streams and sessions, a sealed `requestState` is accepted once across
    /// all workers. A Redis backplane needs [`Self::request_state_keys`] (the same ring on every
    /// worker; rotate by adding the new key first everywhere, then dropping the old one):
    /// [`Self::build`] refuses it without them while sealing is on, rather than keep a key where
    /// anyone who can read Redis could forge states.
    #[must_use]
    pub fn backplane(mut self, backplane: Backplane) -> Self {
        self.options.backplane = backplane;
        self
    }

    /// Advertise tools, prompts and resources even if none is registered yet, so they can be
    /// added while serving ([`ServerOptions::dynamic`]).
    #[must_use]
    pub fn dynamic(mut self) -> Self {
        self.options.dynamic = true;
        self
    }

    /// Edit any option.
    #[must_use]
    pub fn options(mut self, f: impl FnOnce(&mut ServerOptions)) -> Self {
        f(&mut self.options);
        self
    }

    /// Register a tool. Its schemas are checked and compiled here, once, and its `x-mcp-header`
    /// declarations checked (HTTP-14; [`BuildError::McpHeader`]). A refused registration is
    /// reported by [`ServerBuilder::build`].
    #[must_use]
    pub fn tool(self, tool: Tool, handler: impl Handler) -> Self {
        self.keep(|b| b.add_tool(tool, Arc::new(handler)))
    }

    /// Register a tool with a shared handler.
    ///
    /// # Errors
    /// The registration is refused, and the handler dropped at once: a name already taken, empty
    /// or with a control character ([`BuildError::Duplicate`], [`BuildError::Name`]), or a
    /// schema that does not compile ([`BuildError::Schema`], [`BuildError::McpHeader`]).
    pub fn add_tool(&mut self, tool: Tool, handler: Arc<dyn Handler>) -> Result<(), BuildError> {
        let support = super::tasks::TaskSupport::Forbidden;
        self.add_tool_entry(ToolEntry::new(tool, handler, support, None)?)
    }

    /// Register a checked tool, unless its name is taken.
    pub(super) fn add_tool_entry(
        &mut self,
        (name, e): (String, ToolEntry),
    ) -> Result<(), BuildError> {
        if self.registry.tools.contains(&name) {
            return Err(BuildError::Duplicate(format!("tool {name}")));
        }
        self.registry.tools.insert(name, e);
        Ok(())
    }

    /// Register a prompt.
    #[must_use]
    pub fn prompt(self, prompt: Prompt, handler: impl Handler) -> Self {
        self.keep(|b| b.add_prompt(prompt, Arc::new(handler)))
    }

    /// Register a prompt with a shared handler.
    ///
    /// # Errors
    /// A name already taken, empty or with a control character; the handler is dropped at once.
    pub fn add_prompt(
        &mut self,
        prompt: Prompt,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        let (name, entry) = PromptEntry::new(prompt, handler)?;
        if self.registry.prompts.contains(&name) {
            return Err(BuildError::Duplicate(format!("prompt {name}")));
        }
        self.registry.prompts.insert(name, entry);
        Ok(())
    }

    /// Register a concrete resource.
    #[must_use]
    pub fn resource(self, resource: Resource, handler: impl Handler) -> Self {
        self.keep(|b| b.add_resource(resource, Arc::new(handler)))
    }

    /// Register a concrete resource with a shared handler.
    ///
    /// # Errors
    /// A URI already registered, empty or with a control character; a `ui://` URI with a MIME
    /// type other than the app one, or the app type elsewhere ([`BuildError::App`]). The handler
    /// is dropped at once.
    pub fn add_resource(
        &mut self,
        resource: Resource,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        let (uri, entry) = ResourceEntry::new(resource, handler)?;
        if self.registry.resources.contains(&uri) {
            return Err(BuildError::Duplicate(format!("resource {uri}")));
        }
        self.registry.resources.insert(uri, entry);
        Ok(())
    }

    /// Register a resource template (RFC 6570 level-1 `{var}` expressions).
    #[must_use]
    pub fn resource_template(self, template: ResourceTemplate, handler: impl Handler) -> Self {
        self.keep(|b| b.add_resource_template(template, Arc::new(handler)))
    }

    /// Register a resource template with a shared handler.
    ///
    /// # Errors
    /// A template already registered, empty, with a control character, or unparsable
    /// ([`BuildError::Template`]); the handler is dropped at once.
    pub fn add_resource_template(
        &mut self,
        template: ResourceTemplate,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        let (key, entry) = TemplateEntry::new(template, handler)?;
        if self.registry.templates.contains(&key) {
            return Err(BuildError::Duplicate(format!("resource template {key}")));
        }
        self.registry.templates.insert(key, entry);
        Ok(())
    }

    /// Register the `completion/complete` handler (params: the whole request params). A later
    /// call replaces it.
    #[must_use]
    pub fn completion(mut self, handler: impl Handler) -> Self {
        self.registry.completion = Some(Arc::new(handler));
        self
    }

    /// Register handlers called on `resources/subscribe` and `resources/unsubscribe`.
    #[must_use]
    pub fn subscription_handlers(
        mut self,
        subscribe: impl Handler,
        unsubscribe: impl Handler,
    ) -> Self {
        self.registry.subscribe = Some(Arc::new(subscribe));
        self.registry.unsubscribe = Some(Arc::new(unsubscribe));
        self
    }

    /// Decide per request which tools, prompts, resources and templates a client sees: `f` gets
    /// the kind, the key (name, URI or URI template) and the request's verified principal (on
    /// an endpoint protected by [`crate::auth::AuthOptions`]; `None` elsewhere). A hidden item
    /// is left out of its list and answered as unknown when called, read, fetched or completed,
    /// exactly as if it were not registered; list results become `cacheScope: "private"`
    /// (CACHE-01), since they differ between clients. Keep `f` cheap: it runs per item listed.
    #[must_use]
    pub fn visibility(
        mut self,
        f: impl Fn(super::ItemKind, &str, Option<&crate::auth::Principal>) -> bool
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.registry.visibility = Some(Arc::new(f));
        self
    }

    /// Be told of the resource URIs each 2026-07-28 `subscriptions/listen` stream subscribes to
    /// (`notifications.resourceSubscriptions`, SUB-01): `f(uris, true)` when the stream opens,
    /// `f(uris, false)` when it ends, however it ends. The counterpart of
    /// [`Self::subscription_handlers`] for legacy `resources/subscribe`: a server that must
    /// arrange updates per URI (a bridge subscribing upstream) learns of both. `f` runs on the
    /// request's thread: keep it short, spawn any I/O.
    #[must_use]
    pub fn on_listen_resources(
        mut self,
        f: impl Fn(&[String], bool) + Send + Sync + 'static,
    ) -> Self {
        self.registry.listen_resources = Some(Arc::new(f));
        self
    }

    /// Register a custom method (params: the whole request params object).
    #[must_use]
    pub fn method(self, name: impl Into<String>, handler: impl Handler) -> Self {
        self.keep(|b| b.add_method(name.into(), Arc::new(handler)))
    }

    /// Register a custom method with a shared handler.
    ///
    /// # Errors
    /// A built-in MCP method, a name already registered, empty or with a control character; the
    /// handler is dropped at once.
    pub fn add_method(
        &mut self,
        name: String,
        handler: Arc<dyn Handler>,
    ) -> Result<(), BuildError> {
        super::registry::check_name("method", &name)?;
        if super::methods::BUILT_IN.contains(&name.as_str())
            || self.registry.custom.contains_key(&name)
        {
            return Err(BuildError::Duplicate(format!("method {name}")));
        }
        self.registry.custom.insert(name, handler);
        Ok(())
    }

    /// Run a registration of the chaining API, keeping its error for [`ServerBuilder::build`].
    pub(super) fn keep(mut self, f: impl FnOnce(&mut Self) -> Result<(), BuildError>) -> Self {
        if let Err(e) = f(&mut self) {
            self.errors.push(e);
        }
        self
    }

    /// Finish: validate options and freeze the registry.
    ///
    /// # Errors
    /// The first registration or option error.
    pub fn build(self) -> Result<Server, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        self.options
            .limits
            .validate()
            .map_err(|e| BuildError::Option(e.to_string()))?;
        if let Some(t) = &self.options.tasks {
            crate::options::JsonOptions::check(t).map_err(|e| BuildError::Option(e.to_string()))?;
        }
        if self.options.page_size == Some(0) {
            return Err(BuildError::Option("page_size must be positive".into()));
        }
        let mut registry = self.registry;
        let mut options = self.options;
        super::apps::finish(&mut options, &registry)?;
        let slots = match options.max_concurrency {
            Some(0) => {
                return Err(BuildError::Option(
                    "max_concurrency must be positive (None = unlimited)".into(),
                ))
            }
            Some(n) => Some(super::concurrency::bound(&mut registry, n)),
            None => None,
        };
        let capabilities = capabilities(&options, &registry);
        if let Some(t) = options.tasks.as_mut().filter(|t| t.store.is_none()) {
            // Tasks on a shared backplane live in its store, so any worker serves any task.
            t.store = options
                .backplane
                .task_store(t)
                .map_err(|e| BuildError::Option(format!("tasks: {e}")))?;
        }
        let tasks = options
            .tasks
            .clone()
            .map(|t| Arc::new(super::tasks::TaskEngine::new(t)));
        let sealer = mrtr::build_sealer(&options.request_state, &options.backplane)
            .map_err(|e| BuildError::Option(format!("request_state: {e}")))?;
        if options.request_state.replay_guard.is_none() {
            // MRTR-06 across workers: with a shared backplane the claim must be shared too.
            options.request_state.replay_guard = options.backplane.replay_guard();
        }
        let replay =
            mrtr::build_replay_guard(&options.request_state).map_err(BuildError::Option)?;
        let bus = options.backplane.bus();
        let origin = super::bus::origin_id();
        let metrics = Arc::new(crate::telemetry::Metrics::new(
            options.metrics,
            options.metrics_max_series,
        ));
        crate::telemetry::register_metrics(&metrics);
        let inner = Arc::new_cyclic(|weak: &Weak<ServerInner>| ServerInner {
            metrics,
            bus_receiver: Arc::new(super::bus::Receiver {
                inner: weak.clone(),
                origin: origin.clone(),
            }),
            bus: bus.clone(),
            origin,
            server_info: serde_json::to_value(&options.server_info).unwrap_or_default(),
            complete_head: super::payload::complete_head(
                super::era::KEY_SERVER_INFO,
                options
                    .stamp_server_info
                    .then(|| serde_json::to_value(&options.server_info).unwrap_or_default())
                    .as_ref(),
            ),
            options,
            registry: super::registry::Live::new(registry),
            dynamic: super::dynamic::State::new(slots),
            capabilities,
            sealer,
            replay,
            sessions: Mutex::new(HashMap::new()),
            next_key: AtomicU64::new(1),
            change_sinks: Mutex::new(Vec::new()),
            tasks,
        });
        bus.subscribe(Arc::downgrade(&inner.bus_receiver));
        Ok(Server { inner })
    }
}

/// Capabilities derived from what is registered.
fn capabilities(o: &ServerOptions, r: &Registry) -> Value {
    let mut caps = Map::new();
    if !r.tools.is_empty() || o.dynamic {
        caps.insert("tools".into(), json!({"listChanged": o.tools_list_changed}));
    }
    if !r.prompts.is_empty() || o.dynamic {
        caps.insert(
            "prompts".into(),
            json!({"listChanged": o.prompts_list_changed}),
        );
    }
    if !r.resources.is_empty() || !r.templates.is_empty() || o.dynamic {
        caps.insert(
            "resources".into(),
            json!({"listChanged": o.resources_list_changed, "subscribe": o.resources_subscribe}),
        );
    }
    if r.completion.is_some() {
        caps.insert("completions".into(), json!({}));
    }
    if o.logging {
        caps.insert("logging".into(), json!({}));
    }
    let mut extensions = o.extensions.clone();
    if o.tasks.is_some() {
        // TASK-M01: advertised under extensions (never a v1-style `tasks` slot on discover).
        extensions.insert(super::tasks::EXTENSION.into(), json!({}));
    }
    if !extensions.is_empty() {
        caps.insert("extensions".into(), Value::Object(extensions));
    }
    Value::Object(caps)
}
