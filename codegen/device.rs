//! The device API, expanded from the same type sets as the host API (`table.rs`): every public
//! device name is a thin entry point over a template of `device/src/`.
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

use super::table::*;
use std::fmt::Write as _;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// Device only: defined as `rocshmem::<name>`.
    D,
    /// Host and device: the device side is `rocshmem::device::<name>`.
    HD,
    /// Only an `extern "C"` bitcode entry point under this name (upstream's C++ names of these
    /// are header-only templates): the C++ function is `rocshmem::device::<name>`.
    Erased,
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
        }
    }
}

/// Which of the plain and `ctx_` forms a pattern has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Forms {
    Both,
    CtxOnly,
    Plain,
}

/// The 13 types of upstream's bitcode wrappers (T13).
const T13: &[&str] = &[
    "float",
    "double",
    "char",
    "schar",
    "short",
    "int",
    "long",
    "longlong",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
];

struct Gen {
    out: Vec<DevFn>,
}

struct Spec<'a> {
    family: &'static str,
    side: Side,
    forms: Forms,
    /// Name after `rocshmem_[ctx_]`: `{T}` and `{op}` placeholders.
    name: &'a str,
    ret: &'a str,
    /// Parameters after the context (`{T}` is the element type).
    params: &'a str,
    /// `CTX` is the context argument (the default context in plain forms), `{T}` the type,
    /// `{OP}` the dev::Op.
    body: &'a str,
    /// Types with a bitcode entry point (plain form only); None: no bitcode entry; Some(&[]):
    /// an untyped entry.
    bitcode: Option<&'a [&'a str]>,
    legacy: bool,
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

impl Gen {
    fn split(params: &str) -> Vec<String> {
        if params.trim().is_empty() { vec![] } else { params.split(',').map(|p| p.trim().to_string()).collect() }
    }

    /// Expands a spec over `types` (None: untyped) and `ops` (per type, None: no op).
    fn add(&mut self, s: &Spec, types: Option<&[&str]>, ops: &dyn Fn(&str) -> Vec<&'static str>) {
        let types: Vec<Option<&Ty>> = match types {
            None => vec![None],
            Some(ts) => ts.iter().map(|n| Some(ty(n))).collect(),
        };
        for t in types {
            let op_list: Vec<Option<&str>> = match t {
                Some(t) if s.name.contains("{op}") => ops(t.name).into_iter().map(Some).collect(),
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
                let short = fill(&s.name.replace("{T}", "{t}"));
                let forms: &[bool] = match s.forms {
                    Forms::Both => &[true, false],
                    Forms::CtxOnly => &[true],
                    Forms::Plain => &[false],
                };
                for &with_ctx in forms {
                    let mut params = Vec::new();
                    if with_ctx {
                        params.push("rocshmem_ctx_t ctx".to_string());
                    }
                    params.extend(Self::split(&fill(s.params)));
                    let ctx = if with_ctx { "ctx" } else { "dev::default_handle()" };
                    let name = format!("rocshmem_{}{short}", if with_ctx { "ctx_" } else { "" });
                    let bitcode = match (s.bitcode, t) {
                        (Some(_), _) if with_ctx && s.side != Side::Erased => None,
                        (Some(set), Some(t)) if set.contains(&t.name) => Some(name.clone()),
                        (Some([]), None) => Some(name.clone()),
                        _ => None,
                    };
                    self.out.push(DevFn {
                        name,
                        family: s.family,
                        side: s.side,
                        ret: fill(s.ret),
                        params,
                        body: fill(s.body).replace("CTX", ctx),
                        bitcode,
                        legacy: s.legacy,
                    });
                }
            }
        }
    }
}

fn reduce_ops(t: &str) -> Vec<&'static str> {
    if COLL_INT.contains(&t) || TO_ALL_INT.contains(&t) {
        INT_OPS.iter().map(|o| o.0).collect()
    } else {
        FLOAT_OPS.iter().map(|o| o.0).collect()
    }
}

fn no_ops(_: &str) -> Vec<&'static str> {
    vec![]
}

const SCOPES: &[(&str, &str)] = &[("", "Grp::thread"), ("_wave", "Grp::wave"), ("_wg", "Grp::wg")];

