//! One SSE stream of a legacy session (REQUIREMENTS LHTTP-04, LHTTP-05, LHTTP-06): every event
//! gets the id `<stream>_<seq>` and is kept in a bounded buffer, so a client that lost the
//! connection resumes with `Last-Event-ID`. At most one live reader is attached at a time.

use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use tokio::sync::mpsc;

use super::sse;
use crate::server::lock;

/// One SSE stream of a session: a bounded replay buffer plus, while a client reads it, a live
/// channel. Pushing never blocks: a reader that falls behind is detached and resumes by id.
pub(crate) struct Stream {
    /// Fixed, except once for a shared session's standalone stream (see [`Stream::share`]).
    id: AtomicU64,
    cap: usize,
    inner: Mutex<StreamInner>,
    /// A shared event store mirroring this stream (LHTTP-04 on any worker).
    mirror: OnceLock<Mirror>,
}

/// Where a stream's events are mirrored for other workers.
pub(crate) struct Mirror {
    pub store: std::sync::Arc<dyn crate::backplane::EventStore>,
    pub key: crate::backplane::StreamKey,
    pub limits: crate::backplane::EventLimits,
}

struct StreamInner {
    next_seq: u64,
    buf: VecDeque<(u64, Bytes)>,
    live: Option<mpsc::Sender<Bytes>>,
    finished: bool,
}

impl Stream {
    pub(crate) fn new(id: u64, cap: usize) -> Self {
        Self {
            id: AtomicU64::new(id),
            cap,
            inner: Mutex::new(StreamInner {
                next_seq: 1,
                buf: VecDeque::new(),
                live: None,
                finished: false,
            }),
            mirror: OnceLock::new(),
        }
    }

    /// A stream whose events are also written to a shared store.
    pub(crate) fn mirrored(id: u64, cap: usize, mirror: Mirror) -> Self {
        mirror.store.open(&mirror.key, mirror.limits);
        Self {
            mirror: OnceLock::from(mirror),
            ..Self::new(id, cap)
        }
    }

    /// Number a shared session replica's standalone stream `id` (a worker-specific number, so
    /// its event ids never collide with another worker's, LHTTP-06) and mirror it, so a GET
    /// stream lost on this worker resumes on another (LHTTP-04). Set once, before any event.
    pub(crate) fn share(&self, id: u64, mirror: Mirror) {
        let _st = lock(&self.inner);
        if self.mirror.get().is_some() {
            return;
        }
        mirror.store.open(&mirror.key, mirror.limits);
        self.id.store(id, Ordering::Relaxed);
        let _ = self.mirror.set(mirror);
    }

    /// The stream number (0 is the standalone GET stream of an unshared session).
    pub(crate) fn id(&self) -> u64 {
        self.id.load(Ordering::Relaxed)
    }

    /// Record one message; deliver it live when a reader is attached. `false` when nobody
    /// reads the stream now (the message stays available for replay).
    pub(crate) fn push(&self, frame: &[u8]) -> bool {
        let mut st = lock(&self.inner);
        let seq = st.next_seq;
        st.next_seq += 1;
        let ev = sse::event(Some(&sse::event_id(self.id(), seq)), frame);
        if st.buf.len() >= self.cap {
            st.buf.pop_front();
        }
        st.buf.push_back((seq, ev.clone()));
        if let Some(m) = self.mirror.get() {
            // Under the lock, so the store sees the stream's events in order.
            m.store.append(&m.key, seq, ev.clone(), m.limits);
        }
        match &st.live {
            Some(tx) => {
                if tx.try_send(ev).is_ok() {
                    true
                } else {
                    // Closed, or the reader fell behind: detach; it can resume with Last-Event-ID.
                    st.live = None;
                    false
                }
            }
            None => false,
        }
    }

