//! `NativeSubscription`: an open `subscriptions/listen` stream (core's
//! [`mcpcore::client::Subscription`]); `lib/` wraps it as an async iterator whose `return()`
//! closes it.

use mcpcore::client::Subscription;
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// An open subscription (private: `lib/` wraps it).
#[napi]
pub struct NativeSubscription {
    honored: Value,
    /// `None` once closed.
    sub: Mutex<Option<Subscription>>,
    /// Tripped by `close`, so a pending `next` ends at once instead of holding the lock.
    closing: CancellationToken,
}

impl NativeSubscription {
    pub fn new(sub: Subscription) -> Self {
        Self {
            honored: sub.honored().clone(),
            sub: Mutex::new(Some(sub)),
            closing: CancellationToken::new(),
        }
    }
}

#[napi]
impl NativeSubscription {
    /// The notification types the server honoured (the acknowledgement's `notifications`).
    #[napi(getter)]
    pub fn honored(&self) -> Value {
        self.honored.clone()
    }

    /// The next notification (`{method, params}`), or null once the stream ended or was closed.
    #[napi]
    pub async fn next(&self) -> Option<Value> {
        let mut guard = tokio::select! {
            g = self.sub.lock() => g,
            () = self.closing.cancelled() => return None,
        };
        let sub = guard.as_mut()?;
        let msg = tokio::select! {
            m = sub.next() => m?,
            () = self.closing.cancelled() => return None,
        };
        let mut out = serde_json::Map::new();
        if let Some(m) = msg.get("method") {
            out.insert("method".into(), m.clone());
        }
        out.insert(
            "params".into(),
            msg.get("params").cloned().unwrap_or(Value::Null),
        );
        Some(Value::Object(out))
    }

    /// End the subscription (core cancels the listen request); a second call does nothing.
    #[napi]
    pub async fn close(&self) {
        self.closing.cancel();
        let sub = self.sub.lock().await.take();
        if let Some(s) = sub {
            s.close().await;
        }
    }
}
