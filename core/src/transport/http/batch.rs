//! JSON-RPC batches over legacy Streamable HTTP (REQUIREMENTS JR-06, LHTTP-01, LHTTP-04).
//!
//! Batches exist only in 2025-03-26, so they are served only on a session that negotiated that
//! version; anything else is 400 + -32600 for the whole array (as the stdio transport answers
//! it): an empty batch, a batch with a 2026-07-28 element (§0.2.5), one past
//! `Limits::max_batch_len`, a session on a later version, a modern-only or stateless server.
//! A batch of only notifications/responses is 202. Otherwise each element is answered on its own
//! (a bad element gets its own error): one JSON array when no element emitted anything before all
//! finished, else an SSE stream carrying related messages and each response as it completes.
//! As for single requests, disconnection is not cancellation (LHTTP-04).

use http::{HeaderMap, HeaderValue, StatusCode};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::body::{self, Resp};
use super::headers;
use super::legacy;
use super::respond::RequestSink;
use super::server::Shared;
use super::sessions::Entry;
use super::stream::Stream;
use crate::error::ErrorObject;
use crate::jsonrpc::{classify, encode_error, Id, Incoming};
use crate::server::{encode_reply, era, Reply};

fn refuse(msg: &str) -> Resp {
    body::rpc_error(
        StatusCode::BAD_REQUEST,
        None,
        &ErrorObject::invalid_request(msg),
    )
}

fn is_modern(item: &Value) -> bool {
    item.get("params")
        .and_then(Value::as_object)
        .is_some_and(|p| era::has_claim(Some(p)))
}

/// A POSTed JSON array.
pub(crate) async fn batch(
    s: &Arc<Shared>,
    h: &Arc<HeaderMap>,
    items: Vec<Value>,
    principal: Option<&crate::auth::Principal>,
) -> Resp {
    if items.is_empty() {
        return refuse("empty batch");
    }
    if items.iter().any(is_modern) {
        return refuse("a batch must not contain 2026-07-28 requests");
    }
    if !s.opts.legacy || s.opts.stateless_legacy {
        return refuse("JSON-RPC batches are only served on 2025-03-26 sessions");
    }
    let max = s.server.limits().max_batch_len;
    if items.len() > max {
        return refuse(&format!("batch exceeds {max} messages"));
    }
    let entry = match legacy::lookup(s, h, None, principal).await {
        Ok(e) => e,
        Err(r) => return *r,
    };
    if !entry.session.allows_batch() {
        return refuse("batches are not supported by the negotiated protocol version");
    }
    let has_request = items
        .iter()
        .any(|i| i.get("method").is_some() && i.get("id").is_some());
    if has_request && !headers::accepts_post_answer(h) {
        return body::text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow application/json and text/event-stream",
        );
    }
    let session = entry.session.clone();
    let (sink, rx, close) =
        RequestSink::closable(s.server.limits().max_outbound_queue, Some(h.clone()));
    let mut ready = Vec::new();
    let mut running = Running::default();
    for item in items {
        match classify(item) {
            Incoming::Request { id, method, params } => {
                match session.start_request(id.clone(), method, params, sink.clone()) {
                    Err(reply) => ready.push(encode_reply(&id, &reply)),
                    Ok(fut) => {
                        running.ids.push(id.clone());
                        let claim = super::relay::claim_request(&entry, &id);
                        // As for a single request (see `replica`), what an element changed
                        // (log level, subscriptions) is written back before its answer goes.
                        let (s2, e2) = (s.clone(), entry.clone());
                        running.set.spawn(async move {
                            let _claim = claim;
                            let reply = fut.await;
                            super::replica::sync(&s2, &e2).await;
                            (id, reply)
                        });
                    }
                }
            }
            Incoming::Notification { method, params } => {
                entry.notification(&method, params.as_ref());
                if crate::server::is_cancel(&method) {
                    // Logged by the store when it fails; cancellation is advisory (CAN-01).
                    let _ = super::relay::route_cancel(s, &entry, params.as_ref()).await;
                }
            }
            Incoming::Response { id, outcome } => {
                session.deliver_response(&id, outcome);
            }
            Incoming::Invalid { id, error } => ready.push(encode_error(id.as_ref(), &error)),
        }
    }
    drop(sink);
    // A notification in the batch (`notifications/initialized`) is shared before the 202.
    super::replica::sync(s, &entry).await;
    if ready.is_empty() && running.set.is_empty() {
        return body::status(StatusCode::ACCEPTED);
    }
    let (tx, answer) = oneshot::channel();
    let task = Task {
        shared: s.clone(),
        entry,
        rx,
        close,
    };
    s.tracker.spawn(task.run(ready, running, tx));
    answer
        .await
        .unwrap_or_else(|_| body::status(StatusCode::SERVICE_UNAVAILABLE))
}

#[derive(Default)]
struct Running {
    ids: Vec<Id>,
    set: JoinSet<(Id, Option<Reply>)>,
}

impl Running {
    /// The next finished element's encoded response (`Some(None)`: one ended without an answer).
    async fn next(&mut self) -> Option<Option<Vec<u8>>> {
        let joined = self.set.join_next().await?;
        Some(match joined {
            Ok((id, Some(reply))) => Some(encode_reply(&id, &reply)),
            Ok((_, None)) => None,
            Err(e) => {
                tracing::error!(error = %e, "a batch element's task failed");
                None
            }
        })
    }

