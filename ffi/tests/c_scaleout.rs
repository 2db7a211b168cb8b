//! The C door to scale-out: `examples/c/echo_server.c --http ADDR --redis URL
//! --request-state-key B64` selects the Redis backplane with the `redis` and
//! `requestState.keys` keys of the server options JSON (`mcp_server_builder_options_json`); without
//! the key the build is refused. Two C workers share one real `redis-server`: a legacy
//! session initialized on one is served by the other, and DELETE on either ends it on both
//! (REQUIREMENTS LHTTP-02, LHTTP-03 across processes). Run plain and under ASan+UBSan (valgrind
//! and LSan-only are left to the other C tests: the Redis connection's threads add minutes under
//! valgrind and nothing the sanitizers do not already check).

mod support;

use mcpcore_tests::http::{check, McpHttp};
use mcpcore_tests::redis::RedisServer;
use mcpcore_tests::Era;
use serde_json::{json, Value};
use std::time::Duration;
use support::{build, HttpExample, Variant};

/// The first answer may take long under the sanitizers (the runtime starts up first).
const FIRST_WAIT: Duration = Duration::from_secs(180);
const EXIT_WAIT: Duration = Duration::from_secs(60);

fn echoed(ex: &mcpcore_tests::http::Exchange) -> String {
    ex.last()
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text result in {:?}", ex.messages))
        .to_owned()
}

/// Through the C ABI too, a Redis-backed server without request-state keys is refused at build
/// (`mcp_server_builder_build`), the message naming the JSON option.
fn no_key_is_refused(exe: &std::path::Path, url: &str) {
    let out = std::process::Command::new(exe)
        .args(["--http", "127.0.0.1:0", "--redis", url])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the C server");
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("requestState.keys"), "{err}");
}

#[tokio::test]
async fn c_workers_share_legacy_sessions_through_the_redis_option() {
    let _serial = support::one_at_a_time().await;
    let redis = RedisServer::start();
    for (db, v) in [(1u8, Variant::Plain), (2, Variant::Sanitized)] {
        let exe = build("echo_server_redis", &["examples/c/echo_server.c"], v);
        let url = redis.url(db);
        if v == Variant::Plain {
            no_key_is_refused(&exe, &url);
        }
        let key = mcpcore_tests::redis::TEST_KEY
            .split_once(':')
            .map_or("", |(_, k)| k);
        let args = [
            "--http",
            "127.0.0.1:0",
            "--redis",
            url.as_str(),
            "--request-state-key",
            key,
        ];
        let a = HttpExample::spawn(&exe, v, &args, FIRST_WAIT).await;
        let b = HttpExample::spawn(&exe, v, &args, FIRST_WAIT).await;
        let mut on_a = McpHttp::new(a.addr());
        let init = tokio::time::timeout(FIRST_WAIT, on_a.initialize())
            .await
            .expect("initialize in time");
        assert_eq!(init.last()["result"]["serverInfo"]["name"], "c-echo");
        // The same session, sent to the other process.
        let mut on_b = on_a.clone();
        on_b.addr = b.addr();
        let ex = tokio::time::timeout(
            FIRST_WAIT,
            on_b.legacy(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "from b"}}),
            ),
        )
        .await
        .expect("the call in time");
        assert_eq!(ex.status, 200, "{v:?}: {:?}", ex.messages);
        check(Era::Legacy, ex.last(), Some("tools/call"));
        assert_eq!(echoed(&ex), "from b");
        // DELETE on B ends the session on A too (LHTTP-03): 404 there.
        let status = on_b.delete().await;
        assert!(
            status == 200 || status == 204,
            "{v:?}: DELETE gave {status}"
        );
        let ex = on_a.legacy(3, "tools/list", json!({})).await;
        assert_eq!(ex.status, 404, "{v:?}: A still serves the deleted session");
        a.stop(&exe, v, EXIT_WAIT).await;
        b.stop(&exe, v, EXIT_WAIT).await;
    }
}
