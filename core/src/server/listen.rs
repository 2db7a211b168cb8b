//! `subscriptions/listen` (REQUIREMENTS SUB-01…06): what a listen request asks for, what this
//! server honours, and every message of the subscription. A transport that can carry the stream
//! (Streamable HTTP's SSE response, HTTP-06) only moves these messages; the rules are here.
//!
//! The `notifications` filter is required (-32602). The first message is
//! `notifications/subscriptions/acknowledged` with the honoured subset: only types whose
//! capability flags promise delivery (SUB-02, SUB-06). Then only requested types arrive, each
//! carrying `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request id (SUB-03);
//! `resources/updated` only for subscribed URIs or their sub-resources (SUB-04). A server
//! shutting down ends the subscription with its result (SUB-05).

use serde_json::{json, Map, Value};

use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::{era, ChangeSink, Server, ServerChange};
use crate::error::{codes, ErrorObject};
use crate::jsonrpc::{encode_notification, encode_result, Id};
use crate::protocol::envelope::{KEY_SERVER_INFO, KEY_SUBSCRIPTION_ID};

/// One open subscription: the request id, the honoured filter, and its closing result.
pub(crate) struct Listen {
    id: Id,
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    /// Task ids whose changes are pushed as `notifications/tasks` (TASK-M04).
    task_ids: Vec<String>,
    /// The acknowledged subset (SUB-02).
    honoured: Map<String, Value>,
    /// The result that ends the subscription on shutdown (SUB-05), encoded once.
    closing: Vec<u8>,
    /// Tells the server's `on_listen_resources` that the stream ended (when it was told that it
    /// opened).
    _told: Option<Told>,
}

/// Calls `f(uris, false)` when dropped.
struct Told {
    uris: Vec<String>,
    f: super::registry::ListenResources,
}

impl Drop for Told {
    fn drop(&mut self) {
        (self.f)(&self.uris, false);
    }
}

fn flag(caps: &Value, cap: &str, f: &str) -> bool {
    caps.get(cap).and_then(|c| c.get(f)) == Some(&Value::Bool(true))
}

impl Server {
    /// The span of a `subscriptions/listen` stream served over `transport` (it lasts as long as
    /// the stream; `Span::none()` when no subscriber wants it).
    pub(crate) fn listen_span(
        id: &Id,
        params: Option<&Map<String, Value>>,
        transport: &'static str,
    ) -> tracing::Span {
        crate::telemetry::span::server_request(
            "subscriptions/listen",
            id,
            params,
            transport,
            None,
            &|| None,
        )
        .map_or_else(tracing::Span::none, |(s, _)| s)
    }

