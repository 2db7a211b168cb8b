//! The 2026-07-28 request path over stdio: classification, envelope errors, discovery, result
//! stamping, per-request logging and capabilities (REQUIREMENTS §0.2, §0.3, META-01…05, VER-01,
//! DISC-01, JR-04, CACHE-01, LOG-02, EXT-01).

use mcpcore_tests::era::with_envelope;
use mcpcore_tests::Era;
use serde_json::{json, Value};

use mcpcore_tests::era::{era_server as server, text};

#[tokio::test]
async fn disc01_discover_shape_and_default_cache_hints() {
    let mut p = server(&[]);
    let r = p.modern("server/discover", json!({}), json!({})).await;
    let res = &r["result"];
    assert_eq!(res["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(res["resultType"], "complete");
    assert_eq!(res["ttlMs"], 0);
    assert_eq!(res["cacheScope"], "private");
    assert_eq!(res["instructions"], "Fixture for the 2026-07-28 era.");
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "era-server", "version": "1.0.0"})
    );
    assert!(res.get("serverInfo").is_none());
    assert!(res["capabilities"]["tools"].is_object());
    assert!(res["capabilities"]["prompts"].is_object());
    assert!(res["capabilities"]["resources"].is_object());
    // Server extensions are declared (SEP-2133); stdio carries listen streams, so the
    // listChanged/subscribe promises the fixture makes stand.
    assert_eq!(
        res["capabilities"]["extensions"]["io.example/fixture"],
        json!({"flag": true})
    );
}

#[tokio::test]
async fn cache01_every_cacheable_result_carries_hints() {
    for (args, ttl, scope) in [
        (&[][..], 0, "private"),
        (&["--cache", "5000:public"][..], 5000, "public"),
    ] {
        let mut p = server(args);
        let calls = [
            ("server/discover", json!({})),
            ("tools/list", json!({})),
            ("prompts/list", json!({})),
            ("resources/list", json!({})),
            ("resources/templates/list", json!({})),
            ("resources/read", json!({"uri": "era://plain"})),
        ];
        for (m, params) in calls {
            let r = p.modern(m, params, json!({})).await;
            assert_eq!(r["result"]["ttlMs"], ttl, "{m}: {r}");
            assert_eq!(r["result"]["cacheScope"], scope, "{m}: {r}");
            assert_eq!(r["result"]["resultType"], "complete", "{m}: {r}");
        }
        // A handler's own hints win.
        let r = p
            .modern(
                "resources/read",
                json!({"uri": "era://override"}),
                json!({}),
            )
            .await;
        assert_eq!(r["result"]["ttlMs"], 60000);
        assert_eq!(r["result"]["cacheScope"], "public");
        // Non-cacheable results get resultType only.
        let r = p
            .modern("tools/call", json!({"name": "client_caps"}), json!({}))
            .await;
        assert_eq!(r["result"]["resultType"], "complete");
        assert!(r["result"].get("ttlMs").is_none());
        assert!(r["result"].get("cacheScope").is_none());
    }
}

#[tokio::test]
async fn cache_legacy_results_never_carry_modern_fields() {
    let mut p = server(&["--cache", "5000:public"]);
    p.initialize("2025-11-25", json!({})).await;
    for (m, params) in [
        ("tools/list", json!({})),
        ("resources/read", json!({"uri": "era://plain"})),
        ("resources/read", json!({"uri": "era://override"})),
        ("tools/call", json!({"name": "client_caps"})),
    ] {
        let r = p.request(m, params).await;
        let res = r["result"].as_object().expect("result");
        for f in ["resultType", "ttlMs", "cacheScope"] {
            assert!(!res.contains_key(f), "{m} carries {f}: {r}");
        }
    }
}

/// CACHE-01: a server that opted in to hints on the legacy era stamps
/// `ttlMs`/`cacheScope` on cacheable legacy results (configured values, a handler's own win),
/// still never `resultType`, and never hints on non-cacheable results.
#[tokio::test]
async fn cache_legacy_hints_only_when_opted_in() {
    let mut p = server(&["--cache", "5000:public", "--legacy-cache-hints"]);
    p.initialize("2025-11-25", json!({})).await;
    for (m, params) in [
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "era://plain"})),
    ] {
        let r = p.request(m, params).await;
        assert_eq!(r["result"]["ttlMs"], 5000, "{m}: {r}");
        assert_eq!(r["result"]["cacheScope"], "public", "{m}: {r}");
        assert!(r["result"].get("resultType").is_none(), "{m}: {r}");
    }
    let r = p
        .request("resources/read", json!({"uri": "era://override"}))
        .await;
    assert_eq!(r["result"]["ttlMs"], 60000, "{r}");
    let r = p
        .request("tools/call", json!({"name": "client_caps"}))
        .await;
    let res = r["result"].as_object().expect("result");
    for f in ["resultType", "ttlMs", "cacheScope"] {
        assert!(!res.contains_key(f), "tools/call carries {f}: {r}");
    }
}

#[tokio::test]
async fn meta01_envelope_errors_name_the_keys() {
    let mut p = server(&[]);
    let cases = [
        (
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
            vec!["io.modelcontextprotocol/clientCapabilities"],
        ),
        (
            json!({"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}}),
            vec!["io.modelcontextprotocol/protocolVersion"],
        ),
        (
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [],
                   "io.modelcontextprotocol/clientInfo": {"name": 1}}),
            vec![
                "io.modelcontextprotocol/clientCapabilities",
                "io.modelcontextprotocol/clientInfo",
            ],
        ),
        (
            json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
                   "io.modelcontextprotocol/logLevel": 7}),
            vec!["io.modelcontextprotocol/logLevel"],
        ),
    ];
    for (meta, keys) in cases {
        let (r, _) = p.call("tools/list", json!({"_meta": meta})).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        for k in keys {
            assert!(msg.contains(k), "{k} not named in {msg}");
        }
    }
    // clientInfo is optional.
    let (r, _) = p
        .call(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert!(r["result"]["tools"].is_array(), "{r}");
}

