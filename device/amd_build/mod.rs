//! The AMD GPU device library, built by build.rs when hipcc or a HIP-capable clang is present.
//!
//! Products, in `OUT_DIR/amd/` (each announced with one `cargo:warning` line):
//! - `librocshmem_device.a`: relocatable device code (`-fgpu-rdc`) of every source for every
//!   arch of the HIP compiler, plus the host glue `rocshmemi_device_globals_set`
//!   (device/src/gpu_globals.cpp). Applications link it with `hipcc -fgpu-rdc --hip-link`.
//! - `librocshmem_device_<arch>.bc` per arch: device-only LLVM bitcode (what upstream's
//!   cmake/DeviceBitcode.cmake makes for Triton and other JIT users): every source compiled with
//!   `-x hip --cuda-device-only -emit-llvm -O3 -fgpu-rdc`, `llvm-link`ed, then `opt -O3`. It keeps
//!   the 605 unmangled extern "C" entry points (device/gen/bitcode_api.cpp) and
//!   the device globals ROCSHMEM_CTX_DEFAULT (16 B), ROCSHMEM_TEAM_WORLD / _SHARED (8 B each).
//!
//! - `products.txt`: `archive_arches=` and `bitcode_arches=` (`;`-separated), read by the CMake
//!   build (cmake/stage_amd.cmake), which stages and installs the products.
//!
//! The products are reused while a hash of their inputs (the sources and headers below, the
//! arch list, the compilers and this build code) is unchanged (`inputs.hash`), so a rebuild of the Rust
//! core alone costs nothing here; `off` deletes them, so stale products are never staged.
//!
//! Sources: device/gen/*.cpp (generated entry points over the templates of device/src/) and
//! device/src/gpu_globals.cpp.
//!
//! Compiler: `$HIPCC` or `hipcc` (its clang is read from `HIPCC_VERBOSE=1` output, with the ROCm
//! path, device-library path and HIP version it passes), or `$ROCSHMEM_HIP_CLANG`; newer
//! `clang++-N` on PATH are extra candidates for arches hipcc's clang does not know (those get the
//! bitcode only: one fat archive needs one compiler). LLVM tools (llvm-link, opt, llvm-ar) are
//! the ones of the chosen clang's version.
//!
//! Arches: `ROCSHMEM_GPU_TARGETS`, else `GPU_TARGETS` (`;`, `,` or space separated, feature
//! suffixes such as `gfx90a:xnack-` allowed; the file name drops them), else upstream's default
//! gfx90a, gfx942, gfx1100, gfx1201. An arch no compiler knows is skipped with one warning line.
//!
//! `ROCSHMEM_AMD`: `auto` builds when a HIP compiler is found (a failure is reported in warning
//! lines and the rest of the build goes on: the host platform never depends on these products);
//! `require` makes a missing compiler or a failed compile a build error (scripts/check-amd.sh);
//! unset or `off` skips this step (the default of a plain `cargo build`, which clippy and the
//! unit tests also run: three arches cost about 5 CPU-minutes; the CMake build passes its
//! `ROCSHMEM_AMD` option, OFF unless asked for, see docs/amd.md).
//!
//! The steps, one file each: `toolchain` (which compilers), `plan` (which compiler builds which
//! arch, from which sources with which flags), `cache` (the inputs hash, reuse and the shared
//! cache), `pieces` (single front-end, optimiser and code-generator steps kept by their input),
//! `bitcode` (per-arch bitcode), `archive` (librocshmem_device.a), `stream_kernels` (the
//! `*_on_stream` code objects); `shell`: environment, PATH, running tools, warning lines.

mod archive;
mod bitcode;
pub mod cache;
mod pieces;
mod plan;
mod shell;
mod stream_kernels;
mod toolchain;

use cache::{cache_dir, inputs_hash};
use shell::{env, warn};
use std::path::Path;

/// Builds (or reuses) the AMD products in `out/amd` as `ROCSHMEM_AMD` says.
pub fn build(root: &Path, out: &Path) {
    // The compiles run in the root and name their sources relative to it (plan::source_args).
    let root = &std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mode = env("ROCSHMEM_AMD").unwrap_or_else(|| "off".into()).to_ascii_lowercase();
    if matches!(mode.as_str(), "off" | "0" | "no" | "false") {
        cache::clear_products(&out.join("amd"));
        warn("AMD device library skipped (set ROCSHMEM_AMD=auto or require to build it)");
        return;
    }
    let require = matches!(mode.as_str(), "require" | "required" | "on" | "1");
    let fail = |msg: String| {
        if require {
            panic!("rocshmem: AMD device library (ROCSHMEM_AMD=require): {msg}");
        }
        warn(&format!("AMD device library not built: {msg}"));
    };
    for k in ["HIPCC", "ROCSHMEM_HIP_CLANG", "PATH"] {
        println!("cargo:rerun-if-env-changed={k}");
    }
    let work = out.join("amd");
    if let Err(e) = std::fs::create_dir_all(&work) {
        return fail(format!("creating {}: {e}", work.display()));
    }
    let Some((primary, compilers)) = toolchain::find(&work) else {
        if require {
            panic!("rocshmem: ROCSHMEM_AMD=require but no hipcc / HIP clang found (set HIPCC or ROCSHMEM_HIP_CLANG)");
        }
        cache::clear_products(&work);
        warn("AMD products skipped: no hipcc found (set HIPCC or ROCSHMEM_HIP_CLANG to build them)");
        return;
    };
    let plan = plan::Plan::choose(primary, &compilers, &work);
    if plan.bitcode.is_empty() {
        cache::clear_products(&work);
        return fail("no arch to build".into());
    }
    // Reuse the products while nothing they are made from changed.
    let hash = inputs_hash(root, &plan.text());
    let cache = cache_dir("amd").map(|c| c.join(&hash));
    if cache::reuse(&work, &hash, cache.as_deref()) {
        return;
    }
    let pieces = pieces::Pieces::open();
    let built = bitcode::build_all(&plan, root, &work, require, &pieces);
    let archive_arches = archive::step(&plan, root, &work, &built, &fail);
    let stream = stream_kernels::step(&plan.primary, root, &work, &archive_arches, &pieces, &fail);
    warn(&format!("AMD products: {} (device cache, pieces.rs)", pieces.summary()));
    pieces.trim();
    cache::finish(&work, &hash, cache.as_deref(), &built, &archive_arches, &stream);
}
