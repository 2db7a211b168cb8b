//! The bindings only adapt (STYLE "The shape of mcpcore"): result shaping (a tool value as
//! `CallToolResult`, bytes as image/audio blocks, resource contents and their default MIME
//! types, the MCP Apps MIME type, completion `total`/`hasMore`) lives once, in
//! `core/src/server/shape.rs`. This test fails when a binding's code names one of those shapes
//! again. Comments, docstrings and Rust `//` docs are not code and are not checked.
//!
//! Allowed, with why:
//! * `python/mcpcore/results.py` names `structuredContent` and `isError`: `ToolResult` is the
//!   Python spelling of a *whole* CallToolResult the user builds (snake_case keyword arguments
//!   marshalled to the wire's camelCase keys); core passes a whole result through unchanged.

use std::path::{Path, PathBuf};

/// Strings that spell a result shape core owns.
const FORBIDDEN: &[&str] = &[
    "structuredContent",
    "isError",
    "hasMore",
    "\"total\"",
    "'total'",
    "mcp-app",
    "\"image\"",
    "'image'",
    "\"audio\"",
    "'audio'",
    "text/plain",
    "application/octet-stream",
    "\"contents\"",
    "'contents'",
    "contents:",
    "\"blob\"",
    "'blob'",
];

/// (file name, string, why) pairs that may appear.
const ALLOWED: &[(&str, &str)] = &[
    ("results.py", "structuredContent"),
    ("results.py", "isError"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// The code of a file: comments, Python docstrings and Rust doc comments removed.
fn code(text: &str, python: bool) -> String {
    let mut out = String::new();
    let mut in_doc = false;
    let mut in_block = false;
    for line in text.lines() {
        let t = line.trim_start();
        if python {
            let quotes = t.matches("\"\"\"").count();
            if in_doc {
                if quotes % 2 == 1 {
                    in_doc = false;
                }
                continue;
            }
            if t.starts_with("\"\"\"") || t.starts_with("r\"\"\"") {
                in_doc = quotes % 2 == 1;
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
        } else {
            if in_block {
                if t.contains("*/") {
                    in_block = false;
                }
                continue;
            }
            if t.starts_with("/*") {
                in_block = !t.contains("*/");
                continue;
            }
            if t.starts_with("//") || t.starts_with('*') {
                continue;
            }
        }
        let kept = if python {
            line.split(" # ").next().unwrap_or(line)
        } else {
            line.split(" // ").next().unwrap_or(line)
        };
        out.push_str(kept);
        out.push('\n');
    }
    out
}

fn violations() -> Vec<String> {
    let r = root();
    let mut found = Vec::new();
    let sets: [(PathBuf, &str, bool); 4] = [
        (r.join("bindings/python/python/mcpcore"), "py", true),
        (r.join("bindings/node/lib"), "cjs", false),
        (r.join("bindings/python/src"), "rs", false),
        (r.join("bindings/node/src"), "rs", false),
    ];
    for (dir, ext, python) in sets {
        let mut paths = Vec::new();
        files(&dir, ext, &mut paths);
        assert!(!paths.is_empty(), "no .{ext} files in {}", dir.display());
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let text = std::fs::read_to_string(&p).expect("readable source");
            let c = code(&text, python);
            for s in FORBIDDEN {
                if c.contains(s) && !ALLOWED.contains(&(name, s)) {
                    found.push(format!("{} names {s}", p.display()));
                }
            }
        }
    }
    found
}

#[test]
fn bindings_leave_result_shapes_to_core() {
    let v = violations();
    assert!(
        v.is_empty(),
        "result shaping belongs in core/src/server/shape.rs:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_scanner_skips_docs_but_sees_code() {
    let py = "\"\"\"Returns ``{\"type\": \"image\"}``.\n\nMore.\"\"\"\nx = 1  # \"image\"\ny = {\"type\": \"audio\"}\n";
    let c = code(py, true);
    assert!(!c.contains("\"image\""), "{c}");
    assert!(c.contains("\"audio\""), "{c}");
    let js = "/** `hasMore: true` */\n// structuredContent\nconst r = { hasMore: true };\n";
    let c = code(js, false);
    assert!(
        c.contains("hasMore") && !c.contains("structuredContent"),
        "{c}"
    );
}
