//! The hyper service (mountable) and the standalone listener, with the inbound ladder of
//! REQUIREMENTS §0.7: path → `Host`/target (missing or malformed 400, not allowed 403) →
//! `Origin` (403) → bearer token when protected (400/401/403, AUTH-06; the Protected Resource
//! Metadata is served before the path check) → HTTP method (405) → `Content-Type` (415) → body
//! size (413) and arrival deadline (408) → JSON depth/shape (400) → era by body (§0.2) →
//! `Accept` (406) → era path.
//! Graceful shutdown: stop accepting, send listen results, finish or cancel in-flight work within
//! the deadline.

use bytes::Bytes;
use http::header::{ALLOW, CONNECTION, CONTENT_LENGTH};
use http::{HeaderValue, Method, Request, StatusCode};
use hyper::body::Body;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::auth::{self as gate, Gate};
use super::body::{self, read_capped, ReadError, Resp};
use super::conn::{accept_loop, Slots};
use super::headers::{self, PROTOCOL_VERSION};
use super::legacy;
use super::listen::Hub;
use super::modern;
use super::options::HttpOptions;
use super::origin;
use super::sessions::{self, Sessions};
use crate::auth::Principal;
use crate::error::ErrorObject;
use crate::jsonrpc::{classify, parse_frame, Incoming, ParsedFrame};
use crate::server::era::{self, Route};
use crate::server::Server;

pub(crate) struct Shared {
    pub server: Server,
    pub opts: HttpOptions,
    /// `allowed_origins` / `allowed_hosts` resolved against the bound address (HTTP-03).
    origins: origin::Rule,
    hosts: origin::Rule,
    pub sessions: Sessions,
    pub listens: Arc<Hub>,
    /// The OAuth resource-server gate, when the endpoint is protected (AUTH-06).
    auth: Option<Gate>,
    pub tracker: TaskTracker,
    /// Shutdown began: new requests get 503, listen streams send their result.
    pub stopping: CancellationToken,
    /// The deadline passed: in-flight work is cancelled.
    pub hard_stop: CancellationToken,
    reaper: AtomicBool,
    epoch: Instant,
    /// The standalone listener's open-connection count (metrics; unset when mounted).
    connections: std::sync::OnceLock<Arc<std::sync::atomic::AtomicUsize>>,
}

impl crate::telemetry::GaugeSource for Shared {
    fn gauges(&self) -> (usize, usize, usize) {
        let conns = self
            .connections
            .get()
            .map_or(0, |c| c.load(Ordering::Relaxed));
        (self.sessions.len(), self.listens.len(), conns)
    }
}

impl Shared {
    pub(crate) fn now_ms(&self) -> u64 {
        self.epoch
            .elapsed()
            .as_millis()
            .try_into()
            .unwrap_or(u64::MAX)
    }
    pub(crate) fn ensure_reaper(self: &Arc<Self>) {
        if !self.reaper.swap(true, Ordering::AcqRel) {
            sessions::spawn_reaper(self);
            if super::replica::is_shared(self) {
                super::replica::spawn_sweeper(self);
                super::replica::spawn_router(self);
            }
        }
    }
}

/// Validate `opts` and resolve the allow-lists against the bind address (HTTP-03).
fn check_options(
    opts: &HttpOptions,
    bound: Option<SocketAddr>,
) -> Result<(origin::Rule, origin::Rule), crate::limits::LimitError> {
    opts.validate()?;
    let rule = |l: &super::options::AllowList, origin: bool, name: &'static str| {
        origin::Rule::resolve(l, bound, origin).map_err(|e| {
            tracing::error!("{e}");
            crate::limits::LimitError {
                name,
                reason: "must be set explicitly when binding an unspecified address",
            }
        })
    };
    Ok((
        rule(&opts.allowed_origins, true, "allowed_origins")?,
        rule(&opts.allowed_hosts, false, "allowed_hosts")?,
    ))
}

/// The MCP endpoint as a cloneable hyper service, and a tower service (axum's
/// `Router::route_service`). Mount it in any hyper server, or call [`HttpService::handle`] from
/// another framework.
#[derive(Clone)]
pub struct HttpService {
    shared: Arc<Shared>,
}

