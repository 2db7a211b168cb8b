//! `Client::connect_in_memory`: mcpcore's client on a [`Server`] in the same process over a
//! bounded in-memory pipe served by [`serve_io`] (REQUIREMENTS STDIO-01…04, DISC-02): the stdio
//! framing and negotiation with no process and no socket, for tests and embedding. It lives with
//! the transports because it joins both sides; the client and server modules never name each
//! other.

use std::time::Duration;

use crate::client::{Client, ClientBuilder, ClientError, IN_MEMORY_BUFFER};
use crate::server::Server;
use crate::transport::stdio::serve_io;

/// How much longer than the server's own shutdown grace closing waits for its serving task:
/// `serve_io` cancels what is still running one second after the grace and gives its writer five
/// more to flush, so it has ended by then unless something is wrong.
const SERVE_IO_MARGIN: Duration = Duration::from_secs(7);

impl ClientBuilder {
    /// Connect to `server` running in this process, served by [`serve_io`] over an in-memory
    /// pipe of [`IN_MEMORY_BUFFER`] bytes each way: the same framing, negotiation (auto by
    /// default), limits and callbacks as over stdio, with no process and no socket. [`Client::close`] ends the server's side too: it waits for the
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
            if let Err(e) = serve_io(&served, server_reader, server_writer).await {
                tracing::warn!(error = %e, "the in-memory connection ended with an error");
            }
        });
        let grace = server.limits().shutdown_grace + SERVE_IO_MARGIN;
        let (reader, writer) = tokio::io::split(ours);
        self.connect_streams(reader, writer, Some(task), grace)
            .await
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
