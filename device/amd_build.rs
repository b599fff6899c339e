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
//! arch list, the compilers and this file) is unchanged (`inputs.hash`), so a rebuild of the Rust
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

use std::path::{Path, PathBuf};
use std::process::Command;

/// Upstream's default list (its CMakeLists.txt: gfx90a, gfx1100, gfx1201, gfx942, and gfx950 with
/// ROCm 7); an arch the compiler does not know is skipped with one warning line.
/// The stream kernel modules (device/stream/module_<name>.cu).
const STREAM_MODULES: [&str; 2] = ["core", "reduce"];

const DEFAULT_ARCHES: &[&str] = &["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"];

/// A HIP-capable clang and the flags that point it at a HIP installation.
#[derive(Clone, Debug)]
struct Toolchain {
    clang: PathBuf,
    major: u32,
    /// --rocm-path=..., --hip-device-lib-path=..., --hip-version=... (as hipcc passes them).
    hip_flags: Vec<String>,
    from_hipcc: bool,
    /// No device-library path among the flags, but the clang finds the device libraries of
    /// every arch by itself (Debian's clang-N with rocm-device-libs-N, whose hipcc passes none).
    own_device_libs: bool,
}

fn warn(msg: &str) {
    // cargo shows one line per cargo:warning; keep every message on one line.
    println!("cargo:warning=rocshmem: {}", msg.replace('\n', " | "));
}

fn env(k: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={k}");
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

fn run_ok(cmd: &mut Command) -> Result<String, String> {
    // The program and its source / bitcode inputs (the whole command is long).
    let inputs: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a.ends_with(".cpp") || (a.ends_with(".bc") && !a.starts_with('-')))
        .map(|a| Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(a))
        .collect();
    let shown = format!("{} {}", cmd.get_program().to_string_lossy(), inputs.join(" "));
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let first: Vec<&str> = err.lines().filter(|l| l.contains("error")).take(3).collect();
            let first = if first.is_empty() { err.lines().take(3).collect::<Vec<_>>() } else { first };
            Err(format!("{shown} failed: {}", first.join(" | ")))
        }
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

fn clang_major(clang: &Path) -> Option<u32> {
    let out = Command::new(clang).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let i = text.find("clang version ")? + "clang version ".len();
    text[i..].split('.').next()?.trim().parse().ok()
}

/// hipcc's clang and HIP flags, read from the command hipcc runs (HIPCC_VERBOSE=1).
fn from_hipcc(hipcc: &Path, work: &Path) -> Option<Toolchain> {
    let probe = work.join("probe.hip");
    std::fs::write(&probe, "__attribute__((device)) int rocshmem_probe;\n").ok()?;
    let out = Command::new(hipcc)
        .env("HIPCC_VERBOSE", "1")
        .args(["-x", "hip", "--cuda-device-only", "-nogpulib", "--offload-arch=gfx90a", "-c"])
        .arg(&probe)
        .arg("-o")
        .arg(work.join("probe.o"))
        .output()
        .ok()?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let line = text.lines().find_map(|l| l.trim().strip_prefix("hipcc-cmd:"))?;
    let mut words = line.split_whitespace().map(|w| w.trim_matches('"').to_string());
    let named = PathBuf::from(words.next()?);
    // A hipcc reached through a wrapper (a container or chroot) names a clang of its own root:
    // then the clang++ beside the wrapper.
    let beside = hipcc.parent().map(|d| d.join("clang++")).filter(|c| c.is_file());
    let clang = if named.is_file() { named } else { beside? };
    let mut hip_flags = Vec::new();
    for w in words {
        for key in ["--rocm-path=", "--hip-device-lib-path=", "--hip-version="] {
            if let Some(v) = w.strip_prefix(key) {
                hip_flags.push(format!("{key}{}", v.trim_matches('"')));
            }
        }
    }
    let major = clang_major(&clang)?;
    Some(Toolchain { clang, major, hip_flags, from_hipcc: true, own_device_libs: false })
}

