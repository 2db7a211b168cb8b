//! Newline-delimited JSON-RPC over any pair of byte streams (REQUIREMENTS STDIO-01…03; seeds:
//! frame cap, non-object frames): the framing the stdio transport speaks to a child process,
//! shared with [`IoTransport`] for streams the caller supplies and the in-memory pair of
//! `Client::connect_in_memory`.
//!
//! An over-limit frame leaves the stream beyond recovery, so reading stops and the peer is told
//! the transport closed; non-object frames, id-less non-notification frames and unparsable lines
//! are skipped.

use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex as AsyncMutex;
use tokio::task::JoinHandle;

use super::{BoxFut, ClientTransport, Inbound, InboundTx, OutMsg, WireState};
use crate::client::error::ClientError;
use crate::jsonrpc::codec::{FrameError, FrameReader};
use crate::jsonrpc::{parse_frame, ParsedFrame};

/// The writing half, boxed (a child's stdin, one half of a duplex pipe, a socket).
pub(crate) type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Read buffer in front of the frame reader (a pipe's default capacity on Linux).
const READ_BUFFER: usize = 64 * 1024;

/// The framing over one reader and one writer: a task reads frames into the inbound queue,
/// [`Framed::send`] writes one frame per message.
pub(crate) struct Framed {
    writer: AsyncMutex<Option<BoxWriter>>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl Framed {
    /// Start reading `reader` into `inbound`; frames are capped at `max_bytes` and parsed to at
    /// most `max_depth` levels.
    pub fn start<R>(
        reader: R,
        writer: BoxWriter,
        max_bytes: usize,
        max_depth: usize,
        inbound: InboundTx,
    ) -> Result<Self, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
    {
        let frames = FrameReader::new(BufReader::with_capacity(READ_BUFFER, reader), max_bytes)
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
        let task = tokio::spawn(read_loop(frames, max_depth, inbound));
        Ok(Self {
            writer: AsyncMutex::new(Some(writer)),
            reader: Mutex::new(Some(task)),
        })
    }

    /// Write one message as one line.
    pub async fn send(&self, msg: OutMsg) -> Result<(), ClientError> {
        let mut frame = msg.encode();
        frame.push(b'\n');
        let mut guard = self.writer.lock().await;
        let Some(w) = guard.as_mut() else {
            return Err(ClientError::Closed("the transport is closed".into()));
        };
        if w.write_all(&frame).await.is_ok() && w.flush().await.is_ok() {
            Ok(())
        } else {
            guard.take();
            Err(ClientError::Closed(
                "writing to the server failed (process exited?)".into(),
            ))
        }
    }

    /// Close the writing side, so the server reads EOF (STDIO-04). A shutdown, not only a drop:
    /// one half of a split duplex stream signals EOF only when shut down.
    pub async fn close_writer(&self) {
        let w = self.writer.lock().await.take();
        if let Some(mut w) = w {
            let _ = w.shutdown().await;
        }
    }

    /// Stop reading (whatever the server still sends is dropped).
    pub fn stop_reader(&self) {
        let task = self
            .reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(t) = task {
            t.abort();
        }
    }
}

impl Drop for Framed {
    /// A client dropped without `close` lets go of its reading half too, so an in-process
    /// server's stream ends rather than waiting for a reader that no one drains.
    fn drop(&mut self) {
        self.stop_reader();
    }
}

async fn read_loop<R: tokio::io::AsyncBufRead + Unpin>(
    mut frames: FrameReader<R>,
    max_depth: usize,
    inbound: InboundTx,
) {
    let reason = loop {
        match frames.next_frame().await {
            Ok(Some(frame)) => match parse_frame(frame, max_depth) {
                ParsedFrame::Single(v) => {
                    if inbound.send(Inbound::Message(v)).await.is_err() {
                        return;
                    }
                }
                ParsedFrame::Batch(items) => {
                    for v in items {
                        if inbound.send(Inbound::Message(v)).await.is_err() {
                            return;
                        }
                    }
                }
                ParsedFrame::Error(e) => {
                    tracing::warn!(error = %e, "skipping an unreadable frame from the server");
                }
            },
            Ok(None) => break "the server closed its output (process exited?)".to_owned(),
            Err(FrameError::TooLarge { limit }) => {
                tracing::error!(limit, "server frame exceeds the size limit; closing");
                break format!("a server frame exceeded {limit} bytes; the transport was closed");
            }
            Err(FrameError::Io(e)) => break format!("reading from the server failed: {e}"),
        }
    };
    let _ = inbound.send(Inbound::Closed(reason)).await;
}

/// A client transport over caller-given byte streams, optionally owning the task that serves
/// the other end (the in-memory pair): closing shuts the writer down, then waits for that task
/// to finish its shutdown (bounded by `grace`, then aborted), then stops reading.
pub(crate) struct IoTransport {
    framed: Framed,
    server: AsyncMutex<Option<JoinHandle<()>>>,
    grace: Duration,
}

impl IoTransport {
    pub fn new(framed: Framed, server: Option<JoinHandle<()>>, grace: Duration) -> Self {
        Self {
            framed,
            server: AsyncMutex::new(server),
            grace,
        }
    }

    async fn shutdown(&self) {
        self.framed.close_writer().await;
        let task = self.server.lock().await.take();
        if let Some(mut task) = task {
            if tokio::time::timeout(self.grace, &mut task).await.is_err() {
                tracing::warn!("the in-process server did not stop within its grace; aborting it");
                task.abort();
            }
        }
        self.framed.stop_reader();
    }
}

impl ClientTransport for IoTransport {
    fn send(&self, msg: OutMsg) -> BoxFut<'_, Result<(), ClientError>> {
        Box::pin(self.framed.send(msg))
    }

    fn cancel_by_notification(&self, _state: &WireState) -> bool {
        true
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(self.shutdown())
    }
}
