//! `ask-server`: [`mcpcore_tests::asking::server`] over stdio.

use mcpcore::transport::stdio::serve_stdio;

#[tokio::main]
async fn main() {
    if let Err(e) = serve_stdio(&mcpcore_tests::asking::server()).await {
        eprintln!("ask-server: {e}");
        std::process::exit(1);
    }
}
