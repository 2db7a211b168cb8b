//! Spans exported over OTLP/HTTP (protobuf) to a receiver on 127.0.0.1: a client→server call
//! over HTTP and over an in-process byte stream arrives as client, HTTP and server spans with
//! the conventions' names and attributes, linked into one trace by their W3C ids; the
//! resource names the service. Its own binary: `telemetry::install` sets the process's one
//! global subscriber.

use mcpcore::client::Client;
use mcpcore::telemetry::{flush, install, TelemetryOptions};
use mcpcore::Server;
use mcpcore_tests::otlp::{echo_server, served_over_http, Receiver, Span};
use serde_json::json;
use std::time::Duration;

fn server() -> Server {
    echo_server("otlp", |o| o.metrics = true)
}

fn one<'a>(spans: &'a [Span], name: &str, kind: u64, transport: &str) -> &'a Span {
    let found: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == name && s.kind == kind)
        .filter(|s| {
            kind != 2
                || s.attributes.get("network.transport").map(String::as_str) == Some(transport)
        })
        .collect();
    assert_eq!(found.len(), 1, "{name} kind {kind}: {spans:#?}");
    found[0]
}

#[tokio::test]
async fn spans_reach_an_otlp_receiver_as_one_trace() {
    let rx = Receiver::start().await;
    let mut opts = TelemetryOptions::default();
    mcpcore::options::apply_json(
        &mut opts,
        &json!({"otlp": {"endpoint": rx.endpoint(), "serviceName": "otlp-test", "intervalMs": 50,
            "metricsIntervalMs": 60000}}),
    )
    .expect("options");
    install(&opts).expect("install");
    assert!(install(&opts).is_err(), "once per process");

    let (_l, c) = served_over_http(server()).await;
    c.call_tool("echo", json!({"via": "http"}))
        .await
        .expect("call");
    c.close().await;
    // Kept alive: a server's metrics are exported while it lives.
    let mem_server = server();
    let mut with_metrics = mcpcore::client::ClientOptions::default();
    with_metrics.metrics = true;
    let mem = Client::builder()
        .options(with_metrics)
        .connect_in_memory(&mem_server)
        .await
        .expect("connect");
    mem.call_tool("echo", json!({"via": "pipe"}))
        .await
        .expect("call");
    mem.close().await;
    // `flush` blocks: off the runtime that also serves the receiver.
    let flushed = tokio::task::spawn_blocking(|| flush(Duration::from_secs(10)))
        .await
        .expect("join");
    assert!(flushed, "exported in time");

    let spans = rx.spans();
    assert!(spans.iter().all(|s| s.service == "otlp-test"));
    // Over HTTP: client span → HTTP request span → MCP server span, one trace.
    let http_server = one(&spans, "tools/call echo", 2, "tcp");
    let http_span = spans
        .iter()
        .find(|s| s.span_id == http_server.parent_span_id)
        .expect("the MCP span's parent was exported");
    assert_eq!((http_span.name.as_str(), http_span.kind), ("POST", 2));
    assert_eq!(http_span.attributes["http.response.status_code"], "200");
    let client = spans
        .iter()
        .find(|s| s.span_id == http_span.parent_span_id)
        .expect("the HTTP span's parent was exported");
    assert_eq!((client.name.as_str(), client.kind), ("tools/call echo", 3));
    assert_eq!(client.trace_id, http_server.trace_id);
    assert_eq!(http_server.attributes["mcp.method.name"], "tools/call");
    assert_eq!(http_server.attributes["gen_ai.tool.name"], "echo");
    assert_eq!(http_server.attributes["mcp.protocol.version"], "2026-07-28");
    // Over the in-process stream: the server span is the client span's child.
    let pipe_server = one(&spans, "tools/call echo", 2, "pipe");
    let pipe_client = spans
        .iter()
        .find(|s| s.span_id == pipe_server.parent_span_id)
        .expect("parent exported");
    assert_eq!(pipe_client.kind, 3);
    assert_eq!(pipe_client.trace_id, pipe_server.trace_id);
    assert_ne!(
        pipe_client.trace_id, client.trace_id,
        "two calls, two traces"
    );
    for s in &spans {
        assert_eq!(s.trace_id.len(), 32);
        assert_ne!(s.trace_id, "0".repeat(32));
    }

    // Metrics, exported on the flush (long before their interval): the two servers' echoes as
    // one series (a point's identity is its name and attributes: never reported twice), and
    // the client's own (the in-process client records; the HTTP one does not).
    let points = rx.metric_points();
    let echo = |metric: &str| -> Vec<u64> {
        points
            .iter()
            .filter(|(n, a, _)| {
                n == metric
                    && a.get("gen_ai.tool.name").map(String::as_str) == Some("echo")
                    && a.get("mcp.method.name").map(String::as_str) == Some("tools/call")
            })
            .map(|(_, _, count)| *count)
            .collect()
    };
    assert_eq!(
        echo("mcp.server.operation.duration"),
        vec![2],
        "{points:#?}"
    );
    assert_eq!(
        echo("mcp.client.operation.duration"),
        vec![1],
        "{points:#?}"
    );
    assert!(points
        .iter()
        .any(|(n, a, c)| n == "mcp.client.session.duration"
            && a.get("network.transport").map(String::as_str) == Some("pipe")
            && *c == 1));
    assert!(points.iter().any(|(n, a, _)| n == "mcpcore.server.refused"
        && a.get("reason").map(String::as_str) == Some("busy")));
    assert!(points
        .iter()
        .any(|(n, _, _)| n == "mcpcore.server.requests_in_flight"));
}