impl HttpService {
    /// A service for `server` ([`Server::http_service`] is the usual way to make one).
    ///
    /// # Errors
    /// An option out of range.
    pub fn new(server: Server, opts: HttpOptions) -> Result<Self, crate::limits::LimitError> {
        Self::build(server, opts, None)
    }

    fn build(
        server: Server,
        mut opts: HttpOptions,
        bound: Option<SocketAddr>,
    ) -> Result<Self, crate::limits::LimitError> {
        // Legacy sessions are shared through the server's backplane unless the options name
        // stores of their own.
        if !opts.legacy_stores.sessions.is_shared() {
            opts.legacy_stores.sessions = server.backplane().session_store();
        }
        if !opts.legacy_stores.events.is_shared() {
            opts.legacy_stores.events = server.backplane().event_store();
        }
        let (origins, hosts) = check_options(&opts, bound)?;
        let auth = match &opts.auth {
            None => None,
            Some(a) => Some(Gate::new(a, opts.path.as_deref()).map_err(|e| {
                tracing::error!("{e}");
                crate::limits::LimitError {
                    name: "auth",
                    reason: "invalid authorization options (the log names the field)",
                }
            })?),
        };
        let listens = Arc::new(Hub::default());
        let weak: std::sync::Weak<dyn crate::server::ChangeSink> =
            Arc::downgrade(&listens) as std::sync::Weak<dyn crate::server::ChangeSink>;
        server.add_change_sink(weak);
        // Hear the other workers from the start (a backplane subscription needs the runtime).
        server.start_bus();
        Ok(Self {
            shared: Arc::new(Shared {
                server,
                opts,
                origins,
                hosts,
                sessions: Sessions::default(),
                listens,
                auth,
                tracker: TaskTracker::new(),
                stopping: CancellationToken::new(),
                hard_stop: CancellationToken::new(),
                reaper: AtomicBool::new(false),
                epoch: Instant::now(),
                connections: std::sync::OnceLock::new(),
            }),
        })
        .inspect(|svc| {
            let weak = Arc::downgrade(&svc.shared);
            svc.shared
                .server
                .metrics()
                .add_source(weak as std::sync::Weak<dyn crate::telemetry::GaugeSource>);
        })
    }

