//! The device API, expanded from the same type sets as the host API (`table.rs`): every public
//! device name is a thin entry point over a template of `device/src/`. The names are the rows
//! of `device_table.rs`; this file expands them and writes the files.
//!
//! - Names that exist only on the device (`D` in the names list) are defined as themselves in
//!   namespace rocshmem, as upstream's device symbols.
//! - Names that exist on both sides (`HD`) keep the public name for the host function; their
//!   device entry point is `rocshmem::device::<name>`, so the two never clash (on the host
//!   platform they share a process; nvcc emits host stubs of device functions). The host
//!   shim sends calls made from a kernel on the host platform there; GPU builds choose by
//!   compilation pass.
//! - The `extern "C"` bitcode entry points (for Triton and other JIT users) forward to those.
//! - rocSHMEM 2.x names renamed in 3.0 are kept as aliases.

use super::device_table::BLOCKS;
use super::table::*;
use std::fmt::Write as _;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// Device only: defined as `rocshmem::<name>`.
    D,
    /// Host and device: the device side is `rocshmem::device::<name>`. A row's `HD` name that
    /// the host API does not have with the same parameters becomes `D`.
    HD,
    /// Only an `extern "C"` bitcode entry point under this name (upstream's C++ names of these
    /// are header-only templates): the C++ function is `rocshmem::device::<name>`.
    Erased,
    /// Only an `extern "C"` bitcode entry point, whose body is the row's (no C++ function): the
    /// C-linkage wrappers for PyTorch's Triton layer (a team as an `int`, 0 = the world team).
    C,
}

/// One expanded device function.
pub struct DevFn {
    pub name: String,
    pub family: &'static str,
    pub side: Side,
    pub ret: String,
    /// C++ parameter declarations.
    pub params: Vec<String>,
    /// The body's expression (a call into `rocshmem::dev`).
    pub body: String,
    /// Name of its `extern "C"` bitcode entry point, if it has one.
    pub bitcode: Option<String>,
    /// A rocSHMEM 2.x name kept as an alias (not in the 3.x names list).
    pub legacy: bool,
}

impl DevFn {
    pub fn args(&self) -> Vec<String> {
        self.params.iter().map(|p| p.rsplit([' ', '*']).next().unwrap().trim_end_matches("[]").to_string()).collect()
    }

    /// The C++ name of the device entry point.
    pub fn qualified(&self) -> String {
        match self.side {
            Side::D => format!("rocshmem::{}", self.name),
            Side::HD | Side::Erased => format!("rocshmem::device::{}", self.name),
            Side::C => panic!("{} has no C++ function", self.name),
        }
    }
}

/// Which of the plain and `ctx_` forms a row has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Forms {
    Both,
    CtxOnly,
    Plain,
    /// The forms of the scope (`Scope::forms`).
    OfScope,
}

