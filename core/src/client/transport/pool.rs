//! The HTTP client's connection pool: keep-alive HTTP/1.1 connections to one server, at most
//! [`HttpClientOptions::max_connections`] open at once; or, when the server speaks HTTP/2 (ALPN
//! `h2`, or h2c with prior knowledge), one multiplexed connection shared by every exchange.
//!
//! Without a cap every in-flight call opened its own socket, so a burst of calls exhausted the
//! process's file descriptors and failed with a connect error. Here a call that finds every
//! connection busy waits for one to be returned (or to close) instead; the call's own timeout
//! bounds the wait, because the task waiting is the one the timeout aborts.
//!
//! Two kinds of exchange share the connections. A *held* exchange (a request, whose answer may
//! be an SSE stream the server keeps open while it waits on the client, a GET stream) may take
//! at most `max_connections - 1`; a *short* one (a notification, an answer to a server request,
//! a DELETE) may take any. So a server waiting on answers from the client (LHTTP-08) can always
//! get them, even when every other connection holds a request waiting for exactly that.
//!
//! Each connection holds one permit of `open` for as long as its socket exists (the permit lives
//! in the task driving the connection), so the count is exact whether a connection is idle,
//! busy, or closing.
//!
//! Over HTTP/2 the same two kinds apply to streams: a held exchange keeps its `long` permit in
//! the response body ([`PoolBody`]) until the body ends or is dropped (dropping it resets the
//! stream, which is how a modern request is cancelled, HTTP-08). While the protocol of an
//! `https://` server is not known yet, connections are opened one at a time, so a burst of
//! first calls shares the first HTTP/2 connection instead of opening one each.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response, Uri};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::connect::{Conn, Connector, Proto, Sender1, Sender2};
use super::http_options::HttpClientOptions;
use crate::client::error::ClientError;
use crate::client::peer::lock;

/// How long an exchange may stay open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// A request (its answer may be a long SSE stream) or a GET stream.
    Long,
    /// A notification, a response to the server, a DELETE: answered at once.
    Short,
}

type Sender = Sender1;

struct Idle {
    tx: Sender,
    since: Instant,
}

/// A response body that holds its exchange's `long` permit (HTTP/2) until it ends or is dropped.
pub(crate) struct PoolBody {
    inner: Incoming,
    slot: Option<OwnedSemaphorePermit>,
}

impl Body for PoolBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None | Some(Err(_)))) {
            self.slot = None;
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection for one exchange.
enum Checked {
    /// An HTTP/1.1 connection, and whether it was reused.
    H1(Sender, bool),
    H2(Sender2),
}

/// The shared HTTP/2 connection and when it was last used.
struct Shared2 {
    tx: Sender2,
    since: Instant,
}

pub(crate) struct Pool {
    me: Weak<Pool>,
    connector: Connector,
    /// `scheme://authority` of the server, for HTTP/2 requests' `:scheme` and `:authority`.
    origin: String,
    host_header: HeaderValue,
    proto: Mutex<Proto>,
    h2: Mutex<Option<Shared2>>,
    /// Held while a connection is opened as long as the protocol may be HTTP/2.
    connecting: tokio::sync::Mutex<()>,
    idle: Mutex<Vec<Idle>>,
    returned: Notify,
    /// One permit per open socket.
    open: Arc<Semaphore>,
    /// One permit per connection in use by a [`Hold::Long`] exchange.
    long: Arc<Semaphore>,
    idle_timeout: Duration,
    reaper: AtomicBool,
}

impl Pool {
    /// A pool for the server of `uri` (an `http://` or `https://` URI, already checked).
    pub(crate) fn new(uri: &Uri, opts: &HttpClientOptions) -> Result<Arc<Self>, ClientError> {
        opts.check_ranges().map_err(ClientError::InvalidArgument)?;
        let authority = uri
            .authority()
            .ok_or_else(|| ClientError::InvalidArgument(format!("URL {uri} has no host")))?;
        // `Host` is the authority without user information (RFC 9110 §7.2).
        let host_port = authority.as_str().rsplit('@').next().unwrap_or_default();
        let host_header = HeaderValue::from_str(host_port)
            .map_err(|e| ClientError::InvalidArgument(format!("URL {uri}: {e}")))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let max = opts.max_connections;
        let connector = Connector::new(uri, host, opts)?;
        let origin = format!("{}://{}", uri.scheme_str().unwrap_or("http"), host_port);
        Ok(Arc::new_cyclic(|me| Self {
            me: me.clone(),
            proto: Mutex::new(connector.initial_proto()),
            connector,
            origin,
            host_header,
            h2: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            idle: Mutex::new(Vec::new()),
            returned: Notify::new(),
            open: Arc::new(Semaphore::new(max)),
            long: Arc::new(Semaphore::new(max - 1)),
            idle_timeout: opts.pool_idle_timeout,
            reaper: AtomicBool::new(false),
        }))
    }