/// The HIP installation flags for a clang that does not come through hipcc: those of the hipcc
/// toolchain when there is one (its headers and device libraries), else clang's own search.
fn other_clang(clang: PathBuf, base: Option<&Toolchain>) -> Option<Toolchain> {
    let major = clang_major(&clang)?;
    let hip_flags = base.map(|b| b.hip_flags.clone()).unwrap_or_else(|| {
        let mut f = Vec::new();
        if let Some(r) = env("ROCM_PATH") {
            f.push(format!("--rocm-path={r}"));
        }
        if let Some(d) = find_device_libs() {
            f.push(format!("--hip-device-lib-path={}", d.display()));
        }
        f
    });
    Some(Toolchain { clang, major, hip_flags, from_hipcc: false, own_device_libs: false })
}

/// ROCm device libraries (ockl.bc ...): ROCm's and Debian's (rocm-device-libs) places.
fn find_device_libs() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for k in ["HIP_DEVICE_LIB_PATH", "ROCSHMEM_DEVICE_LIB_PATH"] {
        if let Some(v) = env(k) {
            dirs.push(v.into());
        }
    }
    for r in [env("ROCM_PATH").unwrap_or_default(), "/opt/rocm".into(), "/usr".into()] {
        if !r.is_empty() {
            dirs.push(Path::new(&r).join("amdgcn/bitcode"));
            dirs.push(Path::new(&r).join("lib/amdgcn/bitcode"));
            dirs.push(Path::new(&r).join("lib/x86_64-linux-gnu/amdgcn/bitcode"));
        }
    }
    for llvm in std::fs::read_dir("/usr/lib").into_iter().flatten().flatten() {
        let clang_dir = llvm.path().join("lib/clang");
        for v in std::fs::read_dir(&clang_dir).into_iter().flatten().flatten() {
            dirs.push(v.path().join("lib/amdgcn/bitcode"));
        }
    }
    dirs.into_iter().find(|d| d.join("ockl.bc").is_file())
}

/// An LLVM tool of the clang's version: next to the (resolved) clang, else `tool-N` on PATH.
fn llvm_tool(tc: &Toolchain, tool: &str) -> Option<PathBuf> {
    let real = std::fs::canonicalize(&tc.clang).unwrap_or_else(|_| tc.clang.clone());
    for dir in [real.parent(), tc.clang.parent()].into_iter().flatten() {
        if dir.join(tool).is_file() {
            return Some(dir.join(tool));
        }
    }
    which(&format!("{tool}-{}", tc.major)).or_else(|| {
        // ROCm: /opt/rocm/llvm/bin next to /opt/rocm/bin/hipcc's clang.
        Some(PathBuf::from(format!("/usr/lib/llvm-{}/bin/{tool}", tc.major))).filter(|p| p.is_file())
    })
}

