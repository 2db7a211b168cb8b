//! One measured run against one server process: spawn, legacy `initialize` handshake, warm-up,
//! a sequential phase (send one `tools/call`, wait for its answer, repeat) and a pipelined phase
//! (keep up to `window` calls in flight). Every answer is checked: right id, a result (not an
//! error) and the echoed text. A watchdog kills the server when the run exceeds its time budget,
//! so a wedged server turns into an error instead of a hang.

use serde::de::IgnoredAny;
use serde::Deserialize;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// What to run and how much of it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Calls before measuring (sequential), to warm caches, allocators and the scheduler.
    pub warmup: u64,
    /// Calls in the sequential phase.
    pub seq: u64,
    /// Calls in the pipelined phase.
    pub pipe: u64,
    /// Most calls in flight in the pipelined phase.
    pub window: u64,
    /// The whole run (spawn to exit) must fit in this budget.
    pub timeout: Duration,
}

/// Figures from one run.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Sequential calls per second.
    pub seq_rate: f64,
    /// Median sequential round trip.
    pub seq_p50: Duration,
    /// 99th percentile sequential round trip.
    pub seq_p99: Duration,
    /// Server CPU time (user + system, all threads) per sequential call, when readable.
    pub seq_cpu: Option<Duration>,
    /// Pipelined calls per second.
    pub pipe_rate: f64,
    /// Server CPU time per pipelined call, when readable.
    pub pipe_cpu: Option<Duration>,
}

/// One line of a server's answer, read just far enough to check it.
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

struct Conn {
    pid: u32,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    wbuf: Vec<u8>,
}

/// Spawn `cmd`, run `plan` against it and wait for it to exit after stdin closes.
pub fn run(cmd: &[String], plan: &Plan) -> Result<Figures, String> {
    let (prog, args) = cmd.split_first().ok_or("empty server command")?;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("spawn {prog}: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let pid = child.id();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let budget = plan.timeout;
    let watchdog = thread::spawn(move || watch(child, done_rx, budget));

    let mut conn = Conn {
        pid,
        stdin,
        stdout: BufReader::with_capacity(256 * 1024, stdout),
        line: Vec::with_capacity(4096),
        wbuf: Vec::with_capacity(64 * 1024),
    };
    let figures = measure(&mut conn, plan);
    drop(conn); // closes the server's stdin: it should drain and exit
    let _ = done_tx.send(());
    let exit = watchdog
        .join()
        .map_err(|_| "watchdog panicked".to_owned())?;
    let figures = figures.map_err(|e| match &exit {
        Err(w) => format!("{e} ({w})"),
        Ok(()) => e,
    })?;
    exit?;
    Ok(figures)
}

/// Kill the server if the run overruns; otherwise give it a few seconds to exit on its own.
fn watch(mut child: Child, done: mpsc::Receiver<()>, budget: Duration) -> Result<(), String> {
    if let Err(mpsc::RecvTimeoutError::Timeout) = done.recv_timeout(budget) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("run exceeded {budget:?}; server killed"));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("server exited with {status}")),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("server did not exit within 10 s of stdin closing; killed".into());
            }
            Err(e) => return Err(format!("wait: {e}")),
        }
    }
}

fn measure(c: &mut Conn, plan: &Plan) -> Result<Figures, String> {
    handshake(c)?;
    let mut next_id = 1u64;
    let mut lat = Vec::with_capacity(usize::try_from(plan.seq).unwrap_or(0));
    sequential(c, next_id, plan.warmup, &mut lat)?;
    next_id += plan.warmup;
    lat.clear();

    let cpu0 = cpu_time(c.pid);
    let t0 = Instant::now();
    sequential(c, next_id, plan.seq, &mut lat)?;
    let seq_secs = t0.elapsed().as_secs_f64();
    let cpu1 = cpu_time(c.pid);
    next_id += plan.seq;
    lat.sort_unstable();
    let pct = |p: f64| {
        let i = ((lat.len() as f64 - 1.0) * p).round() as usize;
        lat.get(i).copied().unwrap_or_default()
    };

    let t0 = Instant::now();
    pipelined(c, next_id, plan.pipe, plan.window)?;
    let pipe_secs = t0.elapsed().as_secs_f64();
    let cpu2 = cpu_time(c.pid);
    let per_call = |a: Option<Duration>, b: Option<Duration>, n: u64| {
        Some(b?.saturating_sub(a?) / u32::try_from(n).ok()?)
    };

    Ok(Figures {
        seq_rate: plan.seq as f64 / seq_secs,
        seq_p50: pct(0.50),
        seq_p99: pct(0.99),
        seq_cpu: per_call(cpu0, cpu1, plan.seq),
        pipe_rate: plan.pipe as f64 / pipe_secs,
        pipe_cpu: per_call(cpu1, cpu2, plan.pipe),
    })
}

