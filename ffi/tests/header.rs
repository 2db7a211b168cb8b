//! The checked-in C header must equal what the pinned cbindgen generates from `ffi/src`.
//! `UPDATE_HEADER=1` rewrites it instead of failing.

use std::path::PathBuf;

#[test]
fn header_matches_cbindgen_output() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../include/mcpcore.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("header is UTF-8");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&header, &generated).expect("write include/mcpcore.h");
        return;
    }
    let current = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        current == generated,
        "include/mcpcore.h is out of date with ffi/src; run `UPDATE_HEADER=1 cargo test -p mcpcore-ffi --test header` and commit the result"
    );
}
