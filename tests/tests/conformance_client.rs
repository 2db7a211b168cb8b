//! The conformance fixture client (`examples/conformance_client.rs`) against a
//! scripted Streamable HTTP server on 127.0.0.1, for rules the official suite checks; every
//! request the client sends is validated against the 2026-07-28 schema.

use mcpcore_tests::scripted::{json_resp, rpc_error, rpc_result, Scripted};
use mcpcore_tests::{example_bin, validate_message, Era};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// VER-01 / SEP-2575 (suite scenario `request-metadata`, check
/// `sep-2575-client-retry-supported-version`): the first request is refused with -32022 naming
/// the supported versions; the client retries with one of them and completes the scenario.
#[tokio::test]
async fn request_metadata_retries_after_32022_with_a_supported_version() {
    let refused = Arc::new(AtomicBool::new(false));
    let r2 = refused.clone();
    let srv = Scripted::start(move |r| {
        let id = r.id();
        if !r2.swap(true, Ordering::SeqCst) {
            let data = json!({"supported": ["2026-07-28"], "requested": "2026-07-28"});
            return json_resp(400, &rpc_error(&id, -32022, Some(data)));
        }
        match r.rpc_method() {
            "server/discover" => json_resp(
                200,
                &rpc_result(
                    &id,
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                           "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
                ),
            ),
            _ => json_resp(
                200,
                &rpc_result(&id, json!({"tools": [], "resultType": "complete"})),
            ),
        }
    })
    .await;
    let child = tokio::process::Command::new(example_bin("conformance-client"))
        .arg(&srv.url)
        .env("MCP_CONFORMANCE_SCENARIO", "request-metadata")
        .env("MCP_CONFORMANCE_PROTOCOL_VERSION", "2026-07-28")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .expect("the client finishes (bounded)")
        .expect("run conformance-client");
    assert!(
        out.status.success(),
        "conformance-client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let posts: Vec<_> = srv
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(posts.len() >= 2, "a retry follows the -32022: {posts:?}");
    for p in &posts {
        validate_message(Era::Modern, &p.body, None)
            .unwrap_or_else(|e| panic!("invalid client message {}: {e}", p.body));
        let v = p.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].clone();
        assert_eq!(v, "2026-07-28", "{}", p.body);
        assert!(
            p.head.contains("mcp-protocol-version: 2026-07-28"),
            "{}",
            p.head
        );
    }
    assert!(
        posts[1..].iter().any(|p| p.rpc_method() == "tools/list"),
        "the scenario carried on after the retry: {posts:?}"
    );
}
