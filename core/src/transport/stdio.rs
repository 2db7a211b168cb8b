//! The stdio server transport (REQUIREMENTS STDIO-01…04; seeds: frame cap, non-object frames,
//! final frame without newline).
//!
//! Frames are newline-delimited and capped (default 4 MiB). Requests run concurrently (a slow tool
//! never delays a `ping`). Responses and notifications are written by one writer task that
//! batches whatever is queued before each flush. On EOF the server stops reading, lets in-flight
//! requests finish within the grace period (then cancels them), flushes and returns. When stdin
//! runs dry the reader polls a little longer before sleeping ([`crate::Limits::stdio_idle_spin`]).

use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio_util::task::TaskTracker;

use super::outq::{self, OutQueue, OutRx};
use super::spin::SpinRead;
use super::Outbound;
use crate::error::ErrorObject;
use crate::jsonrpc::codec::{FrameError, FrameReader};
use crate::jsonrpc::{classify, encode_error, parse_frame, Incoming, ParsedFrame};
use crate::server::{encode_reply, Server, Session, SessionKind};

/// Why serving stdio stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StdioError {
    /// A frame crossed the size cap; it was reported and the connection closed.
    #[error("frame exceeds {0} bytes")]
    FrameTooLarge(usize),
    /// Reading failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A limit is out of range.
    #[error("{0}")]
    Limit(#[from] crate::limits::LimitError),
}

/// Serve `server` on this process's stdin/stdout until EOF ([`Server::serve_stdio`] is the
/// usual way to call it).
///
/// When stdin/stdout are pipes (the way MCP clients launch servers) they are driven by the
/// runtime's I/O reactor (see [`stdio_streams`]); the connection runs as a spawned task, so
/// reading, dispatch and writing share the runtime's workers instead of handing every frame
/// across threads. Run it on a Tokio runtime with I/O and time enabled (`enable_all`).
///
/// # Errors
/// See [`StdioError`].
pub async fn serve_stdio(server: &Server) -> Result<(), StdioError> {
    serve_stdio_until(server, std::future::pending()).await
}

/// [`serve_stdio`] that also stops reading when `stop` completes, exactly as on EOF: in-flight
/// requests finish within the grace period (then are cancelled), answers are flushed, and the
/// call returns `Ok`. Embedders (the C ABI's `mcp_server_shutdown`) use it for a draining
/// shutdown.
///
/// # Errors
/// See [`StdioError`].
pub async fn serve_stdio_until<F>(server: &Server, stop: F) -> Result<(), StdioError>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    // As over HTTP: serve only once the backplane is up (bounded by its connect timeout).
    server
        .backplane_ready()
        .await
        .map_err(|e| StdioError::Io(std::io::Error::new(std::io::ErrorKind::NotConnected, e)))?;
    let (reader, writer) = stdio_streams();
    let server = server.clone();
    let served = tokio::spawn(async move { serve_io_until(&server, reader, writer, stop).await });
    let served = served.await;
    // The process's own stdio: it usually exits next, so what it recorded is exported now
    // (bounded by `stopFlushMs`), after the answers were written. Not for every byte stream
    // served ([`serve_io`]): an in-process connection's end is not the process's.
    crate::telemetry::flush_on_stop().await;
    match served {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(StdioError::Io(std::io::Error::other(
            "the stdio connection task was cancelled",
        ))),
    }
}

type StdioReader = Box<dyn AsyncRead + Unpin + Send>;
type StdioWriter = Box<dyn AsyncWrite + Unpin + Send>;

/// This process's stdin and stdout as async streams.
///
/// Tokio's `stdin()`/`stdout()` run every read and write on the blocking thread pool, which
/// costs two thread hand-offs per message. On Linux, a stream that is a pipe is instead reopened
/// through `/proc/self/fd` in non-blocking mode: that is a new open file description, so the
/// process's own fd 0/1 (and any child that inherits them) keep their blocking mode. Anything
/// else (a terminal, a file, `/dev/null`, another OS) falls back to Tokio's handles.
/// Must be called inside a Tokio runtime with I/O enabled.
pub fn stdio_streams() -> (StdioReader, StdioWriter) {
    (pipe_reader(), pipe_writer())
}

