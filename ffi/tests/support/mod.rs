//! Building and running C programs against the static library: the compiler, the variants
//! (plain, AddressSanitizer + UndefinedBehaviorSanitizer, LeakSanitizer, valgrind) and where
//! binaries go. A variant whose tool is missing fails the suite (scripts/test.sh installs them);
//! `MCP_C_SUITE_PLAIN_ONLY` runs the plain variant alone, for quick local runs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/<profile>` of this test run.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

fn cargo_build(args: &[&str]) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build").args(args).current_dir(root());
    if profile_dir().file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let st = cmd.status().expect("run cargo build");
    assert!(st.success(), "cargo build {args:?} failed");
}

/// The static library `libmcpcore.a`, (re)built once per test run with `cargo build -p
/// mcpcore-ffi`: `cargo test` builds the crate's test harness, not its staticlib, so a library
/// left from an earlier build may be stale. A fresh build is a no-op.
pub fn staticlib() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        cargo_build(&["-p", "mcpcore-ffi"]);
        let lib = profile_dir().join("libmcpcore.a");
        assert!(lib.exists(), "{} missing after the build", lib.display());
        lib
    })
    .clone()
}

/// The Rust servers the C client runs against, (re)built once per test run:
/// `demo-server` (examples) and `client-test-server` (tests crate).
pub fn rust_servers() -> (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        cargo_build(&[
            "-p",
            "mcpcore-examples",
            "--bin",
            "demo-server",
            "-p",
            "mcpcore-tests",
            "--bin",
            "client-test-server",
        ]);
        let bin = |n: &str| profile_dir().join(format!("{n}{}", std::env::consts::EXE_SUFFIX));
        (bin("demo-server"), bin("client-test-server"))
    })
    .clone()
}

/// The scripted tasks server (`task-server`, tests crate) the C task client runs against,
/// (re)built once per test run.
pub fn task_server() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        cargo_build(&["-p", "mcpcore-tests", "--bin", "task-server"]);
        profile_dir().join(format!("task-server{}", std::env::consts::EXE_SUFFIX))
    })
    .clone()
}

/// The C compiler (`$CC` or `cc`).
pub fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// The C++ compiler (`$CXX` or `c++`).
pub fn cxx() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "c++".into())
}

/// How a C program is built and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `-std=c11 -Wall -Wextra -Werror`.
    Plain,
    /// Plus `-fsanitize=address,undefined` (leak detection on).
    Sanitized,
    /// Plus `-fsanitize=leak` alone: LeakSanitizer without ASan's allocator and quarantine, so a
    /// leak ASan's shadow bookkeeping could mask still fails the run.
    Leak,
    /// The plain binary under valgrind memcheck; definite leaks fail the run.
    Valgrind,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Plain => "plain",
            Variant::Sanitized => "asan",
            Variant::Leak => "lsan",
            Variant::Valgrind => "valgrind",
        }
    }
}

const SAN_FLAGS: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-omit-frame-pointer",
    "-fno-sanitize-recover=all",
];

const LSAN_FLAGS: &[&str] = &["-fsanitize=leak", "-fno-omit-frame-pointer"];
/// The exit status LeakSanitizer is told to end a leaking run with (distinct from a test's own).
const LSAN_EXIT: i32 = 23;

/// Build and run a probe program with `flags`; its exit status, `None` when it does not build.
fn probe(name: &str, flags: &[&str], body: &str) -> Option<std::process::ExitStatus> {
    let dir = profile_dir().join("c-suite");
    std::fs::create_dir_all(&dir).expect("mkdir c-suite");
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, body).expect("write probe");
    let out = dir.join(name);
    let built = Command::new(cc())
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        return None;
    }
    Command::new(&out)
        .env("LSAN_OPTIONS", format!("exitcode={LSAN_EXIT}"))
        .stderr(std::process::Stdio::null())
        .status()
        .ok()
}

fn sanitizers_supported() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        probe("probe", SAN_FLAGS, "int main(void) { return 0; }\n").is_some_and(|s| s.success())
    })
}

/// LeakSanitizer builds here *and* reports a leak: a probe that drops its only pointer to a
/// heap block must end with [`LSAN_EXIT`] (LSan can be present yet inert, e.g. under ptrace).
fn leak_sanitizer_works() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let leaks = "#include <stdlib.h>\nvoid *volatile sink;\n\
            int main(void) { sink = malloc(64); sink = 0; return 0; }\n";
        probe("lsan_probe", LSAN_FLAGS, leaks).is_some_and(|s| s.code() == Some(LSAN_EXIT))
    })
}

fn valgrind_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        Command::new("valgrind")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Every variant, plain first (plain alone with `MCP_C_SUITE_PLAIN_ONLY`).
///
/// # Panics
/// When a variant's tool is missing or inert: a missing tool fails the suite, never skips it.
pub fn variants() -> Vec<Variant> {
    if std::env::var_os("MCP_C_SUITE_PLAIN_ONLY").is_some() {
        return vec![Variant::Plain];
    }
    assert!(
        sanitizers_supported(),
        "c-suite: {} cannot build and run with ASan/UBSan (install libasan/libubsan)",
        cc()
    );
    assert!(
        leak_sanitizer_works(),
        "c-suite: {} -fsanitize=leak does not build or does not report a leak (install liblsan)",
        cc()
    );
    assert!(
        valgrind_available(),
        "c-suite: valgrind is not installed (scripts/test.sh installs it)"
    );
    vec![
        Variant::Plain,
        Variant::Sanitized,
        Variant::Leak,
        Variant::Valgrind,
    ]
}

