//! The soak's Markdown report (`bench/SOAK.md`): when and where it ran, the server's memory,
//! threads and tasks over time, every well-behaved outcome, and what the hostile clients got.

use crate::tally::{load_average, Sample, Tally};
use crate::Plan;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

pub struct Run {
    pub date: String,
    pub machine: String,
    pub commit: String,
    pub secs: u64,
    pub options: String,
    pub plan: String,
    pub load_before: (f64, f64, f64),
    pub idle: Option<Sample>,
    pub after_setup: Option<Sample>,
    pub after_load: Option<Sample>,
    pub setup_secs: f64,
    pub load_start: f64,
    pub load_end: f64,
    pub samples: Vec<Sample>,
    pub tally: Option<Arc<Tally>>,
}

fn cmd(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

impl Run {
    pub fn new(p: &Plan, _pid: u32) -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .unwrap_or_default()
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let commit = std::env::var("SOAK_COMMIT")
            .unwrap_or_else(|_| cmd("git", &["rev-parse", "--short", "HEAD"]));
        Self {
            date: cmd("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
            machine: format!("{} cores (nproc), {cpu}", cmd("nproc", &[])),
            commit,
            secs: p.secs,
            options: p.server_options().to_string(),
            plan: format!(
                "{} legacy sessions (one `echo` each per {} s, over {} connections), {} listen streams, \
                 {} modern + {} legacy callers (one `echo` each per {} ms, own connection)",
                p.sessions, p.keep_period.as_secs(), p.session_conns, p.listens, p.callers, p.callers,
                p.pace.as_millis()
            ),
            load_before: load_average(),
            idle: None,
            after_setup: None,
            after_load: None,
            setup_secs: 0.0,
            load_start: 0.0,
            load_end: 0.0,
            samples: Vec::new(),
            tally: None,
        }
    }

    /// The sample closest to `t` seconds.
    fn at(&self, t: f64) -> Option<&Sample> {
        self.samples
            .iter()
            .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let warm = self.load_start + (self.secs as f64 / 10.0).clamp(10.0, 60.0);
        let w = self.at(warm).cloned().unwrap_or_default();
        let end = self
            .samples
            .iter()
            .rfind(|x| x.t <= self.load_end)
            .cloned()
            .unwrap_or_default();
        let during = self
            .samples
            .iter()
            .filter(|x| x.t >= self.load_start && x.t <= self.load_end);
        let max_rss = during.clone().map(|x| x.rss_kb).max().unwrap_or(0);
        let max_load = during.clone().map(|x| x.load1).fold(0.0, f64::max);
        let drift = (end.rss_kb as f64 - w.rss_kb as f64) / (w.rss_kb.max(1) as f64) * 100.0;
        let la = load_average();
        let _ = writeln!(s, "# Soak of the Streamable HTTP server\n");
        let _ = writeln!(
            s,
            "Written by `scripts/soak.sh` (`bench/src/bin/soak/`); a benchmark, not a test.\n"
        );
        let _ = writeln!(
            s,
            "- date: {}\n- machine: {}\n- commit: {}",
            self.date, self.machine, self.commit
        );
        let _ = writeln!(
            s,
            "- duration: {} s of load after a {:.0} s set-up",
            self.secs, self.setup_secs
        );
        let _ = writeln!(
            s,
            "- load average (1/5/15 min): {:.2} / {:.2} / {:.2} before; highest 1-min value during the load {:.2}; {:.2} / {:.2} / {:.2} at the end (a shared machine)",
            self.load_before.0, self.load_before.1, self.load_before.2, max_load, la.0, la.1, la.2
        );
        let _ = writeln!(s, "- server: `soak-server` (mcpcore's standalone listener, `echo` tool), options `{}`, all other limits at their defaults", self.options);
        let _ = writeln!(s, "- load: {}; hostile clients below\n", self.plan);
        let mb = |kb: u64| kb as f64 / 1024.0;
        let _ = writeln!(s, "## Server memory, threads, tasks\n");
        let _ = writeln!(
            s,
            "RSS after warm-up ({:.0} s into the load) **{:.1} MB**, at the end **{:.1} MB**: {:+.1} % ({}); highest during the load {:.1} MB.\n",
            warm - self.load_start, mb(w.rss_kb), mb(end.rss_kb), drift,
            if drift.abs() <= 10.0 { "flat, within 10 %" } else { "NOT flat" },
            mb(max_rss)
        );
        self.table(&mut s, &end);
        if let Some(t) = &self.tally {
            self.outcomes(&mut s, t);
        }
        s
    }

    /// The server's samples: idle, after set-up, one per tenth of the load, end, after.
    fn table(&self, s: &mut String, end: &Sample) {
        let mb = |kb: u64| kb as f64 / 1024.0;
        let _ = writeln!(s, "| when | t (s) | RSS MB | threads | fds | tokio tasks | sessions | listen streams | connections |");
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
        let row = |s: &mut String, name: &str, x: &Sample| {
            let _ = writeln!(
                s,
                "| {name} | {:.0} | {:.1} | {} | {} | {} | {} | {} | {} |",
                x.t,
                mb(x.rss_kb),
                x.threads,
                x.fds,
                x.stat("tasks"),
                x.stat("sessions"),
                x.stat("listens"),
                x.stat("conns")
            );
        };
        if let Some(x) = &self.idle {
            row(s, "idle", x);
        }
        if let Some(x) = &self.after_setup {
            row(s, "after set-up", x);
        }
        let step = (self.secs as f64 / 10.0).max(2.0);
        let mut next = self.load_start;
        for x in self
            .samples
            .iter()
            .filter(|x| x.t >= self.load_start && x.t <= self.load_end)
        {
            if x.t >= next {
                row(s, "load", x);
                next += step;
            }
        }
        row(s, "end of load", end);
        if let Some(x) = &self.after_load {
            row(s, "15 s after the load", x);
        }
    }

    fn outcomes(&self, s: &mut String, t: &Tally) {
        let counts = t.counts();
        let mut by: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
        for ((g, k), n) in &counts {
            by.entry(g).or_default().push((k, *n));
        }
        let _ = writeln!(s, "\n## Well-behaved clients\n");
        let _ = writeln!(
            s,
            "| group | calls | answered ok | failures by kind | p50 ms | p99 ms | max ms |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|");
        for g in [
            "modern-calls",
            "legacy-calls",
            "legacy-keepalive",
            "session-open",
        ] {
            let v = by.get(g).cloned().unwrap_or_default();
            let total: u64 = v.iter().map(|x| x.1).sum();
            let ok = t.get(g, "ok");
            let fails: Vec<_> = v.iter().copied().filter(|(k, _)| *k != "ok").collect();
            let (p50, p99, max) = t
                .percentiles(g)
                .map_or((0.0, 0.0, 0.0), |x| (x.1, x.2, x.3));
            let _ = writeln!(
                s,
                "| {g} | {total} | {ok} | {} | {p50:.2} | {p99:.2} | {max:.1} |",
                if fails.is_empty() {
                    "none".to_owned()
                } else {
                    fmt(&fails)
                }
            );
        }
        let listen = by.get("listen").cloned().unwrap_or_default();
        let _ = writeln!(
            s,
            "\nListen streams: {}; `data:` events read {} (acknowledgements plus a tools list change each second).",
            fmt(&listen), t.get("listen-events", "received")
        );
        if let Some(v) = by.get("legacy-caller-session") {
            let _ = writeln!(s, "Legacy callers' own session opening failed: {}.", fmt(v));
        }
        hostile(s, &by, t);
    }
}

type ByGroup<'a> = BTreeMap<&'a str, Vec<(&'a str, u64)>>;

fn fmt(v: &[(&str, u64)]) -> String {
    v.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What each hostile client got from the server.
fn hostile(s: &mut String, by: &ByGroup<'_>, t: &Tally) {
    let _ = writeln!(s, "\n## Hostile clients: what the server did to them\n");
    let _ = writeln!(
        s,
        "| attack | outcomes | closed after (s): n / min / median / max |"
    );
    let _ = writeln!(s, "|---|---|---|");
    for g in [
        "slowloris-head",
        "slowloris-body",
        "nonreader-answers",
        "nonreader-listen",
        "oversize-length",
        "oversize-chunked",
        "garbage-bytes",
        "garbage-body",
        "deep-json",
        "flood",
        "halfopen-init",
        "halfopen-probe",
    ] {
        let v = by.get(g).cloned().unwrap_or_default();
        let c = t.closing(g).map_or("–".to_owned(), |(n, a, m, b)| {
            format!("{n} / {a:.1} / {m:.1} / {b:.1}")
        });
        let _ = writeln!(s, "| {g} | {} | {c} |", fmt(&v));
    }
    let _ = writeln!(
        s,
        "\nBytes the never-reading listen consumers found buffered at the end: {}.",
        t.get("nonreader-listen-bytes", "buffered")
    );
}
