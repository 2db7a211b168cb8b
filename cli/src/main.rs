//! The `mcpcore` binary (see the library for the commands).

fn main() {
    std::process::exit(mcpcore_cli::main_with(std::env::args_os()));
}
