//! The threads of [`super`]: the leader's loop, the monitor, the output thread, and [`serve`],
//! which starts them.

use super::*;

impl Shared {
    /// The leader's loop: read, feed, run the calls queued; at the end of the input (or when
    /// stopped) finish the connection. A leader that lost its role just ends.
    pub(super) fn lead(self: Arc<Self>) {
        let _rt = self.rt.enter();
        let ended = loop {
            match self.read() {
                Got::Fed => {
                    if !self.run_jobs() {
                        return;
                    }
                }
                Got::End => break true,
                Got::Stop => break false,
            }
        };
        self.finish(ended);
    }

    /// STDIO-04: a last frame without a newline is handled, the requests in flight finish
    /// (within the server's `shutdown_grace`; at once when stdout is gone) and their answers
    /// are written; then the other threads end and the serve call returns.
    fn finish(self: &Arc<Self>, ended: bool) {
        if ended && !self.stdout_gone.load(Ordering::SeqCst) {
            self.turn(false, |p| self.fed(p.feed_eof()));
        }
        let gone = self.stdout_gone.load(Ordering::SeqCst);
        let (tx, rx) = std::sync::mpsc::channel();
        let s = self.clone();
        self.rt.spawn(async move {
            s.pump.drain(gone).await;
            let _ = tx.send(());
        });
        let _ = rx.recv();
        self.turn(false, StdioPump::take_output);
        self.done.store(true, Ordering::SeqCst);
        self.monitor.raise();
        self.output.raise();
        let failed = lock(&self.failed).clone();
        if let Some(tx) = lock(&self.finished).take() {
            let _ = tx.send(failed.map_or(Ok(()), Err));
        }
    }

    /// The monitor (see the module docs): hands the role over when a call outlasts a tick.
    fn watch(self: Arc<Self>) {
        let (mut seen, mut last_calls, mut quiet) = (0u64, 0u64, 0u32);
        while !self.done.load(Ordering::SeqCst) {
            if quiet >= QUIET_TICKS {
                self.monitor_asleep.store(true, Ordering::SeqCst);
                // A call that started before the flag was up did not wake us: look again.
                if self.calls.load(Ordering::SeqCst) == last_calls {
                    self.monitor.wait(None);
                }
                self.monitor_asleep.store(false, Ordering::SeqCst);
                quiet = 0;
                continue;
            }
            self.monitor.wait(Some(TICK));
            let busy = self.busy.load(Ordering::SeqCst);
            let calls = self.calls.load(Ordering::SeqCst);
            if busy != 0 && busy != HANDED && busy == seen {
                // Counted first: the stuck leader may return (and uncount itself) at once.
                self.stuck.fetch_add(1, Ordering::SeqCst);
                let taken = self
                    .busy
                    .compare_exchange(busy, HANDED, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
                if taken {
                    self.hand_over(busy);
                } else {
                    self.stuck.fetch_sub(1, Ordering::SeqCst);
                }
            }
            quiet = if calls == last_calls { quiet + 1 } else { 0 };
            (seen, last_calls) = (busy, calls);
        }
    }

    /// The output thread: writes what was queued outside a leader's turn.
    fn write_later(self: Arc<Self>) {
        let _rt = self.rt.enter();
        loop {
            let raised = self.output.wait(None);
            if self.done.load(Ordering::SeqCst) {
                return;
            }
            if raised {
                self.turn(false, StdioPump::take_output);
            }
        }
    }
}

/// Stops the connection when the serve call is dropped (its asyncio task cancelled).
struct StopOnDrop(Arc<Shared>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(drop)
}

/// Serve this process's stdin/stdout with a leader thread (see the module docs): the outcome
/// of the connection (`Err`: why it ended early, a frame over the size cap), or `None`, having
/// done nothing, when stdin is not a pipe (the caller then serves on core's runtime).
///
/// # Errors
/// A limit out of range, or no thread to be had.
pub fn serve(
    server: &Server,
    rt: tokio::runtime::Handle,
) -> Result<Option<impl std::future::Future<Output = Result<(), String>>>, String> {
    let Some(input) = Input::open() else {
        return Ok(None);
    };
    let (stop_rx, stop_tx) = UnixStream::pair().map_err(|e| e.to_string())?;
    let output = Arc::new(Signal::default());
    let busy = Arc::new(AtomicU64::new(0));
    let (wake, watched) = (output.clone(), busy.clone());
    let _rt = rt.enter();
    let pump = StdioPump::new(
        server,
        Box::new(move || {
            // Not from the leader's own call: that leader takes the output when the call
            // returns. A call the leader lost its role in is no longer waited for.
            let running = RUNNING.with(Cell::get);
            if running == 0 || running != watched.load(Ordering::SeqCst) {
                wake.raise();
            }
        }),
    )
    .map_err(|e| e.to_string())?
    .local();
    let (tx, rx) = oneshot::channel();
    let shared = Arc::new(Shared {
        pump,
        jobs: Arc::new(Jobs {
            queue: Mutex::new(VecDeque::new()),
        }),
        turn: Mutex::new(()),
        input: Mutex::new(input),
        stop_rx,
        stop_tx,
        stopping: AtomicBool::new(false),
        stdout_gone: AtomicBool::new(false),
        done: AtomicBool::new(false),
        failed: Mutex::new(None),
        finished: Mutex::new(Some(tx)),
        busy,
        stuck: AtomicUsize::new(0),
        calls: AtomicU64::new(0),
        monitor: Signal::default(),
        monitor_asleep: AtomicBool::new(false),
        output,
        spin: server.limits().stdio_idle_spin,
        rt: rt.clone(),
    });
    let started = [
        (
            "mcpcore-stdio-out",
            shared.clone(),
            Shared::write_later as fn(Arc<Shared>),
        ),
        ("mcpcore-stdio-watch", shared.clone(), Shared::watch),
        ("mcpcore-stdio", shared.clone(), Shared::lead),
    ]
    .into_iter()
    .try_for_each(|(name, s, f)| spawn(name, move || f(s)));
    if let Err(e) = started {
        shared.done.store(true, Ordering::SeqCst);
        shared.stop();
        shared.monitor.raise();
        shared.output.raise();
        return Err(e.to_string());
    }
    let guard = StopOnDrop(shared);
    Ok(Some(async move {
        let out = rx.await.unwrap_or(Ok(()));
        drop(guard);
        out
    }))
}