    /// The state the handlers share (unit tests of the modules beside this one).
    #[cfg(test)]
    pub(super) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The request-body cap (the server's `max_message_bytes`).
    pub(super) fn max_body_bytes(&self) -> usize {
        self.shared.server.limits().max_message_bytes
    }

    pub(super) fn options(&self) -> &HttpOptions {
        &self.shared.opts
    }

    /// Live legacy sessions.
    pub fn legacy_session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Open `subscriptions/listen` streams.
    pub fn listen_stream_count(&self) -> usize {
        self.shared.listens.len()
    }

    /// Graceful shutdown: refuse new requests, send every listen stream its result, close
    /// legacy sessions' streams, wait for in-flight work up to the deadline, then cancel it.
    pub async fn shutdown(&self) {
        let s = &self.shared;
        s.stopping.cancel();
        s.tracker.close();
        if tokio::time::timeout(s.opts.shutdown_deadline, s.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("in-flight HTTP work did not finish before the deadline; cancelling it");
        }
        s.hard_stop.cancel();
        s.sessions.close_all();
        let _ = tokio::time::timeout(Duration::from_secs(1), s.tracker.wait()).await;
        crate::telemetry::flush_on_stop().await;
    }

    /// Handle one request.
    pub async fn handle<B>(&self, req: Request<B>) -> Resp
    where
        B: Body<Data = Bytes> + Unpin,
    {
        let s = &self.shared;
        let traced = crate::telemetry::span::http_request(
            req.method().as_str(),
            req.uri().path(),
            req.headers(),
        );
        let (r, span) = match traced {
            None => (self.handle_inner(req).await, tracing::Span::none()),
            Some((span, tc)) => {
                // The HTTP span joins the caller's trace from the `traceparent` header; the
                // MCP span under it continues this span's trace unless `_meta` names another.
                // Pinned where it is made: wrapping the (large) future by value would copy it
                // twice per request.
                let inner =
                    std::pin::pin!(crate::telemetry::HTTP_TRACE.scope(tc, self.handle_inner(req)));
                (
                    tracing::Instrument::instrument(inner, span.clone()).await,
                    span,
                )
            }
        };
        let status = r.status();
        if !span.is_disabled() {
            span.record("http.response.status_code", status.as_u16());
        }
        let metrics = s.server.metrics();
        if metrics.on() && (status.is_client_error() || status.is_server_error()) {
            if let Some(why) = refusal(status, &r) {
                metrics.refused(why);
            }
        }
        r
    }

    async fn handle_inner<B>(&self, req: Request<B>) -> Resp
    where
        B: Body<Data = Bytes> + Unpin,
    {
        let s = &self.shared;
        if let Some(r) = s
            .auth
            .as_ref()
            .and_then(|g| g.metadata(req.method(), req.uri().path()))
        {
            return r;
        }
        let metrics_path = s.opts.metrics_path.as_deref();
        // The metrics path is its own resource: never the MCP endpoint's path.
        let for_metrics =
            metrics_path == Some(req.uri().path()) && s.opts.path.as_deref() != metrics_path;
        if let Some(p) = &s.opts.path {
            if req.uri().path() != p && !for_metrics {
                return body::text(StatusCode::NOT_FOUND, "Not Found");
            }
        }
        match origin::check(
            req.version(),
            req.uri(),
            req.headers(),
            &s.origins,
            &s.hosts,
        ) {
            Ok(()) => {}
            Err(origin::Refused::BadRequest(why)) => {
                return body::rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    &ErrorObject::invalid_request(why),
                );
            }
            Err(origin::Refused::Forbidden) => {
                return body::rpc_error(
                    StatusCode::FORBIDDEN,
                    None,
                    &ErrorObject::invalid_request("Origin or Host not allowed"),
                );
            }
        }
        if for_metrics {
            if req.method() == Method::GET {
                return metrics_reply(&s.server.metrics_text());
            }
            let mut r = body::text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET"));
            return r;
        }
        if s.stopping.is_cancelled() {
            return body::text(StatusCode::SERVICE_UNAVAILABLE, "shutting down");
        }
        // AUTH-06: the token is checked before anything else reads the request.
        let principal = match gate::authorize(s, s.auth.as_ref(), req.uri(), req.headers()).await {
            Ok(p) => p,
            Err(r) => return *r,
        };
        let legacy_on = s.opts.legacy;
        let sessions_on = legacy_on && !s.opts.stateless_legacy;
        match *req.method() {
            Method::POST => s.tracker.track_future(post(s, req, principal)).await,
            Method::GET if sessions_on => legacy::get(s, req.headers(), principal.as_deref()).await,
            Method::DELETE if sessions_on => {
                legacy::delete(s, req.headers(), principal.as_deref()).await
            }
            _ => {
                let mut r = body::text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
                let allow = if sessions_on {
                    "GET, POST, DELETE"
                } else {
                    "POST"
                };
                r.headers_mut()
                    .insert(ALLOW, HeaderValue::from_static(allow));
                r
            }
        }
    }
}