#[cfg(target_os = "linux")]
fn pipe_reader() -> StdioReader {
    match tokio::net::unix::pipe::OpenOptions::new().open_receiver("/proc/self/fd/0") {
        Ok(rx) => Box::new(rx),
        Err(e) => {
            tracing::debug!(error = %e, "stdin is not a reopenable pipe; using blocking reads");
            Box::new(tokio::io::stdin())
        }
    }
}

#[cfg(target_os = "linux")]
fn pipe_writer() -> StdioWriter {
    // Without readers, opening a FIFO for writing fails (ENXIO) rather than blocking.
    match tokio::net::unix::pipe::OpenOptions::new().open_sender("/proc/self/fd/1") {
        Ok(tx) => Box::new(tx),
        Err(e) => {
            tracing::debug!(error = %e, "stdout is not a reopenable pipe; using blocking writes");
            Box::new(tokio::io::stdout())
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn pipe_reader() -> StdioReader {
    Box::new(tokio::io::stdin())
}

#[cfg(not(target_os = "linux"))]
fn pipe_writer() -> StdioWriter {
    Box::new(tokio::io::stdout())
}

/// Serve `server` on any byte streams with stdio framing.
///
/// # Errors
/// See [`StdioError`].
pub async fn serve_io<R, W>(server: &Server, reader: R, writer: W) -> Result<(), StdioError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_io_until(server, reader, writer, std::future::pending()).await
}

/// [`serve_io`] that stops reading when `stop` completes and then shuts down as on EOF (in-flight
/// requests drain within the grace period). A frame being read at that moment is dropped.
///
/// # Errors
/// See [`StdioError`].
pub async fn serve_io_until<R, W, F>(
    server: &Server,
    reader: R,
    writer: W,
    stop: F,
) -> Result<(), StdioError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
    F: std::future::Future<Output = ()> + Send,
{
    let mut stop = std::pin::pin!(stop);
    let limits = server.limits().clone();
    let mut frames = FrameReader::new(
        BufReader::with_capacity(64 * 1024, SpinRead::new(reader, limits.stdio_idle_spin)),
        limits.max_message_bytes,
    )?;
    let (tx, rx) = outq::channel(limits.max_outbound_queue, limits.max_outbound_bytes);
    let answering = Arc::new(AtomicUsize::new(0));
    // Fired by the writer when stdout is gone (EPIPE): nothing more can reach the peer, so
    // reading on would only serve requests whose answers are thrown away, for as long as the
    // peer keeps writing.
    let stdout_gone = tokio_util::sync::CancellationToken::new();
    let writer_task = tokio::spawn(write_loop(
        writer,
        rx,
        answering.clone(),
        stdout_gone.clone(),
    ));
    let sink: Arc<dyn Outbound> = Arc::new(tx.clone());
    let session = server.new_session(SessionKind::Stdio, sink.clone());
    let tracker = TaskTracker::new();
    let conn = Conn {
        session: session.clone(),
        sink: sink.clone(),
        tx: tx.clone(),
        tracker: tracker.clone(),
        answering,
    };

    let mut outcome = Ok(());
    loop {
        let next = tokio::select! {
            biased;
            () = &mut stop => break,
            () = stdout_gone.cancelled() => break,
            next = read_when_writable(&tx, &mut frames) => next,
        };
        match next {
            Ok(Some(frame)) => {
                conn.on_frame(frame, limits.max_json_depth, limits.max_batch_len)
                    .await
            }
            Ok(None) => break,
            Err(FrameError::TooLarge { limit }) => {
                tracing::error!(
                    limit,
                    "inbound frame exceeds the size limit; closing the connection"
                );
                let err = ErrorObject::invalid_request(format!("message exceeds {limit} bytes"));
                tx.send(encode_error(None, &err)).await;
                outcome = Err(StdioError::FrameTooLarge(limit));
                break;
            }
            Err(FrameError::Io(e)) => {
                outcome = Err(StdioError::Io(e));
                break;
            }
        }
    }
    drop(frames);
    drain(&tracker, &session, &limits, stdout_gone.is_cancelled()).await;
    drop(conn);
    drop(session);
    drop(sink);
    drop(tx);
    let _ = tokio::time::timeout(Duration::from_secs(5), writer_task).await;
    outcome
}

/// Let the requests in flight finish (STDIO-04: within `shutdown_grace`, then cancelled). When
/// stdout is gone no answer can be delivered any more, so they are cancelled at once instead.
pub(super) async fn drain(
    tracker: &TaskTracker,
    session: &Session,
    limits: &crate::Limits,
    stdout_gone: bool,
) {
    tracker.close();
    if stdout_gone {
        tracing::warn!("stdout closed by the peer; cancelling in-flight requests and stopping");
        session.cancel_all();
    }
    if tokio::time::timeout(limits.shutdown_grace, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            "in-flight requests did not finish within the grace period; cancelling them"
        );
        session.cancel_all();
        let _ = tokio::time::timeout(Duration::from_secs(1), tracker.wait()).await;
    }
}

/// Output backpressure (STDIO-01): the next frame is read only while the outbound queue has
/// room. A peer that stops reading our stdout fills the pipe, then the queue
/// (`Limits::max_outbound_queue` messages or `Limits::max_outbound_bytes`); from then on we stop
/// reading its input, so its own writes block instead of our memory growing. Answers of requests
/// already running are still queued, so what is held stays bounded by the queue plus
/// `Limits::max_inflight` running requests.
async fn read_when_writable<'f, R: tokio::io::AsyncBufRead + Unpin>(
    tx: &OutQueue,
    frames: &'f mut FrameReader<R>,
) -> Result<Option<&'f [u8]>, FrameError> {
    tx.writable().await;
    frames.next_frame().await
}

