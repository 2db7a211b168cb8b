//! stdio under a hostile or slow peer (REQUIREMENTS STDIO-01, JR-03): output backpressure keeps
//! memory bounded when the peer never reads our stdout, and the in-flight cap answers with its own
//! error, distinct from a duplicate request id.

use mcpcore_tests::{wire_server_bin, StdioPeer};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bound asked of a release build; a debug build allocates the same buffers.
const RSS_LIMIT_KB: u64 = 100 * 1024;

/// A `/proc/<pid>/status` field in kB (`VmRSS`, `VmHWM`).
fn status_kb(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("status field")
}

/// Wait until `written` stops moving for `quiet` (the peer stopped reading us) or reaches `all`.
fn wait_for_stall(written: &AtomicUsize, all: usize, quiet: Duration, limit: Duration) -> usize {
    let start = Instant::now();
    let (mut last, mut since) = (usize::MAX, Instant::now());
    loop {
        let now = written.load(Ordering::Relaxed);
        if now >= all || start.elapsed() > limit {
            return now;
        }
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= quiet {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// 100,000 calls of 1 KB each while stdout is not read: the server stops reading stdin once its
/// outbound side is full (so our writes block), its memory stays under 100 MB, and once we read,
/// every call is answered exactly once.
#[test]
fn stdio01_unread_stdout_bounds_memory_and_every_call_is_answered() {
    flood(100_000, 1000);
}

/// The same with 1 MB answers: the byte bound (`Limits::max_outbound_bytes`), not only the message
/// bound, stops the reading (1,000 queued answers of 1 MB would be 1 GB).
#[test]
fn stdio01_large_answers_are_bounded_in_bytes() {
    flood(150, 1024 * 1024);
}

/// Write `calls` echo calls of `size` bytes with stdout unread, check the stall and the memory,
/// then read every answer.
fn flood(calls: usize, size: usize) {
    let mut child = Command::new(wire_server_bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn wire-server");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "backpressure", "version": "1"}}});
    writeln!(stdin, "{init}").expect("write initialize");
    let first = lines.next().expect("initialize answer").expect("read");
    assert!(first.contains("\"result\""), "{first}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("write");
    let written = Arc::new(AtomicUsize::new(0));
    let count = written.clone();
    let writer = std::thread::spawn(move || {
        let text = "x".repeat(size);
        for i in 0..calls {
            let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}}});
            if writeln!(stdin, "{call}").is_err() {
                return;
            }
            count.store(i + 1, Ordering::Relaxed);
        }
        // stdin stays open until the answers are read (dropping it here is EOF).
        let _ = stdin.flush();
        std::thread::sleep(Duration::from_secs(120));
    });

    let stalled_at = wait_for_stall(
        &written,
        calls,
        Duration::from_millis(1500),
        Duration::from_secs(60),
    );
    let rss = status_kb(pid, "VmRSS");
    assert!(
        stalled_at < calls,
        "the server kept reading stdin while its stdout was unread (no backpressure)"
    );
    assert!(rss < RSS_LIMIT_KB, "RSS {rss} kB with stdout unread");

    let mut answered = vec![false; calls];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = 0;
    while seen < calls {
        assert!(Instant::now() < deadline, "only {seen} answers in time");
        let line = lines.next().expect("an answer").expect("read");
        let v: Value = serde_json::from_str(&line).expect("json");
        let i = v["id"].as_u64().and_then(|i| usize::try_from(i).ok());
        let i = i.unwrap_or_else(|| panic!("unexpected message {v}"));
        let text = v["result"]["content"][0]["text"].as_str();
        assert_eq!(text.map(str::len), Some(size), "{v}");
        assert!(!answered[i], "call {i} answered twice");
        answered[i] = true;
        seen += 1;
    }
    let peak = status_kb(pid, "VmHWM");
    assert!(peak < RSS_LIMIT_KB, "peak RSS {peak} kB");
    let _ = child.kill();
    let _ = child.wait();
    drop(writer);
}

/// JR-03: past `max_inflight` a fresh id gets the busy error (-32603, `data.reason = "busy"`),
/// while a duplicate of an id in flight still gets -32600; capacity comes back when calls end.
#[tokio::test]
async fn inflight_cap_has_its_own_error() {
    let mut p = StdioPeer::wire_ready(&["--max-inflight", "3"], json!({})).await;
    for i in 0..3 {
        let id = json!(format!("slow{i}"));
        let args = json!({"name": "stubborn", "arguments": {"ms": 4000}});
        p.send_request(&id, "tools/call", args).await;
    }
    // The reader registers requests in arrival order, so all three are in flight by now.
    p.send_request(&json!("fresh"), "ping", json!({})).await;
    let (r, mut early) = p.response(&json!("fresh")).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "busy", "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(!msg.contains("already in flight"), "{r}");
    p.send_request(&json!("slow0"), "ping", json!({})).await;
    let (r, more) = p.response(&json!("slow0")).await;
    early.extend(more);
    assert!(early.is_empty(), "the slow calls ended early: {early:?}");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("already in flight"), "{r}");
    // The three answers, in whatever order they finish.
    let mut done = std::collections::BTreeSet::new();
    while done.len() < 3 {
        let m = p.recv().await;
        assert_eq!(m["result"]["content"][0]["text"], "stubborn 4000 ms", "{m}");
        done.insert(m["id"].to_string());
    }
    let r = p.request("ping", json!({})).await;
    assert_eq!(r["result"], json!({}), "capacity is back: {r}");
}
