//! The Rust code blocks of the README and the user guide, turned into code this crate
//! compiles (this crate's build script) and runs (`tests/doc_blocks.rs`), so a documented example cannot
//! rot. `scripts/doc_blocks.py` does the same for the Python, JavaScript and C blocks.
//!
//! A block is fenced with three backticks and an info string whose first word is its language.
//! Flags after it: `no_run` (compiled, not run: it serves forever or needs a peer) and `ignore`
//! (neither; for output and pseudo-code). A Rust block with its own `fn main` is compiled as a
//! module; any other block becomes the body of an `async fn` returning
//! `Result<(), Box<dyn Error>>`, so it may use `?` and `.await` at its top level as a reader
//! would inside their own `main`.
//!
//! Lines of a Rust block that start with `# ` (or are a lone `#`) are compiled but hidden, as in
//! rustdoc and mdBook: the context a fragment needs (a `use`, a stand-in value) without
//! distracting the reader. The README's blocks use none.
//!
//! This file is also the crate's build script's (`#[path]`): it uses std only.

use std::fmt::Write as _;

/// One fenced block of a markdown file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The markdown file, as given to [`extract`].
    pub file: String,
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The language (first word of the info string, lower-case).
    pub lang: String,
    /// The words after the language.
    pub flags: Vec<String>,
    /// The code between the fences.
    pub code: String,
}

impl Block {
    /// Whether the block carries `flag` (`no_run`, `ignore`).
    pub fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// Every fenced block of `text` (a markdown file named `file`). An unterminated fence is an
/// error: the rest of the file would silently stop being checked.
pub fn extract(file: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, Vec<String>, String, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        let indent = raw.len() - trimmed.len();
        match open.as_mut() {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let info = info.replace(',', " ");
                    let mut words = info.split_whitespace().map(str::to_owned);
                    let lang = words.next().unwrap_or_default().to_lowercase();
                    let prefix = " ".repeat(indent);
                    open = Some((i + 1, lang, words.collect(), prefix, String::new()));
                }
            }
            Some((line, lang, flags, prefix, code)) => {
                if trimmed.starts_with("```") {
                    blocks.push(Block {
                        file: file.to_owned(),
                        line: *line,
                        lang: std::mem::take(lang),
                        flags: std::mem::take(flags),
                        code: std::mem::take(code),
                    });
                    open = None;
                } else {
                    code.push_str(raw.strip_prefix(prefix.as_str()).unwrap_or(raw));
                    code.push('\n');
                }
            }
        }
    }
    match open {
        Some((line, ..)) => Err(format!("{file}:{line}: a code fence is never closed")),
        None => Ok(blocks),
    }
}

/// The code of a Rust block with its hidden lines revealed (`# x` → `x`, `#` → empty).
pub fn reveal(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for line in code.lines() {
        let t = line.trim_start();
        let shown = if t == "#" {
            ""
        } else if let Some(rest) = t.strip_prefix("# ") {
            rest
        } else {
            line
        };
        out.push_str(shown);
        out.push('\n');
    }
    out
}

/// Whether `block` is a Rust block this crate compiles.
pub fn is_rust(block: &Block) -> bool {
    block.lang == "rust" && !block.has("ignore")
}

/// Whether a compiled Rust block is also run.
pub fn runs(block: &Block) -> bool {
    !block.has("no_run") && !has_main(&reveal(&block.code))
}

fn has_main(code: &str) -> bool {
    code.contains("fn main(")
}

/// Rust source for `blocks` (Rust blocks only; others are skipped): one module per block and
/// `run(i)`, which runs the `i`-th runnable block. `BLOCKS` names each block by `file:line`
/// with whether it runs.
pub fn rust_source(blocks: &[Block]) -> String {
    let mut out = String::from(
        "// Generated from the documentation's Rust blocks (docs/blocks/src/lib.rs).\n\
         type BlockError = Box<dyn std::error::Error>;\n",
    );
    let mut names = Vec::new();
    for (n, b) in blocks.iter().filter(|b| is_rust(b)).enumerate() {
        let _ = writeln!(out, "\n// {}:{}", b.file, b.line);
        let _ = writeln!(
            out,
            "#[allow(unused, dead_code, clippy::all, clippy::pedantic)]\npub mod b{n} {{"
        );
        let code = reveal(&b.code);
        if has_main(&code) {
            out.push_str(&code);
        } else {
            // The `;` ends a block whose last line is an expression (a handler value).
            out.push_str("pub async fn run() -> Result<(), super::BlockError> {\n");
            out.push_str(&code);
            out.push_str(";\n#[allow(unreachable_code)]\nOk(())\n}\n");
        }
        out.push_str("}\n");
        names.push((n, format!("{}:{}", b.file, b.line), runs(b)));
    }
    out.push_str("\n/// Every Rust block: where it is written, and whether it runs.\n");
    out.push_str("pub const BLOCKS: &[(&str, bool)] = &[\n");
    for (_, name, run) in &names {
        let _ = writeln!(out, "    ({name:?}, {run}),");
    }
    out.push_str("];\n\n/// Run the `i`-th block of `BLOCKS` (a block that does not run is Ok).\n");
    out.push_str("pub async fn run(i: usize) -> Result<(), BlockError> {\n    match i {\n");
    for (n, _, run) in &names {
        if *run {
            let _ = writeln!(out, "        {n} => b{n}::run().await,");
        }
    }
    out.push_str("        _ => Ok(()),\n    }\n}\n");
    out
}
