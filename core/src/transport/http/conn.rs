//! The standalone listener's connections: accepting under a cap, and per-connection deadlines
//! that keep a hostile or dead peer from holding a connection (its file descriptor, its buffers,
//! an answer it never reads) forever. The knobs are [`HttpOptions::header_read_timeout`],
//! [`HttpOptions::connection_idle_timeout`], [`HttpOptions::write_stall_timeout`] and
//! [`HttpOptions::max_connections`]; the body deadline lives in the service (`server::post`) so
//! a mounted `HttpService` has it too.
//!
//! hyper 1's own `header_read_timeout` is not used: its timer starts whenever the connection
//! waits for a request head, so on a keep-alive connection it also bounds the idle time between
//! requests, and the two could not be set apart. Instead the IO wrapper below learns from the
//! per-connection service whether a request is in progress:
//! * waiting for the first request: the header deadline runs from the accept;
//! * idle after an answer: the idle deadline runs until the first byte of the next request,
//!   then the header deadline runs from that byte;
//! * a request in progress: no read deadline at all, so long-lived SSE streams
//!   (`subscriptions/listen`, SUB-01; legacy GET streams, LHTTP-05; quiet POST streams kept
//!   alive per HTTP-06) stay open however quiet they are.
//!
//! Writes have a stall deadline: a write that stays pending that long fails with `TimedOut`,
//! which ends the connection and drops everything it held; any progress restarts the deadline,
//! so a stream that is idle, or read slowly but steadily, is never cut.

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::backoff::{AcceptBackoff, LogGate, LOG_INTERVAL};
use super::body::HttpBody;
use super::options::HttpOptions;
use super::server::HttpService;
use crate::server::lock;

/// The read and write deadlines of one connection.
#[derive(Clone, Copy)]
struct Timeouts {
    header: Duration,
    idle: Duration,
    write: Duration,
}

impl Timeouts {
    fn new(o: &HttpOptions) -> Self {
        Self {
            header: o.header_read_timeout,
            idle: o.connection_idle_timeout,
            write: o.write_stall_timeout,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// No request in progress. `header_from` is when the next request began to arrive (its
    /// first byte), or the accept for a connection's first request.
    Waiting {
        idle_from: Instant,
        header_from: Option<Instant>,
    },
    /// Requests in progress: handed to the service, answer not finished (hyper serves one at a
    /// time on HTTP/1; counted anyway so an early drop never opens a read deadline too soon).
    Busy(usize),
}

/// What the IO wrapper and the connection's service share.
struct ConnState {
    phase: Mutex<Phase>,
    /// The connection speaks HTTP/2 (learnt from its first request). Its peer sends frames
    /// that begin no request (WINDOW_UPDATE while reading an answer, PING, SETTINGS acks), so
    /// bytes between requests do not start the header deadline; the idle deadline bounds them.
    h2: AtomicBool,
    /// Bytes of the messages this connection carried, for the allocator's trim when it ends
    /// (answers a peer never read are freed only then).
    carried: AtomicUsize,
}

impl ConnState {
    fn new(now: Instant) -> Self {
        Self {
            phase: Mutex::new(Phase::Waiting {
                idle_from: now,
                header_from: Some(now),
            }),
            h2: AtomicBool::new(false),
            carried: AtomicUsize::new(0),
        }
    }

    fn begin(&self) {
        let mut p = lock(&self.phase);
        *p = match *p {
            Phase::Waiting { .. } => Phase::Busy(1),
            Phase::Busy(n) => Phase::Busy(n.saturating_add(1)),
        };
    }

    fn end(&self, now: Instant) {
        let mut p = lock(&self.phase);
        *p = match *p {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Waiting {
                idle_from: now,
                header_from: None,
            },
        };
    }

    fn saw_bytes(&self, now: Instant) {
        if self.h2.load(Ordering::Relaxed) {
            return;
        }
        if let Phase::Waiting { header_from, .. } = &mut *lock(&self.phase) {
            header_from.get_or_insert(now);
        }
    }

    /// When a read that is still pending must give up; `None`: never (a request in progress,
    /// or a deadline too far away to represent).
    fn read_deadline(&self, t: Timeouts) -> Option<Instant> {
        match *lock(&self.phase) {
            Phase::Busy(_) => None,
            Phase::Waiting {
                header_from: Some(h),
                ..
            } => h.checked_add(t.header),
            Phase::Waiting { idle_from, .. } => idle_from.checked_add(t.idle),
        }
    }
}

/// Marks one request in progress until dropped (with the answer's body, or with the service
/// future when the connection dies first).
struct InProgress(Arc<ConnState>);

impl InProgress {
    fn begin(state: Arc<ConnState>) -> Self {
        state.begin();
        Self(state)
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.end(Instant::now());
    }
}

/// One reusable timer.
#[derive(Default)]
struct Timer(Option<Pin<Box<Sleep>>>);

impl Timer {
    /// Whether `deadline` has passed; otherwise `cx` is woken at it.
    fn expired(&mut self, deadline: Instant, cx: &mut Context<'_>) -> bool {
        if Instant::now() >= deadline {
            return true;
        }
        let sleep = self
            .0
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        sleep.as_mut().poll(cx).is_ready()
    }
}

/// The connection's socket with the read and write deadlines described in the module comment.
struct GuardedIo {
    io: TcpStream,
    state: Arc<ConnState>,
    t: Timeouts,
    read_timer: Timer,
    write_timer: Timer,
    /// When the current run of pending writes began.
    stalled_since: Option<Instant>,
}

impl GuardedIo {
    fn new(io: TcpStream, state: Arc<ConnState>, t: Timeouts) -> Self {
        Self {
            io,
            state,
            t,
            read_timer: Timer::default(),
            write_timer: Timer::default(),
            stalled_since: None,
        }
    }

    fn after_write<T>(
        &mut self,
        r: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if r.is_ready() {
            self.stalled_since = None;
            return r;
        }
        let since = *self.stalled_since.get_or_insert_with(Instant::now);
        match since.checked_add(self.t.write) {
            Some(d) if self.write_timer.expired(d, cx) => {
                tracing::debug!("peer stopped reading; closing the connection");
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "write stalled: the peer stopped reading",
                )))
            }
            _ => Poll::Pending,
        }
    }
}

