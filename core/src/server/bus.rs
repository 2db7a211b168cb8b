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
                    .filter(|s| s.notify_here("notifications/resources/updated", Some(&params)))
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
            .filter(|s| s.notify_here(method, None))
            .count();
        sessions + self.fan_out(change)
    }

    /// Start the bus subscription if it is not running (needs a tokio runtime): transports
    /// call this when they start serving.
    pub(crate) fn start_bus(&self) {
        self.inner.dynamic.note_runtime();
        self.inner.bus.start();
    }

    /// False while the backplane is unreachable: work that needs it is refused with 503.
    pub fn backplane_available(&self) -> bool {
        self.inner.options.backplane.is_available()
    }

    /// Wait until the backplane can serve (its first connection and bus subscription), within
    /// its connect timeout: transports await this before serving, so a worker is ready when its
    /// listen call returns. The error says which Redis is unreachable (without a password).
    pub(crate) async fn backplane_ready(&self) -> Result<(), String> {
        self.start_bus();
        self.inner.options.backplane.ensure_ready().await
    }

    /// [`Self::backplane_available`], waiting up to the backplane's bound for a reconnect first.
    pub(crate) async fn wait_backplane(&self) -> bool {
        self.inner.options.backplane.wait_available().await
    }

    /// The backplane this server was built with.
    pub fn backplane(&self) -> &crate::backplane::Backplane {
        &self.inner.options.backplane
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::SystemTime;

    use crate::backplane::Backplane;
    use crate::future::BoxFuture;
    use crate::security::replay::{Claim, ReplayGuard};
    use crate::security::sealing::NONCE_LEN;
    use crate::server::test_support::request;
    use crate::server::{handler_fn, InputRequired, NullOutbound, Outbound, SessionKind};
    use crate::{CallToolResult, HandlerError, Outcome, Server, Tool};

    /// A shared replay store that can be switched off, as Redis going down.
    #[derive(Debug, Default)]
    struct Switchable {
        down: AtomicBool,
    }
    impl ReplayGuard for Switchable {
        fn claim(&self, _n: [u8; NONCE_LEN], _e: SystemTime) -> BoxFuture<Claim> {
            let c = if self.down.load(Ordering::SeqCst) {
                Claim::StoreUnreachable
            } else {
                Claim::First
            };
            Box::pin(async move { c })
        }
    }

    fn modern(params: Value) -> Value {
        let mut p = params;
        p["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        });
        p
    }

    /// Without HTTP (stdio) the refusal while the shared store is down is the JSON-RPC error
    /// alone: -32603 with the "retry later" message, the state not consumed.
    #[tokio::test]
    async fn store_down_is_a_retry_later_error_without_http() {
        let guard = Arc::new(Switchable::default());
        let server = Server::builder("s", "1")
            .tool(
                Tool::new("gate").input_schema(json!({"type": "object"})),
                handler_fn(|ctx, _args: Value| async move {
                    Ok::<Outcome, HandlerError>(match ctx.request_state() {
                        Some(s) => CallToolResult::text(s).into(),
                        None => InputRequired::new().state("resume").into(),
                    })
                }),
            )
            .request_state_replay_guard(guard.clone())
            .build()
            .expect("server");
        let sink: Arc<dyn Outbound> = Arc::new(NullOutbound);
        let session = server.new_session(SessionKind::Stdio, sink);
        let first = request(&session, 1, "tools/call", modern(json!({"name": "gate"}))).await;
        let state = first.expect("round 1")["requestState"].clone();
        let retry = modern(json!({"name": "gate", "requestState": state}));
        guard.down.store(true, Ordering::SeqCst);
        let e = request(&session, 2, "tools/call", retry.clone())
            .await
            .expect_err("refused");
        assert_eq!(e.code, crate::error::codes::INTERNAL_ERROR);
        assert_eq!(e.message, crate::backplane::UNAVAILABLE_MESSAGE);
        guard.down.store(false, Ordering::SeqCst);
        let ok = request(&session, 3, "tools/call", retry).await.expect("ok");
        assert_eq!(ok["content"][0]["text"], "resume");
    }

    /// Servers built with clones of one local backplane hear each other's changes; a server's
    /// own change is delivered once.
    #[tokio::test]
    async fn local_backplane_clones_share_the_bus() {
        let bp = Backplane::local();
        let a = Server::builder("a", "1")
            .backplane(bp.clone())
            .build()
            .expect("a");
        let b = Server::builder("b", "1").backplane(bp).build().expect("b");
        let lone = Server::builder("c", "1").build().expect("c");
        let counts: Vec<Arc<Count>> = [&a, &b, &lone]
            .iter()
            .map(|s| {
                let c = Arc::new(Count::default());
                let weak = Arc::downgrade(&c) as std::sync::Weak<dyn crate::server::ChangeSink>;
                s.add_change_sink(weak);
                c
            })
            .collect();
        a.notify_resource_updated("x://1");
        let seen: Vec<usize> = counts.iter().map(|c| c.0.load(Ordering::SeqCst)).collect();
        assert_eq!(seen, [1, 1, 0]);
    }

    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicUsize);
    impl crate::server::ChangeSink for Count {
        fn on_change(&self, _c: crate::server::ServerChange<'_>) -> usize {
            self.0.fetch_add(1, Ordering::SeqCst);
            1
        }
    }
}
