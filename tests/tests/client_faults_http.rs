//! The client's Streamable HTTP transport against a scripted, misbehaving HTTP server on
//! 127.0.0.1 (REQUIREMENTS HTTP-18, DISC-02, 0.8, HTTP-05, LHTTP-02, CAN-04). Every case ends
//! in the right fallback or a clear error within a bound, never a hang: a discovery probe
//! answered with odd statuses, modern error codes, garbage, a truncated SSE stream, a dropped
//! connection or nothing at all falls back to `initialize`; a call answered with garbage, an
//! over-limit body or event, a dropped connection, or a server that goes away fails cleanly and
//! the connection stays usable.

use mcpcore::client::{CallOptions, Client, ClientBuilder, ClientError, Era, HttpOptions};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

/// One request as the scripted server saw it.
#[derive(Debug, Clone)]
struct Req {
    method: String,
    head: String,
    body: Value,
}

impl Req {
    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or_default()
    }
    fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
    fn tool(&self) -> &str {
        self.body
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// What the scripted server does with a request.
enum Act {
    /// Write these bytes (a whole HTTP response) and close.
    Reply(Vec<u8>),
    /// Hold the connection open and never answer.
    Hang,
    /// Close the connection without answering.
    Drop,
}

fn raw(status: u16, ctype: &str, extra: &str, body: &[u8]) -> Act {
    let mut r = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n{extra}",
        body.len()
    );
    if !ctype.is_empty() {
        r.push_str(&format!("content-type: {ctype}\r\n"));
    }
    r.push_str("\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    Act::Reply(r)
}

fn json_resp(status: u16, v: &Value) -> Act {
    raw(status, "application/json", "", v.to_string().as_bytes())
}

fn rpc_error(id: &Value, code: i64, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": "odd"});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

fn rpc_result(id: &Value, r: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": r})
}

/// An SSE response of `events` (no length: the stream ends when the connection closes).
fn sse(events: &str) -> Act {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    Act::Reply([head.as_bytes(), events.as_bytes()].concat())
}

/// A plain legacy server (session `s1`, GET 405), the default of every script.
fn legacy(r: &Req) -> Act {
    match (r.method.as_str(), r.rpc_method()) {
        ("GET", _) => raw(405, "", "", b""),
        ("DELETE", _) => raw(200, "", "", b""),
        (_, "initialize") => {
            let v = rpc_result(
                &r.id(),
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            let body = v.to_string();
            raw(
                200,
                "application/json",
                "mcp-session-id: s1\r\n",
                body.as_bytes(),
            )
        }
        (_, "server/discover") => raw(404, "", "", b""),
        _ if r.body.get("id").is_none() => raw(202, "", "", b""),
        (_, "ping") => json_resp(200, &rpc_result(&r.id(), json!({}))),
        (_, "tools/call") => json_resp(
            200,
            &rpc_result(
                &r.id(),
                json!({"content": [{"type": "text", "text": "ok"}]}),
            ),
        ),
        _ => json_resp(200, &rpc_error(&r.id(), -32601, None)),
    }
}

type Script = Arc<dyn Fn(&Req) -> Act + Send + Sync>;

struct Scripted {
    url: String,
    seen: Arc<Mutex<Vec<Req>>>,
    stop: CancellationToken,
}

impl Scripted {
    async fn start(script: impl Fn(&Req) -> Act + Send + Sync + 'static) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", l.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let script: Script = Arc::new(script);
        let (s, st) = (seen.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let conn = tokio::select! {
                    c = l.accept() => c,
                    () = st.cancelled() => return,
                };
                let Ok((sock, _)) = conn else { return };
                let (script, s, st) = (script.clone(), s.clone(), st.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = serve_one(sock, script, s) => {}
                        () = st.cancelled() => {}
                    }
                });
            }
        });
        Self { url, seen, stop }
    }

    fn requests(&self) -> Vec<Req> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve_one(mut sock: TcpStream, script: Script, seen: Arc<Mutex<Vec<Req>>>) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match sock.read(&mut chunk).await {
            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        match sock.read(&mut chunk).await {
            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    }
    let req = Req {
        method: head.split(' ').next().unwrap_or_default().to_owned(),
        head: head.to_ascii_lowercase(),
        body: serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null),
    };
    seen.lock().expect("lock").push(req.clone());
    match script(&req) {
        Act::Reply(bytes) => {
            let _ = sock.write_all(&bytes).await;
            let _ = sock.shutdown().await;
        }
        Act::Hang => std::future::pending::<()>().await,
        Act::Drop => {}
    }
}

