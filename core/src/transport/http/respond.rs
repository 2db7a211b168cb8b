//! Answering one request: one JSON body when the handler emits nothing, or a live SSE stream that
//! carries request-related messages AS THEY HAPPEN, then the response, then ends (HTTP-05,
//! LHTTP-04, LHTTP-08). The choice is made by racing the reply against the first queued message.
//!
//! Modern streams: the client closing the stream cancels the request (HTTP-08). Legacy streams:
//! disconnecting is not cancellation (LHTTP-04): a legacy request runs in its own task, so even a
//! client leaving before the answer is decided does not drop its handler, and events are kept
//! for `Last-Event-ID` replay. A legacy session POST quiet for one keep-alive interval switches
//! to SSE (its priming event makes it resumable); live SSE streams carry keep-alive comments
//! (HTTP-06).
//! Status codes follow REQUIREMENTS §0.6 / §0.7 (modern) and LHTTP (legacy).

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

use super::body::{self, Resp};
use super::server::Shared;
use super::sessions::Entry;
use super::sse;
use super::stream::Stream;
use crate::error::codes;
use crate::jsonrpc::Id;
use crate::server::{encode_reply, Reply, Session};

pub(crate) type ReplyFuture = Pin<Box<dyn Future<Output = Option<Reply>> + Send>>;

/// The per-request sink: a bounded queue of related messages, plus (legacy streams) a way for the
/// handler to close the SSE stream early so the client resumes it (`RequestContext::close_sse_stream`).
pub(crate) struct RequestSink {
    tx: mpsc::Sender<Vec<u8>>,
    close: Option<tokio_util::sync::CancellationToken>,
    /// The HTTP request's headers, for handlers (`RequestContext::http_headers`).
    headers: Option<Arc<http::HeaderMap>>,
}

impl RequestSink {
    /// A sink and its receiving end; `headers` those of the HTTP request the sink answers
    /// (shared, never copied: one map per HTTP request, moved out of the request, serves every
    /// sink of a batch). Nothing closes its stream early.
    pub(crate) fn new(
        cap: usize,
        headers: Option<Arc<http::HeaderMap>>,
    ) -> (Arc<Self>, mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = mpsc::channel(cap);
        let sink = Self {
            tx,
            close: None,
            headers,
        };
        (Arc::new(sink), rx)
    }

    /// [`RequestSink::new`] for a legacy session stream the handler may close early: the token
    /// is cancelled when it does.
    pub(crate) fn closable(
        cap: usize,
        headers: Option<Arc<http::HeaderMap>>,
    ) -> (
        Arc<Self>,
        mpsc::Receiver<Vec<u8>>,
        tokio_util::sync::CancellationToken,
    ) {
        let (tx, rx) = mpsc::channel(cap);
        let close = tokio_util::sync::CancellationToken::new();
        let sink = Self {
            tx,
            close: Some(close.clone()),
            headers,
        };
        (Arc::new(sink), rx, close)
    }
}

/// Resolves when `close` is cancelled; never without one.
async fn closed(close: Option<&tokio_util::sync::CancellationToken>) {
    match close {
        Some(c) => c.cancelled().await,
        None => std::future::pending().await,
    }
}

impl crate::transport::Outbound for RequestSink {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        self.tx.try_send(frame).is_ok()
    }
    fn close_stream(&self) -> bool {
        match &self.close {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
    fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.headers.as_deref()
    }
}

/// A started request: its reply future and the queue its related messages land in.
pub(crate) struct Pending {
    pub id: Id,
    pub fut: ReplyFuture,
    pub rx: mpsc::Receiver<Vec<u8>>,
    pub session: Arc<Session>,
    /// Cancelled when the handler asks to close its (legacy) SSE stream early; `None` when
    /// nothing can.
    pub close: Option<tokio_util::sync::CancellationToken>,
}

impl Pending {
    /// The request of a session made for it alone (nothing closes its stream early).
    pub(crate) fn alone(
        id: Id,
        fut: ReplyFuture,
        rx: mpsc::Receiver<Vec<u8>>,
        session: Arc<Session>,
    ) -> Self {
        Self {
            id,
            fut,
            rx,
            session,
            close: None,
        }
    }
}

/// Which stream rules apply to an answer: the modern era's, a legacy session's, or stateless
/// legacy's (an HTTP answering mode; the era itself is [`crate::protocol::Era`]).
pub(crate) enum Mode {
    Modern,
    Legacy(Arc<Entry>),
    /// Legacy traffic in stateless mode: legacy statuses, a plain stream without event ids.
    LegacyStateless,
}

