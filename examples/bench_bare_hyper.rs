//! `bench-bare-hyper`: the baseline for `scripts/bench-http.sh` — a bare hyper 1.x server that
//! parses each POSTed JSON-RPC `tools/call` with serde_json and serializes the echo answer, with
//! no MCP logic at all. It prints its bound address on stderr (port 0 allowed).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::convert::Infallible;

async fn echo(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = v
        .pointer("/params/arguments/text")
        .cloned()
        .unwrap_or(Value::Null);
    let answer = json!({"jsonrpc": "2.0", "id": v.get("id").cloned().unwrap_or(Value::Null),
        "result": {"content": [{"type": "text", "text": text}], "resultType": "complete"}});
    let out = serde_json::to_vec(&answer).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(out)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bench-bare-hyper: cannot bind {addr}: {e}");
            std::process::exit(1);
        }
    };
    match listener.local_addr() {
        Ok(a) => eprintln!("bench-bare-hyper: listening on http://{a}/mcp"),
        Err(e) => {
            eprintln!("bench-bare-hyper: {e}");
            std::process::exit(1);
        }
    }
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), hyper::service::service_fn(echo))
                .await;
        });
    }
}
