//! Setup of the TypeScript SDK interop test (`tests/client_interop_ts.rs`): finds Node, installs
//! pinned releases of the official TypeScript SDK from npm into a cache under `$HOME` (never
//! inside the repository), and writes the TS fixture server (`tests/interop/ts-server.mjs`) next
//! to them.
//!
//! The installation is keyed by the pinned package list: a finished install lives in
//! `~/.cache/mcpcore/ts-interop/<key>/` and is reused; a new one is staged in a private
//! directory and renamed into place, so concurrent test processes never see half an install.
//! Every external step is bounded (`npm install` by [`NPM_TIMEOUT`]).
//!
//! When Node/npm are missing or the registry is unreachable the interop tests skip (print why and
//! pass) — unless `MCPCORE_REQUIRE_INTEROP=1`, which turns a skip into a failure (CI sets it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `@modelcontextprotocol/sdk`: the v1 line (legacy era only).
pub const SDK_V1: &str = "1.32.2";
/// `@modelcontextprotocol/server`: the v2 line (modern 2026-07-28 and legacy from one factory).
pub const SERVER_V2: &str = "2.4.0";
/// `zod`, the schema library both SDK lines take tool schemas in.
pub const ZOD: &str = "4.6.7";
/// Node used when the local one is older than the SDKs need (installed from npm like the
/// conformance runner does).
const NODE_PIN: &str = "22.23.5";
/// Bound of one `npm install`.
pub const NPM_TIMEOUT: Duration = Duration::from_secs(300);
/// The oldest Node major the v2 SDK supports (`engines.node`).
const MIN_NODE_MAJOR: u32 = 20;

const SCRIPT: &str = include_str!("../interop/ts-server.mjs");

/// A ready interop environment.
#[derive(Debug)]
pub struct TsEnv {
    /// The `node` binary.
    pub node: PathBuf,
    /// The fixture server script (inside the install, so it resolves the SDK packages).
    pub script: PathBuf,
}

impl TsEnv {
    /// `node ts-server.mjs <sdk> <transport>` as program + arguments.
    pub fn command(&self, sdk: &str, transport: &str) -> (PathBuf, Vec<String>) {
        (
            self.node.clone(),
            vec![
                self.script.display().to_string(),
                sdk.to_owned(),
                transport.to_owned(),
            ],
        )
    }
}

/// True when the environment demands the interop test run (`MCPCORE_REQUIRE_INTEROP=1`).
pub fn required() -> bool {
    std::env::var("MCPCORE_REQUIRE_INTEROP").is_ok_and(|v| v == "1")
}

/// The interop environment, set up once per test process; `None` = skip (the reason is
/// printed). Panics instead of skipping when [`required`].
pub fn ts_env() -> Option<&'static TsEnv> {
    static ENV: OnceLock<Result<TsEnv, String>> = OnceLock::new();
    match ENV.get_or_init(setup) {
        Ok(env) => Some(env),
        Err(why) => {
            assert!(
                !required(),
                "TypeScript interop is required (MCPCORE_REQUIRE_INTEROP=1) but unavailable: {why}"
            );
            eprintln!("SKIPPED: TypeScript SDK interop unavailable: {why}");
            None
        }
    }
}

