//! Build script: check that the generated files are current, compile the C++ shim that gives
//! the library upstream's C++ (mangled) names and the host platform's device library, and
//! build the GPU pieces that are asked for.
//!
//! Generated files (codegen/generated-files.txt) live in the source tree and are committed;
//! `cargo xtask gen` writes them. This script only compares them with what the generator
//! would write and fails, naming that command, when one is stale: it never writes the tree.

#[path = "device/amd_build/mod.rs"]
mod amd_build;
#[path = "codegen/mod.rs"]
mod codegen;
#[path = "src/gpu/stream_pack.rs"]
#[allow(dead_code)] // the reading half is the library's
mod pack;

use std::path::{Path, PathBuf};

/// The SONAME major: the library's major version.
fn soname(major: u32) -> String {
    format!("librocshmem.so.{major}")
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let v = |k: &str| std::env::var(k).unwrap().parse::<u32>().unwrap();
    let version = (v("CARGO_PKG_VERSION_MAJOR"), v("CARGO_PKG_VERSION_MINOR"), v("CARGO_PKG_VERSION_PATCH"));

    for p in [
        "codegen",
        "cbindgen.toml",
        "src",
        "include/rocshmem",
        "device/src",
        "device/platform",
        "device/gen",
        "device/stream",
        "device/include",
        "device/cuda_decls",
        "ctests/gen",
        "python/rocshmem/_table.py",
    ] {
        println!("cargo:rerun-if-changed={p}");
    }

    // 1. The generated files (the typed API, headers and tests from codegen/table.rs, the C
    //    headers cbindgen writes from src/) must be what the generator writes today.
    if !generated_files_current(&root, version) {
        return;
    }
    // 2. The C++ shim and the device library built for the host platform (GPU threads are CPU
    //    threads started by its launcher), linked whole into both the .so and the .a.
    compile_cxx(&root, &out);
    // 3. The shared library: SONAME, exported C++ names, -Bsymbolic-functions.
    shared_library_args(&out, version);

    // 4. The helper kernels of the *_on_stream calls as PTX for NVIDIA, embedded in the library.
    stream_ptx(&root, &out);

    // 5. The AMD GPU device library and bitcode (OUT_DIR/amd/), when asked for (ROCSHMEM_AMD),
    //    and the AMD stream kernels it made, embedded in the library (src/gpu/hip.rs).
    amd_build::build(&root, &out);
    stream_code_objects(&out);
}

/// Whether the generated files are what the generator writes today (else a cargo error line
/// naming `cargo xtask gen`).
fn generated_files_current(root: &Path, version: (u32, u32, u32)) -> bool {
    let problems = codegen::check(root, &codegen::outputs(root, version));
    if !problems.is_empty() {
        let n = problems.len();
        let first = problems.into_iter().take(3).collect::<Vec<_>>().join(", ");
        println!(
            "cargo::error=rocshmem: {n} generated file(s) not current ({first}{}): run `{}` and commit them",
            if n > 3 { ", ..." } else { "" },
            codegen::COMMAND
        );
        return false;
    }
    true
}

/// The C++ shim and the host platform's device library, as one static library linked whole.
fn compile_cxx(root: &Path, out: &Path) {
    let mut device_sources: Vec<PathBuf> = std::fs::read_dir(root.join("device/gen"))
        .expect("device/gen")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    device_sources.sort();
    let mut cxx = cc::Build::new();
    // -O2, not cargo's release -O3: the host platform's device library is every type and group
    // form of the API, and -O3's unrolling made it 1.5x larger (api_coll.o: 888 KB of code at
    // -O3, 608 KB at -O2), most of the shipped library (docs/benchmarks-nvidia.md, image size).
    if std::env::var("OPT_LEVEL").as_deref() == Ok("3") {
        cxx.opt_level(2);
    }
    cxx.cpp(true)
        .std("c++17")
        .include(root.join("include"))
        .include(root.join("device/include"))
        .file(root.join("src/cxx/shim_core.cpp"))
        .file(root.join("src/cxx/gda_host.cpp"))
        .file(root.join("src/cxx/gen/shim.cpp"))
        .file(root.join("src/cxx/gen/shim_v2.cpp"))
        .file(root.join("device/platform/host_launcher.cpp"))
        .file(root.join("device/stream/host_launch.cpp"))
        .files(&device_sources)
        .flag("-fno-exceptions")
        .flag("-fno-rtti")
        .warnings(true)
        .extra_warnings(true)
        .flag("-Werror")
        .cargo_metadata(false)
        .compile("rocshmem_cxx");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static:+whole-archive=rocshmem_cxx");
}