/// Does this clang know `arch` (a target id such as gfx90a or gfx90a:xnack-)?
fn knows_arch(tc: &Toolchain, arch: &str, work: &Path) -> bool {
    let probe = work.join("empty.hip");
    let _ = std::fs::write(&probe, "\n");
    Command::new(&tc.clang)
        .args(["-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-emit-llvm", "-c"])
        .arg(format!("--offload-arch={arch}"))
        .arg(&probe)
        .arg("-o")
        .arg(work.join("empty.bc"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `tc`, given no device-library path, links the device libraries of all `arches` by
/// itself: a device-only compile that calls ockl links without -nogpulib.
fn finds_device_libs(tc: &Toolchain, arches: &[String], work: &Path) -> bool {
    if tc.hip_flags.iter().any(|f| f.starts_with("--hip-device-lib-path=")) || arches.is_empty() {
        return false;
    }
    let probe = work.join("ockl.hip");
    let decl = "extern \"C\" __attribute__((device)) unsigned long __ockl_get_local_size(unsigned int);\n";
    let body = "__attribute__((global)) void rocshmem_probe(unsigned long *p) { *p = __ockl_get_local_size(0); }\n";
    let _ = std::fs::write(&probe, format!("{decl}{body}"));
    let mut c = Command::new(&tc.clang);
    c.args(["-x", "hip", "-nogpuinc", "--cuda-device-only", "-O1"]).args(&tc.hip_flags);
    for a in arches {
        c.arg(format!("--offload-arch={a}"));
    }
    c.arg(&probe).arg("-o").arg(work.join("ockl-probe.out"));
    c.output().is_ok_and(|o| o.status.success())
}

/// Device libraries are linked (as hipcc does) when they exist for every arch of the compile;
/// otherwise -nogpulib (the consumer's link supplies ockl/ocml, as Triton does).
fn device_lib_flags(tc: &Toolchain, arches: &[String]) -> Vec<String> {
    if tc.own_device_libs {
        return tc.hip_flags.clone();
    }
    let lib_dir = tc.hip_flags.iter().find_map(|f| f.strip_prefix("--hip-device-lib-path=")).map(PathBuf::from);
    let have = |a: &String| {
        let name = a.split(':').next().unwrap_or(a).trim_start_matches("gfx");
        lib_dir.as_ref().is_some_and(|d| d.join(format!("oclc_isa_version_{name}.bc")).is_file())
    };
    let mut f = tc.hip_flags.clone();
    if !arches.iter().all(have) {
        f.retain(|x| !x.starts_with("--hip-device-lib-path="));
        f.push("-nogpulib".into());
    }
    f
}

fn arch_list() -> Vec<String> {
    let raw = env("ROCSHMEM_GPU_TARGETS").or_else(|| env("GPU_TARGETS"));
    let mut v: Vec<String> = match raw {
        Some(r) => r.split([';', ',', ' ']).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
        None => DEFAULT_ARCHES.iter().map(|s| s.to_string()).collect(),
    };
    v.dedup();
    v
}

fn file_arch(arch: &str) -> &str {
    arch.split(':').next().unwrap_or(arch)
}

fn jobs() -> usize {
    std::env::var("NUM_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(4usize).max(1)
}

/// Runs the jobs on up to `n` threads; returns the first error.
fn parallel(jobs: Vec<Command>, n: usize) -> Result<(), String> {
    let queue = std::sync::Mutex::new(jobs);
    let errors = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                loop {
                    let Some(mut cmd) = queue.lock().unwrap().pop() else { break };
                    if let Err(e) = run_ok(&mut cmd) {
                        errors.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    match errors.into_inner().unwrap().into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files_under(&p, acc);
        } else {
            acc.push(p);
        }
    }
}

/// A hash of everything the products depend on: everything under device/, the public
/// headers they include, the arch plan, the compilers, and this build code.
pub fn inputs_hash(root: &Path, plan: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    for d in ["device", "include/rocshmem"] {
        files_under(&root.join(d), &mut files);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    include_str!("amd_build.rs").hash(&mut h);
    plan.hash(&mut h);
    for f in files {
        f.strip_prefix(root).unwrap_or(&f).hash(&mut h);
        std::fs::read(&f).unwrap_or_default().hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// The products of a previous run in `work` (deleted before a new one and in `off` mode).
fn clear_products(work: &Path) {
    for e in std::fs::read_dir(work).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("librocshmem_device")
            || name.ends_with(".hipfb")
            || name == "products.txt"
            || name == "inputs.hash"
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn sources(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("device/gen"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "cpp")).collect())
        .unwrap_or_default();
    v.sort();
    v.push(root.join("device/src/gpu_globals.cpp"));
    v
}

fn common_flags(root: &Path) -> Vec<String> {
    vec![
        "-x".into(),
        "hip".into(),
        "-std=c++17".into(),
        "-O3".into(),
        "-fgpu-rdc".into(),
        "-fvisibility=default".into(),
        format!("-I{}", root.join("include").display()),
        format!("-I{}", root.join("device/include").display()),
    ]
}

/// No code object version in the bitcode (as upstream's DeviceBitcode.cmake:
/// `-Xclang -mcode-object-version=none`): the module that links it decides. Otherwise clang 21
/// writes the module flag `amdhsa_code_object_version` = 600, and Triton (3.6 writes 500) fails
/// to link it into a kernel ("linking module flags 'amdhsa_code_object_version': IDs have
/// conflicting values"): PyTorch's Triton layer could not use the bitcode. Clang before 17 has
/// no `none` (and HIP 5.2's clang 15 writes no flag Triton conflicts with).
fn no_code_object_version(tc: &Toolchain) -> Vec<&'static str> {
    if tc.major >= 17 { vec!["-Xclang", "-mcode-object-version=none"] } else { vec![] }
}

/// One arch's bitcode: compile every source device-only (front end only, as upstream's
/// DeviceBitcode.cmake: `-Xclang -disable-llvm-passes`, so the optimiser runs once, on the whole
/// library), llvm-link, opt -O3.
fn build_bitcode(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arch: &str,
    dest: &Path,
    slots: usize,
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
            .arg(&src)
            .arg("-o")
            .arg(&bc);
        jobs.push(c);
        if api { entry_points = Some(bc) } else { rdc_parts.push(bc) }
    }
    parallel(jobs, slots)?;
    let linked = dir.join("linked.bc");
    run_ok(Command::new(&link).args(&rdc_parts).args(&entry_points).arg("-o").arg(&linked))?;
    run_ok(Command::new(&link).args(&rdc_parts).arg("-o").arg(dir.join("rdc.bc")))?;
    run_ok(
        Command::new(&opt)
            .args(["-O3", "-mtriple=amdgcn-amd-amdhsa"])
            .arg(format!("-mcpu={}", file_arch(arch)))
            .arg(&linked)
            .arg("-o")
            .arg(dest),
    )?;
    Ok(())
}

/// The target id of an offload bundle entry: `hip-amdgcn-amd-amdhsa-gfx90a`,
/// `hip-amdgcn-amd-amdhsa--gfx942:xnack-`, `hipv4-amdgcn-amd-amdhsa-unknown-gfx950` (the triple
/// has three or four parts by clang version) -> `gfx90a`, `gfx942:xnack-`, `gfx950`. None for the
/// host entry.
fn bundle_target_id(entry: &str) -> Option<&str> {
    if entry.starts_with("host-") {
        return None;
    }
    entry.find("-gfx").map(|i| &entry[i + 1..])
}

/// The offload-bundler command that `plan` (a clang command run with `-###`) would run, with the
/// entry of each target id taken from `inputs` (`host` for the host entry, else the one the plan
/// names) and the bundle written to `out`: the bundler of the clang's own version, and its
/// spelling of the targets, which changes between releases.
fn bundle_as_planned(
    tc: &Toolchain,
    plan: &Command,
    host: Option<&Path>,
    inputs: &[(String, PathBuf)],
    out: &Path,
) -> Result<Command, String> {
    let mut p = Command::new(plan.get_program());
    p.args(plan.get_args());
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

/// librocshmem_device.a: one relocatable (-fgpu-rdc) fat object, as `clang -fgpu-rdc -c` makes
/// it, whose device part for each arch is that arch's library bitcode (every source but the JIT
/// entry points of bitcode_api.cpp, linked, not yet optimised) and whose host part is gpu_globals.cpp's host pass (variable registration, host shadows,
/// rocshmemi_device_globals_set; the other sources have no host-side code). The bundler command
/// is the one the clang itself would run (read with -###), so the target-id spelling matches.
fn build_archive(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arches: &[String],
    bitcode: &[(String, PathBuf)],
    dest: &Path,
) -> Result<(), String> {
    let ar = llvm_tool(tc, "llvm-ar").or_else(|| which("ar")).ok_or("no llvm-ar / ar found")?;
    let dir = work.join("rdc");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = root.join("device/src/gpu_globals.cpp");
    let host = dir.join("gpu_globals-host.o");
    let obj = dir.join("rocshmem_device.o");
    let mut base = Command::new(&tc.clang);
    base.args(common_flags(root)).args(device_lib_flags(tc, arches)).args(["-fPIC", "-c"]);
    for a in arches {
        base.arg(format!("--offload-arch={a}"));
    }
    let with = |extra: &[&str], out: &Path| {
        let mut c = Command::new(base.get_program());
        c.args(base.get_args()).args(extra).arg(&src).arg("-o").arg(out);
        c
    };
    run_ok(&mut with(&["--cuda-host-only"], &host))?;
    run_ok(&mut bundle_as_planned(tc, &with(&["-###"], &obj), Some(&host), bitcode, &obj)?)?;
    let _ = std::fs::remove_file(dest);
    run_ok(Command::new(&ar).arg("rcs").arg(dest).arg(&obj))?;
    Ok(())
}

/// The helper kernels of the `*_on_stream` calls (device/stream/module_core.cu and
/// module_reduce.cu, the sources NVIDIA's PTX comes from) as code objects for `hipModuleLoadData`:
/// each arch compiled as a whole program (not relocatable: the kernels and their own device
/// globals), then one offload bundle per module holding every arch, as `hipcc --genco` makes
/// it. build.rs embeds them in librocshmem (src/gpu/hip.rs loads them). Returns the file names.
fn build_stream_modules(
    tc: &Toolchain,
    root: &Path,
    work: &Path,
    arches: &[String],
    slots: usize,
) -> Result<Vec<String>, String> {
    let dir = work.join("stream");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let flags: Vec<String> = common_flags(root).into_iter().filter(|f| f != "-fgpu-rdc").collect();
    let mut jobs = Vec::new();
    for m in STREAM_MODULES {
        let src = root.join(format!("device/stream/module_{m}.cu"));
        for a in arches {
            let mut c = Command::new(&tc.clang);
            c.args(&flags)
                .args(device_lib_flags(tc, std::slice::from_ref(a)))
                .args(["--cuda-device-only", "--no-gpu-bundle-output"])
                .arg(format!("--offload-arch={a}"))
                .arg(&src)
                .arg("-o")
                .arg(dir.join(format!("{m}-{}.co", file_arch(a))));
            jobs.push(c);
        }
    }
    parallel(jobs, slots)?;
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

/// Builds the AMD products into `out/amd`. Never fails the build unless ROCSHMEM_AMD=require.
pub fn build(root: &Path, out: &Path) {
    let mode = env("ROCSHMEM_AMD").unwrap_or_else(|| "off".into()).to_ascii_lowercase();
    if matches!(mode.as_str(), "off" | "0" | "no" | "false") {
        clear_products(&out.join("amd"));
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

    // Compilers: hipcc's clang (or $ROCSHMEM_HIP_CLANG) first, then newer clang++-N for arches
    // it does not know.
    let hipcc = env("HIPCC")
        .map(PathBuf::from)
        .or_else(|| which("hipcc"))
        .or_else(|| env("ROCM_PATH").map(|r| Path::new(&r).join("bin/hipcc")).filter(|p| p.is_file()))
        .or_else(|| Some(PathBuf::from("/opt/rocm/bin/hipcc")).filter(|p| p.is_file()));
    let primary = match env("ROCSHMEM_HIP_CLANG") {
        Some(c) => {
            let base = hipcc.as_deref().and_then(|h| from_hipcc(h, &work));
            other_clang(PathBuf::from(c), base.as_ref())
        }
        None => hipcc.as_deref().and_then(|h| from_hipcc(h, &work)),
    };
    let Some(primary) = primary else {
        if require {
            panic!("rocshmem: ROCSHMEM_AMD=require but no hipcc / HIP clang found (set HIPCC or ROCSHMEM_HIP_CLANG)");
        }
        clear_products(&work);
        warn("AMD products skipped: no hipcc found (set HIPCC or ROCSHMEM_HIP_CLANG to build them)");
        return;
    };
    let mut compilers = vec![primary.clone()];
    for n in (primary.major + 1)..=30 {
        if let Some(c) = which(&format!("clang++-{n}")).and_then(|c| other_clang(c, Some(&primary))) {
            compilers.push(c);
        }
    }

    // Which compiler builds which arch.
    let mut bc_arches: Vec<(String, Toolchain)> = Vec::new();
    let mut rdc_arches: Vec<String> = Vec::new();
    let mut unknown = Vec::new();
    for arch in arch_list() {
        match compilers.iter().find(|tc| knows_arch(tc, &arch, &work)) {
            Some(tc) => {
                if tc.clang == primary.clang {
                    rdc_arches.push(arch.clone());
                }
                bc_arches.push((arch, tc.clone()));
            }
            None => unknown.push(arch),
        }
    }
    // Compilers given no device-library path that find their own (Debian's clang-N).
    let own: Vec<PathBuf> = compilers
        .iter()
        .filter(|c| {
            let arches: Vec<String> =
                bc_arches.iter().filter(|(_, t)| t.clang == c.clang).map(|(a, _)| a.clone()).collect();
            finds_device_libs(c, &arches, &work)
        })
        .map(|c| c.clang.clone())
        .collect();
    for (_, t) in bc_arches.iter_mut() {
        t.own_device_libs = own.contains(&t.clang);
    }
    let primary = Toolchain { own_device_libs: own.contains(&primary.clang), ..primary };
    if !unknown.is_empty() {
        let tried: Vec<String> = compilers.iter().map(|c| c.clang.display().to_string()).collect();
        warn(&format!(
            "AMD arches skipped, no compiler knows them: {} (tried {})",
            unknown.join(", "),
            tried.join(", ")
        ));
    }
    let only_bc: Vec<&str> =
        bc_arches.iter().filter(|(a, _)| !rdc_arches.contains(a)).map(|(a, _)| a.as_str()).collect();
    if !only_bc.is_empty() {
        warn(&format!(
            "AMD arches in the bitcode only ({} does not know them; librocshmem_device.a needs one compiler): {}",
            primary.clang.display(),
            only_bc.join(", ")
        ));
    }
    if bc_arches.is_empty() {
        clear_products(&work);
        return fail("no arch to build".into());
    }

    // Reuse the products while nothing they are made from changed.
    let plan: Vec<String> = bc_arches
        .iter()
        .map(|(a, tc)| {
            format!("{a}={}:{}:{}:{}", tc.clang.display(), tc.major, tc.hip_flags.join(" "), tc.own_device_libs)
        })
        .chain(rdc_arches.iter().map(|a| format!("rdc={a}")))
        .collect();
    let hash = inputs_hash(root, &plan.join("\n"));
    let manifest = work.join("products.txt");
    if std::fs::read_to_string(work.join("inputs.hash")).is_ok_and(|h| h.trim() == hash)
        && product_files(&work).is_some_and(|f| f.iter().all(|f| work.join(f).is_file()))
    {
        warn(&format!("AMD device library up to date (inputs unchanged): {}", work.display()));
        return;
    }
    clear_products(&work);
    let cache = cache_dir("amd").map(|c| c.join(&hash));
    if let Some(c) = &cache {
        match from_cache(c, &work, &hash) {
            Ok(true) => return warn(&format!("AMD device library from the cache (inputs unchanged): {}", c.display())),
            Ok(false) => {}
            Err(e) => warn(&format!("AMD products cache {} not used: {e}", c.display())),
        }
    }
    clear_products(&work);

    // The arches are built side by side (opt of the whole library is the long step, one core
    // each); each arch's compile jobs share the NUM_JOBS slots.
    let per_arch = (jobs() / bc_arches.len()).max(1);
    // Each step says how long it took (wall seconds, on a machine that may run other work).
    let secs = |t: std::time::Instant| t.elapsed().as_secs();
    let results: Vec<(String, PathBuf, Result<(), String>, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = bc_arches
            .iter()
            .map(|(arch, tc)| {
                let work = &work;
                s.spawn(move || {
                    let t = std::time::Instant::now();
                    let dest = work.join(format!("librocshmem_device_{}.bc", file_arch(arch)));
                    let r = build_bitcode(tc, root, work, arch, &dest, per_arch);
                    (arch.clone(), dest, r, secs(t))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut built = Vec::new();
    for ((arch, dest, r, took), (_, tc)) in results.into_iter().zip(&bc_arches) {
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
    let rdc_arches: Vec<String> = rdc_arches.into_iter().filter(|a| built.iter().any(|(b, _)| b == a)).collect();
    let mut archive_arches: Vec<String> = Vec::new();
    if !rdc_arches.is_empty() {
        let dest = work.join("librocshmem_device.a");
        let t = std::time::Instant::now();
        match build_archive(&primary, root, &work, &rdc_arches, &built, &dest) {
            Ok(()) => {
                warn(&format!(
                    "AMD device library ({}, -fgpu-rdc{}, {} s): {}",
                    rdc_arches.join(", "),
                    if primary.from_hipcc { ", hipcc's clang" } else { "" },
                    secs(t),
                    dest.display()
                ));
                archive_arches = rdc_arches;
            }
            Err(e) => fail(format!("librocshmem_device.a: {e}")),
        }
    }
    // The stream kernels, for the arches of the archive (one compiler).
    let mut stream: Vec<String> = Vec::new();
    if !archive_arches.is_empty() {
        let t = std::time::Instant::now();
        match build_stream_modules(&primary, root, &work, &archive_arches, jobs()) {
            Ok(names) => {
                warn(&format!(
                    "AMD stream kernels ({}, {} s): {}",
                    archive_arches.join(", "),
                    secs(t),
                    names.iter().map(|n| work.join(n).display().to_string()).collect::<Vec<_>>().join(", ")
                ));
                stream = names;
            }
            Err(e) => fail(format!("the *_on_stream kernels: {e}")),
        }
    }
    // What the CMake build stages and installs (files), what build.rs embeds (stream); the hash
    // marks the products current.
    let bc_names: Vec<String> = built.iter().map(|(a, _)| file_arch(a).to_string()).collect();
    let mut files: Vec<String> = bc_names.iter().map(|a| format!("librocshmem_device_{a}.bc")).collect();
    if !archive_arches.is_empty() {
        files.push("librocshmem_device.a".into());
    }
    if files.is_empty() {
        return;
    }
    let text = format!(
        "archive_arches={}\nbitcode_arches={}\nfiles={}\nstream={}\n",
        archive_arches.join(";"),
        bc_names.join(";"),
        files.join(";"),
        stream.join(";")
    );
    if let Err(e) = std::fs::write(&manifest, text).and_then(|_| std::fs::write(work.join("inputs.hash"), &hash)) {
        warn(&format!("AMD products manifest not written: {e}"));
    }
    if let Some(c) = &cache {
        if let Err(e) = to_cache(&work, c) {
            warn(&format!("AMD products not cached in {}: {e}", c.display()));
        }
    }
}

/// The product files products.txt in `work` lists (staged ones, then the stream kernels).
fn product_files(work: &Path) -> Option<Vec<String>> {
    let m = std::fs::read_to_string(work.join("products.txt")).ok()?;
    Some(
        m.lines()
            .filter_map(|l| l.strip_prefix("files=").or_else(|| l.strip_prefix("stream=")))
            .flat_map(|f| f.split(';'))
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect(),
    )
}

/// Copies the products of an earlier build with the same inputs from `cache` (a folder named by
/// the inputs hash under the AMD cache folder) into `work`: true when it had them all.
fn from_cache(cache: &Path, work: &Path, hash: &str) -> Result<bool, String> {
    let Some(files) = product_files(cache) else { return Ok(false) };
    let mut names: Vec<&str> = files.iter().map(String::as_str).collect();
    names.push("products.txt");
    if !cache_get(cache, &names, work)? {
        return Ok(false);
    }
    std::fs::write(work.join("inputs.hash"), hash).map_err(|e| e.to_string())?;
    Ok(true)
}

fn to_cache(work: &Path, cache: &Path) -> Result<(), String> {
    let files = product_files(work).ok_or("no products.txt")?;
    let mut names: Vec<&str> = files.iter().map(String::as_str).collect();
    names.push("products.txt");
    cache_put(work, &names, cache)
}

/// The folder that keeps device products by the hash of their inputs, shared by every cargo
/// profile and build folder that names it: `$ROCSHMEM_DEVICE_CACHE/<kind>` (CI: under
/// /var/cache/rocshmem-ci), else `<cargo target folder>/device-cache/<kind>`, so that the dev
/// and release profiles of one build folder compile the same device code once. None outside a
/// build script without that variable (device/amd_main.rs).
pub fn cache_dir(kind: &str) -> Option<PathBuf> {
    if let Some(d) = env("ROCSHMEM_DEVICE_CACHE") {
        return Some(PathBuf::from(d).join(kind));
    }
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    Some(out.ancestors().nth(4)?.join("device-cache").join(kind))
}

/// Copies `files` from `cache` into `work`: true when the cache had them all (false, nothing
/// copied, when it had not).
pub fn cache_get(cache: &Path, files: &[&str], work: &Path) -> Result<bool, String> {
    if !files.iter().all(|f| cache.join(f).is_file()) {
        return Ok(false);
    }
    for f in files {
        std::fs::copy(cache.join(f), work.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    Ok(true)
}

/// Keeps `files` of `work` in `cache` for later builds with the same inputs (written to a
/// temporary folder, then renamed, so that a reader never sees half of it), and removes all but
/// the four newest entries beside it.
pub fn cache_put(work: &Path, files: &[&str], cache: &Path) -> Result<(), String> {
    let parent = cache.parent().ok_or("no parent")?;
    let tmp = parent.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    for f in files {
        std::fs::copy(work.join(f), tmp.join(f)).map_err(|e| format!("{f}: {e}"))?;
    }
    let _ = std::fs::remove_dir_all(cache);
    std::fs::rename(&tmp, cache).map_err(|e| e.to_string())?;
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(parent)
        .map_err(|e| e.to_string())?
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    entries.sort();
    for (_, old) in entries.iter().rev().skip(4) {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
}
