//! `librocshmem_device.a`: the relocatable device code of the built arches (bundled from their
//! bitcode) with the host glue, for `hipcc -fgpu-rdc` links.

use super::plan::{Plan, common_flags, source_args};
use super::shell::{run_ok, warn, which};
use super::toolchain::{Toolchain, device_lib_flags, llvm_tool};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the archive for the archive's arches that built (`built`, from the bitcode step);
/// returns those arches (none when the archive failed: `fail` says why).
pub(super) fn step(
    plan: &Plan,
    root: &Path,
    work: &Path,
    built: &[(String, PathBuf)],
    fail: &dyn Fn(String),
) -> Vec<String> {
    let rdc_arches: Vec<String> = plan.rdc.iter().filter(|a| built.iter().any(|(b, _)| b == *a)).cloned().collect();
    if rdc_arches.is_empty() {
        return Vec::new();
    }
    let dest = work.join("librocshmem_device.a");
    let t = std::time::Instant::now();
    match build_archive(&plan.primary, root, work, &rdc_arches, built, &dest) {
        Ok(()) => {
            warn(&format!(
                "AMD device library ({}, -fgpu-rdc{}, {} s): {}",
                rdc_arches.join(", "),
                if plan.primary.from_hipcc { ", hipcc's clang" } else { "" },
                t.elapsed().as_secs(),
                dest.display()
            ));
            rdc_arches
        }
        Err(e) => {
            fail(format!("librocshmem_device.a: {e}"));
            Vec::new()
        }
    }
}

/// The target id of an offload bundle entry: `hip-amdgcn-amd-amdhsa-gfx90a`,
/// `hip-amdgcn-amd-amdhsa--gfx942:xnack-`, `hipv4-amdgcn-amd-amdhsa-unknown-gfx950` (the triple
/// has three or four parts by clang version) -> `gfx90a`, `gfx942:xnack-`, `gfx950`. None for the
/// host entry.
pub(super) fn bundle_target_id(entry: &str) -> Option<&str> {
    if entry.starts_with("host-") {
        return None;
    }
    entry.find("-gfx").map(|i| &entry[i + 1..])
}

/// The offload-bundler command that `plan` (a clang command run with `-###`) would run, with the
/// entry of each target id taken from `inputs` (`host` for the host entry, else the one the plan
/// names) and the bundle written to `out`: the bundler of the clang's own version, and its
/// spelling of the targets, which changes between releases.
pub(super) fn bundle_as_planned(
    tc: &Toolchain,
    plan: &Command,
    host: Option<&Path>,
    inputs: &[(String, PathBuf)],
    out: &Path,
) -> Result<Command, String> {
    let mut p = Command::new(plan.get_program());
    p.args(plan.get_args());
    if let Some(d) = plan.get_current_dir() {
        p.current_dir(d);
    }
    let text = p.output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&text.stderr).into_owned();
    let line =
        text.lines().find(|l| l.contains("clang-offload-bundler")).ok_or("clang -### shows no offload bundler")?;
    let words: Vec<String> = line.split("\" \"").map(|w| w.trim().trim_matches('"').to_string()).collect();
    // The bundler next to this clang (a wrapper's clang may name a path of another root).
    let named = PathBuf::from(&words[0]);
    let bundler = named
        .file_name()
        .and_then(|n| llvm_tool(tc, &n.to_string_lossy()))
        .or_else(|| named.is_file().then(|| named.clone()))
        .ok_or(format!("{} not found", named.display()))?;
    let targets = words.iter().find_map(|w| w.strip_prefix("-targets=")).ok_or("no -targets in the bundler command")?;
    let planned_inputs: Vec<&str> = words.iter().filter_map(|w| w.strip_prefix("-input=")).collect();
    let mut cmd = Command::new(&bundler);
    for w in &words[1..] {
        if !(w.starts_with("-input=") || w.starts_with("-output=") || w.starts_with("-targets=")) {
            cmd.arg(w);
        }
    }
    cmd.arg(format!("-targets={targets}")).arg(format!("-output={}", out.display()));
    for (i, t) in targets.split(',').enumerate() {
        match bundle_target_id(t) {
            None => match host {
                Some(h) => cmd.arg(format!("-input={}", h.display())),
                None => cmd
                    .arg(format!("-input={}", planned_inputs.get(i).ok_or("the plan has fewer inputs than targets")?)),
            },
            Some(id) => {
                let p = inputs
                    .iter()
                    .find(|(a, _)| a == id)
                    .map(|(_, p)| p)
                    .ok_or(format!("no input for bundle target {t}"))?;
                cmd.arg(format!("-input={}", p.display()))
            }
        };
    }
    Ok(cmd)
}

/// The device sources with host-side code (the others have none).
const HOST_SIDE_SOURCES: [&str; 2] = ["device/src/gpu_globals.cpp", "device/gen/api_stream.cpp"];

/// librocshmem_device.a: one relocatable (-fgpu-rdc) fat object, as `clang -fgpu-rdc -c` makes
/// it, whose device part for each arch is that arch's library bitcode (every source but the JIT
/// entry points of bitcode_api.cpp, linked, not yet optimised) and whose host part is the host
/// passes of the sources with host-side code, merged (`ld -r`): gpu_globals.cpp (variable
/// registration, host shadows, rocshmemi_device_globals_set) and gen/api_stream.cpp (the host
/// stubs and registration of upstream's helper kernels, so that programs can launch them). The
/// bundler command is the one the clang itself would run (read with -###), so the target-id
/// spelling matches.
pub(super) fn build_archive(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arches: &[String],
    bitcode: &[(String, PathBuf)],
    dest: &Path,
) -> Result<(), String> {
    let ar = llvm_tool(tc, "llvm-ar").or_else(|| which("ar")).ok_or("no llvm-ar / ar found")?;
    let ld = llvm_tool(tc, "ld.lld").or_else(|| which("ld")).ok_or("no ld.lld / ld found")?;
    let dir = work.join("rdc");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let host = dir.join("host.o");
    let obj = dir.join("rocshmem_device.o");
    let mut base = Command::new(&tc.clang);
    base.args(common_flags(root)).args(device_lib_flags(tc, arches)).args(["-fPIC", "-c"]);
    for a in arches {
        base.arg(format!("--offload-arch={a}"));
    }
    let with = |extra: &[&str], src: &str, out: &Path| {
        let mut c = Command::new(base.get_program());
        c.current_dir(root)
            .args(base.get_args())
            .args(extra)
            .args(source_args(root, &root.join(src)))
            .arg("-o")
            .arg(out);
        c
    };
    let mut passes = Vec::new();
    for src in HOST_SIDE_SOURCES {
        let out = dir.join(format!("{}-host.o", Path::new(src).file_stem().unwrap().to_string_lossy()));
        run_ok(&mut with(&["--cuda-host-only"], src, &out))?;
        passes.push(out);
    }
    run_ok(Command::new(&ld).arg("-r").args(&passes).arg("-o").arg(&host))?;
    run_ok(&mut bundle_as_planned(tc, &with(&["-###"], HOST_SIDE_SOURCES[0], &obj), Some(&host), bitcode, &obj)?)?;
    let _ = std::fs::remove_file(dest);
    run_ok(Command::new(&ar).arg("rcs").arg(dest).arg(&obj))?;
    Ok(())
}
