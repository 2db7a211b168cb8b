//! What one HTTP request's spans cost with OTLP export on: the HTTP span and the MCP span
//! under it, made, entered, finished and encoded for the exporter, through the process
//! subscriber. A benchmark, not a test: `scripts/bench-spans.sh` runs it (ignored otherwise).

use super::otlp::{OtlpLayer, OtlpOptions};
use super::subscriber::ProcessSubscriber;
use super::{span, HTTP_TRACE};
use crate::jsonrpc::Id;
use std::time::Instant;

fn subscriber() -> (ProcessSubscriber, std::sync::Arc<super::ExportHandle>) {
    let opts = OtlpOptions {
        endpoint: Some("http://127.0.0.1:9".into()),
        interval_ms: Some(3_600_000),
        max_queue: Some(1 << 20),
        ..OtlpOptions::default()
    };
    let layer = OtlpLayer::new(&opts).expect("layer");
    let handle = layer.handle();
    let process = super::install::Process::exporting(layer);
    (ProcessSubscriber::new(process), handle)
}

/// One request's spans, as the HTTP server and the dispatcher make them.
fn request(n: i64, headers: &http::HeaderMap, params: &serde_json::Map<String, serde_json::Value>) {
    let Some((http_span, trace)) = span::http_request("POST", "/mcp", headers) else {
        panic!("the HTTP span is wanted");
    };
    HTTP_TRACE.sync_scope(trace, || {
        let _in_http = http_span.enter();
        let id = Id::Num(n);
        let Some((mcp, _tc)) = span::server_request(
            "tools/call",
            &id,
            Some(params),
            "http",
            Some(headers),
            &|| None,
        ) else {
            panic!("the MCP span is wanted");
        };
        for _ in 0..3 {
            let _in = mcp.enter();
        }
        span::finish(&mcp, None, None);
    });
    http_span.record("http.response.status_code", 200u16);
}

/// Rounds of `BENCH_CALLS` requests; the fastest is printed.
const ROUNDS: usize = 7;

#[test]
#[ignore = "a benchmark: scripts/bench-spans.sh"]
fn span_pair() {
    let calls: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let (sub, handle) = subscriber();
    let mut headers = http::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().expect("value"));
    let params = serde_json::json!({"name": "echo", "arguments": {"text": "hi"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let params = params.as_object().expect("object").clone();
    tracing::subscriber::with_default(sub, || {
        let (mut best, mut spans, mut bytes, mut made) = (f64::MAX, 0, 0, 0usize);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for n in 0..calls {
                request(n as i64, &headers, &params);
                made += 1;
                // Taken as the exporter would, before a full batch (512 spans) wakes it.
                if made % 255 == 0 {
                    let q = handle.take();
                    (spans, bytes) = (spans + q.ends.len(), bytes + q.bytes.len());
                }
            }
            best = best.min(t.elapsed().as_nanos() as f64 / calls as f64);
        }
        let q = handle.take();
        (spans, bytes) = (spans + q.ends.len(), bytes + q.bytes.len());
        assert_eq!(
            spans,
            2 * calls * ROUNDS,
            "every request's two spans were encoded"
        );
        println!(
            "spans: {calls} requests x {ROUNDS} rounds, fastest {best:.0} ns per request \
             (HTTP span + MCP span, made, finished and encoded; {} bytes per request)",
            bytes / (spans / 2).max(1)
        );
    });
}
