//! `mcpcore gateway CONFIG`: several upstreams (stdio commands or URLs, either era, each with
//! its own credentials) behind one endpoint. The configuration is TOML or JSON:
//!
//! ```toml
//! separator = "__"            # between an upstream's prefix and an item's name
//! [upstreams.files]
//! command = ["python", "files_server.py"]
//! env = { ROOT = "/srv" }
//! allow = ["read_*"]          # globs over the upstream's own names
//! [upstreams.search]
//! url = "https://search.example/mcp"
//! token = "…"                 # or headers = { Authorization = "Bearer …" }
//! mode = "modern"
//! deny = ["admin_*"]
//! [upstreams.search.scopes."search:admin"]   # for principals holding this OAuth scope:
//! allow = ["admin_*"]                        # shown to them although `deny` hides it
//! prefix = "web"              # default: the upstream's key; "" for none
//! per_capabilities = true     # a legacy server: one connection per client capability set
//! max_connections = 16        # … at most this many besides the main one
//! ```
//!
//! With one upstream, names are not prefixed unless `prefix` says so. An upstream that is down
//! is absent from the lists (and named in the health report) until it is back; the gateway
//! serves the others.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::connect::{Mode, Target};
use crate::hub::{Member, Naming};
use crate::lane::Policy;
use crate::upstream::Upstream;
use crate::ConnArgs;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Between an upstream's prefix and an item's name.
    #[serde(default = "default_separator")]
    separator: String,
    /// The gateway's `serverInfo.name`.
    #[serde(default)]
    name: Option<String>,
    /// The gateway's instructions to clients.
    #[serde(default)]
    instructions: Option<String>,
    upstreams: BTreeMap<String, UpstreamConfig>,
}