    /// Open a `subscriptions/listen` subscription: the envelope is validated like any modern
    /// request's (§0.7 step 4: -32602 / -32022), then the filter is read and reduced to what this
    /// server honours (SUB-01, SUB-06).
    ///
    /// # Errors
    /// The envelope error, or -32602 naming what is wrong with the filter.
    pub(crate) fn open_listen(
        &self,
        id: Id,
        params: Option<&Map<String, Value>>,
    ) -> Result<Listen, ErrorObject> {
        let env = era::parse_envelope(params)?;
        let invalid = |why: &str| ErrorObject::new(codes::INVALID_PARAMS, why.to_owned());
        let Some(filter) = params
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
        else {
            return Err(invalid(
                "subscriptions/listen requires a notifications filter object",
            ));
        };
        let want = |k: &str| filter.get(k) == Some(&Value::Bool(true));
        let uris: Vec<String> = match filter.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => return Err(invalid("resourceSubscriptions must be an array of URIs")),
        };
        let task_ids = self.listen_task_ids(filter, &env)?;
        let caps = &self.inner.capabilities;
        let tools = want("toolsListChanged") && flag(caps, "tools", "listChanged");
        let prompts = want("promptsListChanged") && flag(caps, "prompts", "listChanged");
        let resources = want("resourcesListChanged") && flag(caps, "resources", "listChanged");
        let subscribe_ok = flag(caps, "resources", "subscribe");
        let uris = if subscribe_ok { uris } else { Vec::new() };
        let mut honoured = Map::new();
        for (k, on) in [
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ] {
            if on {
                honoured.insert(k.into(), Value::Bool(true));
            }
        }
        if subscribe_ok && filter.contains_key("resourceSubscriptions") {
            honoured.insert("resourceSubscriptions".into(), json!(uris));
        }
        if self.inner.tasks.is_some() && filter.contains_key("taskIds") {
            honoured.insert("taskIds".into(), json!(task_ids));
        }
        let closing = encode_result(
            &id,
            &json!({
                "resultType": "complete",
                "_meta": {
                    KEY_SUBSCRIPTION_ID: id.to_value(),
                    KEY_SERVER_INFO: self.inner.options.server_info,
                },
            }),
        );
        let told = match self.inner.registry.load().listen_resources.clone() {
            Some(f) if !uris.is_empty() => {
                f(&uris, true);
                Some(Told {
                    uris: uris.clone(),
                    f,
                })
            }
            _ => None,
        };
        Ok(Listen {
            id,
            tools,
            prompts,
            resources,
            uris,
            task_ids,
            honoured,
            closing,
            _told: told,
        })
    }

    /// `notifications.taskIds` (SUB-01 with the tasks extension): only for a request that
    /// declares the extension (TASK-M04, -32021); ignored when tasks are off.
    fn listen_task_ids(
        &self,
        filter: &Map<String, Value>,
        env: &era::Envelope,
    ) -> Result<Vec<String>, ErrorObject> {
        let ids: Vec<String> = match filter.get("taskIds") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => {
                return Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    "taskIds must be an array of task ids",
                ))
            }
        };
        let declared = super::context::has_capability(
            &env.client_capabilities,
            &["extensions", super::tasks::EXTENSION],
        );
        if !declared {
            return Err(super::tasks::missing_extension());
        }
        let max = self
            .inner
            .options
            .tasks
            .as_ref()
            .map_or(0, |t| t.max_listen_task_ids);
        if ids.len() > max {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("taskIds lists more than {max} ids"),
            ));
        }
        Ok(if self.inner.tasks.is_some() {
            ids
        } else {
            Vec::new()
        })
    }
}

/// A subscription carried in its connection's own message flow (stdio): each change it asked for
/// goes to the request's sink, tagged with the subscription id (SUB-03).
struct InFlow {
    listen: Listen,
    out: Arc<dyn super::Outbound>,
    /// Cancelled when changes from other workers may have been lost.
    gap: CancellationToken,
    /// The listen request's own token: once the client cancelled it, no change goes out, even
    /// before the request's task has run again to unregister this sink (CAN-01: a cancelled
    /// listen ends at once; under load that task may be polled only after later changes).
    ended: CancellationToken,
}

impl ChangeSink for InFlow {
    fn on_change(&self, change: ServerChange<'_>) -> usize {
        usize::from(
            !self.ended.is_cancelled()
                && self.listen.wants(change)
                && self.out.try_send(self.listen.notification(change)),
        )
    }

    fn on_gap(&self) {
        self.gap.cancel();
    }
}

/// `subscriptions/listen` on a stdio connection (SUB-01…05): the acknowledgement, then every
/// change asked for, interleaved with the connection's other messages and told apart by the
/// subscription id, until the client sends `notifications/cancelled` for the listen request
/// (then no response goes out, CAN-01) or the connection ends. When changes from other workers
/// may have been lost it ends with its result, so the client listens again and refetches.
pub(crate) async fn in_flow(
    ctx: &super::RequestContext,
    params: Option<&Map<String, Value>>,
) -> Result<super::Outcome, ErrorObject> {
    let server = &ctx.session().server;
    let listen = server.open_listen(ctx.id().clone(), params)?;
    let out = ctx.sink().clone();
    if !out.try_send(listen.acknowledgement()) {
        return Err(ErrorObject::new(
            codes::INTERNAL_ERROR,
            "the connection is not taking messages",
        ));
    }
    let gap = CancellationToken::new();
    let sink: Arc<dyn ChangeSink> = Arc::new(InFlow {
        listen,
        out,
        gap: gap.clone(),
        ended: ctx.cancellation_token().clone(),
    });
    server.add_change_sink(Arc::downgrade(&sink));
    tokio::select! {
        () = ctx.cancellation_token().cancelled() => {}
        () = gap.cancelled() => {}
    }
    drop(sink);
    Ok(super::Outcome::Complete(
        json!({"_meta": { KEY_SUBSCRIPTION_ID: ctx.id().to_value() }}),
    ))
}