/// Which forms of a row get an `extern "C"` bitcode entry point (plain forms only, but for
/// `Erased` rows).
#[derive(Clone, Copy)]
pub enum Bitcode {
    No,
    /// The untyped row's.
    Untyped,
    /// Those of these types.
    Types(&'static [&'static [&'static str]]),
}

/// One pattern of device names (`device_table.rs`: placeholders there).
pub struct Row {
    pub side: Side,
    pub forms: Forms,
    /// Name after `rocshmem_[ctx_]`.
    pub name: &'static str,
    pub ret: &'static str,
    /// Parameters after the context.
    pub params: &'static str,
    pub body: &'static str,
    /// The type sets it is expanded over (empty: untyped).
    pub types: &'static [&'static [&'static str]],
    pub bitcode: Bitcode,
}

/// A group scope a block is expanded for: `{s}`, `{G}`, `{R}` (and `{V}`) and the forms of
/// `Forms::OfScope` rows.
#[derive(Clone, Copy)]
pub struct Scope {
    pub s: &'static str,
    pub grp: &'static str,
    pub ret: &'static str,
    pub forms: Forms,
}

/// Rows of one family expanded for each scope in turn.
pub struct Block {
    pub family: &'static str,
    pub scopes: &'static [Scope],
    pub rows: &'static [Row],
    /// rocSHMEM 2.x names.
    pub legacy: bool,
}

fn op_enum(op: &str) -> &'static str {
    match op {
        "sum" => "dev::Op::sum",
        "min" => "dev::Op::min",
        "max" => "dev::Op::max",
        "prod" => "dev::Op::prod",
        "and" => "dev::Op::and_",
        "or" => "dev::Op::or_",
        "xor" => "dev::Op::xor_",
        _ => panic!("op {op}"),
    }
}

fn split(params: &str) -> Vec<String> {
    if params.trim().is_empty() { vec![] } else { params.split(',').map(|p| p.trim().to_string()).collect() }
}

fn reduce_ops(t: &str) -> Vec<&'static str> {
    if COLL_INT.contains(&t) || TO_ALL_INT.contains(&t) {
        INT_OPS.iter().map(|o| o.0).collect()
    } else {
        FLOAT_OPS.iter().map(|o| o.0).collect()
    }
}

/// Expands one row of `b` in scope `sc` over its types, ops and forms into `out`.
fn expand(out: &mut Vec<DevFn>, b: &Block, sc: &Scope, row: &Row) {
    let scoped = |x: &str| {
        let void = if sc.ret == "void" { "(void)" } else { "" };
        x.replace("{s}", sc.s).replace("{G}", sc.grp).replace("{R}", sc.ret).replace("{V}", void)
    };
    let (name, ret, params, body) = (scoped(row.name), scoped(row.ret), scoped(row.params), scoped(row.body));
    // `{aop}`: the arithmetic ops (sum, min, max, prod) whatever the type.
    let arith_only = name.contains("{aop}");
    let name = name.replace("{aop}", "{op}");
    let types: Vec<Option<&Ty>> = if row.types.is_empty() {
        vec![None]
    } else {
        row.types.iter().flat_map(|set| set.iter()).map(|n| Some(ty(n))).collect()
    };
    let bitcode: Option<Vec<&str>> = match row.bitcode {
        Bitcode::No => None,
        Bitcode::Untyped => Some(vec![]),
        Bitcode::Types(sets) => Some(sets.iter().flat_map(|s| s.iter().copied()).collect()),
    };
    let forms: &[bool] = match if row.forms == Forms::OfScope { sc.forms } else { row.forms } {
        Forms::Both | Forms::OfScope => &[true, false],
        Forms::CtxOnly => &[true],
        Forms::Plain => &[false],
    };
    for t in types {
        let op_list: Vec<Option<&str>> = match t {
            Some(_) if arith_only => FLOAT_OPS.iter().map(|o| Some(o.0)).collect(),
            Some(t) if name.contains("{op}") => reduce_ops(t.name).into_iter().map(Some).collect(),
            _ => vec![None],
        };
        for op in op_list {
            let fill = |x: &str| {
                let mut x = x.to_string();
                if let Some(t) = t {
                    x = x.replace("{T}", t.cxx).replace("{t}", t.name);
                }
                if let Some(op) = op {
                    x = x.replace("{op}", op).replace("{OP}", op_enum(op));
                }
                x
            };
            let short = fill(&name.replace("{T}", "{t}"));
            for &with_ctx in forms {
                let mut ps = Vec::new();
                if with_ctx {
                    ps.push("rocshmem_ctx_t ctx".to_string());
                }
                ps.extend(split(&fill(&params)));
                let ctx = if with_ctx { "ctx" } else { "dev::default_handle()" };
                let full = format!("rocshmem_{}{short}", if with_ctx { "ctx_" } else { "" });
                let bitcode = match (&bitcode, t) {
                    (Some(_), _) if with_ctx && row.side == Side::C => panic!("{full}: a C row has no ctx_ form"),
                    (Some(_), _) if with_ctx && row.side != Side::Erased => None,
                    (Some(set), Some(t)) if set.contains(&t.name) => Some(full.clone()),
                    (Some(set), None) if set.is_empty() => Some(full.clone()),
                    _ => None,
                };
                out.push(DevFn {
                    name: full,
                    family: b.family,
                    side: row.side,
                    ret: fill(&ret),
                    params: ps,
                    body: fill(&body).replace("CTX", ctx),
                    bitcode,
                    legacy: b.legacy,
                });
            }
        }
    }
}

/// Every device function, in a stable order (the table's).
pub fn functions() -> Vec<DevFn> {
    let mut out = Vec::new();
    for b in BLOCKS {
        for sc in b.scopes {
            for row in b.rows {
                expand(&mut out, b, sc, row);
            }
        }
    }
    // A name on both sides whose device form has other parameters (`rocshmem_barrier()` on the
    // device, `rocshmem_barrier(team)` on the host) is a device-only overload.
    for f in out.iter_mut() {
        if f.side == Side::HD && !host_has(&f.name, &f.params) {
            f.side = Side::D;
        }
    }
    out
}

/// Is `name(params)` a function of the host API (same name and parameters)?
fn host_has(name: &str, params: &[String]) -> bool {
    static HOST: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let mut v: Vec<(String, Vec<String>)> = super::emit::entries()
            .iter()
            .map(|e| (e.cxx_name(), e.params().iter().map(|p| super::emit::p_cxx(p, e.ty)).collect()))
            .collect();
        v.extend(CORE.iter().map(|c| {
            let sig = super::emit::parse_sig(c.decl);
            (sig.name, sig.params)
        }));
        v
    })
    .iter()
    .any(|(n, p)| n == name && p == params)
}