fn default_separator() -> String {
    "__".into()
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct UpstreamConfig {
    command: Option<Vec<String>>,
    url: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    /// More allow/deny globs for principals holding a scope (`[upstreams.X.scopes."files:write"]`).
    #[serde(default)]
    scopes: BTreeMap<String, crate::hub::Rule>,
    /// One connection per client capability set in front of a legacy server (see `lane.rs`).
    #[serde(default)]
    per_capabilities: bool,
    /// The most connections kept to it besides the main one.
    #[serde(default)]
    max_connections: Option<usize>,
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// Read `path` (TOML, or JSON when it ends in `.json` or starts with `{`). Every error names
/// the file, and the line and key where it can.
fn load(path: &str) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let json = path.ends_with(".json") || text.trim_start().starts_with('{');
    let cfg: Config = if json {
        serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?
    } else {
        toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?
    };
    if cfg.upstreams.is_empty() {
        return Err(format!("{path}: `upstreams` names no upstream"));
    }
    for (name, u) in &cfg.upstreams {
        let at = |key: &str| {
            let line = line_of(&text, key)
                .or_else(|| line_of(&text, name))
                .map(|l| format!(":{l}"))
                .unwrap_or_default();
            format!("{path}{line}: upstreams.{name}")
        };
        match (&u.command, &u.url) {
            (Some(c), None) if !c.is_empty() => {}
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {}
            (None, Some(_)) => return Err(format!("{}.url: not an http(s):// URL", at("url"))),
            (Some(_), Some(_)) => {
                return Err(format!("{}: give `command` or `url`, not both", at(name)))
            }
            _ => {
                return Err(format!(
                    "{}: needs `command` (non-empty) or `url`",
                    at(name)
                ))
            }
        }
        if let Some(m) = &u.mode {
            if !matches!(m.as_str(), "auto" | "legacy" | "modern") {
                return Err(format!(
                    "{}.mode: {m:?} is not auto, legacy or modern",
                    at("mode")
                ));
            }
        }
        if u.url.is_none() && (u.token.is_some() || !u.headers.is_empty()) {
            return Err(format!(
                "{}: `token` and `headers` are for a `url`",
                at(name)
            ));
        }
    }
    Ok(cfg)
}

/// Start every upstream of `path`'s configuration (those that cannot start yet are retried in
/// the background): the gateway's identity, instructions and members.
pub(crate) async fn members(
    path: &str,
    base: &ConnArgs,
) -> Result<((String, String), Option<String>, Vec<Arc<Member>>), String> {
    let cfg = load(path)?;
    let one = cfg.upstreams.len() == 1;
    let mut out = Vec::new();
    for (name, u) in cfg.upstreams {
        let mut c = base.clone();
        c.mode = u.mode.as_deref().map(|m| match m {
            "legacy" => Mode::Legacy,
            "modern" => Mode::Modern,
            _ => Mode::Auto,
        });
        c.headers = u.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        c.token = u.token.clone();
        c.env = u.env.into_iter().collect();
        let target = match (u.command, u.url) {
            (Some(cmd), _) => Target::Stdio(cmd),
            (None, Some(url)) => Target::Http(url),
            (None, None) => continue,
        };
        let mut policy = Policy {
            per_capabilities: u.per_capabilities,
            ..Policy::default()
        };
        if let Some(n) = u.max_connections {
            policy.max = n;
        }
        let up = Upstream::start(target, c, false, policy)
            .await
            .map_err(|e| format!("upstreams.{name}: {e}"))?;
        let prefix = match u.prefix {
            Some(p) if p.is_empty() => None,
            Some(p) => Some(p),
            None if one => None,
            None => Some(name.clone()),
        };
        let naming = Naming {
            prefix,
            separator: cfg.separator.clone(),
            allow: u.allow,
            deny: u.deny,
            scopes: u.scopes,
        };
        out.push(Member::new(name, up, naming));
    }
    let identity = (
        cfg.name.unwrap_or_else(|| "mcpcore-gateway".into()),
        env!("CARGO_PKG_VERSION").to_owned(),
    );
    Ok((identity, cfg.instructions, out))
}

/// `GET /health` on `addr`: each upstream's state; 200 when all are up, 503 otherwise.
pub(crate) async fn health(
    addr: std::net::SocketAddr,
    members: Vec<Arc<Member>>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "mcpcore: health at http://{}/health",
        listener.local_addr()?
    );
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let members = members.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let n =
                    tokio::time::timeout(std::time::Duration::from_secs(5), sock.read(&mut buf))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let ours = head.starts_with("GET /health ") || head.starts_with("GET /health?");
                let states: BTreeMap<&str, &str> = members
                    .iter()
                    .map(|m| (m.name.as_str(), if m.up.is_up() { "up" } else { "down" }))
                    .collect();
                let all_up = states.values().all(|s| *s == "up");
                let (status, body) = match (ours, all_up) {
                    (false, _) => ("404 Not Found", "{}".to_owned()),
                    (true, up) => (
                        if up { "200 OK" } else { "503 Service Unavailable" },
                        serde_json::json!({"status": if up { "up" } else { "degraded" }, "upstreams": states})
                            .to_string(),
                    ),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> String {
        let p = std::env::temp_dir().join(format!("mcpcore-gw-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    #[test]
    fn config_errors_name_the_file_line_and_key() {
        let p = write(
            "a.toml",
            "separator = \"_\"\n[upstreams.one]\ncommand = [\"x\"]\ncolour = 1\n",
        );
        let e = load(&p).unwrap_err();
        assert!(
            e.starts_with(&p) && e.contains("colour") && e.contains("line 4"),
            "{e}"
        );
        let p = write(
            "b.toml",
            "[upstreams.two]\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n",
        );
        let e = load(&p).unwrap_err();
        assert!(
            e.contains(":1: upstreams.two") && e.contains("not both"),
            "{e}"
        );
        let p = write("c.json", r#"{"upstreams": {"three": {"url": "ftp://x"}}}"#);
        let e = load(&p).unwrap_err();
        assert!(
            e.contains("upstreams.three.url") && e.contains("http(s)"),
            "{e}"
        );
        let p = write(
            "d.toml",
            "[upstreams.four]\ncommand = [\"x\"]\nmode = \"new\"\n",
        );
        assert!(load(&p).unwrap_err().contains(":3: upstreams.four.mode"));
        let p = write(
            "e.json",
            r#"{"upstreams": {"five": {"command": ["x"]}}, "extra": 1}"#,
        );
        let e = load(&p).unwrap_err();
        assert!(e.contains("extra") && e.contains("line 1"), "{e}");
        let p = write(
            "f.toml",
            "[upstreams.six]\ncommand = [\"x\"]\ntoken = \"t\"\n",
        );
        assert!(load(&p).unwrap_err().contains("for a `url`"));
        assert!(load("/nonexistent/gw.toml")
            .unwrap_err()
            .starts_with("/nonexistent/gw.toml: "));
    }

    #[test]
    fn a_good_config_reads_in_either_format() {
        let t = write(
            "g.toml",
            "[upstreams.a]\ncommand = [\"srv\", \"--x\"]\nallow = [\"get-*\"]\n[upstreams.b]\nurl = \"http://127.0.0.1:1/mcp\"\ntoken = \"t\"\n",
        );
        let c = load(&t).unwrap();
        assert_eq!(c.separator, "__");
        assert_eq!(c.upstreams["a"].allow, vec!["get-*".to_owned()]);
        let j = write(
            "h.json",
            r#"{"separator": ".", "upstreams": {"a": {"command": ["srv"]}}}"#,
        );
        assert_eq!(load(&j).unwrap().separator, ".");
    }
}
