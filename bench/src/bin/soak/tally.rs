//! What the soak counts: outcomes by (group, kind), latencies of well-behaved calls, and the
//! server's samples (RSS, threads, descriptors from `/proc/PID`; tasks and gauges from the
//! server's own `STATS` lines).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
pub struct Tally {
    counts: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    latency_us: Mutex<BTreeMap<&'static str, Vec<u32>>>,
    /// Seconds from an attack's start to the server closing it, by group.
    closed_after: Mutex<BTreeMap<&'static str, Vec<f64>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Tally {
    pub fn add(&self, group: &'static str, kind: &'static str) {
        self.add_n(group, kind, 1);
    }

    pub fn add_n(&self, group: &'static str, kind: &'static str, n: u64) {
        *lock(&self.counts).entry((group, kind)).or_default() += n;
    }

    pub fn latency(&self, group: &'static str, d: Duration) {
        let us = u32::try_from(d.as_micros()).unwrap_or(u32::MAX);
        lock(&self.latency_us).entry(group).or_default().push(us);
    }

    pub fn closed_after(&self, group: &'static str, d: Duration) {
        lock(&self.closed_after)
            .entry(group)
            .or_default()
            .push(d.as_secs_f64());
    }

    pub fn counts(&self) -> BTreeMap<(&'static str, &'static str), u64> {
        lock(&self.counts).clone()
    }

    pub fn get(&self, group: &'static str, kind: &'static str) -> u64 {
        lock(&self.counts).get(&(group, kind)).copied().unwrap_or(0)
    }

    /// (count, p50 ms, p99 ms, max ms) of a latency group.
    pub fn percentiles(&self, group: &'static str) -> Option<(usize, f64, f64, f64)> {
        let mut v = lock(&self.latency_us).get(group)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let at = |q: f64| {
            let i = ((v.len() as f64 - 1.0) * q).round() as usize;
            f64::from(v[i.min(v.len() - 1)]) / 1000.0
        };
        Some((v.len(), at(0.5), at(0.99), at(1.0)))
    }

    /// (count, min s, median s, max s) of the closing times of a group.
    pub fn closing(&self, group: &'static str) -> Option<(usize, f64, f64, f64)> {
        let mut v = lock(&self.closed_after).get(group)?.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some((v.len(), v[0], v[v.len() / 2], v[v.len() - 1]))
    }
}

/// One sample of the server process.
#[derive(Clone, Default)]
pub struct Sample {
    pub t: f64,
    pub rss_kb: u64,
    pub threads: u64,
    pub fds: u64,
    /// The server's latest `STATS` line, `key=value` pairs.
    pub stats: BTreeMap<String, u64>,
    pub load1: f64,
}

impl Sample {
    pub fn stat(&self, k: &str) -> u64 {
        self.stats.get(k).copied().unwrap_or(0)
    }
}

fn status_field(status: &str, key: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Read `/proc/PID` now; `None` once the process is gone.
pub fn sample(pid: u32, t: f64, stats_line: &str) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64);
    let stats = stats_line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
        .collect();
    Some(Sample {
        t,
        rss_kb: status_field(&status, "VmRSS:"),
        threads: status_field(&status, "Threads:"),
        fds,
        stats,
        load1: load_average().0,
    })
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> (f64, f64, f64) {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = s.split_whitespace().map(|x| x.parse().unwrap_or(0.0));
    (
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
    )
}