fn setup() -> Result<TsEnv, String> {
    let npm = which("npm").ok_or("npm is not installed")?;
    let local_node = which("node").ok_or("node is not installed")?;
    let root = match std::env::var_os("MCPCORE_TS_INTEROP_DIR") {
        Some(d) => PathBuf::from(d),
        None => home()?.join(".cache/mcpcore/ts-interop"),
    };
    std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let node = match node_major(&local_node) {
        Some(m) if m >= MIN_NODE_MAJOR => local_node,
        found => {
            eprintln!("interop: local node major {found:?} < {MIN_NODE_MAJOR}; using node {NODE_PIN} from npm");
            newer_node(&npm, &root)?
        }
    };
    let pkg = format!(
        r#"{{"name":"mcpcore-ts-interop","private":true,"version":"0.0.0","type":"module","dependencies":{{"@modelcontextprotocol/sdk":"{SDK_V1}","@modelcontextprotocol/server":"{SERVER_V2}","zod":"{ZOD}"}}}}"#
    );
    let dir = root.join(format!("sdk-{SDK_V1}-server-{SERVER_V2}-zod-{ZOD}"));
    let ready = |d: &Path| {
        d.join("node_modules/@modelcontextprotocol/server/package.json")
            .exists()
            && d.join("node_modules/@modelcontextprotocol/sdk/package.json")
                .exists()
    };
    if !ready(&dir) {
        eprintln!(
            "interop: installing the TypeScript SDK from npm into {}",
            dir.display()
        );
        if dir.exists() {
            // Damaged (finished installs are renamed into place whole): start afresh.
            let _ = std::fs::remove_dir_all(&dir);
        }
        let staging = stage(&root)?;
        std::fs::write(staging.join("package.json"), &pkg)
            .map_err(|e| format!("cannot write package.json: {e}"))?;
        let r = npm_install(&npm, &staging, &[]);
        if let Err(e) = r {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        if std::fs::rename(&staging, &dir).is_err() {
            // Another process finished first; use its install.
            let _ = std::fs::remove_dir_all(&staging);
        }
        if !ready(&dir) {
            return Err(format!("the install in {} is incomplete", dir.display()));
        }
    }
    // The script goes next to node_modules so its imports resolve; written atomically.
    let script = dir.join("ts-server.mjs");
    let tmp = dir.join(format!(".ts-server-{}.mjs", std::process::id()));
    std::fs::write(&tmp, SCRIPT).map_err(|e| format!("cannot write the TS server: {e}"))?;
    std::fs::rename(&tmp, &script).map_err(|e| format!("cannot place the TS server: {e}"))?;
    Ok(TsEnv { node, script })
}

/// `node_modules/<name>/<entry>` of npm package `name@version`, installed once into
/// `~/.cache/mcpcore/npm/<name>@<version>/` (staged, then renamed into place whole) and reused.
/// A peer a test cannot do without: a missing npm or an unreachable registry fails the test.
pub fn npm_package(name: &str, version: &str, entry: &str) -> PathBuf {
    let installed = || -> Result<PathBuf, String> {
        let npm = which("npm").ok_or("npm is not installed")?;
        let root = home()?.join(".cache/mcpcore/npm");
        std::fs::create_dir_all(&root)
            .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        let dir = root.join(format!("{}@{version}", name.replace('/', "+")));
        let file = dir.join("node_modules").join(name).join(entry);
        if !file.exists() {
            let staging = stage(&root)?;
            std::fs::write(staging.join("package.json"), r#"{"private":true}"#)
                .map_err(|e| format!("cannot write package.json: {e}"))?;
            if let Err(e) = npm_install(&npm, &staging, &[&format!("{name}@{version}")]) {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(e);
            }
            let _ = std::fs::remove_dir_all(&dir);
            if std::fs::rename(&staging, &dir).is_err() {
                let _ = std::fs::remove_dir_all(&staging);
            }
        }
        file.exists()
            .then_some(file)
            .ok_or_else(|| format!("{name}@{version} has no {entry}"))
    };
    installed().unwrap_or_else(|e| panic!("cannot install {name}@{version} from npm: {e}"))
}

/// A Node new enough for the SDKs, installed from npm (`node-<os>-<arch>`) into the cache.
fn newer_node(npm: &Path, root: &Path) -> Result<PathBuf, String> {
    let (os, arch) = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("linux", "x64"),
        ("linux", "aarch64") => ("linux", "arm64"),
        ("macos", "x86_64") => ("darwin", "x64"),
        ("macos", "aarch64") => ("darwin", "arm64"),
        (o, a) => return Err(format!("no Node {NODE_PIN} package for {o}/{a}")),
    };
    let name = format!("node-{os}-{arch}");
    let dir = root.join(format!("{name}-{NODE_PIN}"));
    let bin = dir.join(format!("node_modules/{name}/bin/node"));
    if !bin.exists() {
        let staging = stage(root)?;
        let r = npm_install(npm, &staging, &[&format!("{name}@{NODE_PIN}")]);
        if let Err(e) = r {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        if std::fs::rename(&staging, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&staging);
        }
    }
    match node_major(&bin) {
        Some(m) if m >= MIN_NODE_MAJOR => Ok(bin),
        _ => Err(format!("the Node at {} does not run", bin.display())),
    }
}

fn stage(root: &Path) -> Result<PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let staging = root.join(format!(".staging-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&staging)
        .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
    Ok(staging)
}

/// `npm install` in `dir` (no audit, no funding message, no install scripts), bounded by
/// [`NPM_TIMEOUT`]; an unreachable registry fails within the bound.
fn npm_install(npm: &Path, dir: &Path, packages: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new(npm);
    cmd.args([
        "install",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--no-package-lock",
        "--loglevel=error",
        "--fetch-retries=1",
        "--fetch-timeout=60000",
    ])
    .args(packages)
    .current_dir(dir)
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let (ok, _, err) = run_bounded(cmd, NPM_TIMEOUT)?;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "npm install failed (registry unreachable?): {}",
            err.trim()
        ))
    }
}

/// Run `cmd` (stdout and stderr piped) to completion within `limit` (killed beyond it):
/// `(success, stdout, stderr)`.
fn run_bounded(mut cmd: Command, limit: Duration) -> Result<(bool, String, String), String> {
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{cmd:?} did not finish within {limit:?}"));
            }
            Err(e) => return Err(format!("waiting for {cmd:?}: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Ok((status.success(), out, err))
}

fn node_major(node: &Path) -> Option<u32> {
    let mut cmd = Command::new(node);
    cmd.args(["-p", "process.versions.node.split('.')[0]"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let (ok, out, _) = run_bounded(cmd, Duration::from_secs(30)).ok()?;
    if !ok {
        return None;
    }
    out.trim().parse().ok()
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_owned())
}
