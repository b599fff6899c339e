//! What is built: the arches (`ROCSHMEM_GPU_TARGETS`), which compiler builds each, the sources
//! and the flags every compile of the library gets.

use super::shell::{env, warn};
use super::toolchain::{Toolchain, finds_device_libs, knows_arch};
use std::path::{Path, PathBuf};

/// Upstream's default list (its CMakeLists.txt: gfx90a, gfx1100, gfx1201, gfx942, and gfx950 with
/// ROCm 7); an arch the compiler does not know is skipped with one warning line.
pub(super) const DEFAULT_ARCHES: &[&str] = &["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"];

/// Which compiler builds which arch.
pub(super) struct Plan {
    /// The compiler of the archive and the stream kernels (one fat archive needs one compiler).
    pub(super) primary: Toolchain,
    /// Every arch that gets bitcode, with its compiler.
    pub(super) bitcode: Vec<(String, Toolchain)>,
    /// The arches the primary compiler knows: those of the archive.
    pub(super) rdc: Vec<String>,
}

impl Plan {
    /// Gives each arch of the list the first compiler that knows it; says (in warning lines)
    /// which arches no compiler knows and which get the bitcode only.
    pub(super) fn choose(primary: Toolchain, compilers: &[Toolchain], work: &Path) -> Plan {
        let mut bitcode: Vec<(String, Toolchain)> = Vec::new();
        let mut rdc: Vec<String> = Vec::new();
        let mut unknown = Vec::new();
        for arch in arch_list() {
            match compilers.iter().find(|tc| knows_arch(tc, &arch, work)) {
                Some(tc) => {
                    if tc.clang == primary.clang {
                        rdc.push(arch.clone());
                    }
                    bitcode.push((arch, tc.clone()));
                }
                None => unknown.push(arch),
            }
        }
        // Compilers given no device-library path that find their own (Debian's clang-N).
        let own: Vec<PathBuf> = compilers
            .iter()
            .filter(|c| {
                let arches: Vec<String> =
                    bitcode.iter().filter(|(_, t)| t.clang == c.clang).map(|(a, _)| a.clone()).collect();
                finds_device_libs(c, &arches, work)
            })
            .map(|c| c.clang.clone())
            .collect();
        for (_, t) in bitcode.iter_mut() {
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
        let only_bc: Vec<&str> = bitcode.iter().filter(|(a, _)| !rdc.contains(a)).map(|(a, _)| a.as_str()).collect();
        if !only_bc.is_empty() {
            warn(&format!(
                "AMD arches in the bitcode only ({} does not know them; librocshmem_device.a needs one compiler): {}",
                primary.clang.display(),
                only_bc.join(", ")
            ));
        }
        Plan { primary, bitcode, rdc }
    }

    /// The plan as text, for the inputs hash: each arch with its compiler, then the archive's.
    pub(super) fn text(&self) -> String {
        let lines: Vec<String> = self
            .bitcode
            .iter()
            .map(|(a, tc)| {
                format!("{a}={}:{}:{}:{}", tc.clang.display(), tc.major, tc.hip_flags.join(" "), tc.own_device_libs)
            })
            .chain(self.rdc.iter().map(|a| format!("rdc={a}")))
            .collect();
        lines.join("\n")
    }
}

pub(super) fn arch_list() -> Vec<String> {
    let raw = env("ROCSHMEM_GPU_TARGETS").or_else(|| env("GPU_TARGETS"));
    let mut v: Vec<String> = match raw {
        Some(r) => r.split([';', ',', ' ']).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
        None => DEFAULT_ARCHES.iter().map(|s| s.to_string()).collect(),
    };
    v.dedup();
    v
}

pub(super) fn file_arch(arch: &str) -> &str {
    arch.split(':').next().unwrap_or(arch)
}

pub(super) fn sources(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("device/gen"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "cpp")).collect())
        .unwrap_or_default();
    v.sort();
    v.push(root.join("device/src/gpu_globals.cpp"));
    v
}

/// A source as the compile commands name it: relative to the root (the commands run there), with
/// a fixed compilation-unit id (clang's default is a hash of the path), so that the front end's
/// output is the same in every checkout folder (pieces.rs keys the later steps by it).
pub(super) fn source_args(root: &Path, src: &Path) -> Vec<String> {
    let stem = src.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = src.strip_prefix(root).unwrap_or(src);
    vec![format!("-cuid=rocshmem_{stem}"), rel.display().to_string()]
}

pub(super) fn common_flags(root: &Path) -> Vec<String> {
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
