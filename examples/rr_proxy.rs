//! `rr-proxy`: a small round-robin HTTP reverse proxy for the scale-out tests, benchmarks and
//! docs (guide: docs/src/scaleout.md): every HTTP request goes to the next upstream in turn, with
//! no stickiness, so consecutive requests of one client (one legacy session, one input_required
//! round) land on different workers. It is a test harness, not a production load balancer (the
//! the guide shows an nginx upstream for that).
//!
//! `rr-proxy --listen 127.0.0.1:PORT --upstream http://127.0.0.1:A --upstream http://127.0.0.1:B ...`
//! (port 0 picks a free port; the bound address is printed on stderr).
//!
//! - Bodies stream both ways: the request body is forwarded as it arrives and the response body
//!   frame by frame, so SSE (`text/event-stream`) flows unbuffered, and a client that goes away
//!   closes its upstream connection (a `subscriptions/listen` stream ends on the worker too).
//! - Hop-by-hop headers (RFC 9110 §7.6.1: `Connection` and the headers it names, `Keep-Alive`,
//!   `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`, `Proxy-*`) are dropped both ways; `Host`
//!   is kept, so the workers' Host/Origin checks see what the client sent.
//! - An upstream that refuses the connection is skipped: the request goes to the next one
//!   (nothing was sent, so even a POST is safe to retry). When none accepts, or an upstream fails
//!   after the request was sent (not safely retryable), the client gets 502.
//! - Upstream connections are HTTP/1.1, kept alive and reused (at most `--max-idle` idle ones
//!   per upstream).

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type ProxyBody = Either<Incoming, Full<Bytes>>;

/// A log line on stderr that never panics (`eprintln!` does when stderr is closed, say by a
/// test that read only the address line).
fn log(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "rr-proxy: {args}");
}

struct Upstream {
    /// `host:port` to connect to.
    authority: String,
    /// A path prefix from the upstream URL (empty for `http://host:port`).
    prefix: String,
    idle: Mutex<Vec<SendRequest<Incoming>>>,
}

struct Proxy {
    upstreams: Vec<Upstream>,
    next: AtomicUsize,
    max_idle: usize,
    connect_timeout: Duration,
}

/// Why a request could not be delivered to one upstream.
enum Failure {
    /// Nothing was sent (connection refused or timed out): try the next upstream.
    NotSent(Box<Request<Incoming>>),
    /// The request went out and the upstream failed before answering: not retryable.
    Sent(hyper::Error),
}

struct Config {
    listen: SocketAddr,
    upstreams: Vec<Upstream>,
    max_idle: usize,
    connect_timeout: Duration,
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "rr-proxy: {problem}\n\
         usage: rr-proxy --listen 127.0.0.1:PORT --upstream http://HOST:PORT[/PREFIX] [--upstream URL ...]\n\
         \x20 --max-idle N            idle keep-alive connections kept per upstream (default 32)\n\
         \x20 --connect-timeout-ms N  give up connecting to an upstream after N ms and try the next (default 2000)"
    );
    std::process::exit(2);
}

fn parse_upstream(url: &str) -> Result<Upstream, String> {
    let uri: Uri = url.parse().map_err(|e| format!("--upstream {url}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!(
            "--upstream {url}: only http:// upstreams are supported"
        ));
    }
    let authority = uri
        .authority()
        .ok_or_else(|| format!("--upstream {url}: no host"))?;
    let port = authority.port_u16().unwrap_or(80);
    Ok(Upstream {
        authority: format!("{}:{port}", authority.host()),
        prefix: uri.path().trim_end_matches('/').to_owned(),
        idle: Mutex::new(Vec::new()),
    })
}

fn parse_args(args: Vec<String>) -> Result<Config, String> {
    let mut listen = None;
    let mut upstreams = Vec::new();
    let mut max_idle = 32usize;
    let mut connect_timeout = Duration::from_millis(2000);
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--listen" => {
                listen = Some(
                    value
                        .parse::<SocketAddr>()
                        .map_err(|e| format!("--listen {value}: {e}"))?,
                );
            }
            "--upstream" => upstreams.push(parse_upstream(&value)?),
            "--max-idle" => {
                max_idle = value
                    .parse()
                    .map_err(|_| format!("--max-idle needs a number, not {value}"))?;
            }
            "--connect-timeout-ms" => {
                let ms: u64 = value.parse().ok().filter(|ms| *ms > 0).ok_or_else(|| {
                    format!("--connect-timeout-ms needs a positive number, not {value}")
                })?;
                connect_timeout = Duration::from_millis(ms);
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let listen = listen.ok_or("--listen is required")?;
    if upstreams.is_empty() {
        return Err("at least one --upstream is required".into());
    }
    Ok(Config {
        listen,
        upstreams,
        max_idle,
        connect_timeout,
    })
}

/// Drop the hop-by-hop headers (RFC 9110 §7.6.1), including those `Connection` names.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in named {
        headers.remove(n);
    }
    for n in [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ] {
        headers.remove(n);
    }
}

