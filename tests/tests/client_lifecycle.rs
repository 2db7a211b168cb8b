//! The client's shutdown of a stdio server and its deprecation warnings (REQUIREMENTS LC-06,
//! STDIO-04, 0.8).
//!
//! Shutdown closes stdin, waits `close_grace`, sends SIGTERM, waits `term_grace`, then kills.
//! Each stage is proven by a server that only yields to that stage, with the other grace
//! periods set far beyond the test's bound: a missing stage makes `close` overrun the bound.

use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ConnectMode, StderrMode, StdioCommand,
};
use mcpcore::LoggingLevel;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-server");
const BOUND: Duration = Duration::from_secs(20);
/// Longer than [`BOUND`]: a stage that must not be needed.
const NEVER: Duration = Duration::from_secs(120);
const SHORT: Duration = Duration::from_millis(200);

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(BOUND, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {BOUND:?}"),
    }
}

fn with_graces(mut cmd: StdioCommand, close: Duration, term: Duration) -> StdioCommand {
    cmd.close_grace = close;
    cmd.term_grace = term;
    cmd.stderr(StderrMode::Capture)
}

async fn stderr_line(c: &Client, prefix: &str) -> String {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if let Some(l) = c
            .captured_stderr()
            .and_then(|t| t.lines().find(|l| l.starts_with(prefix)).map(str::to_owned))
        {
            return l;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {prefix} on stderr"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(target_os = "linux")]
fn gone(pid: &str) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(not(target_os = "linux"))]
fn gone(_pid: &str) -> bool {
    true
}

/// Connect, then close; the server's pid and whether it saw stdin end.
async fn connect_and_close(cmd: StdioCommand) -> (String, bool) {
    let c = bounded(
        "connect",
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_stdio(cmd),
    )
    .await
    .expect("connect");
    let pid = stderr_line(&c, "pid=").await["pid=".len()..].to_owned();
    bounded("close", c.close()).await;
    assert!(c.is_closed());
    // The stderr reader may still be draining the pipe when close returns.
    let saw_eof = stderr_line(&c, "eof").await == "eof";
    (pid, saw_eof)
}

#[cfg(unix)]
#[tokio::test]
async fn lc06_close_stdin_is_enough_for_a_well_behaved_server() {
    // Signals would come only after NEVER: the server exits on stdin EOF.
    let (pid, saw_eof) =
        connect_and_close(with_graces(StdioCommand::new(FAKE), NEVER, NEVER)).await;
    assert!(saw_eof, "stdin was closed first");
    assert!(gone(&pid), "the process is reaped");
}

#[cfg(unix)]
#[tokio::test]
async fn lc06_sigterm_after_the_close_grace() {
    // Ignores stdin EOF, dies of SIGTERM; the kill would come only after NEVER.
    let cmd = with_graces(StdioCommand::new(FAKE).arg("linger"), SHORT, NEVER);
    let (pid, saw_eof) = connect_and_close(cmd).await;
    assert!(saw_eof, "stdin was closed first");
    assert!(gone(&pid), "terminated");
}

#[cfg(unix)]
#[tokio::test]
async fn lc06_kill_after_the_term_grace() {
    // Ignores stdin EOF and SIGTERM (ignored dispositions survive exec): only the kill ends it.
    let cmd = StdioCommand::new("/bin/sh").args(["-c", "trap '' TERM; exec \"$0\" linger", FAKE]);
    let (pid, saw_eof) = connect_and_close(with_graces(cmd, SHORT, SHORT)).await;
    assert!(saw_eof, "stdin was closed first");
    assert!(gone(&pid), "killed");
}

/// LC-06 with the default graces: a server still running a request when stdin closes uses its
/// shutdown grace (2 s for an mcpcore server), flushes and exits by itself before the client's
/// close grace ends, so it is never sent SIGTERM.
#[cfg(unix)]
#[tokio::test]
async fn lc06_default_close_grace_outlasts_the_server_shutdown_grace() {
    let grace = mcpcore::Limits::default().shutdown_grace;
    let cmd = StdioCommand::new(env!("CARGO_BIN_EXE_client-test-server")).arg("--report-exit");
    assert!(
        cmd.close_grace >= grace + Duration::from_secs(2),
        "close grace {:?} vs shutdown grace {grace:?}",
        cmd.close_grace
    );
    let c = bounded(
        "connect",
        Client::builder()
            .mode(ConnectMode::Legacy)
            .connect_stdio(cmd.stderr(StderrMode::Capture)),
    )
    .await
    .expect("connect");
    let c = Arc::new(c);
    let busy = c.clone();
    let call = tokio::spawn(async move { busy.call_tool("slow", json!({"ms": 60_000})).await });
    // The call is running on the server before stdin closes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = tokio::time::Instant::now();
    bounded("close", c.close()).await;
    let took = started.elapsed();
    assert!(
        took >= grace - Duration::from_millis(200),
        "the server used its grace ({took:?})"
    );
    assert!(
        call.await.expect("join").is_err(),
        "the call ended with the connection"
    );
    let line = stderr_line(&c, "client-test-server: exited").await;
    assert_eq!(
        line, "client-test-server: exited on its own",
        "not signalled"
    );
}

/// Captures WARN-level tracing output of this thread (the tests run on a current-thread
/// runtime, so spawned client tasks log here too).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

impl Captured {
    fn count(&self, needle: &str) -> usize {
        let text = String::from_utf8_lossy(&self.0.lock().expect("lock")).into_owned();
        text.lines().filter(|l| l.contains(needle)).count()
    }
}

fn deprecated_users() -> ClientBuilder {
    let ok = |v: Value| client_handler_fn(move |_p: Value| std::future::ready(Ok(v.clone())));
    Client::builder()
        .on_sampling(ok(
            json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}),
        ))
        .on_roots(ok(json!({"roots": []})))
}

