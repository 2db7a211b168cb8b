//! `subscriptions/listen` over modern HTTP (REQUIREMENTS SUB-01…06, HTTP-06, CAN-02).
//!
//! The `notifications` filter is required (400 + -32602). The first event is
//! `notifications/subscriptions/acknowledged` with the honoured subset: only types whose
//! capability flags promise delivery. Then only requested types arrive, each carrying
//! `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen request id;
//! `resources/updated` only for subscribed URIs (or their sub-resources). A keep-alive comment is
//! sent periodically; graceful shutdown sends the listen result before closing. Streams are
//! capped (503 past the cap), and fan-out never holds a lock while writing: each stream has its
//! own bounded queue and a full queue drops only for it.
//!
//! Subscription ids are the client's JSON-RPC ids, unique only among that client's requests
//! (JR-01): two unrelated clients both listening with id 1 is normal. Over HTTP the subscription
//! is its response stream: the client tells notifications apart by the stream they arrive on,
//! ends the subscription by closing it (SUB-05), and a modern `notifications/cancelled` POST
//! addresses nothing (HTTP-04). So the hub keys each stream by a key the server mints, never by
//! the client's id, and nothing but the holder of a stream can end or observe it.

use bytes::Bytes;
use http::StatusCode;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;

use super::body::{self, Resp};
use super::server::Shared;
use super::sse;
use crate::error::{codes, ErrorObject};
use crate::jsonrpc::{encode_notification, encode_result, Id};
use crate::server::era::{KEY_SERVER_INFO, KEY_SUBSCRIPTION_ID};
use crate::server::{lock, ChangeSink, ServerChange};

/// Events queued per listen stream before further changes are dropped for that stream.
const LISTEN_QUEUE: usize = 256;

struct Sub {
    /// Server-minted; the client's `id` may repeat across clients.
    key: u64,
    id: Id,
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    tx: mpsc::Sender<Bytes>,
}

impl Sub {
    fn wants(&self, c: ServerChange<'_>) -> bool {
        match c {
            ServerChange::ToolsListChanged => self.tools,
            ServerChange::PromptsListChanged => self.prompts,
            ServerChange::ResourcesListChanged => self.resources,
            ServerChange::ResourceUpdated(uri) => self.uris.iter().any(|u| {
                uri == u
                    || uri
                        .strip_prefix(u.as_str())
                        .is_some_and(|rest| rest.starts_with('/') || u.ends_with('/'))
            }),
        }
    }

    fn frame(&self, c: ServerChange<'_>) -> Bytes {
        let meta = json!({ KEY_SUBSCRIPTION_ID: self.id.to_value() });
        let (method, params) = match c {
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
        };
        sse::event(None, &encode_notification(method, Some(&params)))
    }
}

/// All open listen streams, by server-minted key.
#[derive(Default)]
pub(crate) struct Hub {
    subs: Mutex<HashMap<u64, Arc<Sub>>>,
    next_key: AtomicU64,
}

impl Hub {
    pub(crate) fn len(&self) -> usize {
        lock(&self.subs).len()
    }

    fn mint_key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }

    /// Register `sub` unless `max` streams are open (`false`: refused).
    fn insert(&self, sub: Arc<Sub>, max: usize) -> bool {
        let mut m = lock(&self.subs);
        if m.len() >= max {
            return false;
        }
        m.insert(sub.key, sub);
        true
    }

    fn remove(&self, sub: &Sub) {
        lock(&self.subs).remove(&sub.key);
    }
}

impl ChangeSink for Hub {
    fn on_change(&self, change: ServerChange<'_>) -> usize {
        let subs: Vec<Arc<Sub>> = lock(&self.subs).values().cloned().collect();
        subs.iter()
            .filter(|s| s.wants(change))
            .filter(|s| s.tx.try_send(s.frame(change)).is_ok())
            .count()
    }
}

