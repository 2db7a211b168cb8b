//! `demo-client`: spawns `demo-server` and talks to it with mcpcore's client in both eras over
//! stdio — the legacy `initialize` handshake, then the modern (2026-07-28) stateless era found by
//! the automatic `server/discover` probe — printing what each call returns.
//!
//! `demo-client PROGRAM [ARGS…]` spawns PROGRAM instead (each `{era}` in ARGS reads `legacy`, then
//! `modern`); the wire tests use it to put a recording tap between the client and `demo-server`.

use mcpcore::client::{CallOptions, Client, ClientError, ConnectMode, StderrMode, StdioCommand};
use serde_json::json;
use std::path::{Path, PathBuf};

fn server_cmd(exe: &Path, args: &[String], era: &str) -> StdioCommand {
    let args: Vec<String> = args.iter().map(|a| a.replace("{era}", era)).collect();
    StdioCommand::new(exe).args(args).stderr(StderrMode::Null)
}

fn text(block: &serde_json::Value) -> &str {
    block["text"].as_str().unwrap_or_default()
}

async fn tour(client: &Client) -> Result<(), ClientError> {
    let info = client.server_implementation();
    println!(
        "   era {}, protocol {}, server {} {}",
        client
            .era()
            .map_or_else(|| "?".to_owned(), |e| format!("{e:?}")),
        client.protocol_version().unwrap_or_default(),
        info.as_ref().map_or("?", |i| i.name.as_str()),
        info.as_ref().map_or("?", |i| i.version.as_str()),
    );
    if let Some(i) = client.instructions() {
        println!("   instructions: {i}");
    }
    let tools = client.list_all_tools().await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("   tools: {}", names.join(", "));
    let r = client.call_tool("echo", json!({"text": "hello"})).await?;
    println!("   echo → {}", text(&r.content[0]));
    let r = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    println!(
        "   add 2 + 3 → {}",
        r.structured_content.unwrap_or_default()["sum"]
    );
    let opts = CallOptions::new().on_progress(|p, t, _m| {
        println!("     progress {p}/{}", t.unwrap_or_default());
    });
    let r = client
        .call_tool_with("slow", json!({"ms": 80}), opts)
        .await?;
    println!("   slow → {}", text(&r.content[0]));
    let p = client.get_prompt("greet", json!({"name": "Ada"})).await?;
    println!("   greet → {}", text(&p.messages[0]["content"]));
    let rr = client.read_resource("demo://notes/7").await?;
    println!("   demo://notes/7 → {}", text(&rr.contents[0]));
    let c = client
        .complete(
            json!({"type": "ref/prompt", "name": "greet"}),
            "name",
            "a",
            None,
        )
        .await?;
    println!("   complete \"a\" → {:?}", c.values);
    match client.call_tool("fail", json!({})).await {
        Err(e) => println!("   fail → {e}"),
        Ok(r) => println!("   fail → {:?}", r.content),
    }
    Ok(())
}

/// The `demo-server` binary next to this one. `cargo run --bin demo-client` builds only this
/// binary, so on a fresh clone the server is built here first (same profile and target dir),
/// which keeps the README's demo a single command.
fn demo_server() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let me = std::env::current_exe()?;
    let exe = me.with_file_name(format!("demo-server{}", std::env::consts::EXE_SUFFIX));
    if exe.exists() {
        return Ok(exe);
    }
    let target_dir = me
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    eprintln!("building demo-server ...");
    let mut build = std::process::Command::new(cargo);
    build
        .args(["build", "-q", "--bin", "demo-server", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target_dir);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    if !build.status()?.success() || !exe.exists() {
        return Err(format!("could not build {}", exe.display()).into());
    }
    Ok(exe)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args_os().skip(1);
    let (exe, args) = match argv.next() {
        Some(program) => (
            PathBuf::from(program),
            argv.map(|a| a.to_string_lossy().into_owned()).collect(),
        ),
        None => (demo_server()?, Vec::new()),
    };

    println!("== legacy era (initialize handshake)");
    let client = Client::builder()
        .mode(ConnectMode::Legacy)
        .connect_stdio(server_cmd(&exe, &args, "legacy"))
        .await?;
    tour(&client).await?;
    client.close().await;

    println!("\n== modern era (automatic server/discover probe, per-request envelope)");
    let client = Client::builder()
        .connect_stdio(server_cmd(&exe, &args, "modern"))
        .await?;
    tour(&client).await?;
    client.close().await;

    println!("\ndemo finished: both eras answered");
    Ok(())
}
