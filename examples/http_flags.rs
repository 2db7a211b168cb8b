//! Command-line flags the example servers share for the legacy session limits of Streamable
//! HTTP (`HttpOptions::max_sessions`, `session_idle_timeout`, `uninitialized_session_timeout`;
//! see their docs for the trade-offs), for HTTPS (`HttpOptions::tls`), and `--auth FILE` for the
//! OAuth resource server (`HttpOptions::auth`, core's JSON shape of `mcpcore::auth::AuthOptions`).

use mcpcore::transport::http::{HttpOptions, ServerTls};
use std::time::Duration;

/// Usage lines for the flags.
pub const USAGE: &str = concat!(
    "  --max-sessions N         most concurrent legacy sessions; past it initialize gets 503 (default 10000)\n",
    "  --session-idle-secs S    reap legacy sessions idle for S seconds (default 1800)\n",
    "  --init-timeout-secs S    reap legacy sessions that sent no notifications/initialized within S seconds (default 10)\n",
    "  --tls-cert PEM --tls-key PEM  serve HTTPS (HTTP/1.1 and h2) with this certificate chain and key\n",
    "  --allowed-hosts H,H      accepted Host values (behind a load balancer: the name clients use, e.g.\n",
    "                           127.0.0.1:8080); default: the bound address\n",
    "  --auth FILE              protect the endpoint as an OAuth 2.1 resource server; FILE is the JSON of\n",
    "                           HttpOptions.auth (resource, authorizationServers, issuer, jwksPath or jwksUrl, ...)",
);

/// The file flags: `--tls-cert` and `--tls-key`, which go together.
fn take_tls(
    flag: &str,
    value: Option<String>,
    tls: &mut (Option<String>, Option<String>),
) -> Result<(), String> {
    let v = value.ok_or_else(|| format!("{flag} needs a PEM file"))?;
    if flag == "--tls-cert" {
        tls.0 = Some(v);
    } else {
        tls.1 = Some(v);
    }
    Ok(())
}

/// Remove the session flags (each `--flag VALUE`) from `args` and apply them to `opts`.
/// Returns the remaining arguments and whether any session flag was given.
///
/// # Errors
/// A flag without a value, or a value that is not a positive integer.
pub fn take(args: Vec<String>, opts: &mut HttpOptions) -> Result<(Vec<String>, bool), String> {
    let mut rest = Vec::new();
    let mut given = false;
    let mut it = args.into_iter();
    let mut tls = (None, None);
    while let Some(a) = it.next() {
        let flag = a.as_str();
        if matches!(flag, "--tls-cert" | "--tls-key") {
            take_tls(flag, it.next(), &mut tls)?;
            given = true;
            continue;
        }
        if flag == "--allowed-hosts" {
            // Behind a load balancer that keeps the client's Host (HTTP-03 DNS-rebinding
            // protection stays on: only the listed names pass).
            let hosts = it.next().ok_or("--allowed-hosts needs a list")?;
            let list: Vec<&str> = hosts.split(',').map(str::trim).collect();
            mcpcore::options::apply_json(opts, &serde_json::json!({ "allowedHosts": list }))
                .map_err(|e| format!("--allowed-hosts {hosts}: {e}"))?;
            given = true;
            continue;
        }
        if flag == "--auth" {
            let path = it.next().ok_or("--auth needs a file")?;
            let text = std::fs::read_to_string(&path).map_err(|e| format!("--auth {path}: {e}"))?;
            let auth: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("--auth {path}: {e}"))?;
            mcpcore::options::apply_json(opts, &serde_json::json!({ "auth": auth }))
                .map_err(|e| format!("--auth {path}: {e}"))?;
            given = true;
            continue;
        }
        if !matches!(
            flag,
            "--max-sessions" | "--session-idle-secs" | "--init-timeout-secs"
        ) {
            rest.push(a);
            continue;
        }
        let n = it
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{flag} needs a positive integer"))?;
        given = true;
        match flag {
            "--max-sessions" => {
                opts.max_sessions =
                    usize::try_from(n).map_err(|_| format!("{flag}: {n} is too large"))?;
            }
            "--session-idle-secs" => opts.session_idle_timeout = Duration::from_secs(n),
            _ => opts.uninitialized_session_timeout = Duration::from_secs(n),
        }
    }
    match tls {
        (Some(cert), Some(key)) => opts.tls = Some(ServerTls::new(cert, key)),
        (None, None) => {}
        _ => return Err("--tls-cert and --tls-key go together".into()),
    }
    Ok((rest, given))
}

/// Let core give large freed buffers back to the OS after big messages (glibc keeps them
/// otherwise; see `mcpcore::transport::http::set_memory_trim`).
pub fn install_memory_trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        mcpcore::transport::http::set_memory_trim(|| {
            // SAFETY: glibc's malloc_trim only walks the allocator's own state, under its locks.
            unsafe {
                malloc_trim(0);
            }
        });
    }
}
