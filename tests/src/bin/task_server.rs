//! `task-server legacy|modern`: the scripted tasks server of [`mcpcore_tests::tasks_script`]
//! over stdio, for the client's task tests (REQUIREMENTS TASK-L01, TASK-M01…M04).

use mcpcore_tests::tasks_script::TaskScript;
use serde_json::Value;
use std::io::{BufRead, Write};

fn main() {
    let modern = std::env::args().nth(1).as_deref() == Some("modern");
    let mut script = TaskScript::new(modern);
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        for m in script.handle(&msg) {
            let _ = writeln!(out, "{m}");
        }
        let _ = out.flush();
    }
}