    /// Send `req` (its URI absolute) on a pooled connection and return the response head. An
    /// HTTP/1.1 connection goes back to the pool once the response body has been read to its
    /// end; a body dropped early closes it (HTTP/1.1 cannot abandon a response and reuse the
    /// connection). An HTTP/2 body dropped early resets only its stream.
    pub(crate) async fn send(
        &self,
        mut req: Request<Full<Bytes>>,
        hold: Hold,
    ) -> Result<Response<PoolBody>, ClientError> {
        let path = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let origin_form: Uri = path
            .parse()
            .map_err(|e| ClientError::InvalidArgument(format!("request target {path:?}: {e}")))?;
        let absolute: Uri = format!("{}{path}", self.origin)
            .parse()
            .map_err(|e| ClientError::InvalidArgument(format!("request target {path:?}: {e}")))?;
        let mut slot = match hold {
            Hold::Long => Some(
                self.long
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| ClientError::Closed("the connection pool is closed".into()))?,
            ),
            Hold::Short => None,
        };
        loop {
            let (err, reused) = match self.checkout().await? {
                Checked::H2(mut tx) => {
                    // HTTP/2 carries the target as `:scheme`, `:authority`, `:path`.
                    *req.uri_mut() = absolute.clone();
                    match tx.try_send_request(req).await {
                        Ok(resp) => {
                            let slot = slot.take();
                            return Ok(resp.map(|inner| PoolBody { inner, slot }));
                        }
                        Err(e) => {
                            // A connection that ended (GOAWAY, closed) is not used again.
                            self.drop_h2();
                            (e, true)
                        }
                    }
                }
                Checked::H1(mut tx, reused) => {
                    // HTTP/1.1 origin-form target and Host (RFC 9112 §3.2).
                    *req.uri_mut() = origin_form.clone();
                    req.headers_mut()
                        .entry(HOST)
                        .or_insert_with(|| self.host_header.clone());
                    match tx.try_send_request(req).await {
                        Ok(resp) => {
                            self.check_in_when_done(tx, slot);
                            return Ok(resp.map(|inner| PoolBody { inner, slot: None }));
                        }
                        Err(e) => (e, reused),
                    }
                }
            };
            let mut e = err;
            match e.take_message() {
                // A kept-alive connection the server closed meanwhile: the request was
                // not sent, so it is safe to send it on another connection.
                Some(r) if reused => req = r,
                _ => {
                    return Err(ClientError::Transport(format!(
                        "HTTP request failed: {}",
                        chain(e.error())
                    )))
                }
            }
        }
    }

    /// The shared HTTP/2 connection, an idle HTTP/1.1 connection, or a new one when the cap
    /// allows, or the first of these to become available.
    async fn checkout(&self) -> Result<Checked, ClientError> {
        loop {
            let returned = self.returned.notified();
            tokio::pin!(returned);
            returned.as_mut().enable();
            if let Some(tx) = self.live_h2() {
                return Ok(Checked::H2(tx));
            }
            if let Some(tx) = self.take_idle() {
                return Ok(Checked::H1(tx, true));
            }
            // While the server may speak HTTP/2, open one connection at a time: the calls
            // waiting here then share it.
            let _one_at_a_time = if *lock(&self.proto) == Proto::H1 {
                None
            } else {
                let g = self.connecting.lock().await;
                if let Some(tx) = self.live_h2() {
                    return Ok(Checked::H2(tx));
                }
                Some(g)
            };
            if let Ok(permit) = self.open.clone().try_acquire_owned() {
                return self.connect(permit).await;
            }
            tokio::select! {
                () = &mut returned => {}
                permit = self.open.clone().acquire_owned() => {
                    let permit = permit
                        .map_err(|_| ClientError::Closed("the connection pool is closed".into()))?;
                    return self.connect(permit).await;
                }
            }
        }
    }

    /// The shared HTTP/2 connection while it is open and has not been idle too long (an idle
    /// one is let go, so the server's idle timeout never closes it under a request).
    fn live_h2(&self) -> Option<Sender2> {
        let mut h2 = lock(&self.h2);
        let shared = h2.as_mut()?;
        if shared.tx.is_closed() || shared.since.elapsed() >= self.idle_timeout {
            *h2 = None;
            return None;
        }
        shared.since = Instant::now();
        Some(shared.tx.clone())
    }

