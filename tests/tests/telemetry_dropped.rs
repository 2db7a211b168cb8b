//! A collector that stalls: the OTLP exporter's queue (`maxQueue`) fills, further spans are
//! dropped rather than buffered without bound, and the drops are counted where an operator
//! looks — `telemetry::spans_dropped`, every server's Prometheus exposition
//! (`mcpcore_telemetry_spans_dropped_total`) and the OTLP metrics export
//! (`mcpcore.telemetry.spans_dropped`). Its own binary: `telemetry::install` sets the
//! process's one global subscriber.

use mcpcore::server::SessionKind;
use mcpcore::telemetry::{flush, install, spans_dropped, TelemetryOptions};
use mcpcore::transport::NullOutbound;
use mcpcore::Id;
use mcpcore_tests::otlp::{decode_metrics, echo_server};
use mcpcore_tests::scripted::{raw, Act, Scripted};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const CALLS: u64 = 30;
const MAX_QUEUE: u64 = 4;

#[tokio::test]
async fn a_stalled_collector_drops_spans_past_the_queue_and_counts_them() {
    // The first span export hangs (until the exporter's 5 s timeout, long enough for the calls
    // below on a loaded machine); every other is taken.
    let hung = Arc::new(AtomicBool::new(false));
    let h = hung.clone();
    let collector = Scripted::start(move |r| {
        if r.target == "/v1/traces" && !h.swap(true, Ordering::SeqCst) {
            Act::Hang
        } else {
            raw(200, "application/x-protobuf", "", b"")
        }
    })
    .await;
    assert_eq!(spans_dropped(), None, "nothing is exported yet");
    let mut opts = TelemetryOptions::default();
    mcpcore::options::apply_json(
        &mut opts,
        &json!({"otlp": {"endpoint": collector.url.trim_end_matches("/mcp"),
            "maxQueue": MAX_QUEUE, "maxBatch": 1, "timeoutMs": 5000, "intervalMs": 600_000,
            "metricsIntervalMs": 600_000, "stopFlushMs": 0}}),
    )
    .expect("options");
    install(&opts).expect("install");
    assert_eq!(spans_dropped(), Some(0));

    let server = echo_server("dropped", |o| o.metrics = true);
    let sink = Arc::new(NullOutbound);
    let session = server.new_session(SessionKind::Stdio, sink.clone());
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}});
    session
        .handle_request(
            Id::Num(0),
            "initialize".into(),
            init.as_object().cloned(),
            sink.clone(),
        )
        .await
        .expect("initialize answered");
    session.handle_notification("notifications/initialized", None);
    // Wait for the first export to be hanging: the exporter is then stuck until its timeout.
    for _ in 0..200 {
        if hung.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        hung.load(Ordering::SeqCst),
        "the first export reached the collector"
    );
    let args = json!({"name": "echo", "arguments": {"text": "x"}});
    for i in 1..=CALLS {
        let r = session
            .handle_request(
                Id::Num(i as i64),
                "tools/call".into(),
                args.as_object().cloned(),
                sink.clone(),
            )
            .await
            .expect("answered");
        assert!(
            r.result.is_ok(),
            "a stalled collector never fails a request"
        );
    }
    let dropped = spans_dropped().expect("exporting");
    // Every call made a span; the queue kept MAX_QUEUE of them while the exporter hung.
    assert!(
        (CALLS - MAX_QUEUE..=CALLS).contains(&dropped),
        "{dropped} of {CALLS} spans dropped with a queue of {MAX_QUEUE}"
    );
    let text = server.metrics_text();
    assert!(
        text.contains(&format!(
            "mcpcore_telemetry_spans_dropped_total {dropped}\n"
        )),
        "{text}"
    );
    assert!(text.contains("# TYPE mcpcore_telemetry_spans_dropped_total counter"));

    // Once the hung export timed out, a flush exports the queue and the metrics, the count
    // among them.
    // (`flush` blocks its thread; the collector runs on this test's runtime.)
    let flushed = tokio::task::spawn_blocking(|| flush(Duration::from_secs(30)));
    assert!(flushed.await.expect("flush"), "flushed");
    let points: Vec<_> = collector
        .requests()
        .into_iter()
        .filter(|r| r.target == "/v1/metrics")
        .flat_map(|r| decode_metrics(&r.bytes))
        .filter(|(name, _, _)| name == "mcpcore.telemetry.spans_dropped")
        .collect();
    assert_eq!(points.len(), 1, "{points:?}");
    assert_eq!(points[0].2, dropped);
}