impl Listen {
    /// The first message of the subscription (SUB-02).
    pub(crate) fn acknowledgement(&self) -> Vec<u8> {
        encode_notification(
            "notifications/subscriptions/acknowledged",
            Some(&json!({
                "notifications": self.honoured,
                "_meta": { KEY_SUBSCRIPTION_ID: self.id.to_value() },
            })),
        )
    }

    /// True when this subscription asked for `change` and it is honoured (SUB-01, SUB-04): a
    /// resource update matches a subscribed URI or one of its sub-resources.
    pub(crate) fn wants(&self, change: ServerChange<'_>) -> bool {
        match change {
            ServerChange::ToolsListChanged => self.tools,
            ServerChange::PromptsListChanged => self.prompts,
            ServerChange::ResourcesListChanged => self.resources,
            ServerChange::ResourceUpdated(uri) => self.uris.iter().any(|u| {
                uri == u
                    || uri
                        .strip_prefix(u.as_str())
                        .is_some_and(|rest| rest.starts_with('/') || u.ends_with('/'))
            }),
            ServerChange::Task(id, _) => self.task_ids.iter().any(|t| t == id),
        }
    }

    /// The notification announcing `change` on this subscription, tagged with its id (SUB-03).
    pub(crate) fn notification(&self, change: ServerChange<'_>) -> Vec<u8> {
        let meta = json!({ KEY_SUBSCRIPTION_ID: self.id.to_value() });
        let (method, params) = match change {
            ServerChange::ToolsListChanged => {
                ("notifications/tools/list_changed", json!({"_meta": meta}))
            }
            ServerChange::PromptsListChanged => {
                ("notifications/prompts/list_changed", json!({"_meta": meta}))
            }
            ServerChange::ResourcesListChanged => (
                "notifications/resources/list_changed",
                json!({"_meta": meta}),
            ),
            ServerChange::ResourceUpdated(uri) => (
                "notifications/resources/updated",
                json!({"uri": uri, "_meta": meta}),
            ),
            ServerChange::Task(_, state) => {
                let mut params = state.clone();
                if let Some(o) = params.as_object_mut() {
                    o.insert("_meta".into(), meta);
                }
                ("notifications/tasks", params)
            }
        };
        encode_notification(method, Some(&params))
    }

