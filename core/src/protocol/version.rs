//! Protocol versions (REQUIREMENTS §0.1).

/// Versions the `initialize` handshake negotiates, oldest first.
pub const LEGACY_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest handshake-era version: the counter-offer for anything unknown.
pub const LATEST_LEGACY: &str = "2025-11-25";
/// Modern (stateless) versions this engine serves.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// The newest modern version.
pub const LATEST_MODERN: &str = "2026-07-28";
/// The only version in which JSON-RPC batches were allowed (JR-06).
pub const BATCH_VERSION: &str = "2025-03-26";

/// A version string is modern iff it sorts at or after 2026-07-28 (ISO dates sort as strings).
pub fn is_modern(v: &str) -> bool {
    v >= LATEST_MODERN
}

/// True when the handshake can speak `v`.
pub fn is_legacy_supported(v: &str) -> bool {
    LEGACY_VERSIONS.contains(&v)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn era_of_versions() {
        assert!(is_modern("2026-07-28"));
        assert!(is_modern("2027-01-01"));
        assert!(!is_modern("2025-11-25"));
        assert!(is_legacy_supported("2025-03-26"));
        assert!(!is_legacy_supported("2026-07-28"));
    }
}