struct Conn {
    session: Arc<Session>,
    sink: Arc<dyn Outbound>,
    tx: OutQueue,
    tracker: TaskTracker,
    /// Spawned request tasks that have not produced their answer yet (see [`write_loop`]).
    answering: Arc<AtomicUsize>,
}

/// Counts one spawned request task in [`Conn::answering`] until it is dropped.
struct Answering(Arc<AtomicUsize>);

impl Answering {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Conn {
    async fn send(&self, frame: Vec<u8>) {
        self.tx.send(frame).await;
    }

    async fn on_frame(&self, frame: &[u8], max_depth: usize, max_batch: usize) {
        match parse_frame(frame, max_depth) {
            ParsedFrame::Error(e) => self.send(encode_error(None, &e)).await,
            ParsedFrame::Single(v) => self.on_value(v).await,
            ParsedFrame::Batch(items) => self.on_batch(items, max_batch).await,
        }
    }

    async fn on_value(&self, v: Value) {
        match classify(v) {
            Incoming::Request { id, method, params } => {
                match self
                    .session
                    .start_request(id.clone(), method, params, self.sink.clone())
                {
                    Ok(fut) => {
                        let tx = self.tx.clone();
                        let answering = Answering::new(&self.answering);
                        // Boxed before it is spawned: a request's future is some 2 KB, and
                        // spawning moves what it is given several times on its way into the
                        // task (tracker, spawn, task cell); a box moves as a pointer. Chained
                        // with `then`, not awaited in an `async` block: a block that awaits a
                        // future it captured holds it twice (the capture and the awaited
                        // copy), twice the box and one more copy of it on the first poll.
                        let answered =
                            futures_util::FutureExt::then(fut, move |reply| async move {
                                drop(answering);
                                if let Some(reply) = reply {
                                    tx.send(encode_reply(&id, &reply)).await;
                                }
                            });
                        self.tracker.spawn(Box::pin(answered));
                    }
                    Err(reply) => self.send(encode_reply(&id, &reply)).await,
                }
            }
            Incoming::Notification { method, params } => {
                self.session.handle_notification(&method, params.as_ref())
            }
            Incoming::Response { id, outcome } => {
                self.session.deliver_response(&id, outcome);
            }
            Incoming::Invalid { id, error } => self.send(encode_error(id.as_ref(), &error)).await,
        }
    }

