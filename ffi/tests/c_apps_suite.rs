//! MCP Apps from C (REQUIREMENTS EXT-03): `tests/c/apps.c` compiled against
//! `include/mcpcore.h`, linked to `libmcpcore.a`, run plain, under ASan+UBSan and under valgrind
//! (each when available), and driven over stdio in both eras; every message it sends is
//! validated against its era's schema. The program itself checks the refusals (exit 4).

mod support;

use mcpcore_tests::{stdio::envelope, Era, StdioPeer};
use serde_json::{json, Value};
use std::time::Duration;
use support::{build, command, variants};

const APP: &str = "text/html;profile=mcp-app";
const EXIT_WAIT: Duration = Duration::from_secs(60);
/// The first answer may take long under valgrind (it reads the library's debug info first).
const FIRST_WAIT: Duration = Duration::from_secs(180);

async fn first(peer: &mut StdioPeer, method: &str, params: Value) -> Value {
    let id = json!(1);
    peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    loop {
        let m = peer
            .try_recv(FIRST_WAIT)
            .await
            .expect("first answer in time");
        if m["id"] == id && m.get("method").is_none() {
            return m;
        }
    }
}

/// What both eras show: the view listed and read as an app, the tool's link.
fn check(list: &Value, read: &Value, tools: &Value) {
    let view = &list["result"]["resources"][0];
    assert_eq!(view["uri"], "ui://c/view", "{list}");
    assert_eq!(view["mimeType"], APP);
    let c = &read["result"]["contents"][0];
    assert_eq!(c["uri"], "ui://c/view", "{read}");
    assert_eq!(c["mimeType"], APP);
    assert_eq!(c["text"], "<!DOCTYPE html><p>from C</p>");
    assert_eq!(
        c["_meta"]["ui"],
        json!({"prefersBorder": true, "csp": {"connectDomains": ["https://api.example"]}})
    );
    assert_eq!(
        tools["result"]["tools"][0]["_meta"]["ui"]["resourceUri"], "ui://c/view",
        "{tools}"
    );
}

#[tokio::test]
async fn c_apps_server_both_eras() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let exe = build("apps", &["tests/c/apps.c"], v);
        for era in [Era::Legacy, Era::Modern] {
            support::clear_reports(&exe);
            let (prog, args) = command(&exe, v);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut p = StdioPeer::spawn(&prog, &args);
            p.era = era;
            let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [APP]}}});
            let (list, read, tools) = if era == Era::Legacy {
                let init = first(
                    &mut p,
                    "initialize",
                    json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                        "clientInfo": {"name": "c-apps", "version": "1"}}),
                )
                .await;
                assert_eq!(
                    init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"]
                        ["mimeTypes"],
                    json!([APP]),
                    "{v:?}: {init}"
                );
                p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .await;
                (
                    p.request("resources/list", json!({})).await,
                    p.request("resources/read", json!({"uri": "ui://c/view"}))
                        .await,
                    p.request("tools/list", json!({})).await,
                )
            } else {
                let env = envelope(caps);
                let d = first(&mut p, "server/discover", json!({"_meta": env})).await;
                assert!(
                    d["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"]
                        .is_object(),
                    "{v:?}: {d}"
                );
                (
                    p.request("resources/list", json!({"_meta": env})).await,
                    p.request(
                        "resources/read",
                        json!({"uri": "ui://c/view", "_meta": env}),
                    )
                    .await,
                    p.request("tools/list", json!({"_meta": env})).await,
                )
            };
            check(&list, &read, &tools);
            p.close_stdin();
            let status = p
                .wait_exit(EXIT_WAIT)
                .await
                .unwrap_or_else(|| panic!("{v:?}: apps.c did not exit after EOF"));
            assert!(
                status.success(),
                "{v:?}: apps.c exited with {status}\n{}",
                support::reports(&exe)
            );
        }
    }
}
