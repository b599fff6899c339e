//! The generator: the one table (`table.rs`) expanded into the files listed by [`outputs`]
//! (and in `codegen/generated-files.txt`), with the C headers cbindgen writes from the Rust
//! sources. The files are committed. [`COMMAND`] (xtask/) writes them; every build (build.rs)
//! and the ctest `generated_files_current` only [`check`] that they are current, and fail
//! naming the command when they are not.

/// The command that writes the generated files (a macro, for the banners' `concat!`).
macro_rules! gen_command {
    () => {
        "cargo xtask gen"
    };
}

pub mod device;
#[rustfmt::skip] // one row a line
pub mod device_table;
pub mod emit;
pub mod headers;
pub mod stream;
#[rustfmt::skip] // the table reads best in its own layout
pub mod table;
pub mod tests;
pub mod tile;

use std::path::Path;

/// The command that writes the generated files.
pub const COMMAND: &str = gen_command!();

/// The list of the generated files (itself generated).
pub const LIST: &str = "codegen/generated-files.txt";

/// Folders that hold generated files only, but for these hand-written ones: any other file in
/// them is left over from an older table (and a .cpp in device/gen would be compiled).
const GEN_DIRS: &[&str] = &["device/gen", "device/stream/gen", "src/api/generated", "src/cxx/gen", "ctests/gen"];
const HAND_WRITTEN: &[&str] = &["src/api/generated/mod.rs", "ctests/gen/CMakeLists.txt"];

/// Every generated file: (path relative to the crate root, contents), the list last.
pub fn outputs(root: &Path, version: (u32, u32, u32)) -> Vec<(String, String)> {
    let mut files = headers::outputs(root);
    files.extend(table_outputs(version).into_iter().map(|(p, t)| (p.to_string(), t)));
    let mut list = format!("# Files `{COMMAND}` writes (one per line; this list is generated too).\n{LIST}\n");
    for (p, _) in &files {
        list.push_str(p);
        list.push('\n');
    }
    files.push((LIST.to_string(), list));
    files
}

/// What differs between the tree and `files`: one line per file (`stale`, `missing`, or
/// `left over` for a file of a generated-only folder that is no longer generated).
pub fn check(root: &Path, files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in files {
        match std::fs::read_to_string(root.join(path)) {
            Ok(t) if t == *text => {}
            Ok(_) => problems.push(format!("stale: {path}")),
            Err(_) => problems.push(format!("missing: {path}")),
        }
    }
    problems.extend(left_over(root, files).into_iter().map(|p| format!("left over: {p}")));
    problems
}

/// Files of the generated-only folders that neither are generated nor hand-written.
pub fn left_over(root: &Path, files: &[(String, String)]) -> Vec<String> {
    let mut extra = Vec::new();
    for dir in GEN_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries.flatten() {
            let path = format!("{dir}/{}", e.file_name().to_string_lossy());
            if e.path().is_file() && !HAND_WRITTEN.contains(&path.as_str()) && !files.iter().any(|(p, _)| *p == path) {
                extra.push(path);
            }
        }
    }
    extra.sort();
    extra
}

fn table_outputs(version: (u32, u32, u32)) -> Vec<(&'static str, String)> {
    let vendor = format!("rocSHMEM-rs_v{}.{}.{}_IPC", version.0, version.1, version.2);
    let device_fns = device::functions();
    let tile_templates = tile::templates();
    let mut files = vec![
        ("src/api/generated/consts.rs", emit::rust_consts(version, &vendor)),
        ("src/api/generated/rma.rs", emit::rust_module(&["RMA"], "rma")),
        ("src/api/generated/amo.rs", emit::rust_module(&["AMO"], "p2p")),
        ("src/api/generated/p2p_sync.rs", emit::rust_module(&["P2P_SYNC"], "p2p")),
        ("src/api/generated/coll.rs", emit::rust_module(&["COLL", "COLL-legacy"], "coll")),
        ("include/rocshmem/rocshmem_constants.hpp", emit::cxx_consts()),
        ("python/rocshmem/_table.py", emit::python_table(version)),
        ("include/rocshmem/rocshmem_config.h", emit::config_h(version, &vendor)),
        ("include/rocshmem/rocshmem_HOST.hpp", emit::host_core_header()),
        (
            "include/rocshmem/rocshmem_RMA.hpp",
            emit::cxx_header(
                "rocshmem_RMA.hpp",
                "ROCSHMEM_RMA_HPP",
                "Typed RMA: put, get, p, g and their non-blocking forms.",
            ),
        ),
        (
            "include/rocshmem/rocshmem_AMO.hpp",
            emit::cxx_header("rocshmem_AMO.hpp", "ROCSHMEM_AMO_HPP", "Typed atomic memory operations."),
        ),
        (
            "include/rocshmem/rocshmem_P2P_SYNC.hpp",
            emit::cxx_header(
                "rocshmem_P2P_SYNC.hpp",
                "ROCSHMEM_P2P_SYNC_HPP",
                "Point-to-point synchronisation: wait_until and test.",
            ),
        ),
        (
            "include/rocshmem/rocshmem_COLL.hpp",
            emit::cxx_header(
                "rocshmem_COLL.hpp",
                "ROCSHMEM_COLL_HPP",
                "Collectives: broadcast, reductions, reduce-scatter, legacy to_all.",
            ),
        ),
        (
            "include/rocshmem/rocshmem_SIG_OP.hpp",
            emit::cxx_header(
                "rocshmem_SIG_OP.hpp",
                "ROCSHMEM_SIG_OP_HPP",
                "Put-with-signal and signal operations: device-side only upstream; declared with the device library.",
            ),
        ),
        (
            "include/rocshmem/rocshmem_RMA_X.hpp",
            emit::cxx_header(
                "rocshmem_RMA_X.hpp",
                "ROCSHMEM_RMA_X_HPP",
                "Wave and work-group RMA: device-side only upstream; declared with the device library.",
            ),
        ),
        ("src/cxx/gen/shim.cpp", emit::shim(&device_fns)),
        ("src/cxx/gen/shim_v2.cpp", emit::shim_v2()),
        ("include/rocshmem/rocshmem_DEVICE.hpp", device::header(&device_fns)),
        ("device/gen/bitcode_api.cpp", device::bitcode(&device_fns, false)),
        ("device/gen/bitcode_api_archived.cpp", device::bitcode(&device_fns, true)),
        ("device/gen/gpu_hd.cpp", device::gpu_hd(&device_fns)),
        ("include/rocshmem/rocshmem_TILE.hpp", tile::header(&tile_templates)),
        ("include/rocshmem/rocshmem_TILE_impl.hpp", tile::implementation(&tile_templates)),
        ("ctests/gen/typed_types.h", tests::types_header()),
        ("ctests/gen/abi_link.cpp", tests::abi_cpp()),
        ("ctests/gen/abi_link.c", tests::abi_c()),
        ("device/stream/gen/reduce_list.inc", stream::reduce_list()),
        ("device/gen/api_stream.cpp", stream::api_stream()),
    ];
    for (path, text) in device::definition_files(&device_fns) {
        files.push((Box::leak(path.into_boxed_str()), text));
    }
    let mut programs = tests::programs();
    // The typed reduce_on_stream names are exercised by a generated test of their own.
    programs.push(("typed_reduce_on_stream.c", stream::typed_test()));
    tests::check_covered(&programs);
    for (name, text) in programs {
        files.push((Box::leak(format!("ctests/gen/{name}").into_boxed_str()), text));
    }
    files
}
