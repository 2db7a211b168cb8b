//! The bindings only adapt (STYLE "The shape of mcpcore"): the client-side protocol rules the
//! C ABI, Python and Node once each wrote for themselves now live once in core, and this test
//! fails when a binding writes one again. Checked on the source text of
//! `bindings/python/python/mcpcore/*.py`, `bindings/node/lib/*.{cjs,js}`,
//! `bindings/{python,node}/src/*.rs` and `ffi/src/*.rs`, with comments and docstrings removed
//! (documentation may name anything):
//!
//! * the server→client callback methods (`sampling/createMessage`, `elicitation/create`,
//!   `roots/list`) as a literal: core's `ClientCallback` table routes them, the bindings name a
//!   callback by its capability (`"sampling"`). The only literals left are in [`ALLOWED`];
//! * `-32601`/`-32603` as a number: the answers of an unset or failing callback are core's
//!   (`CallbackSlot`, `callback_error`);
//! * `TaskCallOutcome` or its variants: a task call's JSON is `TaskCallOutcome::to_json`;
//! * `Era::Legacy`/`Era::Modern` and, in Rust, the era names `"legacy"`/`"modern"` as a whole
//!   literal: the names are `Era::as_str`.
//!
//! `MCPCORE_LAYERING_REPO` points the checks at another checkout.

use std::path::{Path, PathBuf};

/// What may stay, each `(file, needle, how many)`, with why. The methods are the *server*
/// context's "ask the client" helpers (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`), which
/// send the request rather than route it; the -32603 is the Python server's answer for a
/// `ToolError` raised outside a tool. Both belong to the server side, and go when core's
/// request context gains typed helpers and the server's error mapping moves into core.
const ALLOWED: &[(&str, &str, usize)] = &[
    ("bindings/python/python/mcpcore/server.py", "-32603", 1),
    (
        "bindings/python/python/mcpcore/context.py",
        "elicitation/create",
        1,
    ),
    (
        "bindings/python/python/mcpcore/context.py",
        "sampling/createMessage",
        1,
    ),
    ("bindings/python/python/mcpcore/context.py", "roots/list", 1),
    ("bindings/node/lib/context.cjs", "elicitation/create", 1),
    ("bindings/node/lib/context.cjs", "sampling/createMessage", 1),
    ("bindings/node/lib/context.cjs", "roots/list", 1),
];

const CALLBACK_METHODS: &[&str] = &["sampling/createMessage", "elicitation/create", "roots/list"];

/// The repository checked: this one, or `MCPCORE_LAYERING_REPO` (another checkout, e.g. to
/// see the checks fail on a revision before the rules moved into core).
fn repo() -> PathBuf {
    match std::env::var_os("MCPCORE_LAYERING_REPO") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// `(path relative to the repository, text)` of the files in `dir` ending in one of `exts`.
fn files(dir: &str, exts: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(repo().join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
    for e in entries {
        let p = e.expect("directory entry").path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        if exts.iter().any(|x| name.ends_with(x)) && !name.ends_with(".d.ts") {
            let text = std::fs::read_to_string(&p).expect("read source");
            out.push((format!("{dir}/{name}"), text));
        }
    }
    assert!(!out.is_empty(), "no sources in {dir}");
    out.sort();
    out
}

/// Python code without `#` comments and triple-quoted strings (docstrings).
fn python_code(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(at) = rest.find("\"\"\"") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 3..];
        rest = rest.find("\"\"\"").map_or("", |end| &rest[end + 3..]);
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// JavaScript or Rust code without `/* … */` blocks and `//` comment lines (doc comments too).
fn c_like_code(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        rest = rest.find("*/").map_or("", |end| &rest[end + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every binding source as `(path, code)`.
fn binding_code() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (p, t) in files("bindings/python/python/mcpcore", &[".py"]) {
        out.push((p, python_code(&t)));
    }
    for dir in [
        "bindings/node/lib",
        "bindings/python/src",
        "bindings/node/src",
        "ffi/src",
    ] {
        for (p, t) in files(dir, &[".cjs", ".js", ".rs"]) {
            out.push((p, c_like_code(&t)));
        }
    }
    out
}

/// How often `word` occurs in `code` as a whole literal: `"word"` or `'word'`.
fn literal_count(code: &str, word: &str) -> usize {
    ['"', '\'']
        .iter()
        .map(|q| code.matches(&format!("{q}{word}{q}")).count())
        .sum()
}

/// How often `needle` occurs: a JSON-RPC code (`-32601`) anywhere, a method as a literal.
fn occurrences(code: &str, needle: &str) -> usize {
    if needle.starts_with('-') {
        code.matches(needle).count()
    } else {
        literal_count(code, needle)
    }
}

fn allowed(path: &str, needle: &str) -> usize {
    ALLOWED
        .iter()
        .find(|(p, l, _)| *p == path && *l == needle)
        .map_or(0, |(_, _, n)| *n)
}

#[test]
fn bindings_do_not_route_client_callbacks() {
    let mut found = Vec::new();
    for (path, code) in binding_code() {
        for needle in CALLBACK_METHODS.iter().chain(&["-32601", "-32603"]) {
            let (n, ok) = (occurrences(&code, needle), allowed(&path, needle));
            if n > ok {
                found.push(format!("{path}: {needle:?} {n} times (allowed {ok})"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a binding routes client callbacks or answers for them itself (core's ClientCallback, \
         CallbackSlot and callback_error do):\n{}",
        found.join("\n")
    );
}

#[test]
fn bindings_take_task_outcomes_and_era_names_from_core() {
    let mut found = Vec::new();
    for (path, code) in binding_code() {
        for ident in ["TaskCallOutcome", "Era::Legacy", "Era::Modern"] {
            if code.contains(ident) {
                found.push(format!("{path}: {ident}"));
            }
        }
        for era in ["legacy", "modern"] {
            if path.ends_with(".rs") && literal_count(&code, era) > 0 {
                found.push(format!("{path}: {era:?}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a binding shapes a task outcome or names an era itself (use \
         TaskCallOutcome::to_json and Era::as_str):\n{}",
        found.join("\n")
    );
}

/// The allow-list is exact: each entry is still needed (so it cannot hide a new literal).
#[test]
fn every_allowed_literal_is_still_there() {
    let code = binding_code();
    for (path, lit, n) in ALLOWED {
        let (_, text) = code
            .iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("{path} is gone: drop its ALLOWED entries"));
        assert_eq!(
            occurrences(text, lit),
            *n,
            "{path}: {lit:?} (update ALLOWED)"
        );
    }
}

#[test]
fn the_strippers_keep_code_and_drop_docs() {
    let py = python_code("x = 'roots/list'\n\"\"\"``\"roots/list\"``\"\"\"\n# \"roots/list\"\n");
    assert_eq!(literal_count(&py, "roots/list"), 1);
    let js = c_like_code("/** 'roots/list' */\n// \"roots/list\"\nf(\"roots/list\");\n");
    assert_eq!(literal_count(&js, "roots/list"), 1);
}
