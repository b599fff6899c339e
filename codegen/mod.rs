//! The generator: the one table (`table.rs`) expanded into the files listed by [`outputs`].
//! build.rs calls it on every build and rewrites a file only when its text changed; the
//! generated files are committed, and CI fails if a build changes them (they were stale).

pub mod device;
pub mod emit;
pub mod stream;
#[rustfmt::skip] // the table reads best in its own layout
pub mod table;
pub mod tests;
pub mod tile;

/// Every generated file: (path relative to the crate root, contents).
pub fn outputs(version: (u32, u32, u32)) -> Vec<(&'static str, String)> {
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
        ("src/cxx/gen_shim.cpp", emit::shim(&device_fns)),
        ("src/cxx/gen_shim_v2.cpp", emit::shim_v2()),
        ("include/rocshmem/rocshmem_DEVICE.hpp", device::header(&device_fns)),
        ("device/gen/bitcode_api.cpp", device::bitcode(&device_fns)),
        ("device/gen/gpu_hd.cpp", device::gpu_hd(&device_fns)),
        ("include/rocshmem/rocshmem_TILE.hpp", tile::header(&tile_templates)),
        ("include/rocshmem/rocshmem_TILE_impl.hpp", tile::implementation(&tile_templates)),
        ("ctests/gen/typed_types.h", tests::types_header()),
        ("ctests/gen/abi_link.cpp", tests::abi_cpp()),
        ("ctests/gen/abi_link.c", tests::abi_c()),
        ("device/stream/reduce_list.inc", stream::reduce_list()),
        ("device/gen/api_stream.cpp", stream::api_stream()),
        ("ctests/stream/typed_reduce_on_stream.c", stream::typed_test()),
    ];
    for (path, text) in device::definition_files(&device_fns) {
        files.push((Box::leak(path.into_boxed_str()), text));
    }
    let mut programs = tests::programs();
    // The typed reduce_on_stream names are exercised by ctests/stream's generated test.
    programs.push(("../stream/typed_reduce_on_stream.c", stream::typed_test()));
    tests::check_covered(&programs);
    programs.pop();
    for (name, text) in programs {
        files.push((Box::leak(format!("ctests/gen/{name}").into_boxed_str()), text));
    }
    // The list of everything generated, for the check that they are committed.
    let mut list: String = files.iter().map(|(p, _)| format!("{p}\n")).collect();
    list.insert_str(0, "# Files build.rs generates from codegen/table.rs (one per line; this list is generated too).\ncodegen/generated-files.txt\ninclude/rocshmem/rocshmem.h\ndevice/include/rocshmem_device/device_abi.h\ndevice/include/rocshmem_device/gda_abi.h\n");
    files.push(("codegen/generated-files.txt", list));
    files
}
