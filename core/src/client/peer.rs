//! The client's half of a connection: request ids, the pending map, timeouts, cancellation,
//! progress routing and dispatch of everything the server sends (REQUIREMENTS JR-01…05, CAN-01,
//! CAN-04, LC-08, PROG-01, SUB-03).
//!
//! First writer wins between the response, the timeout and the caller's cancellation: the
//! pending entry is removed by whoever gets there first, so a late response finds nothing and is
//! ignored. A closed transport fails every pending call at once.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::cache::Cache;
use super::callbacks::Callbacks;
use super::error::ClientError;
use super::listen_legacy::LegacyFilter;
use super::options::ProgressFn;
use super::transport::{ClientTransport, Inbound, OutMsg, WireState};
use crate::jsonrpc::{classify, Id, Incoming};
use crate::protocol::envelope::KEY_SUBSCRIPTION_ID;

type PendingTx = oneshot::Sender<Result<Value, ClientError>>;

/// `error.type` of a request's outcome (the JSON-RPC code, a tool error, else the failure's
/// kind: `timeout`, …) and its JSON-RPC code.
fn outcome(r: &Result<Value, ClientError>) -> (Option<String>, Option<i64>) {
    match r {
        Ok(v) => (crate::telemetry::span::result_error(v), None),
        Err(e) => (
            Some(
                e.rpc_code()
                    .map_or_else(|| e.kind().to_string(), |c| c.to_string()),
            ),
            e.rpc_code(),
        ),
    }
}

/// Run a user callback; a panic in it is logged and never takes the connection down.
fn guard(what: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        tracing::error!("a {what} panicked; ignoring it");
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How one request is sent and awaited.
pub(crate) struct RequestSpec<'a> {
    pub timeout: Option<Duration>,
    pub cancel: Option<&'a CancellationToken>,
    pub on_progress: Option<ProgressFn>,
    /// Send `notifications/cancelled` when the wait ends early (never for the probe: a legacy
    /// server must see nothing but `initialize` first, LC-03).
    pub notify_cancel: bool,
}

pub(crate) struct Peer {
    pub transport: Arc<dyn ClientTransport>,
    pub callbacks: Callbacks,
    pub cache: Option<Cache>,
    pending: Mutex<HashMap<Id, PendingTx>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    listens: Mutex<HashMap<Id, mpsc::Sender<Value>>>,
    legacy_listens: Mutex<HashMap<Id, (LegacyFilter, mpsc::Sender<Value>)>>,
    next_id: AtomicI64,
    closed: Mutex<Option<String>>,
    closed_token: CancellationToken,
    pub wire: Mutex<WireState>,
    /// `mcp.client.operation.duration` and the rest (`ClientOptions::metrics`).
    pub metrics: Arc<crate::telemetry::Metrics>,
    opened: std::time::Instant,
}

impl Peer {
    pub fn new(
        transport: Arc<dyn ClientTransport>,
        callbacks: Callbacks,
        cache: Option<Cache>,
        metrics: crate::telemetry::Metrics,
    ) -> Arc<Self> {
        let metrics = Arc::new(metrics);
        crate::telemetry::register_metrics(&metrics);
        Arc::new(Self {
            transport,
            callbacks,
            cache,
            pending: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            listens: Mutex::new(HashMap::new()),
            legacy_listens: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: Mutex::new(None),
            closed_token: CancellationToken::new(),
            wire: Mutex::new(WireState::default()),
            metrics,
            opened: std::time::Instant::now(),
        })
    }

