//! Connecting over caller-given byte streams, and to a [`Server`] in the same process over an
//! in-memory pipe: the stdio framing and negotiation (REQUIREMENTS STDIO-01…04, DISC-02) with no
//! process and no socket, for tests and embedding.

use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use super::transport::io::{Framed, IoTransport};
use super::{negotiate, Client, ClientBuilder, ClientError, INBOUND_QUEUE};
use crate::server::Server;

/// Bytes buffered in each direction of the in-memory pipe of [`ClientBuilder::connect_in_memory`]
/// (as a Linux pipe): a writer that gets ahead of its reader waits, so memory stays bounded as
/// it does over stdio (STDIO-01), while frames of any size up to the limits still pass.
pub const IN_MEMORY_BUFFER: usize = 64 * 1024;

/// How much longer than the server's own shutdown grace closing waits for its serving task:
/// `serve_io` cancels what is still running one second after the grace and gives its writer five
/// more to flush, so it has ended by then unless something is wrong.
const SERVE_IO_MARGIN: Duration = Duration::from_secs(7);

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

    /// Connect to `server` running in this process, served by
    /// [`crate::transport::stdio::serve_io`] over an in-memory pipe of [`IN_MEMORY_BUFFER`]
    /// bytes each way: the same framing, negotiation, limits and callbacks as over stdio, with
    /// no process and no socket. [`Client::close`] ends the server's side too: it waits for the
    /// served connection to shut down (in-flight requests drain within the server's
    /// `shutdown_grace`).
    ///
    /// # Errors
    /// An argument error, the server's backplane not ready, or a negotiation failure.
    pub async fn connect_in_memory(self, server: &Server) -> Result<Client, ClientError> {
        // As `serve_stdio`: serve only once the backplane is up.
        server
            .backplane_ready()
            .await
            .map_err(|e| ClientError::Transport(format!("the server cannot serve: {e}")))?;
        let (ours, theirs) = tokio::io::duplex(IN_MEMORY_BUFFER);
        let (server_reader, server_writer) = tokio::io::split(theirs);
        let served = server.clone();
        let task = tokio::spawn(async move {
            if let Err(e) =
                crate::transport::stdio::serve_io(&served, server_reader, server_writer).await
            {
                tracing::warn!(error = %e, "the in-memory connection ended with an error");
            }
        });
        let grace = server.limits().shutdown_grace + SERVE_IO_MARGIN;
        let (reader, writer) = tokio::io::split(ours);
        self.connect_streams(reader, writer, Some(task), grace)
            .await
    }

    async fn connect_streams<R, W>(
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

impl Client {
    /// [`ClientBuilder::connect_in_memory`] with the default options and no callbacks.
    ///
    /// ```
    /// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcpcore::client::Client;
    /// use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, Tool};
    /// let server = Server::builder("demo", "1")
    ///     .tool(Tool::new("hello"), handler_fn(|_ctx, _args: serde_json::Value| async {
    ///         Ok::<_, HandlerError>(CallToolResult::text("hello"))
    ///     }))
    ///     .build()?;
    /// let client = Client::connect_in_memory(&server).await?;
    /// let out = client.call_tool("hello", serde_json::json!({})).await?;
    /// assert_eq!(out.content[0]["text"], "hello");
    /// client.close().await;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`ClientBuilder::connect_in_memory`].
    pub async fn connect_in_memory(server: &Server) -> Result<Client, ClientError> {
        Client::builder().connect_in_memory(server).await
    }
}
