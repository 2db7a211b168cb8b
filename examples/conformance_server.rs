//! `conformance-server`: the fixture the official MCP conformance suite runs against
//! (shared/conformance/FIXTURE.md), built on the public mcpcore API only.

#[path = "conformance/fixture.rs"]
mod fixture;

use mcpcore::Server;
use std::sync::{Arc, OnceLock};

fn build() -> Result<(Server, Arc<OnceLock<Server>>), mcpcore::server::BuildError> {
    let handle = Arc::new(OnceLock::new());
    let server = fixture::register(
        Server::builder("mcpcore-conformance", env!("CARGO_PKG_VERSION")).cache_hints(0, false),
        handle.clone(),
    )
    .build()?;
    let _ = handle.set(server.clone());
    Ok((server, handle))
}

#[tokio::main]
async fn main() {
    let (server, _handle) = match build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance-server: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = mcpcore::transport::stdio::serve_stdio(&server).await {
        eprintln!("conformance-server: {e}");
        std::process::exit(1);
    }
}
