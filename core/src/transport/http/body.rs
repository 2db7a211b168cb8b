//! The response body type (one buffer, or a live SSE channel) and capped request-body reading
//! (REQUIREMENTS §0.6: 413 for `Content-Length` over the cap before reading; a chunked body is
//! cut as soon as it crosses the cap).

use bytes::{Bytes, BytesMut};
use http::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

use crate::error::ErrorObject;
use crate::jsonrpc::{encode_error, Id};

/// The body of every response: a single buffer (JSON or empty), or SSE events as they are produced.
pub struct HttpBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl HttpBody {
    /// A complete body.
    pub fn full(b: impl Into<Bytes>) -> Self {
        let b: Bytes = b.into();
        Self {
            kind: Kind::Full((!b.is_empty()).then_some(b)),
        }
    }
    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }
    /// A body that streams whatever arrives on `rx` and ends when every sender is gone.
    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Self {
        Self {
            kind: Kind::Stream(rx),
        }
    }
}

impl Body for HttpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Stream(_) => SizeHint::default(),
        }
    }
}

pub(crate) type Resp = Response<HttpBody>;

/// A JSON body with a status.
pub(crate) fn json(status: StatusCode, body: Vec<u8>) -> Resp {
    let mut r = Response::new(HttpBody::full(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// A JSON-RPC error (id null unless known) with a status.
pub(crate) fn rpc_error(status: StatusCode, id: Option<&Id>, e: &ErrorObject) -> Resp {
    json(status, encode_error(id, e))
}

/// Add `Retry-After` to a 503 for work refused while the backplane is unreachable.
pub(crate) fn retry_after(mut r: Resp) -> Resp {
    r.headers_mut().insert(
        http::header::RETRY_AFTER,
        HeaderValue::from(crate::backplane::RETRY_AFTER_SECS),
    );
    r
}

/// A status with an empty body.
pub(crate) fn status(status: StatusCode) -> Resp {
    let mut r = Response::new(HttpBody::empty());
    *r.status_mut() = status;
    r
}

/// A status with a short plain-text body (refusals that are not JSON-RPC: 403, 404, 405, …).
pub(crate) fn text(status: StatusCode, msg: &'static str) -> Resp {
    let mut r = Response::new(HttpBody::full(Bytes::from_static(msg.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// An SSE response over `rx` with the headers every event stream carries (HTTP-06).
pub(crate) fn sse(rx: mpsc::Receiver<Bytes>) -> Resp {
    let mut r = Response::new(HttpBody::stream(rx));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    TooLarge,
    Io,
}

/// Read a body, refusing it as soon as it crosses `cap` bytes (never buffering more than cap+1).
pub(crate) async fn read_capped<B>(mut body: B, cap: usize) -> Result<Bytes, ReadError>
where
    B: Body<Data = Bytes> + Unpin,
{
    if body.size_hint().lower() > cap as u64 {
        return Err(ReadError::TooLarge);
    }
    let mut first: Option<Bytes> = None;
    let mut buf: Option<BytesMut> = None;
    let mut len = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ReadError::Io)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        len += data.len();
        if len > cap {
            return Err(ReadError::TooLarge);
        }
        match (&mut first, &mut buf) {
            (None, None) => first = Some(data),
            (Some(f), None) => {
                let mut b = BytesMut::with_capacity(len.max(f.len() * 2));
                b.extend_from_slice(f);
                b.extend_from_slice(&data);
                first = None;
                buf = Some(b);
            }
            (_, Some(b)) => b.extend_from_slice(&data),
        }
    }
    Ok(match (first, buf) {
        (_, Some(b)) => b.freeze(),
        (Some(f), None) => f,
        (None, None) => Bytes::new(),
    })
}
