//! The native half of the `mcpcore` Python package (`mcpcore._native`).
//!
//! It implements core's [`mcpcore::Handler`] seam by calling Python coroutine functions
//! ([`handler::PyHandler`]) and exposes core's server and client as awaitables. It adds no
//! protocol logic: marshalling ([`convert`]), lifetimes and the asyncio bridge only. The
//! ergonomic API (decorators, schemas from type hints, `Context`, `Client`) is the pure-Python
//! package around it.
// This crate's Rust docs are read by its contributors (`cargo doc --document-private-items`,
// as `scripts/test.sh` builds them), where links to private items resolve.
#![allow(rustdoc::private_intra_doc_links)]

mod auth;
mod bridge;
mod client;
mod context;
mod convert;
mod dynamic;
mod embed;
mod errors;
mod gc;
mod handler;
mod inbox;
#[cfg(target_os = "linux")]
mod leader;
mod listen;
mod pump;
mod server;
mod telemetry;

use pyo3::prelude::*;

/// Run the `mcpcore` command line (`argv[0]` is the program name) and return its exit status;
/// the GIL is released while it runs.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| mcpcore_cli::main_with(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<server::NativeServer>()?;
    m.add_class::<server::HttpHandle>()?;
    m.add_class::<handler::Responder>()?;
    m.add_class::<inbox::InboxDrain>()?;
    m.add_class::<pump::NativePump>()?;
    m.add_class::<context::PyContext>()?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<listen::NativeSubscription>()?;
    m.add_class::<embed::NativeHttpService>()?;
    m.add_class::<embed::NativeExchange>()?;
    m.add_class::<embed::NativePipe>()?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(bridge::shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(server::media_block, m)?)?;
    m.add_function(wrap_pyfunction!(server::check_input_required, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::metrics_text, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::configure_telemetry, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::flush_telemetry, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::flush_telemetry_at_exit, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry::route_logs, m)?)?;
    m.add("APP_MIME_TYPE", server::APP_MIME_TYPE)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
