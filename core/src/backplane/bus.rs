//! The notification bus: server changes (list changes, resource updates, task states) raised on
//! one worker reach the live `subscriptions/listen` streams (SUB-04, TASK-M04) and the legacy
//! sessions of every worker sharing the backplane.
//!
//! Each [`crate::Server`] delivers its own changes locally at once and publishes them with its
//! origin id; a receiver drops messages carrying its own origin, so a worker never delivers its
//! own change twice. [`LocalBus`] is the in-process bus: servers built with clones of one
//! [`super::Backplane::local`] hear each other, a lone server hears nobody.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::server::ServerChange;

/// One change as it travels on the bus (owned; the wire form of the Redis bus is its JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "camelCase")]
#[non_exhaustive]
pub enum BusChange {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` for `uri`.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/tasks` for task `id` with its full state (TASK-M04).
    Task {
        /// The task id.
        id: String,
        /// Its state as the listen stream carries it.
        state: Value,
    },
}

impl BusChange {
    pub(crate) fn from_change(c: ServerChange<'_>) -> Self {
        match c {
            ServerChange::ToolsListChanged => Self::ToolsListChanged,
            ServerChange::PromptsListChanged => Self::PromptsListChanged,
            ServerChange::ResourcesListChanged => Self::ResourcesListChanged,
            ServerChange::ResourceUpdated(uri) => Self::ResourceUpdated { uri: uri.into() },
            ServerChange::Task(id, state) => Self::Task {
                id: id.into(),
                state: state.clone(),
            },
        }
    }

    pub(crate) fn as_change(&self) -> ServerChange<'_> {
        match self {
            Self::ToolsListChanged => ServerChange::ToolsListChanged,
            Self::PromptsListChanged => ServerChange::PromptsListChanged,
            Self::ResourcesListChanged => ServerChange::ResourcesListChanged,
            Self::ResourceUpdated { uri } => ServerChange::ResourceUpdated(uri),
            Self::Task { id, state } => ServerChange::Task(id, state),
        }
    }
}

/// A change plus the server that raised it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusMessage {
    /// The raising server's origin id (random per server instance).
    #[serde(rename = "o")]
    pub origin: String,
    /// The change.
    #[serde(rename = "c")]
    pub change: BusChange,
}

/// Hears what the bus carries (a server, held weakly by the bus).
pub trait BusReceiver: Send + Sync + 'static {
    /// A message from any server on the bus, this one's own included. Must not block.
    fn receive(&self, msg: &BusMessage);
    /// The bus may have lost messages (its subscription broke): receivers whose peers must
    /// not miss a change end their streams so the clients listen again and refetch.
    fn gap(&self) {}
}

/// Carries changes between the servers of one backplane.
pub trait NotificationBus: Send + Sync + fmt::Debug {
    /// Publish without blocking: queued, or dropped and counted when the queue is full.
    fn publish(&self, msg: BusMessage);
    /// Register a receiver, held weakly: dropping it unregisters it.
    fn subscribe(&self, receiver: Weak<dyn BusReceiver>);
    /// False while the bus cannot deliver (its shared transport is down).
    fn is_available(&self) -> bool {
        true
    }
    /// Start background work (a subscription) if it is not running; needs a tokio runtime,
    /// without one it does nothing and a later call starts it.
    fn start(&self) {}
}

/// A set of weakly held receivers.
#[derive(Default)]
pub(crate) struct Receivers(Mutex<Vec<Weak<dyn BusReceiver>>>);

impl Receivers {
    pub(crate) fn add(&self, r: Weak<dyn BusReceiver>) {
        let mut v = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        v.retain(|w| w.strong_count() > 0);
        v.push(r);
    }
    /// The live receivers, collected without holding the lock while delivering.
    pub(crate) fn live(&self) -> Vec<Arc<dyn BusReceiver>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }
    pub(crate) fn deliver(&self, msg: &BusMessage) {
        for r in self.live() {
            r.receive(msg);
        }
    }
}

/// The in-process bus: delivery is a direct call to every receiver.
#[derive(Default)]
pub struct LocalBus {
    receivers: Receivers,
}

impl fmt::Debug for LocalBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalBus")
            .field("receivers", &self.receivers.live().len())
            .finish()
    }
}

impl LocalBus {
    /// An empty bus.
    pub fn new() -> Self {
        Self::default()
    }
}

impl NotificationBus for LocalBus {
    fn publish(&self, msg: BusMessage) {
        self.receivers.deliver(&msg);
    }
    fn subscribe(&self, receiver: Weak<dyn BusReceiver>) {
        self.receivers.add(receiver);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rec(Mutex<Vec<BusMessage>>);
    impl BusReceiver for Rec {
        fn receive(&self, msg: &BusMessage) {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(msg.clone());
        }
    }

    #[test]
    fn local_bus_delivers_to_live_receivers_only() {
        let bus = LocalBus::new();
        let a = Arc::new(Rec(Mutex::new(Vec::new())));
        let b = Arc::new(Rec(Mutex::new(Vec::new())));
        let aw: Weak<dyn BusReceiver> = Arc::downgrade(&(a.clone() as Arc<dyn BusReceiver>));
        let bw: Weak<dyn BusReceiver> = Arc::downgrade(&(b.clone() as Arc<dyn BusReceiver>));
        bus.subscribe(aw);
        bus.subscribe(bw);
        drop(b);
        let msg = BusMessage {
            origin: "x".into(),
            change: BusChange::ResourceUpdated {
                uri: "a://b".into(),
            },
        };
        bus.publish(msg.clone());
        assert_eq!(
            *a.0.lock().unwrap_or_else(PoisonError::into_inner),
            vec![msg]
        );
        assert_eq!(bus.receivers.live().len(), 1);
    }

    #[test]
    fn wire_form_round_trips() {
        for c in [
            BusChange::ToolsListChanged,
            BusChange::PromptsListChanged,
            BusChange::ResourcesListChanged,
            BusChange::ResourceUpdated { uri: "u".into() },
            BusChange::Task {
                id: "t".into(),
                state: serde_json::json!({"status": "working"}),
            },
        ] {
            let m = BusMessage {
                origin: "o".into(),
                change: c,
            };
            let text = serde_json::to_string(&m).unwrap_or_default();
            let back: BusMessage = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, m);
            assert_eq!(back.change.as_change(), m.change.as_change());
        }
    }
}
