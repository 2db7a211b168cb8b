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