/// Is `name(params)` a host function that is also a device function (an `HD` name)?
pub fn is_hd(name: &str, params: &[String]) -> bool {
    static HD: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    HD.get_or_init(|| functions().into_iter().filter(|f| f.side == Side::HD).map(|f| (f.name, f.params)).collect())
        .iter()
        .any(|(n, p)| n == name && p == params)
}

/// `device/gen/gpu_hd.cpp`: on GPUs, the device side of the `HD` names under their public
/// names (upstream's device symbols). Only the device compilation pass defines them, so no
/// host definition clashes with the host library's (nvcc would emit one otherwise). Each has
/// the body of its `rocshmem::device::` twin rather than a call to it: with relocatable device
/// code a call between translation units is a real call, and a program's `rocshmem_int_p`
/// paid two of them per operation.
pub fn gpu_hd(fns: &[DevFn]) -> String {
    let mut s = String::from(BANNER);
    s.push_str(
        "// The HD names' device side on GPUs: defined in the device pass only (see codegen/device.rs).\n\
         #include \"../src/device.hpp\"\n\n#if ROCSHMEM_GPU_DEVICE_PASS\nnamespace rocshmem {\n",
    );
    for f in fns.iter().filter(|f| f.side == Side::HD) {
        let ret = if f.ret == "void" { "" } else { "return " };
        let _ = writeln!(s, "ROCSHMEM_HD_API {} {}({}) {{ {ret}{}; }}", f.ret, f.name, f.params.join(", "), f.body);
    }
    s.push_str(
        "}  // namespace rocshmem
#endif
",
    );
    s
}

pub const BANNER: &str =
    concat!("/* GENERATED by `", gen_command!(), "` from codegen/device.rs: do not edit; change the table. */\n");

/// `include/rocshmem/rocshmem_DEVICE.hpp`: declarations of the device API.
pub fn header(fns: &[DevFn]) -> String {
    let mut s = String::from(BANNER);
    s.push_str(
        "/** @file rocshmem_DEVICE.hpp\n *  The device API: functions called from kernels (per thread, `_wave` or `_wg`).\n\
         *  Names that also exist on the host are declared by the other headers; their device\n\
         *  entry points are in namespace rocshmem::device (see codegen/device.rs).\n */\n\
         #ifndef ROCSHMEM_DEVICE_HPP\n#define ROCSHMEM_DEVICE_HPP\n\nnamespace rocshmem {\n\n",
    );
    for f in fns.iter().filter(|f| f.side == Side::D) {
        let dep = if f.legacy { "[[deprecated(\"rocSHMEM 2.x name\")]] " } else { "" };
        let _ = writeln!(s, "{dep}ROCSHMEM_DEVICE_FN {} {}({});", f.ret, f.name, f.params.join(", "));
    }
    s.push_str("\nnamespace device {\n");
    for f in fns.iter().filter(|f| f.side == Side::HD || f.side == Side::Erased) {
        let _ = writeln!(s, "ROCSHMEM_DEVICE_FN {} {}({});", f.ret, f.name, f.params.join(", "));
    }
    s.push_str("}  // namespace device\n\n}  // namespace rocshmem\n\n#endif  // ROCSHMEM_DEVICE_HPP\n");
    s
}

/// The files of definitions: one per family, so that they compile in parallel.
pub fn definition_files(fns: &[DevFn]) -> Vec<(String, String)> {
    let fns: Vec<&DevFn> = fns.iter().filter(|f| f.side != Side::C).collect();
    let mut fams: Vec<&str> = fns.iter().map(|f| f.family).collect();
    fams.dedup();
    fams.sort();
    fams.dedup();
    fams.iter()
        .map(|fam| {
            let file = format!("device/gen/api_{}.cpp", fam.to_ascii_lowercase().replace('-', "_"));
            let mine: Vec<&DevFn> = fns.iter().filter(|f| f.family == *fam).copied().collect();
            (file, definitions(&mine))
        })
        .collect()
}

