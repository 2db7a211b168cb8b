//! The README's demo: `demo-client` drives `demo-server` over real stdio
//! pipes in both eras. One test puts the recording `tap` between them and validates every
//! message of the legacy run against 2025-11-25 and of the modern run against 2026-07-28; the
//! other runs the client exactly as the README's command does (no arguments).

use mcpcore_tests::client::TapLog;
use mcpcore_tests::{example_bin, Era};
use std::process::{Output, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

async fn run(args: &[String]) -> Output {
    let child = tokio::process::Command::new(example_bin("demo-client"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn demo-client");
    tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("demo-client finishes (bounded)")
        .expect("demo-client output")
}

fn assert_tour(out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo-client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "== legacy era",
        "protocol 2025-11-25",
        "== modern era",
        "protocol 2026-07-28",
        "echo → hello",
        "add 2 + 3 → 5",
        "demo finished: both eras answered",
    ] {
        assert!(stdout.contains(line), "{line:?} missing from:\n{stdout}");
    }
}

/// LC-01, DISC-01: both eras answered, every message schema-valid for its era.
#[tokio::test]
async fn demo_client_drives_demo_server_in_both_eras() {
    let legacy = TapLog::new("demo-legacy");
    let pattern = legacy.path.display().to_string().replace("legacy", "{era}");
    let modern = TapLog {
        path: pattern.replace("{era}", "modern").into(),
    };
    let args = vec![
        env!("CARGO_BIN_EXE_tap").to_owned(),
        pattern,
        example_bin("demo-server").display().to_string(),
    ];
    let out = run(&args).await;
    assert_tour(&out);
    legacy.validate(Era::Legacy);
    modern.validate(Era::Modern);
    assert_eq!(legacy.client_requests("initialize").len(), 1);
    assert!(legacy.client_requests("server/discover").is_empty());
    assert_eq!(modern.client_requests("server/discover").len(), 1);
    assert!(modern.client_requests("initialize").is_empty());
    assert!(!modern.client_requests("tools/call").is_empty());
    let _ = std::fs::remove_file(&legacy.path);
    let _ = std::fs::remove_file(&modern.path);
}

/// The README command: no arguments, the sibling `demo-server` is found (or built) and served.
#[tokio::test]
async fn demo_client_as_the_readme_runs_it() {
    example_bin("demo-server");
    assert_tour(&run(&[]).await);
}