#[tokio::test]
async fn ver01_unsupported_version_data() {
    let mut p = server(&[]);
    let mut params = with_envelope(json!({"name": "client_caps"}), json!({}));
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let (r, _) = p.call("tools/call", params).await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
}

#[tokio::test]
async fn legacy_meta_without_the_claim_stays_legacy() {
    let mut p = server(&[]);
    p.initialize("2025-11-25", json!({})).await;
    let r = p
        .request(
            "tools/call",
            json!({"name": "client_caps", "_meta": {"progressToken": 5, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}),
        )
        .await;
    assert!(r["result"].get("resultType").is_none(), "{r}");
    assert_eq!(text(&r), "{}");
}

#[tokio::test]
async fn log02_log_level_gates_this_request_only() {
    let mut p = server(&[]);
    let logs = |others: &[Value]| -> Vec<Value> {
        others
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"]["data"].clone())
            .collect()
    };
    // No logLevel: no log notifications at all.
    let (r, others) = p
        .call(
            "tools/call",
            with_envelope(json!({"name": "log_all"}), json!({})),
        )
        .await;
    assert_eq!(text(&r), "sent: ");
    assert!(logs(&others).is_empty());
    // logLevel warning: warning and above, on this request.
    let mut params = with_envelope(json!({"name": "log_all"}), json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let (r, others) = p.call("tools/call", params).await;
    assert_eq!(text(&r), "sent: warning,error");
    assert_eq!(logs(&others), [json!("warning"), json!("error")]);
    // The next request without logLevel is silent again (nothing carries over).
    let (r, others) = p
        .call(
            "tools/call",
            with_envelope(json!({"name": "log_all"}), json!({})),
        )
        .await;
    assert_eq!(text(&r), "sent: ");
    assert!(logs(&others).is_empty());
    // An unknown level reads as absent.
    let mut params = with_envelope(json!({"name": "log_all"}), json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    let (r, others) = p.call("tools/call", params).await;
    assert_eq!(text(&r), "sent: ");
    assert!(logs(&others).is_empty());
}

#[tokio::test]
async fn meta04_missing_capability_on_this_request() {
    let mut p = server(&[]);
    let r = p
        .modern("tools/call", json!({"name": "needs_sampling"}), json!({}))
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    let r = p
        .modern(
            "tools/call",
            json!({"name": "needs_sampling"}),
            json!({"sampling": {}}),
        )
        .await;
    assert_eq!(text(&r), "Success");
    // META-03: the earlier declaration does not carry over to the next request.
    let r = p
        .modern("tools/call", json!({"name": "needs_sampling"}), json!({}))
        .await;
    assert_eq!(r["error"]["code"], -32021);
}

#[tokio::test]
async fn ext01_client_extensions_reach_the_handler() {
    let mut p = server(&[]);
    let caps = json!({"extensions": {"io.example/client-ext": {"level": 2}}});
    let r = p
        .modern("tools/call", json!({"name": "client_caps"}), caps.clone())
        .await;
    let seen: Value = serde_json::from_str(text(&r)).expect("json text");
    assert_eq!(seen, caps);
}

#[tokio::test]
async fn jr05_no_server_requests_on_the_modern_era() {
    let mut p = server(&[]);
    let (r, others) = p
        .call(
            "tools/call",
            with_envelope(json!({"name": "direct_elicit"}), json!({"elicitation": {}})),
        )
        .await;
    assert!(
        others.iter().all(|m| m.get("id").is_none()),
        "a request was sent: {others:?}"
    );
    // `ctx.elicit` asks through input_required instead (MRTR-01).
    let res = &r["result"];
    assert_eq!(res["resultType"], "input_required", "{r}");
    assert_eq!(
        res["inputRequests"]["mcpcore.request.0"]["method"], "elicitation/create",
        "{r}"
    );
}

/// META-02: every modern result (complete or input_required) names the server in `_meta`,
/// keeping what a handler put there; legacy results do not; the stamp can be turned off.
#[tokio::test]
async fn meta02_every_modern_result_carries_server_info() {
    const KEY: &str = "io.modelcontextprotocol/serverInfo";
    let info = json!({"name": "era-server", "version": "1.0.0"});
    let mut p = server(&[]);
    for (method, params) in [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "era://plain"})),
        (
            "tools/call",
            json!({"name": "client_caps", "arguments": {}}),
        ),
        (
            "tools/call",
            json!({"name": "mrtr_elicit", "arguments": {}}),
        ),
    ] {
        let r = p.modern(method, params, json!({"elicitation": {}})).await;
        assert_eq!(r["result"]["_meta"][KEY], info, "{method}: {r}");
    }
    let r = p
        .modern(
            "tools/call",
            json!({"name": "mrtr_elicit", "arguments": {}}),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required");
    let mut off = server(&["--no-server-info"]);
    let r = off.modern("tools/list", json!({}), json!({})).await;
    assert!(r["result"]["_meta"].get(KEY).is_none(), "{r}");
    let mut legacy = server(&[]);
    legacy.era = Era::Legacy;
    let init = legacy.initialize("2025-11-25", json!({})).await;
    assert!(init["result"]
        .get("_meta")
        .is_none_or(|m| m.get(KEY).is_none()));
    let r = legacy.request("tools/list", json!({})).await;
    assert!(r["result"]
        .get("_meta")
        .is_none_or(|m| m.get(KEY).is_none()));
}
