//! The code objects of the `*_on_stream` helper kernels (device/stream/module_<name>.cu) for
//! the archive's arches, which build.rs embeds in librocshmem.

use super::archive::bundle_as_planned;
use super::pieces::{self, Pieces, args_of};
use super::plan::{common_flags, file_arch, source_args};
use super::shell::{jobs, parallel_each, run_ok, warn};
use super::toolchain::{Toolchain, device_lib_flags};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The stream kernel modules (device/stream/module_<name>.cu).
pub(super) const STREAM_MODULES: [&str; 2] = ["core", "reduce"];

/// Builds the modules for `arches` (those of the archive, one compiler); returns their file
/// names (none when it failed: `fail` says why).
pub(super) fn step(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arches: &[String],
    pieces: &Pieces,
    fail: &dyn Fn(String),
) -> Vec<String> {
    if arches.is_empty() {
        return Vec::new();
    }
    let t = std::time::Instant::now();
    match build_stream_modules(tc, root, work, arches, jobs(), pieces) {
        Ok(names) => {
            warn(&format!(
                "AMD stream kernels ({}, {} s): {}",
                arches.join(", "),
                t.elapsed().as_secs(),
                names.iter().map(|n| work.join(n).display().to_string()).collect::<Vec<_>>().join(", ")
            ));
            names
        }
        Err(e) => {
            fail(format!("the *_on_stream kernels: {e}"));
            Vec::new()
        }
    }
}

/// The helper kernels of the `*_on_stream` calls (device/stream/module_core.cu and
/// module_reduce.cu, the sources NVIDIA's PTX comes from) as code objects for `hipModuleLoadData`:
/// each arch compiled as a whole program (not relocatable: the kernels and their own device
/// globals), then one offload bundle per module holding every arch, as `hipcc --genco` makes
/// it. build.rs embeds them in librocshmem (src/gpu/hip.rs loads them). Returns the file names.
pub(super) fn build_stream_modules(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arches: &[String],
    slots: usize,
    pieces: &Pieces,
) -> Result<Vec<String>, String> {
    let dir = work.join("stream");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let flags: Vec<String> = common_flags(root).into_iter().filter(|f| f != "-fgpu-rdc").collect();
    // Each code object is kept in `pieces` by its front end's output (itself kept by the
    // preprocessed source): a change that leaves a module's code as it was costs no optimiser
    // or code generator.
    let mut jobs = Vec::new();
    for m in STREAM_MODULES {
        let src = root.join(format!("device/stream/module_{m}.cu"));
        for a in arches {
            let mut c = Command::new(&tc.clang);
            c.current_dir(root)
                .args(&flags)
                .args(device_lib_flags(tc, std::slice::from_ref(a)))
                .args(["--cuda-device-only", "--no-gpu-bundle-output"])
                .arg(format!("--offload-arch={a}"));
            let key_flags = args_of(&c);
            let (src_args, co) = (source_args(root, &src), dir.join(format!("{m}-{}.co", file_arch(a))));
            let mut front = Command::new(&tc.clang);
            front.args(&key_flags).args(["-emit-llvm", "-Xclang", "-disable-llvm-passes", "-c"]).args(&src_args);
            c.args(&src_args).arg("-o").arg(&co);
            jobs.push((args_of(&front), key_flags, c, co));
        }
    }
    parallel_each(jobs, slots, |(front, key_flags, mut c, co)| {
        let front_bc = co.with_extension("front.bc");
        pieces.front_end(&tc.clang, &front, root, &front_bc)?;
        let key = pieces::key("stream", &tc.clang, &key_flags, root, &front_bc)?;
        pieces.get_or_make(&key, &co, || run_ok(&mut c).map(|_| ()))
    })?;
    let mut names = Vec::new();
    for m in STREAM_MODULES {
        let name = format!("stream_{m}.hipfb");
        let mut plan = Command::new(&tc.clang);
        plan.args(&flags).args(device_lib_flags(tc, arches)).arg("--cuda-device-only");
        for a in arches {
            plan.arg(format!("--offload-arch={a}"));
        }
        plan.arg(root.join(format!("device/stream/module_{m}.cu"))).arg("-o").arg(work.join(&name)).arg("-###");
        let inputs: Vec<(String, PathBuf)> =
            arches.iter().map(|a| (a.clone(), dir.join(format!("{m}-{}.co", file_arch(a))))).collect();
        run_ok(&mut bundle_as_planned(tc, &plan, None, &inputs, &work.join(&name))?)?;
        names.push(name);
    }
    Ok(names)
}