/// Every device function, in a stable order.
#[allow(clippy::vec_init_then_push)] // one push per table row reads best
pub fn functions() -> Vec<DevFn> {
    use Forms::*;
    use Side::*;
    let mut g = Gen { out: Vec::new() };
    let none: Option<&[&'static str]> = None;
    let untyped: Option<&[&'static str]> = Some(&[]);
    type Row = (&'static str, Side, Forms, String, String, String, String, Option<Vec<&'static str>>);
    #[allow(clippy::too_many_arguments)]
    fn sp(
        family: &'static str,
        side: Side,
        forms: Forms,
        name: &str,
        ret: &str,
        params: &str,
        body: &str,
        bitcode: Option<&[&'static str]>,
    ) -> Row {
        (
            family,
            side,
            forms,
            name.to_string(),
            ret.to_string(),
            params.to_string(),
            body.to_string(),
            bitcode.map(|b| b.to_vec()),
        )
    }
    let mut specs: Vec<Row> = Vec::new();

    // ---- core ----
    specs.push(sp("core", HD, Plain, "my_pe", "int", "", "dev::my_pe(CTX)", untyped));
    specs.push(sp("core", HD, Plain, "n_pes", "int", "", "dev::n_pes(CTX)", untyped));
    specs.push(sp("core", D, CtxOnly, "my_pe", "int", "", "dev::my_pe(CTX)", none));
    specs.push(sp("core", D, CtxOnly, "n_pes", "int", "", "dev::n_pes(CTX)", none));
    specs.push(sp("core", HD, Plain, "team_my_pe", "int", "rocshmem_team_t team", "dev::team_my_pe(team)", none));
    specs.push(sp("core", HD, Plain, "team_n_pes", "int", "rocshmem_team_t team", "dev::team_n_pes(team)", none));
    specs.push(sp(
        "core",
        HD,
        Plain,
        "team_translate_pe",
        "int",
        "rocshmem_team_t src_team, int src_pe, rocshmem_team_t dest_team",
        "dev::team_translate_pe(src_team, src_pe, dest_team)",
        none,
    ));
    specs.push(sp("core", HD, Plain, "ptr", "void *", "const void *dest, int pe", "dev::ptr(dest, pe)", untyped));
    specs.push(sp("core", HD, Plain, "query_thread", "void", "int *provided", "dev::query_thread(provided)", untyped));
    specs.push(sp("core", HD, Both, "quiet", "void", "", "dev::quiet(CTX)", untyped));
    specs.push(sp("core", HD, Both, "fence", "void", "", "dev::fence(CTX)", untyped));
    specs.push(sp("core", D, Both, "fence", "void", "int pe", "dev::fence_pe(CTX, pe)", untyped));
    specs.push(sp(
        "core",
        D,
        Both,
        "pe_quiet",
        "void",
        "const int *target_pes, size_t npes",
        "dev::pe_quiet(CTX, target_pes, npes)",
        untyped,
    ));
    specs.push(sp("core", D, Both, "threadfence_system", "void", "", "dev::threadfence_system(CTX)", untyped));
    specs.push(sp("core", D, Plain, "wg_init", "void", "", "dev::nothing()", none));
    specs.push(sp("core", D, Plain, "wg_finalize", "void", "", "dev::nothing()", none));
    specs.push(sp(
        "core",
        D,
        Plain,
        "wg_init_thread",
        "void",
        "int requested, int *provided",
        "dev::wg_init_thread(requested, provided)",
        none,
    ));
    specs.push(sp(
        "core",
        D,
        Plain,
        "wg_ctx_create",
        "int",
        "int64_t options, rocshmem_ctx_t *ctx",
        "dev::wg_ctx_create(options, ctx)",
        none,
    ));
    specs.push(sp(
        "core",
        D,
        Plain,
        "wg_team_create_ctx",
        "int",
        "rocshmem_team_t team, long options, rocshmem_ctx_t *ctx",
        "dev::wg_team_create_ctx(team, options, ctx)",
        none,
    ));
    specs.push(sp("core", D, Plain, "wg_ctx_destroy", "void", "rocshmem_ctx_t *ctx", "dev::wg_ctx_destroy(ctx)", none));

    // ---- RMA (host and device) and RMA_X (wave / work-group) ----
    const RMA: &str = "{T} *dest, const {T} *source, size_t nelems, int pe";
    const MEM: &str = "void *dest, const void *source, size_t nelems, int pe";
    for (suffix, grp) in SCOPES {
        let (fam, side) = if suffix.is_empty() { ("RMA", HD) } else { ("RMA_X", D) };
        for (op, f) in [("put", "put"), ("get", "get"), ("put_nbi", "put"), ("get_nbi", "get")] {
            specs.push(sp(
                fam,
                side,
                Both,
                &format!("{{T}}_{op}{suffix}"),
                "void",
                RMA,
                &format!("dev::{f}<{{T}}, dev::{grp}>(CTX, dest, source, nelems, pe)"),
                Some(T13),
            ));
            specs.push(sp(
                fam,
                side,
                Both,
                &format!("{}mem{}{suffix}", f, &op[3..]),
                "void",
                MEM,
                &format!("dev::{f}mem<dev::{grp}>(CTX, dest, source, nelems, pe)"),
                untyped,
            ));
        }
    }
    let mut t13_int64: Vec<&str> = T13.to_vec();
    t13_int64.push("int64");
    specs.push(sp(
        "RMA",
        HD,
        Both,
        "{T}_p",
        "void",
        "{T} *dest, {T} value, int pe",
        "dev::p<{T}>(CTX, dest, value, pe)",
        Some(&t13_int64[..]),
    ));
    specs.push(sp(
        "RMA",
        HD,
        Both,
        "{T}_g",
        "{T}",
        "const {T} *source, int pe",
        "dev::g<{T}>(CTX, source, pe)",
        Some(T13),
    ));

    // ---- AMO ----
    let amo: &[(&str, &[&str], &str, &str, &str)] = &[
        (
            "atomic_fetch",
            AMO14,
            "{T}",
            "{T} *source, int pe",
            "fetch>(CTX, source, dev::zero<{T}>(), dev::zero<{T}>(), pe)",
        ),
        ("atomic_set", AMO14, "void", "{T} *dest, {T} value, int pe", "set>(CTX, dest, value, dev::zero<{T}>(), pe)"),
        ("atomic_swap", AMO14, "{T}", "{T} *dest, {T} value, int pe", "swap>(CTX, dest, value, dev::zero<{T}>(), pe)"),
        (
            "atomic_compare_swap",
            AMO12,
            "{T}",
            "{T} *dest, {T} cond, {T} value, int pe",
            "compare_swap>(CTX, dest, value, cond, pe)",
        ),
        (
            "atomic_fetch_inc",
            AMO12,
            "{T}",
            "{T} *dest, int pe",
            "fetch_inc>(CTX, dest, dev::zero<{T}>(), dev::zero<{T}>(), pe)",
        ),
        ("atomic_inc", AMO12, "void", "{T} *dest, int pe", "inc>(CTX, dest, dev::zero<{T}>(), dev::zero<{T}>(), pe)"),
        (
            "atomic_fetch_add",
            AMO12,
            "{T}",
            "{T} *dest, {T} value, int pe",
            "fetch_add>(CTX, dest, value, dev::zero<{T}>(), pe)",
        ),
        ("atomic_add", AMO12, "void", "{T} *dest, {T} value, int pe", "add>(CTX, dest, value, dev::zero<{T}>(), pe)"),
        (
            "atomic_fetch_and",
            AMO7,
            "{T}",
            "{T} *dest, {T} value, int pe",
            "fetch_and>(CTX, dest, value, dev::zero<{T}>(), pe)",
        ),
        ("atomic_and", AMO7, "void", "{T} *dest, {T} value, int pe", "and_>(CTX, dest, value, dev::zero<{T}>(), pe)"),
        (
            "atomic_fetch_or",
            AMO7,
            "{T}",
            "{T} *dest, {T} value, int pe",
            "fetch_or>(CTX, dest, value, dev::zero<{T}>(), pe)",
        ),
        ("atomic_or", AMO7, "void", "{T} *dest, {T} value, int pe", "or_>(CTX, dest, value, dev::zero<{T}>(), pe)"),
        (
            "atomic_fetch_xor",
            AMO7,
            "{T}",
            "{T} *dest, {T} value, int pe",
            "fetch_xor>(CTX, dest, value, dev::zero<{T}>(), pe)",
        ),
        ("atomic_xor", AMO7, "void", "{T} *dest, {T} value, int pe", "xor_>(CTX, dest, value, dev::zero<{T}>(), pe)"),
    ];
    let mut amo_types: Vec<&'static [&'static str]> = Vec::new();
    for (name, types, ret, params, call) in amo {
        amo_types.push(types);
        specs.push(sp(
            "AMO",
            HD,
            Both,
            &format!("{{T}}_{name}"),
            ret,
            params,
            &format!("dev::amo<{{T}}, dev::AmoOp::{call}"),
            Some(*types),
        ));
    }

    // ---- SIG_OP ----
    const SIG: &str = "uint64_t *sig_addr, uint64_t signal, int sig_op, int pe";
    for (suffix, grp) in [
        ("", "Grp::thread"),
        ("_wg", "Grp::wg"),
        ("_wave", "Grp::wave"),
        ("_nbi", "Grp::thread"),
        ("_nbi_wg", "Grp::wg"),
        ("_nbi_wave", "Grp::wave"),
    ] {
        specs.push(sp(
            "SIG_OP",
            D,
            Both,
            &format!("putmem_signal{suffix}"),
            "void",
            &format!("void *dest, const void *source, size_t nelems, {SIG}"),
            &format!("dev::putmem_signal<dev::{grp}>(CTX, dest, source, nelems, sig_addr, signal, sig_op, pe)"),
            untyped,
        ));
        specs.push(sp(
            "SIG_OP",
            D,
            Both,
            &format!("{{T}}_put_signal{suffix}"),
            "void",
            &format!("{{T}} *dest, const {{T}} *source, size_t nelems, {SIG}"),
            &format!("dev::put_signal<{{T}}, dev::{grp}>(CTX, dest, source, nelems, sig_addr, signal, sig_op, pe)"),
            Some(T13),
        ));
    }
    for (suffix, grp) in SCOPES {
        specs.push(sp(
            "SIG_OP",
            D,
            Plain,
            &format!("signal_fetch{suffix}"),
            "uint64_t",
            "const uint64_t *sig_addr",
            &format!("dev::signal_fetch<dev::{grp}>(sig_addr)"),
            untyped,
        ));
    }
    specs.push(sp(
        "SIG_OP",
        D,
        Both,
        "signal_add",
        "void",
        "uint64_t *sig_addr, uint64_t signal, int pe",
        "dev::signal_op(CTX, sig_addr, signal, ROCSHMEM_SIGNAL_ADD, pe)",
        none,
    ));
    specs.push(sp(
        "SIG_OP",
        D,
        Both,
        "signal_set",
        "void",
        "uint64_t *sig_addr, uint64_t signal, int pe",
        "dev::signal_op(CTX, sig_addr, signal, ROCSHMEM_SIGNAL_SET, pe)",
        none,
    ));
    specs.push(sp(
        "SIG_OP",
        D,
        Plain,
        "signal_wait_until",
        "uint64_t",
        "uint64_t *sig_addr, int cmp, uint64_t cmp_value",
        "dev::signal_wait_until(sig_addr, cmp, cmp_value)",
        none,
    ));

    // ---- P2P_SYNC ----
    let mut t13_u64: Vec<&str> = T13.to_vec();
    t13_u64.push("uint64");
    let p2p: &[(&str, &str, &str, &str)] = &[
        ("wait_until", "void", "{T} *ivars, int cmp, {T} val", "dev::wait_until<{T}>(ivars, cmp, val)"),
        (
            "wait_until_any",
            "size_t",
            "{T} *ivars, size_t nelems, const int *status, int cmp, {T} val",
            "dev::wait_any<{T}, false>(ivars, nelems, status, cmp, &val)",
        ),
        (
            "wait_until_all",
            "void",
            "{T} *ivars, size_t nelems, const int *status, int cmp, {T} val",
            "dev::wait_all<{T}, false>(ivars, nelems, status, cmp, &val)",
        ),
        (
            "wait_until_some",
            "size_t",
            "{T} *ivars, size_t nelems, size_t *indices, const int *status, int cmp, {T} val",
            "dev::wait_some<{T}, false>(ivars, nelems, indices, status, cmp, &val)",
        ),
        (
            "wait_until_any_vector",
            "size_t",
            "{T} *ivars, size_t nelems, const int *status, int cmp, {T} *vals",
            "dev::wait_any<{T}, true>(ivars, nelems, status, cmp, vals)",
        ),
        (
            "wait_until_all_vector",
            "void",
            "{T} *ivars, size_t nelems, const int *status, int cmp, {T} *vals",
            "dev::wait_all<{T}, true>(ivars, nelems, status, cmp, vals)",
        ),
        (
            "wait_until_some_vector",
            "size_t",
            "{T} *ivars, size_t nelems, size_t *indices, const int *status, int cmp, {T} *vals",
            "dev::wait_some<{T}, true>(ivars, nelems, indices, status, cmp, vals)",
        ),
        ("test", "int", "{T} *ivars, int cmp, {T} val", "dev::test<{T}>(ivars, cmp, val)"),
    ];
    for (name, ret, params, body) in p2p {
        specs.push(sp("P2P_SYNC", HD, Plain, &format!("{{T}}_{name}"), ret, params, body, Some(&t13_u64[..])));
    }

    // ---- barrier / sync ----
    for (suffix, grp) in SCOPES {
        let side = if suffix.is_empty() { HD } else { D };
        specs.push(sp(
            "COLL",
            side,
            Plain,
            &format!("barrier_all{suffix}"),
            "void",
            "",
            &format!("dev::barrier<dev::{grp}>(CTX, dev::world_team(CTX))"),
            untyped,
        ));
        specs.push(sp(
            "COLL",
            side,
            Plain,
            &format!("barrier{suffix}"),
            "void",
            "",
            &format!("dev::barrier<dev::{grp}>(CTX, dev::world_team(CTX))"),
            untyped,
        ));
        specs.push(sp(
            "COLL",
            side,
            Plain,
            &format!("sync_all{suffix}"),
            "void",
            "",
            &format!("dev::sync<dev::{grp}>(CTX, dev::world_team(CTX))"),
            untyped,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("barrier{suffix}"),
            "void",
            "rocshmem_team_t team",
            &format!("dev::barrier<dev::{grp}>(CTX, team)"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("sync{suffix}"),
            "void",
            "rocshmem_team_t team",
            &format!("dev::sync<dev::{grp}>(CTX, team)"),
            none,
        ));
    }

    // ---- collectives ----
    const COLL: &str = "rocshmem_team_t team, {T} *dest, const {T} *source, int nelems";
    const COLLMEM: &str = "rocshmem_team_t team, void *dest, const void *source, int nelems";
    for (suffix, grp, ret, forms) in [("_wg", "Grp::wg", "void", Both), ("_wave", "Grp::wave", "int", CtxOnly)] {
        let ret_kw = if ret == "void" { "(void)" } else { "" };
        specs.push(sp(
            "COLL",
            D,
            forms,
            &format!("{{T}}_alltoall{suffix}"),
            ret,
            COLL,
            &format!("{ret_kw}dev::alltoallmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems) * sizeof({{T}}))"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("alltoallmem{suffix}"),
            ret,
            COLLMEM,
            &format!("{ret_kw}dev::alltoallmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems))"),
            none,
        ));
        specs.push(sp("COLL", D, CtxOnly, &format!("{{T}}_broadcast{suffix}"), ret, &format!("{COLL}, int pe_root"),
            &format!("{ret_kw}dev::broadcastmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems) * sizeof({{T}}), pe_root)"), none));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("broadcastmem{suffix}"),
            ret,
            &format!("{COLLMEM}, int pe_root"),
            &format!("{ret_kw}dev::broadcastmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems), pe_root)"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("{{T}}_fcollect{suffix}"),
            ret,
            COLL,
            &format!("{ret_kw}dev::fcollectmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems) * sizeof({{T}}))"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("fcollectmem{suffix}"),
            ret,
            COLLMEM,
            &format!("{ret_kw}dev::fcollectmem<dev::{grp}>(CTX, team, dest, source, size_t(nelems))"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("{{T}}_{{op}}_reduce{suffix}"),
            "int",
            "rocshmem_team_t team, {T} *dest, const {T} *source, int nreduce",
            &format!("dev::reduce<{{T}}, {{OP}}, dev::{grp}>(CTX, team, dest, source, nreduce)"),
            none,
        ));
        specs.push(sp(
            "COLL",
            D,
            CtxOnly,
            &format!("{{T}}_{{op}}_reduce_scatter{suffix}"),
            "int",
            "rocshmem_team_t team, {T} *dest, const {T} *source, int nreduce",
            &format!("dev::reduce_scatter<{{T}}, {{OP}}, dev::{grp}>(CTX, team, dest, source, nreduce)"),
            none,
        ));
    }
    specs.push(sp("COLL", D, Plain, "{T}_alltoallv_wg", "void",
        "rocshmem_team_t team, {T} *dest, const size_t dest_nelems[], const size_t dest_displs[], {T} *source, const size_t source_nelems[], const size_t source_displs[]",
        "(void)dev::alltoallv<{T}, dev::Grp::wg>(CTX, team, dest, dest_nelems, dest_displs, source, source_nelems, source_displs)", none));

    // ---- tile (type-erased forms; the tensor templates are header-only upstream) ----
    specs.push(sp(
        "TILE",
        D,
        Both,
        "tile_collective_wait",
        "int",
        "rocshmem_team_t team, uint64_t flags",
        "dev::tile_collective_wait(CTX, team, flags)",
        untyped,
    ));
    const TILE: &str = "void *dst, const void *src, const size_t *dst_strides, const size_t *src_strides, \
                        const size_t *start_coord, const size_t *boundary, int ndim, size_t element_size";
    const TILE_ARGS: &str = "dst, src, dst_strides, src_strides, start_coord, boundary, ndim, element_size";
    for (suffix, grp) in SCOPES {
        for op in ["put", "get"] {
            let body = format!("dev::tile_{op}<dev::{grp}>(CTX, {TILE_ARGS}, pe, flags)");
            let params = format!("{TILE}, int pe, uint64_t flags");
            specs.push(sp("TILE", Erased, CtxOnly, &format!("tile_{op}{suffix}"), "int", &params, &body, untyped));
        }
        let body = format!("dev::tile_allgather<dev::{grp}>(CTX, team, {TILE_ARGS}, flags)");
        let params = format!("rocshmem_team_t team, {TILE}, uint64_t flags");
        specs.push(sp("TILE", Erased, Plain, &format!("tile_allgather{suffix}"), "int", &params, &body, untyped));
        let body = format!("dev::tile_broadcast<dev::{grp}>(CTX, team, {TILE_ARGS}, pe_root, flags)");
        let params = format!("rocshmem_team_t team, {TILE}, int pe_root, uint64_t flags");
        specs.push(sp("TILE", Erased, Plain, &format!("tile_broadcast{suffix}"), "int", &params, &body, untyped));
        for op in ["sum", "max", "min"] {
            let body = format!("dev::tile_reduce<dev::{grp}, dev::Op::{op}>(CTX, team, {TILE_ARGS}, root, flags)");
            let params = format!("rocshmem_team_t team, {TILE}, int root, uint64_t flags");
            specs.push(sp("TILE", Erased, Plain, &format!("tile_{op}_reduce{suffix}"), "int", &params, &body, untyped));
        }
    }

    // Expand. Which type set and ops each spec takes follows from its name.
    for (family, side, forms, name, ret, params, body, bitcode) in &specs {
        let spec = Spec {
            family,
            side: *side,
            forms: *forms,
            name,
            ret,
            params,
            body,
            bitcode: bitcode.as_deref(),
            legacy: false,
        };
        let types: Option<Vec<&str>> = if !name.contains("{T}") {
            None
        } else if name.contains("{op}") {
            Some(T25.to_vec())
        } else if *family == "AMO" {
            let i = amo.iter().position(|a| name.ends_with(a.0) && name.len() == a.0.len() + 4).unwrap();
            Some(amo_types[i].to_vec())
        } else {
            Some(T25.to_vec())
        };
        g.add(&spec, types.as_deref(), &reduce_ops);
    }

    // ---- rocSHMEM 2.x names (renamed in 3.0), as aliases ----
    let legacy: &[(&str, &str, &str, &str, &[&str])] = &[
        (
            "{T}_wg_alltoall",
            "void",
            COLL,
            "(void)dev::alltoallmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))",
            T13,
        ),
        (
            "{T}_wg_broadcast",
            "void",
            "rocshmem_team_t team, {T} *dest, const {T} *source, int nelems, int pe_root",
            "(void)dev::broadcastmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}), pe_root)",
            T13,
        ),
        (
            "{T}_wg_fcollect",
            "void",
            COLL,
            "(void)dev::fcollectmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))",
            T13,
        ),
    ];
    for (name, ret, params, body, types) in legacy {
        let spec = Spec {
            family: "COLL-legacy",
            side: D,
            forms: CtxOnly,
            name,
            ret,
            params,
            body,
            bitcode: None,
            legacy: true,
        };
        g.add(&spec, Some(types), &no_ops);
    }
    let mut to_all: Vec<&str> = TO_ALL_INT.to_vec();
    to_all.extend_from_slice(TO_ALL_FLOAT);
    let spec = Spec {
        family: "COLL-legacy",
        side: D,
        forms: CtxOnly,
        name: "{T}_{op}_wg_reduce",
        ret: "int",
        params: "rocshmem_team_t team, {T} *dest, const {T} *source, int nreduce",
        body: "dev::reduce<{T}, {OP}, dev::Grp::wg>(CTX, team, dest, source, nreduce)",
        bitcode: None,
        legacy: true,
    };
    g.add(&spec, Some(&to_all), &reduce_ops);
    for (name, params, body, forms) in [
        ("wg_barrier_all", "", "dev::barrier<dev::Grp::wg>(CTX, dev::world_team(CTX))", Both),
        ("wg_sync_all", "", "dev::sync<dev::Grp::wg>(CTX, dev::world_team(CTX))", Both),
        ("wg_team_sync", "rocshmem_team_t team", "dev::sync<dev::Grp::wg>(CTX, team)", Both),
    ] {
        let spec = Spec {
            family: "COLL-legacy",
            side: D,
            forms,
            name,
            ret: "void",
            params,
            body,
            bitcode: None,
            legacy: true,
        };
        g.add(&spec, None, &no_ops);
    }

    // A name on both sides whose device form has other parameters (`rocshmem_barrier()` on the
    // device, `rocshmem_barrier(team)` on the host) is a device-only overload.
    for f in g.out.iter_mut() {
        if f.side == Side::HD && !host_has(&f.name, &f.params) {
            f.side = Side::D;
        }
    }
    g.out
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
    for f in fns.iter().filter(|f| f.side != Side::D) {
        let _ = writeln!(s, "ROCSHMEM_DEVICE_FN {} {}({});", f.ret, f.name, f.params.join(", "));
    }
    s.push_str("}  // namespace device\n\n}  // namespace rocshmem\n\n#endif  // ROCSHMEM_DEVICE_HPP\n");
    s
}

/// The files of definitions: one per family, so that they compile in parallel.
pub fn definition_files(fns: &[DevFn]) -> Vec<(String, String)> {
    let mut fams: Vec<&str> = fns.iter().map(|f| f.family).collect();
    fams.dedup();
    fams.sort();
    fams.dedup();
    fams.iter()
        .map(|fam| {
            let file = format!("device/gen/api_{}.cpp", fam.to_ascii_lowercase().replace('-', "_"));
            let mine: Vec<&DevFn> = fns.iter().filter(|f| f.family == *fam).collect();
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

/// `device/gen/bitcode_api.cpp`: the unmangled entry points of the device bitcode.
pub fn bitcode(fns: &[DevFn]) -> String {
    let mut s = String::from(BANNER);
    s.push_str(
        "// The extern \"C\" entry points of librocshmem_device_<arch>.bc (upstream's names, for Triton and\n\
         // other JIT users), each forwarding to the C++ device function. ROCSHMEM_BITCODE_NAME adds a\n\
         // prefix on the host platform, where the host API owns the plain C names.\n\
         #include \"../src/device.hpp\"\n\nusing rocshmem::rocshmem_ctx_t;\nusing rocshmem::rocshmem_team_t;\n\nextern \"C\" {\n",
    );
    let mut n = 0;
    for f in fns.iter().filter(|f| f.bitcode.is_some()) {
        // C has no overloading: the per-PE fence is rocshmem_fence_pe.
        let cname = if f.name == "rocshmem_fence" && !f.params.is_empty() {
            "rocshmem_fence_pe".to_string()
        } else {
            f.bitcode.clone().unwrap()
        };
        let ret = if f.ret == "void" { "" } else { "return " };
        let _ = writeln!(
            s,
            "ROCSHMEM_BITCODE_FN {} ROCSHMEM_BITCODE_NAME({cname})({}) {{ {ret}{}({}); }}",
            f.ret,
            f.params.join(", "),
            f.qualified(),
            f.args().join(", ")
        );
        n += 1;
    }
    let _ = writeln!(s, "\n}}  // extern \"C\"\n\n// {n} entry points.");
    s
}
