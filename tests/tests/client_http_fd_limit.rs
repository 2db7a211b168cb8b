//! The HTTP client under a low descriptor limit (REQUIREMENTS HTTP-01): 1,000 overlapping calls
//! with `ulimit -n 256` all succeed, because the pool opens at most `maxConnections` (64)
//! sockets and the other calls wait for one. Opening a socket per call exhausted the
//! descriptors and failed calls with a connect error. Its own test binary: the limit is
//! process-wide.
#![cfg(unix)]

use mcpcore::client::{Client, HttpClientOptions};
use mcpcore_tests::fixture::Fixture;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_fit_in_256_descriptors() {
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    setrlimit(Resource::RLIMIT_NOFILE, 256.min(hard), hard).expect("setrlimit");
    let f = Fixture::start().await;
    let c = Client::builder()
        .connect_http(
            &format!("http://{}/mcp", f.addr()),
            HttpClientOptions::default(),
        )
        .await
        .expect("connect");
    let calls: Vec<_> = (0..1000)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.call_tool("slow", json!({"ms": 20})).await })
        })
        .collect();
    let mut failed = Vec::new();
    for h in calls {
        let r = tokio::time::timeout(Duration::from_secs(60), h)
            .await
            .expect("within the bound")
            .expect("join");
        if let Err(e) = r {
            failed.push(e.to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of 1000 calls failed, e.g. {:?}",
        failed.len(),
        failed.first()
    );
    c.close().await;
    f.listener.shutdown().await;
}
