//! A reader that polls briefly before sleeping (the stdio transport's idle spin; REQUIREMENTS
//! STDIO-01 framing is unchanged, this only decides *when* the reader parks).
//!
//! A peer that talks in request/answer turns sends its next frame a few microseconds after it
//! read our answer. Parking in the reactor in between costs a full sleep/wake of the thread, which
//! on virtual machines (an idle vCPU halts; waking it is an inter-processor interrupt through the
//! host) dominates the round trip. [`SpinRead`] instead keeps the task runnable for a short budget
//! after the stream first reports "nothing to read": each retry yields to the runtime (other tasks
//! run, and an otherwise idle worker polls the I/O driver without blocking), so the next frame is
//! picked up without a wake-up. After the budget the task parks as usual. Only a small read (a lone
//! frame) arms the spin: after a large read (a pipelined burst) the task parks at once, so the next
//! burst accumulates and is read in one piece. The cost is bounded: at
//! most `budget` of CPU per idle period; a zero budget turns it off.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, ReadBuf};

type Yield = Pin<Box<dyn Future<Output = ()> + Send>>;

/// An [`AsyncRead`] that spins (yielding) up to `budget` before it lets the task park.
pub(crate) struct SpinRead<R> {
    inner: R,
    budget: Duration,
    /// When the current idle period began (the first `Pending` since data last arrived).
    idle_since: Option<Instant>,
    /// The yield in progress, if any.
    pending_yield: Option<Yield>,
    /// The last read was small (a lone frame, as in request/answer turns): spin after it. After
    /// a large read (a pipelined burst) the task parks at once, so the next burst accumulates.
    spin_next: bool,
}

/// Reads up to this many bytes count as "small" (see [`SpinRead::spin_next`]).
const SMALL_READ: usize = 1024;

impl<R> SpinRead<R> {
    pub(crate) fn new(inner: R, budget: Duration) -> Self {
        Self {
            inner,
            budget,
            idle_since: None,
            pending_yield: None,
            spin_next: true,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SpinRead<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            let before = buf.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, buf) {
                Poll::Ready(r) => {
                    this.idle_since = None;
                    this.pending_yield = None;
                    this.spin_next = buf.filled().len() - before <= SMALL_READ;
                    return Poll::Ready(r);
                }
                Poll::Pending if this.budget.is_zero() || !this.spin_next => return Poll::Pending,
                // The inner reader registered `cx` with the reactor: parking is always safe.
                Poll::Pending => {}
            }
            if let Some(y) = this.pending_yield.as_mut() {
                if y.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                // The yield finished: the runtime ran other work and polled the driver; retry.
                this.pending_yield = None;
                continue;
            }
            let now = Instant::now();
            let since = *this.idle_since.get_or_insert(now);
            if now.duration_since(since) >= this.budget {
                return Poll::Pending;
            }
            let mut y: Yield = Box::pin(tokio::task::yield_now());
            if y.as_mut().poll(cx).is_pending() {
                this.pending_yield = Some(y);
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Data written after the reader went idle still arrives, with and without a spin budget,
    /// and EOF is reported (the spin never swallows a wake-up).
    #[tokio::test]
    async fn spin_read_delivers_late_data_and_eof() {
        for budget in [
            Duration::ZERO,
            Duration::from_micros(50),
            Duration::from_secs(5),
        ] {
            let (mut w, r) = tokio::io::duplex(64);
            let mut r = SpinRead::new(r, budget);
            let writer = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                w.write_all(b"late").await.expect("write");
            });
            let mut got = Vec::new();
            r.read_to_end(&mut got).await.expect("read");
            assert_eq!(got, b"late");
            writer.await.expect("writer");
        }
    }
}
