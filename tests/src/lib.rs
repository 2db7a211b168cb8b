//! Shared helpers for wire tests: the official schemas of both eras, a real stdio peer and a
//! real HTTP client with its own SSE parser.
//!
//! Every message a test receives through [`StdioPeer`] is validated against the schema of its era
//! (`shared/spec/<version>/schema.json`): the envelope against `JSONRPCMessage`, and results
//! against the result type of the method that was asked.
//!
//! One deliberate exception: an error answering an unreadable request carries `"id": null`, as
//! JSON-RPC 2.0 requires; the MCP schema only allows omitting the id, so the validator accepts
//! `null` there and nowhere else.

pub mod apps;
pub mod asking;
pub mod auth;
pub mod client;
pub mod era;
pub mod fixture;
pub mod http;
pub mod interop;
pub mod otlp;
pub mod redis;
pub mod schema;
pub mod scripted;
pub mod stdio;
pub mod tasks;
pub mod tasks_script;

pub use schema::{validate_def, validate_message, Era};
pub use stdio::StdioPeer;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Path of a binary of the examples crate, building it if `cargo test` did not.
pub fn example_bin(name: &str) -> PathBuf {
    target_bin(name, "mcpcore-examples")
}

/// Path of this crate's fixture server (`src/bin/wire-server.rs`); `cargo test` of this crate
/// builds it fresh.
pub fn wire_server_bin() -> PathBuf {
    let path = profile_dir().join(format!("wire-server{}", std::env::consts::EXE_SUFFIX));
    if path.exists() {
        path
    } else {
        target_bin("wire-server", "mcpcore-tests")
    }
}

/// `target/<profile>` of the running test executable.
pub(crate) fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> → target/<profile>
    exe.parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf()
}

/// Path of binary `name` of `package` in the current target dir, (re)built once per test process:
/// `cargo test` does not rebuild another package's binaries, and a target dir cached between runs
/// would otherwise hand tests a stale binary. A no-op build is cheap; concurrent callers wait.
fn target_bin(name: &str, package: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let dir = profile_dir();
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if !built.iter().any(|b| b == name) {
        let mut cmd = std::process::Command::new(env!("CARGO"));
        cmd.args(["build", "-q", "-p", package, "--bin", name])
            .current_dir(workspace_root());
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build");
        assert!(status.success(), "building {name} failed");
        built.push(name.to_owned());
    }
    path
}
