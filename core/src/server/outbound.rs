//! Where a session's serialized outbound JSON-RPC messages go: the seam between the server and
//! the transport carrying its connection (a stdio writer, one HTTP request's stream, a legacy
//! session's standalone stream). Transports implement it; the server only writes to it.

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

    /// Like [`Self::try_send`], for a message every worker sharing the session sends itself
    /// (a change the notification bus carries to each of them): a transport that relays the
    /// session's messages to another worker must not relay this one (it would arrive twice).
    fn try_send_here(&self, frame: Vec<u8>) -> bool {
        self.try_send(frame)
    }

    /// The headers of the HTTP request this sink answers (Streamable HTTP), which handlers may
    /// read ([`crate::RequestContext::http_headers`]). `None` elsewhere (stdio, in-process, a
    /// legacy session's standalone stream, a request relayed from another worker).
    fn http_headers(&self) -> Option<&http::HeaderMap> {
        None
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
