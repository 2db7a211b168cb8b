//! The Redis notification bus: PUBLISH / SUBSCRIBE on one channel per key prefix
//! (`<prefix>bus`).
//!
//! Outbound messages go through a bounded queue drained by one task; while Redis is down the
//! task retries the head message with backoff (so nothing queued is lost, at least once) and
//! the queue fills; past its bound new messages are dropped, counted and warned about, never
//! grown. The subscription task reconnects with backoff; when it breaks, receivers are told
//! there was a gap (listen streams end, so clients listen again and refetch instead of silently
//! missing a change).

use futures_util::StreamExt;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::sync::CancellationToken;

use super::conn::RedisConn;
use crate::backplane::bus::{BusMessage, BusReceiver, NotificationBus, Receivers};

const BACKOFF_MIN: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(2);

fn next_delay(d: Duration) -> Duration {
    (d * 2).clamp(BACKOFF_MIN, BACKOFF_MAX)
}

pub(crate) struct RedisBus {
    conn: Arc<RedisConn>,
    channel: String,
    receivers: Arc<Receivers>,
    tx: mpsc::Sender<String>,
    rx: Mutex<Option<mpsc::Receiver<String>>>,
    /// True while the subscription is established (a change published from now on arrives).
    subscribed: Arc<watch::Sender<bool>>,
    /// Cuts the subscriber's backoff short when a request is waiting for it.
    wake: Arc<Notify>,
    dropped: AtomicU64,
    stop: CancellationToken,
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.channel)
            .field("subscribed", &*self.subscribed.borrow())
            .field("dropped", &self.dropped.load(Ordering::Relaxed))
            .finish()
    }
}

impl Drop for RedisBus {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl RedisBus {
    pub(crate) fn new(conn: Arc<RedisConn>, queue: usize) -> Self {
        let (tx, rx) = mpsc::channel(queue.max(1));
        Self {
            channel: conn.key("bus"),
            conn,
            receivers: Arc::new(Receivers::default()),
            tx,
            rx: Mutex::new(Some(rx)),
            subscribed: Arc::new(watch::Sender::new(false)),
            wake: Arc::new(Notify::new()),
            dropped: AtomicU64::new(0),
            stop: CancellationToken::new(),
        }
    }

    /// Messages dropped because the outbound queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Wait up to `bound` for the subscription (starting it if needed): true once it is
    /// established and the connection is up, so a stream opened now hears every later change.
    pub(crate) async fn wait_subscribed(&self, bound: Duration) -> bool {
        self.start();
        if self.is_available() {
            return true;
        }
        let mut rx = self.subscribed.subscribe();
        // Do not sit out the subscriber's backoff: try again now.
        self.wake.notify_one();
        let _ = tokio::time::timeout(bound, rx.wait_for(|up| *up)).await;
        self.is_available()
    }
}

impl NotificationBus for RedisBus {
    fn publish(&self, msg: BusMessage) {
        self.start();
        let text = match serde_json::to_string(&msg) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, "bus message not serializable");
                return;
            }
        };
        if self.tx.try_send(text).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(
                dropped = n,
                "redis bus outbound queue full (redis down?): change dropped"
            );
        }
    }

    fn subscribe(&self, receiver: Weak<dyn BusReceiver>) {
        self.receivers.add(receiver);
        self.start();
    }

    fn is_available(&self) -> bool {
        *self.subscribed.borrow() && self.conn.is_up()
    }

    fn start(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(rx) = self
            .rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        rt.spawn(publisher(
            self.conn.clone(),
            self.channel.clone(),
            rx,
            self.stop.clone(),
        ));
        rt.spawn(subscriber(
            self.conn.clone(),
            self.channel.clone(),
            self.receivers.clone(),
            (self.subscribed.clone(), self.wake.clone()),
            self.stop.clone(),
        ));
    }
}

/// Drain the queue in order; a message is retried (with backoff) until Redis takes it.
async fn publisher(
    conn: Arc<RedisConn>,
    channel: String,
    mut rx: mpsc::Receiver<String>,
    stop: CancellationToken,
) {
    loop {
        let msg = tokio::select! {
            m = rx.recv() => match m { Some(m) => m, None => return },
            () = stop.cancelled() => return,
        };
        let mut delay = Duration::ZERO;
        loop {
            let cmd = redis::cmd("PUBLISH").arg(&channel).arg(&msg).clone();
            if conn.run::<i64>(&cmd).await.is_ok() {
                break;
            }
            delay = next_delay(delay);
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = stop.cancelled() => return,
            }
        }
    }
}

/// Hold a subscription, reconnecting with backoff, and hand every message to the receivers.
async fn subscriber(
    conn: Arc<RedisConn>,
    channel: String,
    receivers: Arc<Receivers>,
    (subscribed, wake): (Arc<watch::Sender<bool>>, Arc<Notify>),
    stop: CancellationToken,
) {
    let mut delay = Duration::ZERO;
    loop {
        let session = async {
            let mut ps = conn.client.get_async_pubsub().await?;
            ps.subscribe(&channel).await?;
            Ok::<_, redis::RedisError>(ps.into_on_message())
        };
        let stream = tokio::select! {
            r = tokio::time::timeout(super::conn::OP_TIMEOUT, session) => r,
            () = stop.cancelled() => return,
        };
        match stream {
            Ok(Ok(mut stream)) => {
                conn.mark(true);
                subscribed.send_replace(true);
                delay = Duration::ZERO;
                loop {
                    let m = tokio::select! {
                        m = stream.next() => m,
                        () = stop.cancelled() => return,
                    };
                    let Some(m) = m else { break };
                    let Ok(text) = m.get_payload::<String>() else {
                        continue;
                    };
                    match serde_json::from_str::<BusMessage>(&text) {
                        Ok(msg) => receivers.deliver(&msg),
                        Err(e) => tracing::warn!(error = %e, "unreadable bus message ignored"),
                    }
                }
                subscribed.send_replace(false);
                conn.mark(false);
                tracing::warn!(channel = %channel, "redis bus subscription lost; reconnecting");
                for r in receivers.live() {
                    r.gap();
                }
            }
            Ok(Err(e)) => tracing::debug!(error = %e, "redis bus subscribe failed"),
            Err(_) => tracing::debug!("redis bus subscribe timed out"),
        }
        delay = next_delay(delay);
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = wake.notified() => {}
            () = stop.cancelled() => return,
        }
    }
}
