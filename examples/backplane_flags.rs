//! `--redis URL` and `--redis-prefix P`, which the example servers share: serve as one worker of
//! several behind a load balancer, sharing state through Redis (README "Scale-out on Redis";
//! `Backplane::redis`, `ServerBuilder::backplane`). Without a configured request-state key ring
//! the workers share one generated key kept in Redis, which is enough for tests; production
//! configures its keys.

use mcpcore::backplane::Backplane;

/// Usage lines for the flags.
pub const USAGE: &str = concat!(
    "  --redis URL              share state with the other workers through Redis (redis://host:port/db)\n",
    "  --redis-prefix P         key prefix in Redis (default mcp:), to share one database between deployments\n",
);

/// Remove `--redis URL` and `--redis-prefix P` from `args`. Returns the remaining arguments and
/// the backplane, when `--redis` was given.
///
/// # Errors
/// A flag without a value, an invalid URL, or a prefix without `--redis`.
pub fn take(args: Vec<String>) -> Result<(Vec<String>, Option<Backplane>), String> {
    let mut rest = Vec::new();
    let mut url = None;
    let mut prefix = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--redis" => url = Some(it.next().ok_or("--redis needs a URL")?),
            "--redis-prefix" => prefix = Some(it.next().ok_or("--redis-prefix needs a value")?),
            _ => rest.push(a),
        }
    }
    let Some(url) = url else {
        return match prefix {
            Some(_) => Err("--redis-prefix needs --redis".into()),
            None => Ok((rest, None)),
        };
    };
    let mut bp = Backplane::redis(&url).map_err(|e| format!("--redis: {e}"))?;
    if let Some(p) = prefix {
        bp = bp.with_prefix(&p);
    }
    Ok((rest, Some(bp)))
}