fn builder() -> ClientBuilder {
    Client::builder().configure(|o| {
        o.probe_timeout = Duration::from_millis(300);
        o.max_message_bytes = 64 * 1024;
    })
}

async fn echo_works(c: &Client) {
    let r = bounded(c.call_tool("echo", json!({}), CallOptions::new()))
        .await
        .expect("the connection still works");
    assert_eq!(r.content[0]["text"], "ok");
}

/// DISC-02 / HTTP-18: whatever answers the probe — modern error codes included — the client
/// falls back to `initialize` (and a modern-only server would refuse that with -32022, which
/// re-probes); it never depends on one code, and never hangs.
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
        let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
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
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    for (tool, what) in [
        ("drop", "a dropped connection"),
        ("garbage", "a garbage body"),
        ("html", "an HTML error page"),
        ("oversize", "an over-limit body"),
        ("sse-oversize", "an over-limit SSE event"),
    ] {
        let e = bounded(c.call_tool(tool, json!({}), CallOptions::new()))
            .await
            .expect_err(what);
        assert!(
            matches!(e, ClientError::Transport(_) | ClientError::Closed(_)),
            "{what}: {e:?}"
        );
        if tool.ends_with("oversize") {
            assert!(e.to_string().contains("65536"), "{what}: {e}");
        }
        echo_works(&c).await;
    }
    let r = bounded(c.call_tool("sse-skips-garbage", json!({}), CallOptions::new()))
        .await
        .expect("garbage events are skipped");
    assert_eq!(r.content[0]["text"], "after garbage");
    let e = bounded(c.call_tool(
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
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    let call = c.call_tool("hang", json!({}), CallOptions::new());
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
    let e = bounded(c.call_tool("echo", json!({}), CallOptions::new()))
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
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.era(), Some(Era::Modern));
    let e = bounded(c.call_tool("cut", json!({}), CallOptions::new()))
        .await
        .expect_err("cut");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    echo_works(&c).await;
    let e = bounded(c.request("nope/nope", json!({}), CallOptions::new()))
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

/// LC-02 over HTTP: a counter-offered version is adopted and sent in `MCP-Protocol-Version`
/// on every later request.
#[tokio::test]
async fn lc02_counter_offer_is_spoken_in_the_version_header() {
    let srv = Scripted::start(|r| match r.rpc_method() {
        "initialize" => {
            let v = rpc_result(
                &r.id(),
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            raw(
                200,
                "application/json",
                "mcp-session-id: s1\r\n",
                v.to_string().as_bytes(),
            )
        }
        _ => legacy(r),
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    assert_eq!(c.protocol_version().as_deref(), Some("2025-06-18"));
    echo_works(&c).await;
    c.close().await;
    let after: Vec<Req> = srv
        .requests()
        .into_iter()
        .skip_while(|r| r.rpc_method() != "initialize")
        .skip(1)
        .collect();
    assert!(after.iter().any(|r| r.rpc_method() == "tools/call"));
    for r in &after {
        assert!(
            r.head.contains("mcp-protocol-version: 2025-06-18"),
            "{} {}: {}",
            r.method,
            r.rpc_method(),
            r.head
        );
        assert!(r.head.contains("mcp-session-id: s1"), "{}", r.head);
    }
}

/// VER-01: a call refused with -32022 naming no version this client can switch to surfaces the
/// error after one request (the retry happens at most once, and only to a different mutual
/// version).
#[tokio::test]
async fn ver01_call_refused_with_32022_surfaces_without_looping() {
    let srv = Scripted::start(|r| {
        let id = r.id();
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
                400,
                &rpc_error(
                    &id,
                    -32022,
                    Some(json!({"supported": ["2026-07-28", "2099-01-01"], "requested": "2026-07-28"})),
                ),
            ),
        }
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    let e = bounded(c.call_tool("echo", json!({}), CallOptions::new()))
        .await
        .expect_err("refused");
    assert_eq!(e.rpc_code(), Some(-32022));
    let calls = srv
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .count();
    assert_eq!(calls, 1, "no retry at the same version");
    assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
    c.close().await;
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
        let r = bounded(builder().connect_http(&srv.url, HttpOptions::default())).await;
        assert_eq!(*probes.lock().expect("lock"), 2, "one re-probe");
        if recovers {
            let c = r.expect("modern after the re-probe");
            assert_eq!(c.era(), Some(Era::Modern));
            echo_works(&c).await;
            c.close().await;
        } else {
            let e = r.expect_err("no era works");
            assert!(matches!(e, ClientError::Transport(_)), "{e:?}");
        }
    }
}

/// LHTTP-02 + LHTTP-04: resuming a request's stream meets a 404 (the session ended): that call
/// fails (it may have been processed, so it is not re-sent), and the next call starts a new
/// session first instead of meeting the 404 again.
#[tokio::test]
async fn lhttp02_session_ended_while_resuming() {
    let sessions = Arc::new(Mutex::new((0u32, Vec::<String>::new())));
    let s = sessions.clone();
    let srv = Scripted::start(move |r| {
        let mut st = s.lock().expect("lock");
        let sid = r
            .head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .map(|v| v.trim().to_owned());
        if let Some(sid) = &sid {
            if st.1.contains(sid) {
                return raw(404, "", "", b"");
            }
        }
        match (r.method.as_str(), r.rpc_method(), r.tool()) {
            (_, "initialize", _) => {
                st.0 += 1;
                let v = rpc_result(
                    &r.id(),
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "scripted", "version": "1"}}),
                );
                raw(
                    200,
                    "application/json",
                    &format!("mcp-session-id: s{}\r\n", st.0),
                    v.to_string().as_bytes(),
                )
            }
            ("GET", _, _) if r.head.contains("last-event-id:") => {
                if let Some(sid) = sid {
                    st.1.push(sid);
                }
                raw(404, "", "", b"")
            }
            (_, "tools/call", "poll") => sse("id: e1\nretry: 10\ndata: \n\n"),
            _ => legacy(r),
        }
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    let e = bounded(c.call_tool("poll", json!({}), CallOptions::new()))
        .await
        .expect_err("the resumption met a 404");
    assert!(matches!(e, ClientError::Closed(_)), "{e:?}");
    let polls = || srv.requests().iter().filter(|r| r.tool() == "poll").count();
    assert_eq!(polls(), 1, "not re-sent");
    echo_works(&c).await;
    assert_eq!(sessions.lock().expect("lock").0, 2, "a new session");
    let stale = srv
        .requests()
        .iter()
        .filter(|r| r.tool() == "echo" && r.head.contains("mcp-session-id: s1"))
        .count();
    assert_eq!(stale, 0, "the call went straight to the new session");
    c.close().await;
}

/// LHTTP-02: when starting the new session fails, the call ends in `SessionExpired`, and the
/// next call tries again.
#[tokio::test]
async fn lhttp02_failed_renewal_is_retried_by_the_next_call() {
    #[derive(Default)]
    struct St {
        alive: Option<String>,
        made: u32,
        refuse_init: bool,
    }
    let st = Arc::new(Mutex::new(St::default()));
    let s2 = st.clone();
    let srv = Scripted::start(move |r| {
        let mut st = s2.lock().expect("lock");
        if r.rpc_method() == "initialize" {
            if std::mem::take(&mut st.refuse_init) {
                return raw(503, "text/plain", "", b"busy");
            }
            st.made += 1;
            let sid = format!("s{}", st.made);
            st.alive = Some(sid.clone());
            let v = rpc_result(
                &r.id(),
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                       "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            let h = format!("mcp-session-id: {sid}\r\n");
            return raw(200, "application/json", &h, v.to_string().as_bytes());
        }
        let alive = st
            .alive
            .as_ref()
            .is_some_and(|a| r.head.contains(&format!("mcp-session-id: {a}\r\n")));
        if r.method == "POST" && !alive {
            return raw(404, "", "", b"");
        }
        legacy(r)
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpOptions::default()))
        .await
        .expect("connect");
    {
        // The server forgets the session and refuses the next initialize once.
        let mut s = st.lock().expect("lock");
        s.alive = None;
        s.refuse_init = true;
    }
    let e = bounded(c.call_tool("echo", json!({}), CallOptions::new()))
        .await
        .expect_err("renewal failed");
    assert!(matches!(e, ClientError::SessionExpired(_)), "{e:?}");
    echo_works(&c).await;
    assert_eq!(
        st.lock().expect("lock").made,
        2,
        "the second attempt made s2"
    );
    c.close().await;
}
