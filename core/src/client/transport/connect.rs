//! Opening one connection of the HTTP client's pool: TCP, then TLS for `https://`, then
//! HTTP/1.1 or HTTP/2 (the protocol the server picked by ALPN, or h2c with prior knowledge).

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::{http1, http2};
use hyper::Uri;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use tokio_rustls::TlsConnector;

use super::http_options::HttpClientOptions;
use super::pool::{chain, os_error};
use crate::client::error::ClientError;

pub(crate) type Sender1 = http1::SendRequest<Full<Bytes>>;
pub(crate) type Sender2 = http2::SendRequest<Full<Bytes>>;

/// A new connection, ready for requests.
pub(crate) enum Conn {
    H1(Sender1),
    H2(Sender2),
}

/// Which protocol the pool's connections speak, once known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    /// `https://` before the first handshake: the server's ALPN choice decides.
    Unknown,
    H1,
    H2,
}

pub(crate) struct Connector {
    host: String,
    port: u16,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    h2c: bool,
}

impl Connector {
    /// The connector for `uri` (scheme `http` or `https`, checked by the caller).
    pub(crate) fn new(
        uri: &Uri,
        host: String,
        opts: &HttpClientOptions,
    ) -> Result<Self, ClientError> {
        let https = uri.scheme_str() == Some("https");
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let tls = if https {
            let config = match &opts.tls_config {
                Some(c) => super::tls::with_alpn(c, opts.http2),
                None => Arc::new(
                    opts.tls
                        .client_config(opts.http2)
                        .map_err(ClientError::InvalidArgument)?,
                ),
            };
            let name = ServerName::try_from(host.clone()).map_err(|e| {
                ClientError::InvalidArgument(format!("URL {uri}: {host:?} is no TLS name: {e}"))
            })?;
            Some((TlsConnector::from(config), name))
        } else {
            None
        };
        Ok(Self {
            host,
            port,
            tls,
            h2c: !https && opts.http2_prior_knowledge,
        })
    }

    /// What the first connection will speak, when it is known before connecting.
    pub(crate) fn initial_proto(&self) -> Proto {
        match (&self.tls, self.h2c) {
            (Some(_), _) => Proto::Unknown,
            (None, true) => Proto::H2,
            (None, false) => Proto::H1,
        }
    }

    /// Open a connection; `permit` counts its socket and is held until the socket closes.
    pub(crate) async fn connect(&self, permit: OwnedSemaphorePermit) -> Result<Conn, ClientError> {
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| {
                ClientError::Transport(format!(
                    "cannot connect to {}:{}: {}",
                    self.host,
                    self.port,
                    os_error(&e)
                ))
            })?;
        // Small JSON-RPC messages: do not wait to coalesce them (Nagle).
        let _ = stream.set_nodelay(true);
        let Some((connector, name)) = &self.tls else {
            return handshake(stream, self.h2c, permit).await;
        };
        let tls = connector.connect(name.clone(), stream).await.map_err(|e| {
            let detail = super::tls::describe(&e, &self.host).unwrap_or_else(|| os_error(&e));
            ClientError::Transport(format!(
                "TLS handshake with {}:{} failed: {detail}",
                self.host, self.port
            ))
        })?;
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
        handshake(tls, h2, permit).await
    }
}

/// The HTTP handshake on an open stream; the connection is then driven by its own task.
async fn handshake<I>(io: I, h2: bool, permit: OwnedSemaphorePermit) -> Result<Conn, ClientError>
where
    I: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let failed =
        |e: hyper::Error| ClientError::Transport(format!("HTTP handshake failed: {}", chain(&e)));
    let io = TokioIo::new(io);
    if h2 {
        let (tx, conn) = http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(failed)?;
        tokio::spawn(drive(conn, permit));
        return Ok(Conn::H2(tx));
    }
    let (tx, conn) = http1::handshake(io).await.map_err(failed)?;
    tokio::spawn(drive(conn, permit));
    Ok(Conn::H1(tx))
}

async fn drive<C>(conn: C, permit: OwnedSemaphorePermit)
where
    C: std::future::Future<Output = Result<(), hyper::Error>>,
{
    // The socket exists until this future ends; so does the permit that counts it.
    let _permit = permit;
    if let Err(e) = conn.await {
        tracing::debug!(error = %chain(&e), "HTTP connection ended with an error");
    }
}
