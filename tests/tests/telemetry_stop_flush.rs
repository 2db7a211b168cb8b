//! A server that stops serving waits for what it recorded to be exported (`stopFlushMs`): a
//! stdio server usually exits right after stdin ends, and its spans would otherwise wait for a
//! full batch or the export interval, which here is ten minutes. Over stdio (`demo-server
//! --otlp`, a process of its own, its stdin ended) and over HTTP in this process (the listener
//! shut down). Its own binary: `telemetry::install` sets the process's one global subscriber.

use mcpcore::telemetry::{install, TelemetryOptions};
use mcpcore::Server;
use mcpcore_tests::otlp::{echo_server, served_over_http, Receiver};
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn server() -> Server {
    echo_server("stop-flush", |_| {})
}

fn server_spans(rx: &Receiver, transport: &str) -> usize {
    rx.spans()
        .iter()
        .filter(|s| s.name == "tools/call echo" && s.kind == 2)
        .filter(|s| s.attributes.get("network.transport").map(String::as_str) == Some(transport))
        .count()
}

#[tokio::test]
async fn a_stopping_server_exports_what_it_recorded_before_returning() {
    let rx = Receiver::start().await;
    let mut opts = TelemetryOptions::default();
    mcpcore::options::apply_json(
        &mut opts,
        &json!({"otlp": {"endpoint": rx.endpoint(), "intervalMs": 600_000,
            "metricsIntervalMs": 600_000}}),
    )
    .expect("options");
    install(&opts).expect("install");

    // stdio: demo-server exporting to the receiver with a ten-minute interval; the client's
    // frames, then end of input; the process exits once serve_stdio returned.
    let mut child = tokio::process::Command::new(mcpcore_tests::example_bin("demo-server"))
        .arg("--otlp")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "600000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("demo-server");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // One frame at a time: the call waits for the initialize answer, as a client would.
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}}),
    ];
    for f in frames {
        stdin
            .write_all(format!("{f}\n").as_bytes())
            .await
            .expect("write");
        if let Some(id) = f.get("id") {
            let line = stdout.next_line().await.expect("read").expect("an answer");
            assert!(line.contains(&format!(r#""id":{id}"#)), "{line}");
            assert!(line.contains(r#""result""#), "{line}");
        }
    }
    assert_eq!(server_spans(&rx, "pipe"), 0, "not exported before the stop");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("exits after EOF")
        .expect("status");
    assert!(status.success(), "{status}");
    assert_eq!(
        server_spans(&rx, "pipe"),
        1,
        "exported before the process exited"
    );

    // HTTP: exported by the time the listener's shutdown returned.
    let (l, c) = served_over_http(server()).await;
    c.call_tool("echo", json!({"via": "http"}))
        .await
        .expect("call");
    c.close().await;
    assert_eq!(server_spans(&rx, "tcp"), 0, "not exported before the stop");
    l.shutdown().await;
    assert_eq!(server_spans(&rx, "tcp"), 1, "exported by the shutdown");
}
