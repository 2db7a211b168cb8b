//! No secret reaches the logs at any level: core's TRACE output (events and every span with its
//! fields, `tracing-subscriber`'s fmt layer) during an authorized session in both eras — tool
//! calls whose arguments hold a marker, a refused call carrying the same marker, a bad token —
//! contains neither the bearer token nor the marker. Its own binary: it installs the process's
//! global subscriber.

use mcpcore_tests::auth::secret_workload;
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
    let (_l, token) = secret_workload(MARKER).await;

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
