//! Prompts, resources, subscriptions and completion over real stdio pipes (REQUIREMENTS
//! PRM-01, PRM-02, RES-01, RES-02, SUB-07, CMP-01).

use mcpcore_tests::StdioPeer;
use serde_json::{json, Value};
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(300);

/// PRM-01: list and get.
#[tokio::test]
async fn prm01_list_and_get() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.request("prompts/list", json!({})).await;
    let names: Vec<&str> = r["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["greet", "plain", "broken"]);
    assert_eq!(r["result"]["prompts"][0]["arguments"][0]["required"], true);

    let r = p
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "style": "warm"}}),
        )
        .await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Hello Ada (warm)"
    );
    let r = p.request("prompts/get", json!({"name": "plain"})).await;
    assert_eq!(r["result"]["messages"][0]["role"], "assistant");
}

/// PRM-02: unknown prompt, missing required argument, bad arguments → -32602 with a precise
/// message; an internal failure → generic -32603.
#[tokio::test]
async fn prm02_prompt_errors() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.request("prompts/get", json!({"name": "nope"})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(
        r["error"]["message"],
        "Invalid params: Unknown prompt: nope"
    );

    let r = p
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"style": "x"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("greet") && msg.contains("name"), "{msg}");

    for params in [
        json!({}),
        json!({"name": 1}),
        json!({"name": "greet", "arguments": {"name": 5}}),
        json!({"name": "greet", "arguments": ["Ada"]}),
    ] {
        let r = p.request("prompts/get", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    let r = p.request("prompts/get", json!({"name": "broken"})).await;
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Internal error"})
    );
}

/// RES-01: list, templates/list, read of an exact resource.
#[tokio::test]
async fn res01_list_templates_read() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p.request("resources/list", json!({})).await;
    let uris: Vec<&str> = r["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        ["fix://readme", "fix://items/special", "fix://broken"]
    );
    let r = p.request("resources/templates/list", json!({})).await;
    let templates: Vec<&str> = r["result"]["resourceTemplates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|r| r["uriTemplate"].as_str())
        .collect();
    assert_eq!(
        templates,
        [
            "fix://items/{id}",
            "fix://users/{user}/posts/{post}",
            "fix://files/{+path}"
        ]
    );
    let r = p
        .request("resources/read", json!({"uri": "fix://readme"}))
        .await;
    assert_eq!(
        r["result"]["contents"],
        json!([{"uri": "fix://readme", "mimeType": "text/plain", "text": "readme"}])
    );
}

/// RES-01: templates match level-1 `{var}` expressions and hand the variables to the handler;
/// an exact URI wins over a matching template.
#[tokio::test]
async fn res01_templates_and_exact_wins() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let text = |r: &Value| r["result"]["contents"][0]["text"].clone();
    let r = p
        .request("resources/read", json!({"uri": "fix://items/42"}))
        .await;
    assert_eq!(text(&r), "item 42");
    assert_eq!(r["result"]["contents"][0]["uri"], "fix://items/42");
    let r = p
        .request("resources/read", json!({"uri": "fix://users/ada/posts/7"}))
        .await;
    assert_eq!(text(&r), "user=ada post=7");
    let r = p
        .request("resources/read", json!({"uri": "fix://items/special"}))
        .await;
    assert_eq!(
        text(&r),
        "exact",
        "the exact URI wins over fix://items/{{id}}"
    );
}

/// RES-01 (RFC 6570): `{var}` values reach the handler percent-decoded; `{+var}` spans `/`;
/// a malformed escape does not match (→ not found).
#[tokio::test]
async fn res01_template_variables_are_percent_decoded() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let text = |r: &Value| r["result"]["contents"][0]["text"].clone();
    for (uri, want) in [
        ("fix://items/a%20b", "item a b"),
        ("fix://items/a%2Fb", "item a/b"),
        ("fix://items/caf%C3%A9", "item café"),
        ("fix://files/docs/read%20me.md", "file docs/read me.md"),
    ] {
        let r = p.request("resources/read", json!({"uri": uri})).await;
        assert_eq!(text(&r), want, "{uri}: {r}");
        assert_eq!(
            r["result"]["contents"][0]["uri"], uri,
            "the URI is echoed as sent"
        );
    }
    for uri in ["fix://items/%zz", "fix://items/%FF"] {
        let r = p.request("resources/read", json!({"uri": uri})).await;
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
    }
}

