//! The `subscriptions/listen` client (REQUIREMENTS SUB-01…05, CAN-02).
//!
//! A listen request stays open: the server first sends `notifications/subscriptions/acknowledged`
//! (the honoured subset), then the subscribed notifications, all tagged with the listen request's
//! id, which the peer uses to demultiplex. Closing sends `notifications/cancelled` (stdio) or
//! closes the request stream (HTTP).

use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::peer::{Peer, RequestSpec};
use super::{CallOptions, Client, ClientError};
use crate::jsonrpc::Id;

/// Queue of notifications per subscription.
pub(crate) const LISTEN_QUEUE: usize = 256;
/// How long to wait for the acknowledgement when no request timeout is set.
const ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// An open subscription.
pub struct Subscription {
    id: Id,
    honored: Value,
    rx: mpsc::Receiver<Value>,
    cancel: CancellationToken,
    task: Option<JoinHandle<Result<Value, ClientError>>>,
    /// Legacy sessions (SUB-07): the URIs this subscription `resources/subscribe`d.
    legacy: Option<Vec<String>>,
    client: Client,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("honored", &self.honored)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    pub(crate) fn legacy(
        id: Id,
        honored: Value,
        rx: mpsc::Receiver<Value>,
        subscribed: Vec<String>,
        client: Client,
    ) -> Self {
        Self {
            id,
            honored,
            rx,
            cancel: CancellationToken::new(),
            task: None,
            legacy: Some(subscribed),
            client,
        }
    }

    /// The subscription id (= the listen request id; a local id on a legacy session).
    pub fn id(&self) -> &Id {
        &self.id
    }
    /// The notification types the server honoured (the acknowledgement's `notifications`).
    pub fn honored(&self) -> &Value {
        &self.honored
    }
    /// The next notification (`{"jsonrpc","method","params"}`), or `None` once the stream ended.
    pub async fn next(&mut self) -> Option<Value> {
        self.rx.recv().await
    }
    /// Close the subscription (legacy: `resources/unsubscribe` what it subscribed).
    pub async fn close(mut self) {
        self.cancel.cancel();
        self.client.inner.peer.remove_listen(&self.id);
        if let Some(uris) = self.legacy.take() {
            self.client
                .unsubscribe_all(&uris, &CallOptions::default())
                .await;
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.client.inner.peer.remove_listen(&self.id);
        // Dropped without close(): unsubscribe in the background when a runtime is at hand.
        let uris = self.legacy.take().filter(|u| !u.is_empty());
        if let (Some(uris), Ok(rt)) = (uris, tokio::runtime::Handle::try_current()) {
            let client = self.client.clone();
            rt.spawn(async move { client.unsubscribe_all(&uris, &CallOptions::default()).await });
        }
    }
}

impl Client {
    /// Open a `subscriptions/listen` stream with `filter` (e.g.
    /// `{"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}`) and wait for the
    /// acknowledgement.
    ///
    /// On a legacy session there is no listen request: the subscription takes the session's
    /// matching list_changed notifications and `resources/subscribe`s the requested URIs
    /// (SUB-07); its [`Subscription::honored`] is what the server's capabilities promise.
    ///
    /// # Errors
    /// The server's error (a modern server without listen support answers -32601);
    /// a protocol error when the first message is not the acknowledgement.
    pub async fn listen(&self, filter: Value) -> Result<Subscription, ClientError> {
        self.listen_with(filter, CallOptions::default()).await
    }

    /// [`Client::listen`] with per-call options: timeout, cancellation, progress, log level,
    /// extra `_meta`.
    ///
    /// # Errors
    /// As [`Client::listen`].
    pub async fn listen_with(
        &self,
        filter: Value,
        opts: CallOptions,
    ) -> Result<Subscription, ClientError> {
        if !self.is_modern() {
            return self.listen_legacy(filter, opts).await;
        }
        let peer = self.inner.peer.clone();
        let id = peer.next_id();
        let (tx, mut rx) = mpsc::channel(LISTEN_QUEUE);
        peer.add_listen(id.clone(), tx);
        let mut params = Map::new();
        params.insert("notifications".into(), filter);
        self.stamp(&mut params, &opts);
        let cancel = CancellationToken::new();
        let mut task = spawn_listen(peer, id.clone(), params, cancel.clone());
        let wait = opts
            .timeout
            .or(self.inner.options.request_timeout)
            .unwrap_or(ACK_TIMEOUT);
        let first = acknowledgement(&mut rx, &mut task, &cancel, wait).await?;
        let honored = first
            .pointer("/params/notifications")
            .cloned()
            .unwrap_or_else(|| json!({}));
        Ok(Subscription {
            id,
            honored,
            rx,
            cancel,
            task: Some(task),
            legacy: None,
            client: self.clone(),
        })
    }
}

/// Run the listen request in its own task: it stays open until `token` is cancelled or the
/// server ends it, then the subscription's queue is unregistered (which closes it).
fn spawn_listen(
    peer: Arc<Peer>,
    rid: Id,
    params: Map<String, Value>,
    token: CancellationToken,
) -> JoinHandle<Result<Value, ClientError>> {
    tokio::spawn(async move {
        let r = peer
            .request(
                rid.clone(),
                "subscriptions/listen",
                params,
                RequestSpec {
                    timeout: None,
                    cancel: Some(&token),
                    on_progress: None,
                    notify_cancel: true,
                },
            )
            .await;
        peer.remove_listen(&rid);
        r
    })
}

/// Wait up to `wait` for the first message of a listen stream and check that it is the
/// acknowledgement. On failure the request is cancelled.
async fn acknowledgement(
    rx: &mut mpsc::Receiver<Value>,
    task: &mut JoinHandle<Result<Value, ClientError>>,
    cancel: &CancellationToken,
    wait: Duration,
) -> Result<Value, ClientError> {
    let first = tokio::select! {
        // A stream that carried its acknowledgement and then ended (an HTTP response stream
        // closed after its events) still acknowledged: read the queue first.
        biased;
        m = rx.recv() => m,
        r = &mut *task => {
            return Err(match r {
                Ok(Ok(_)) => ClientError::Protocol("the listen stream ended before its acknowledgement".into()),
                Ok(Err(e)) => e,
                Err(_) => ClientError::Closed("listen task failed".into()),
            });
        }
        () = tokio::time::sleep(wait) => {
            cancel.cancel();
            return Err(ClientError::Timeout);
        }
    };
    let Some(first) = first else {
        // The queue closes when the request ends (or the connection does): report the
        // request's own outcome, e.g. the server's error, not just "closed".
        cancel.cancel();
        return Err(match tokio::time::timeout(wait, task).await {
            Ok(Ok(Err(e))) => e,
            Ok(Ok(Ok(_))) => {
                ClientError::Protocol("the listen stream ended before its acknowledgement".into())
            }
            _ => ClientError::Closed("the listen stream closed".into()),
        });
    };
    if first.get("method").and_then(Value::as_str)
        != Some("notifications/subscriptions/acknowledged")
    {
        cancel.cancel();
        return Err(ClientError::Protocol(format!(
            "the first message of a listen stream must be the acknowledgement, got {}",
            first.get("method").cloned().unwrap_or(Value::Null)
        )));
    }
    Ok(first)
}
