//! The well-behaved clients: 10,000 legacy sessions kept alive with a call now and then,
//! continuous `echo` callers of both eras, and open `subscriptions/listen` streams (SUB-01)
//! that read every event. Every exchange ends in `ok` or a counted failure kind.

use crate::tally::Tally;
use crate::wire::{self, Conn, LEGACY, MODERN_CALL};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Set once when the soak ends.
#[derive(Clone)]
pub struct Stop(pub watch::Receiver<bool>);

impl Stop {
    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }
    pub async fn wait(&self) {
        let mut rx = self.0.clone();
        let _ = rx.wait_for(|s| *s).await;
    }
    /// Sleep `d`, or less when the soak ends; `true` when it ended.
    pub async fn sleep(&self, d: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(d) => self.is_set(),
            () = self.wait() => true,
        }
    }
}

/// Reuse `conn`, reconnecting when the server closed it; a failed reconnect is counted.
async fn usable<'a>(
    conn: &'a mut Option<Conn>,
    addr: SocketAddr,
    t: &Tally,
    group: &'static str,
) -> Option<&'a mut Conn> {
    if conn.as_ref().is_none_or(Conn::is_closed) {
        match wire::connect(addr).await {
            Ok(c) => *conn = Some(c),
            Err(k) => {
                t.add(group, wire::leak_kind(k));
                return None;
            }
        }
    }
    conn.as_mut()
}

/// Open `sessions` legacy sessions over `conns` connections. Returns the ids, one list per
/// connection, for [`keep_alive`].
pub async fn open_sessions(
    addr: SocketAddr,
    sessions: usize,
    conns: usize,
    t: Arc<Tally>,
) -> Vec<Vec<String>> {
    let mut tasks = Vec::new();
    for k in 0..conns {
        let t = t.clone();
        let n = sessions / conns + usize::from(k < sessions % conns);
        tasks.push(tokio::spawn(async move {
            let mut conn = None;
            let mut ids = Vec::with_capacity(n);
            while ids.len() < n {
                let Some(c) = usable(&mut conn, addr, &t, "session-open").await else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                match wire::open_session(c).await {
                    Ok(sid) => {
                        t.add("session-open", "ok");
                        ids.push(sid);
                    }
                    Err(kind) => {
                        t.add("session-open", kind);
                        if kind == "http-503" {
                            break; // the cap: retrying would only hammer it
                        }
                    }
                }
            }
            ids
        }));
    }
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap_or_default());
    }
    out
}

/// One `echo` on a legacy session; the outcome goes to `group`.
async fn legacy_echo(c: &mut Conn, sid: &str, id: u64, t: &Tally, group: &'static str) {
    let text = format!("keep {id}");
    let h = [("mcp-protocol-version", LEGACY), ("mcp-session-id", sid)];
    let start = Instant::now();
    match c.post(&h, wire::echo_call(id, &text, false)).await {
        Ok(r) => {
            let o = r.echo_outcome(&text);
            if o == "ok" {
                t.latency(group, start.elapsed());
            }
            t.add(group, o);
        }
        Err(k) => t.add(group, wire::leak_kind(k)),
    }
}

/// Each session makes one call per `period`, spread evenly (one task per connection).
pub fn keep_alive(
    addr: SocketAddr,
    lists: Vec<Vec<String>>,
    period: Duration,
    t: Arc<Tally>,
    stop: Stop,
) {
    for ids in lists.into_iter().filter(|l| !l.is_empty()) {
        let (t, stop) = (t.clone(), stop.clone());
        tokio::spawn(async move {
            let gap = period / u32::try_from(ids.len()).unwrap_or(u32::MAX);
            let mut tick = tokio::time::interval(gap);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut conn = None;
            for (n, sid) in (0u64..).zip(ids.iter().cycle()) {
                tokio::select! {
                    _ = tick.tick() => {}
                    () = stop.wait() => return,
                }
                if let Some(c) = usable(&mut conn, addr, &t, "legacy-keepalive").await {
                    legacy_echo(c, sid, n, &t, "legacy-keepalive").await;
                }
            }
        });
    }
}

/// A client that calls `echo` every `pace` until the soak ends: modern (stateless) or legacy
/// (its own session).
pub fn caller(
    addr: SocketAddr,
    modern: bool,
    pace: Duration,
    t: Arc<Tally>,
    stop: Stop,
) -> tokio::task::JoinHandle<()> {
    let group = if modern {
        "modern-calls"
    } else {
        "legacy-calls"
    };
    tokio::spawn(async move {
        let mut conn = None;
        let mut sid = None;
        let mut tick = tokio::time::interval(pace);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for id in 1u64.. {
            tokio::select! {
                _ = tick.tick() => {}
                () = stop.wait() => return,
            }
            let Some(c) = usable(&mut conn, addr, &t, group).await else {
                continue;
            };
            if modern {
                let text = format!("call {id}");
                let start = Instant::now();
                match c.post(&MODERN_CALL, wire::echo_call(id, &text, true)).await {
                    Ok(r) => {
                        let o = r.echo_outcome(&text);
                        if o == "ok" {
                            t.latency(group, start.elapsed());
                        }
                        t.add(group, o);
                    }
                    Err(k) => t.add(group, wire::leak_kind(k)),
                }
                continue;
            }
            if sid.is_none() {
                match wire::open_session(c).await {
                    Ok(s) => sid = Some(s),
                    Err(k) => {
                        t.add("legacy-caller-session", k);
                        continue;
                    }
                }
            }
            if let Some(s) = &sid {
                legacy_echo(c, s, id, &t, group).await;
            }
        }
    })
}

/// One `subscriptions/listen` stream on its own connection, read until the soak ends.
/// Counts the opening outcome, the events read, and a stream that ends early.
pub async fn listener(addr: SocketAddr, id: u64, t: Arc<Tally>, stop: Stop) {
    const G: &str = "listen";
    let Ok(Ok(s)) =
        tokio::time::timeout(wire::CALL_TIMEOUT, tokio::net::TcpStream::connect(addr)).await
    else {
        t.add(G, "connect-error");
        return;
    };
    let Ok((mut tx, conn)) = http1::handshake::<_, Full<bytes::Bytes>>(TokioIo::new(s)).await
    else {
        t.add(G, "handshake");
        return;
    };
    tokio::spawn(conn);
    let req = hyper::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", wire::MODERN)
        .header("mcp-method", "subscriptions/listen");
    let Ok(req) = req.body(Full::new(wire::listen_request(id).into())) else {
        return;
    };
    let Ok(Ok(resp)) = tokio::time::timeout(wire::CALL_TIMEOUT, tx.send_request(req)).await else {
        t.add(G, "no-answer");
        return;
    };
    if resp.status() != 200 {
        t.add(G, wire::status_kind(resp.status().as_u16()));
        return;
    }
    t.add(G, "opened");
    let mut body = resp.into_body();
    loop {
        tokio::select! {
            f = body.frame() => match f {
                Some(Ok(f)) => {
                    if let Some(d) = f.data_ref() {
                        let events = d.split(|b| *b == b'\n').filter(|l| l.starts_with(b"data:")).count();
                        t.add_n("listen-events", "received", events as u64);
                    }
                }
                _ => {
                    t.add(G, if stop.is_set() { "ended-at-stop" } else { "ended-early" });
                    return;
                }
            },
            () = stop.wait() => {
                t.add(G, "open-at-end");
                return;
            }
        }
    }
}
