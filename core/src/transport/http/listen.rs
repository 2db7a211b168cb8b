//! The `subscriptions/listen` stream over modern HTTP (REQUIREMENTS HTTP-06, CAN-02; the
//! subscription's rules, SUB-01…06, are [`crate::server::listen`]'s).
//!
//! The subscription's messages travel as SSE events on the listen request's response. A
//! keep-alive comment is sent periodically; graceful shutdown sends the closing result before
//! closing. Streams are capped (503 past the cap), and fan-out never holds a lock while writing:
//! each stream has its own bounded queue and a full queue drops only for it.
//!
//! Subscription ids are the client's JSON-RPC ids, unique only among that client's requests
//! (JR-01): two unrelated clients both listening with id 1 is normal. Over HTTP the subscription
//! is its response stream: the client tells notifications apart by the stream they arrive on,
//! ends the subscription by closing it (SUB-05), and a modern `notifications/cancelled` POST
//! addresses nothing (HTTP-04). So the hub keys each stream by a key the server mints, never by
//! the client's id, and nothing but the holder of a stream can end or observe it.

use bytes::Bytes;
use http::StatusCode;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::mpsc;

use super::body::{self, Resp};
use super::server::Shared;
use super::sse;
use crate::error::{codes, ErrorObject};
use crate::jsonrpc::Id;
use crate::server::listen::Listen;
use crate::server::{lock, ChangeSink, ServerChange};

/// Events queued per listen stream before further changes are dropped for that stream.
const LISTEN_QUEUE: usize = 256;

struct Sub {
    /// Server-minted; the client's `id` may repeat across clients.
    key: u64,
    listen: Listen,
    tx: mpsc::Sender<Bytes>,
    /// Cancelled when changes from other workers may have been lost: the stream ends so the
    /// client listens again and refetches (at least once, never a silent miss).
    gap: tokio_util::sync::CancellationToken,
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
            .filter(|s| s.listen.wants(change))
            .filter(|s| {
                let frame = sse::event(None, &s.listen.notification(change));
                s.tx.try_send(frame).is_ok()
            })
            .count()
    }

    fn on_gap(&self) {
        for s in lock(&self.subs).values() {
            s.gap.cancel();
        }
    }
}

/// Open a listen stream (the version and method headers are already checked; the server
/// checks the envelope and the filter).
pub(crate) async fn open(
    shared: &Arc<Shared>,
    id: Id,
    params: Option<&Map<String, Value>>,
) -> Resp {
    shared.server.start_bus();
    if !shared.server.wait_backplane().await {
        // A stream that cannot hear the other workers would miss changes silently; a brief
        // reconnect was waited for, a longer outage is refused.
        return body::retry_after(body::rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&id),
            &crate::backplane::unavailable(),
        ));
    }
    // One span for the whole stream (it ends when the stream does), under the HTTP span.
    let span = crate::Server::listen_span(&id, params, "tcp");
    let listen = match shared.server.open_listen(id.clone(), params) {
        Ok(l) => l,
        Err(e) => {
            let code = e.code;
            crate::telemetry::span::finish(&span, Some(&code.to_string()), Some(code));
            return body::rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e);
        }
    };
    let (tx, rx) = mpsc::channel(LISTEN_QUEUE);
    let _ = tx.try_send(sse::event(None, &listen.acknowledgement()));
    let sub = Arc::new(Sub {
        key: shared.listens.mint_key(),
        listen,
        tx,
        gap: tokio_util::sync::CancellationToken::new(),
    });
    if !shared
        .listens
        .insert(sub.clone(), shared.opts.max_listen_streams)
    {
        return body::rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            Some(&id),
            &ErrorObject::new(codes::INTERNAL_ERROR, "Too many listen streams"),
        );
    }
    spawn_stream(shared, sub, span);
    body::sse(rx)
}

/// Keep the stream alive until the client closes it, or send the result on shutdown (SUB-05);
/// then free its slot.
fn spawn_stream(shared: &Arc<Shared>, sub: Arc<Sub>, span: tracing::Span) {
    let hub: Weak<Hub> = Arc::downgrade(&shared.listens);
    let keepalive = shared.opts.keepalive;
    let stopping = shared.stopping.clone();
    let stream = async move {
        let tx = &sub.tx;
        loop {
            let tick = async {
                match keepalive {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tx.closed() => break,
                () = sub.gap.cancelled() => break,
                () = stopping.cancelled() => {
                    // SUB-05: graceful shutdown sends the result, then closes.
                    let _ = tokio::time::timeout(
                        std::time::Duration::from_secs(1),
                        tx.send(sse::event(None, sub.listen.closing_result())),
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
    };
    shared
        .tracker
        .spawn(tracing::Instrument::instrument(stream, span));
}
