//! Legacy HTTP sessions and versions from the client's side, against a scripted server on
//! 127.0.0.1 (REQUIREMENTS LHTTP-02, LHTTP-03, LHTTP-04, LC-02, VER-01): a counter-offered
//! version is spoken in the header; a session the server ended (404) is renewed, once for
//! concurrent callers, re-sending only calls the server never processed; a failed renewal is
//! retried by the next call; -32022 on a call never loops.

use mcpcore::client::{Client, ClientBuilder, ClientError, HttpClientOptions};
use mcpcore_tests::scripted::{json_resp, legacy, raw, rpc_error, rpc_result, sse, Req, Scripted};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("must end within the bound")
}

fn builder() -> ClientBuilder {
    Client::builder().configure(|o| o.probe_timeout = Duration::from_millis(300))
}

async fn echo_works(c: &Client) {
    let r = bounded(c.call_tool("echo", json!({})))
        .await
        .expect("the connection still works");
    assert_eq!(r.content[0]["text"], "ok");
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
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
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

/// VER-01: a call refused with -32022 is retried once at a mutual version the error lists (here
/// the same one), and a second refusal surfaces as the error: no loop.
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
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    let e = bounded(c.call_tool("echo", json!({})))
        .await
        .expect_err("refused");
    assert_eq!(e.rpc_code(), Some(-32022));
    let calls = srv
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .count();
    // VER-01 (and the conformance check sep-2575-client-retry-supported-version): one retry at a
    // listed mutual version, here the one just refused, and then the error, never a loop.
    assert_eq!(calls, 2, "exactly one retry, then the error surfaces");
    assert_eq!(c.protocol_version().as_deref(), Some("2026-07-28"));
    c.close().await;
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
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    let e = bounded(c.call_tool("poll", json!({})))
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
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    {
        // The server forgets the session and refuses the next initialize once.
        let mut s = st.lock().expect("lock");
        s.alive = None;
        s.refuse_init = true;
    }
    let e = bounded(c.call_tool("echo", json!({})))
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

/// LHTTP-05: connecting waits until the server has answered the legacy GET listening stream, so a
/// server message unrelated to any request (which a server drops while no GET stream is open) is
/// not lost to the first call racing ahead. The scripted server answers the GET only after a
/// delay and notes, when the first call arrives, whether the GET had been answered by then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lhttp05_connect_waits_for_the_get_stream_before_the_first_call() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let get_answered = Arc::new(AtomicBool::new(false));
    let seen_at_call: Arc<Mutex<Option<bool>>> = Arc::new(Mutex::new(None));
    let (g, s) = (get_answered.clone(), seen_at_call.clone());
    let srv = Scripted::start(move |r| match (r.method.as_str(), r.rpc_method()) {
        ("GET", _) => {
            // Blocking on purpose: this runtime has a second worker for everything else.
            std::thread::sleep(Duration::from_millis(400));
            g.store(true, Ordering::SeqCst);
            sse("")
        }
        (_, "tools/call") => {
            s.lock()
                .expect("lock")
                .get_or_insert(g.load(Ordering::SeqCst));
            legacy(r)
        }
        _ => legacy(r),
    })
    .await;
    let c = bounded(builder().connect_http(&srv.url, HttpClientOptions::default()))
        .await
        .expect("connect");
    echo_works(&c).await;
    assert_eq!(
        *seen_at_call.lock().expect("lock"),
        Some(true),
        "the first call was sent before the GET stream was answered"
    );
    c.close().await;
}
