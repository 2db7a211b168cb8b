//! `mcpcore gateway --redis`: two gateway workers sharing a real redis-server behind `rr-proxy`,
//! which sends every HTTP request to the next worker. A legacy session's elicitation is asked on
//! one worker and answered through the other; a modern `input_required` round sealed by one
//! worker is retried on the other.

mod common;

use common::{mcpcore, ok_json, LIMIT};
use mcpcore_tests::example_bin;
use mcpcore_tests::redis::{RedisServer, TEST_KEY};
use std::net::SocketAddr;
use tokio::io::AsyncBufReadExt;

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// One gateway worker: the child and its address.
async fn worker(config: &str, redis: &str, host: &str) -> (tokio::process::Child, SocketAddr) {
    let mut child = common::spawn(&[
        "gateway",
        config,
        "--http",
        "127.0.0.1:0",
        "--quiet",
        "--redis",
        redis,
        "--request-state-key",
        TEST_KEY,
        "--allowed-hosts",
        host,
    ]);
    let mut err = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(LIMIT, async {
        while let Ok(Some(l)) = err.next_line().await {
            if let Some(u) = l.strip_prefix("mcpcore: serving http://") {
                return u.trim_end_matches("/mcp").to_owned();
            }
        }
        panic!("the worker did not start");
    })
    .await
    .expect("the worker starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
    (child, url.parse().expect("address"))
}

#[tokio::test]
async fn two_gateway_workers_share_sessions_and_rounds_through_redis() {
    let redis = RedisServer::start();
    let demo = example_bin("demo-server").display().to_string();
    let dir = std::env::temp_dir().join(format!("mcpcore-gw-redis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!("[upstreams.demo]\ncommand = [\"{demo}\"]\n"),
    )
    .expect("config");
    let config = config.display().to_string();

    let mut last = String::new();
    for _ in 0..5 {
        let host = format!("127.0.0.1:{}", free_port());
        let a = worker(&config, &redis.url(0), &host).await;
        let b = worker(&config, &redis.url(0), &host).await;
        let args = [
            "--listen".to_owned(),
            host.clone(),
            "--upstream".to_owned(),
            format!("http://{}", a.1),
            "--upstream".to_owned(),
            format!("http://{}", b.1),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _proxy = match mcpcore_tests::http::try_spawn_example("rr-proxy", &args).await {
            Ok(p) => p,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let url = format!("http://{host}/mcp");
        for mode in ["legacy", "modern"] {
            let args = ["call", "--mode", mode, &url, "confirm", "question=Across?"];
            let r = ok_json(&mcpcore(&args, "yes\n").await);
            assert_eq!(r["content"][0]["text"], "confirmed: Across?", "{mode}");
            let r = ok_json(&mcpcore(&["call", "--mode", mode, &url, "echo", "text=rr"], "").await);
            assert_eq!(r["content"][0]["text"], "rr");
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    panic!("rr-proxy did not start on any of 5 free ports: {last}");
}

#[tokio::test]
async fn redis_without_a_key_is_a_usage_error() {
    let o = mcpcore(
        &[
            "gateway",
            "x.toml",
            "--http",
            "127.0.0.1:0",
            "--redis",
            "redis://127.0.0.1:1/0",
        ],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--redis needs --request-state-key"));
    let o = mcpcore(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--request-state-key",
            "k:zz",
            "--",
            "x",
        ],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("--request-state-key") && !e.contains("zz"),
        "the key is never echoed: {e}"
    );
}
