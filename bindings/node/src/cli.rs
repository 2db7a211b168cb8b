//! `npx mcpcore`: the command line, run by core's own entry point (`mcpcore_cli::main_with`).

use napi_derive::napi;

/// Run the mcpcore command line (`argv[0]` is the program name) and return its exit status.
/// It blocks the calling thread until the command ends: only `lib/cli.cjs` calls it, as the
/// whole of a process.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn run_cli(argv: Vec<String>) -> i32 {
    mcpcore_cli::main_with(argv)
}
