//! The HIP compilers: hipcc's clang (or `$ROCSHMEM_HIP_CLANG`) first, then newer `clang++-N`
//! on PATH for arches it does not know, and what each needs to find HIP and its device
//! libraries.

use super::shell::{env, which};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A HIP-capable clang and the flags that point it at a HIP installation.
#[derive(Clone, Debug)]
pub(super) struct Toolchain {
    pub(super) clang: PathBuf,
    pub(super) major: u32,
    /// --rocm-path=..., --hip-device-lib-path=..., --hip-version=... (as hipcc passes them).
    pub(super) hip_flags: Vec<String>,
    pub(super) from_hipcc: bool,
    /// No device-library path among the flags, but the clang finds the device libraries of
    /// every arch by itself (Debian's clang-N with rocm-device-libs-N, whose hipcc passes none).
    pub(super) own_device_libs: bool,
}

/// The primary compiler and every candidate (the primary first), or None when there is no
/// hipcc or HIP clang.
pub(super) fn find(work: &Path) -> Option<(Toolchain, Vec<Toolchain>)> {
    let hipcc = env("HIPCC")
        .map(PathBuf::from)
        .or_else(|| which("hipcc"))
        .or_else(|| env("ROCM_PATH").map(|r| Path::new(&r).join("bin/hipcc")).filter(|p| p.is_file()))
        .or_else(|| Some(PathBuf::from("/opt/rocm/bin/hipcc")).filter(|p| p.is_file()));
    let primary = match env("ROCSHMEM_HIP_CLANG") {
        Some(c) => {
            let base = hipcc.as_deref().and_then(|h| from_hipcc(h, work));
            other_clang(PathBuf::from(c), base.as_ref())
        }
        None => hipcc.as_deref().and_then(|h| from_hipcc(h, work)),
    }?;
    let mut compilers = vec![primary.clone()];
    for n in (primary.major + 1)..=30 {
        if let Some(c) = which(&format!("clang++-{n}")).and_then(|c| other_clang(c, Some(&primary))) {
            compilers.push(c);
        }
    }
    Some((primary, compilers))
}

pub(super) fn clang_major(clang: &Path) -> Option<u32> {
    let out = Command::new(clang).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let i = text.find("clang version ")? + "clang version ".len();
    text[i..].split('.').next()?.trim().parse().ok()
}

/// hipcc's clang and HIP flags, read from the command hipcc runs (HIPCC_VERBOSE=1).
pub(super) fn from_hipcc(hipcc: &Path, work: &Path) -> Option<Toolchain> {
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
pub(super) fn other_clang(clang: PathBuf, base: Option<&Toolchain>) -> Option<Toolchain> {
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
pub(super) fn find_device_libs() -> Option<PathBuf> {
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
pub(super) fn llvm_tool(tc: &Toolchain, tool: &str) -> Option<PathBuf> {
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
pub(super) fn knows_arch(tc: &Toolchain, arch: &str, work: &Path) -> bool {
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
pub(super) fn finds_device_libs(tc: &Toolchain, arches: &[String], work: &Path) -> bool {
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
pub(super) fn device_lib_flags(tc: &Toolchain, arches: &[String]) -> Vec<String> {
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

/// No code object version in the bitcode (as upstream's DeviceBitcode.cmake:
/// `-Xclang -mcode-object-version=none`): the module that links it decides. Otherwise clang 21
/// writes the module flag `amdhsa_code_object_version` = 600, and Triton (3.6 writes 500) fails
/// to link it into a kernel ("linking module flags 'amdhsa_code_object_version': IDs have
/// conflicting values"): PyTorch's Triton layer could not use the bitcode. Clang before 17 has
/// no `none` (and HIP 5.2's clang 15 writes no flag Triton conflicts with).
pub(super) fn no_code_object_version(tc: &Toolchain) -> Vec<&'static str> {
    if tc.major >= 17 { vec!["-Xclang", "-mcode-object-version=none"] } else { vec![] }
}
