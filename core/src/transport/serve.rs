//! Serving a built [`Server`]: one method per transport (stdio with the era lock of REQUIREMENTS
//! §0.2, Streamable HTTP on one endpoint, HTTP-01, and the same endpoint as a mountable hyper
//! service). The free functions in [`crate::transport`] do the work; these are the documented way
//! in. They live with the transports so the server module never depends on a transport.

use std::net::SocketAddr;

use crate::limits::LimitError;
use crate::server::Server;
use crate::transport::http::{HttpListener, HttpOptions, HttpService};
use crate::transport::stdio::StdioError;

impl Server {
    /// Serve this process's stdin/stdout (newline-delimited JSON-RPC) until EOF; both eras, the
    /// first era-distinctive message that succeeds locks the connection's era. Run it on a Tokio
    /// runtime with I/O and time enabled.
    ///
    /// ```no_run
    /// # async fn run(server: mcpcore::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// server.serve_stdio().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// See [`StdioError`].
    pub async fn serve_stdio(&self) -> Result<(), StdioError> {
        crate::transport::stdio::serve_stdio(self).await
    }

    /// Bind `addr` and serve Streamable HTTP (both eras on one endpoint, `/mcp`) until
    /// [`HttpListener::shutdown`]. Port 0 picks a free port ([`HttpListener::local_addr`]).
    ///
    /// ```no_run
    /// # async fn run(server: mcpcore::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// use mcpcore::transport::http::HttpOptions;
    /// let listener = server.serve_http("127.0.0.1:0".parse()?, HttpOptions::default()).await?;
    /// println!("http://{}/mcp", listener.local_addr());
    /// listener.shutdown().await;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Binding failed, or an option is out of range (allow-lists must be explicit on an
    /// unspecified address such as `0.0.0.0`).
    pub async fn serve_http(
        &self,
        addr: SocketAddr,
        opts: HttpOptions,
    ) -> std::io::Result<HttpListener> {
        crate::transport::http::serve(self.clone(), addr, opts).await
    }

    /// The MCP endpoint as a cloneable hyper service, to mount in a hyper server of your own, or
    /// a tower service for axum (`Router::route_service("/mcp", svc)`; examples/axum_server.rs),
    /// or call [`HttpService::handle`] from another framework.
    ///
    /// # Errors
    /// An option out of range.
    pub fn http_service(&self, opts: HttpOptions) -> Result<HttpService, LimitError> {
        HttpService::new(self.clone(), opts)
    }
}
