//! The `mcpcore` binary (see the library for the commands).

fn main() {
    install_memory_trim();
    std::process::exit(mcpcore_cli::main_with(std::env::args_os()));
}

/// Let core give large freed buffers back to the OS after big messages (glibc keeps them
/// otherwise; see `mcpcore::transport::http::set_memory_trim`).
fn install_memory_trim() {
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