    /// JSON-RPC batches (JR-06): answered per element only where the negotiated version allows
    /// them (2025-03-26); otherwise the whole array is one -32600.
    async fn on_batch(&self, items: Vec<Value>, max_batch: usize) {
        match start_batch(&self.session, &self.sink, &self.tracker, items, max_batch) {
            Batch::Nothing => {}
            Batch::Refused(frame) => self.send(frame).await,
            Batch::Started(answers) => {
                let tx = self.tx.clone();
                let answering = Answering::new(&self.answering);
                self.tracker.spawn(async move {
                    let _answering = answering;
                    if let Some(frame) = finish_batch(answers).await {
                        tx.send(frame).await;
                    }
                });
            }
        }
    }
}

/// A batch once its synchronous part ran (see [`start_batch`]).
pub(super) enum Batch {
    /// Notifications and responses only: nothing to answer.
    Nothing,
    /// The whole array is refused with this error frame.
    Refused(Vec<u8>),
    /// Each element's answer, ready or running; [`finish_batch`] joins them.
    Started(Vec<Answer>),
}

/// The synchronous part of a batch (JR-06): checks, then each element started in order
/// (requests spawned on `tracker`, notifications and responses handled now).
pub(super) fn start_batch(
    session: &Arc<Session>,
    sink: &Arc<dyn Outbound>,
    tracker: &TaskTracker,
    items: Vec<Value>,
    max_batch: usize,
) -> Batch {
    if items.is_empty() {
        return Batch::Refused(encode_error(
            None,
            &ErrorObject::invalid_request("empty batch"),
        ));
    }
    if !session.allows_batch() {
        let e = ErrorObject::invalid_request(
            "batches are not supported by the negotiated protocol version",
        );
        return Batch::Refused(encode_error(None, &e));
    }
    if items.len() > max_batch {
        let e = ErrorObject::invalid_request(format!("batch exceeds {max_batch} messages"));
        return Batch::Refused(encode_error(None, &e));
    }
    let mut answers: Vec<Answer> = Vec::with_capacity(items.len());
    for item in items {
        match classify(item) {
            Incoming::Request { id, method, params } => {
                match session.start_request(id.clone(), method, params, sink.clone()) {
                    // Boxed before it is spawned, as in `Conn::on_value`.
                    Ok(fut) => answers.push(Answer::Pending(id, tracker.spawn(Box::pin(fut)))),
                    Err(reply) => answers.push(Answer::Ready(encode_reply(&id, &reply))),
                }
            }
            Incoming::Notification { method, params } => {
                session.handle_notification(&method, params.as_ref());
            }
            Incoming::Response { id, outcome } => {
                session.deliver_response(&id, outcome);
            }
            Incoming::Invalid { id, error } => {
                answers.push(Answer::Ready(encode_error(id.as_ref(), &error)))
            }
        }
    }
    if answers.is_empty() {
        Batch::Nothing
    } else {
        Batch::Started(answers)
    }
}

/// The batch's answer array once every element answered; `None` when all were cancelled.
pub(super) async fn finish_batch(answers: Vec<Answer>) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(answers.len());
    for a in answers {
        match a {
            Answer::Ready(b) => out.push(b),
            Answer::Pending(id, h) => {
                if let Ok(Some(reply)) = h.await {
                    out.push(encode_reply(&id, &reply));
                }
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    let mut frame = Vec::with_capacity(out.iter().map(Vec::len).sum::<usize>() + out.len() + 1);
    frame.push(b'[');
    for (i, b) in out.iter().enumerate() {
        if i > 0 {
            frame.push(b',');
        }
        frame.extend_from_slice(b);
    }
    frame.push(b']');
    Some(frame)
}

pub(super) enum Answer {
    Ready(Vec<u8>),
    Pending(
        crate::jsonrpc::Id,
        tokio::task::JoinHandle<Option<crate::server::Reply>>,
    ),
}

/// One writer: each message on its own line; whatever is queued is written before one flush.
///
/// When other request tasks are still working (`answering`), the writer yields once after the
/// first message of a burst, so tasks that are already runnable (a pipelined burst) queue their
/// answers first and share one write system call instead of one each. A lone request (the
/// sequential case) is written at once, without the extra scheduler turn.
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: OutRx,
    answering: Arc<AtomicUsize>,
    gone: tokio_util::sync::CancellationToken,
) {
    let mut w = BufWriter::with_capacity(64 * 1024, writer);
    while let Some(first) = rx.recv().await {
        if answering.load(Ordering::Relaxed) > 0 {
            tokio::task::yield_now().await;
        }
        let mut msg = first;
        loop {
            if w.write_all(&msg).await.is_err() || w.write_all(b"\n").await.is_err() {
                tracing::warn!("stdout closed; dropping outbound messages");
                rx.close();
                gone.cancel();
                return;
            }
            match rx.try_recv() {
                Some(next) => msg = next,
                None => break,
            }
        }
        if w.flush().await.is_err() {
            rx.close();
            gone.cancel();
            return;
        }
    }
    let _ = w.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::era::{KEY_CLIENT_CAPABILITIES, KEY_PROTOCOL_VERSION};
    use crate::{handler_fn, CallToolResult, HandlerError, Tool};
    use serde_json::json;
    use std::sync::Mutex;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// `serve_io_until`: once `stop` fires, reading stops, but a request already in flight is
    /// still answered before the call returns (draining shutdown).
    #[tokio::test]
    async fn stop_drains_in_flight_requests() {
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let started = Arc::new(Mutex::new(Some(started_tx)));
        let server = Server::builder("t", "1")
            .tool(
                Tool::new("slow"),
                handler_fn(move |_ctx, _args: Value| {
                    let started = started.clone();
                    async move {
                        if let Some(tx) = started.lock().ok().and_then(|mut g| g.take()) {
                            let _ = tx.send(());
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        Ok::<_, HandlerError>(CallToolResult::text("drained"))
                    }
                }),
            )
            .build()
            .expect("server");
        let (mut client_w, server_r) = tokio::io::duplex(64 * 1024);
        let (server_w, client_r) = tokio::io::duplex(64 * 1024);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            serve_io_until(&server, server_r, server_w, async {
                let _ = stop_rx.await;
            })
            .await
        });
        let mut meta = serde_json::Map::new();
        meta.insert(KEY_PROTOCOL_VERSION.into(), json!("2026-07-28"));
        meta.insert(KEY_CLIENT_CAPABILITIES.into(), json!({}));
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}, "_meta": meta}});
        client_w
            .write_all(format!("{req}\n").as_bytes())
            .await
            .expect("write");
        tokio::time::timeout(Duration::from_secs(10), started_rx)
            .await
            .expect("the handler started")
            .expect("started");
        stop_tx.send(()).expect("stop");
        let mut lines = tokio::io::BufReader::new(client_r).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer in time")
            .expect("read")
            .expect("a line");
        let v: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(v["id"], 1, "{v}");
        assert_eq!(v["result"]["content"][0]["text"], "drained", "{v}");
        let outcome = tokio::time::timeout(Duration::from_secs(10), serving)
            .await
            .expect("serving returned")
            .expect("join");
        assert!(outcome.is_ok(), "{outcome:?}");
    }
}
