//! The hostile clients, on raw TCP so they can misbehave at the byte level: slowloris heads and
//! bodies, consumers that never read (large answers and listen streams), oversized bodies,
//! garbage, connection floods and half-open `initialize` floods. Each records what the server
//! did to it (a status, a close, and after how long); none of these counts as a failure of the
//! server unless it was *not* refused or cut.

use crate::good::Stop;
use crate::tally::Tally;
use crate::wire::{self, status_kind, Conn, LEGACY, MODERN};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const MIB: usize = 1 << 20;

async fn raw(addr: SocketAddr, rcvbuf: Option<u32>) -> std::io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    if let Some(n) = rcvbuf {
        s.set_recv_buffer_size(n)?;
    }
    s.connect(addr).await
}

fn head(addr: SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: echo\r\n{extra}\r\n"
    )
}

/// What the server answered on `s` within `wait`: the status of its first line, `closed`
/// (EOF without a byte), `reset`, or `no-answer`.
async fn read_status(s: &mut TcpStream, wait: Duration) -> &'static str {
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 1024];
    let read = async {
        loop {
            match s.read(&mut chunk).await {
                Ok(0) => return if buf.is_empty() { "closed" } else { "partial" },
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(line) = buf
                        .split(|b| *b == b'\n')
                        .next()
                        .filter(|_| buf.contains(&b'\n'))
                    {
                        let code = std::str::from_utf8(line)
                            .ok()
                            .and_then(|l| l.split_whitespace().nth(1))
                            .and_then(|c| c.parse().ok());
                        return code.map_or("bad-status-line", status_kind);
                    }
                }
                Err(_) => return "reset",
            }
        }
    };
    tokio::time::timeout(wait, read)
        .await
        .unwrap_or("no-answer")
}

/// Run `attack` in a loop, `n` at a time, until the soak ends.
pub fn spawn_loop<F, Fut>(n: usize, stop: &Stop, attack: F)
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    for _ in 0..n {
        let (stop, attack) = (stop.clone(), attack.clone());
        tokio::spawn(async move {
            while !stop.is_set() {
                tokio::select! {
                    () = attack() => {}
                    () = stop.wait() => return,
                }
            }
        });
    }
}

/// A request head trickled one line every 2 s: the head deadline must close it.
pub async fn slow_head(addr: SocketAddr, t: Arc<Tally>) {
    const G: &str = "slowloris-head";
    let Ok(mut s) = raw(addr, None).await else {
        return t.add(G, "connect-error");
    };
    let start = Instant::now();
    let _ = s
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .await;
    for i in 0..60u32 {
        // Reading while trickling: whatever the server does to us shows up here.
        let outcome = read_status(&mut s, Duration::from_secs(2)).await;
        if outcome != "no-answer" {
            t.closed_after(G, start.elapsed());
            return t.add(G, outcome);
        }
        if s.write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
            .await
            .is_err()
        {
            t.closed_after(G, start.elapsed());
            return t.add(G, "closed");
        }
    }
    t.add(G, "still-open-after-120s");
}

/// A complete head announcing 100 KB, then one body byte per second: the body deadline must
/// answer 408.
pub async fn slow_body(addr: SocketAddr, t: Arc<Tally>) {
    const G: &str = "slowloris-body";
    let Ok(mut s) = raw(addr, None).await else {
        return t.add(G, "connect-error");
    };
    let start = Instant::now();
    let _ = s
        .write_all(head(addr, "Content-Length: 100000\r\n").as_bytes())
        .await;
    for _ in 0..150 {
        let outcome = read_status(&mut s, Duration::from_secs(1)).await;
        if outcome != "no-answer" {
            t.closed_after(G, start.elapsed());
            return t.add(G, outcome);
        }
        if s.write_all(b"[").await.is_err() {
            t.closed_after(G, start.elapsed());
            return t.add(G, "closed");
        }
    }
    t.add(G, "still-open-after-150s");
}

/// Four pipelined `echo` calls of 1 MiB each, then nothing read for 45 s: the write-stall
/// deadline must cut the connection rather than hold 4 MiB of answers for us.
pub async fn never_reads_answers(addr: SocketAddr, t: Arc<Tally>) {
    const G: &str = "nonreader-answers";
    let Ok(mut s) = raw(addr, Some(4096)).await else {
        return t.add(G, "connect-error");
    };
    let text = "x".repeat(MIB);
    let mut out = Vec::new();
    for id in 0..4 {
        let body = wire::echo_call(id, &text, true);
        out.extend_from_slice(
            head(addr, &format!("Content-Length: {}\r\n", body.len())).as_bytes(),
        );
        out.extend_from_slice(body.as_bytes());
    }
    // The server reads one request at a time, so most of this write waits for the first answer.
    let _ = tokio::time::timeout(Duration::from_secs(5), s.write_all(&out)).await;
    tokio::time::sleep(Duration::from_secs(45)).await;
    let mut got = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    let drained = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) => return "cut",
                Ok(n) => got += n,
                Err(_) => return "cut",
            }
        }
    })
    .await;
    let kind = match drained {
        Ok(k) if got < 4 * MIB => k,
        Ok(_) => "served-all-then-closed",
        Err(_) => "served-all",
    };
    t.add(G, kind);
}

