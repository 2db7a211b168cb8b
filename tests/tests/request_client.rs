//! `RequestContext::request_client` from one call site in both eras, over stdio and HTTP, driven
//! by mcpcore's own `Client` with its elicitation and roots handlers registered (REQUIREMENTS
//! MRTR-01…04, MRTR-07, MRTR-09, META-04, JR-05, ELIC-01, ROOT-01). Legacy: real server→client
//! requests; 2026-07-28: `input_required` rounds that re-run the handler with the answers.

use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ClientError, ConnectMode, Era, HttpClientOptions,
    StderrMode, StdioCommand,
};
use mcpcore::transport::http::{serve, HttpListener, HttpOptions as ServerHttpOptions};
use mcpcore_tests::http::{modern_headers, McpHttp};
use mcpcore_tests::{asking, stdio::envelope, Era as SchemaEra};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SERVER: &str = env!("CARGO_BIN_EXE_ask-server");
const BOUND: Duration = Duration::from_secs(20);
const WIRES: [Wire; 2] = [Wire::Stdio, Wire::Http];
const ERAS: [(ConnectMode, Era); 2] = [
    (ConnectMode::Legacy, Era::Legacy),
    (ConnectMode::Modern, Era::Modern),
];

#[derive(Debug, Clone, Copy)]
enum Wire {
    Stdio,
    Http,
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

async fn listen() -> HttpListener {
    let addr = "127.0.0.1:0".parse().expect("addr");
    serve(asking::server(), addr, ServerHttpOptions::default())
        .await
        .expect("listen")
}

/// A client on `wire` in `mode` (the listener, for HTTP, lives as long as the pair).
async fn connect(
    wire: Wire,
    mode: ConnectMode,
    b: ClientBuilder,
) -> (Client, Option<HttpListener>) {
    let b = b.mode(mode);
    match wire {
        Wire::Stdio => {
            let cmd = StdioCommand::new(SERVER).stderr(StderrMode::Null);
            let c = bounded(b.connect_stdio(cmd)).await.expect("connect");
            (c, None)
        }
        Wire::Http => {
            let l = listen().await;
            let url = format!("http://{}/mcp", l.local_addr());
            let c = bounded(b.connect_http(&url, HttpClientOptions::default()))
                .await
                .expect("connect");
            (c, Some(l))
        }
    }
}

type Asked = Arc<Mutex<Vec<String>>>;

/// Roots always; elicitation when `elicit`. Every answered method is recorded in order.
fn handlers(elicit: bool, asked: &Asked) -> ClientBuilder {
    let a = asked.clone();
    let mut b = Client::builder().on_roots(client_handler_fn(move |_p| {
        a.lock().expect("log").push("roots/list".into());
        async move { Ok(json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]})) }
    }));
    if elicit {
        let a = asked.clone();
        b = b.on_elicitation(client_handler_fn(move |p: Value| {
            a.lock().expect("log").push("elicitation/create".into());
            async move {
                assert_eq!(p["message"], "Your name?");
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }
        }));
    }
    b
}

fn taken(asked: &Asked) -> Vec<String> {
    std::mem::take(&mut *asked.lock().expect("log"))
}

/// One tool asks for an elicitation, then for the roots, each propagated with `?`: in each era and
/// on each wire the tool returns both answers, and the client was asked each thing once (the
/// 2026-07-28 handler ran three times; the first answer was carried in the sealed state).
#[tokio::test]
async fn mrtr09_request_client_works_in_both_eras_over_stdio_and_http() {
    for wire in WIRES {
        for (mode, era) in ERAS {
            let asked = Asked::default();
            let (c, _l) = connect(wire, mode, handlers(true, &asked)).await;
            assert_eq!(c.era(), Some(era), "{wire:?}");
            let r = bounded(c.call_tool("ask_both", json!({})))
                .await
                .unwrap_or_else(|e| panic!("{wire:?} {era:?}: {e}"));
            assert_ne!(r.is_error, Some(true), "{wire:?} {era:?}: {r:?}");
            let sc = r.structured_content.expect("structuredContent");
            assert_eq!(
                sc["elicited"],
                json!({"action": "accept", "content": {"name": "Ada"}}),
                "{wire:?} {era:?}"
            );
            assert_eq!(sc["roots"]["roots"][0]["uri"], "file:///tmp");
            assert_eq!(
                taken(&asked),
                ["elicitation/create", "roots/list"],
                "{wire:?} {era:?}"
            );
            c.close().await;
        }
    }
}

