//! One HTTP exchange handed in by an embedder — an ASGI app, a `node:http`/fetch handler, a C
//! server — in plain parts: method, target, headers, then the body as it arrives; the answer comes
//! back as a head (status, headers) and body chunks (one JSON buffer, or SSE events as they are
//! produced). Every rule stays [`HttpService::handle`]'s: eras, sessions, `Origin`/`Host`
//! (HTTP-03), the bearer gate (AUTH-06), body cap and arrival deadline (§0.6), Accept (406).
//!
//! Dropping an [`Exchange`] is the client disconnecting, exactly as when hyper drops the
//! service future and body of a closed connection: a modern request is cancelled (HTTP-08), a
//! legacy one runs on and keeps its events for replay (LHTTP-04).

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use hyper::body::{Body, Frame, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

use super::body::{self, HttpBody, Resp};
use super::server::HttpService;
use crate::error::ErrorObject;

type Pending = Pin<Box<dyn Future<Output = Resp> + Send>>;

/// The status and headers of an exchange's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeHead {
    /// The HTTP status code.
    pub status: u16,
    /// Header names (lower case) and values, in order; a name may repeat.
    pub headers: Vec<(String, String)>,
}

/// The request body's producer side: the embedder pushes chunks as its server reads them.
///
/// Bounded: once more than the server's `max_message_bytes` (plus one byte, so core sees the
/// overflow and answers 413) has been pushed, [`BodyFeed::push`] drops further chunks and
/// returns `false` — the embedder may stop reading.
pub struct BodyFeed {
    tx: Option<mpsc::UnboundedSender<Result<Bytes, Aborted>>>,
    pushed: Arc<AtomicUsize>,
    room: usize,
}

/// The body ended early (the embedder's peer went away mid-body): core answers 400.
#[derive(Debug, Clone, Copy)]
struct Aborted;

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request body aborted")
    }
}

impl std::error::Error for Aborted {}

impl BodyFeed {
    /// Hand core the next chunk. `false`: core needs no more (the body crossed the cap or the
    /// exchange is gone).
    pub fn push(&self, chunk: &[u8]) -> bool {
        self.tx.is_some()
            && self.pushed.load(Ordering::Acquire) <= self.room
            && self.push_bytes(Bytes::copy_from_slice(chunk))
    }

    /// Hand core an owned chunk without copying it (same contract as [`BodyFeed::push`]).
    pub fn push_bytes(&self, chunk: Bytes) -> bool {
        let Some(tx) = &self.tx else { return false };
        let before = self.pushed.fetch_add(chunk.len(), Ordering::AcqRel);
        if before > self.room {
            return false;
        }
        let keep = chunk.len().min(self.room + 1 - before);
        let whole = keep == chunk.len();
        tx.send(Ok(chunk.slice(..keep))).is_ok() && whole
    }

    /// The body is complete.
    pub fn end(&mut self) {
        self.tx = None;
    }

    /// The body will never be complete (the peer went away): core answers 400 if it is
    /// still reading.
    pub fn abort(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Err(Aborted));
        }
    }
}

/// The request body as core reads it.
struct FedBody {
    rx: mpsc::UnboundedReceiver<Result<Bytes, Aborted>>,
    declared: Option<u64>,
}

impl Body for FedBody {
    type Data = Bytes;
    type Error = Aborted;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Aborted>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }

    fn size_hint(&self) -> SizeHint {
        self.declared
            .map_or_else(SizeHint::default, SizeHint::with_exact)
    }
}

/// One exchange in flight: await [`Exchange::head`], then [`Exchange::next_chunk`] until `None`.
/// Drop it when the embedder's client disconnects.
pub struct Exchange {
    pending: Option<Pending>,
    body: Option<HttpBody>,
}

impl Exchange {
    /// The answer's status and headers (waits for core to decide them: for a JSON answer, until
    /// the handler is done; for SSE, until the stream opens).
    pub async fn head(&mut self) -> ExchangeHead {
        let Some(p) = self.pending.take() else {
            return ExchangeHead {
                status: 500,
                headers: Vec::new(),
            };
        };
        let (parts, b) = p.await.into_parts();
        self.body = Some(b);
        let headers = parts
            .headers
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect();
        ExchangeHead {
            status: parts.status.as_u16(),
            headers,
        }
    }

    /// The next body chunk; `None` when the body is complete (an SSE body ends when core closes
    /// the stream).
    pub async fn next_chunk(&mut self) -> Option<Bytes> {
        use http_body_util::BodyExt;
        let b = self.body.as_mut()?;
        loop {
            match b.frame().await {
                None => {
                    self.body = None;
                    return None;
                }
                Some(Ok(f)) => match f.into_data() {
                    Ok(d) if !d.is_empty() => return Some(d),
                    _ => continue,
                },
                Some(Err(e)) => match e {},
            }
        }
    }
}

fn refused(status: StatusCode, why: &'static str) -> Exchange {
    let r = body::rpc_error(status, None, &ErrorObject::invalid_request(why));
    Exchange {
        pending: Some(Box::pin(async move { r })),
        body: None,
    }
}

impl HttpService {
    /// Start one exchange: `method` (`"POST"`, …), `target` (path and query, as on the request
    /// line), the request headers. Returns the body feed and the exchange. A malformed method,
    /// target or header is answered 400 like the built-in listener's parser would; the feed is
    /// then inert.
    pub fn exchange<K, V>(
        &self,
        method: &str,
        target: &str,
        headers: impl IntoIterator<Item = (K, V)>,
    ) -> (BodyFeed, Exchange)
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let room = self.max_body_bytes();
        let inert = || BodyFeed {
            tx: None,
            pushed: Arc::new(AtomicUsize::new(0)),
            room,
        };
        let Ok(method) = Method::from_bytes(method.as_bytes()) else {
            return (
                inert(),
                refused(StatusCode::BAD_REQUEST, "malformed method"),
            );
        };
        let Ok(uri) = target.parse::<Uri>() else {
            return (
                inert(),
                refused(StatusCode::BAD_REQUEST, "malformed target"),
            );
        };
        let mut req = Request::builder().method(method).uri(uri);
        let mut declared = None;
        for (k, v) in headers {
            let (Ok(k), Ok(v)) = (
                HeaderName::from_bytes(k.as_ref()),
                HeaderValue::from_bytes(v.as_ref()),
            ) else {
                return (
                    inert(),
                    refused(StatusCode::BAD_REQUEST, "malformed header"),
                );
            };
            if k == http::header::CONTENT_LENGTH {
                declared = v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok());
            }
            req = req.header(k, v);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let Ok(req) = req.body(FedBody { rx, declared }) else {
            return (
                inert(),
                refused(StatusCode::BAD_REQUEST, "malformed request"),
            );
        };
        let svc = self.clone();
        let feed = BodyFeed {
            tx: Some(tx),
            pushed: Arc::new(AtomicUsize::new(0)),
            room,
        };
        let pending: Pending = Box::pin(async move { svc.handle(req).await });
        (
            feed,
            Exchange {
                pending: Some(pending),
                body: None,
            },
        )
    }
}
