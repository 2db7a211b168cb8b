//! Core's log events through the process's log route (`telemetry::route_logs`), as the Python,
//! Node and C doors receive them: every event at or above the route's level, with its level,
//! its target and its fields as `key=value`; a route changed while serving takes effect at
//! once; `None` stops it. At TRACE, an authorized session's records (both eras, tool
//! arguments holding a marker, a refused call, a bad token) hold neither the bearer token nor
//! the marker. Its own binary: the route installs the process's subscriber.

use mcpcore::telemetry::{route_logs, LogRecord, LogSink};
use mcpcore_tests::auth::secret_workload;
use mcpcore_tests::http::raw_request;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::level_filters::LevelFilter;
use tracing::Level;

type Seen = Arc<Mutex<Vec<(Level, String, String)>>>;

fn sink(seen: &Seen) -> LogSink {
    let seen = seen.clone();
    Arc::new(move |r: &LogRecord<'_>| {
        seen.lock()
            .expect("lock")
            .push((r.level, r.target.to_owned(), r.message.to_owned()));
    })
}

const MARKER: &str = "ARG-SECRET-51c0de";
const NOTE: &str = "notifications/mcpcore-test-note";

/// A 2026-07-28 notification nobody handles: core logs that it ignores it, at DEBUG.
async fn unhandled_note(addr: SocketAddr, token: &str) {
    let auth = format!("Bearer {token}");
    let h = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", NOTE),
        ("Authorization", auth.as_str()),
    ];
    let body = json!({"jsonrpc": "2.0", "method": NOTE, "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let r = raw_request(addr, "POST", "/mcp", &h, body.to_string().as_bytes()).await;
    assert_eq!(r.status, 202, "a notification is accepted");
}

fn notes(seen: &Seen) -> usize {
    seen.lock()
        .expect("lock")
        .iter()
        .filter(|(l, t, m)| {
            *l == Level::DEBUG
                && t.starts_with("mcpcore::transport::http")
                && m.starts_with("ignoring a modern notification")
                && m.contains(&format!("method={NOTE}"))
        })
        .count()
}

async fn wait_for_note(seen: &Seen, n: usize) {
    for _ in 0..200 {
        if notes(seen) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no DEBUG record of the notification: {:?}", seen.lock());
}

#[tokio::test]
async fn log_events_reach_the_route_at_its_level_and_hold_no_secret() {
    let seen = Seen::default();
    route_logs(Some(sink(&seen)), LevelFilter::TRACE).expect("route");
    assert_eq!(LevelFilter::current(), LevelFilter::TRACE);
    let (l, token) = secret_workload(MARKER).await;
    let addr = l.local_addr();
    unhandled_note(addr, &token).await;
    wait_for_note(&seen, 1).await;
    {
        let all = seen.lock().expect("lock");
        let text: String = all.iter().map(|(_, t, m)| format!("{t} {m}\n")).collect();
        assert!(!text.contains(&token), "the bearer token was logged");
        let sig = token.rsplit('.').next().expect("a JWS");
        assert!(!text.contains(sig), "part of the token was logged");
        assert!(!text.contains(MARKER), "an argument value was logged");
    }

    // INFO: the DEBUG record no longer comes. The positive control after it (DEBUG again, the
    // same request) shows the request was handled and logged in time.
    // `tracing`'s global filter follows the route: callsites above it (every crate's) are
    // skipped by one comparison.
    route_logs(Some(sink(&seen)), LevelFilter::INFO).expect("route");
    assert_eq!(LevelFilter::current(), LevelFilter::INFO);
    unhandled_note(addr, &token).await;
    route_logs(Some(sink(&seen)), LevelFilter::DEBUG).expect("route");
    assert_eq!(LevelFilter::current(), LevelFilter::DEBUG);
    unhandled_note(addr, &token).await;
    wait_for_note(&seen, 2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(notes(&seen), 2, "the INFO route passed a DEBUG record");

    // No route: nothing more arrives.
    route_logs(None, LevelFilter::TRACE).expect("route");
    assert_eq!(
        LevelFilter::current(),
        LevelFilter::OFF,
        "nothing exported, no route"
    );
    let before = seen.lock().expect("lock").len();
    unhandled_note(addr, &token).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(seen.lock().expect("lock").len(), before);
    assert!(route_logs(None, LevelFilter::OFF).is_ok());
}
