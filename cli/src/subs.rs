//! Resource subscriptions passed upstream (SUB-07, SUB-04): a client of the bridge subscribing to
//! a URI makes the bridge listen for that URI's updates from the upstream that serves it (one
//! upstream subscription however many clients subscribe; `resources/subscribe` on a legacy
//! upstream, a `subscriptions/listen` stream on a modern one, core's `Client::listen` either
//! way), and each `notifications/resources/updated` it sends reaches the bridge's subscribers.
//! Subscriptions are opened again after the upstream restarts.

use mcpcore::client::ClientError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::upstream::{Change, Upstream};

/// The URIs subscribed upstream: how many clients want each, and how to stop its listener.
#[derive(Default)]
pub(crate) struct Subscriptions {
    open: tokio::sync::Mutex<HashMap<String, (usize, CancellationToken)>>,
}

impl Subscriptions {
    pub async fn subscribe(&self, up: &Arc<Upstream>, uri: &str) -> Result<(), ClientError> {
        let mut open = self.open.lock().await;
        if let Some(e) = open.get_mut(uri) {
            e.0 += 1;
            return Ok(());
        }
        let stop = start(up, uri).await?;
        open.insert(uri.to_owned(), (1, stop));
        Ok(())
    }

    pub async fn unsubscribe(&self, uri: &str) {
        let mut open = self.open.lock().await;
        let last = open.get_mut(uri).is_some_and(|e| {
            e.0 -= 1;
            e.0 == 0
        });
        if last {
            if let Some((_, stop)) = open.remove(uri) {
                stop.cancel();
            }
        }
    }

    /// Listen again for every URI (after a restart: the old listeners ended with the old
    /// connection).
    pub async fn reopen(&self, up: &Arc<Upstream>) {
        let mut open = self.open.lock().await;
        for (uri, (_, stop)) in open.iter_mut() {
            stop.cancel();
            match start(up, uri).await {
                Ok(s) => *stop = s,
                Err(e) => eprintln!("mcpcore: cannot subscribe to {uri} again: {e}"),
            }
        }
    }
}

/// Listen for `uri`'s updates upstream until the token is cancelled.
async fn start(up: &Arc<Upstream>, uri: &str) -> Result<CancellationToken, ClientError> {
    let client = up
        .client()
        .map_err(|_| ClientError::Closed("the upstream is not running".into()))?;
    let mut sub = client
        .listen(json!({ "resourceSubscriptions": [uri] }))
        .await?;
    let stop = CancellationToken::new();
    let watch = stop.clone();
    let weak = Arc::downgrade(up);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                n = sub.next() => {
                    let Some(n) = n else { break };
                    if n.get("method").and_then(Value::as_str) != Some("notifications/resources/updated") {
                        continue;
                    }
                    let Some(u) = n.pointer("/params/uri").and_then(Value::as_str) else { continue };
                    match weak.upgrade() {
                        Some(up) => up.changed(Change::Updated(u.to_owned())),
                        None => break,
                    }
                }
                () = watch.cancelled() => break,
            }
        }
        sub.close().await;
    });
    Ok(stop)
}
