//! A real `redis-server` for the backplane tests, on 127.0.0.1 and a free port, without
//! persistence. The test command installs the Debian package; a missing binary fails the test
//! (it never skips).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The request-state key every worker of a test deployment shares (`[ID:]BASE64`, as
/// `--request-state-key` and `MCPCORE_REQUEST_STATE_KEY` take it): a Redis-backed server needs
/// one, none is kept in Redis.
pub const TEST_KEY: &str = "k1:KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=";

/// A key ring of one key, 32 times `byte`, named `k<byte>`.
pub fn keys(byte: u8) -> mcpcore::security::KeyRing {
    let key = mcpcore::security::SealKey::new(format!("k{byte}"), [byte; 32]).expect("key");
    mcpcore::security::KeyRing::new(key)
}

/// The ring of [`TEST_KEY`] (byte 42), for in-process workers of one deployment.
pub fn test_keys() -> mcpcore::security::KeyRing {
    let key = mcpcore::security::SealKey::new("k1", [42; 32]).expect("key");
    mcpcore::security::KeyRing::new(key)
}

/// A running `redis-server`, killed on drop.
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

impl RedisServer {
    /// Start a server and wait until it answers. The free port is picked before the server binds
    /// it, so another process may take it in between: then the server exits (or another one
    /// answers on that port, which the pid check catches) and a new port is tried.
    pub fn start() -> Self {
        for _ in 0..5 {
            let port = free_port();
            let dir =
                std::env::temp_dir().join(format!("mcpcore-redis-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("redis dir");
            let mut s = Self {
                port,
                dir,
                child: None,
            };
            if s.spawn() {
                return s;
            }
        }
        panic!("redis-server did not start on any of 5 free ports");
    }

    fn spawn(&mut self) -> bool {
        let bin = std::env::var("MCPCORE_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        let child = Command::new(&bin)
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{bin} is required (apt-get install redis-server; scripts/test.sh does): {e}"
                )
            });
        self.child = Some(child);
        let ready = self.wait_ready();
        if !ready {
            self.stop();
        }
        ready
    }

    /// True once *this* child answers on the port (its `process_id` in `INFO server`); false
    /// when it exited (the port was taken) or stayed silent for 10 s.
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        let Some(child) = self.child.as_mut() else {
            return false;
        };
        let pid = format!("process_id:{}", child.id());
        while Instant::now() < deadline {
            if !matches!(child.try_wait(), Ok(None)) {
                return false;
            }
            if let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
                let mut buf = [0u8; 8192];
                if c.write_all(b"INFO server\r\n").is_ok() {
                    let mut got = Vec::new();
                    while let Ok(n @ 1..) = c.read(&mut buf) {
                        got.extend_from_slice(&buf[..n]);
                        if pid_line_complete(&got) {
                            break;
                        }
                    }
                    let text = String::from_utf8_lossy(&got);
                    if text.lines().any(|l| l.trim_end() == pid) {
                        return true;
                    }
                    if text.contains("process_id:") {
                        return false;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// `redis://127.0.0.1:PORT/DB`.
    pub fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kill the server (its data is gone: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start it again on the same port, empty.
    pub fn restart(&mut self) {
        self.stop();
        assert!(
            self.spawn(),
            "redis-server did not restart on port {}",
            self.port
        );
    }
}

/// Whether the `process_id:` line of an `INFO` reply has arrived whole.
fn pid_line_complete(got: &[u8]) -> bool {
    let text = String::from_utf8_lossy(got);
    text.split_once("process_id:")
        .is_some_and(|(_, rest)| rest.contains('\n'))
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `n` in-process HTTP servers (the test fixture's tools) sharing the Redis at `url` under
/// `prefix`, each on its own 127.0.0.1 port, with short sweep and poll periods so cross-worker
/// effects show within a test's patience.
pub async fn workers(
    n: usize,
    url: &str,
    prefix: &str,
    max_sessions: usize,
) -> Vec<crate::fixture::Fixture> {
    let mut out = Vec::new();
    for _ in 0..n {
        let mut opts = mcpcore::transport::http::HttpOptions::default();
        opts.legacy_stores.sweep = Duration::from_millis(100);
        opts.legacy_stores.poll = Duration::from_millis(20);
        opts.max_sessions = max_sessions;
        let bp = mcpcore::backplane::Backplane::redis(url)
            .expect("redis url")
            .with_prefix(prefix);
        let f =
            crate::fixture::Fixture::with_server_options(mcpcore::Limits::default(), opts, |o| {
                o.backplane = bp;
                o.request_state.keys = Some(test_keys());
            })
            .await;
        out.push(f);
    }
    out
}
