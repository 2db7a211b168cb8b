//! The client's Streamable HTTP transport against a scripted, misbehaving HTTP server on
//! 127.0.0.1 (REQUIREMENTS HTTP-18, DISC-02, 0.8, HTTP-05, LHTTP-02, CAN-04). Every case ends
//! in the right fallback or a clear error within a bound, never a hang: a discovery probe
//! answered with odd statuses, modern error codes, garbage, a truncated SSE stream, a dropped
//! connection or nothing at all falls back to `initialize`; a call answered with garbage, an
//! over-limit body or event, a dropped connection, or a server that goes away fails cleanly and
//! the connection stays usable.

use mcpcore::client::{CallOptions, Client, ClientBuilder, ClientError, Era, HttpClientOptions};
use mcpcore_tests::scripted::{
    json_resp, legacy, raw, rpc_error, rpc_result, sse, Act, Req, Scripted,
};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

fn builder() -> ClientBuilder {
    Client::builder().configure(|o| {
        o.probe_timeout = Duration::from_millis(300);
        o.max_message_bytes = 64 * 1024;
    })
}

async fn echo_works(c: &Client) {
    let r = bounded(c.call_tool("echo", json!({})))
        .await
        .expect("the connection still works");
    assert_eq!(r.content[0]["text"], "ok");
}

