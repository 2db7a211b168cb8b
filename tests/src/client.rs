//! Helpers for client wire tests: run a server behind `tap` and validate every message the
//! client exchanged against the official schema of its era.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::schema::{validate_def, validate_message, Era};

/// A tap log for one test.
pub struct TapLog {
    /// Where the log is written.
    pub path: PathBuf,
}

impl TapLog {
    /// A fresh log path.
    pub fn new(name: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcpcore-tap-{}-{name}-{}.log",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        Self { path }
    }

    /// `(direction, message)` pairs; `'C'` = client→server, `'S'` = server→client.
    pub fn messages(&self) -> Vec<(char, Value)> {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let (d, rest) = l.split_at_checked(2)?;
                let v = serde_json::from_str(rest).ok()?;
                Some((d.chars().next()?, v))
            })
            .collect()
    }

    /// Client→server requests with this method.
    pub fn client_requests(&self, method: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|(d, m)| *d == 'C' && m.get("id").is_some() && m["method"] == method)
            .map(|(_, m)| m)
            .collect()
    }

    /// Validate every message in the log against `era`'s schema: the JSON-RPC envelope of
    /// everything, standard client requests and notifications against `ClientRequest` /
    /// `ClientNotification`, server results against the result type of the method asked, and
    /// client answers to server requests against their result types.
    pub fn validate(&self, era: Era) {
        let mut asked: HashMap<String, String> = HashMap::new();
        let mut server_asked: HashMap<String, String> = HashMap::new();
        for (dir, msg) in self.messages() {
            let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
            let id = msg.get("id").map(Value::to_string);
            match dir {
                'C' => {
                    if let Err(e) = validate_def(era, "JSONRPCMessage", &msg) {
                        panic!("client sent an invalid message ({era:?}) {msg}: {e}");
                    }
                    match (&method, &id) {
                        (Some(m), Some(id)) => {
                            asked.insert(id.clone(), m.clone());
                            if is_standard(era, m) {
                                if let Err(e) = validate_def(era, "ClientRequest", &msg) {
                                    panic!(
                                        "client request not a ClientRequest ({era:?}) {msg}: {e}"
                                    );
                                }
                            }
                        }
                        (Some(m), None) if is_standard(era, m) => {
                            if let Err(e) = validate_def(era, "ClientNotification", &msg) {
                                panic!("client notification invalid ({era:?}) {msg}: {e}");
                            }
                        }
                        (None, Some(id)) => {
                            let def = match server_asked.get(id).map(String::as_str) {
                                Some("sampling/createMessage") => Some("CreateMessageResult"),
                                Some("elicitation/create") => Some("ElicitResult"),
                                Some("roots/list") => Some("ListRootsResult"),
                                _ => None,
                            };
                            if let (Some(d), Some(r)) = (def, msg.get("result")) {
                                if let Err(e) = validate_def(era, d, r) {
                                    panic!("client answer is not a {d} ({era:?}) {msg}: {e}");
                                }
                            }
                        }
                        _ => {}
                    }
                }
                _ => {
                    if let (Some(m), Some(id)) = (&method, &id) {
                        server_asked.insert(id.clone(), m.clone());
                    }
                    let asked_method = if method.is_none() {
                        id.as_ref().and_then(|i| asked.get(i)).map(String::as_str)
                    } else {
                        None
                    };
                    if let Err(e) = validate_message(era, &msg, asked_method) {
                        panic!("server sent an invalid message ({era:?}) {msg}: {e}");
                    }
                }
            }
        }
    }
}

impl Drop for TapLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Methods the era's schema defines (modern `tasks/*` belong to the tasks extension, checked by
/// the task tests against REQUIREMENTS TASK-M03 instead).
fn is_standard(era: Era, m: &str) -> bool {
    !(m.starts_with("custom/")
        || m.starts_with("debug/")
        || (era == Era::Modern && m.starts_with("tasks/")))
}

/// The `tap` binary path given the test's `CARGO_BIN_EXE_tap`.
pub fn tap_args(log: &Path, server: &Path, args: &[&str]) -> Vec<String> {
    let mut v = vec![log.display().to_string(), server.display().to_string()];
    v.extend(args.iter().map(|s| (*s).to_owned()));
    v
}
