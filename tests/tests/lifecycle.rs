//! Legacy lifecycle over real stdio pipes (REQUIREMENTS LC-01, LC-02, LC-07, JR-*).

use mcpcore_tests::StdioPeer;
use serde_json::json;

#[tokio::test]
async fn lc01_initialize_and_tools_call() {
    let mut p = StdioPeer::demo();
    let r = p.initialize("2025-11-25", json!({})).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(r["result"]["serverInfo"]["name"], "mcpcore-demo");
    assert!(r["result"]["capabilities"]["tools"].is_object());
    let r = p
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hi");
}

#[tokio::test]
async fn jr_parse_error_keeps_connection() {
    let mut p = StdioPeer::demo();
    p.send_raw(b"{not json\n").await;
    let m = p.recv().await;
    assert_eq!(m["error"]["code"], -32700);
    assert_eq!(m["id"], serde_json::Value::Null);
    let r = p.initialize("2025-11-25", json!({})).await;
    assert!(r.get("result").is_some());
}
