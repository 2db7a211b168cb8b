//! The server side: builder and registry, the handler seam, the request context, per-connection
//! sessions and era-aware dispatch, `subscriptions/listen` (`listen`), and the [`Outbound`] seam
//! transports implement.
//!
//! Transports reach the server through its public API and a few crate-internal views
//! (`Server::tool_param_headers`, `Server::open_listen`, `Server::stateless_legacy_session`,
//! `era::route_request`); they never read its internals. The server depends on `protocol`,
//! `jsonrpc` and `schema` below it, never on `client` or a transport.

mod apps;
mod ask;
mod builder;
#[cfg(test)]
mod builder_tests;
mod bus;
mod concurrency;
mod context;
mod dispatch;
mod dynamic;
pub(crate) mod era;
pub(crate) mod guard;
mod handler;
pub(crate) mod listen;
mod methods;
mod mrtr;
mod options;
mod outbound;
mod pagination;
mod payload;
mod peer;
mod registry;
mod request_state;
mod session;
mod shape;
mod tasks;
#[cfg(test)]
pub(crate) mod test_support;
mod typed;
pub(crate) mod uri_template;

pub use builder::{BuildError, CacheHints, ServerBuilder, ServerOptions};
pub use context::RequestContext;
pub(crate) use dispatch::{encode_cancel, is_cancel};
pub use dispatch::{encode_reply, Reply};
pub use dynamic::{ItemKind, Registration};
pub use handler::{handler_fn, BoxFuture, Handler, InputRequired, Outcome};
pub use mrtr::RequestStateOptions;
pub use outbound::{NullOutbound, Outbound};
pub use payload::Payload;
pub use peer::PeerError;
pub(crate) use session::{lock, AnswerWatch};
pub use session::{Session, SessionHandle, SessionKind};
pub use shape::{
    completion_result, media_block, prompt_result, tool_error_result, tool_result, ResultShape,
    COMPLETION_MAX_VALUES,
};
pub use tasks::{TaskOptions, TaskSupport, EXTENSION as TASKS_EXTENSION, RELATED_TASK};
pub use typed::{invalid_arguments, prompt_fn, schema_for, tool_fn, ToolOutput};

use std::sync::{Arc, Weak};

/// A change the server announces. Transports that keep subscription streams (HTTP
/// `subscriptions/listen`, SUB-04) receive every change through a [`ChangeSink`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ServerChange<'a> {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(&'a str),
    /// `notifications/tasks` for this task id, with its full state (TASK-M04).
    Task(&'a str, &'a serde_json::Value),
}

/// Receives server changes (see [`Server::add_change_sink`]). Implementations must not block:
/// they queue or drop, and report how many peers were told.
pub(crate) trait ChangeSink: Send + Sync + 'static {
    /// Deliver one change; returns how many peers it was queued for.
    fn on_change(&self, change: ServerChange<'_>) -> usize;
    /// Changes may have been lost on the way from other workers (the backplane's subscription
    /// broke): streams that promise every change end, so their clients listen again.
    fn on_gap(&self) {}
}

/// A built server: its registry (which may change while it serves, see [`Server::add_tool`])
/// plus configuration. Cheap to clone; share it across connections and transports.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<builder::ServerInner>,
}

impl Server {
    /// Start building a server.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }
    /// The limits in force.
    pub fn limits(&self) -> &crate::Limits {
        &self.inner.options.limits
    }
    /// The server's metrics as a Prometheus text exposition (format 0.0.4): operation durations
    /// by the OpenTelemetry MCP conventions, requests by method, target and outcome, in-flight
    /// requests, refusals by reason and the gauges of the HTTP endpoints serving it. Empty
    /// series unless [`ServerOptions::metrics`] is on.
    pub fn metrics_text(&self) -> String {
        self.inner.metrics.render()
    }
    /// [`Self::metrics_text`] of several servers as one exposition, series with the same
    /// labels added (one application serving through several core servers).
    pub fn merged_metrics_text(servers: &[Server]) -> String {
        let snaps = servers.iter().map(|s| s.inner.metrics.snapshot()).collect();
        crate::telemetry::render_metrics(&crate::telemetry::merge_metrics(snaps))
    }
    pub(crate) fn metrics(&self) -> &crate::telemetry::Metrics {
        &self.inner.metrics
    }
    /// Open a new connection-scoped session whose unrelated messages go to `sink`.
    pub fn new_session(&self, kind: SessionKind, sink: Arc<dyn Outbound>) -> Arc<Session> {
        self.start_bus();
        Session::new(self.clone(), kind, sink)
    }
    /// The `x-mcp-header` declarations of tool `name`, checked at registration (HTTP-14); `None`
    /// for an unknown tool. Transports read the registry only through views like this one.
    pub(crate) fn tool_param_headers(
        &self,
        name: &str,
    ) -> Option<Arc<[crate::protocol::mcp_header::ParamHeader]>> {
        self.inner
            .registry
            .load()
            .tool(name)
            .map(|t| t.param_headers.clone())
    }
    /// Register a receiver of server changes (list changes, resource updates), held weakly:
    /// dropping the receiver unregisters it.
    pub(crate) fn add_change_sink(&self, sink: Weak<dyn ChangeSink>) {
        let mut sinks = session::lock(&self.inner.change_sinks);
        sinks.retain(|s| s.strong_count() > 0);
        sinks.push(sink);
    }
    /// Fan a change out to the registered sinks; the lock is released before any delivery.
    pub(crate) fn fan_out(&self, change: ServerChange<'_>) -> usize {
        self.live_sinks().iter().map(|s| s.on_change(change)).sum()
    }
    fn live_sinks(&self) -> Vec<Arc<dyn ChangeSink>> {
        session::lock(&self.inner.change_sinks)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }
    /// Tell the sinks that changes may have been lost.
    pub(crate) fn fan_out_gap(&self) {
        for s in self.live_sinks() {
            s.on_gap();
        }
    }
    /// Announce that the tool list changed to every live legacy session and every listen stream
    /// that asked for it (when `listChanged` is advertised), on this server and, through its
    /// backplane, on every other worker. Returns how many peers of this server were told.
    pub fn notify_tools_list_changed(&self) -> usize {
        self.raise(ServerChange::ToolsListChanged)
    }
    /// Announce that the prompt list changed (see [`Self::notify_tools_list_changed`]).
    pub fn notify_prompts_list_changed(&self) -> usize {
        self.raise(ServerChange::PromptsListChanged)
    }
    /// Announce that the resource list changed (see [`Self::notify_tools_list_changed`]).
    pub fn notify_resources_list_changed(&self) -> usize {
        self.raise(ServerChange::ResourcesListChanged)
    }
    /// Tell every session and listen stream subscribed to `uri` that the resource changed, on
    /// every worker of the backplane. Returns how many peers of this server were told.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        self.raise(ServerChange::ResourceUpdated(uri))
    }
}
