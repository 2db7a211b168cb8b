//! The layering of `core` (STYLE "The shape of mcpcore": every protocol rule lives once, in the
//! protocol, server and client modules; transports only move bytes and streams), checked on the
//! source text:
//!
//! * a transport module (`core/src/transport/**`, `core/src/client/transport/**`) names no MCP
//!   method except those it must route itself, listed below with the reason;
//! * the server's transports read no `Server` internals (`server.inner…`), only its crate API;
//! * `protocol/` and `jsonrpc/` depend on no module above them; `client/` and `server/` never
//!   depend on each other; `server/` never depends on a transport.
//!
//! Comments and `#[cfg(test)] mod tests` blocks are not checked (tests may speak any method).
//! `MCPCORE_LAYERING_SRC` points the checks at another tree's `core/src`, e.g. an older revision
//! unpacked with `git archive <rev> core/src | tar -x -C /tmp/old`.

use std::path::{Path, PathBuf};

/// The MCP methods a transport may name, with why it must route each one itself.
const TRANSPORT_ROUTES: &[(&str, &str, &str)] = &[
    (
        "transport/http/legacy.rs",
        "initialize",
        "LHTTP-02: an initialize without Mcp-Session-Id is what mints a session, and the session \
         table is the transport's",
    ),
    (
        "transport/http/modern.rs",
        "subscriptions/listen",
        "SUB-05, HTTP-06: its answer is a long-lived SSE stream the transport holds, not a \
         request/response exchange",
    ),
    (
        "transport/http/auth.rs",
        "tools/call",
        "AUTH-02 (RFC 6750 §3.1): a tool's missing scopes are an HTTP 403 with a WWW-Authenticate \
         challenge, decided before the POST is dispatched, so the transport looks at which tool \
         it calls",
    ),
    (
        "client/transport/http.rs",
        "initialize",
        "LHTTP-02: the initialize response carries the Mcp-Session-Id the transport keeps",
    ),
    (
        "client/transport/http.rs",
        "notifications/initialized",
        "LHTTP-05: the standalone GET stream opens once the handshake is complete",
    ),
];

/// Prefixes of MCP method names (every method outside `initialize` and `ping` has one).
const METHOD_PREFIXES: &[&str] = &[
    "notifications/",
    "tools/",
    "prompts/",
    "resources/",
    "completion/",
    "logging/",
    "server/",
    "subscriptions/",
    "sampling/",
    "elicitation/",
    "roots/",
    "tasks/",
];

fn src_root() -> PathBuf {
    match std::env::var_os("MCPCORE_LAYERING_SRC") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src"),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries {
        let path = e.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// `(path relative to core/src, code)` of every file under `dir`.
fn sources(dir: &str) -> Vec<(String, String)> {
    let root = src_root();
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    // A test module kept in a file of its own (`#[cfg(test)] #[path = "x_tests.rs"] mod tests;`
    // or `x/tests.rs`) is a `#[cfg(test)] mod` block too: not checked.
    files.retain(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !(name == "tests.rs" || name.ends_with("_tests.rs"))
    });
    assert!(
        !files.is_empty(),
        "no sources under {}",
        root.join(dir).display()
    );
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read source");
            let rel = p
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, without_test_module(&text))
        })
        .collect()
}

/// The text before a trailing `#[cfg(test)] mod …` block.
fn without_test_module(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or("", |n| n.trim_start());
        if l.trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            return lines[..i].join("\n");
        }
    }
    text.to_owned()
}

/// What a scan of Rust source yields: the code with comments and literals blanked, and the
/// string literals.
struct Scan {
    code: String,
    strings: Vec<String>,
}

/// A small Rust lexer: enough to tell comments, string and char literals and lifetimes apart.
fn scan(src: &str) -> Scan {
    let c: Vec<char> = src.chars().collect();
    let (mut code, mut strings) = (String::new(), Vec::new());
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            i = skip_block_comment(&c, i);
            code.push(' ');
        } else if at(0) == '"' || (at(0) == 'b' && at(1) == '"') {
            let start = if at(0) == 'b' { i + 2 } else { i + 1 };
            let (lit, end) = quoted(&c, start);
            strings.push(lit);
            code.push_str("\"\"");
            i = end;
        } else if let Some(hashes) = raw_string_start(&c, i) {
            let (lit, end) = raw(&c, i, hashes);
            strings.push(lit);
            code.push_str("\"\"");
            i = end;
        } else if at(0) == '\'' {
            // A char literal ('x', '\n', '\'') or a lifetime ('a): only the former closes.
            let close = if at(1) == '\\' {
                // The escaped char is at i + 2; the closing quote follows it (or `\u{…}`).
                (i + 3..c.len().min(i + 14)).find(|&k| c[k] == '\'')
            } else if at(2) == '\'' {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(k) => {
                    code.push_str("' '");
                    i = k + 1;
                }
                None => {
                    code.push('\'');
                    i += 1;
                }
            }
        } else {
            code.push(c[i]);
            i += 1;
        }
    }
    Scan { code, strings }
}

