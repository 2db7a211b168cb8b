//! `demo-client`: spawns `demo-server` and talks to it in both eras over stdio, printing each
//! exchange. A scripted line client (the full client API comes with the client issue).

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Conn {
    child: Child,
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Conn {
    fn spawn(exe: &PathBuf) -> std::io::Result<Self> {
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("no stdin"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
            next_id: 1,
        })
    }

    async fn send(&mut self, msg: &Value) -> std::io::Result<()> {
        self.stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        self.stdin.flush().await
    }

    async fn request(&mut self, method: &str, params: Value) -> std::io::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        println!("→ {req}");
        self.send(&req).await?;
        while let Some(line) = self.stdout.next_line().await? {
            let msg: Value = serde_json::from_str(&line).map_err(std::io::Error::other)?;
            println!("← {msg}");
            if msg.get("id") == Some(&json!(id)) {
                return Ok(msg);
            }
        }
        Err(std::io::Error::other("server closed the connection"))
    }

    async fn close(mut self) -> std::io::Result<()> {
        drop(self.stdin);
        self.child.wait().await.map(|_| ())
    }
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "demo-client", "version": "0.1.0"}
    })
}

fn check(resp: &Value, what: &str) -> std::io::Result<()> {
    if resp.get("result").is_some() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("{what} failed: {resp}")))
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let exe = std::env::current_exe()?
        .with_file_name(format!("demo-server{}", std::env::consts::EXE_SUFFIX));

    println!("== legacy era (initialize handshake, 2025-11-25)");
    let mut c = Conn::spawn(&exe)?;
    let r = c
        .request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo-client", "version": "0.1.0"}}),
        )
        .await?;
    check(&r, "initialize")?;
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await?;
    check(&c.request("tools/list", json!({})).await?, "tools/list")?;
    check(
        &c.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hello"}}),
        )
        .await?,
        "echo",
    )?;
    check(
        &c.request(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await?,
        "add",
    )?;
    check(
        &c.request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await?,
        "greet",
    )?;
    check(
        &c.request("resources/read", json!({"uri": "demo://notes/7"}))
            .await?,
        "read",
    )?;
    c.close().await?;

    println!("\n== modern era (2026-07-28, per-request envelope)");
    let mut c = Conn::spawn(&exe)?;
    check(
        &c.request("server/discover", json!({"_meta": modern_meta()}))
            .await?,
        "server/discover",
    )?;
    check(
        &c.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "stateless"}, "_meta": modern_meta()}),
        )
        .await?,
        "echo",
    )?;
    c.close().await?;
    println!("\ndemo finished: both eras answered");
    Ok(())
}
