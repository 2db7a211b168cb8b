//! [`StdioPump`] driven as an embedder drives it: bytes in, bytes out, on the test's thread.
//! STDIO-01 framing (split chunks, `\r\n`, blank lines, the size cap, a final frame without a
//! newline) and the two ways an answer leaves: within `feed`, or queued with a `wake`.

use super::*;
use crate::{handler_fn, CallToolResult, HandlerError, Tool};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn server(limits: Limits) -> Server {
    Server::builder("pump", "1")
        .limits(limits)
        .tool(
            Tool::new("now"),
            handler_fn(|_ctx, _args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text("at once"))
            }),
        )
        .tool(
            Tool::new("later"),
            handler_fn(|_ctx, _args: Value| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, HandlerError>(CallToolResult::text("later"))
            }),
        )
        .build()
        .expect("server")
}

fn quiet() -> Limits {
    Limits {
        stdio_idle_spin: Duration::ZERO,
        ..Limits::default()
    }
}

fn pump(limits: Limits) -> (StdioPump, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    let wake = Box::new(move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    (StdioPump::new(&server(limits), wake).expect("pump"), wakes)
}

fn line(v: &Value) -> Vec<u8> {
    let mut b = serde_json::to_vec(v).expect("json");
    b.push(b'\n');
    b
}

/// The messages in `out`, one per line; every line is newline-terminated.
fn messages(out: &[u8]) -> Vec<Value> {
    assert!(out.is_empty() || out.ends_with(b"\n"), "a partial line");
    out.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect()
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

fn call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": {}}})
}

fn handshake(p: &StdioPump) {
    let out = messages(&p.feed(&line(&init())).output);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["result"]["protocolVersion"], "2025-11-25");
    let done = line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(p.feed(&done).output.is_empty());
}

#[tokio::test]
async fn a_frame_split_across_chunks_is_answered_within_feed() {
    let (p, wakes) = pump(quiet());
    let bytes = line(&init());
    let (a, b) = bytes.split_at(bytes.len() / 2);
    let first = p.feed(a);
    assert!(first.output.is_empty() && first.result.is_ok());
    let out = messages(&p.feed(b).output);
    assert_eq!(out[0]["id"], 1);
    assert_eq!(out[0]["result"]["serverInfo"]["name"], "pump");
    let done = line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert!(p.feed(&done).output.is_empty());
    // Blank lines are skipped and a trailing `\r` trimmed (STDIO-01).
    let mut crlf = b"\n  \n".to_vec();
    crlf.extend(serde_json::to_vec(&call(2, "now")).expect("json"));
    crlf.extend(b"\r\n");
    let out = messages(&p.feed(&crlf).output);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 2);
    assert_eq!(out[0]["result"]["content"][0]["text"], "at once");
    // Answered inside `feed`: nobody needed waking, and the spin is off.
    assert_eq!(wakes.load(Ordering::SeqCst), 0);
    assert!(p.spin().is_none());
}

#[tokio::test]
async fn a_waiting_request_is_queued_and_wakes_the_embedder() {
    let (p, wakes) = pump(quiet());
    handshake(&p);
    let mut two = line(&call(2, "later"));
    two.extend(line(&call(3, "now")));
    let out = messages(&p.feed(&two).output);
    // The quick one is answered at once, without waiting for the slow one before it.
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 3);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while wakes.load(Ordering::SeqCst) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no wake");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let out = messages(&p.take_output());
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 2);
    assert_eq!(out[0]["result"]["content"][0]["text"], "later");
    assert!(p.take_output().is_empty());
}

#[tokio::test]
async fn a_frame_over_the_cap_is_refused_and_ends_input() {
    let (p, _) = pump(Limits {
        max_message_bytes: 256,
        ..quiet()
    });
    handshake(&p);
    let big = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "now", "arguments": {"pad": "x".repeat(400)}}});
    // Crossing the cap mid-chunk is enough: the rest of the frame is never buffered.
    let bytes = line(&big);
    let fed = p.feed(&bytes[..300]);
    assert!(fed.result.is_err(), "the connection must end");
    let out = messages(&fed.output);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["error"]["code"], -32600);
    // Input has ended: later bytes are ignored.
    assert!(p.feed(&line(&call(10, "now"))).output.is_empty());
}

#[tokio::test]
async fn a_last_frame_without_newline_counts_at_eof() {
    let (p, _) = pump(quiet());
    handshake(&p);
    let last = serde_json::to_vec(&call(4, "now")).expect("json");
    assert!(p.feed(&last).output.is_empty());
    let out = messages(&p.feed_eof().output);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 4);
    // A second EOF, and bytes after it, change nothing.
    assert!(p.feed_eof().output.is_empty());
    assert!(p.feed(&line(&call(5, "now"))).output.is_empty());
}

#[tokio::test]
async fn drain_lets_a_request_in_flight_finish() {
    let (p, _) = pump(quiet());
    handshake(&p);
    assert!(p.feed(&line(&call(6, "later"))).output.is_empty());
    p.drain(false).await;
    let out = messages(&p.take_output());
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 6);
    assert_eq!(out[0]["result"]["content"][0]["text"], "later");
}

/// The thread a handler finished on.
type Seen = Arc<Mutex<Option<std::thread::ThreadId>>>;

/// A local pump whose `gated` tool waits until the test opens the gate, recording the thread
/// its handler finished on.
fn gated() -> (StdioPump, Arc<AtomicUsize>, Arc<tokio::sync::Notify>, Seen) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let seen = Arc::new(Mutex::new(None));
    let (g, s) = (gate.clone(), seen.clone());
    let server = Server::builder("pump", "1")
        .limits(quiet())
        .tool(
            Tool::new("gated"),
            handler_fn(move |_ctx, _args: Value| {
                let (g, s) = (g.clone(), s.clone());
                async move {
                    g.notified().await;
                    *lock(&s) = Some(std::thread::current().id());
                    Ok::<_, HandlerError>(CallToolResult::text("opened"))
                }
            }),
        )
        .build()
        .expect("server");
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    let wake = Box::new(move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    let p = StdioPump::new(&server, wake).expect("pump").local();
    (p, wakes, gate, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_kept_request_finishes_on_the_embedders_thread_once_woken() {
    let (p, wakes, gate, seen) = gated();
    handshake(&p);
    assert!(p.feed(&line(&call(7, "gated"))).output.is_empty());
    // Kept, not handed to the runtime: no runtime thread polls it, nobody was woken yet.
    assert_eq!(wakes.load(Ordering::SeqCst), 0);
    // Opened from another thread: its waker wakes the embedder, once.
    let g = gate.clone();
    std::thread::spawn(move || g.notify_one())
        .join()
        .expect("thread");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while wakes.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "no wake");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        *lock(&seen),
        None,
        "polled before the embedder took the output"
    );
    let out = messages(&p.take_output());
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 7);
    assert_eq!(out[0]["result"]["content"][0]["text"], "opened");
    assert_eq!(*lock(&seen), Some(std::thread::current().id()));
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    assert!(p.take_output().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn drain_hands_kept_requests_to_the_runtime() {
    let (p, _, gate, seen) = gated();
    handshake(&p);
    assert!(p.feed(&line(&call(8, "gated"))).output.is_empty());
    let g = gate.clone();
    let opener = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        g.notify_one();
    });
    p.drain(false).await;
    opener.await.expect("opener");
    let out = messages(&p.take_output());
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["id"], 8);
    // It finished as a runtime task, not on this thread.
    assert_ne!(*lock(&seen), Some(std::thread::current().id()));
    assert!(lock(&seen).is_some());
}
