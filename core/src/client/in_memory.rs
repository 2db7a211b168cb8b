//! Connecting over caller-given byte streams with the stdio framing and negotiation
//! (REQUIREMENTS STDIO-01…04, DISC-02): the client half of `serve_io`, and of the in-memory
//! pipe of `Client::connect_in_memory` (core/src/transport/in_memory.rs, where the server may be
//! named: the client module never depends on it).

use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use super::transport::io::{Framed, IoTransport};
use super::{negotiate, Client, ClientBuilder, ClientError, INBOUND_QUEUE};

/// Bytes buffered in each direction of the in-memory pipe of `ClientBuilder::connect_in_memory`
/// (as a Linux pipe): a writer that gets ahead of its reader waits, so memory stays bounded as
/// it does over stdio (STDIO-01), while frames of any size up to the limits still pass.
pub const IN_MEMORY_BUFFER: usize = 64 * 1024;

impl ClientBuilder {
    /// Connect over newline-delimited JSON-RPC on `reader` / `writer` (what the server writes /
    /// what it reads), with the stdio negotiation ([`super::ConnectMode::Auto`] by default).
    /// Closing the client shuts `writer` down, so the server reads EOF, and stops reading.
    ///
    /// # Errors
    /// An argument error, or a negotiation failure.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.connect_streams(reader, writer, None, Duration::ZERO)
            .await
    }

    /// Connect over `reader` / `writer`; `server` is the task serving their other end, which
    /// closing waits for (up to `grace`). `Client::connect_in_memory` (in the transport layer,
    /// which may know the server) passes its `serve_io` task.
    pub(crate) async fn connect_streams<R, W>(
        self,
        reader: R,
        writer: W,
        server: Option<tokio::task::JoinHandle<()>>,
        grace: Duration,
    ) -> Result<Client, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        if let Err(e) = negotiate::validate(&self.options) {
            if let Some(t) = server {
                t.abort();
            }
            return Err(e);
        }
        let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
        let o = &self.options;
        let framed = Framed::start(
            reader,
            Box::new(writer),
            o.max_message_bytes,
            o.max_json_depth,
            tx,
        )?;
        let t = Arc::new(IoTransport::new(framed, server, grace));
        self.finish(t, rx).await
    }
}
