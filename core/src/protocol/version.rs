//! Protocol versions and the two eras they fall into (REQUIREMENTS §0.1).

/// Which era a connection (or one request) speaks. The server's per-connection era lock and the
/// client's negotiated era are both this type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// The `initialize` handshake (2024-11-05 … 2025-11-25).
    Legacy,
    /// The stateless era (2026-07-28): `server/discover` and the per-request envelope.
    Modern,
}

impl Era {
    /// The era's name as every binding exposes it: `"legacy"` or `"modern"` (the names
    /// `ConnectMode` takes too).
    pub const fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// Versions the `initialize` handshake negotiates, oldest first.
pub const LEGACY_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The newest handshake-era version: the counter-offer for anything unknown.
pub const LATEST_LEGACY: &str = "2025-11-25";
/// Modern (stateless) versions this engine serves.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// The newest modern version.
pub const LATEST_MODERN: &str = "2026-07-28";
/// The version a Streamable HTTP request without `MCP-Protocol-Version` is read as (HTTP-11).
pub const HTTP_DEFAULT_VERSION: &str = "2025-03-26";
/// The only version in which JSON-RPC batches were allowed (JR-06).
pub const BATCH_VERSION: &str = "2025-03-26";
/// The first stateless version: the era boundary (§0.1).
const FIRST_MODERN: &str = "2026-07-28";

/// True when `v` has the shape of a protocol version: an ISO date `YYYY-MM-DD` with a month in
/// 01–12 and a day in 01–31. Anything else (`bogus`, `2026-07-28x`, `9999`) names no version.
pub fn is_well_formed(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let num = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&num(5)) && (1..=31).contains(&num(8))
}

/// A version string is modern iff it is a well-formed version (an ISO date) that sorts at or
/// after 2026-07-28 (§0.1: ISO dates sort as strings). A malformed value is no version at all,
/// so it is never modern: comparing it as a string would make `bogus` (which sorts after any
/// digit) count as modern.
pub fn is_modern(v: &str) -> bool {
    is_well_formed(v) && v >= FIRST_MODERN
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

    #[test]
    fn malformed_versions_are_never_modern() {
        for v in [
            "bogus",
            "",
            "2026-07-28x",
            " 2026-07-28",
            "2026-7-28",
            "2026/07/28",
            "2026-13-01",
            "2026-00-10",
            "2026-07-32",
            "20260728",
            "９９９９-01-01",
            "a026-07-28",
        ] {
            assert!(!is_modern(v), "{v:?}");
        }
        assert!(LEGACY_VERSIONS
            .iter()
            .chain(MODERN_VERSIONS)
            .all(|v| is_well_formed(v)));
    }
}
