//! `soak`: a bounded soak of mcpcore's Streamable HTTP server (`scripts/soak.sh` builds and runs
//! it; 127.0.0.1 only). It starts `soak-server`, opens 10,000 legacy sessions and 1,000
//! `subscriptions/listen` streams, then for SECS seconds runs well-behaved callers of both eras
//! beside hostile clients (`hostile.rs`) while sampling the server's RSS, threads, descriptors
//! and tokio tasks. It prints and writes a Markdown report. It is a benchmark, not a test: the
//! verdicts it prints (flat memory, every well-behaved call answered) are for a reader.

mod good;
mod hostile;
mod report;
mod tally;
mod wire;

use good::Stop;
use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::{Sample, Tally};

const USAGE: &str = "usage: soak --server PATH/soak-server [--secs 600] [--out bench/SOAK.md]
  [--sessions 10000] [--listens 1000] [--callers 4] [--pace-ms 20] [--keep-secs 120]";

pub struct Plan {
    pub secs: u64,
    pub sessions: usize,
    pub session_conns: usize,
    pub keep_period: Duration,
    pub listens: usize,
    pub callers: usize,
    pub pace: Duration,
    pub slow_each: usize,
    pub nonreader_answers: usize,
    pub nonreader_listens: usize,
    pub flood: usize,
    pub half_open: usize,
    /// Sessions allowed beyond the well-behaved ones, for the half-open flood to fill.
    pub hostile_sessions: usize,
}

impl Plan {
    /// The server's options: the caps this load needs, every other limit at its default.
    pub fn server_options(&self) -> serde_json::Value {
        let conns = self.listens
            + self.nonreader_listens
            + self.session_conns
            + 2 * self.callers
            + self.flood
            + 2 * self.slow_each
            + self.nonreader_answers
            + 64;
        serde_json::json!({
            "maxSessions": self.sessions + self.callers + self.hostile_sessions,
            "maxListenStreams": self.listens + self.nonreader_listens,
            "maxConnections": conns,
        })
    }
}

fn parse() -> Result<(Plan, String, String), String> {
    let mut p = Plan {
        secs: 600,
        sessions: 10_000,
        session_conns: 16,
        keep_period: Duration::from_secs(120),
        listens: 1000,
        callers: 4,
        pace: Duration::from_millis(20),
        slow_each: 20,
        nonreader_answers: 4,
        nonreader_listens: 50,
        flood: 300,
        half_open: 300,
        hostile_sessions: 200,
    };
    let (mut server, mut out) = (None, "bench/SOAK.md".to_owned());
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        let n = || {
            v.parse::<u64>()
                .map_err(|_| format!("{a}: not a number: {v}"))
        };
        let size = || n().map(|x| usize::try_from(x).unwrap_or(usize::MAX));
        match a.as_str() {
            "--server" => server = Some(v.clone()),
            "--out" => out.clone_from(&v),
            "--secs" => p.secs = n()?,
            "--sessions" => p.sessions = size()?,
            "--listens" => p.listens = size()?,
            "--callers" => p.callers = size()?,
            "--pace-ms" => p.pace = Duration::from_millis(n()?.max(1)),
            "--keep-secs" => p.keep_period = Duration::from_secs(n()?.max(1)),
            _ => return Err(format!("unknown option {a}")),
        }
    }
    Ok((p, server.ok_or("--server is required")?, out))
}

struct ServerProc {
    child: std::process::Child,
    addr: SocketAddr,
    stats: Arc<Mutex<String>>,
}

fn start_server(bin: &str, plan: &Plan) -> Result<ServerProc, String> {
    let opts = std::env::temp_dir().join(format!("soak-options-{}.json", std::process::id()));
    std::fs::write(&opts, plan.server_options().to_string()).map_err(|e| e.to_string())?;
    let mut child = Command::new(bin)
        .arg("127.0.0.1:0")
        .arg(&opts)
        .args(["--stats-ms", "1000", "--notify-ms", "1000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{bin}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = std::io::BufReader::new(stdout).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let addr = first
        .strip_prefix("LISTENING http://")
        .and_then(|u| u.strip_suffix("/mcp"))
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("server did not start: {first:?}"))?;
    let stats = Arc::new(Mutex::new(String::new()));
    let s = stats.clone();
    std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            if let Some(rest) = l.strip_prefix("STATS ") {
                *s.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = rest.to_owned();
            }
        }
    });
    Ok(ServerProc { child, addr, stats })
}

impl ServerProc {
    fn sample(&self, t0: Instant) -> Option<Sample> {
        let line = self.stats.lock().map(|s| s.clone()).unwrap_or_default();
        tally::sample(self.child.id(), t0.elapsed().as_secs_f64(), &line)
    }
}

/// Sample the server every 2 s until `stop`.
fn sampler(srv: &Arc<ServerProc>, t0: Instant, stop: Stop) -> tokio::task::JoinHandle<Vec<Sample>> {
    let srv = srv.clone();
    tokio::spawn(async move {
        let mut out = Vec::new();
        loop {
            out.extend(srv.sample(t0));
            if stop.sleep(Duration::from_secs(2)).await {
                out.extend(srv.sample(t0));
                return out;
            }
        }
    })
}