/// The shared library's link arguments: SONAME, and the C++ names exported next to Rust's C
/// names (rustc's own version script lists only Rust symbols; the linker merges the two scripts).
fn shared_library_args(out: &Path, version: (u32, u32, u32)) {
    // ROCSHMEM_CTX_DEFAULT is the shim's extern "C" variable (unmangled, as upstream).
    // The C++ names are matched demangled, namespace by namespace: a wider pattern such as
    // _ZN8rocshmem* also exported the Rust core's own functions (legacy mangling, a hash
    // that changes with every build) and the device library's template instantiations
    // (rocshmem::dev), which no header declares. A C++ function of another form needs its
    // line here. The exported list is abi/librocshmem.abi (scripts/abi.py).
    let map = out.join("cxx_exports.map");
    write_if_changed(
        &map,
        "{\n  global:\n    extern \"C++\" {\n      rocshmem::rocshmem_*;\n      rocshmem::get_backend_type*;\n      rocshmem::device::*;\n      \
         rocshmem::platform::*;\n      rocshmem::ROCSHMEM_*;\n      rocshmem::host::ROCSHMEM_*;\n    };\n    \
         ROCSHMEM_CTX_DEFAULT;\n    ROCSHMEM_TEAM_WORLD;\n    ROCSHMEM_TEAM_SHARED;\n    rocshmemi_bc_*;\n    \
         rocshmem_platform_host_in_kernel;\n    RocshmemGetFunctionTable;\n};\n",
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{}", soname(version.0));
    // The library's own calls bind to its own functions: a program that defines a symbol of the
    // same name (nvcc emits host stubs named like device functions) cannot hijack them.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
}

/// Turns on cfg `rocshmem_stream_amd` when the AMD build made the stream kernels' bundles
/// (products.txt `stream=`), with their arches in `ROCSHMEMI_STREAM_AMD_ARCHES`.
fn stream_code_objects(out: &Path) {
    println!("cargo::rustc-check-cfg=cfg(rocshmem_stream_amd)");
    let amd = out.join("amd");
    let Ok(m) = std::fs::read_to_string(amd.join("products.txt")) else { return };
    let key = |k: &str| m.lines().find_map(|l| l.strip_prefix(k)).unwrap_or("").to_string();
    let stream = key("stream=");
    let names: Vec<&str> = stream.split(';').filter(|s| !s.is_empty()).collect();
    if names == ["stream_core.hipfb", "stream_reduce.hipfb"] && names.iter().all(|n| amd.join(n).is_file()) {
        println!("cargo:rustc-cfg=rocshmem_stream_amd");
        println!("cargo:rustc-env=ROCSHMEMI_STREAM_AMD_ARCHES={}", key("archive_arches=").replace(';', ", "));
    }
}

/// The stream helper kernels (device/stream/module_*.cu) as PTX in OUT_DIR, for src/gpu/cuda.rs
/// to embed (cfg `rocshmem_stream_ptx`). Needs an LLVM clang >= 16 (NVPTX target, sm_90 known):
/// `ROCSHMEM_LLVM_BIN`, else the first /usr/lib/llvm-{16..21}/bin, else clang++-16.. on the
/// PATH. Without one the library is built without them (one warning) and the NVIDIA
/// `*_on_stream` calls say so. Nothing of CUDA is needed: the kernels compile against the
/// declarations in device/cuda_decls, as the device bitcode does.
fn stream_ptx(root: &Path, out: &Path) {
    println!("cargo::rustc-check-cfg=cfg(rocshmem_stream_ptx)");
    println!("cargo:rerun-if-env-changed=ROCSHMEM_LLVM_BIN");
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(bin) = std::env::var("ROCSHMEM_LLVM_BIN") {
        candidates.push(Path::new(&bin).join("clang++"));
    }
    for v in 16..=21 {
        candidates.push(PathBuf::from(format!("/usr/lib/llvm-{v}/bin/clang++")));
    }
    for v in 16..=21 {
        candidates.push(PathBuf::from(format!("clang++-{v}")));
    }
    let compile = |clang: &Path, src: &str, dst: &Path| -> Result<(), String> {
        let mut c = stream_command(root, clang, src);
        c.arg("-S").arg("-o").arg(dst);
        run_tool(c, src).map(|_| ())
    };
    // Kept by what they are made from: the modules' preprocessed text without blank lines (as
    // the device pieces, device/amd_build/pieces.rs: a comment or an AMD-only change reuses
    // them), this script, the compiler found, ptxas and the SASS arches. Every cargo profile
    // (clippy, test, release, pip) and build folder that shares the cache compiles them once
    // (docs/development.md).
    let modules = ["device/stream/module_core.cu", "device/stream/module_reduce.cu"];
    let cached = ["stream_core.pack", "stream_reduce.pack"];
    let cache = |clang: &Path| -> Option<PathBuf> {
        let version = std::process::Command::new(clang).arg("--version").output().ok()?;
        println!("cargo:rerun-if-env-changed=ROCSHMEM_STREAM_SASS");
        let mut plan = format!(
            "stream {}\n{}\n{:?}\n{:?}\n{}",
            clang.display(),
            String::from_utf8_lossy(&version.stdout),
            find_ptxas(),
            std::env::var("ROCSHMEM_STREAM_SASS").ok(),
            include_str!("build.rs")
        );
        for m in modules {
            let mut c = stream_command(root, clang, m);
            c.args(["-E", "-P", "-o", "-"]);
            let text = String::from_utf8(run_tool(c, m).ok()?).ok()?;
            plan.extend(text.lines().filter(|l| !l.trim().is_empty()).flat_map(|l| [l, "\n"]));
        }
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        plan.hash(&mut h);
        Some(amd_build::cache::cache_dir("stream")?.join(format!("{:016x}", h.finish())))
    };
    let mut why = Vec::new();
    for clang in candidates {
        let cache = cache(&clang);
        if let Some(c) = &cache {
            if amd_build::cache::cache_get(c, &cached, out).unwrap_or(false) {
                println!("cargo:rustc-cfg=rocshmem_stream_ptx");
                return;
            }
        }
        let core = out.join("stream_core.ptx");
        let reduce = out.join("stream_reduce.ptx");
        match compile(&clang, modules[0], &core).and_then(|()| compile(&clang, modules[1], &reduce)) {
            Ok(()) => {
                let ptxas = find_ptxas();
                std::thread::scope(|s| {
                    for (ptx, name) in [(&core, "stream_core"), (&reduce, "stream_reduce")] {
                        let (ptxas, dst) = (ptxas.as_deref(), out.join(format!("{name}.pack")));
                        s.spawn(move || pack_stream_module(ptx, 70, &dst, ptxas));
                    }
                });
                if let Some(c) = &cache {
                    if let Err(e) = amd_build::cache::cache_put(out, &cached, c) {
                        println!("cargo:warning=rocSHMEM: stream kernels not cached in {}: {e}", c.display());
                    }
                }
                println!("cargo:rustc-cfg=rocshmem_stream_ptx");
                return;
            }
            Err(e) => why.push(e),
        }
    }
    let last = why.into_iter().rfind(|w| !w.contains("No such file")).unwrap_or_else(|| "no clang++ found".into());
    println!(
        "cargo:warning=rocSHMEM: NVIDIA *_on_stream kernels not built (needs clang >= 16 with the NVPTX target; set \
         ROCSHMEM_LLVM_BIN): {last}"
    );
}

/// The compile of one stream kernel module (`src`, relative to the root) to sm_70 PTX, without
/// its output: `-S -o` to compile, `-E -P` to preprocess. PTX for sm_70 (the device library's
/// minimum) JIT-compiles on every newer GPU. PTX ISA 7.0 (CUDA 11 drivers and newer): without a
/// CUDA installation clang writes .version 6.0 for sm_70, which lacks nanosleep, and the driver
/// refuses the module. (sm_70 is also the PTX image's SM in the containers: pack_stream_module.)
fn stream_command(root: &Path, clang: &Path, src: &str) -> std::process::Command {
    let mut c = std::process::Command::new(clang);
    c.args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "-std=c++17", "-O3", "-w"])
        .arg("--cuda-gpu-arch=sm_70")
        .args(["-Xclang", "-target-feature", "-Xclang", "+ptx70"]);
    for inc in ["device/cuda_decls", "include/rocshmem/compat", "include", "device/include"] {
        c.arg("-I").arg(root.join(inc));
    }
    c.arg(root.join(src));
    c
}

