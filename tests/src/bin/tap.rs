//! `tap LOG PROGRAM [ARGS…]`: runs PROGRAM as an MCP stdio server and copies both directions of
//! the conversation, line by line, into LOG (`C <line>` client→server, `S <line>` server→client),
//! so wire tests can validate every message a client exchanged against the official schemas.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(log), Some(program)) = (args.next(), args.next()) else {
        eprintln!("usage: tap LOG PROGRAM [ARGS...]");
        std::process::exit(2);
    };
    let log = Arc::new(Mutex::new(
        std::fs::File::create(&log).expect("create the tap log"),
    ));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the tapped server");
    let mut child_in = child.stdin.take().expect("stdin");
    let child_out = child.stdout.take().expect("stdout");
    let l2 = log.clone();
    let up = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().split(b'\n') {
            let Ok(line) = line else { break };
            if let Ok(mut f) = l2.lock() {
                let _ = f.write_all(b"C ");
                let _ = f.write_all(&line);
                let _ = f.write_all(b"\n");
            }
            if child_in.write_all(&line).is_err() || child_in.write_all(b"\n").is_err() {
                break;
            }
            let _ = child_in.flush();
        }
    });
    let mut stdout = std::io::stdout();
    for line in BufReader::new(child_out).split(b'\n') {
        let Ok(line) = line else { break };
        if let Ok(mut f) = log.lock() {
            let _ = f.write_all(b"S ");
            let _ = f.write_all(&line);
            let _ = f.write_all(b"\n");
        }
        if stdout.write_all(&line).is_err() || stdout.write_all(b"\n").is_err() {
            break;
        }
        let _ = stdout.flush();
    }
    drop(up);
    let status = child.wait().map(|s| s.code().unwrap_or(1)).unwrap_or(1);
    std::process::exit(status);
}
