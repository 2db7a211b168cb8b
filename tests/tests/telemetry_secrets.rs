//! No secret reaches the logs at any level: core's TRACE output (events and every span with its
//! fields, `tracing-subscriber`'s fmt layer) during an authorized session in both eras — tool
//! calls whose arguments hold a marker, a refused call carrying the same marker, a bad token —
//! contains neither the bearer token nor the marker. Its own binary: it installs the process's
//! global subscriber.

use mcpcore::client::{Client, ConnectMode, HttpClientOptions};
use mcpcore_tests::auth::{claims, jwks, jwks_file, listen, options, server, TestKey};
use mcpcore_tests::http::raw_request;
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const MARKER: &str = "ARG-SECRET-7f3a9c";

#[tokio::test]
async fn trace_output_of_an_authorized_session_holds_no_token_or_argument() {
    let buf = Buf::default();
    let writer = buf.clone();
    tracing_subscriber::fmt()
        .with_env_filter("mcpcore=trace")
        .with_span_events(FmtSpan::FULL)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();
    let key = TestKey::generate("k1");
    let mut o = options();
    o.jwks_path = Some(jwks_file(&jwks(&[&key])));
    let l = listen(&server(), Some(o)).await;
    let token = key.sign(&claims("alice", "mcp:tools"));
    let url = format!("http://{}/mcp", l.local_addr());
    for mode in [ConnectMode::Modern, ConnectMode::Legacy] {
        let mut h = HttpClientOptions::default();
        h.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
        let c = Client::builder()
            .mode(mode)
            .connect_http(&url, h)
            .await
            .expect("connect");
        c.call_tool("whoami", json!({"note": MARKER}))
            .await
            .expect("call");
        let refused = c.call_tool("admin_op", json!({"note": MARKER})).await;
        assert!(refused.is_err(), "admin_op needs a scope alice lacks");
        let _ = c.call_tool("no_such_tool", json!({"note": MARKER})).await;
        c.close().await;
    }
    let bad = format!("Bearer {token}x");
    let h = [
        ("Content-Type", "application/json"),
        ("Authorization", bad.as_str()),
    ];
    let r = raw_request(l.local_addr(), "POST", "/mcp", &h, MARKER.as_bytes()).await;
    assert_eq!(r.status, 401);

    let out = String::from_utf8_lossy(&buf.0.lock().expect("lock")).into_owned();
    assert!(
        out.contains("tools/call whoami"),
        "TRACE output was recorded: {out}"
    );
    assert!(out.contains("TRACE") || out.contains("DEBUG") || out.contains("INFO"));
    assert!(!out.contains(&token), "the bearer token was logged");
    let sig = token.rsplit('.').next().expect("a JWS");
    assert!(!out.contains(sig), "part of the token was logged");
    assert!(!out.contains(MARKER), "an argument value was logged");
}