fn error_response(status: StatusCode, text: &'static str) -> Response<ProxyBody> {
    let mut r = Response::new(Either::Right(Full::new(Bytes::from_static(
        text.as_bytes(),
    ))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

impl Proxy {
    /// An idle connection to `up`, or a new one. `None`: the upstream cannot be reached.
    async fn sender(&self, up: &Upstream) -> Option<SendRequest<Incoming>> {
        loop {
            let s = up.idle.lock().ok()?.pop();
            match s {
                Some(s) if s.is_ready() => return Some(s),
                Some(_) => continue,
                None => break,
            }
        }
        let connect = tokio::net::TcpStream::connect(&up.authority);
        let stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                log(format_args!("upstream {} unreachable: {e}", up.authority));
                return None;
            }
            Err(_) => {
                log(format_args!("upstream {} connect timed out", up.authority));
                return None;
            }
        };
        let _ = stream.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Some(sender)
    }

    /// Send `req` to `up`, reusing a kept-alive connection when one is idle.
    async fn try_upstream(
        self: &Arc<Self>,
        idx: usize,
        mut req: Request<Incoming>,
    ) -> Result<Response<Incoming>, Failure> {
        let up = &self.upstreams[idx];
        // A pooled connection the upstream closed meanwhile hands the request back (nothing was
        // written); then a fresh connection is tried, and only its failure moves on.
        for _ in 0..2 {
            let Some(mut sender) = self.sender(up).await else {
                return Err(Failure::NotSent(Box::new(req)));
            };
            match sender.try_send_request(req).await {
                Ok(resp) => {
                    let proxy = self.clone();
                    // The connection is free again once the response body has been read to
                    // its end (never, for an SSE stream the client keeps open).
                    tokio::spawn(async move {
                        if sender.ready().await.is_ok() {
                            proxy.park(idx, sender);
                        }
                    });
                    return Ok(resp);
                }
                Err(mut e) => match e.take_message() {
                    Some(back) => req = back,
                    None => return Err(Failure::Sent(e.into_error())),
                },
            }
        }
        Err(Failure::NotSent(Box::new(req)))
    }

    fn park(&self, idx: usize, sender: SendRequest<Incoming>) {
        if let Ok(mut idle) = self.upstreams[idx].idle.lock() {
            if idle.len() < self.max_idle {
                idle.push(sender);
            }
        }
    }

    async fn handle(
        self: Arc<Self>,
        peer: SocketAddr,
        req: Request<Incoming>,
    ) -> Result<Response<ProxyBody>, std::convert::Infallible> {
        let (mut parts, body) = req.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        // An HTTP/2 client names the host in :authority; upstream HTTP/1.1 needs Host.
        if !parts.headers.contains_key(hyper::header::HOST) {
            if let Some(a) = parts.uri.authority() {
                if let Ok(v) = HeaderValue::from_str(a.as_str()) {
                    parts.headers.insert(hyper::header::HOST, v);
                }
            }
        }
        if let Ok(v) = HeaderValue::from_str(&peer.ip().to_string()) {
            parts.headers.append("x-forwarded-for", v);
        }
        parts.version = hyper::Version::HTTP_11;
        let path_and_query = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let mut req = Request::from_parts(parts, body);
        let n = self.upstreams.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            let idx = (start + i) % n;
            let target = format!("{}{path_and_query}", self.upstreams[idx].prefix);
            match target.parse::<Uri>() {
                Ok(u) => *req.uri_mut() = u,
                Err(_) => {
                    return Ok(error_response(
                        StatusCode::BAD_REQUEST,
                        "bad request target\n",
                    ))
                }
            }
            match self.try_upstream(idx, req).await {
                Ok(resp) => {
                    let (mut parts, body) = resp.into_parts();
                    strip_hop_by_hop(&mut parts.headers);
                    return Ok(Response::from_parts(parts, Either::Left(body)));
                }
                Err(Failure::NotSent(back)) => req = *back,
                Err(Failure::Sent(e)) => {
                    log(format_args!(
                        "upstream {} failed mid-request: {e}",
                        self.upstreams[idx].authority
                    ));
                    return Ok(error_response(StatusCode::BAD_GATEWAY, "bad gateway\n"));
                }
            }
        }
        Ok(error_response(
            StatusCode::BAD_GATEWAY,
            "bad gateway: no upstream reachable\n",
        ))
    }
}

#[tokio::main]
async fn main() {
    let cfg = parse_args(std::env::args().skip(1).collect()).unwrap_or_else(|e| usage(&e));
    let listener = match tokio::net::TcpListener::bind(cfg.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("rr-proxy: cannot listen on {}: {e}", cfg.listen);
            std::process::exit(1);
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("rr-proxy: listening on http://{a}"),
        Err(e) => {
            eprintln!("rr-proxy: {e}");
            std::process::exit(1);
        }
    }
    let proxy = Arc::new(Proxy {
        upstreams: cfg.upstreams,
        next: AtomicUsize::new(0),
        max_idle: cfg.max_idle,
        connect_timeout: cfg.connect_timeout,
    });
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                log(format_args!("accept: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| proxy.clone().handle(peer, req));
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}
