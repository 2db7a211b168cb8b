//! `client-bench`: sequential `tools/call`s of an `echo {text}` tool made by mcpcore's Rust
//! client, over stdio (the client spawns the server) or Streamable HTTP. `scripts/bench-client.sh`
//! runs it in turn with the same driver written against rmcp's client (generated outside the
//! repository) and prints the ratio. Every answer is checked (the echoed text comes back), so a
//! client that skips work cannot look fast. A benchmark, not a test: nothing here asserts a speed.
//!
//! Output: one line `BENCH calls_per_s=… p50_us=… p99_us=… era=…` on stdout.

use mcpcore::client::{Client, ConnectMode, HttpClientOptions, StderrMode, StdioCommand};
use serde_json::json;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: client-bench [--mode legacy|modern] [--calls N] [--warmup N] (--http URL | --stdio PROGRAM [ARGS...])";

struct Opts {
    mode: ConnectMode,
    calls: usize,
    warmup: usize,
    http: Option<String>,
    stdio: Vec<String>,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        mode: ConnectMode::Legacy,
        calls: 20_000,
        warmup: 2_000,
        http: None,
        stdio: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--mode" => {
                o.mode = match value()?.as_str() {
                    "legacy" => ConnectMode::Legacy,
                    "modern" => ConnectMode::Modern,
                    m => return Err(format!("unknown mode {m}")),
                }
            }
            "--calls" => o.calls = value()?.parse().map_err(|e| format!("--calls: {e}"))?,
            "--warmup" => o.warmup = value()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--http" => o.http = Some(value()?),
            "--stdio" => {
                o.stdio = args.by_ref().collect();
                break;
            }
            _ => return Err(format!("unknown argument {a}")),
        }
    }
    if o.http.is_none() == o.stdio.is_empty() || o.calls == 0 {
        return Err("give exactly one of --http and --stdio, and --calls > 0".into());
    }
    Ok(o)
}

async fn connect(o: &Opts) -> Result<Client, String> {
    let builder = Client::builder().mode(o.mode);
    let client = match &o.http {
        Some(url) => builder
            .connect_http(url, HttpClientOptions::default())
            .await
            .map_err(|e| format!("connect {url}: {e}"))?,
        None => {
            let cmd = StdioCommand::new(&o.stdio[0])
                .args(&o.stdio[1..])
                .stderr(StderrMode::Null);
            builder
                .connect_stdio(cmd)
                .await
                .map_err(|e| format!("spawn {}: {e}", o.stdio[0]))?
        }
    };
    Ok(client)
}

/// One checked call: the server must echo `text` back as the first content block.
async fn call(client: &Client, text: &str) -> Result<(), String> {
    let r = client
        .call_tool("echo", json!({ "text": text }))
        .await
        .map_err(|e| format!("tools/call: {e}"))?;
    let got = r.content.first().and_then(|b| b["text"].as_str());
    if got != Some(text) || r.is_error == Some(true) {
        return Err(format!("unexpected answer {:?}", r.content));
    }
    Ok(())
}

async fn run(o: Opts) -> Result<String, String> {
    let client = connect(&o).await?;
    let era = format!("{:?}", client.era().ok_or("no era negotiated")?).to_lowercase();
    for i in 0..o.warmup {
        call(&client, &format!("warm {i}")).await?;
    }
    let mut lat = Vec::with_capacity(o.calls);
    let start = Instant::now();
    for i in 0..o.calls {
        let t = Instant::now();
        call(&client, &format!("hello {i}")).await?;
        lat.push(t.elapsed());
    }
    let total = start.elapsed();
    client.close().await;
    lat.sort_unstable();
    let pct = |p: usize| lat[(lat.len() * p / 100).min(lat.len() - 1)];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok(format!(
        "BENCH calls_per_s={:.0} p50_us={:.1} p99_us={:.1} era={era}",
        o.calls as f64 / total.as_secs_f64(),
        us(pct(50)),
        us(pct(99)),
    ))
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("client-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // A current-thread runtime: the sequential loop has one thing to do at a time, and rmcp's
    // driver in the same script is built alike.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("client-bench: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(opts)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("client-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
