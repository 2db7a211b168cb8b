//! The vendored copies of shared material (`spec/*/schema.json`, `conformance/run.sh`) must match
//! the shared originals beside the checkout whenever those are present, so a clone placed anywhere
//! (where only the copies exist) runs exactly the checks a clone beside `../shared` runs.

use mcpcore_tests::workspace_root;

#[test]
fn vendored_copies_match_the_shared_originals() {
    let root = workspace_root();
    let shared = root.join("../shared");
    let pairs = [
        ("spec/2025-11-25/schema.json", "spec/2025-11-25/schema.json"),
        ("spec/2026-07-28/schema.json", "spec/2026-07-28/schema.json"),
        ("conformance/run.sh", "conformance/run.sh"),
    ];
    for (ours, theirs) in pairs {
        let copy = std::fs::read(root.join(ours)).unwrap_or_else(|e| panic!("{ours}: {e}"));
        assert!(!copy.is_empty(), "{ours} is empty");
        match std::fs::read(shared.join(theirs)) {
            Ok(original) => assert!(
                copy == original,
                "{ours} differs from ../shared/{theirs}: copy it again"
            ),
            Err(_) => eprintln!("../shared/{theirs} not present; using the vendored copy"),
        }
    }
}