    /// Stop using the shared HTTP/2 connection after a failed send: the next exchange opens a
    /// new one, while streams still open on the old one finish there.
    fn drop_h2(&self) {
        *lock(&self.h2) = None;
    }

    /// The most recently returned idle connection that is still usable; stale ones are dropped
    /// (which closes them and frees their permits).
    fn take_idle(&self) -> Option<Sender> {
        let mut idle = lock(&self.idle);
        while let Some(c) = idle.pop() {
            if c.since.elapsed() < self.idle_timeout && c.tx.is_ready() {
                return Some(c.tx);
            }
        }
        None
    }

    async fn connect(&self, permit: OwnedSemaphorePermit) -> Result<Checked, ClientError> {
        match self.connector.connect(permit).await? {
            Conn::H1(tx) => {
                *lock(&self.proto) = Proto::H1;
                Ok(Checked::H1(tx, false))
            }
            Conn::H2(tx) => {
                *lock(&self.proto) = Proto::H2;
                *lock(&self.h2) = Some(Shared2 {
                    tx: tx.clone(),
                    since: Instant::now(),
                });
                Ok(Checked::H2(tx))
            }
        }
    }

    /// Return the connection once its response has been read (hyper reports it ready again),
    /// and free the exchange's slot then.
    fn check_in_when_done(&self, mut tx: Sender, slot: Option<OwnedSemaphorePermit>) {
        let pool = self.me.clone();
        tokio::spawn(async move {
            let reusable = tx.ready().await.is_ok();
            drop(slot);
            if let (true, Some(pool)) = (reusable, pool.upgrade()) {
                pool.check_in(tx);
            }
        });
    }

    /// Close the idle connections and fail every exchange still waiting for one; connections
    /// in use close when their exchange ends.
    pub(crate) fn close(&self) {
        self.open.close();
        self.long.close();
        lock(&self.idle).clear();
        *lock(&self.h2) = None;
    }

    fn check_in(&self, tx: Sender) {
        if self.open.is_closed() {
            return;
        }
        lock(&self.idle).push(Idle {
            tx,
            since: Instant::now(),
        });
        self.returned.notify_one();
        if !self.reaper.swap(true, Ordering::AcqRel) {
            tokio::spawn(reap(self.me.clone(), self.idle_timeout));
        }
    }
}

/// Close connections idle longer than `timeout`, until the pool is gone.
async fn reap(pool: Weak<Pool>, timeout: Duration) {
    loop {
        let next = {
            let Some(p) = pool.upgrade() else { return };
            let mut idle = lock(&p.idle);
            idle.retain(|c| c.since.elapsed() < timeout && !c.tx.is_closed());
            idle.iter().map(|c| c.since + timeout).min()
        };
        match next {
            Some(at) => tokio::time::sleep_until(at).await,
            None => tokio::time::sleep(timeout).await,
        }
    }
}

/// An error with its sources (hyper's own message alone names no cause).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&os_error_or(c));
        src = c.source();
    }
    s
}

fn os_error_or(e: &(dyn std::error::Error + 'static)) -> String {
    if let Some(tls) = super::tls::describe(e, "the server") {
        return tls;
    }
    e.downcast_ref::<std::io::Error>()
        .map_or_else(|| e.to_string(), os_error)
}

/// An I/O error with its symbolic errno name (`EMFILE`, `ECONNREFUSED`), which is what
/// operators search for when a process runs out of descriptors or the server is down.
pub(crate) fn os_error(e: &std::io::Error) -> String {
    #[cfg(unix)]
    if let Some(code) = e.raw_os_error() {
        return format!("{e} [{:?}]", nix::errno::Errno::from_raw(code));
    }
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn os_errors_carry_their_errno_name() {
        let e = std::io::Error::from_raw_os_error(nix::libc::EMFILE);
        let s = os_error(&e);
        assert!(s.contains("EMFILE"), "{s}");
        assert!(s.contains("os error"), "{s}");
    }

    #[test]
    fn the_cap_must_leave_a_connection_for_short_exchanges() {
        let uri: Uri = "http://127.0.0.1:1/mcp".parse().expect("uri");
        let mut o = HttpClientOptions {
            max_connections: 2,
            ..HttpClientOptions::default()
        };
        assert!(Pool::new(&uri, &o).is_err(), "the GET stream needs a third");
        o.listen_stream = false;
        assert!(Pool::new(&uri, &o).is_ok());
        o.max_connections = 1;
        assert!(matches!(
            Pool::new(&uri, &o),
            Err(ClientError::InvalidArgument(_))
        ));
    }
}
