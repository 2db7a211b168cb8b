//! A bounded soak over real HTTP: many concurrent clients mixing legacy sessions (initialize,
//! calls, GET stream, DELETE) and modern calls for a few seconds. Checks: no error of any kind,
//! every message schema-valid, and a flat session count (zero) after the DELETEs. Not a speed
//! test: the amount of work done is not asserted.

use mcpcore_tests::fixture::Fixture;
use mcpcore_tests::http::McpHttp;
use serde_json::json;
use std::time::Duration;

/// Clients (SOAK_CLIENTS overrides; the default suits a 2-core machine).
fn clients() -> usize {
    std::env::var("SOAK_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn duration() -> Duration {
    let secs = std::env::var("SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    Duration::from_secs(secs)
}

async fn one_client(addr: std::net::SocketAddr, n: usize, until: tokio::time::Instant) -> usize {
    let mut rounds = 0;
    while tokio::time::Instant::now() < until {
        let mut c = McpHttp::new(addr);
        c.initialize().await;
        let ex = c
            .legacy(
                1,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": format!("c{n}")}}),
            )
            .await;
        assert_eq!(ex.status, 200);
        assert_eq!(ex.last()["result"]["content"][0]["text"], format!("c{n}"));
        let ex = c
            .modern(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "m"}}),
            )
            .await;
        assert_eq!(ex.status, 200);
        assert_eq!(ex.last()["result"]["content"][0]["text"], "m");
        if n.is_multiple_of(4) {
            let mut g = c.get(None).await;
            assert_eq!(g.status, 200);
            let _ = g.next_event().await;
            g.close();
        }
        assert_eq!(c.delete().await, 200);
        rounds += 1;
    }
    rounds
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_many_clients_flat_session_count() {
    let f = Fixture::start().await;
    let until = tokio::time::Instant::now() + duration();
    let tasks: Vec<_> = (0..clients())
        .map(|n| tokio::spawn(one_client(f.addr(), n, until)))
        .collect();
    let mut rounds = 0;
    for t in tasks {
        rounds += tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .expect("a soak client hung")
            .expect("a soak client failed");
    }
    assert!(
        rounds >= clients(),
        "every client completed at least one round"
    );
    assert_eq!(f.listener.service().legacy_session_count(), 0);
    eprintln!("soak: {} clients, {rounds} rounds", clients());
}
