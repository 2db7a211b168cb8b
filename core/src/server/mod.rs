//! The server side: builder and registry, the handler seam, the request context, per-connection
//! sessions and era-aware dispatch.

mod builder;
mod context;
mod dispatch;
pub mod era;
mod handler;
mod methods;
mod mrtr;
mod pagination;
mod peer;
mod registry;
mod session;
mod uri_template;

pub use builder::{BuildError, CacheHints, ServerBuilder, ServerOptions};
pub use context::RequestContext;
pub use dispatch::{encode_reply, Reply};
pub use era::Envelope;
pub use handler::{handler_fn, BoxFuture, Handler, InputRequired, Outcome};
pub use mrtr::{RequestStateOptions, INVALID_STATE_MESSAGE};
pub use peer::PeerError;
pub use session::{Session, SessionKind};
pub use uri_template::UriTemplate;

use std::sync::Arc;

/// A built server: immutable registry plus configuration. Cheap to clone; share it across
/// connections and transports.
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
    /// Open a new connection-scoped session whose unrelated messages go to `sink`.
    pub fn new_session(
        &self,
        kind: SessionKind,
        sink: Arc<dyn crate::transport::Outbound>,
    ) -> Arc<Session> {
        Session::new(self.clone(), kind, sink)
    }
    /// Announce that the tool list changed to every live legacy session (when `listChanged` is
    /// advertised). Returns how many sessions were told.
    pub fn notify_tools_list_changed(&self) -> usize {
        self.broadcast_list_changed(
            "notifications/tools/list_changed",
            self.inner.options.tools_list_changed,
        )
    }
    /// Announce that the prompt list changed.
    pub fn notify_prompts_list_changed(&self) -> usize {
        self.broadcast_list_changed(
            "notifications/prompts/list_changed",
            self.inner.options.prompts_list_changed,
        )
    }
    /// Announce that the resource list changed.
    pub fn notify_resources_list_changed(&self) -> usize {
        self.broadcast_list_changed(
            "notifications/resources/list_changed",
            self.inner.options.resources_list_changed,
        )
    }
    /// Tell every session subscribed to `uri` that the resource changed.
    pub fn notify_resource_updated(&self, uri: &str) -> usize {
        let params = serde_json::json!({"uri": uri});
        self.inner
            .live_sessions()
            .into_iter()
            .filter(|s| s.is_subscribed(uri))
            .filter(|s| s.notify("notifications/resources/updated", Some(&params)))
            .count()
    }

    fn broadcast_list_changed(&self, method: &str, advertised: bool) -> usize {
        if !advertised {
            return 0;
        }
        self.inner
            .live_sessions()
            .into_iter()
            .filter(|s| s.is_legacy_initialized())
            .filter(|s| s.notify(method, None))
            .count()
    }
}