/// DISC-02 / HTTP-18: whatever answers the probe — modern error codes included — the client
/// falls back to `initialize` (and a modern-only server would refuse that with -32022, which
/// re-probes); it never depends on one code, and never hangs.
// Long by design: one table of odd probe answers, each checked the same way.
#[tokio::test]
async fn http18_any_probe_failure_falls_back_to_initialize() {
    type Case = (&'static str, fn(&Req) -> Act);
    let cases: Vec<Case> = vec![
        ("400 -32020", |r| {
            json_resp(400, &rpc_error(&r.id(), -32020, None))
        }),
        ("400 -32021", |r| {
            json_resp(
                400,
                &rpc_error(
                    &r.id(),
                    -32021,
                    Some(json!({"requiredCapabilities": {"x": {}}})),
                ),
            )
        }),
        ("400 -32022 naming no mutual version", |r| {
            json_resp(
                400,
                &rpc_error(
                    &r.id(),
                    -32022,
                    Some(json!({"supported": ["2099-01-01"], "requested": "2026-07-28"})),
                ),
            )
        }),
        ("404 -32601", |r| {
            json_resp(404, &rpc_error(&r.id(), -32601, None))
        }),
        ("400 -32602", |r| {
            json_resp(400, &rpc_error(&r.id(), -32602, None))
        }),
        ("400 id-less -32600", |_| {
            json_resp(400, &rpc_error(&Value::Null, -32600, None))
        }),
        ("200 -32601 in-band", |r| {
            json_resp(200, &rpc_error(&r.id(), -32601, None))
        }),
        ("405 empty", |_| raw(405, "", "", b"")),
        ("401 bearer challenge", |_| {
            raw(401, "", "www-authenticate: Bearer\r\n", b"")
        }),
        ("406 text", |_| {
            raw(406, "text/plain", "", b"Not Acceptable")
        }),
        ("500 html", |_| raw(500, "text/html", "", b"<h1>oops</h1>")),
        ("200 garbage", |_| {
            raw(200, "application/json", "", b"{not json")
        }),
        ("200 a result that is no DiscoverResult", |r| {
            json_resp(200, &rpc_result(&r.id(), json!({"hello": 1})))
        }),
        ("200 an answer to another id", |_| {
            json_resp(200, &rpc_result(&json!(987_654), json!({})))
        }),
        ("202 empty", |_| raw(202, "", "", b"")),
        ("200 SSE ending without the response", |_| {
            sse(": comment\n\ndata: not json\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
        }),
        ("dropped connection", |_| Act::Drop),
        ("never answers", |_| Act::Hang),
    ];
    for (name, discover) in cases {
        let srv = Scripted::start(move |r| {
            if r.rpc_method() == "server/discover" {
                discover(r)
            } else {
                legacy(r)
            }
        })
        .await;
        let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(c.era(), Some(Era::Legacy), "{name}");
        assert_eq!(
            c.server_implementation().expect("serverInfo").name,
            "scripted"
        );
        echo_works(&c).await;
        c.close().await;
        let methods: Vec<String> = srv
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.rpc_method().to_owned())
            .collect();
        assert_eq!(methods[..2], ["server/discover", "initialize"], "{name}");
        let init = srv
            .requests()
            .into_iter()
            .find(|r| r.rpc_method() == "initialize")
            .expect("initialize");
        assert!(
            !init.head.contains("mcp-method:"),
            "{name}: the fallback is a plain legacy request"
        );
    }
}

/// Faults answering calls on an established connection: each call ends in a clear error within
/// the bound, and the next call works.
#[tokio::test]
async fn faults_answering_calls_end_in_clear_errors() {
    let srv = Scripted::start(|r| {
        let id = r.id();
        match (r.rpc_method(), r.tool()) {
            ("tools/call", "drop") => Act::Drop,
            ("tools/call", "hang") => Act::Hang,
            ("tools/call", "garbage") => raw(200, "application/json", "", b"<<garbage>>"),
            ("tools/call", "html") => raw(502, "text/html", "", b"<h1>bad gateway</h1>"),
            ("tools/call", "oversize") => {
                let big = "a".repeat(100_000);
                json_resp(
                    200,
                    &rpc_result(&id, json!({"content": [{"type": "text", "text": big}]})),
                )
            }
            ("tools/call", "sse-oversize") => {
                let big = "a".repeat(100_000);
                sse(&format!("data: {big}\n\n"))
            }
            ("tools/call", "sse-skips-garbage") => {
                let ok = rpc_result(
                    &id,
                    json!({"content": [{"type": "text", "text": "after garbage"}]}),
                );
                sse(&format!(
                    ": keepalive\n\ndata: not json\n\ndata: [1,2]\n\ndata: {ok}\n\n"
                ))
            }
            _ => legacy(r),
        }
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    for (tool, what) in [
        ("drop", "a dropped connection"),
        ("garbage", "a garbage body"),
        ("html", "an HTML error page"),
        ("oversize", "an over-limit body"),
        ("sse-oversize", "an over-limit SSE event"),
    ] {
        let e = bounded(c.call_tool(tool, json!({}))).await.expect_err(what);
        assert!(
            matches!(e, ClientError::Transport(_) | ClientError::Closed(_)),
            "{what}: {e:?}"
        );
        if tool.ends_with("oversize") {
            assert!(e.to_string().contains("65536"), "{what}: {e}");
        }
        echo_works(&c).await;
    }
    let r = bounded(c.call_tool("sse-skips-garbage", json!({})))
        .await
        .expect("garbage events are skipped");
    assert_eq!(r.content[0]["text"], "after garbage");
    let e = bounded(c.call_tool_with(
        "hang",
        json!({}),
        CallOptions::new().timeout(Duration::from_millis(300)),
    ))
    .await
    .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout), "{e:?}");
    echo_works(&c).await;
    c.close().await;
}

/// The server goes away during a call: the call fails at once (the connection closed), and
/// later calls fail cleanly (nothing listens) instead of hanging.
#[tokio::test]
async fn server_gone_mid_call() {
    let srv = Scripted::start(|r| match r.tool() {
        "hang" => Act::Hang,
        _ => legacy(r),
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    let call = c.call_tool("hang", json!({}));
    let stopper = async {
        let deadline = tokio::time::Instant::now() + BOUND;
        while !srv.requests().iter().any(|r| r.tool() == "hang") {
            assert!(tokio::time::Instant::now() < deadline, "the call arrived");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        srv.stop.cancel();
    };
    let (r, ()) = bounded(async { tokio::join!(call, stopper) }).await;
    let e = r.expect_err("the server went away");
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    let e = bounded(c.call_tool("echo", json!({})))
        .await
        .expect_err("nothing listens");
    assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
    c.close().await;
}

/// Modern: a request stream that ends without the response fails that call (no resumption on
/// the modern era) and the connection keeps working.
#[tokio::test]
async fn modern_stream_ending_without_the_response() {
    let srv = Scripted::start(|r| {
        let id = r.id();
        match (r.rpc_method(), r.tool()) {
            ("server/discover", _) => json_resp(
                200,
                &rpc_result(
                    &id,
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                       "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
                ),
            ),
            ("tools/call", "cut") => sse("id: 1\nretry: 10\ndata: \n\n"),
            ("tools/call", _) => json_resp(
                200,
                &rpc_result(
                    &id,
                    json!({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}),
                ),
            ),
            _ => json_resp(404, &rpc_error(&id, -32601, None)),
        }
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    let e = bounded(c.call_tool("cut", json!({})))
        .await
        .expect_err("cut");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    echo_works(&c).await;
    let e = bounded(c.request("nope/nope", json!({})))
        .await
        .expect_err("404");
    assert_eq!(e.rpc_code(), Some(-32601));
    assert!(
        !srv.requests().iter().any(|r| r.method == "GET"),
        "no GET stream on the modern era"
    );
    c.close().await;
    assert!(
        !srv.requests().iter().any(|r| r.method == "DELETE"),
        "no session to delete"
    );
}

/// DISC-03 over HTTP: the probe fails (here a 503), the fallback `initialize` meets a
/// modern-only server's -32022, and the client re-probes once and adopts the modern era; when
/// the re-probe fails too, the connect fails with a clear error.
#[tokio::test]
async fn disc03_modern_only_server_after_a_failed_probe() {
    for recovers in [true, false] {
        let probes = Arc::new(Mutex::new(0u32));
        let p = probes.clone();
        let srv = Scripted::start(move |r| {
            let id = r.id();
            match r.rpc_method() {
                "server/discover" => {
                    let mut n = p.lock().expect("lock");
                    *n += 1;
                    if *n == 1 || !recovers {
                        raw(503, "text/plain", "", b"warming up")
                    } else {
                        json_resp(
                            200,
                            &rpc_result(
                                &id,
                                json!({"supportedVersions": ["2026-07-28"], "capabilities": {},
                                   "ttlMs": 0, "cacheScope": "private", "resultType": "complete"}),
                            ),
                        )
                    }
                }
                "initialize" => json_resp(
                    400,
                    &rpc_error(
                        &id,
                        -32022,
                        Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})),
                    ),
                ),
                _ => json_resp(
                    200,
                    &rpc_result(
                        &id,
                        json!({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}),
                    ),
                ),
            }
        })
        .await;
        let r = bounded(builder().connect_http(&srv.url, HttpClientOptions::default())).await;
        assert_eq!(*probes.lock().expect("lock"), 2, "one re-probe");
        if recovers {
            let c = r.expect("modern after the re-probe");
            assert_eq!(c.era(), Some(Era::Modern));
            echo_works(&c).await;
            c.close().await;
        } else {
            let e = r.expect_err("no era works");
            assert_eq!(
                e.rpc_code(),
                Some(-32022),
                "the refusal is the answer: {e:?}"
            );
        }
    }
}
