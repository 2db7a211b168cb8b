//! Transports: stdio (newline-delimited JSON-RPC) here; Streamable HTTP builds on the same seam.
//!
//! A transport owns framing and I/O; everything protocol-related is done by
//! [`crate::server::Session`]. Outbound messages leave through an [`Outbound`] sink, so request-
//! related messages can be routed to the stream of the request that caused them.

pub mod http;
mod outq;
mod spin;
pub mod stdio;

/// Where serialized outbound JSON-RPC messages go (a connection writer, or one request's stream).
pub trait Outbound: Send + Sync + 'static {
    /// Queue one serialized message without waiting. `false` when the queue is full or closed:
    /// the message was dropped and the caller learns it (memory never grows without bound).
    fn try_send(&self, frame: Vec<u8>) -> bool;

    /// Ask the transport to close the stream carrying this request's messages now, without
    /// ending the request (legacy Streamable HTTP SSE polling, LHTTP-04: the client resumes with
    /// `Last-Event-ID` and gets the rest, including the response). `false` where the transport
    /// has no such stream (stdio, modern HTTP).
    fn close_stream(&self) -> bool {
        false
    }
}

impl Outbound for tokio::sync::mpsc::Sender<Vec<u8>> {
    fn try_send(&self, frame: Vec<u8>) -> bool {
        tokio::sync::mpsc::Sender::try_send(self, frame).is_ok()
    }
}

/// A sink that drops everything (for sessions with no unrelated-message channel).
pub struct NullOutbound;

impl Outbound for NullOutbound {
    fn try_send(&self, _frame: Vec<u8>) -> bool {
        false
    }
}