/// Definitions of some device functions.
fn definitions(fns: &[&DevFn]) -> String {
    let mut s = String::from(BANNER);
    s.push_str("// Public device functions: one call each into the templates of device/src.\n#include \"../src/device.hpp\"\n\n");
    if fns.iter().any(|f| f.legacy) {
        s.push_str("#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n");
    }
    for f in fns {
        let ret = if f.ret == "void" { "" } else { "return " };
        let _ = writeln!(
            s,
            "ROCSHMEM_DEVICE_FN {} {}({}) {{ {ret}{}; }}",
            f.ret,
            f.qualified(),
            f.params.join(", "),
            f.body
        );
    }
    s
}

/// The C names of PyTorch's Triton layer for ROCm (`_rocshmem_triton.py`, through
/// `extern_elementwise`), besides the C-only rows: with those, the entry points that are also in
/// the AMD device archive, so that a HIP program (or a JIT user linking the archive's device code)
/// reaches them by the same C names as the bitcode.
const IN_ARCHIVE: [&str; 12] = [
    "rocshmem_putmem_wg",
    "rocshmem_getmem_wg",
    "rocshmem_getmem_nbi_wg",
    "rocshmem_putmem_signal_wg",
    "rocshmem_int_wait_until",
    "rocshmem_uint64_wait_until",
    "rocshmem_fence",
    "rocshmem_quiet",
    "rocshmem_my_pe",
    "rocshmem_n_pes",
    "rocshmem_barrier_all_wg",
    "rocshmem_sync_all_wg",
];

/// The C name of a function's bitcode entry point, if it has one.
fn c_name(f: &DevFn) -> Option<String> {
    // C has no overloading: the per-PE fence is rocshmem_fence_pe.
    let name = f.bitcode.clone()?;
    Some(if f.name == "rocshmem_fence" && !f.params.is_empty() { "rocshmem_fence_pe".to_string() } else { name })
}

fn in_archive(f: &DevFn) -> bool {
    f.side == Side::C || c_name(f).is_some_and(|n| IN_ARCHIVE.contains(&n.as_str()))
}

/// `device/gen/bitcode_api.cpp` (`archived` false: the JIT bitcode only) and
/// `device/gen/bitcode_api_archived.cpp` (true: the bitcode and the AMD device archive): the
/// unmangled entry points of the device bitcode.
pub fn bitcode(fns: &[DevFn], archived: bool) -> String {
    let mut s = String::from(BANNER);
    if archived {
        s.push_str(
            "// The extern \"C\" entry points that are also in the AMD device archive (librocshmem_device.a),\n\
             // not only in librocshmem_device_<arch>.bc: the C-only ones (a team as an int) and those\n\
             // PyTorch's Triton layer declares, so a HIP program reaches them by the same C names. On GPUs\n\
             // hidden: an application's device link (-fgpu-rdc) keeps only those it calls (a JIT user\n\
             // links them by name either way). Not in NVIDIA's archive: nvcc gives every extern \"C\"\n\
             // __device__ function a host stub, which would interpose on the host API's C names.\n",
        );
    } else {
        s.push_str(
            "// The extern \"C\" entry points of librocshmem_device_<arch>.bc (upstream's names, for Triton and\n\
             // other JIT users), each forwarding to the C++ device function; those also in the AMD device\n\
             // archive are in bitcode_api_archived.cpp.\n",
        );
    }
    s.push_str(
        "// ROCSHMEM_BITCODE_NAME adds a prefix on the host platform, where the host API owns the plain\n\
         // C names.\n\
         #include \"../src/device.hpp\"\n\nusing rocshmem::rocshmem_ctx_t;\nusing rocshmem::rocshmem_team_t;\n\
         namespace dev = rocshmem::dev;  // the bodies of the C-only entry points\nusing rocshmem::ROCSHMEM_ERROR;\n\nextern \"C\" {\n",
    );
    let macro_name = if archived { "ROCSHMEM_BITCODE_ARCHIVED_FN" } else { "ROCSHMEM_BITCODE_FN" };
    let mut n = 0;
    for f in fns.iter().filter(|f| f.bitcode.is_some() && in_archive(f) == archived) {
        let cname = c_name(f).unwrap();
        let ret = if f.ret == "void" { "" } else { "return " };
        let body =
            if f.side == Side::C { f.body.clone() } else { format!("{}({})", f.qualified(), f.args().join(", ")) };
        let _ = writeln!(
            s,
            "{macro_name} {} ROCSHMEM_BITCODE_NAME({cname})({}) {{ {ret}{body}; }}",
            f.ret,
            f.params.join(", "),
        );
        n += 1;
    }
    let _ = writeln!(s, "\n}}  // extern \"C\"\n\n// {n} entry points.");
    s
}
