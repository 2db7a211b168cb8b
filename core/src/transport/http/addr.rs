//! Turning the `host` a binding's user writes into the address to bind: an IP literal as is,
//! `localhost` as the IPv4 loopback, any other name through the resolver (its first address).

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The address `serve_http(host, port)` binds. `localhost` is pinned to `127.0.0.1` rather than
/// resolved, so a hosts file mapping it elsewhere cannot move a loopback-only server onto a
/// public interface (the DNS-rebinding guidance of the transport spec assumes loopback binds).
pub async fn bind_address(host: &str, port: u16) -> io::Result<SocketAddr> {
    let host = host.trim();
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    if bare.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if bare.is_empty() || bare.contains(['/', ' ', ':']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "host must be an IP address or a host name",
        ));
    }
    tokio::net::lookup_host((bare, port))
        .await?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "host name has no address"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literals_localhost_and_bad_names() {
        let a = bind_address("127.0.0.1", 8).await.expect("v4");
        assert_eq!(a, "127.0.0.1:8".parse().expect("addr"));
        let a = bind_address("[::1]", 9).await.expect("v6 in brackets");
        assert_eq!(a, "[::1]:9".parse().expect("addr"));
        let a = bind_address("LocalHost", 0).await.expect("localhost");
        assert_eq!(a.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        for bad in ["", "a b", "http://x", "x:80"] {
            let e = bind_address(bad, 0).await.expect_err(bad);
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
    }
}
