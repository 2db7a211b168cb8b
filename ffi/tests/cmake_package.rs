//! The installed CMake package (`scripts/install-ffi.sh` writes `lib/cmake/mcpcore/`): a small
//! consumer configured with `find_package(mcpcore CONFIG REQUIRED)` and linked with
//! `target_link_libraries(app PRIVATE mcpcore::mcpcore)` builds against the installed tree, shared
//! and static (`MCPCORE_STATIC=ON`), and answers `initialize` over stdio. A missing `cmake` fails
//! the test (scripts/test.sh installs it).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Install the library, header and package files into a fresh prefix under the target dir.
fn install(prefix: &Path) {
    support::staticlib();
    let profile = support::profile_dir();
    let _ = std::fs::remove_dir_all(prefix);
    let mut cmd = Command::new("bash");
    cmd.arg(support::root().join("scripts/install-ffi.sh"))
        .args(["--no-build", "--prefix"])
        .arg(prefix)
        .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
        .current_dir(support::root());
    if profile.file_name().is_some_and(|n| n == "debug") {
        cmd.arg("--debug");
    }
    run(&mut cmd);
}

/// Configure and build the consumer in `dir`; `Err` is CMake's output when configuring failed.
fn configure(dir: &Path, prefix: &Path, find: &str, defs: &[&str]) -> Result<PathBuf, String> {
    let src = support::root().join("examples/c/echo_server.c");
    std::fs::create_dir_all(dir).expect("consumer dir");
    let lists = format!(
        "cmake_minimum_required(VERSION 3.16)\nproject(consumer C)\n{find}\n\
         add_executable(echo_server \"{}\")\n\
         target_link_libraries(echo_server PRIVATE mcpcore::mcpcore)\n",
        src.display()
    );
    std::fs::write(dir.join("CMakeLists.txt"), lists).expect("CMakeLists.txt");
    let build = dir.join("build");
    let _ = std::fs::remove_dir_all(&build);
    let o = Command::new("cmake")
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .args(defs)
        .output()
        .expect("cmake is required (apt-get install cmake; scripts/test.sh does)");
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    run(Command::new("cmake").arg("--build").arg(&build));
    Ok(build.join("echo_server"))
}

fn answers_initialize(exe: &Path) {
    use std::io::Write;
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the consumer");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{INIT}").expect("write");
    drop(stdin);
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{exe:?} exited with {:?}", o.status);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"name\":\"c-echo\""), "{exe:?}: {text}");
}

fn links_shared_library(exe: &Path) -> bool {
    let o = Command::new("ldd").arg(exe).output().expect("ldd");
    String::from_utf8_lossy(&o.stdout).contains("libmcpcore.so")
}

#[test]
fn find_package_builds_shared_and_static_consumers() {
    let base = support::profile_dir().join("c-suite").join("cmake");
    let prefix = base.join("prefix");
    install(&prefix);
    let find = "find_package(mcpcore 0.1 CONFIG REQUIRED)";

    let shared = configure(&base.join("shared"), &prefix, find, &[]).expect("configure shared");
    assert!(
        links_shared_library(&shared),
        "mcpcore::mcpcore is the shared library by default"
    );
    answers_initialize(&shared);

    let statik = configure(
        &base.join("static"),
        &prefix,
        find,
        &["-DMCPCORE_STATIC=ON"],
    )
    .expect("configure static");
    assert!(
        !links_shared_library(&statik),
        "MCPCORE_STATIC=ON links libmcpcore.a"
    );
    answers_initialize(&statik);

    // The version file refuses an incompatible request instead of linking the wrong ABI.
    let newer = "find_package(mcpcore 1.0 CONFIG REQUIRED)";
    let e = configure(&base.join("newer"), &prefix, newer, &[]).expect_err("1.0 is not 0.1");
    assert!(e.contains("mcpcore"), "{e}");
}