async fn post<B>(s: &Arc<Shared>, req: Request<B>, principal: Option<Arc<Principal>>) -> Resp
where
    B: Body<Data = Bytes> + Unpin,
{
    let (parts, b) = req.into_parts();
    let h = &Arc::new(parts.headers);
    if !headers::is_json_content(h) {
        return body::text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let cap = s.server.limits().max_message_bytes;
    let declared = h
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap as u64) {
        return too_large(cap);
    }
    // The whole body within `body_read_timeout`, here rather than in the listener so a mounted
    // service has the deadline too: a peer that declares a body and never sends it must not
    // hold a request (and its connection) forever.
    let bytes = match tokio::time::timeout(s.opts.body_read_timeout, read_capped(b, cap)).await {
        Ok(Ok(b)) => b,
        Ok(Err(ReadError::TooLarge)) => return too_large(cap),
        Ok(Err(ReadError::Io)) => return body::status(StatusCode::BAD_REQUEST),
        Err(_) => return body_timeout(),
    };
    let v = match parse_frame(&bytes, s.server.limits().max_json_depth) {
        ParsedFrame::Error(e) => return body::rpc_error(StatusCode::BAD_REQUEST, None, &e),
        ParsedFrame::Batch(items) => {
            if let (Some(g), Some(p)) = (&s.auth, &principal) {
                if let Err(r) = g.check_batch(p, &items) {
                    return *r;
                }
            }
            return super::batch::batch(s, h, items, principal.as_deref()).await;
        }
        ParsedFrame::Single(v) => v,
    };
    let version = headers::get_str(h, PROTOCOL_VERSION);
    match classify(v) {
        Incoming::Request { id, method, params } => {
            if !headers::accepts_post_answer(h) {
                return body::text(
                    StatusCode::NOT_ACCEPTABLE,
                    "Accept must allow application/json and text/event-stream",
                );
            }
            if let (Some(g), Some(p)) = (&s.auth, &principal) {
                if let Err(r) = g.check_call(p, &method, params.as_ref()) {
                    return *r;
                }
            }
            match era::route_request(params.as_ref(), version, s.opts.legacy) {
                Route::Modern => modern::request(s, h, id, method, params, principal).await,
                Route::Legacy => legacy::request(s, h, id, method, params, principal).await,
                Route::Refuse(e) => body::rpc_error(StatusCode::BAD_REQUEST, Some(&id), &e),
            }
        }
        Incoming::Notification { method, params } => {
            match era::route_notification(params.as_ref(), version, s.opts.legacy) {
                Route::Legacy => {
                    legacy::notification(s, h, &method, params.as_ref(), principal.as_deref()).await
                }
                _ => modern::notification(&method),
            }
        }
        Incoming::Response { id, outcome } => {
            if !s.opts.legacy {
                return body::rpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    &ErrorObject::invalid_request("clients never send responses on this era"),
                );
            }
            legacy::response(s, h, &id, outcome, principal.as_deref()).await
        }
        Incoming::Invalid { id, error } => {
            body::rpc_error(StatusCode::BAD_REQUEST, id.as_ref(), &error)
        }
    }
}

/// The refusal an error status reports, for the metrics: a gate refusal carries
/// `WWW-Authenticate` (AUTH-06); a 403 without it is the `Origin`/`Host` rule (HTTP-03).
fn refusal(status: StatusCode, r: &Resp) -> Option<crate::telemetry::Refusal> {
    use crate::telemetry::Refusal;
    let gate = r.headers().contains_key(http::header::WWW_AUTHENTICATE);
    Some(match status.as_u16() {
        401 => Refusal::Auth,
        403 if gate => Refusal::Auth,
        403 => Refusal::Origin,
        408 => Refusal::BodyTimeout,
        413 => Refusal::TooLarge,
        400 | 405 | 406 | 415 => Refusal::BadRequest,
        503 => Refusal::Unavailable,
        _ => return None,
    })
}

/// The Prometheus text exposition (format 0.0.4).
fn metrics_reply(text: &str) -> Resp {
    let mut r = http::Response::new(body::HttpBody::full(text.to_owned()));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

fn too_large(cap: usize) -> Resp {
    body::rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        &ErrorObject::invalid_request(format!("request body exceeds {cap} bytes")),
    )
}