impl AsyncRead for GuardedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if r.is_ok() && buf.filled().len() > before {
                    this.state.saw_bytes(Instant::now());
                }
                Poll::Ready(r)
            }
            Poll::Pending => match this.state.read_deadline(this.t) {
                Some(d) if this.read_timer.expired(d, cx) => {
                    tracing::debug!("no complete request head in time; closing the connection");
                    Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "request head or idle deadline passed",
                    )))
                }
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for GuardedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.after_write(r, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.after_write(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_flush(cx);
        this.after_write(r, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_shutdown(cx);
        this.after_write(r, cx)
    }
}

/// An answer's body that keeps its request marked in progress until hyper drops it.
struct GuardedBody {
    body: HttpBody,
    _req: InProgress,
    /// The request's and the answer's sizes when large, counted for the allocator's trim when
    /// dropped (a read answer is freed about then) and again when the connection ends (an
    /// unread one is freed only then): counting twice only makes a trim come sooner.
    bytes: usize,
}

impl Drop for GuardedBody {
    fn drop(&mut self) {
        super::trim::released(self.bytes);
    }
}

impl Body for GuardedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The service of one connection: the shared service, plus the in-progress marking.
#[derive(Clone)]
struct ConnService {
    inner: HttpService,
    state: Arc<ConnState>,
    counters: Arc<Counters>,
}

type ConnFut =
    Pin<Box<dyn Future<Output = Result<http::Response<GuardedBody>, Infallible>> + Send>>;

impl hyper::service::Service<http::Request<Incoming>> for ConnService {
    type Response = http::Response<GuardedBody>;
    type Error = Infallible;
    type Future = ConnFut;

    fn call(&self, req: http::Request<Incoming>) -> Self::Future {
        if req.version() == http::Version::HTTP_2 {
            self.counters.http2_requests.fetch_add(1, Ordering::Relaxed);
            self.state.h2.store(true, Ordering::Relaxed);
        }
        let guard = InProgress::begin(self.state.clone());
        let svc = self.inner.clone();
        let sent = req.body().size_hint().exact().unwrap_or(0);
        Box::pin(async move {
            let resp = svc.handle(req).await;
            Ok(resp.map(|body| {
                let answer = body.size_hint().exact().unwrap_or(0);
                let bytes = super::trim::large(sent.saturating_add(answer));
                if bytes > 0 {
                    guard.0.carried.fetch_add(bytes, Ordering::Relaxed);
                }
                GuardedBody {
                    body,
                    _req: guard,
                    bytes,
                }
            }))
        })
    }
}

/// The connection cap: one permit per open connection, plus the count of open connections
/// (the accept loop holds a permit while it waits for the next connection, so the permits in
/// use are not that count).
#[derive(Clone)]
pub(crate) struct Slots {
    sem: Arc<Semaphore>,
    open: Arc<AtomicUsize>,
    max: usize,
    counters: Arc<Counters>,
}

/// Totals since the listener started, for monitoring (and tests that check which protocol a
/// client used, or that it multiplexed its calls over one connection).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) http2_requests: AtomicU64,
}