/// §0.6 / §0.7: pre-dispatch protocol errors are 400 (404 for an unknown method); handler
/// results and handler-raised errors are 200, except -32021 which is always 400.
pub(crate) fn modern_status(reply: &Reply) -> StatusCode {
    let Err(e) = &reply.result else {
        return StatusCode::OK;
    };
    if crate::backplane::is_unavailable(e) {
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    match e.code {
        codes::MISSING_REQUIRED_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        codes::METHOD_NOT_FOUND if reply.pre_dispatch => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | codes::HEADER_MISMATCH
        | codes::UNSUPPORTED_PROTOCOL_VERSION
            if reply.pre_dispatch =>
        {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// Legacy: malformed or out-of-order requests (including a duplicate `initialize`) are 400;
/// everything else travels in-band with 200.
pub(crate) fn legacy_status(reply: &Reply) -> StatusCode {
    match &reply.result {
        Err(e) if e.code == codes::INVALID_REQUEST || e.code == codes::PARSE_ERROR => {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// A reply as one JSON body.
pub(crate) fn json_reply(id: &Id, reply: &Reply, mode: &Mode) -> Resp {
    let status = match mode {
        Mode::Modern => modern_status(reply),
        Mode::Legacy(_) | Mode::LegacyStateless => legacy_status(reply),
    };
    let resp = body::json(status, encode_reply(id, reply));
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return body::retry_after(resp);
    }
    resp
}

enum Started {
    Done(Option<Reply>),
    Running(ReplyFuture),
}

/// Serve a started request (see the module docs).
pub(crate) async fn answer(shared: &Arc<Shared>, p: Pending, mode: Mode) -> Resp {
    match mode {
        Mode::Modern => answer_modern(shared, p).await,
        legacy => {
            // LHTTP-04: disconnection is not cancellation. The request runs in its own task, so
            // a client that goes away before the answer is even decided (hyper then drops this
            // future) does not drop the handler with it.
            let (tx, rx) = oneshot::channel();
            shared
                .tracker
                .spawn(legacy_task(shared.clone(), p, legacy, tx));
            rx.await
                .unwrap_or_else(|_| body::status(StatusCode::SERVICE_UNAVAILABLE))
        }
    }
}

async fn answer_modern(shared: &Arc<Shared>, p: Pending) -> Resp {
    let Pending {
        id,
        fut,
        mut rx,
        session,
        close: _,
    } = p;
    let stop = shared.hard_stop.clone();
    // HTTP-08 also while the answer is still undecided: if hyper drops this future because the
    // client went away, the guard cancels the request and drains its handler in a task of its
    // own (see `AbandonGuard`).
    let mut guard = AbandonGuard {
        tracker: shared.tracker.clone(),
        session: session.clone(),
        id: id.clone(),
        fut,
        armed: true,
    };
    let decided = tokio::select! {
        biased;
        r = &mut guard.fut => Decided::Reply(r),
        Some(first) = rx.recv() => Decided::Stream(Some(first)),
        () = stop.cancelled() => Decided::Stop,
    };
    let fut = guard.disarm();
    let (first, state) = match decided {
        Decided::Reply(r) => match rx.try_recv() {
            Ok(first) => (first, Started::Done(r)),
            Err(_) => {
                return match r {
                    Some(r) => json_reply(&id, &r, &Mode::Modern),
                    // Cancelled by the shutdown itself rather than seen here first.
                    None if stop.is_cancelled() => shutting_down(&id),
                    None => body::status(StatusCode::SERVICE_UNAVAILABLE),
                };
            }
        },
        Decided::Stream(Some(first)) => (first, Started::Running(fut)),
        // The hard deadline passed: the request is cut, not drained. (`Stream(None)` and
        // `Gone` are legacy outcomes only.)
        Decided::Stop | Decided::Stream(None) | Decided::Gone => {
            session.cancel_request(&id);
            return shutting_down(&id);
        }
    };
    let (tx, brx) = mpsc::channel::<Bytes>(32);
    let _ = tx.try_send(sse::event(None, &first));
    let pace = Pace::new(shared);
    shared
        .tracker
        .spawn(plain_pump(state, rx, tx, session, id, pace, true));
    body::sse(brx)
}

/// The answer to a request still running when the shutdown deadline passed: 503 with a
/// JSON-RPC error for its id, so the client learns what became of it (a bare 503 says nothing).
fn shutting_down(id: &Id) -> Resp {
    body::rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        Some(id),
        &crate::error::ErrorObject::server_shutting_down(),
    )
}

/// How an answer was decided.
enum Decided {
    /// The handler finished first.
    Reply(Option<Reply>),
    /// A related message (or the handler closing its stream) came first: answer with SSE.
    Stream(Option<Vec<u8>>),
    /// The client went away before anything was sent.
    Gone,
    /// The hard shutdown deadline passed.
    Stop,
}

/// A legacy request, in its own task: decide JSON or SSE, hand the response head to the HTTP
/// side through `answer`, then keep the request running whatever happens to the connection.
async fn legacy_task(
    shared: Arc<Shared>,
    p: Pending,
    mode: Mode,
    mut answer: oneshot::Sender<Resp>,
) {
    let Pending {
        id,
        mut fut,
        mut rx,
        session,
        close,
    } = p;
    let stop = shared.hard_stop.clone();
    let resumable = matches!(mode, Mode::Legacy(_));
    let decided = tokio::select! {
        biased;
        r = &mut fut => Decided::Reply(r),
        Some(first) = rx.recv() => Decided::Stream(Some(first)),
        () = closed(close.as_ref()), if resumable => Decided::Stream(None),
        // Quiet for a keep-alive interval: commit to SSE so the priming event makes the
        // request resumable (LHTTP-04) and keep-alives can flow.
        () = tick(shared.opts.keepalive), if resumable => Decided::Stream(None),
        () = stop.cancelled() => Decided::Stop,
        () = answer.closed() => Decided::Gone,
    };
    let (first, state, gone) = match decided {
        Decided::Stop => {
            session.cancel_request(&id);
            let _ = answer.send(shutting_down(&id));
            return;
        }
        Decided::Reply(r) => match rx.try_recv() {
            Ok(first) => (Some(first), Started::Done(r), false),
            Err(_) => return send_legacy_json(&id, r, &mode, &stop, answer),
        },
        Decided::Stream(first) => (first, Started::Running(fut), false),
        Decided::Gone => (None, Started::Running(fut), true),
    };
    match mode {
        Mode::Legacy(entry) => {
            let stream = open_legacy_stream(&shared, &entry, first.as_deref(), gone, answer);
            let pace = Pace::new(&shared);
            legacy_pump(state, rx, stream, session, id, pace, close).await;
        }
        Mode::LegacyStateless | Mode::Modern => {
            let tx = open_plain_stream(first.as_deref(), gone, answer);
            let pace = Pace::new(&shared);
            plain_pump(state, rx, tx, session, id, pace, false).await;
        }
    }
}

/// A legacy request whose handler finished before anything else was queued: one JSON body.
fn send_legacy_json(
    id: &Id,
    r: Option<Reply>,
    mode: &Mode,
    stop: &tokio_util::sync::CancellationToken,
    answer: oneshot::Sender<Resp>,
) {
    let resp = match r {
        Some(r) => json_reply(id, &r, mode),
        // Cancelled by the shutdown itself rather than seen here first.
        None if stop.is_cancelled() => shutting_down(id),
        None => body::status(StatusCode::SERVICE_UNAVAILABLE),
    };
    if answer.send(resp).is_err() {
        tracing::debug!(?id, "legacy client left before its JSON answer");
    }
}

/// Open a legacy session's resumable SSE stream, queue `first` on it and hand its head to the
/// client (unless the client is `gone`). Returns the stream the pump writes to.
fn open_legacy_stream(
    shared: &Shared,
    entry: &Entry,
    first: Option<&[u8]>,
    gone: bool,
    answer: oneshot::Sender<Resp>,
) -> Arc<Stream> {
    let (stream, brx) = entry.open_stream(shared.opts.replay_buffer, shared.opts.sse_retry_ms);
    if let Some(first) = first {
        stream.push(first);
    }
    let mut r = body::sse(brx);
    if let Ok(v) = HeaderValue::from_str(entry.sid()) {
        r.headers_mut().insert(super::headers::SESSION_ID, v);
    }
    let delivered = if gone {
        drop(r);
        false
    } else {
        answer.send(r).is_ok()
    };
    if !delivered {
        // Nobody reads it now; events stay in the stream's replay buffer.
        stream.detach();
    }
    stream
}

/// Open a plain SSE stream (no event ids), queue `first` on it and hand its head to the client
/// (unless the client is `gone`). Returns the sender the pump writes to.
fn open_plain_stream(
    first: Option<&[u8]>,
    gone: bool,
    answer: oneshot::Sender<Resp>,
) -> mpsc::Sender<Bytes> {
    let (tx, brx) = mpsc::channel::<Bytes>(32);
    if let Some(first) = first {
        let _ = tx.try_send(sse::event(None, first));
    }
    let resp = body::sse(brx);
    if gone {
        drop(resp);
    } else {
        // On failure the body (and its receiver) is dropped; the pump sees it closed.
        let _ = answer.send(resp);
    }
    tx
}

/// The hard-stop token and the keep-alive interval of a running stream.
struct Pace {
    stop: tokio_util::sync::CancellationToken,
    keepalive: Option<std::time::Duration>,
}

impl Pace {
    fn new(shared: &Shared) -> Self {
        Self {
            stop: shared.hard_stop.clone(),
            keepalive: shared.opts.keepalive,
        }
    }
}

/// A stream without event ids (modern, stateless legacy). `cancel_on_close`: the client
/// closing it cancels the request (HTTP-08, modern); otherwise the handler runs to completion
/// and what it sends is dropped (LHTTP-04: disconnection is not cancellation).
async fn plain_pump(
    state: Started,
    mut rx: mpsc::Receiver<Vec<u8>>,
    tx: mpsc::Sender<Bytes>,
    session: Arc<Session>,
    id: Id,
    pace: Pace,
    cancel_on_close: bool,
) {
    let Pace { stop, keepalive } = pace;
    let mut gone = false;
    let reply = match state {
        Started::Done(r) => r,
        Started::Running(mut fut) => loop {
            tokio::select! {
                biased;
                () = tx.closed(), if !gone => {
                    if cancel_on_close {
                        return cancel_and_drain(&session, &id, fut).await;
                    }
                    gone = true;
                }
                () = stop.cancelled() => return cancel_and_drain(&session, &id, fut).await,
                r = &mut fut => break r,
                () = tick(keepalive), if !gone => {
                    let _ = tx.try_send(sse::keepalive());
                }
                Some(m) = rx.recv() => {
                    if !gone && tx.send(sse::event(None, &m)).await.is_err() {
                        if cancel_on_close {
                            return cancel_and_drain(&session, &id, fut).await;
                        }
                        gone = true;
                    }
                }
            }
        },
    };
    if gone {
        return;
    }
    while let Ok(m) = rx.try_recv() {
        if tx.send(sse::event(None, &m)).await.is_err() {
            return;
        }
    }
    if let Some(r) = reply {
        let _ = tx.send(sse::event(None, &encode_reply(&id, &r))).await;
    }
}

async fn legacy_pump(
    state: Started,
    mut rx: mpsc::Receiver<Vec<u8>>,
    stream: Arc<Stream>,
    session: Arc<Session>,
    id: Id,
    pace: Pace,
    close: Option<tokio_util::sync::CancellationToken>,
) {
    let Pace { stop, keepalive } = pace;
    let mut detached = false;
    let reply = match state {
        Started::Done(r) => r,
        Started::Running(mut fut) => loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => {
                    cancel_and_drain(&session, &id, fut).await;
                    break None;
                }
                () = closed(close.as_ref()), if !detached => {
                    // SSE polling: end this response now; the rest is replayed on resumption.
                    stream.detach();
                    detached = true;
                }
                r = &mut fut => break r,
                () = tick(keepalive) => { stream.ping(None); }
                Some(m) = rx.recv() => { stream.push(&m); }
            }
        },
    };
    while let Ok(m) = rx.try_recv() {
        stream.push(&m);
    }
    if let Some(r) = reply {
        stream.push(&encode_reply(&id, &r));
    }
    stream.finish();
}

/// Sleep one keep-alive interval, or forever when keep-alives are off.
pub(crate) async fn tick(every: Option<std::time::Duration>) {
    match every {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

/// Cancel a running request and let its handler observe the cancellation and clean up, bounded
/// by the server's shutdown grace; whatever it answers is discarded.
async fn cancel_and_drain(session: &Session, id: &Id, fut: ReplyFuture) {
    session.cancel_request(id);
    let grace = session.server.limits().shutdown_grace;
    let _ = tokio::time::timeout(grace, fut).await;
}

/// A modern request whose answer is not decided yet. Dropped armed (hyper dropped the service
/// future: the client closed its connection before the first byte of the answer), it cancels
/// the request (HTTP-08: closing the stream is the cancellation) and hands the handler's
/// future to a task of its own that drains it within the shutdown grace, exactly as a close
/// after the first SSE byte does (`plain_pump`). Cancelling the token alone is not enough: the
/// handler's future is owned here, so dropping it with the guard would cut the handler off
/// before it ever observed the cancellation (no cleanup, and any work it spawned would only
/// learn of it by accident).
struct AbandonGuard {
    tracker: tokio_util::task::TaskTracker,
    session: Arc<Session>,
    id: Id,
    fut: ReplyFuture,
    armed: bool,
}

impl AbandonGuard {
    /// The answer is decided: the caller owns the request from here, with its future (still
    /// running, or finished when the reply came first).
    fn disarm(&mut self) -> ReplyFuture {
        self.armed = false;
        std::mem::replace(&mut self.fut, Box::pin(std::future::pending()))
    }
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let fut = std::mem::replace(&mut self.fut, Box::pin(std::future::pending()));
        // Cancelled at once, whether or not the drain below ever runs (a runtime shutting
        // down drops new tasks unpolled): work the handler spawned sees it too. Outside a
        // runtime (a mounted service dropped during the runtime's own teardown) there is
        // nowhere to drain.
        self.session.cancel_request(&self.id);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (session, id) = (self.session.clone(), self.id.clone());
            self.tracker.spawn_on(
                async move { cancel_and_drain(&session, &id, fut).await },
                &rt,
            );
        }
    }
}