fn skip_block_comment(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i + 1 < c.len() {
        if c[i] == '/' && c[i + 1] == '*' {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c[i + 1] == '/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    c.len()
}

/// A `"…"` literal from just after its opening quote: its text and the index after it.
fn quoted(c: &[char], mut i: usize) -> (String, usize) {
    let mut s = String::new();
    while i < c.len() {
        match c[i] {
            '\\' => {
                if let Some(&n) = c.get(i + 1) {
                    s.push(n);
                }
                i += 2;
            }
            '"' => return (s, i + 1),
            ch => {
                s.push(ch);
                i += 1;
            }
        }
    }
    (s, i)
}

/// `r"`, `r#"`, `br"`… at `i` (and not inside an identifier): the number of `#`.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let mut k = i;
    if c.get(k) == Some(&'b') {
        k += 1;
    }
    if c.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let hashes = c[k..].iter().take_while(|&&ch| ch == '#').count();
    (c.get(k + hashes) == Some(&'"')).then_some(hashes)
}

fn raw(c: &[char], i: usize, hashes: usize) -> (String, usize) {
    let open = (i..c.len()).find(|&k| c[k] == '"').unwrap_or(c.len()) + 1;
    let mut k = open;
    while k < c.len() {
        if c[k] == '"'
            && c[k + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return (c[open..k].iter().collect(), k + 1 + hashes);
        }
        k += 1;
    }
    (c[open..].iter().collect(), c.len())
}

/// True for a literal shaped like an MCP method name.
fn is_method_name(s: &str) -> bool {
    s == "initialize"
        || s == "ping"
        || METHOD_PREFIXES.iter().any(|p| {
            s.strip_prefix(p).is_some_and(|rest| {
                !rest.is_empty()
                    && rest
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '/')
            })
        })
}

/// Every method-shaped literal in the transport modules that the allow-list does not cover
/// (each allowed pair may appear once per file).
fn unrouted_method_names() -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["transport", "client/transport"] {
        for (path, text) in sources(dir) {
            let mut allowed: Vec<&str> = TRANSPORT_ROUTES
                .iter()
                .filter(|(p, _, _)| *p == path)
                .map(|(_, m, _)| *m)
                .collect();
            for lit in scan(&text)
                .strings
                .into_iter()
                .filter(|s| is_method_name(s))
            {
                match allowed.iter().position(|m| *m == lit) {
                    Some(i) => {
                        allowed.remove(i);
                    }
                    None => found.push(format!("{path}: \"{lit}\"")),
                }
            }
        }
    }
    found
}

/// Where code under `dir` names one of `paths` (as a whole path segment).
fn names(dir: &str, paths: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, text) in sources(dir) {
        let code = scan(&text).code;
        for p in paths {
            let hit = code.match_indices(p).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + p.len()..].chars().next();
                !before.is_some_and(|ch| ch.is_alphanumeric() || ch == '_')
                    && !after.is_some_and(|ch| ch.is_alphanumeric() || ch == '_')
            });
            if hit {
                found.push(format!("{file}: {p}"));
            }
        }
    }
    found
}

/// Items `lib.rs` re-exports from `server` at the crate root (a back door around
/// `crate::server`).
const SERVER_AT_ROOT: &[&str] = &[
    "crate::Server",
    "crate::ServerBuilder",
    "crate::ServerOptions",
    "crate::Handler",
    "crate::handler_fn",
    "crate::Outcome",
    "crate::InputRequired",
    "crate::RequestContext",
];

#[test]
fn transports_name_only_the_methods_they_route() {
    for (_, m, why) in TRANSPORT_ROUTES {
        assert!(is_method_name(m) && !why.is_empty());
    }
    let found = unrouted_method_names();
    assert!(
        found.is_empty(),
        "transport modules name MCP methods whose rules belong in protocol/, server/ or client/ \
         (route through them, or justify an entry in TRANSPORT_ROUTES):\n{}",
        found.join("\n")
    );
}

#[test]
fn transports_use_the_servers_crate_api_not_its_internals() {
    let found = names(
        "transport",
        &[
            "server.inner",
            "inner.registry",
            "inner.capabilities",
            "inner.options",
        ],
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn layers_depend_only_downwards() {
    let mut found = Vec::new();
    let mut upward = vec!["crate::server", "crate::client", "crate::transport"];
    upward.extend_from_slice(SERVER_AT_ROOT);
    for low in ["protocol", "jsonrpc"] {
        found.extend(names(low, &upward));
    }
    let mut server = vec!["crate::server"];
    server.extend_from_slice(SERVER_AT_ROOT);
    found.extend(names("client", &server));
    found.extend(names("server", &["crate::client", "crate::transport"]));
    assert!(
        found.is_empty(),
        "upward or sideways dependencies:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_sees_literals_but_not_comments() {
    let s = scan(
        "// \"tools/call\"\nlet a = \"initialize\"; /* \"ping\" */ let b = r#\"x\"y\"#;\n\
         let c = '\"'; let e = '\\\\'; fn f<'a>(x: &'a str) {} let d = b\"roots/list\";",
    );
    assert_eq!(s.strings, ["initialize", "x\"y", "roots/list"]);
    assert!(!s.code.contains("tools/call") && !s.code.contains("ping"));
    assert!(is_method_name("notifications/tools/list_changed"));
    assert!(!is_method_name("text/event-stream") && !is_method_name("tools/"));
}