    /// Send a keep-alive comment to the live reader; it is not recorded for replay (HTTP-06).
    /// With `reader`, only when that reader is still the one attached. `false` once there is
    /// no such reader (the keep-alive loop then ends).
    pub(crate) fn ping(&self, reader: Option<&mpsc::WeakSender<Bytes>>) -> bool {
        let mut st = lock(&self.inner);
        let Some(live) = &st.live else {
            return false;
        };
        if let Some(r) = reader {
            if !r.upgrade().is_some_and(|r| r.same_channel(live)) {
                return false;
            }
        }
        match live.try_send(sse::keepalive()) {
            Ok(()) => true,
            // A full queue already proves the stream busy; nothing to add.
            Err(mpsc::error::TrySendError::Full(_)) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => {
                st.live = None;
                false
            }
        }
    }

    /// Drop the live reader (its response ends); the stream stays resumable by event id.
    pub(crate) fn detach(&self) {
        lock(&self.inner).live = None;
    }

    /// The stream is complete: close the live reader once it has drained.
    pub(crate) fn finish(&self) {
        let mut st = lock(&self.inner);
        if !st.finished {
            if let Some(m) = self.mirror.get() {
                m.store.finish(&m.key, m.limits);
            }
        }
        st.finished = true;
        st.live = None;
    }

    pub(crate) fn is_finished(&self) -> bool {
        lock(&self.inner).finished
    }

    pub(crate) fn has_live(&self) -> bool {
        lock(&self.inner)
            .live
            .as_ref()
            .is_some_and(|t| !t.is_closed())
    }

    /// Attach a reader: replay events after `after`, then stream live until finished.
    /// With `exclusive`, refuse (false) when a live reader is already attached.
    pub(crate) fn attach(
        &self,
        after: Option<u64>,
        priming: Option<u64>,
        tx: mpsc::Sender<Bytes>,
        exclusive: bool,
    ) -> bool {
        let mut st = lock(&self.inner);
        if exclusive && st.live.as_ref().is_some_and(|t| !t.is_closed()) {
            return false;
        }
        if let Some(retry) = priming {
            let last = st.next_seq - 1;
            let _ = tx.try_send(sse::priming(&sse::event_id(self.id(), last), retry));
        }
        if let Some(after) = after {
            for (_, ev) in st.buf.iter().filter(|(s, _)| *s > after) {
                let _ = tx.try_send(ev.clone());
            }
        }
        if !st.finished {
            st.live = Some(tx);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(String::from_utf8_lossy(&b).into_owned());
        }
        out
    }

    #[test]
    fn lhttp06_replay_after_an_event_id_from_a_bounded_buffer() {
        let s = Stream::new(3, 2);
        for m in ["a", "b", "c"] {
            assert!(!s.push(m.as_bytes()), "nobody reads yet");
        }
        let (tx, mut rx) = mpsc::channel(8);
        assert!(s.attach(Some(1), None, tx, false));
        // seq 1 ("a") was evicted by the cap of 2; after 1 → b, c.
        assert_eq!(
            drain(&mut rx),
            vec!["id: 3_2\ndata: b\n\n", "id: 3_3\ndata: c\n\n"]
        );
        assert!(s.push(b"d"));
        assert_eq!(drain(&mut rx), vec!["id: 3_4\ndata: d\n\n"]);
        s.finish();
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn exclusive_attach_refuses_a_second_live_reader() {
        let s = Stream::new(0, 4);
        let (tx1, _rx1) = mpsc::channel(4);
        let (tx2, _rx2) = mpsc::channel(4);
        assert!(s.attach(None, Some(1000), tx1, true));
        assert!(!s.attach(None, Some(1000), tx2, true));
        let (tx3, _rx3) = mpsc::channel(4);
        drop(_rx1);
        assert!(
            s.attach(None, Some(1000), tx3, true),
            "a closed reader frees the slot"
        );
    }

    #[test]
    fn a_reader_that_falls_behind_is_detached() {
        let s = Stream::new(1, 16);
        let (tx, mut rx) = mpsc::channel(1);
        s.attach(None, None, tx, false);
        assert!(s.push(b"x"));
        assert!(!s.push(b"y"), "full: detached instead of blocking");
        assert_eq!(drain(&mut rx).len(), 1);
        assert!(rx.try_recv().is_err());
    }
}