    /// Drain the transport's inbound channel until it closes.
    pub fn start(self: &Arc<Self>, mut rx: mpsc::Receiver<Inbound>) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                let Some(peer) = weak.upgrade() else { return };
                match msg {
                    Inbound::Message(v) => peer.on_message(v),
                    Inbound::RequestFailed(id, e) => {
                        if let Some(tx) = lock(&peer.pending).remove(&id) {
                            let _ = tx.send(Err(e));
                        }
                    }
                    Inbound::Closed(reason) => {
                        peer.mark_closed(&reason);
                        let t = peer.transport.clone();
                        drop(peer);
                        t.close().await;
                        return;
                    }
                }
            }
        });
    }

    pub fn next_id(&self) -> Id {
        Id::Num(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    pub fn is_closed(&self) -> bool {
        lock(&self.closed).is_some()
    }

    pub fn closed_reason(&self) -> Option<String> {
        lock(&self.closed).clone()
    }

    pub fn mark_closed(&self, reason: &str) {
        let first = {
            let mut c = lock(&self.closed);
            let first = c.is_none();
            if first {
                *c = Some(reason.to_owned());
            }
            first
        };
        if first {
            self.metrics
                .session_ended(self.transport_label(), self.opened.elapsed());
        }
        self.closed_token.cancel();
        let pending: Vec<PendingTx> = lock(&self.pending).drain().map(|(_, tx)| tx).collect();
        for tx in pending {
            let _ = tx.send(Err(ClientError::Closed(reason.to_owned())));
        }
        lock(&self.listens).clear();
        lock(&self.legacy_listens).clear();
    }

    /// Send a notification (never carries the modern envelope).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        if let Some(r) = self.closed_reason() {
            return Err(ClientError::Closed(r));
        }
        let span = crate::telemetry::span::client_notification(method, self.transport_label());
        let sent = self.transport.send(OutMsg::Notification {
            method: method.to_owned(),
            params,
        });
        tracing::Instrument::instrument(sent, span).await
    }

    /// `network.transport` of this connection: `tcp` for HTTP, `pipe` for stdio and in-process.
    fn transport_label(&self) -> &'static str {
        if self.transport.is_http() {
            "tcp"
        } else {
            "pipe"
        }
    }

    /// Send a request and wait for its outcome.
    pub async fn request(
        &self,
        id: Id,
        method: &str,
        mut params: Map<String, Value>,
        spec: RequestSpec<'_>,
    ) -> Result<Value, ClientError> {
        if let Some(r) = self.closed_reason() {
            return Err(ClientError::Closed(r));
        }
        if spec.cancel.is_some_and(CancellationToken::is_cancelled) {
            return Err(ClientError::Cancelled);
        }
        let progress_key = spec.on_progress.clone().map(|f| {
            let token = id.to_value();
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.insert("progressToken".into(), token.clone());
            }
            let key = token.to_string();
            lock(&self.progress).insert(key.clone(), f);
            key
        });
        let measured = self.metrics.on().then(|| {
            let target = crate::telemetry::span::target(method, Some(&params));
            (target.map(str::to_owned), std::time::Instant::now())
        });
        let _in_flight = self.metrics.start();
        let traced = crate::telemetry::span::client_request(
            method,
            &id,
            &params,
            self.transport_label(),
            &|| lock(&self.wire).protocol_version.clone(),
        );
        if let Some((_, tc)) = &traced {
            // The server's span becomes a child of this client span (trace context in
            // `params._meta`, as the conventions carry it).
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.remove(crate::telemetry::TRACEPARENT);
                m.remove(crate::telemetry::TRACESTATE);
                tc.inject(m);
            }
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        let out = OutMsg::Request {
            id: id.clone(),
            method: method.to_owned(),
            params: Some(Value::Object(params)),
        };
        let result = match &traced {
            Some((span, _)) => {
                let waited = self.wait(&id, out, rx, &spec);
                let r = tracing::Instrument::instrument(waited, span.clone()).await;
                let (error, code) = outcome(&r);
                crate::telemetry::span::finish(span, error.as_deref(), code);
                r
            }
            None => self.wait(&id, out, rx, &spec).await,
        };
        if let Some((target, started)) = measured {
            let (error, _) = outcome(&result);
            let took = started.elapsed();
            self.metrics
                .operation(method, target.as_deref(), error.as_deref(), took);
        }
        if let Some(k) = progress_key {
            lock(&self.progress).remove(&k);
        }
        result
    }

    async fn wait(
        &self,
        id: &Id,
        out: OutMsg,
        rx: oneshot::Receiver<Result<Value, ClientError>>,
        spec: &RequestSpec<'_>,
    ) -> Result<Value, ClientError> {
        let never = CancellationToken::new();
        let cancel = spec.cancel.unwrap_or(&never);
        let timeout = async {
            match spec.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let send = self.transport.send(out);
        // The send itself can block (a full pipe, an HTTP round trip): it races the same
        // timeout and cancellation as the wait for the answer.
        let outcome = async {
            send.await?;
            match rx.await {
                Ok(r) => r,
                Err(_) => Err(ClientError::Closed(
                    self.closed_reason()
                        .unwrap_or_else(|| "connection closed".into()),
                )),
            }
        };
        let early = tokio::select! {
            r = outcome => {
                lock(&self.pending).remove(id);
                return r;
            }
            () = timeout => ClientError::Timeout,
            () = cancel.cancelled() => ClientError::Cancelled,
        };
        // Timed out or cancelled: first writer wins. If the response already won, use it.
        if lock(&self.pending).remove(id).is_some() {
            let state = lock(&self.wire).clone();
            // Legacy: tell the server first (a dropped stream alone is not a cancellation there),
            // then stop reading. Modern HTTP: closing the stream is the cancellation (HTTP-08).
            if spec.notify_cancel && self.transport.cancel_by_notification(&state) {
                let reason = match early {
                    ClientError::Timeout => "timeout",
                    _ => "cancelled by the caller",
                };
                if let Err(e) = self
                    .notify(
                        "notifications/cancelled",
                        Some(json!({"requestId": id.to_value(), "reason": reason})),
                    )
                    .await
                {
                    tracing::debug!(error = %e, "could not send notifications/cancelled");
                }
            }
            self.transport.abort(id);
        }
        Err(early)
    }

    /// Route a listen stream's notifications to `tx` (SUB-03).
    pub fn add_listen(&self, id: Id, tx: mpsc::Sender<Value>) {
        lock(&self.listens).insert(id, tx);
    }

    /// Route a legacy session's notifications that `filter` accepts to `tx` (SUB-07).
    pub fn add_legacy_listen(&self, id: Id, filter: LegacyFilter, tx: mpsc::Sender<Value>) {
        lock(&self.legacy_listens).insert(id, (filter, tx));
    }

    pub fn remove_listen(&self, id: &Id) {
        lock(&self.listens).remove(id);
        lock(&self.legacy_listens).remove(id);
    }

    /// Give a legacy session's notification to the legacy subscriptions that take it.
    fn route_legacy(&self, method: &str, params: &Value) {
        let subs = lock(&self.legacy_listens);
        for (id, (filter, tx)) in subs.iter() {
            if filter.accepts(method, params) {
                let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
                if tx.try_send(msg).is_err() {
                    tracing::warn!(%id, "listen queue full; dropping a notification");
                }
            }
        }
    }

    fn on_message(self: &Arc<Self>, v: Value) {
        match classify(v) {
            Incoming::Response { id, outcome } => {
                let tx = lock(&self.pending).remove(&id);
                match tx {
                    Some(tx) => {
                        let _ = tx.send(outcome.map_err(|e| {
                            // The server stopped under this request: the connection is going.
                            if e.is_server_shutdown() {
                                ClientError::Closed(e.message)
                            } else {
                                ClientError::Rpc(e)
                            }
                        }));
                    }
                    None => tracing::debug!(%id, "ignoring a late or unknown response"),
                }
            }
            Incoming::Request { id, method, params } => self.on_request(id, method, params),
            Incoming::Notification { method, params } => {
                self.on_notification(&method, params.map(Value::Object))
            }
            Incoming::Invalid { error, .. } => {
                tracing::warn!(error = %error, "skipping an invalid message from the server");
            }
        }
    }

    fn on_request(self: &Arc<Self>, id: Id, method: String, params: Option<Map<String, Value>>) {
        let state = lock(&self.wire).clone();
        if state.modern {
            // JR-05: servers never send requests on the modern era.
            tracing::warn!(method, "ignoring a server request on a modern connection");
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let params = Value::Object(params.unwrap_or_default());
            let result = this.callbacks.answer(&method, params).await;
            if let Err(e) = this.transport.send(OutMsg::Response { id, result }).await {
                tracing::debug!(error = %e, "could not answer a server request");
            }
        });
    }

    fn on_notification(&self, method: &str, params: Option<Value>) {
        let p = params.unwrap_or_else(|| json!({}));
        if let Some(sub) = p
            .pointer("/_meta")
            .and_then(|m| m.get(KEY_SUBSCRIPTION_ID))
            .and_then(Id::from_value)
        {
            let tx = lock(&self.listens).get(&sub).cloned();
            if let Some(tx) = tx {
                let mut msg = json!({"method": method, "params": p.clone()});
                if let Some(o) = msg.as_object_mut() {
                    o.insert("jsonrpc".into(), json!("2.0"));
                }
                if tx.try_send(msg).is_err() {
                    tracing::warn!(%sub, "listen queue full; dropping a notification");
                }
                if let Some(c) = &self.cache {
                    c.invalidate(method, &p);
                }
                return;
            }
        }
        if method == "notifications/progress" {
            let key = p.get("progressToken").map(Value::to_string);
            let f = key.and_then(|k| lock(&self.progress).get(&k).cloned());
            if let (Some(f), Some(progress)) = (f, p.get("progress").and_then(Value::as_f64)) {
                let total = p.get("total").and_then(Value::as_f64);
                let msg = p.get("message").and_then(Value::as_str).map(str::to_owned);
                guard("progress callback", || f(progress, total, msg));
            }
            return;
        }
        if method == "notifications/cancelled" {
            // CAN-02: a server ends a listen stream this way on stdio.
            if let Some(id) = p.get("requestId").and_then(Id::from_value) {
                lock(&self.listens).remove(&id);
            }
        }
        if let Some(c) = &self.cache {
            c.invalidate(method, &p);
        }
        self.route_legacy(method, &p);
        for cb in &self.callbacks.notifications {
            guard("notification callback", || cb(method, &p));
        }
    }
}
