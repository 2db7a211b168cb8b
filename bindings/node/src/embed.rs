//! Embedding: the MCP endpoint mounted in the host's own web server (`server.nodeHandler()`,
//! `server.fetchHandler()`) through core's one-exchange seam ([`HttpService::exchange`]), and
//! the in-memory client (`Client.connectInMemory`, core's
//! [`mcpcore::client::ClientBuilder::connect_in_memory`]). `lib/embed.cjs` adapts `node:http`
//! and fetch `Request`s to [`NativeExchange`]; every rule (eras, sessions, Origin/Host, body
//! cap, Accept, …) is core's.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use mcpcore::transport::http::{BodyFeed, Exchange, ExchangeHead, HttpOptions, HttpService};
use mcpcore::ErrorKind;
use napi::bindgen_prelude::{Buffer, Either};
use napi::Env;
use napi_derive::napi;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::{self, NativeClient, NotificationFn};
use crate::handler::ClientInvokeFn;
use crate::reply;
use crate::server::{patched_from, NativeServer};
use crate::stdio::Feeding;

/// An exchange's answer in the making: the exchange back (an event stream continues from it),
/// its head and, unless it is an event stream, its whole body.
type Answer = (Exchange, ExchangeHead, Option<Vec<u8>>);
type Answering = Pin<Box<dyn Future<Output = Answer> + Send>>;

fn answering(mut x: Exchange) -> Answering {
    Box::pin(async move {
        let h = x.head().await;
        if is_event_stream(&h.headers) {
            return (x, h, None);
        }
        let mut body = Vec::new();
        while let Some(c) = x.next_chunk().await {
            body.extend_from_slice(&c);
        }
        (x, h, Some(body))
    })
}

fn js_head(h: ExchangeHead, body: Option<Vec<u8>>) -> NativeExchangeHead {
    NativeExchangeHead {
        status: u32::from(h.status),
        headers: h.headers.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        body: body.map(Buffer::from),
    }
}

/// The endpoint as a mount: one [`NativeExchange`] per request the host routes to it
/// (private: `lib/` wraps it).
#[napi]
pub struct NativeHttpMount {
    svc: HttpService,
}

/// An exchange's answer head; for an answer that is not an event stream, the whole body too
/// (one hand-off instead of three for a JSON answer).
#[napi(object)]
pub struct NativeExchangeHead {
    /// The HTTP status (0: the exchange was closed first).
    pub status: u32,
    /// Header names and values, flat: `[name, value, name, value, …]`.
    pub headers: Vec<String>,
    /// The complete body of a non-streaming answer; absent for SSE (read `nextChunk`).
    pub body: Option<Buffer>,
}

/// One request in flight (private: `lib/` drives it). Closing it is the client disconnecting:
/// core cancels a modern request (HTTP-08); a legacy one runs on (LHTTP-04).
#[napi]
pub struct NativeExchange {
    feed: std::sync::Mutex<BodyFeed>,
    /// `None` once closed (dropped: that is the disconnect core sees), or while `answering`.
    x: tokio::sync::Mutex<Option<Exchange>>,
    /// The answer `headNow` started and could not finish at once (`head` continues it).
    answering: std::sync::Mutex<Option<Answering>>,
    /// Tripped by `close`, so a pending `head`/`nextChunk` ends at once and drops the exchange.
    closing: CancellationToken,
}

#[napi]
impl NativeHttpMount {
    /// Start an exchange: `method`, `target` (path and query), `headers` flat
    /// (`req.rawHeaders`). Call `head()` at once (core starts handling when it is awaited),
    /// then push the body.
    #[napi]
    pub fn exchange(&self, method: String, target: String, headers: Vec<String>) -> NativeExchange {
        let pairs = headers
            .chunks_exact(2)
            .map(|p| (p[0].as_bytes(), p[1].as_bytes()));
        let (feed, x) = self.svc.exchange(&method, &target, pairs);
        NativeExchange {
            feed: std::sync::Mutex::new(feed),
            x: tokio::sync::Mutex::new(Some(x)),
            answering: std::sync::Mutex::new(None),
            closing: CancellationToken::new(),
        }
    }

    /// Core's graceful shutdown of the endpoint: new requests are refused (503), listen streams
    /// get their result, legacy sessions' streams close, work in flight gets the shutdown
    /// deadline to finish.
    #[napi]
    pub async fn shutdown(&self) -> napi::Result<()> {
        self.svc.shutdown().await;
        Ok(())
    }
}

impl NativeExchange {
    fn feed(&self) -> std::sync::MutexGuard<'_, BodyFeed> {
        self.feed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn is_event_stream(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream"))
}

#[napi]
impl NativeExchange {
    /// Hand core the next body chunk; false: core wants no more (cap crossed, or closed).
    #[napi]
    pub fn push(&self, chunk: &[u8]) -> bool {
        self.feed().push(chunk)
    }

    /// The body is complete.
    #[napi]
    pub fn end(&self) {
        self.feed().end();
    }

