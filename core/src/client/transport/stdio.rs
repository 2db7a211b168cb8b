//! The stdio client transport: spawns a server process and speaks newline-delimited JSON-RPC
//! over its stdin/stdout (REQUIREMENTS STDIO-01…04, LC-06; seeds: frame cap, non-object frames).
//!
//! Frames are capped (default 4 MiB). An over-limit frame leaves the stream beyond recovery, so
//! the transport closes (the child is killed) and every later call fails cleanly. Non-object
//! frames, id-less non-notification frames and unparsable lines are skipped. Standard error is
//! inherited, discarded, or captured into a bounded buffer (never treated as an error signal).
//! Shutdown closes stdin, waits, then terminates (SIGTERM), then kills.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex as AsyncMutex;

use super::io::Framed;
use super::{BoxFut, ClientTransport, InboundTx, OutMsg, WireState};
use crate::client::error::ClientError;

/// What happens to the child's standard error. JSON: `"inherit"`, `"null"`, `"capture"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StderrMode {
    /// Passed through to this process's stderr.
    #[default]
    Inherit,
    /// Discarded.
    Null,
    /// Captured (the last 64 KiB), readable with `Client::captured_stderr`.
    Capture,
}

/// How to start the server process.
///
/// JSON shape of the spawn options (see [`crate::options`]): `env` (`{"NAME": "value"}`, added
/// to the inherited environment), `envClear`, `cwd`, `stderr` (`"inherit"`, `"null"`,
/// `"capture"`), `closeGraceMs`, `termGraceMs`. The program and its arguments are given apart
/// (they need not be UTF-8) and a patch keeps them; a command whose environment or directory is
/// not UTF-8 cannot be patched.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct StdioCommand {
    /// Program to run.
    #[serde(skip)]
    pub program: PathBuf,
    /// Arguments.
    #[serde(skip)]
    pub args: Vec<OsString>,
    /// Extra environment variables (a later entry for the same name wins).
    #[serde(with = "env_map")]
    pub env: Vec<(OsString, OsString)>,
    /// Clear the inherited environment first.
    pub env_clear: bool,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Standard error handling.
    pub stderr: StderrMode,
    /// How long to wait for exit after closing stdin before terminating (default
    /// [`DEFAULT_CLOSE_GRACE`], 5 s).
    #[serde(rename = "closeGraceMs", with = "crate::options::millis")]
    pub close_grace: Duration,
    /// How long to wait after SIGTERM before killing (default [`DEFAULT_TERM_GRACE`], 2 s).
    #[serde(rename = "termGraceMs", with = "crate::options::millis")]
    pub term_grace: Duration,
}

impl crate::options::JsonOptions for StdioCommand {
    fn keep_unrepresented(&mut self, from: &Self) {
        self.program.clone_from(&from.program);
        self.args.clone_from(&from.args);
    }
}

/// The environment as a JSON object of UTF-8 strings. Later entries win, as they do when the
/// process is spawned, so the object means the same as the list.
mod env_map {
    use serde::de::Deserializer;
    use serde::ser::{Error, SerializeMap, Serializer};
    use serde::Deserialize;
    use std::collections::BTreeMap;
    use std::ffi::OsString;

    pub(super) fn serialize<S: Serializer>(
        env: &[(OsString, OsString)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut merged = BTreeMap::new();
        for (k, v) in env {
            let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
                return Err(S::Error::custom("an environment variable is not UTF-8"));
            };
            merged.insert(k, v);
        }
        let mut m = s.serialize_map(Some(merged.len()))?;
        for (k, v) in merged {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(OsString, OsString)>, D::Error> {
        let m = BTreeMap::<String, String>::deserialize(d)?;
        Ok(m.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

/// Default [`StdioCommand::close_grace`]: a server given EOF on stdin may let requests in flight
/// run for its shutdown grace (an mcpcore server: [`crate::Limits::shutdown_grace`], 2 s), then
/// flushes their answers and exits (LC-06 lets it finish). Waiting exactly that long would send
/// SIGTERM just before a well-behaved server is done, so the client waits 3 s more.
pub const DEFAULT_CLOSE_GRACE: Duration =
    Duration::from_secs(crate::limits::DEFAULT_SHUTDOWN_GRACE.as_secs() + 3);

/// Default [`StdioCommand::term_grace`].
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(2);

impl StdioCommand {
    /// Run `program` with no arguments.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            env_clear: false,
            cwd: None,
            stderr: StderrMode::Inherit,
            close_grace: DEFAULT_CLOSE_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
        }
    }
    /// Add an argument.
    #[must_use]
    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }
    /// Add arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
    /// Set an environment variable.
    #[must_use]
    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
    /// Set the working directory.
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }
    /// Set the stderr mode.
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }
}

const STDERR_CAP: usize = 64 * 1024;

pub(crate) struct StdioTransport {
    io: Framed,
    child: AsyncMutex<Option<Child>>,
    pid: Option<u32>,
    stderr_buf: Option<Arc<Mutex<VecDeque<u8>>>>,
    close_grace: Duration,
    term_grace: Duration,
}

