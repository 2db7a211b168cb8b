//! `Client::listen` on a legacy session over real Streamable HTTP (REQUIREMENTS SUB-07, SUB-04,
//! SUB-06): the subscription `resources/subscribe`s its URIs and takes the session's matching
//! list_changed and `resources/updated` notifications; nothing it did not ask for; closing it
//! unsubscribes.

use mcpcore::client::{Client, ConnectMode, HttpClientOptions};
use mcpcore_tests::fixture::Fixture;
use serde_json::json;
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

#[tokio::test]
async fn sub07_legacy_listen_routes_the_session_notifications() {
    let f = Fixture::start().await;
    let url = format!("http://{}/mcp", f.addr());
    let c = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_http(&url, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    assert!(!c.is_modern());
    let mut sub = bounded(c.listen(json!({
        "toolsListChanged": true,
        "resourceSubscriptions": ["demo://readme"]
    })))
    .await
    .expect("listen");
    // SUB-06: honoured as the server's capabilities promise.
    assert_eq!(
        sub.honored(),
        &json!({"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]})
    );
    let server = f.server.clone();
    // The legacy GET stream may open after connect: retry until the first notification lands.
    let first = bounded(async {
        loop {
            server.notify_prompts_list_changed(); // not asked for: never delivered
            assert_eq!(server.notify_resource_updated("demo://readme"), 1);
            if let Ok(n) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
                break n;
            }
        }
    })
    .await
    .expect("a notification");
    assert_eq!(first["method"], "notifications/resources/updated");
    assert_eq!(first["params"]["uri"], "demo://readme");
    server.notify_tools_list_changed();
    let n = bounded(async {
        loop {
            let n = sub.next().await.expect("open");
            if n["method"] != "notifications/resources/updated" {
                break n;
            }
        }
    })
    .await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    sub.close().await;
    // Closing unsubscribed: the server has no session subscribed to the URI any more.
    assert_eq!(server.notify_resource_updated("demo://readme"), 0);
    c.close().await;
    f.listener.shutdown().await;
}

#[tokio::test]
async fn sub07_legacy_listen_without_the_capability_honours_nothing() {
    let f = Fixture::start().await;
    let url = format!("http://{}/mcp", f.addr());
    let c = bounded(
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_http(&url, HttpClientOptions::default()),
    )
    .await
    .expect("connect");
    let caps = c.server_capabilities();
    let sub = bounded(c.listen(json!({"promptsListChanged": true, "bogus": true})))
        .await
        .expect("listen");
    let expect = if caps.pointer("/prompts/listChanged") == Some(&json!(true)) {
        json!({"promptsListChanged": true})
    } else {
        json!({})
    };
    assert_eq!(sub.honored(), &expect);
    sub.close().await;
    let e = bounded(c.listen(json!(["not", "an", "object"])))
        .await
        .expect_err("a filter must be an object");
    assert!(matches!(
        e,
        mcpcore::client::ClientError::InvalidArgument(_)
    ));
    c.close().await;
    f.listener.shutdown().await;
}