fn flag(caps: &Value, cap: &str, f: &str) -> bool {
    caps.get(cap).and_then(|c| c.get(f)) == Some(&Value::Bool(true))
}

fn bad_params(id: &Id, msg: &str) -> Resp {
    body::rpc_error(
        StatusCode::BAD_REQUEST,
        Some(id),
        &ErrorObject::new(codes::INVALID_PARAMS, msg.to_owned()),
    )
}

/// What a listen request asked for, reduced to what this server honours (SUB-01, SUB-06).
struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    /// The acknowledged subset (SUB-02).
    honoured: Map<String, Value>,
}

/// Read the `notifications` filter; `Err` says why it is invalid (400 + -32602).
fn filter(shared: &Shared, params: Option<&Map<String, Value>>) -> Result<Filter, &'static str> {
    let Some(filter) = params
        .and_then(|p| p.get("notifications"))
        .and_then(Value::as_object)
    else {
        return Err("subscriptions/listen requires a notifications filter object");
    };
    let want = |k: &str| filter.get(k) == Some(&Value::Bool(true));
    let uris: Vec<String> = match filter.get("resourceSubscriptions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => return Err("resourceSubscriptions must be an array of URIs"),
    };
    let caps = &shared.server.inner.capabilities;
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
    Ok(Filter {
        tools,
        prompts,
        resources,
        uris,
        honoured,
    })
}

/// Open a listen stream (the envelope and headers are already checked).
pub(crate) fn open(shared: &Arc<Shared>, id: Id, params: Option<&Map<String, Value>>) -> Resp {
    let f = match filter(shared, params) {
        Ok(f) => f,
        Err(why) => return bad_params(&id, why),
    };
    let (tx, rx) = mpsc::channel(LISTEN_QUEUE);
    let ack = encode_notification(
        "notifications/subscriptions/acknowledged",
        Some(&json!({
            "notifications": f.honoured,
            "_meta": { KEY_SUBSCRIPTION_ID: id.to_value() },
        })),
    );
    let _ = tx.try_send(sse::event(None, &ack));
    let sub = Arc::new(Sub {
        key: shared.listens.mint_key(),
        id,
        tools: f.tools,
        prompts: f.prompts,
        resources: f.resources,
        uris: f.uris,
        tx,
    });
    if !shared
        .listens
        .insert(sub.clone(), shared.opts.max_listen_streams)
    {
        return body::rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&sub.id),
            &ErrorObject::new(codes::INTERNAL_ERROR, "Too many listen streams"),
        );
    }
    spawn_stream(shared, sub);
    body::sse(rx)
}

/// Keep the stream alive until the client closes it, or send the result on shutdown (SUB-05);
/// then free its slot.
fn spawn_stream(shared: &Arc<Shared>, sub: Arc<Sub>) {
    let hub: Weak<Hub> = Arc::downgrade(&shared.listens);
    let keepalive = shared.opts.keepalive;
    let stopping = shared.stopping.clone();
    let server_info = shared.server.inner.options.server_info.clone();
    shared.tracker.spawn(async move {
        let tx = &sub.tx;
        let result = encode_result(
            &sub.id,
            &json!({
                "resultType": "complete",
                "_meta": { KEY_SUBSCRIPTION_ID: sub.id.to_value(), KEY_SERVER_INFO: server_info },
            }),
        );
        loop {
            let tick = async {
                match keepalive {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tx.closed() => break,
                () = stopping.cancelled() => {
                    // SUB-05: graceful shutdown sends the result, then closes.
                    let _ = tokio::time::timeout(
                        std::time::Duration::from_secs(1),
                        tx.send(sse::event(None, &result)),
                    )
                    .await;
                    break;
                }
                () = tick => {
                    // A dead peer makes this fail once the socket errors, freeing the slot.
                    if tx.try_send(sse::keepalive()).is_err() && tx.is_closed() {
                        break;
                    }
                }
            }
        }
        if let Some(h) = hub.upgrade() {
            h.remove(&sub);
        }
    });
}
