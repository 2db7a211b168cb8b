//! A connection's outbound queue, bounded in messages and in bytes, with a reader-side gate
//! (REQUIREMENTS STDIO-01: output backpressure).
//!
//! A peer that stops reading our output must not make us buffer without bound. The queue holds
//! at most `Limits::max_outbound_queue` messages; [`OutQueue::writable`] additionally waits while
//! the queued bytes reach `Limits::max_outbound_bytes`. The transport calls it before reading the
//! next inbound frame, so a stalled peer stops being read and its own writes block.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, Notify};

use super::Outbound;

struct Gauge {
    queued: AtomicUsize,
    drained: Notify,
    cap: usize,
}

impl Gauge {
    fn add(&self, n: usize) {
        self.queued.fetch_add(n, Ordering::AcqRel);
    }
    fn sub(&self, n: usize) {
        let before = self.queued.fetch_sub(n, Ordering::AcqRel);
        if before >= self.cap && before - n < self.cap {
            self.drained.notify_waiters();
        }
    }
}

/// The sending side; cloneable, and an [`Outbound`] sink for request-related messages.
#[derive(Clone)]
pub(crate) struct OutQueue {
    tx: mpsc::Sender<Vec<u8>>,
    gauge: Arc<Gauge>,
}

/// The writer's side.
pub(crate) struct OutRx {
    rx: mpsc::Receiver<Vec<u8>>,
    gauge: Arc<Gauge>,
}

/// A queue of at most `max_msgs` messages whose reader gate closes at `max_bytes` queued bytes.
pub(crate) fn channel(max_msgs: usize, max_bytes: usize) -> (OutQueue, OutRx) {
    let (tx, rx) = mpsc::channel(max_msgs);
    let gauge = Arc::new(Gauge {
        queued: AtomicUsize::new(0),
        drained: Notify::new(),
        cap: max_bytes,
    });
    (
        OutQueue {
            tx,
            gauge: gauge.clone(),
        },
        OutRx { rx, gauge },
    )
}

impl OutQueue {
    /// Queue `frame`, waiting for a message slot (never for bytes: an answer that is ready is
    /// always accepted, so no request can deadlock behind the byte bound). `false` once the
    /// writer is gone.
    pub(crate) async fn send(&self, frame: Vec<u8>) -> bool {
        let n = frame.len();
        match self.tx.reserve().await {
            Ok(slot) => {
                self.gauge.add(n);
                slot.send(frame);
                true
            }
            Err(_) => false,
        }
    }

    /// Wait until the queue can take another message and holds fewer bytes than its byte bound.
    /// Answers already waiting for a slot go first (the channel's semaphore is FIFO), so what is
    /// held stays bounded by the queue plus the requests already running.
    pub(crate) async fn writable(&self) {
        loop {
            let drained = self.gauge.drained.notified();
            if self.gauge.queued.load(Ordering::Acquire) < self.gauge.cap {
                break;
            }
            if self.tx.is_closed() {
                return;
            }
            drained.await;
        }
        if let Ok(slot) = self.tx.reserve().await {
            drop(slot);
        }
    }
}

impl Outbound for OutQueue {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        let n = frame.len();
        match self.tx.try_reserve() {
            Ok(slot) => {
                self.gauge.add(n);
                slot.send(frame);
                true
            }
            Err(_) => false,
        }
    }
}

impl OutRx {
    /// The next message; `None` when every sender is gone.
    pub(crate) async fn recv(&mut self) -> Option<Vec<u8>> {
        let m = self.rx.recv().await?;
        self.gauge.sub(m.len());
        Some(m)
    }

    /// A message already queued, without waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Vec<u8>> {
        let m = self.rx.try_recv().ok()?;
        self.gauge.sub(m.len());
        Some(m)
    }

    /// Refuse further messages (the output is gone); wakes a reader waiting on the gate.
    pub(crate) fn close(&mut self) {
        self.rx.close();
        self.gauge.drained.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The gate closes at the byte bound even with message slots free, and opens once the writer
    /// takes enough; a message larger than the bound is still accepted.
    #[tokio::test]
    async fn byte_bound_gates_the_reader_not_the_answers() {
        let (q, mut rx) = channel(100, 10);
        assert!(
            q.send(vec![b'x'; 25]).await,
            "an oversized answer is accepted"
        );
        let gated = tokio::time::timeout(Duration::from_millis(50), q.writable()).await;
        assert!(
            gated.is_err(),
            "the reader must wait while 25 of 10 bytes are queued"
        );
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.writable().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(rx.recv().await.map(|m| m.len()), Some(25));
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the gate opened")
            .expect("join");
    }

    /// The message bound holds for `try_send` (request-related notifications are dropped, not
    /// queued without bound) and the gate waits for a free slot.
    #[tokio::test]
    async fn message_bound_holds() {
        let (q, mut rx) = channel(2, 1 << 20);
        assert!(q.try_send(b"a".to_vec()));
        assert!(q.try_send(b"b".to_vec()));
        assert!(!q.try_send(b"c".to_vec()), "a full queue drops");
        let gated = tokio::time::timeout(Duration::from_millis(50), q.writable()).await;
        assert!(gated.is_err(), "no free slot: the reader waits");
        assert_eq!(rx.try_recv(), Some(b"a".to_vec()));
        tokio::time::timeout(Duration::from_secs(5), q.writable())
            .await
            .expect("a slot is free");
        rx.close();
        assert!(!q.send(b"d".to_vec()).await, "closed");
    }
}