impl StdioTransport {
    /// Spawn the process and start reading its stdout into `inbound`.
    pub fn spawn(
        cmd: &StdioCommand,
        max_bytes: usize,
        max_depth: usize,
        inbound: InboundTx,
    ) -> Result<Arc<Self>, ClientError> {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if cmd.env_clear {
            c.env_clear();
        }
        for (k, v) in &cmd.env {
            c.env(k, v);
        }
        if let Some(d) = &cmd.cwd {
            c.current_dir(d);
        }
        c.stderr(match cmd.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Null => Stdio::null(),
            StderrMode::Capture => Stdio::piped(),
        });
        let mut child = c.spawn().map_err(|e| {
            ClientError::Transport(format!("cannot spawn {}: {e}", cmd.program.display()))
        })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| ClientError::Transport("child has no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| ClientError::Transport("child has no stdout".into()))?;
        let stderr_buf = match child.stderr.take() {
            Some(err) => {
                let buf = Arc::new(Mutex::new(VecDeque::new()));
                let b = buf.clone();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(err).split(b'\n');
                    while let Ok(Some(mut line)) = lines.next_segment().await {
                        line.push(b'\n');
                        let mut q = b.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        q.extend(line);
                        while q.len() > STDERR_CAP {
                            q.pop_front();
                        }
                    }
                });
                Some(buf)
            }
            None => None,
        };
        let pid = child.id();
        let io = Framed::start(stdout, Box::new(stdin), max_bytes, max_depth, inbound)?;
        Ok(Arc::new(Self {
            io,
            child: AsyncMutex::new(Some(child)),
            pid,
            stderr_buf,
            close_grace: cmd.close_grace,
            term_grace: cmd.term_grace,
        }))
    }

    async fn shutdown(&self) {
        self.io.close_writer().await;
        let child = self.child.lock().await.take();
        if let Some(mut child) = child {
            if tokio::time::timeout(self.close_grace, child.wait())
                .await
                .is_err()
            {
                terminate(self.pid);
                if tokio::time::timeout(self.term_grace, child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.start_kill();
                    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
                }
            }
        }
        self.io.stop_reader();
    }
}

#[cfg(unix)]
fn terminate(pid: Option<u32>) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    if let Some(p) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
    }
}

#[cfg(not(unix))]
fn terminate(_pid: Option<u32>) {}

impl ClientTransport for StdioTransport {
    fn send(&self, msg: OutMsg) -> BoxFut<'_, Result<(), ClientError>> {
        Box::pin(self.io.send(msg))
    }

    fn cancel_by_notification(&self, _state: &WireState) -> bool {
        true
    }

    fn close(&self) -> BoxFut<'_, ()> {
        Box::pin(self.shutdown())
    }

    fn captured_stderr(&self) -> Option<String> {
        self.stderr_buf.as_ref().map(|b| {
            let q = b.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            String::from_utf8_lossy(&q.iter().copied().collect::<Vec<u8>>()).into_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{apply_json, OptionsError};
    use serde_json::json;

    /// The spawn keys the C header documents apply; program and arguments survive a patch;
    /// unknown keys and bad values are refused.
    #[test]
    fn spawn_options_json_shape() {
        let mut c = StdioCommand::new("srv").arg("--x").env("A", "1");
        apply_json(
            &mut c,
            &json!({"env": {"B": "2"}, "envClear": true, "cwd": "/tmp", "stderr": "capture",
                "closeGraceMs": 10, "termGraceMs": 20}),
        )
        .expect("applies");
        assert_eq!(c.program, PathBuf::from("srv"));
        assert_eq!(c.args, vec![OsString::from("--x")]);
        assert_eq!(c.env, vec![(OsString::from("B"), OsString::from("2"))]);
        assert!(c.env_clear);
        assert_eq!(c.cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(c.stderr, StderrMode::Capture);
        assert_eq!(
            (c.close_grace, c.term_grace),
            (Duration::from_millis(10), Duration::from_millis(20))
        );
        let all = serde_json::to_value(&c).expect("serialize");
        let mut again = StdioCommand::new("other");
        apply_json(&mut again, &all).expect("the full shape applies");
        assert_eq!(serde_json::to_value(&again).expect("serialize"), all);
        assert_eq!(again.program, PathBuf::from("other"));
        apply_json(&mut c, &json!({"stderr": "null"})).expect("applies");
        assert_eq!(c.env.len(), 1, "a patch keeps what it does not name");
        for (bad, shape) in [
            (json!({"program": "x"}), true),
            (json!({"args": []}), true),
            (json!({"cwd": 1}), true),
            (json!({"env": {"A": 1}}), true),
            (json!({"stderr": "x"}), false),
        ] {
            let e = apply_json(&mut c, &bad).expect_err("refused");
            assert_eq!(matches!(e, OptionsError::Shape(_)), shape, "{bad}: {e}");
        }
    }

    /// Repeated names collapse to the last value, as spawning does.
    #[test]
    fn later_environment_entries_win() {
        let c = StdioCommand::new("srv").env("A", "1").env("A", "2");
        assert_eq!(
            serde_json::to_value(&c).expect("serialize")["env"],
            json!({"A": "2"})
        );
    }
}
