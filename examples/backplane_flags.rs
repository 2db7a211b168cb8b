//! `--redis URL`, `--redis-prefix P` and `--request-state-key [ID:]BASE64`, which the example
//! servers share: serve as one worker of several behind a load balancer, sharing state through
//! Redis (guide: docs/src/scaleout.md; `Backplane::redis`, `ServerBuilder::backplane`,
//! `ServerBuilder::request_state_keys`). The workers must be given the same request-state keys:
//! none is ever kept in Redis, where anyone who can read it could forge states (MRTR-06).

use mcpcore::backplane::Backplane;
use mcpcore::security::KeyRing;
use mcpcore::server::ServerBuilder;

/// The environment variable read when no `--request-state-key` is given (same syntax, several
/// keys separated by commas), so a key need not appear in a process listing.
pub const KEY_ENV: &str = "MCPCORE_REQUEST_STATE_KEY";

/// Usage lines for the flags.
pub const USAGE: &str = concat!(
    "  --redis URL              share state with the other workers through Redis (redis://host:port/db)\n",
    "  --redis-prefix P         key prefix in Redis (default mcp:), to share one database between deployments\n",
    "  --request-state-key [ID:]BASE64\n",
    "                           a 32-byte key sealing requestState, the same on every worker (needed with\n",
    "                           --redis; repeat to rotate: the first seals, the others only open; or set\n",
    "                           MCPCORE_REQUEST_STATE_KEY, comma-separated)\n",
);

/// What the flags configure: the backplane and the key ring every worker shares.
pub struct Shared {
    backplane: Backplane,
    keys: KeyRing,
}

impl Shared {
    /// Configure `b` to share through the backplane with the given keys.
    pub fn apply(self, b: ServerBuilder) -> ServerBuilder {
        b.backplane(self.backplane).request_state_keys(self.keys)
    }
}

/// Remove the flags from `args`. Returns the remaining arguments and what they configure, when
/// `--redis` was given.
///
/// # Errors
/// A flag without a value, an invalid URL or key, a prefix or key without `--redis`, or
/// `--redis` without a key (flag or environment).
pub fn take(args: Vec<String>) -> Result<(Vec<String>, Option<Shared>), String> {
    let mut rest = Vec::new();
    let (mut url, mut prefix, mut keys) = (None, None, Vec::new());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--redis" => url = Some(it.next().ok_or("--redis needs a URL")?),
            "--redis-prefix" => prefix = Some(it.next().ok_or("--redis-prefix needs a value")?),
            "--request-state-key" => {
                keys.push(it.next().ok_or("--request-state-key needs [ID:]BASE64")?)
            }
            _ => rest.push(a),
        }
    }
    let Some(url) = url else {
        return match (prefix, keys.is_empty()) {
            (Some(_), _) => Err("--redis-prefix needs --redis".into()),
            (None, false) => Err("--request-state-key needs --redis".into()),
            (None, true) => Ok((rest, None)),
        };
    };
    if keys.is_empty() {
        let env = std::env::var(KEY_ENV).unwrap_or_default();
        keys = env
            .split(',')
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let keys = ring(&keys)?;
    let mut backplane = Backplane::redis(&url).map_err(|e| format!("--redis: {e}"))?;
    if let Some(p) = prefix {
        backplane = backplane.with_prefix(&p);
    }
    Ok((rest, Some(Shared { backplane, keys })))
}

/// The ring of `[ID:]BASE64` specs, current key first (core's `KeyRing::from_specs`).
fn ring(specs: &[String]) -> Result<KeyRing, String> {
    KeyRing::from_specs(specs)
        .map_err(|e| format!("--request-state-key: {e}"))?
        .ok_or_else(|| {
            format!(
                "--redis needs --request-state-key [ID:]BASE64 (or {KEY_ENV}): every worker must \
                 seal requestState with the same configured key"
            )
        })
}