/// Runs a tool: its standard output, or its first error lines.
fn run_tool(mut c: std::process::Command, what: &str) -> Result<Vec<u8>, String> {
    let program = c.get_program().to_string_lossy().into_owned();
    let o = c.output().map_err(|e| format!("{program}: {e}"))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(format!("{program} {what}: {}", err.lines().take(3).collect::<Vec<_>>().join(" | ")));
    }
    Ok(o.stdout)
}

/// ptxas for the stream kernels' SASS: `ROCSHMEM_PTXAS`, else `ptxas` on the PATH, in
/// `$CUDA_HOME/bin` or in /usr/local/cuda/bin; None without one (the library then carries
/// PTX only, which the driver JIT-compiles when the module is first loaded).
fn find_ptxas() -> Option<PathBuf> {
    println!("cargo:rerun-if-env-changed=ROCSHMEM_PTXAS");
    println!("cargo:rerun-if-env-changed=ROCSHMEM_STREAM_SASS");
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("ROCSHMEM_PTXAS") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
    }
    if let Ok(home) = std::env::var("CUDA_HOME") {
        candidates.push(Path::new(&home).join("bin/ptxas"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
    candidates.into_iter().find(|p| p.is_file())
}

/// `OUT_DIR/<name>.pack` (src/gpu/stream_pack.rs): the module's PTX and, with ptxas, its SASS for
/// each architecture of `ROCSHMEM_STREAM_SASS` (default "90": sm_90; "" for none), each a zstd
/// frame. An architecture ptxas fails on is left out with a warning (the PTX still covers it).
fn pack_stream_module(ptx: &Path, ptx_sm: u32, dst: &Path, ptxas: Option<&Path>) {
    let text = std::fs::read(ptx).unwrap_or_else(|e| panic!("reading {}: {e}", ptx.display()));
    let archs = std::env::var("ROCSHMEM_STREAM_SASS").unwrap_or_else(|_| "90".into());
    let mut cubins: Vec<(u32, Vec<u8>)> = Vec::new();
    if let Some(ptxas) = ptxas {
        for sm in archs.split([',', ';', ' ']).filter(|a| !a.is_empty()) {
            let Ok(n) = sm.trim_start_matches("sm_").parse::<u32>() else {
                println!(
                    "cargo:warning=rocSHMEM: ROCSHMEM_STREAM_SASS: '{sm}' is not an architecture number (90, 100, ...)"
                );
                continue;
            };
            let cubin = ptx.with_extension(format!("sm_{n}.cubin"));
            // ptxas takes minutes on the reductions' PTX: reuse the cubin of the same PTX.
            let stamp = ptx.with_extension(format!("sm_{n}.ptx-hash"));
            let hash = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                text.hash(&mut h);
                ptxas.hash(&mut h);
                format!("{:016x}", h.finish())
            };
            if std::fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str()) {
                if let Ok(c) = std::fs::read(&cubin) {
                    cubins.push((n, c));
                    continue;
                }
            }
            let r = std::process::Command::new(ptxas)
                .args(["-O3", &format!("-arch=sm_{n}")])
                .arg(ptx)
                .arg("-o")
                .arg(&cubin)
                .output();
            match r {
                Ok(o) if o.status.success() => {
                    cubins.push((
                        n,
                        std::fs::read(&cubin).unwrap_or_else(|e| panic!("reading {}: {e}", cubin.display())),
                    ));
                    let _ = std::fs::write(&stamp, &hash);
                }
                Ok(o) => println!(
                    "cargo:warning=rocSHMEM: {} -arch=sm_{n} {}: {} (the stream kernels for sm_{n} stay PTX)",
                    ptxas.display(),
                    ptx.display(),
                    String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("failed")
                ),
                Err(e) => println!("cargo:warning=rocSHMEM: {}: {e}", ptxas.display()),
            }
        }
    }
    let mut images: Vec<(u32, u32, &[u8])> = vec![(pack::KIND_PTX, ptx_sm, &text)];
    images.extend(cubins.iter().map(|(sm, c)| (pack::KIND_CUBIN, *sm, c.as_slice())));
    // zstd level 9 with long-distance matching: the reductions' 19 MB of PTX to about 0.6 MB in a
    // fraction of a second (level 19: 0.35 MB, but over a minute per build).
    let compress = |bytes: &[u8]| -> Vec<u8> {
        use zstd::stream::raw::CParameter;
        let mut c = zstd::bulk::Compressor::new(9).expect("zstd");
        c.set_parameter(CParameter::EnableLongDistanceMatching(true)).expect("zstd long-distance matching");
        c.set_parameter(CParameter::WindowLog(27)).expect("zstd window");
        c.compress(bytes).expect("zstd compress")
    };
    std::fs::write(dst, pack::write(&images, compress)).unwrap_or_else(|e| panic!("writing {}: {e}", dst.display()));
}
