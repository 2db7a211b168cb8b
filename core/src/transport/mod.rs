//! Transports: stdio (newline-delimited JSON-RPC) here; Streamable HTTP builds on the same seam.
//!
//! A transport owns framing and I/O; everything protocol-related is done by
//! [`crate::server::Session`]. Outbound messages leave through an [`Outbound`] sink, so request-
//! related messages can be routed to the stream of the request that caused them.

pub mod http;
mod in_memory;
mod outq;
mod serve;
mod spin;
pub mod stdio;
pub mod stdio_pump;
pub mod tls;

// The outbound seam is the server's (sessions write to it); transports implement it.
pub use crate::server::{NullOutbound, Outbound};
