//! `Client::listen` on a legacy session (REQUIREMENTS SUB-07): the legacy era has no
//! `subscriptions/listen`; its equivalents are `resources/subscribe` and the list_changed
//! notifications a session receives on any stream. A legacy [`Subscription`] subscribes to the
//! requested resources and routes the session's matching notifications to its queue, so callers
//! (and the bindings) read both eras through one API.

use serde_json::{json, Map, Value};
use std::collections::HashSet;
use tokio::sync::mpsc;

use super::listen::{Subscription, LISTEN_QUEUE};
use super::{CallOptions, Client, ClientError};

/// Which session notifications one legacy subscription takes.
#[derive(Debug, Clone, Default)]
pub(crate) struct LegacyFilter {
    methods: HashSet<&'static str>,
    uris: HashSet<String>,
}

impl LegacyFilter {
    /// A filter taking exactly these notification methods (e.g. `notifications/tasks/status`
    /// for a task wait, TASK-L01).
    pub(crate) fn methods(methods: &[&'static str]) -> Self {
        Self {
            methods: methods.iter().copied().collect(),
            uris: HashSet::new(),
        }
    }

    /// True when `method`/`params` is one of the types this subscription asked for
    /// (`resources/updated` only for a subscribed URI, SUB-04).
    pub(crate) fn accepts(&self, method: &str, params: &Value) -> bool {
        if method == "notifications/resources/updated" {
            return params
                .get("uri")
                .and_then(Value::as_str)
                .is_some_and(|u| self.uris.contains(u));
        }
        self.methods.contains(method)
    }
}

/// The list_changed flags of a listen filter, the capability that promises each (SUB-06) and
/// the legacy notification that carries it.
const LIST_CHANGED: [(&str, &str, &str); 3] = [
    (
        "toolsListChanged",
        "tools",
        "notifications/tools/list_changed",
    ),
    (
        "promptsListChanged",
        "prompts",
        "notifications/prompts/list_changed",
    ),
    (
        "resourcesListChanged",
        "resources",
        "notifications/resources/list_changed",
    ),
];

/// What the server can honour of `filter`, judged by its capabilities as the modern server
/// judges its acknowledgement (SUB-02, SUB-06): a list_changed type needs `listChanged`, resource
/// subscriptions need `resources.subscribe`.
fn honour(filter: &Map<String, Value>, caps: &Value) -> (Map<String, Value>, LegacyFilter) {
    let flag = |cap: &str, key: &str| caps.get(cap).and_then(|c| c.get(key)) == Some(&json!(true));
    let mut honored = Map::new();
    let mut f = LegacyFilter::default();
    for (key, cap, method) in LIST_CHANGED {
        if filter.get(key) == Some(&json!(true)) && flag(cap, "listChanged") {
            honored.insert(key.into(), json!(true));
            f.methods.insert(method);
        }
    }
    let uris: Vec<String> = filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if !uris.is_empty() && flag("resources", "subscribe") {
        honored.insert("resourceSubscriptions".into(), json!(uris));
        f.uris = uris.into_iter().collect();
    }
    (honored, f)
}

impl Client {
    /// Open a legacy subscription: `resources/subscribe` each honoured URI, then route matching
    /// session notifications to the returned [`Subscription`].
    pub(crate) async fn listen_legacy(
        &self,
        filter: Value,
        opts: CallOptions,
    ) -> Result<Subscription, ClientError> {
        let Value::Object(filter) = filter else {
            return Err(ClientError::InvalidArgument(
                "the listen filter must be an object".into(),
            ));
        };
        let (honored, accept) = honour(&filter, &self.server_capabilities());
        let mut subscribed = Vec::new();
        for uri in &accept.uris {
            if let Err(e) = self.subscribe_resource_with(uri, opts.clone()).await {
                self.unsubscribe_all(&subscribed, &opts).await;
                return Err(e);
            }
            subscribed.push(uri.clone());
        }
        let peer = self.inner.peer.clone();
        let id = peer.next_id();
        let (tx, rx) = mpsc::channel(LISTEN_QUEUE);
        peer.add_legacy_listen(id.clone(), accept, tx);
        Ok(Subscription::legacy(
            id,
            Value::Object(honored),
            rx,
            subscribed,
            self.clone(),
        ))
    }

    /// Best effort: a failed `resources/unsubscribe` leaves only a server-side subscription that
    /// ends with the session.
    pub(crate) async fn unsubscribe_all(&self, uris: &[String], opts: &CallOptions) {
        for uri in uris {
            if let Err(e) = self.unsubscribe_resource_with(uri, opts.clone()).await {
                tracing::debug!(error = %e, uri, "resources/unsubscribe failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_only_what_the_capabilities_promise() {
        let caps = json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true}});
        let filter = json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourceSubscriptions": ["a://x"]});
        let (honored, f) = honour(filter.as_object().expect("object"), &caps);
        assert_eq!(
            Value::Object(honored),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["a://x"]})
        );
        assert!(f.accepts("notifications/tools/list_changed", &json!({})));
        assert!(!f.accepts("notifications/prompts/list_changed", &json!({})));
        assert!(f.accepts("notifications/resources/updated", &json!({"uri": "a://x"})));
        assert!(!f.accepts("notifications/resources/updated", &json!({"uri": "a://y"})));
        assert!(!f.accepts("notifications/message", &json!({})));
    }

    #[test]
    fn no_subscribe_capability_no_resource_updates() {
        let (honored, f) = honour(
            json!({"resourceSubscriptions": ["a://x"]})
                .as_object()
                .expect("object"),
            &json!({"resources": {}}),
        );
        assert!(honored.is_empty());
        assert!(!f.accepts("notifications/resources/updated", &json!({"uri": "a://x"})));
    }
}
