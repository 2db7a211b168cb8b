//! Turns the Rust blocks of the README and the user guide (`docs/src`) into a module the
//! `doc_blocks` test compiles and runs (see `src/lib.rs`).

#[path = "src/lib.rs"]
#[allow(dead_code)]
mod doc_blocks;

use std::path::{Path, PathBuf};

/// The documents whose blocks are checked: the README, the package READMEs the guide includes,
/// and every chapter of the guide.
fn documents(root: &Path) -> Vec<PathBuf> {
    const PACKAGES: [&str; 4] = [
        "README.md",
        "ffi/README.md",
        "bindings/python/README.md",
        "bindings/node/README.md",
    ];
    let mut docs: Vec<PathBuf> = PACKAGES.iter().map(|d| root.join(d)).collect();
    let guide = root.join("docs/src");
    println!("cargo:rerun-if-changed={}", guide.display());
    if let Ok(entries) = std::fs::read_dir(&guide) {
        let mut chapters: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        chapters.sort();
        docs.extend(chapters);
    }
    docs
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .ancestors()
        .nth(2)
        .expect("docs/blocks sits in the workspace")
        .to_owned();
    let mut blocks = Vec::new();
    for doc in documents(&root) {
        println!("cargo:rerun-if-changed={}", doc.display());
        let text =
            std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        blocks.extend(doc_blocks::extract(&name, &text).unwrap_or_else(|e| panic!("{e}")));
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("doc_blocks.rs");
    std::fs::write(&out, doc_blocks::rust_source(&blocks))
        .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