/// 408 with a JSON-RPC error (no internal details) and `Connection: close`: the rest of the body
/// may still be on its way, so the connection cannot carry another request.
fn body_timeout() -> Resp {
    let mut r = body::rpc_error(
        StatusCode::REQUEST_TIMEOUT,
        None,
        &ErrorObject::invalid_request("request body not received in time"),
    );
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

type BoxFut = Pin<Box<dyn Future<Output = Result<Resp, Infallible>> + Send>>;

impl<B> hyper::service::Service<Request<B>> for HttpService
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
{
    type Response = Resp;
    type Error = Infallible;
    type Future = BoxFut;

    fn call(&self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

/// The same service for tower-based frameworks: `axum::Router::route_service("/mcp", svc)`.
/// Always ready: the limits apply per request and every refusal is an HTTP response (as from the
/// built-in listener), so the service itself never fails.
impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
{
    type Response = Resp;
    type Error = Infallible;
    type Future = BoxFut;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        hyper::service::Service::call(&*self, req)
    }
}

/// A running standalone listener.
pub struct HttpListener {
    addr: SocketAddr,
    service: HttpService,
    slots: Slots,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpListener {
    /// The bound address (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL: `http` or `https`, the bound address, and the configured path
    /// ([`HttpOptions::path`]; `/` when every path is served).
    pub fn url(&self) -> String {
        let opts = self.service.options();
        let tls = opts.tls.is_some() || opts.tls_config.is_some();
        let scheme = if tls { "https" } else { "http" };
        let path = opts.path.as_deref().unwrap_or("/");
        format!("{scheme}://{}{path}", self.addr)
    }
    /// Connections open right now (accepted and not yet closed), at most
    /// [`HttpOptions::max_connections`]. For monitoring, and for tests that watch a timed-out
    /// connection being released.
    pub fn open_connections(&self) -> usize {
        self.slots.open()
    }
    /// Connections accepted since the listener started.
    pub fn accepted_connections(&self) -> u64 {
        self.slots.counters().accepted.load(Ordering::Relaxed)
    }
    /// Requests that arrived over HTTP/2 since the listener started.
    pub fn http2_requests(&self) -> u64 {
        self.slots.counters().http2_requests.load(Ordering::Relaxed)
    }
    /// The service behind the listener.
    pub fn service(&self) -> &HttpService {
        &self.service
    }
    /// Stop accepting, then shut down gracefully (see [`HttpService::shutdown`]).
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Bind `addr` and serve `server` on it until [`HttpListener::shutdown`] ([`Server::serve_http`]
/// is the usual way to call it).
///
/// # Errors
/// Binding failed, or an option is out of range (including default [`super::AllowList::Auto`]
/// allow-lists on an unspecified address such as `0.0.0.0`: set them explicitly there), or the
/// server's Redis backplane did not come up within its connect timeout
/// ([`std::io::ErrorKind::NotConnected`], "Redis at … is unreachable").
pub async fn serve(
    server: Server,
    addr: SocketAddr,
    opts: HttpOptions,
) -> std::io::Result<HttpListener> {
    let invalid = |e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
    // Check everything that does not depend on the port before binding anything.
    check_options(&opts, Some(addr)).map_err(invalid)?;
    let tls = opts
        .tls_server_config()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // Ready when this returns: the backplane's first connection and bus subscription are up
    // (bounded by its connect timeout), so the first request is not refused as unavailable and
    // a listen stream opened at once hears the other workers.
    server
        .backplane_ready()
        .await
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotConnected, e))?;
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let service = HttpService::build(server, opts, Some(addr)).map_err(invalid)?;
    let stop = CancellationToken::new();
    let slots = Slots::new(service.options().max_connections);
    let _ = service.shared.connections.set(slots.open_gauge());
    let task = tokio::spawn(accept_loop(
        listener,
        service.clone(),
        tls,
        slots.clone(),
        stop.clone(),
    ));
    Ok(HttpListener {
        addr,
        service,
        slots,
        stop,
        task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::{Frame, SizeHint};
    use std::task::{Context, Poll};

    /// A body that sends its first bytes, then nothing more, ever.
    struct Stalled(Option<Bytes>);

    impl Body for Stalled {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            match self.0.take() {
                Some(b) => Poll::Ready(Some(Ok(Frame::data(b)))),
                None => Poll::Pending,
            }
        }
        fn size_hint(&self) -> SizeHint {
            SizeHint::with_exact(100)
        }
    }

    /// A mounted service (no listener) answers a body that stops arriving with 408 once
    /// `body_read_timeout` passes.
    #[tokio::test]
    async fn mounted_service_times_out_a_stalled_body() {
        let server = Server::builder("t", "1").build().expect("server");
        let opts = HttpOptions {
            body_read_timeout: Duration::from_millis(100),
            ..HttpOptions::default()
        };
        let svc = HttpService::new(server, opts).expect("service");
        let req = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("content-length", "100")
            .body(Stalled(Some(Bytes::from_static(b"{\"jsonrpc\":"))))
            .expect("request");
        let started = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(5), svc.handle(req))
            .await
            .expect("answered before the test's own bound");
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(
            r.headers().get(CONNECTION).map(HeaderValue::as_bytes),
            Some(&b"close"[..])
        );
        let body = http_body_util::BodyExt::collect(r.into_body())
            .await
            .expect("body")
            .to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&body).expect("JSON-RPC error");
        assert_eq!(v["error"]["code"], -32600);
        assert!(v["id"].is_null());
    }
}
