//! What the `mcpcore` tests share: running the built binary, bounded.
// Each test binary uses part of this module.
#![allow(dead_code)]

use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Bound of one `mcpcore` run (and of waits in the tests).
pub const LIMIT: Duration = Duration::from_secs(90);

/// Start `mcpcore args` with every pipe open (killed when dropped).
pub fn spawn(args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpcore"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcpcore")
}

/// Run `mcpcore args`, feeding `stdin` (then closing it).
pub async fn mcpcore(args: &[&str], stdin: &str) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.as_bytes())
        .await
        .expect("write stdin");
    drop(input);
    tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("mcpcore finishes (bounded)")
        .expect("mcpcore output")
}

/// The JSON a successful run printed (the run must have exited 0).
pub fn ok_json(o: &Output) -> serde_json::Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// A demo-server that can be killed and kept from starting again: it runs (through `sh`) only
/// while a mark file exists, and leaves its pid (every process a bridge starts of it).
pub struct Flaky {
    pub dir: std::path::PathBuf,
    mark: std::path::PathBuf,
    pid: std::path::PathBuf,
    /// The `sh -c` script that starts it.
    pub script: String,
}

impl Flaky {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcpcore-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (mark, pid) = (dir.join("mark"), dir.join("pid"));
        std::fs::write(&mark, "").expect("mark");
        let demo = mcpcore_tests::example_bin("demo-server");
        let script = format!(
            "echo $$ >> '{}'; test -f '{}' && exec '{}'",
            pid.display(),
            mark.display(),
            demo.display()
        );
        Self {
            dir,
            mark,
            pid,
            script,
        }
    }

    /// Kill the running servers and keep them from starting again.
    pub fn kill(&self) {
        std::fs::remove_file(&self.mark).expect("unmark");
        let pids = std::fs::read_to_string(&self.pid).expect("pid");
        for pid in pids.split_whitespace() {
            // Some have exited already (a connection closed since): only the live ones matter.
            let _ = std::process::Command::new("kill").arg(pid).status();
        }
        std::fs::write(&self.pid, "").expect("forget the killed");
    }

    /// Let it start again.
    pub fn revive(&self) {
        std::fs::write(&self.mark, "").expect("mark");
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `mcpcore listen ARGS…` once it has said `listening: …` (its subscription is acknowledged):
/// the child, whose stdout then carries the notifications, and that line.
pub async fn listening(args: &[&str]) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut v = vec!["listen"];
    v.extend_from_slice(args);
    let mut child = spawn(&v);
    let mut err = tokio::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut first = String::new();
    tokio::time::timeout(LIMIT, err.read_line(&mut first))
        .await
        .expect("listening in time")
        .expect("stderr");
    assert!(first.starts_with("listening: "), "{first}");
    (child, first)
}

/// The one notification a `listen --count 1` child printed before it ended.
pub async fn notification(child: tokio::process::Child) -> serde_json::Value {
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("a notification in time")
        .expect("output");
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("one JSON line")
}

/// `mcpcore serve --http 127.0.0.1:0 -- command...`: the child and its URL.
pub async fn serve(command: &[&str]) -> (tokio::process::Child, String) {
    serve_with(&[], command).await
}

/// As [`serve`], with more `serve` flags.
pub async fn serve_with(flags: &[&str], command: &[&str]) -> (tokio::process::Child, String) {
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--quiet"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(command);
    let mut child = spawn(&args);
    use tokio::io::AsyncBufReadExt;
    let mut err = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(LIMIT, async {
        while let Ok(Some(l)) = err.next_line().await {
            if let Some(u) = l.strip_prefix("mcpcore: serving ") {
                return u.to_owned();
            }
        }
        panic!("the bridge did not start");
    })
    .await
    .expect("the bridge starts in time");
    // Keep reading its stderr so it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = err.next_line().await {} });
    (child, url)
}
