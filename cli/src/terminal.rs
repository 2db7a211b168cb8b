//! What the person at the terminal sees and answers: JSON on stdout (indented on a terminal,
//! one line when piped), progress and server logs on stderr, and elicitation questions asked on
//! stderr and answered on stdin (ELIC-*: a form's fields one by one, or a URL to visit).

use mcpcore::ErrorObject;
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};

/// How JSON is printed.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    pub pretty: bool,
}

impl Style {
    pub fn of(c: &crate::ConnArgs) -> Self {
        let pretty = c.pretty || (!c.compact && std::io::stdout().is_terminal());
        Self { pretty }
    }

    /// Print `v` on stdout, whole, then flush (a reader of a pipe sees each line at once).
    pub fn print(self, v: &Value) {
        let text = if self.pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        }
        .unwrap_or_default();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
}

/// A progress notification of the running call, on stderr.
pub(crate) fn progress(done: f64, total: Option<f64>, message: Option<String>) {
    let total = total.map(|t| format!("/{t}")).unwrap_or_default();
    let message = message.map(|m| format!(" {m}")).unwrap_or_default();
    eprintln!("progress: {done}{total}{message}");
}

/// Notifications outside any call: the server's log messages go to stderr.
pub(crate) fn notification(method: &str, params: &Value) {
    if method == "notifications/message" {
        eprintln!("{}", log_line(params));
    }
}

/// `[level] logger: data` of a `notifications/message`.
pub(crate) fn log_line(params: &Value) -> String {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .unwrap_or("info");
    let logger = params
        .get("logger")
        .and_then(Value::as_str)
        .map(|l| format!(" {l}:"))
        .unwrap_or_default();
    let data = match params.get("data") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    format!("[{level}]{logger} {data}")
}

/// One line from stdin (`None` at its end), read off the runtime's threads.
async fn read_line(prompt: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        let stdin = std::io::stdin();
        let read = stdin.lock().read_line(&mut line);
        if !stdin.is_terminal() {
            // Piped answers are not echoed: end the prompt's line.
            eprintln!();
        }
        match read {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

/// One question at a time, even when the server asks several at once.
static ASKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Answer an `elicitation/create` at the terminal.
pub(crate) async fn elicit(params: Value) -> Result<Value, ErrorObject> {
    let _turn = ASKING.lock().await;
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    eprintln!("The server asks: {message}");
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        let url = params.get("url").and_then(Value::as_str).unwrap_or("");
        eprintln!("  Open {url}");
        let answer = read_line("  Press Enter when done, or type `decline`: ".into()).await;
        return Ok(match answer.as_deref().map(str::trim) {
            None => json!({"action": "cancel"}),
            Some("decline") => json!({"action": "decline"}),
            Some(_) => json!({"action": "accept"}),
        });
    }
    eprintln!("  (answer `!decline` to decline; end of input cancels)");
    let schema = params.get("requestedSchema").cloned().unwrap_or(json!({}));
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, prop) in props {
        match ask_field(name, prop, required.contains(&name.as_str())).await {
            Field::Value(v) => {
                content.insert(name.clone(), v);
            }
            Field::Skip => {}
            Field::Decline => return Ok(json!({"action": "decline"})),
            Field::Cancel => return Ok(json!({"action": "cancel"})),
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

enum Field {
    Value(Value),
    Skip,
    Decline,
    Cancel,
}

/// Ask for one field of a form until the answer fits its type (three tries).
async fn ask_field(name: &str, prop: &Value, required: bool) -> Field {
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
    let title = prop.get("title").and_then(Value::as_str).unwrap_or(name);
    let choices: Vec<String> = prop
        .get("enum")
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut hint = ty.to_owned();
    if !choices.is_empty() {
        hint = choices.join("|");
    }
    if let Some(d) = prop.get("description").and_then(Value::as_str) {
        hint = format!("{hint}; {d}");
    }
    let default = prop.get("default").cloned();
    let shown_default = default
        .as_ref()
        .map(|d| format!(" [{}]", d.as_str().map_or(d.to_string(), str::to_owned)))
        .unwrap_or_default();
    let need = if required { ", required" } else { "" };
    for _ in 0..3 {
        let Some(line) = read_line(format!("  {title} ({hint}{need}){shown_default}: ")).await
        else {
            return Field::Cancel;
        };
        let line = line.trim();
        if line == "!decline" {
            return Field::Decline;
        }
        if line.is_empty() {
            match (&default, required) {
                (Some(d), _) => return Field::Value(d.clone()),
                (None, false) => return Field::Skip,
                (None, true) => {
                    eprintln!("  {title} is required");
                    continue;
                }
            }
        }
        match typed(line, ty, &choices) {
            Some(v) => return Field::Value(v),
            None => eprintln!("  not a valid {hint}"),
        }
    }
    Field::Decline
}

/// An answer read as the field's type.
fn typed(line: &str, ty: &str, choices: &[String]) -> Option<Value> {
    match ty {
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Some(json!(true)),
            "n" | "no" | "false" | "0" => Some(json!(false)),
            _ => None,
        },
        "integer" => line.parse::<i64>().ok().map(Value::from),
        "number" => line
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Value::from),
        _ if !choices.is_empty() => choices
            .iter()
            .any(|c| c == line)
            .then(|| Value::String(line.to_owned())),
        _ => Some(Value::String(line.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_the_field_types() {
        assert_eq!(typed("Yes", "boolean", &[]), Some(json!(true)));
        assert_eq!(typed("0", "boolean", &[]), Some(json!(false)));
        assert_eq!(typed("maybe", "boolean", &[]), None);
        assert_eq!(typed("42", "integer", &[]), Some(json!(42)));
        assert_eq!(typed("4.5", "integer", &[]), None);
        assert_eq!(typed("4.5", "number", &[]), Some(json!(4.5)));
        assert_eq!(typed("NaN", "number", &[]), None);
        let colours = ["red".to_owned(), "blue".to_owned()];
        assert_eq!(typed("red", "string", &colours), Some(json!("red")));
        assert_eq!(typed("green", "string", &colours), None);
    }

    #[test]
    fn log_lines_name_level_and_logger() {
        let p = json!({"level": "warning", "logger": "db", "data": "slow"});
        assert_eq!(log_line(&p), "[warning] db: slow");
        assert_eq!(
            log_line(&json!({"level": "info", "data": {"n": 1}})),
            "[info] {\"n\":1}"
        );
    }
}
