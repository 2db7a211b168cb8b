//! Every Rust block of the README and the user guide compiles (the build script turned them into
//! `doc_blocks.rs`), and every block not marked `no_run` runs to completion. The Python,
//! JavaScript and C blocks are checked by `scripts/doc_blocks.py`.

use std::process::Command;
use std::time::Duration;

use mcpcore_doc_blocks::{extract, rust_source};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/doc_blocks.rs"));
}

/// Each runnable block finishes without an error within a bound (a block that waits forever
/// must say `no_run`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documented_rust_blocks_run() {
    assert!(
        generated::BLOCKS.len() >= 5,
        "the README and guide hold Rust blocks: {:?}",
        generated::BLOCKS
    );
    for (i, (name, runs)) in generated::BLOCKS.iter().enumerate() {
        if !runs {
            continue;
        }
        match tokio::time::timeout(Duration::from_secs(30), generated::run(i)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("{name}: the block failed: {e}"),
            Err(_) => panic!("{name}: the block did not finish in 30 s (mark it no_run?)"),
        }
    }
}

/// The pipeline refuses a broken block: a markdown file with one good and one broken
/// (std-only) block, wrapped as the build script wraps them, compiled by rustc: the good one
/// alone compiles, with the broken one the error names the block's line.
#[test]
fn a_broken_block_fails_the_check() {
    let good = "Text.\n\n```rust\nlet n: u32 = \"4\".parse()?;\nassert_eq!(n, 4);\n```\n";
    let broken = "\n```rust no_run\nlet n: u32 = \"four\";\n```\n";
    let dir = std::env::temp_dir().join(format!("mcpcore-doc-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let compile = |md: &str| {
        let blocks = extract("guide.md", md).expect("fences close");
        let src = dir.join("blocks.rs");
        std::fs::write(&src, rust_source(&blocks)).expect("write");
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        Command::new(rustc)
            .args([
                "--edition",
                "2021",
                "--crate-type",
                "lib",
                "--emit",
                "metadata",
            ])
            .arg("--out-dir")
            .arg(&dir)
            .arg(&src)
            .output()
            .expect("rustc runs")
    };
    let ok = compile(good);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let bad = compile(&format!("{good}{broken}"));
    assert!(!bad.status.success(), "a broken block compiled");
    let src = std::fs::read_to_string(dir.join("blocks.rs")).expect("read");
    assert!(src.contains("// guide.md:8"), "{src}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An unterminated fence is refused rather than silently ending the check.
#[test]
fn an_unclosed_fence_is_refused() {
    let e = extract("x.md", "a\n```rust\nlet x = 1;\n").expect_err("unclosed");
    assert!(e.contains("x.md:2"), "{e}");
}
