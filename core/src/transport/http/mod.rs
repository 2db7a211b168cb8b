//! Streamable HTTP server on hyper 1.x: one endpoint serving the legacy sessionful era and the
//! modern stateless era side by side, decided per request by the body (REQUIREMENTS §0.2, §0.6,
//! §0.7, HTTP-*, LHTTP-*, SUB-*).
//!
//! Two ways to use it:
//! * [`serve`] binds a standalone listener (`127.0.0.1:0` allowed; [`HttpListener::local_addr`]
//!   reports the port) and shuts down gracefully;
//! * [`HttpService::exchange`] takes one request in plain parts from any embedder (ASGI,
//!   `node:http`, fetch, a C server) and answers with a head and body chunks;
//! * [`HttpService`] is a cloneable `hyper::service::Service` a Rust user mounts in an existing
//!   hyper server (or calls [`HttpService::handle`] from any framework).
//!
//! Modules: `options` (every limit, with safe defaults), `body` (response body and capped
//! request reading), `origin` (`Origin`/`Host` allow-lists), `headers` (`Accept`,
//! `Content-Type` and `Mcp-*` checks), `sse` (event encoding), `respond` (JSON-or-live-SSE
//! answer to one request), `modern`, `legacy` (the legacy era's requests, GET stream and DELETE),
//! `sessions` (the legacy session table and its reaper), `stream` (resumable SSE streams),
//! `batch` (2025-03-26 batches), `auth` (the OAuth resource-server gate), `listen` (`subscriptions/listen`), `server` (the service and the
//! listener), `conn` (the listener's connection cap and per-connection header, idle and
//! write-stall deadlines).

mod addr;
mod auth;
mod backoff;
mod batch;
mod body;
mod conn;
mod exchange;
pub(crate) mod headers;
mod legacy;
mod listen;
mod modern;
mod options;
mod origin;
mod relay;
mod replica;
mod respond;
mod server;
mod sessions;
mod sse;
mod stream;
mod trim;

/// The `Mcp-Name` / `Mcp-Param-*` value decoder (HTTP-16), published here first.
pub use crate::protocol::mcp_header::decode_value as decode_header_value;
pub use crate::transport::tls::ServerTls;
pub use addr::bind_address;
pub use body::HttpBody;
pub use exchange::{BodyFeed, Exchange, ExchangeHead};
pub use options::{AllowList, HttpOptions, LegacyStores};
pub use server::{serve, HttpListener, HttpService};
pub use trim::{set_memory_trim, TRIM_AFTER_BYTES};