fn start_hostiles(addr: SocketAddr, p: &Plan, t: &Arc<Tally>, stop: &Stop) {
    let tt = t.clone();
    hostile::spawn_loop(p.slow_each, stop, move || {
        hostile::slow_head(addr, tt.clone())
    });
    let tt = t.clone();
    hostile::spawn_loop(p.slow_each, stop, move || {
        hostile::slow_body(addr, tt.clone())
    });
    let tt = t.clone();
    hostile::spawn_loop(p.nonreader_answers, stop, move || {
        hostile::never_reads_answers(addr, tt.clone())
    });
    let tt = t.clone();
    hostile::spawn_loop(1, stop, move || hostile::oversized(addr, tt.clone()));
    let tt = t.clone();
    let seed = Arc::new(std::sync::atomic::AtomicU64::new(0x9e37_79b9_7f4a_7c15));
    hostile::spawn_loop(1, stop, move || {
        let s = seed.fetch_add(0x1234_5678_9abc_def1, std::sync::atomic::Ordering::Relaxed);
        hostile::garbage(addr, s, tt.clone())
    });
    let (tt, n) = (t.clone(), p.flood);
    hostile::spawn_loop(1, stop, move || hostile::flood(addr, n, tt.clone()));
    let (tt, n) = (t.clone(), p.half_open);
    hostile::spawn_loop(1, stop, move || hostile::half_open(addr, n, tt.clone()));
    for i in 0..p.nonreader_listens {
        tokio::spawn(hostile::never_reads_listen(
            addr,
            1_000_000 + i as u64,
            t.clone(),
            stop.clone(),
        ));
    }
}

#[tokio::main]
async fn main() {
    let (plan, bin, out) = match parse() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("soak: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let srv = match start_server(&bin, &plan) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(1);
        }
    };
    let t0 = Instant::now();
    let mut r = report::Run::new(&plan, srv.child.id());
    tokio::time::sleep(Duration::from_secs(2)).await;
    r.idle = srv.sample(t0);
    let t = Arc::new(Tally::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop = Stop(stop_rx);
    let samples = sampler(&srv, t0, stop.clone());
    let addr = srv.addr;

    eprintln!(
        "soak: opening {} legacy sessions and {} listen streams",
        plan.sessions, plan.listens
    );
    let setup = Instant::now();
    let mut listens = Vec::new();
    for i in 0..plan.listens {
        listens.push(tokio::spawn(good::listener(
            addr,
            i as u64,
            t.clone(),
            stop.clone(),
        )));
        if i % 50 == 49 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let ids = good::open_sessions(addr, plan.sessions, plan.session_conns, t.clone()).await;
    r.setup_secs = setup.elapsed().as_secs_f64();
    r.after_setup = srv.sample(t0);
    r.load_start = t0.elapsed().as_secs_f64();
    eprintln!(
        "soak: set up in {:.1} s; load for {} s",
        r.setup_secs, plan.secs
    );

    good::keep_alive(addr, ids, plan.keep_period, t.clone(), stop.clone());
    let mut callers = Vec::new();
    for _ in 0..plan.callers {
        callers.push(good::caller(addr, true, plan.pace, t.clone(), stop.clone()));
        callers.push(good::caller(
            addr,
            false,
            plan.pace,
            t.clone(),
            stop.clone(),
        ));
    }
    // The callers open their sessions first, so the half-open flood cannot take their slots.
    tokio::time::sleep(Duration::from_secs(2)).await;
    start_hostiles(addr, &plan, &t, &stop);
    tokio::time::sleep(Duration::from_secs(plan.secs)).await;

    r.load_end = t0.elapsed().as_secs_f64();
    let _ = stop_tx.send(true);
    for c in callers.into_iter().chain(listens) {
        let _ = tokio::time::timeout(Duration::from_secs(40), c).await;
    }
    r.samples = samples.await.unwrap_or_default();
    // Everything the load opened is closed now; what the server still holds is what it keeps
    // by design (the sessions) or leaked.
    tokio::time::sleep(Duration::from_secs(15)).await;
    r.after_load = srv.sample(t0);
    r.tally = Some(t);
    finish(srv);
    let text = r.markdown();
    println!("{text}");
    if let Err(e) = std::fs::write(&out, &text) {
        eprintln!("soak: cannot write {out}: {e}");
        std::process::exit(1);
    }
    eprintln!("soak: wrote {out}");
}

/// Close the server's stdin (its signal to shut down) and reap it.
fn finish(srv: Arc<ServerProc>) {
    let Ok(mut srv) = Arc::try_unwrap(srv) else {
        return;
    };
    drop(srv.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = srv.child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("soak: the server did not stop within 15 s of stdin closing; killing it");
    let _ = srv.child.kill();
    let _ = srv.child.wait();
}
