//! The server's side of the notification bus ([`crate::backplane::bus`]): a change raised here
//! is delivered to this server's legacy sessions and listen streams at once and published with
//! this server's origin; a change heard on the bus from another server is delivered the same
//! way. Its own messages, which a shared bus hands back, are skipped, so no peer is told twice.

use std::sync::Weak;

use super::builder::ServerInner;
use super::{Server, ServerChange};
use crate::backplane::{BusChange, BusMessage, BusReceiver};

/// A random id naming one server instance on the bus.
pub(crate) fn origin_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // Only uniqueness among the workers matters; the time and address are a fallback.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        return format!("t{t:x}-{:p}", &b);
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What the bus holds to reach a server.
pub(crate) struct Receiver {
    pub(crate) inner: Weak<ServerInner>,
    pub(crate) origin: String,
}

impl BusReceiver for Receiver {
    fn receive(&self, msg: &BusMessage) {
        if msg.origin == self.origin {
            return;
        }
        if let Some(inner) = self.inner.upgrade() {
            Server { inner }.deliver(msg.change.as_change());
        }
    }

    fn gap(&self) {
        if let Some(inner) = self.inner.upgrade() {
            Server { inner }.fan_out_gap();
        }
    }
}

impl Server {
    /// Deliver a change raised here, then publish it for the other servers of the backplane.
    /// Returns how many local peers were told.
    pub(crate) fn raise(&self, change: ServerChange<'_>) -> usize {
        let told = self.deliver(change);
        self.inner.bus.publish(BusMessage {
            origin: self.inner.origin.clone(),
            change: BusChange::from_change(change),
        });
        told
    }

    /// Deliver a change to this server's legacy sessions and change sinks (listen streams).
    pub(crate) fn deliver(&self, change: ServerChange<'_>) -> usize {
        let o = &self.inner.options;
        let (method, advertised) = match change {
            ServerChange::ToolsListChanged => {
                ("notifications/tools/list_changed", o.tools_list_changed)
            }
            ServerChange::PromptsListChanged => {
                ("notifications/prompts/list_changed", o.prompts_list_changed)
            }
            ServerChange::ResourcesListChanged => (
                "notifications/resources/list_changed",
                o.resources_list_changed,
            ),
            ServerChange::ResourceUpdated(uri) => {
                let params = serde_json::json!({"uri": uri});
                let sessions = self
                    .inner
                    .live_sessions()
                    .into_iter()
                    .filter(|s| s.is_subscribed(uri))
                    .filter(|s| s.notify("notifications/resources/updated", Some(&params)))
                    .count();
                return sessions + self.fan_out(change);
            }
            // TASK-M04: modern task states go to listen streams only (legacy task status
            // notifications stay on the creating session, TASK-L01).
            ServerChange::Task(..) => return self.fan_out(change),
        };
        if !advertised {
            return 0;
        }
        let sessions = self
            .inner
            .live_sessions()
            .into_iter()
            .filter(|s| s.is_legacy_initialized())
            .filter(|s| s.notify(method, None))
            .count();
        sessions + self.fan_out(change)
    }

    /// Start the bus subscription if it is not running (needs a tokio runtime): transports
    /// call this when they start serving.
    pub(crate) fn start_bus(&self) {
        self.inner.bus.start();
    }

    /// False while the backplane is unreachable: work that needs it is refused with 503.
    pub fn backplane_available(&self) -> bool {
        self.inner.options.backplane.is_available()
    }

    /// The backplane this server was built with.
    pub fn backplane(&self) -> &crate::backplane::Backplane {
        &self.inner.options.backplane
    }
}