/// One open connection's place under the cap; freed when the connection's task ends.
struct Slot {
    _permit: OwnedSemaphorePermit,
    open: Arc<AtomicUsize>,
    counters: Arc<Counters>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    pub(crate) fn new(max: usize) -> Self {
        let max = max.min(Semaphore::MAX_PERMITS);
        Self {
            sem: Arc::new(Semaphore::new(max)),
            open: Arc::new(AtomicUsize::new(0)),
            max,
            counters: Arc::default(),
        }
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// The open-connection count, shared (the endpoint's metrics read it).
    pub(crate) fn open_gauge(&self) -> Arc<AtomicUsize> {
        self.open.clone()
    }

    /// A permit for the next connection; waits while the cap is reached. `None` once `stop`
    /// fires.
    async fn next(
        &self,
        stop: &CancellationToken,
        gate: &mut LogGate,
    ) -> Option<OwnedSemaphorePermit> {
        if let Ok(p) = self.sem.clone().try_acquire_owned() {
            return Some(p);
        }
        if let Some(suppressed) = gate.allow(Instant::now()) {
            tracing::warn!(
                max = self.max,
                suppressed,
                "connection cap reached; new connections wait in the backlog until one closes"
            );
        }
        tokio::select! {
            p = self.sem.clone().acquire_owned() => p.ok(),
            () = stop.cancelled() => None,
        }
    }

    fn occupy(&self, permit: OwnedSemaphorePermit) -> Slot {
        self.open.fetch_add(1, Ordering::AcqRel);
        self.counters.accepted.fetch_add(1, Ordering::Relaxed);
        Slot {
            _permit: permit,
            open: self.open.clone(),
            counters: self.counters.clone(),
        }
    }
}

/// Accept connections until `stop`, then shut the service down gracefully.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    service: HttpService,
    tls: Option<Arc<rustls::ServerConfig>>,
    slots: Slots,
    stop: CancellationToken,
) {
    let tls = tls.map(TlsAcceptor::from);
    let graceful = GracefulShutdown::new();
    let mut backoff = AcceptBackoff::new();
    let mut cap_gate = LogGate::new(LOG_INTERVAL);
    while let Some(slot) = slots.next(&stop, &mut cap_gate).await {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            () = stop.cancelled() => break,
        };
        match accepted {
            Ok((stream, _)) => {
                backoff.succeeded();
                spawn_connection(
                    stream,
                    slots.occupy(slot),
                    &service,
                    tls.as_ref(),
                    graceful.watcher(),
                );
            }
            Err(e) => {
                drop(slot);
                if let Some(d) = backoff.failed(&e, Instant::now()) {
                    if sleep_or_stop(d, &stop).await.is_break() {
                        break;
                    }
                }
            }
        }
    }
    drop(listener);
    let deadline = service.options().shutdown_deadline;
    service.shutdown().await;
    let _ = tokio::time::timeout(deadline, graceful.shutdown()).await;
}

async fn sleep_or_stop(d: Duration, stop: &CancellationToken) -> ControlFlow<()> {
    tokio::select! {
        () = tokio::time::sleep(d) => ControlFlow::Continue(()),
        () = stop.cancelled() => ControlFlow::Break(()),
    }
}

fn spawn_connection(
    stream: TcpStream,
    slot: Slot,
    service: &HttpService,
    tls: Option<&TlsAcceptor>,
    watcher: Watcher,
) {
    let _ = stream.set_nodelay(true);
    let state = Arc::new(ConnState::new(Instant::now()));
    let io = GuardedIo::new(stream, state.clone(), Timeouts::new(service.options()));
    let svc = ConnService {
        inner: service.clone(),
        state: state.clone(),
        counters: slot.counters.clone(),
    };
    let tls = tls.cloned();
    let h2 = service
        .options()
        .http2
        .then_some(service.options().max_concurrent_streams);
    tokio::spawn(async move {
        // The slot is held for the connection's whole life: the cap counts open sockets.
        let _slot = slot;
        let r = match tls {
            None => serve_io(io, svc, h2, watcher).await,
            // The handshake reads through `GuardedIo` in its first-request phase, so the header
            // deadline (from the accept) bounds it, and a peer that sends nothing is dropped.
            Some(acceptor) => match acceptor.accept(io).await {
                Ok(tls) => serve_io(tls, svc, h2, watcher).await,
                Err(e) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    return;
                }
            },
        };
        if let Err(e) = r {
            tracing::debug!(error = %e, "HTTP connection ended with an error");
        }
        super::trim::released(state.carried.load(Ordering::Relaxed));
    });
}