/// A client that did not declare elicitation: on 2026-07-28 the precise -32021 naming the
/// requirement (META-04, MRTR-03); on legacy the shim's "Client does not support"; nothing is
/// asked in either era.
#[tokio::test]
async fn meta04_a_client_without_the_capability_gets_the_precise_error() {
    for wire in WIRES {
        for (mode, era) in ERAS {
            let asked = Asked::default();
            let (c, _l) = connect(wire, mode, handlers(false, &asked)).await;
            let e = bounded(c.call_tool("ask_both", json!({})))
                .await
                .expect_err("refused");
            let ClientError::Rpc(e) = e else {
                panic!("{wire:?} {era:?}: {e:?}")
            };
            if era == Era::Modern {
                assert_eq!(e.code, -32021, "{wire:?}: {e:?}");
                assert_eq!(
                    e.data.as_ref().map(|d| &d["requiredCapabilities"]),
                    Some(&json!({"elicitation": {"form": {}}})),
                    "{wire:?}"
                );
            } else {
                assert_eq!(e.code, -32603, "{wire:?}: {e:?}");
                assert!(e.message.contains("elicitation"), "{e:?}");
            }
            assert!(taken(&asked).is_empty(), "{wire:?} {era:?}");
            c.close().await;
        }
    }
}

/// Asking from a method that may not answer `input_required` (MRTR-01), and pinging the client
/// (no server→client requests, JR-05), are precise errors on 2026-07-28 and real requests on
/// legacy.
#[tokio::test]
async fn mrtr01_methods_that_cannot_ask_get_the_precise_error() {
    for wire in WIRES {
        for (mode, era) in ERAS {
            let asked = Asked::default();
            let (c, _l) = connect(wire, mode, handlers(true, &asked)).await;
            let custom = bounded(c.request("custom/ask", json!({}))).await;
            let ping = bounded(c.call_tool("ask_ping", json!({}))).await;
            if era == Era::Legacy {
                let r = custom.expect("legacy roots");
                assert_eq!(r["roots"]["roots"][0]["uri"], "file:///tmp", "{wire:?}");
                let r = ping.expect("legacy ping");
                assert_eq!(r.structured_content, Some(json!({"pong": {}})));
                assert_eq!(taken(&asked), ["roots/list"]);
            } else {
                let Err(ClientError::Rpc(e)) = custom else {
                    panic!("{wire:?}: {custom:?}")
                };
                assert_eq!(e.code, -32603, "{wire:?}");
                assert!(
                    e.message.contains("during custom/ask")
                        && e.message
                            .contains("only tools/call, prompts/get and resources/read"),
                    "{e:?}"
                );
                let Err(ClientError::Rpc(e)) = ping else {
                    panic!("{wire:?}: {ping:?}")
                };
                assert_eq!(e.code, -32603, "{wire:?}");
                assert!(e.message.contains("servers send no requests"), "{e:?}");
                assert!(taken(&asked).is_empty(), "{wire:?}");
            }
            c.close().await;
        }
    }
}

/// A handler that makes both calls before propagating an error asks for both in one round; the
/// retry with both answers and the echoed state completes (the wire as any client sees it).
#[tokio::test]
async fn mrtr02_calls_collected_before_propagating_are_one_round() {
    let l = listen().await;
    let http = McpHttp::new(l.local_addr());
    let caps = json!({"elicitation": {}, "roots": {}});
    let call = |id: i64, extra: Value| {
        let mut params =
            json!({"name": "ask_together", "arguments": {}, "_meta": envelope(caps.clone())});
        if let (Some(p), Value::Object(x)) = (params.as_object_mut(), extra) {
            p.extend(x);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let headers = modern_headers("tools/call", Some("ask_together"));
    let first = bounded(http.post(&headers, &call(1, json!({})), SchemaEra::Modern)).await;
    let res = &first.last()["result"];
    assert_eq!(res["resultType"], "input_required", "{res}");
    let reqs = res["inputRequests"].as_object().expect("inputRequests");
    let keys: Vec<&str> = reqs.keys().map(String::as_str).collect();
    assert_eq!(keys, ["mcpcore.request.0", "mcpcore.request.1"]);
    assert_eq!(reqs["mcpcore.request.0"]["method"], "elicitation/create");
    assert_eq!(reqs["mcpcore.request.1"]["method"], "roots/list");
    let state = res["requestState"].clone();
    assert!(state.is_string(), "{res}");
    let retry = call(
        2,
        json!({"requestState": state, "inputResponses": {
            "mcpcore.request.0": {"action": "accept", "content": {"name": "Bo"}},
            "mcpcore.request.1": {"roots": []}}}),
    );
    let done = bounded(http.post(&headers, &retry, SchemaEra::Modern)).await;
    let res = &done.last()["result"];
    assert_eq!(res["resultType"], "complete", "{res}");
    assert_eq!(
        res["structuredContent"]["elicited"]["content"]["name"],
        "Bo"
    );
    assert_eq!(res["structuredContent"]["roots"], json!({"roots": []}));
    l.shutdown().await;
}