/// RES-02: unknown URI → -32602 "Resource not found: <uri>" with `data: {uri}`; a missing or
/// non-string uri → -32602; an internal failure → generic -32603.
#[tokio::test]
async fn res02_not_found_and_bad_params() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for uri in ["fix://nothing", "fix://users/ada", "other://readme"] {
        let r = p.request("resources/read", json!({"uri": uri})).await;
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": format!("Resource not found: {uri}"), "data": {"uri": uri}}),
            "{uri}"
        );
    }
    for params in [json!({}), json!({"uri": 5})] {
        let r = p.request("resources/read", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    let r = p
        .request("resources/read", json!({"uri": "fix://broken"}))
        .await;
    assert_eq!(
        r["error"],
        json!({"code": -32603, "message": "Internal error"})
    );
}

/// SUB-07: subscribe/unsubscribe require `uri` (-32602), call the registered handlers, and
/// `notifications/resources/updated` reaches the subscribed session only while subscribed.
#[tokio::test]
async fn sub07_subscribe_updates_unsubscribe() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        for params in [json!({}), json!({"uri": 1})] {
            let r = p.request(method, params.clone()).await;
            assert_eq!(r["error"]["code"], -32602, "{method} {params}: {r}");
        }
    }
    // The registered handler runs (and may refuse).
    let r = p
        .request("resources/subscribe", json!({"uri": "fix://forbidden"}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");

    let id = p.fresh_id();
    p.send_request(&id, "resources/subscribe", json!({"uri": "fix://readme"}))
        .await;
    let (r, others) = p.response(&id).await;
    assert_eq!(r["result"], json!({}));
    assert!(
        others
            .iter()
            .any(|m| m["params"]["data"] == "subscribed fix://readme"),
        "the subscribe handler ran: {others:?}"
    );

    let r = p.call_tool("touch", json!({"uri": "fix://readme"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "1");
    let (n, _) = p.notification("notifications/resources/updated").await;
    assert_eq!(n["params"], json!({"uri": "fix://readme"}));

    // Another URI: nobody is subscribed, nothing is sent.
    let r = p.call_tool("touch", json!({"uri": "fix://items/1"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "0");

    let id = p.fresh_id();
    p.send_request(&id, "resources/unsubscribe", json!({"uri": "fix://readme"}))
        .await;
    let (r, others) = p.response(&id).await;
    assert_eq!(r["result"], json!({}));
    assert!(
        others
            .iter()
            .any(|m| m["params"]["data"] == "unsubscribed fix://readme"),
        "the unsubscribe handler ran: {others:?}"
    );
    let id = p.fresh_id();
    p.send_request(
        &id,
        "tools/call",
        json!({"name": "touch", "arguments": {"uri": "fix://readme"}}),
    )
    .await;
    let (r, others) = p.response(&id).await;
    assert_eq!(r["result"]["content"][0]["text"], "0");
    assert!(others.is_empty(), "{others:?}");
    p.expect_silence(SETTLE).await;
}

/// CMP-01: completion for prompt arguments and template variables.
#[tokio::test]
async fn cmp01_completion() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["alice"]));
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "fix://items/{id}"}, "argument": {"name": "id", "value": "4"}, "context": {"arguments": {}}}),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["42"]));
}

/// CMP-01: a handler giving more than 100 values: the first 100 go, with the handler's count
/// as `total` and `hasMore: true` (it named neither).
#[tokio::test]
async fn cmp01_completion_over_100_values() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "many"}}),
        )
        .await;
    let c = &r["result"]["completion"];
    let first: Vec<String> = (0..100).map(|i| format!("many{i}")).collect();
    assert_eq!(c["values"], json!(first));
    assert_eq!(c["total"], 150);
    assert_eq!(c["hasMore"], true);
}

/// CMP-01: unknown `ref/resource` URI → -32602 with `data: {uri}`; unknown prompt, bad ref
/// type and a missing argument → -32602.
#[tokio::test]
async fn cmp01_completion_errors() {
    let mut p = StdioPeer::wire_ready(&[], json!({})).await;
    let r = p
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "fix://nothing/{x}"}, "argument": {"name": "x", "value": ""}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"], json!({"uri": "fix://nothing/{x}"}));
    for params in [
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
        json!({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}}),
        json!({"argument": {"name": "a", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "greet"}}),
    ] {
        let r = p.request("completion/complete", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
}
