//! `stdio-bench`: a load driver for MCP servers speaking newline-delimited JSON-RPC on stdio.
//!
//! It spawns each server, performs the legacy `initialize` handshake and measures `tools/call`
//! of an `echo {text}` tool, sequentially and pipelined (see `run.rs`). Servers are measured in
//! interleaved rounds (A, B, A, B, …) so background load hits them alike; the report gives each
//! server's median and the ratio of the first server to each other one. Pinning to cores is left
//! to the caller (`scripts/bench-stdio.sh` wraps the driver and the servers in `taskset`).
//! This is a benchmark, not a test: nothing here asserts a speed.

mod run;

use run::{Figures, Plan};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\
usage: stdio-bench [options] --server NAME=COMMAND [--server NAME=COMMAND ...]

COMMAND is split on whitespace (e.g. \"mcpcore=taskset -c 1 target/release/demo-server\").
The first server is compared against each of the others.

options:
  --rounds R        measured rounds per server, interleaved (default 3)
  --warmup N        sequential calls before measuring (default 5000)
  --seq N           calls in the sequential phase (default 50000)
  --pipe N          calls in the pipelined phase (default 200000)
  --window W        calls in flight in the pipelined phase, 1..=256 (default 256)
  --timeout-secs S  budget for one run of one server; overrun kills it (default 120)";

struct Opts {
    servers: Vec<(String, Vec<String>)>,
    rounds: usize,
    plan: Plan,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        servers: Vec::new(),
        rounds: 3,
        plan: Plan {
            warmup: 5_000,
            seq: 50_000,
            pipe: 200_000,
            window: 256,
            timeout: Duration::from_secs(120),
        },
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "-h" || a == "--help" {
            return Err(String::new());
        }
        let v = args.next().ok_or_else(|| format!("{a} needs a value"))?;
        let num = || {
            v.parse::<u64>()
                .map_err(|_| format!("{a}: not a number: {v}"))
        };
        match a.as_str() {
            "--server" => {
                let (name, cmd) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--server wants NAME=COMMAND, got {v}"))?;
                let cmd: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
                if name.is_empty() || cmd.is_empty() {
                    return Err(format!("--server wants NAME=COMMAND, got {v}"));
                }
                o.servers.push((name.to_owned(), cmd));
            }
            "--rounds" => o.rounds = usize::try_from(num()?).map_err(|e| e.to_string())?,
            "--warmup" => o.plan.warmup = num()?,
            "--seq" => o.plan.seq = num()?,
            "--pipe" => o.plan.pipe = num()?,
            "--window" => o.plan.window = num()?,
            "--timeout-secs" => o.plan.timeout = Duration::from_secs(num()?),
            _ => return Err(format!("unknown option {a}")),
        }
    }
    if o.servers.is_empty() {
        return Err("at least one --server is required".into());
    }
    if !(1..=256).contains(&o.plan.window) {
        return Err(
            "--window must be 1..=256 (keeps both pipes below their 64 KiB capacity)".into(),
        );
    }
    if o.rounds == 0 || o.plan.seq == 0 || o.plan.pipe == 0 {
        return Err("--rounds, --seq and --pipe must be positive".into());
    }
    Ok(o)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("stdio-bench: {e}\n");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let p = &opts.plan;
    println!(
        "tools/call echo over stdio: {} warm-up, {} sequential, {} pipelined (window {}), {} round(s)",
        p.warmup, p.seq, p.pipe, p.window, opts.rounds
    );
    let mut results: Vec<Vec<Figures>> = vec![Vec::new(); opts.servers.len()];
    for round in 1..=opts.rounds {
        for (i, (name, cmd)) in opts.servers.iter().enumerate() {
            match run::run(cmd, p) {
                Ok(f) => {
                    println!(
                        "round {round}/{}  {name:<10} sequential {:>8}/s (p50 {:>4} µs, p99 {:>5} µs, cpu {:>5} µs/call)   pipelined {:>8}/s (cpu {:>5} µs/call)",
                        opts.rounds,
                        thousands(f.seq_rate),
                        f.seq_p50.as_micros(),
                        f.seq_p99.as_micros(),
                        micros(f.seq_cpu),
                        thousands(f.pipe_rate),
                        micros(f.pipe_cpu),
                    );
                    results[i].push(f);
                }
                Err(e) => {
                    eprintln!("stdio-bench: {name}: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    report(&opts, &results);
    ExitCode::SUCCESS
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn report(opts: &Opts, results: &[Vec<Figures>]) {
    let names: Vec<&str> = opts.servers.iter().map(|(n, _)| n.as_str()).collect();
    let med = |pick: fn(&Figures) -> f64| -> Vec<f64> {
        results
            .iter()
            .map(|r| median(r.iter().map(pick).collect()))
            .collect()
    };
    // Throughput rows: higher is better, ratio = first / other. CPU rows: lower is better,
    // ratio = other / first, so above 1 always means the first server is ahead.
    let rows: [(&str, Vec<f64>, bool); 4] = [
        ("sequential calls/s", med(|f| f.seq_rate), true),
        ("pipelined calls/s", med(|f| f.pipe_rate), true),
        (
            "sequential server cpu µs/call",
            med(|f| cpu_us(f.seq_cpu)),
            false,
        ),
        (
            "pipelined server cpu µs/call",
            med(|f| cpu_us(f.pipe_cpu)),
            false,
        ),
    ];
    println!();
    print!("{:<31}", "median");
    // A space before every heading: long names overflow their column but stay apart.
    for n in &names {
        print!(" {n:>11}");
    }
    for n in names.iter().skip(1) {
        print!(" {:>15}", format!("{} vs {n}", names[0]));
    }
    println!();
    for (label, vals, higher_better) in &rows {
        print!("{label:<31}");
        for v in vals {
            if *higher_better {
                print!("{:>12}", thousands(*v));
            } else {
                print!("{v:>12.1}");
            }
        }
        for v in vals.iter().skip(1) {
            let ratio = if *higher_better {
                vals[0] / v
            } else {
                v / vals[0]
            };
            print!("{:>16}", format!("{ratio:.2}x"));
        }
        println!();
    }
}

fn cpu_us(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
}

fn micros(d: Option<Duration>) -> String {
    d.map_or_else(
        || "?".to_owned(),
        |d| format!("{:.1}", d.as_secs_f64() * 1e6),
    )
}

fn thousands(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