    /// The result that ends the subscription when the server shuts down (SUB-05).
    pub(crate) fn closing_result(&self) -> &[u8] {
        &self.closing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::envelope::{KEY_CLIENT_CAPABILITIES, KEY_PROTOCOL_VERSION};
    use crate::{handler_fn, HandlerError, Resource};

    fn server() -> Server {
        Server::builder("t", "1")
            .resource(
                Resource::new("file:///a", "a"),
                handler_fn(|_ctx, _p: Value| async { Ok::<_, HandlerError>(json!({})) }),
            )
            .options(|o| {
                o.resources_subscribe = true;
                o.resources_list_changed = false;
                o.tools_list_changed = true;
            })
            .build()
            .expect("server")
    }

    fn params(filter: Value) -> Map<String, Value> {
        let meta = json!({KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {}});
        json!({"_meta": meta, "notifications": filter})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn sub06_only_advertised_types_are_honoured() {
        let p = params(
            json!({"toolsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["file:///a"]}),
        );
        let l = server().open_listen(Id::Num(3), Some(&p)).expect("open");
        // No tools are registered, so no tools capability; resources.listChanged is off.
        assert!(!l.wants(ServerChange::ToolsListChanged));
        assert!(!l.wants(ServerChange::ResourcesListChanged));
        assert!(l.wants(ServerChange::ResourceUpdated("file:///a/b")));
        assert!(!l.wants(ServerChange::ResourceUpdated("file:///ab")));
        let ack: Value = serde_json::from_slice(&l.acknowledgement()).expect("json");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"resourceSubscriptions": ["file:///a"]})
        );
        assert_eq!(ack["params"]["_meta"][KEY_SUBSCRIPTION_ID], 3);
    }

    /// CAN-01: once the client cancelled a listen request, no change reaches it, even before
    /// the request's task has run again to unregister (under load it may be polled only after
    /// later changes). On a current-thread runtime the task cannot run between the two calls.
    #[tokio::test]
    async fn a_cancelled_listen_hears_no_change_before_its_task_runs_again() {
        let s = server();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
        let out: Arc<dyn super::super::Outbound> = Arc::new(tx);
        let session = s.new_session(super::super::SessionKind::Stdio, out.clone());
        let p = params(json!({"resourceSubscriptions": ["file:///a"]}));
        let id = Id::Str("l".into());
        let task =
            tokio::spawn(session.handle_request(id, "subscriptions/listen".into(), Some(p), out));
        let ack: Value = serde_json::from_slice(&rx.recv().await.expect("ack")).expect("json");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            s.notify_resource_updated("file:///a"),
            1,
            "heard while open"
        );
        assert!(rx.recv().await.is_some());
        let cancel = json!({"requestId": "l"});
        session.handle_notification("notifications/cancelled", cancel.as_object());
        assert_eq!(
            s.notify_resource_updated("file:///a"),
            0,
            "not after the cancel"
        );
        assert!(task.await.expect("task").is_none(), "no response (CAN-01)");
        assert!(rx.try_recv().is_err(), "nothing else was sent");
    }

    #[test]
    fn sub01_filter_is_required_and_envelope_checked_first() {
        let s = server();
        let mut p = params(json!(null));
        assert_eq!(
            s.open_listen(Id::Num(1), Some(&p)).err().map(|e| e.code),
            Some(codes::INVALID_PARAMS)
        );
        p.remove("_meta");
        let e = s.open_listen(Id::Num(1), Some(&p)).err().expect("refused");
        assert!(e.message.contains(KEY_PROTOCOL_VERSION), "{}", e.message);
    }

    /// `on_listen_resources` hears a stream's URIs when it opens and when it is dropped; a
    /// stream without URIs is not told.
    #[test]
    fn sub01_listen_resources_are_told_on_open_and_end() {
        use std::sync::{Arc, Mutex};
        type Heard = Vec<(Vec<String>, bool)>;
        let heard: Arc<Mutex<Heard>> = Arc::default();
        let h = heard.clone();
        let s = Server::builder("t", "1")
            .resource(
                Resource::new("file:///a", "a"),
                handler_fn(|_ctx, _p: Value| async { Ok::<_, HandlerError>(json!({})) }),
            )
            .options(|o| o.resources_subscribe = true)
            .on_listen_resources(move |uris, on| {
                h.lock().expect("lock").push((uris.to_vec(), on));
            })
            .build()
            .expect("server");
        let none = s
            .open_listen(Id::Num(1), Some(&params(json!({"toolsListChanged": true}))))
            .expect("open");
        drop(none);
        assert!(heard.lock().expect("lock").is_empty());
        let p = params(json!({"resourceSubscriptions": ["file:///a", "file:///b"]}));
        let l = s.open_listen(Id::Num(2), Some(&p)).expect("open");
        let uris = vec!["file:///a".to_owned(), "file:///b".to_owned()];
        assert_eq!(*heard.lock().expect("lock"), [(uris.clone(), true)]);
        drop(l);
        assert_eq!(
            *heard.lock().expect("lock"),
            [(uris.clone(), true), (uris, false)]
        );
    }
}
