//! `apps-server`: the MCP Apps fixture (`src/apps.rs`) over stdio.

use mcpcore::transport::stdio::serve_stdio;

#[tokio::main]
async fn main() {
    let server = mcpcore_tests::apps::server();
    if let Err(e) = serve_stdio(&server).await {
        eprintln!("apps-server: {e}");
        std::process::exit(1);
    }
}