/// Serve one connection, HTTP/1.1 or, when `h2` gives a stream cap, HTTP/2 (ALPN `h2` over
/// TLS, or the prior-knowledge preface on plain TCP, both detected by the preface the client
/// sends).
async fn serve_io<I>(
    io: I,
    svc: ConnService,
    h2: Option<u32>,
    watcher: Watcher,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    I: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper's header timer is off: `GuardedIo` keeps the header and idle deadlines apart (see
    // the module comment). Turning it off explicitly also keeps hyper from warning, on every
    // connection, that its default timeout has no timer.
    builder.http1().header_read_timeout(None);
    match h2 {
        Some(streams) => {
            builder
                .http2()
                .max_concurrent_streams(streams)
                .max_header_list_size(H2_MAX_HEADER_LIST);
        }
        None => builder = builder.http1_only(),
    }
    let conn = builder.serve_connection(TokioIo::new(io), svc);
    watcher.watch(conn).await
}

/// The HTTP/2 header block cap, hyper's default stated here so it cannot drift.
const H2_MAX_HEADER_LIST: u32 = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::backoff::{BACKOFF_MAX, BACKOFF_MIN};

    fn t(ms: u64) -> Timeouts {
        Timeouts {
            header: Duration::from_millis(ms),
            idle: Duration::from_millis(ms * 10),
            write: Duration::from_millis(ms),
        }
    }

    #[tokio::test]
    async fn phases_pick_the_right_read_deadline() {
        let t0 = Instant::now();
        let s = ConnState::new(t0);
        let ms = Duration::from_millis;
        assert_eq!(s.read_deadline(t(100)), Some(t0 + ms(100)));
        s.saw_bytes(t0 + ms(50));
        assert_eq!(
            s.read_deadline(t(100)),
            Some(t0 + ms(100)),
            "first byte does not extend"
        );
        s.begin();
        assert_eq!(s.read_deadline(t(100)), None, "no read deadline while busy");
        s.begin();
        s.end(t0 + ms(200));
        assert_eq!(
            s.read_deadline(t(100)),
            None,
            "still one request in progress"
        );
        s.end(t0 + ms(300));
        assert_eq!(s.read_deadline(t(100)), Some(t0 + ms(300 + 1000)), "idle");
        s.saw_bytes(t0 + ms(400));
        assert_eq!(
            s.read_deadline(t(100)),
            Some(t0 + ms(500)),
            "next request's head"
        );
        let huge = Timeouts {
            header: Duration::MAX,
            ..t(1)
        };
        assert_eq!(
            s.read_deadline(huge),
            None,
            "an unrepresentable deadline never fires"
        );
    }

    #[tokio::test]
    async fn h2_frames_between_requests_do_not_start_the_header_deadline() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let s = ConnState::new(t0);
        s.h2.store(true, Ordering::Relaxed);
        s.begin();
        s.end(t0 + ms(100));
        s.saw_bytes(t0 + ms(150));
        assert_eq!(s.read_deadline(t(100)), Some(t0 + ms(100 + 1000)), "idle");
    }

    #[tokio::test]
    async fn accept_backoff_is_bounded_and_resets() {
        let mut b = AcceptBackoff::new();
        let now = Instant::now();
        let emfile = io::Error::other("too many open files");
        let mut last = Duration::ZERO;
        for _ in 0..20 {
            let d = b.failed(&emfile, now).expect("a delay");
            assert!(d >= last && d >= BACKOFF_MIN && d <= BACKOFF_MAX);
            last = d;
        }
        assert_eq!(last, BACKOFF_MAX);
        b.succeeded();
        assert_eq!(b.failed(&emfile, now), Some(BACKOFF_MIN));
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(b.failed(&reset, now), None);
    }

    #[tokio::test]
    async fn log_gate_lets_one_through_per_interval() {
        let mut g = LogGate::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(g.allow(t0), Some(0));
        assert_eq!(g.allow(t0 + Duration::from_secs(1)), None);
        assert_eq!(g.allow(t0 + Duration::from_secs(2)), None);
        assert_eq!(g.allow(t0 + Duration::from_secs(11)), Some(2));
    }
}