/// CPU time the server process has used so far (user + system, all its threads, including
/// exited ones), from `/proc/PID/stat` in clock ticks (`USER_HZ`, 100 on Linux). `None` where
/// there is no procfs. The server command must `exec` the server (as `taskset` does) for the
/// pid to be the server's.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11); // field 14 (utime) is the 12th here
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

fn handshake(c: &mut Conn) -> Result<(), String> {
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-bench","version":"0.1.0"}}}
"#;
    c.stdin.write_all(init).map_err(io_err)?;
    loop {
        read_line(c)?;
        let a = parse(&c.line)?;
        if a.id == Some(0) {
            if a.result.is_none() {
                return Err(format!("initialize failed: {}", show(&c.line)));
            }
            break;
        }
    }
    c.stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .map_err(io_err)
}

fn push_call(buf: &mut Vec<u8>, id: u64) {
    // Writing into a Vec cannot fail.
    let _ = writeln!(
        buf,
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello {id}"}}}}}}"#
    );
}

fn sequential(c: &mut Conn, first: u64, n: u64, lat: &mut Vec<Duration>) -> Result<(), String> {
    for id in first..first + n {
        c.wbuf.clear();
        push_call(&mut c.wbuf, id);
        let t = Instant::now();
        c.stdin.write_all(&c.wbuf).map_err(io_err)?;
        loop {
            read_line(c)?;
            if let Some(got) = check(&c.line)? {
                if got != id {
                    return Err(format!("expected id {id}, got {}", show(&c.line)));
                }
                break;
            }
        }
        lat.push(t.elapsed());
    }
    Ok(())
}

/// Keep up to `window` calls in flight: after each read burst, top the window up with one write.
/// Unanswered bytes stay under `window` frames each way, so with the window capped at 256 neither
/// pipe (64 KiB) can fill and this single thread cannot deadlock against the server.
fn pipelined(c: &mut Conn, first: u64, n: u64, window: u64) -> Result<(), String> {
    let end = first + n;
    let mut next = first;
    let mut outstanding = 0u64;
    let mut answered = 0u64;
    let mut seen = vec![false; usize::try_from(n).map_err(|_| "too many calls")?];
    while answered < n {
        if outstanding < window && next < end {
            c.wbuf.clear();
            while outstanding < window && next < end {
                push_call(&mut c.wbuf, next);
                next += 1;
                outstanding += 1;
            }
            c.stdin.write_all(&c.wbuf).map_err(io_err)?;
        }
        loop {
            read_line(c)?;
            if let Some(id) = check(&c.line)? {
                let slot = id
                    .checked_sub(first)
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| seen.get_mut(i))
                    .ok_or_else(|| format!("unexpected id: {}", show(&c.line)))?;
                if std::mem::replace(slot, true) {
                    return Err(format!("id answered twice: {}", show(&c.line)));
                }
                outstanding -= 1;
                answered += 1;
            }
            if !c.stdout.buffer().contains(&b'\n') {
                break;
            }
        }
    }
    Ok(())
}

fn read_line(c: &mut Conn) -> Result<(), String> {
    c.line.clear();
    let n = c.stdout.read_until(b'\n', &mut c.line).map_err(io_err)?;
    if n == 0 || c.line.last() != Some(&b'\n') {
        return Err("server closed stdout".into());
    }
    Ok(())
}

fn parse(line: &[u8]) -> Result<Answer, String> {
    serde_json::from_slice(line).map_err(|e| format!("bad JSON from server ({e}): {}", show(line)))
}

/// `Ok(None)` for a server notification or request (skipped), `Ok(Some(id))` for a good answer.
fn check(line: &[u8]) -> Result<Option<u64>, String> {
    let a = parse(line)?;
    if a.method.is_some() {
        return Ok(None);
    }
    let id =
        a.id.ok_or_else(|| format!("answer without id: {}", show(line)))?;
    if a.error.is_some() || a.result.is_none() {
        return Err(format!("call {id} failed: {}", show(line)));
    }
    let want = format!("hello {id}\"");
    if !line.windows(want.len()).any(|w| w == want.as_bytes()) {
        return Err(format!("call {id} did not echo its text: {}", show(line)));
    }
    Ok(Some(id))
}

fn show(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let s = s.trim_end();
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s.to_owned()
    }
}

fn io_err(e: std::io::Error) -> String {
    format!("i/o: {e}")
}