    /// The body will never be complete (the peer left mid-body): core answers 400.
    #[napi]
    pub fn abort(&self) {
        self.feed().abort();
    }

    /// Once the body is complete: start the answer here on the JavaScript thread, so a
    /// synchronous handler registered with a direct function runs within this call (as stdio
    /// served from this thread does, [`crate::stdio`]) and a JSON answer is ready with no
    /// thread hand-off. Null when it must wait: then `head()` continues it.
    #[napi]
    pub fn head_now(&self, env: Env) -> Option<NativeExchangeHead> {
        let x = self.x.try_lock().ok()?.take()?;
        let mut fut = answering(x);
        let polled = {
            let _feeding = Feeding::enter(&env);
            napi::bindgen_prelude::within_runtime_if_available(|| {
                // A no-op waker: a pending answer is continued by `head`, whose first poll
                // registers the real one.
                fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
            })
        };
        match polled {
            Poll::Ready((x, h, body)) => {
                if let Ok(mut g) = self.x.try_lock() {
                    *g = Some(x);
                }
                Some(js_head(h, body))
            }
            Poll::Pending => {
                *self.answering.lock().unwrap_or_else(|p| p.into_inner()) = Some(fut);
                None
            }
        }
    }

    /// The answer's head (and, unless it is an event stream, its whole body).
    #[napi]
    pub async fn head(&self) -> NativeExchangeHead {
        let gone = || NativeExchangeHead {
            status: 0,
            headers: Vec::new(),
            body: None,
        };
        let mut guard = tokio::select! {
            g = self.x.lock() => g,
            () = self.closing.cancelled() => return gone(),
        };
        let started = self
            .answering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let fut = match (started, guard.take()) {
            (Some(f), _) => f,
            (None, Some(x)) => answering(x),
            (None, None) => return gone(),
        };
        // Closing drops the answer in the making, and the exchange with it.
        let answered = tokio::select! {
            a = fut => Some(a),
            () = self.closing.cancelled() => None,
        };
        let Some((x, h, body)) = answered else {
            return gone();
        };
        *guard = Some(x);
        js_head(h, body)
    }

    /// The next chunk of an event-stream body (events as core produces them), or null at its
    /// end or once closed.
    #[napi]
    pub async fn next_chunk(&self) -> Option<Buffer> {
        let mut guard = tokio::select! {
            g = self.x.lock() => g,
            () = self.closing.cancelled() => return None,
        };
        let x = guard.as_mut()?;
        let chunk = tokio::select! {
            c = x.next_chunk() => c,
            () = self.closing.cancelled() => None,
        };
        if chunk.is_none() {
            // Ended or closed: drop the exchange now, not when JavaScript collects this object.
            guard.take();
        }
        chunk.map(|c| Buffer::from(c.to_vec()))
    }

    /// The client disconnected (or the answer is done): drop the exchange. A second call does
    /// nothing.
    #[napi]
    pub fn close(&self) {
        self.closing.cancel();
        self.feed().end();
        self.answering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Ok(mut g) = self.x.try_lock() {
            g.take();
        }
    }
}

#[napi]
impl NativeServer {
    /// The endpoint as a mount for the host's own HTTP server; `options` is core's `HttpOptions`
    /// JSON shape (the listener's, with `path` unset by default: the host routes). A refused
    /// registration or option is `{error}`.
    #[napi(ts_return_type = "NativeHttpMount | { error: NativeError }")]
    pub fn http_mount(&self, options: Option<Value>) -> Either<NativeHttpMount, Value> {
        let server = match self.server() {
            Ok(s) => s,
            Err(e) => return Either::B(e),
        };
        let opts = match patched_from(HttpOptions::mounted(), options.as_ref()) {
            Ok(o) => o,
            Err(e) => return Either::B(reply::err(ErrorKind::InvalidArgument, e)),
        };
        match server.http_service(opts) {
            Ok(svc) => Either::A(NativeHttpMount { svc }),
            Err(e) => Either::B(reply::err(ErrorKind::InvalidArgument, e)),
        }
    }

    /// Connect core's client to this server in process (core's in-memory duplex, served as
    /// stdio is); `mode`, `options`, `callbacks`, `onNotification` as for `connectStdio`.
    #[napi(
        ts_args_type = "mode?: string | null, options?: any, callbacks?: Array<[string, ((params: any) => Promise<any>) | null]> | null, onNotification?: ((method: string, params: any) => void) | null",
        ts_return_type = "Promise<NativeClient | { error: NativeError }>"
    )]
    pub async fn connect_in_memory(
        &self,
        mode: Option<String>,
        options: Option<Value>,
        callbacks: Option<Vec<(String, Option<ClientInvokeFn>)>>,
        on_notification: Option<NotificationFn>,
    ) -> napi::Result<Either<NativeClient, Value>> {
        let server = match self.server() {
            Ok(s) => s,
            Err(e) => return Ok(Either::B(e)),
        };
        Ok(client::connect_in_memory(server, mode, options, callbacks, on_notification).await)
    }
}
