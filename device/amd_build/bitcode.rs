//! Per-arch device bitcode (`librocshmem_device_<arch>.bc`), the arches side by side.

use super::pieces::{self, Pieces, args_of};
use super::plan::{Plan, common_flags, file_arch, source_args, sources};
use super::shell::{jobs, parallel_each, run_ok, warn};
use super::toolchain::{Toolchain, device_lib_flags, llvm_tool, no_code_object_version};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds every arch's bitcode; returns the arches that built, each with its whole-library
/// relocatable bitcode (`bc-<arch>/rdc.bc`, which the archive bundles). An arch that fails is
/// left out with a warning line (a build error under `require`).
pub(super) fn build_all(
    plan: &Plan,
    root: &Path,
    work: &Path,
    require: bool,
    pieces: &Pieces,
) -> Vec<(String, PathBuf)> {
    // The arches are built side by side; each arch's compile and optimiser jobs share the
    // NUM_JOBS slots.
    let per_arch = (jobs() / plan.bitcode.len()).max(1);
    let results: Vec<(String, PathBuf, Result<(), String>, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .bitcode
            .iter()
            .map(|(arch, tc)| {
                s.spawn(move || {
                    let t = std::time::Instant::now();
                    let dest = work.join(format!("librocshmem_device_{}.bc", file_arch(arch)));
                    let r = build_bitcode(tc, root, work, arch, &dest, per_arch, pieces);
                    (arch.clone(), dest, r, t.elapsed().as_secs())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut built = Vec::new();
    for ((arch, dest, r, took), (_, tc)) in results.into_iter().zip(&plan.bitcode) {
        match r {
            Ok(()) => {
                warn(&format!("AMD device bitcode ({arch}, clang {}, {took} s): {}", tc.major, dest.display()));
                built.push((arch.clone(), work.join(format!("bc-{}", file_arch(&arch))).join("rdc.bc")));
            }
            // One arch failing (e.g. a builtin its clang lacks) does not cost the others.
            Err(e) if require => panic!("rocshmem: AMD device bitcode for {arch} (ROCSHMEM_AMD=require): {e}"),
            Err(e) => warn(&format!("AMD arch {arch} left out of every product, it does not compile: {e}")),
        }
    }
    built
}

/// One arch's bitcode: compile every source device-only (front end only, as upstream's
/// DeviceBitcode.cmake: `-Xclang -disable-llvm-passes`, so the optimiser runs once, on the whole
/// library; each kept in `pieces` by its preprocessed source), llvm-link, opt -O3 (kept in
/// `pieces` by the linked module: a change that leaves the library's code as it was costs the
/// preprocessor only). (Each source optimised alone, then
/// linked, would re-optimise only what a change reaches, but inlines differently across sources:
/// the entry points of the memory-ordering check, ctests/amd/check_isa_ordering.py, then call
/// helpers they inline today.)
pub(super) fn build_bitcode(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arch: &str,
    dest: &Path,
    slots: usize,
    pieces: &Pieces,
) -> Result<(), String> {
    let (link, opt) = match (llvm_tool(tc, "llvm-link"), llvm_tool(tc, "opt")) {
        (Some(l), Some(o)) => (l, o),
        _ => return Err(format!("llvm-link / opt of clang {} not found (install llvm-{})", tc.major, tc.major)),
    };
    let dir = work.join(format!("bc-{}", file_arch(arch)));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // Each source is compiled once. The archive's device part (rdc.bc) is every source but the
    // `used` extern "C" entry points of bitcode_api.cpp (which are for JIT users, as upstream
    // keeps them out of librocshmem.a), linked and not optimised yet: the application's
    // -fgpu-rdc device link (LTO) then optimises and code-generates only what the program uses,
    // instead of the whole library for every arch. It keeps clang's default device visibility
    // (hidden): the device link is a shared object, so default-visibility functions would all be
    // exported, kept and code-generated in every application (minutes per arch). The JIT
    // bitcode is the same parts plus the entry points, compiled with default visibility (as
    // upstream's), then optimised. (The device globals are exported from any code object either
    // way: HIP gives them the visibility the host needs to find them.)
    let mut jobs = Vec::new();
    let mut rdc_parts = Vec::new();
    let mut entry_points = None;
    for src in sources(root) {
        let api = src.ends_with("bitcode_api.cpp");
        let bc = dir.join(format!("{}.bc", src.file_stem().unwrap().to_string_lossy()));
        let mut c = Command::new(&tc.clang);
        c.args(common_flags(root).into_iter().filter(|f| api || f != "-fvisibility=default"))
            .args(device_lib_flags(tc, &[arch.to_string()]))
            .args(["--cuda-device-only", "-emit-llvm", "-Xclang", "-disable-llvm-passes", "-c"])
            .args(no_code_object_version(tc))
            .arg(format!("--offload-arch={arch}"))
            .args(source_args(root, &src));
        jobs.push((args_of(&c), bc.clone()));
        if api { entry_points = Some(bc) } else { rdc_parts.push(bc) }
    }
    // Each front end is kept by its preprocessed source (pieces.rs).
    parallel_each(jobs, slots, |(args, bc)| pieces.front_end(&tc.clang, &args, root, &bc))?;
    let linked = dir.join("linked.bc");
    run_ok(Command::new(&link).args(&rdc_parts).args(&entry_points).arg("-o").arg(&linked))?;
    run_ok(Command::new(&link).args(&rdc_parts).arg("-o").arg(dir.join("rdc.bc")))?;
    let mut flags = vec!["-O3".to_string(), "-mtriple=amdgcn-amd-amdhsa".into(), format!("-mcpu={}", file_arch(arch))];
    // The shared bodies out of line while this `opt` runs (its default pipeline starts with
    // ForceFunctionAttrs), always-inline again in what ships.
    let shared = shared_bodies(tc, &linked)?;
    if shared.is_empty() {
        warn(&format!(
            "AMD device bitcode ({arch}): none of SHARED_BODIES defined (renamed?): opt -O3 optimises every copy"
        ));
    }
    for n in &shared {
        flags.push(format!("-force-remove-attribute={n}:alwaysinline"));
        flags.push(format!("-force-attribute={n}:noinline"));
    }
    let key = pieces::key("opt", &opt, &flags, root, &linked)?;
    pieces.get_or_make(&key, dest, || {
        let optimised = dir.join("optimised.bc");
        run_ok(Command::new(&opt).args(&flags).arg(&linked).arg("-o").arg(&optimised))?;
        let mut back = Command::new(&opt);
        back.arg("-passes=forceattrs");
        for n in &shared {
            back.arg(format!("-force-remove-attribute={n}:noinline")).arg(format!("-force-attribute={n}:alwaysinline"));
        }
        run_ok(back.arg(&optimised).arg("-o").arg(dest)).map(|_| ())
    })
}

/// Bodies that many entry points of the library inline, the same in each (mangled-name
/// prefixes): a reduction's combine loop (per type and op; four call sites per reduction), the
/// small reductions' push exchange and the byte collectives under the typed broadcast, fcollect
/// and alltoall (per scope; 25 to 50 typed entry points each). Users' kernels inline them (the
/// front end marks them always-inline, and a call there costs latency: docs/development.md), but
/// the library's own `opt -O3`, once per arch, need not optimise each copy: it sees them out of
/// line (noinline), and the bitcode it writes has them always-inline again, so that the
/// always-inliner of a user's JIT (every LLVM pipeline has it) inlines them as before. About a
/// third of that `opt`'s time (docs/development.md, "Where the time goes").
const SHARED_BODIES: [&str; 5] = [
    "_ZN8rocshmem3dev12combine_span",
    "_ZN8rocshmem3dev13push_exchange",
    "_ZN8rocshmem3dev12broadcastmem",
    "_ZN8rocshmem3dev11fcollectmem",
    "_ZN8rocshmem3dev11alltoallmem",
];

/// The shared bodies (SHARED_BODIES) that `linked` defines, by name.
fn shared_bodies(tc: &Toolchain, linked: &Path) -> Result<Vec<String>, String> {
    let nm = llvm_tool(tc, "llvm-nm")
        .ok_or(format!("llvm-nm of clang {} not found (install llvm-{})", tc.major, tc.major))?;
    let listing = run_ok(Command::new(&nm).arg("--defined-only").arg(linked))?;
    let mut names: Vec<String> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|n| SHARED_BODIES.iter().any(|p| n.starts_with(p)))
        .map(String::from)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}
