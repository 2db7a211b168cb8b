//! Gives the shared library an SONAME (`libmcpcore.so.0`) on Linux, so programs linked against
//! it record the ABI major version, not the unversioned development name. `scripts/install-ffi.sh`
//! installs `libmcpcore.so.<version>` with the `.so.0` and `.so` links. Writes nothing.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcpcore.so.0");
    }
}