    /// Hard stop: cancel what still runs, bounded by the server's shutdown grace.
    async fn cancel(&mut self, entry: &Entry) {
        for id in &self.ids {
            entry.session.cancel_request(id);
        }
        let grace = entry.session.server.limits().shutdown_grace;
        let _ = tokio::time::timeout(grace, async {
            while self.set.join_next().await.is_some() {}
        })
        .await;
    }
}

struct Task {
    shared: Arc<Shared>,
    entry: Arc<Entry>,
    rx: mpsc::Receiver<Vec<u8>>,
    close: tokio_util::sync::CancellationToken,
}

/// How phase 1 of a batch ended.
enum Phase1 {
    /// The batch is answered with this: the JSON array, 202 when no element has a response, or
    /// 503 on a hard stop.
    Answered(Resp),
    /// The answer must be a stream: the related message that came first (if any), and whether
    /// the client went away.
    Stream(Option<Vec<u8>>, bool),
}

impl Task {
    async fn run(
        mut self,
        mut done: Vec<Vec<u8>>,
        mut running: Running,
        mut answer: oneshot::Sender<Resp>,
    ) {
        let stop = self.shared.hard_stop.clone();
        // Phase 1: all answers before any related message → one JSON array.
        let phase1 = self
            .collect(&mut done, &mut running, &mut answer, &stop)
            .await;
        let (first, gone) = match phase1 {
            Phase1::Answered(resp) => {
                let _ = answer.send(resp);
                return;
            }
            Phase1::Stream(first, gone) => (first, gone),
        };
        // Phase 2: a resumable SSE stream with every message and response as its own event.
        let (stream, detached) = self.open_sse(first.as_deref(), &done, gone, answer);
        self.pump_sse(&stream, running, detached, &stop).await;
    }

    /// Phase 1: wait for the elements' answers until all are in or something calls for a
    /// stream (a related message, the handler closing the stream, a keep-alive interval, the
    /// client leaving).
    async fn collect(
        &mut self,
        done: &mut Vec<Vec<u8>>,
        running: &mut Running,
        answer: &mut oneshot::Sender<Resp>,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Phase1 {
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => {
                    running.cancel(&self.entry).await;
                    return Phase1::Answered(body::status(StatusCode::SERVICE_UNAVAILABLE));
                }
                next = running.next() => match next {
                    Some(frame) => done.extend(frame),
                    None => match self.rx.try_recv() {
                        Ok(m) => return Phase1::Stream(Some(m), false),
                        Err(_) => {
                            let resp = if done.is_empty() {
                                body::status(StatusCode::ACCEPTED)
                            } else {
                                body::json(StatusCode::OK, join_array(done))
                            };
                            return Phase1::Answered(resp);
                        }
                    },
                },
                Some(m) = self.rx.recv() => return Phase1::Stream(Some(m), false),
                () = self.close.cancelled() => return Phase1::Stream(None, false),
                () = super::respond::tick(self.shared.opts.keepalive) => {
                    return Phase1::Stream(None, false)
                }
                () = answer.closed() => return Phase1::Stream(None, true),
            }
        }
    }

    /// Open the session's resumable SSE stream with `first` and the answers so far, and hand its
    /// head to the client (unless it is `gone`). Returns the stream and whether it is detached
    /// (nobody reads it now).
    fn open_sse(
        &self,
        first: Option<&[u8]>,
        done: &[Vec<u8>],
        gone: bool,
        answer: oneshot::Sender<Resp>,
    ) -> (Arc<Stream>, bool) {
        let (stream, brx) = self.entry.open_stream(
            self.shared.opts.replay_buffer,
            self.shared.opts.sse_retry_ms,
        );
        for frame in first.into_iter().chain(done.iter().map(Vec::as_slice)) {
            stream.push(frame);
        }
        let mut r = body::sse(brx);
        if let Ok(v) = HeaderValue::from_str(self.entry.sid()) {
            r.headers_mut().insert(headers::SESSION_ID, v);
        }
        let delivered = if gone {
            drop(r);
            false
        } else {
            answer.send(r).is_ok()
        };
        if !delivered {
            stream.detach();
        }
        (stream, !delivered)
    }

    /// Phase 2: carry related messages and the remaining answers on `stream` until every
    /// element has finished (or a hard stop), then end it.
    async fn pump_sse(
        &mut self,
        stream: &Stream,
        mut running: Running,
        mut detached: bool,
        stop: &tokio_util::sync::CancellationToken,
    ) {
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => {
                    running.cancel(&self.entry).await;
                    break;
                }
                () = self.close.cancelled(), if !detached => {
                    stream.detach();
                    detached = true;
                }
                next = running.next() => match next {
                    Some(Some(frame)) => { stream.push(&frame); }
                    Some(None) => {}
                    None => break,
                },
                () = super::respond::tick(self.shared.opts.keepalive) => { stream.ping(None); }
                Some(m) = self.rx.recv() => { stream.push(&m); }
            }
        }
        while let Ok(m) = self.rx.try_recv() {
            stream.push(&m);
        }
        stream.finish();
    }
}

/// `[a,b,…]` from encoded messages.
fn join_array(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum::<usize>() + parts.len() + 1);
    out.push(b'[');
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(p);
    }
    out.push(b']');
    out
}
