//! The AMD device build (device/amd_build/) as a program of its own, without cargo: what
//! scripts/check-amd.sh runs to build and check the device library with one HIP toolchain (for
//! example Debian 12's HIP 5.2) beside the one the CMake build used, without rebuilding the Rust
//! core. Nothing but the standard library:
//!
//!   rustc --edition 2024 -O device/amd_main.rs -o amd-build
//!   ROCSHMEM_AMD=require ROCSHMEM_GPU_TARGETS="gfx90a;gfx908" ./amd-build <source root> <out dir>
//!
//! The products land in `<out dir>/amd/`, as in cargo's OUT_DIR; the `cargo:warning=` lines are
//! printed as they are. Exits non-zero when ROCSHMEM_AMD=require and the build failed.

#[path = "amd_build/mod.rs"]
mod amd_build;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} <source root> <out dir>", args[0]);
        std::process::exit(2);
    }
    if std::env::var_os("NUM_JOBS").is_none() {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        // SAFETY: single-threaded at this point.
        unsafe { std::env::set_var("NUM_JOBS", n.to_string()) };
    }
    let out = std::path::PathBuf::from(&args[2]);
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("amd-build: creating {}: {e}", out.display());
        std::process::exit(1);
    }
    amd_build::build(std::path::Path::new(&args[1]), &out);
}
