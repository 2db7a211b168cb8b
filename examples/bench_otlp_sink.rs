//! `bench-otlp-sink`: the collector stand-in for `scripts/bench-http.sh` (not a test) — answers
//! every OTLP/HTTP POST 200 with an empty body, counts the spans it was sent (one per `Span`
//! message: field 2 of `ScopeSpans`, itself field 2 of `ResourceSpans`, field 1 of the export
//! request) and reports the count on `GET /count`. It prints its bound address on stderr.
//!
//! Native, not Python: the sink shares the load generator's core, and a Python scan of some
//! 60,000 spans a second took enough of that core to slow `wrk`, charging the sink's cost to the
//! exporting server.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};

static SPANS: AtomicU64 = AtomicU64::new(0);

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The length-delimited fields numbered `want` of one message (others skipped); stops at the
/// first malformed byte.
fn fields(b: &[u8], want: u64) -> Vec<&[u8]> {
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        let Some(key) = varint(b, &mut i) else { break };
        let skip = match key & 7 {
            0 => varint(b, &mut i).map(|_| 0),
            1 => Some(8),
            5 => Some(4),
            2 => varint(b, &mut i).and_then(|n| usize::try_from(n).ok()),
            _ => None,
        };
        let Some(n) = skip.filter(|n| i + n <= b.len()) else {
            break;
        };
        if key & 7 == 2 && key >> 3 == want {
            out.push(&b[i..i + n]);
        }
        i += n;
    }
    out
}

fn count(body: &[u8]) -> u64 {
    let mut n = 0;
    for rs in fields(body, 1) {
        for ss in fields(rs, 2) {
            n += fields(ss, 2).len() as u64;
        }
    }
    n
}

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() == Method::GET {
        let n = SPANS.load(Ordering::Relaxed).to_string();
        return Ok(Response::new(Full::new(Bytes::from(n))));
    }
    if let Ok(body) = req.into_body().collect().await {
        SPANS.fetch_add(count(&body.to_bytes()), Ordering::Relaxed);
    }
    Ok(Response::new(Full::new(Bytes::new())))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bench-otlp-sink: cannot bind: {e}");
            std::process::exit(1);
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("bench-otlp-sink: listening on http://{a}"),
        Err(e) => {
            eprintln!("bench-otlp-sink: {e}");
            std::process::exit(1);
        }
    }
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), hyper::service::service_fn(answer))
                .await;
        });
    }
}