/// On a modern connection the deprecated roots, sampling and logging APIs warn
/// once each (not per call); on a legacy connection they are plain features and do not warn.
#[tokio::test]
async fn deprecated_apis_warn_once_on_modern_only() {
    use tracing_subscriber::util::SubscriberInitExt;
    let cap = Captured::default();
    let _guard = tracing_subscriber::fmt()
        .with_writer(cap.clone())
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .with_ansi(false)
        .finish()
        .set_default();
    let cmd = StdioCommand::new(FAKE)
        .arg("discover=ok")
        .stderr(StderrMode::Null);
    let c = bounded("connect", deprecated_users().connect_stdio(cmd))
        .await
        .expect("connect");
    assert!(c.is_modern());
    for _ in 0..3 {
        c.set_log_level(LoggingLevel::Debug)
            .await
            .expect("modern: becomes the per-request level");
        bounded("call", c.call_tool("echo", json!({})))
            .await
            .expect("call");
    }
    c.close().await;
    assert_eq!(cap.count("sampling capability is deprecated"), 1);
    assert_eq!(cap.count("roots capability is deprecated"), 1);
    assert_eq!(cap.count("logging is deprecated"), 1);

    let legacy = Captured::default();
    let _guard2 = tracing_subscriber::fmt()
        .with_writer(legacy.clone())
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .with_ansi(false)
        .finish()
        .set_default();
    let cmd = StdioCommand::new(FAKE).stderr(StderrMode::Null);
    let c = bounded(
        "connect",
        deprecated_users()
            .mode(ConnectMode::Legacy)
            .connect_stdio(cmd),
    )
    .await
    .expect("connect");
    c.set_log_level(LoggingLevel::Debug)
        .await
        .expect_err("the fake server has no logging/setLevel");
    c.close().await;
    assert_eq!(
        legacy.count("deprecated"),
        0,
        "legacy: no deprecation warnings"
    );
}