/// Compile C sources into an executable for `variant`, linked to the static library.
pub fn build(name: &str, sources: &[&str], variant: Variant) -> PathBuf {
    build_linked(name, sources, variant, &[])
}

/// [`build`], also linked with `libs` (e.g. `-lmicrohttpd`).
pub fn build_linked(name: &str, sources: &[&str], variant: Variant, libs: &[&str]) -> PathBuf {
    let dir = profile_dir().join("c-suite").join(variant.name());
    std::fs::create_dir_all(&dir).expect("mkdir");
    let out = dir.join(name);
    // The compiler writes a private name that is then renamed into place: a program being
    // written cannot be executed (ETXTBSY), and another test process sharing the target dir
    // may be running the previous build of the same name.
    let part = dir.join(format!(".{name}.{}.part", std::process::id()));
    let mut cmd = Command::new(cc());
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
        .arg("-I")
        .arg(root().join("include"));
    match variant {
        Variant::Sanitized => {
            cmd.args(SAN_FLAGS);
        }
        Variant::Leak => {
            cmd.args(LSAN_FLAGS);
        }
        Variant::Plain | Variant::Valgrind => {}
    }
    for s in sources {
        cmd.arg(root().join(s));
    }
    cmd.arg(staticlib())
        .args(libs)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&part);
    let o = cmd.output().expect("run the C compiler");
    assert!(
        o.status.success(),
        "compiling {name} ({}) failed:\n{}",
        variant.name(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&part, &out).expect("move the program into place");
    out
}

/// The command line that runs `exe` in `variant`: a program and its arguments. Sanitizer and
/// valgrind reports go to `<exe>.log*` next to the binary.
pub fn command(exe: &Path, variant: Variant) -> (PathBuf, Vec<String>) {
    let log = format!("{}.log", exe.display());
    let exe_s = exe.display().to_string();
    match variant {
        Variant::Plain => (exe.to_path_buf(), vec![]),
        Variant::Sanitized => (
            PathBuf::from("env"),
            vec![
                format!("ASAN_OPTIONS=detect_leaks=1:log_path={log}"),
                format!("UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path={log}"),
                exe_s,
            ],
        ),
        Variant::Leak => (
            PathBuf::from("env"),
            vec![
                format!("LSAN_OPTIONS=exitcode={LSAN_EXIT}:report_objects=1:log_path={log}"),
                exe_s,
            ],
        ),
        Variant::Valgrind => (
            PathBuf::from("valgrind"),
            vec![
                "-q".into(),
                "--leak-check=full".into(),
                "--errors-for-leak-kinds=definite".into(),
                "--error-exitcode=99".into(),
                format!("--log-file={log}"),
                exe_s,
            ],
        ),
    }
}

/// Whatever the sanitizers or valgrind wrote for `exe` (for failure messages).
pub fn reports(exe: &Path) -> String {
    let dir = exe.parent().expect("dir");
    let stem = exe.file_name().expect("name").to_string_lossy().to_string();
    let mut out = String::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!("{stem}.log")) {
                out.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    out
}

/// Remove old reports before a run.
pub fn clear_reports(exe: &Path) {
    let dir = exe.parent().expect("dir");
    let stem = exe.file_name().expect("name").to_string_lossy().to_string();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{stem}.log"))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// Serializes the C programs of one test binary: sanitizer and valgrind runs of several programs at
/// once starve each other on a 2-core machine. Each test holds the guard for its whole run, so the
/// suite can share one `cargo test --workspace` invocation (and one dependency build) with the rest.
pub async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// A C example server on Streamable HTTP (`echo_server --http 127.0.0.1:0 …`): it prints
/// `port=N` on stdout first and serves until its stdin closes.
pub struct HttpExample {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    pub port: u16,
}

impl HttpExample {
    /// Run `exe` as `variant` runs it, with `args`; waits up to `wait` for the port line.
    pub async fn spawn(exe: &Path, variant: Variant, args: &[&str], wait: Duration) -> Self {
        use tokio::io::AsyncBufReadExt;
        clear_reports(exe);
        let (prog, mut argv) = command(exe, variant);
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        let mut child = tokio::process::Command::new(prog)
            .args(argv)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the C example server");
        let stdin = child.stdin.take();
        let out = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(out).lines();
        let line = tokio::time::timeout(wait, lines.next_line())
            .await
            .expect("the C server printed its port in time")
            .expect("read")
            .expect("a port line");
        let port = line
            .strip_prefix("port=")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected line {line:?}"));
        assert_ne!(port, 0);
        Self { child, stdin, port }
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    /// Close stdin (the example's signal to stop) and require a clean exit within `wait`.
    pub async fn stop(mut self, exe: &Path, variant: Variant, wait: Duration) {
        drop(self.stdin.take());
        let status = tokio::time::timeout(wait, self.child.wait())
            .await
            .expect("the C server exits after EOF")
            .expect("wait");
        assert!(status.success(), "{variant:?}: {status}\n{}", reports(exe));
    }
}