/// A listen stream whose reader never reads, held until the soak ends.
pub async fn never_reads_listen(addr: SocketAddr, id: u64, t: Arc<Tally>, stop: Stop) {
    const G: &str = "nonreader-listen";
    let Ok(mut s) = raw(addr, Some(4096)).await else {
        return t.add(G, "connect-error");
    };
    let body = wire::listen_request(id);
    let h = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(h.as_bytes()).await.is_err() {
        return t.add(G, "closed");
    }
    t.add(G, "opened");
    stop.wait().await;
    // Whether the server still holds it: a live stream has bytes (or at least no EOF) waiting.
    let mut buf = vec![0u8; 256 * 1024];
    let mut got = 0usize;
    let end = tokio::time::timeout(Duration::from_secs(3), async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return "cut-by-server",
                Ok(n) => got += n,
            }
        }
    })
    .await;
    t.add(G, end.unwrap_or("held-to-end"));
    t.add_n("nonreader-listen-bytes", "buffered", got as u64);
}

/// Bodies over the 4 MiB cap: announced by `Content-Length`, and chunked without one.
pub async fn oversized(addr: SocketAddr, t: Arc<Tally>) {
    if let Ok(mut s) = raw(addr, None).await {
        let _ = s
            .write_all(head(addr, &format!("Content-Length: {}\r\n", 5 * MIB)).as_bytes())
            .await;
        let _ = s.write_all(&[b' '; 64 * 1024]).await;
        t.add(
            "oversize-length",
            read_status(&mut s, Duration::from_secs(10)).await,
        );
    }
    if let Ok(mut s) = raw(addr, None).await {
        let _ = s
            .write_all(head(addr, "Transfer-Encoding: chunked\r\n").as_bytes())
            .await;
        let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
        for _ in 0..80 {
            // 80 × 64 KiB = 5 MiB; the server may answer and close before the end.
            if s.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
        }
        t.add(
            "oversize-chunked",
            read_status(&mut s, Duration::from_secs(10)).await,
        );
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
}

/// Random bytes instead of HTTP; a body that is not JSON; JSON nested past the depth cap.
pub async fn garbage(addr: SocketAddr, seed: u64, t: Arc<Tally>) {
    let mut x = seed | 1;
    let bytes: Vec<u8> = (0..2048)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    if let Ok(mut s) = raw(addr, None).await {
        let _ = s.write_all(&bytes).await;
        t.add(
            "garbage-bytes",
            read_status(&mut s, Duration::from_secs(10)).await,
        );
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for (g, body) in [
        ("garbage-body", &bytes[..512]),
        ("deep-json", deep.as_bytes()),
    ] {
        if let Ok(mut s) = raw(addr, None).await {
            let _ = s
                .write_all(head(addr, &format!("Content-Length: {}\r\n", body.len())).as_bytes())
                .await;
            let _ = s.write_all(body).await;
            t.add(g, read_status(&mut s, Duration::from_secs(10)).await);
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// `n` connections at once that send nothing; each must be closed by the head deadline.
pub async fn flood(addr: SocketAddr, n: usize, t: Arc<Tally>) {
    const G: &str = "flood";
    let start = Instant::now();
    let mut held = Vec::new();
    for _ in 0..n {
        match raw(addr, None).await {
            Ok(s) => held.push(s),
            Err(_) => t.add(G, "connect-error"),
        }
    }
    // A JoinSet, so the end of the soak (which drops this future) closes the flood's sockets
    // instead of leaving them to their 60 s wait.
    let mut waits = tokio::task::JoinSet::new();
    for mut s in held {
        let t = t.clone();
        waits.spawn(async move {
            let outcome = read_status(&mut s, Duration::from_secs(60)).await;
            if outcome != "no-answer" {
                t.closed_after(G, start.elapsed());
            }
            t.add(
                G,
                if outcome == "no-answer" {
                    "still-open-after-60s"
                } else {
                    outcome
                },
            );
        });
    }
    while waits.join_next().await.is_some() {}
    tokio::time::sleep(Duration::from_secs(15)).await;
}

/// `n` `initialize` without `notifications/initialized`; 25 s later each accepted session is
/// probed and must be gone (404): the half-open reaper (`uninitialized_session_timeout`).
pub async fn half_open(addr: SocketAddr, n: usize, t: Arc<Tally>) {
    let Ok(mut c) = wire::connect(addr).await else {
        return t.add("halfopen-init", "connect-error");
    };
    let mut sids = Vec::new();
    for _ in 0..n {
        match c.post(&[], wire::initialize()).await {
            Ok(r) => {
                t.add("halfopen-init", status_kind(r.status));
                sids.extend(r.session);
            }
            Err(k) => t.add("halfopen-init", wire::leak_kind(k)),
        }
    }
    tokio::time::sleep(Duration::from_secs(25)).await;
    probe(addr, &mut c, &sids, &t).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
}

async fn probe(addr: SocketAddr, c: &mut Conn, sids: &[String], t: &Tally) {
    let ping = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for sid in sids {
        if c.is_closed() {
            match wire::connect(addr).await {
                Ok(n) => *c = n,
                Err(_) => return t.add("halfopen-probe", "connect-error"),
            }
        }
        let h = [
            ("mcp-protocol-version", LEGACY),
            ("mcp-session-id", sid.as_str()),
        ];
        match c.post(&h, ping.clone()).await {
            Ok(r) if r.status == 404 => t.add("halfopen-probe", "reaped-404"),
            Ok(r) => t.add("halfopen-probe", status_kind(r.status)),
            Err(k) => t.add("halfopen-probe", wire::leak_kind(k)),
        }
    }
}
