//! THE table: element types, upstream's type sets, the host API families, the core host
//! signatures and the constants. Everything typed in the library (Rust entry points, C++
//! declarations, the C++ shim, the generated tests) is expanded from here by `emit.rs`.
//! Facts (names, signatures, values) follow upstream rocSHMEM; see docs/design.md.

/// How an element type behaves in reductions and tests.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Class {
    /// Signed or unsigned integer.
    Int,
    /// `float`, `double`.
    Float,
    /// 16-bit floats stored as `unsigned short` bits (`__half`, `__hip_bfloat16`).
    F16,
}

pub struct Ty {
    /// TYPENAME in the API names (`int` in `rocshmem_int_put`).
    pub name: &'static str,
    /// The C/C++ type upstream's headers use.
    pub cxx: &'static str,
    /// The Rust type of the entry points (cbindgen renders it as the same C type).
    pub rust: &'static str,
    pub class: Class,
    pub size: usize,
}

const fn t(name: &'static str, cxx: &'static str, rust: &'static str, class: Class, size: usize) -> Ty {
    Ty { name, cxx, rust, class, size }
}

/// T25, in upstream's order.
pub const TYPES: &[Ty] = &[
    t("float", "float", "f32", Class::Float, 4),
    t("double", "double", "f64", Class::Float, 8),
    t("char", "char", "c_char", Class::Int, 1),
    t("schar", "signed char", "c_schar", Class::Int, 1),
    t("short", "short", "c_short", Class::Int, 2),
    t("int", "int", "c_int", Class::Int, 4),
    t("long", "long", "c_long", Class::Int, 8),
    t("longlong", "long long", "c_longlong", Class::Int, 8),
    t("uchar", "unsigned char", "c_uchar", Class::Int, 1),
    t("ushort", "unsigned short", "c_ushort", Class::Int, 2),
    t("uint", "unsigned int", "c_uint", Class::Int, 4),
    t("ulong", "unsigned long", "c_ulong", Class::Int, 8),
    t("ulonglong", "unsigned long long", "c_ulonglong", Class::Int, 8),
    t("half", "__half", "Half", Class::F16, 2),
    t("bfloat16", "__hip_bfloat16", "BFloat16", Class::F16, 2),
    t("int8", "int8_t", "i8", Class::Int, 1),
    t("int16", "int16_t", "i16", Class::Int, 2),
    t("int32", "int32_t", "i32", Class::Int, 4),
    t("int64", "int64_t", "i64", Class::Int, 8),
    t("uint8", "uint8_t", "u8", Class::Int, 1),
    t("uint16", "uint16_t", "u16", Class::Int, 2),
    t("uint32", "uint32_t", "u32", Class::Int, 4),
    t("uint64", "uint64_t", "u64", Class::Int, 8),
    t("size", "size_t", "usize", Class::Int, 8),
    t("ptrdiff", "ptrdiff_t", "isize", Class::Int, 8),
];

pub fn ty(name: &str) -> &'static Ty {
    TYPES.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("type {name} is not in TYPES"))
}

/// Upstream's type sets (rocshmem-api.md §4.1), by TYPENAME.
pub const T25: &[&str] = &[
    "float", "double", "char", "schar", "short", "int", "long", "longlong", "uchar", "ushort", "uint", "ulong",
    "ulonglong", "half", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size",
    "ptrdiff",
];
/// Upstream's bitcode wrappers (the device `extern "C"` names) cover T25's first 13 types.
pub const T13: &[&str] = T25.split_at(13).0;
pub const AMO12: &[&str] =
    &["int", "long", "longlong", "uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64", "size", "ptrdiff"];
pub const AMO14: &[&str] = &[
    "float", "double", "int", "long", "longlong", "uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64",
    "size", "ptrdiff",
];
pub const AMO7: &[&str] = &["uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64"];
/// T25 without the floating types: reductions with all seven ops.
pub const COLL_INT: &[&str] = &[
    "char", "schar", "short", "int", "long", "longlong", "uchar", "ushort", "uint", "ulong", "ulonglong", "int8",
    "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size", "ptrdiff",
];
pub const COLL_FLOAT: &[&str] = &["float", "double", "half", "bfloat16"];
/// Legacy active-set `*_to_all` reductions (exported upstream, not declared there).
pub const TO_ALL_INT: &[&str] = &["int", "short", "long", "longlong"];
pub const TO_ALL_FLOAT: &[&str] = &["float", "double"];

/// Reduction ops: (name in the API, Rust function implementing it).
pub type Ops = &'static [(&'static str, &'static str)];

pub const INT_OPS: &[(&str, &str)] = &[
    ("sum", "Arith::sum"),
    ("min", "Arith::min"),
    ("max", "Arith::max"),
    ("prod", "Arith::prod"),
    ("or", "Bits::or"),
    ("and", "Bits::and"),
    ("xor", "Bits::xor"),
];
pub const FLOAT_OPS: &[(&str, &str)] = &[("sum", "Arith::sum"), ("min", "Arith::min"), ("max", "Arith::max"), ("prod", "Arith::prod")];

/// Parameter kinds of the typed families; `T` is the element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum P {
    Ctx,
    Team,
    /// `T *name`
    Ptr(&'static str),
    /// `const T *name`
    CPtr(&'static str),
    /// `T name`
    Val(&'static str),
    /// `size_t name`
    Size(&'static str),
    /// `int name`
    Int(&'static str),
    /// `const int *name`
    CIntPtr(&'static str),
    /// `size_t *name`
    SizePtr(&'static str),
    /// `long *name`
    LongPtr(&'static str),
    /// `hipStream_t stream` (C: `void *stream`)
    Stream,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    Void,
    T,
    Int,
    Size,
}

/// Which of `rocshmem_X` / `rocshmem_ctx_X` exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    Both,
    Only,
    None,
}

pub struct Family {
    /// Family name as in the names list (RMA, AMO, P2P_SYNC, COLL, COLL-legacy).
    pub family: &'static str,
    /// The split header that declares it.
    pub header: &'static str,
    /// Name after `rocshmem_[ctx_]`, with `{T}` (and `{op}` for reductions).
    pub name: &'static str,
    /// The C entry point's name when it differs (C has no overloading): same placeholders.
    pub c_name: Option<&'static str>,
    pub ctx: Ctx,
    pub types: &'static [&'static str],
    /// Reduction ops crossed with the types: (int-class ops, float-class ops).
    pub ops: Option<(Ops, Ops)>,
    pub ret: Ret,
    pub params: &'static [P],
    /// The Rust body: `{call}` (C name literal), `{ctx}` (`None`/`Some(ctx)`), `{T}`, `{op}`;
    /// `{tname}` and `{opname}` are the type's and op's names in the API (`int`, `sum`).
    pub body: &'static str,
    /// One-sentence doc, `{T}` is the C type.
    pub doc: &'static str,
    /// True for names upstream exports without declaring them (we declare them).
    pub legacy: bool,
}

use P::*;

const RMA_ARGS: &[P] = &[Ptr("dest"), CPtr("source"), Size("nelems"), Int("pe")];

pub const FAMILIES: &[Family] = &[
    // ---- RMA ----
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_put", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::Void,
        params: RMA_ARGS, body: "rma::put({call}, {ctx}, dest, source, nelems, pe)",
        doc: "Copies `nelems` `{T}` from local `source` to symmetric `dest` on PE `pe`.", legacy: false },
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_get", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::Void,
        params: RMA_ARGS, body: "rma::get({call}, {ctx}, dest, source, nelems, pe)",
        doc: "Copies `nelems` `{T}` from symmetric `source` on PE `pe` to local `dest`.", legacy: false },
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_p", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "rma::p({call}, {ctx}, dest, value, pe)",
        doc: "Stores one `{T}` at symmetric `dest` on PE `pe`.", legacy: false },
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_g", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::T,
        params: &[CPtr("source"), Int("pe")], body: "rma::g({call}, {ctx}, source, pe)",
        doc: "Loads one `{T}` from symmetric `source` on PE `pe`.", legacy: false },
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_put_nbi", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::Void,
        params: RMA_ARGS, body: "rma::put({call}, {ctx}, dest, source, nelems, pe)",
        doc: "Non-blocking put of `nelems` `{T}` (complete after `rocshmem_quiet`).", legacy: false },
    Family { family: "RMA", header: "rocshmem_RMA.hpp", name: "{T}_get_nbi", c_name: None, ctx: Ctx::Both, types: T25, ops: None, ret: Ret::Void,
        params: RMA_ARGS, body: "rma::get({call}, {ctx}, dest, source, nelems, pe)",
        doc: "Non-blocking get of `nelems` `{T}` (complete after `rocshmem_quiet`).", legacy: false },
    // ---- AMO ----
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch", c_name: None, ctx: Ctx::Both, types: AMO14, ops: None, ret: Ret::T,
        params: &[Ptr("source"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::Fetch, source, amo::zero(), amo::zero(), pe)",
        doc: "Atomically reads the `{T}` at symmetric `source` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_set", c_name: None, ctx: Ctx::Both, types: AMO14, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::Set, dest, value, amo::zero(), pe);",
        doc: "Atomically writes `value` to the `{T}` at `dest` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_swap", c_name: None, ctx: Ctx::Both, types: AMO14, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::Swap, dest, value, amo::zero(), pe)",
        doc: "Atomically replaces the `{T}` at `dest` on PE `pe` with `value`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_compare_swap", c_name: None, ctx: Ctx::Both, types: AMO12, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("cond"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::CompareSwap, dest, value, cond, pe)",
        doc: "Atomically stores `value` at `dest` on PE `pe` if it equals `cond`; returns the old `{T}`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch_inc", c_name: None, ctx: Ctx::Both, types: AMO12, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::FetchInc, dest, amo::zero(), amo::zero(), pe)",
        doc: "Atomically increments the `{T}` at `dest` on PE `pe`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_inc", c_name: None, ctx: Ctx::Both, types: AMO12, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::Inc, dest, amo::zero(), amo::zero(), pe);",
        doc: "Atomically increments the `{T}` at `dest` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch_add", c_name: None, ctx: Ctx::Both, types: AMO12, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::FetchAdd, dest, value, amo::zero(), pe)",
        doc: "Atomically adds `value` to the `{T}` at `dest` on PE `pe`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_add", c_name: None, ctx: Ctx::Both, types: AMO12, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::Add, dest, value, amo::zero(), pe);",
        doc: "Atomically adds `value` to the `{T}` at `dest` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch_and", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::FetchAnd, dest, value, amo::zero(), pe)",
        doc: "Atomic bitwise AND of `value` into the `{T}` at `dest` on PE `pe`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_and", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::And, dest, value, amo::zero(), pe);",
        doc: "Atomic bitwise AND of `value` into the `{T}` at `dest` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch_or", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::FetchOr, dest, value, amo::zero(), pe)",
        doc: "Atomic bitwise OR of `value` into the `{T}` at `dest` on PE `pe`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_or", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::Or, dest, value, amo::zero(), pe);",
        doc: "Atomic bitwise OR of `value` into the `{T}` at `dest` on PE `pe`.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_fetch_xor", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::T,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "amo::op({call}, {ctx}, AmoOp::FetchXor, dest, value, amo::zero(), pe)",
        doc: "Atomic bitwise XOR of `value` into the `{T}` at `dest` on PE `pe`; returns the old value.", legacy: false },
    Family { family: "AMO", header: "rocshmem_AMO.hpp", name: "{T}_atomic_xor", c_name: None, ctx: Ctx::Both, types: AMO7, ops: None, ret: Ret::Void,
        params: &[Ptr("dest"), Val("value"), Int("pe")], body: "let _ = amo::op({call}, {ctx}, AmoOp::Xor, dest, value, amo::zero(), pe);",
        doc: "Atomic bitwise XOR of `value` into the `{T}` at `dest` on PE `pe`.", legacy: false },
    // ---- P2P_SYNC ----
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Void,
        params: &[Ptr("ivars"), Int("cmp"), Val("val")], body: "p2p::wait_until({call}, ivars, cmp, val)",
        doc: "Blocks until the symmetric `{T}` at `ivars` compares to `val` as `cmp` says.", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_any", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Size,
        params: &[Ptr("ivars"), Size("nelems"), CIntPtr("status"), Int("cmp"), Val("val")],
        body: "p2p::wait_until_any({call}, ivars, nelems, status, cmp, val)",
        doc: "Blocks until some `{T}` of `ivars` (not excluded by `status`) satisfies the comparison; returns its index.", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_all", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Void,
        params: &[Ptr("ivars"), Size("nelems"), CIntPtr("status"), Int("cmp"), Val("val")],
        body: "p2p::wait_until_all({call}, ivars, nelems, status, cmp, val)",
        doc: "Blocks until every `{T}` of `ivars` (not excluded by `status`) satisfies the comparison.", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_some", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Size,
        params: &[Ptr("ivars"), Size("nelems"), SizePtr("indices"), CIntPtr("status"), Int("cmp"), Val("val")],
        body: "p2p::wait_until_some({call}, ivars, nelems, indices, status, cmp, val)",
        doc: "Blocks until at least one `{T}` of `ivars` satisfies the comparison; stores the indices of all that do.", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_any_vector", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Size,
        params: &[Ptr("ivars"), Size("nelems"), CIntPtr("status"), Int("cmp"), Ptr("vals")],
        body: "p2p::wait_until_any_vector({call}, ivars, nelems, status, cmp, vals)",
        doc: "As `_wait_until_any`, comparing element i of `ivars` with `vals[i]` (`{T}`).", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_all_vector", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Void,
        params: &[Ptr("ivars"), Size("nelems"), CIntPtr("status"), Int("cmp"), Ptr("vals")],
        body: "p2p::wait_until_all_vector({call}, ivars, nelems, status, cmp, vals)",
        doc: "As `_wait_until_all`, comparing element i of `ivars` with `vals[i]` (`{T}`).", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_wait_until_some_vector", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Size,
        params: &[Ptr("ivars"), Size("nelems"), SizePtr("indices"), CIntPtr("status"), Int("cmp"), Ptr("vals")],
        body: "p2p::wait_until_some_vector({call}, ivars, nelems, indices, status, cmp, vals)",
        doc: "As `_wait_until_some`, comparing element i of `ivars` with `vals[i]` (`{T}`).", legacy: false },
    Family { family: "P2P_SYNC", header: "rocshmem_P2P_SYNC.hpp", name: "{T}_test", c_name: None, ctx: Ctx::None, types: T25, ops: None, ret: Ret::Int,
        params: &[Ptr("ivars"), Int("cmp"), Val("val")], body: "p2p::test({call}, ivars, cmp, val)",
        doc: "1 if the symmetric `{T}` at `ivars` compares to `val` as `cmp` says, else 0.", legacy: false },
    // ---- COLL ----
    Family { family: "COLL", header: "rocshmem_COLL.hpp", name: "{T}_broadcast", c_name: None, ctx: Ctx::Only, types: T25, ops: None, ret: Ret::Void,
        params: &[Ctx, Team, Ptr("dest"), CPtr("source"), Int("nelems"), Int("pe_root")],
        body: "coll::broadcast({call}, ctx, team, dest, source, nelems, pe_root)",
        doc: "Copies `nelems` `{T}` from `source` on team member `pe_root` to `dest` on every member (root included).", legacy: false },
    Family { family: "COLL", header: "rocshmem_COLL.hpp", name: "{T}_broadcast", c_name: Some("{T}_broadcast_active_set"), ctx: Ctx::Only, types: T25, ops: None, ret: Ret::Void,
        params: &[Ctx, Ptr("dest"), CPtr("source"), Int("nelems"), Int("pe_root"), Int("pe_start"), Int("log_pe_stride"), Int("pe_size"), LongPtr("p_sync")],
        body: "coll::broadcast_active_set({call}, ctx, dest, source, nelems, pe_root, pe_start, log_pe_stride, pe_size, p_sync)",
        doc: "Active-set broadcast of `nelems` `{T}` (OpenSHMEM 1.4: `dest` on the root is not written; `p_sync` is not used).", legacy: false },
    Family { family: "COLL", header: "rocshmem_COLL.hpp", name: "{T}_{op}_reduce", c_name: None, ctx: Ctx::Only, types: T25, ops: Some((INT_OPS, FLOAT_OPS)), ret: Ret::Int,
        params: &[Ctx, Team, Ptr("dest"), CPtr("source"), Int("nreduce")],
        body: "coll::reduce({call}, ctx, team, dest, source, nreduce, {op}, \"reduce_{tname}_{opname}\")",
        doc: "Reduces `nreduce` `{T}` of `source` over the team with this op into `dest` on every member; 0 on success.", legacy: false },
    Family { family: "COLL", header: "rocshmem_COLL.hpp", name: "{T}_{op}_reduce_scatter", c_name: None, ctx: Ctx::Only, types: T25, ops: Some((INT_OPS, FLOAT_OPS)), ret: Ret::Int,
        params: &[Ctx, Team, Ptr("dest"), CPtr("source"), Int("nreduce")],
        body: "coll::reduce_scatter({call}, ctx, team, dest, source, nreduce, {op})",
        doc: "Reduces `source` (`nreduce` `{T}` per member) over the team; member i gets block i in `dest`; 0 on success.", legacy: false },
    Family { family: "COLL", header: "rocshmem_COLL.hpp", name: "{T}_{op}_reduce_on_stream", c_name: None, ctx: Ctx::Only, types: T25, ops: Some((INT_OPS, FLOAT_OPS)), ret: Ret::Int,
        params: &[Ctx, Team, Ptr("dest"), CPtr("source"), Int("nreduce"), Stream],
        body: "crate::api::stream::reduce({call}, ctx, team, dest, source, nreduce, stream, \"{tname}\", \"{opname}\")",
        doc: "Enqueues on `stream` the reduction of `nreduce` `{T}` of `source` over the team into `dest` on every member; returns at once (0 if enqueued).", legacy: false },
    Family { family: "COLL-legacy", header: "rocshmem_COLL.hpp", name: "{T}_{op}_to_all", c_name: None, ctx: Ctx::Only, types: &[], ops: None, ret: Ret::Void,
        params: &[Ctx, Ptr("dest"), CPtr("source"), Int("nreduce"), Int("PE_start"), Int("logPE_stride"), Int("PE_size"), Ptr("pWrk"), LongPtr("pSync")],
        body: "coll::to_all({call}, ctx, dest, source, nreduce, PE_start, logPE_stride, PE_size, pWrk, pSync, {op})",
        doc: "Legacy active-set reduction of `nreduce` `{T}` (`pWrk`/`pSync` are not used).", legacy: true },
    Family { family: "COLL-legacy", header: "rocshmem_COLL.hpp", name: "{T}_{op}_to_all", c_name: Some("{T}_{op}_to_all_team"), ctx: Ctx::Only, types: &[], ops: None, ret: Ret::Int,
        params: &[Ctx, Team, Ptr("dest"), CPtr("source"), Int("nreduce")],
        body: "coll::reduce({call}, ctx, team, dest, source, nreduce, {op}, \"reduce_{tname}_{opname}\")",
        doc: "rocSHMEM 2.x team reduction of `nreduce` `{T}` under its old name (the same as `_reduce`); 0 on success.", legacy: true },
];

/// The (type, op) pairs a family expands to. Families without ops give op = None.
pub fn expansions(f: &Family) -> Vec<(&'static Ty, Option<(&'static str, &'static str)>)> {
    if f.legacy {
        let mut v = Vec::new();
        for n in TO_ALL_INT {
            for op in INT_OPS {
                v.push((ty(n), Some(*op)));
            }
        }
        for n in TO_ALL_FLOAT {
            for op in FLOAT_OPS {
                v.push((ty(n), Some(*op)));
            }
        }
        return v;
    }
    match f.ops {
        None => f.types.iter().map(|n| (ty(n), None)).collect(),
        Some((int_ops, float_ops)) => {
            let mut v = Vec::new();
            for n in f.types {
                let t = ty(n);
                // Integer types take every op, floating types the arithmetic ones (upstream's
                // COLL-int and COLL-float sets).
                let ops = if COLL_INT.contains(n) {
                    int_ops
                } else {
                    assert!(COLL_FLOAT.contains(n), "{n} is in neither reduction set");
                    float_ops
                };
                for op in ops {
                    v.push((t, Some(*op)));
                }
            }
            v
        }
    }
}

/// Host core API: C++ declarations as upstream writes them (namespace rocshmem). The C entry
/// point has the same name and parameters unless `c` says otherwise; `shim: false` means the
/// C++ definition is hand-written in src/cxx/shim_core.cpp.
pub struct Core {
    pub decl: &'static str,
    pub shim: bool,
    /// The header that declares it: `rocshmem_HOST.hpp` is generated from this table; others
    /// are hand-written and checked against the table by the generated ABI test.
    pub header: &'static str,
}

const fn core(decl: &'static str) -> Core {
    Core { decl, shim: true, header: "rocshmem_HOST.hpp" }
}

const fn qp(decl: &'static str) -> Core {
    Core { decl, shim: true, header: "qp_introspect.hpp" }
}

pub const CORE: &[Core] = &[
    core("void rocshmem_init()"),
    Core { decl: "[[deprecated]] void rocshmem_init(MPI_Comm comm)", shim: false, header: "rocshmem_HOST.hpp" },
    Core { decl: "[[deprecated]] int rocshmem_init_thread(int requested, int *provided, MPI_Comm comm)", shim: false, header: "rocshmem_HOST.hpp" },
    // rocSHMEM 2.x form (its comm defaulted to MPI_COMM_WORLD): initialises as rocshmem_init does.
    Core { decl: "int rocshmem_init_thread(int requested, int *provided)", shim: false, header: "rocshmem_HOST.hpp" },
    core("int rocshmem_init_attr(unsigned int flags, rocshmem_init_attr_t *attr)"),
    core("int rocshmem_get_uniqueid(rocshmem_uniqueid_t *uid)"),
    core("int rocshmem_set_attr_uniqueid_args(int rank, int nranks, rocshmem_uniqueid_t *uid, rocshmem_init_attr_t *attr)"),
    core("[[deprecated(\"Use rocshmem_hipmodule_init() instead\")]] void *rocshmem_get_device_ctx()"),
    core("int rocshmem_hipmodule_init(hipModule_t module, hipStream_t stream = nullptr)"),
    core("void *rocshmem_ptr(const void *dest, int pe)"),
    core("void rocshmem_query_thread(int *provided)"),
    core("void rocshmem_dump_stats()"),
    core("void rocshmem_reset_stats()"),
    core("void rocshmem_finalize()"),
    core("void *rocshmem_malloc(size_t size)"),
    core("void *rocshmem_align(size_t alignment, size_t size)"),
    core("void *rocshmem_calloc(size_t count, size_t size)"),
    core("void rocshmem_free(void *ptr)"),
    core("int rocshmem_buffer_register(void *addr, size_t length)"),
    core("int rocshmem_buffer_unregister(void *addr)"),
    core("void rocshmem_buffer_unregister_all()"),
    core("void *rocshmem_buffer_register_symmetric(void *addr, size_t length)"),
    core("int rocshmem_buffer_unregister_symmetric(void *addr)"),
    core("int rocshmem_buffer_register_vmm(void *addr, size_t length, int my_pe, int n_pes, ptrdiff_t stride)"),
    core("int rocshmem_sym_buffer_register(void *addr, size_t length, int my_pe, int n_pes, ptrdiff_t stride)"),
    core("int rocshmem_sym_buffer_unregister(void *addr)"),
    core("int rocshmem_n_pes()"),
    core("int rocshmem_my_pe()"),
    core("void rocshmem_info_get_version(int *major, int *minor)"),
    core("void rocshmem_info_get_name(char *name)"),
    core("void rocshmem_vendor_get_version_info(int *major, int *minor, int *patch)"),
    core("int rocshmem_ctx_create(int64_t options, rocshmem_ctx_t *ctx)"),
    core("void rocshmem_ctx_destroy(rocshmem_ctx_t ctx)"),
    core("int rocshmem_team_translate_pe(rocshmem_team_t src_team, int src_pe, rocshmem_team_t dest_team)"),
    core("int rocshmem_team_n_pes(rocshmem_team_t team)"),
    core("int rocshmem_team_my_pe(rocshmem_team_t team)"),
    core("int rocshmem_team_split_strided(rocshmem_team_t parent_team, int start, int stride, int size, const rocshmem_team_config_t *config, long config_mask, rocshmem_team_t *new_team)"),
    core("int rocshmem_team_split_2d(rocshmem_team_t parent_team, int xrange, const rocshmem_team_config_t *xaxis_config, long xaxis_mask, rocshmem_team_t *xaxis_team, const rocshmem_team_config_t *yaxis_config, long yaxis_mask, rocshmem_team_t *yaxis_team)"),
    core("void rocshmem_team_destroy(rocshmem_team_t team)"),
    core("void rocshmem_ctx_fence(rocshmem_ctx_t ctx)"),
    core("void rocshmem_fence()"),
    core("void rocshmem_ctx_quiet(rocshmem_ctx_t ctx)"),
    core("void rocshmem_quiet()"),
    core("void rocshmem_barrier_all()"),
    core("void rocshmem_barrier(rocshmem_team_t team)"),
    core("void rocshmem_sync_all()"),
    core("void rocshmem_team_sync(rocshmem_team_t team)"),
    core("void rocshmem_global_exit(int status)"),
    core("void rocshmem_putmem(void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_getmem(void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_ctx_putmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_ctx_getmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_ctx_putmem_nbi(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)"),
    core("void rocshmem_ctx_getmem_nbi(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe)"),
    // Stream-ordered (`*_on_stream`): enqueue a helper kernel on the stream and return at once.
    core("void rocshmem_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, hipStream_t stream)"),
    core("void rocshmem_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, hipStream_t stream)"),
    core("void rocshmem_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, hipStream_t stream)"),
    core("void rocshmem_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value, hipStream_t stream)"),
    core("void rocshmem_signal_add_on_stream(uint64_t *sig_addr, uint64_t signal, int pe, hipStream_t stream)"),
    core("void rocshmem_signal_set_on_stream(uint64_t *sig_addr, uint64_t signal, int pe, hipStream_t stream)"),
    core("void rocshmem_quiet_on_stream(hipStream_t stream)"),
    core("void rocshmem_barrier_all_on_stream(hipStream_t stream)"),
    core("void rocshmem_barrier_on_stream(rocshmem_team_t team, hipStream_t stream)"),
    core("void rocshmem_sync_all_on_stream(hipStream_t stream)"),
    core("void rocshmem_team_sync_on_stream(rocshmem_team_t team, hipStream_t stream)"),
    core("void rocshmem_alltoallmem_on_stream(rocshmem_team_t team, void *dest, const void *source, size_t size, hipStream_t stream)"),
    core("void rocshmem_broadcastmem_on_stream(rocshmem_team_t team, void *dest, const void *source, size_t nelems, int pe_root, hipStream_t stream)"),
    qp("QpInfoVendor rocshmem_qp_introspect_provider()"),
    qp("bool rocshmem_qp_introspect_available()"),
    qp("bool rocshmem_query_qp_info(int peer, int ctx_id, QpInfo *out)"),
];

/// Upstream's public `__global__` helper kernels of the `*_on_stream` calls (declared in the
/// C++ headers on GPU compiles, defined by the device library): declaration, and the body over
/// `device/stream/kernels.hpp` (`A` is the kernel's rocshmem_stream_args).
pub const STREAM_KERNELS: &[(&str, &str)] = &[
    ("void rocshmem_putmem_kernel(void *dest, const void *source, size_t nelems, int pe)", "A.dest = dest; A.source = source; A.count = nelems; A.pe = pe; k_putmem(A)"),
    ("void rocshmem_getmem_kernel(void *dest, const void *source, size_t nelems, int pe)", "A.dest = dest; A.source = source; A.count = nelems; A.pe = pe; k_getmem(A)"),
    ("void rocshmem_quiet_kernel()", "k_quiet(A)"),
    ("void rocshmem_putmem_signal_kernel(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)", "A.dest = dest; A.source = source; A.count = nelems; A.sig_addr = sig_addr; A.value = signal; A.op = sig_op; A.pe = pe; k_putmem_signal(A)"),
    ("void rocshmem_signal_wait_until_kernel(uint64_t *sig_addr, int cmp, uint64_t cmp_value)", "A.sig_addr = sig_addr; A.op = cmp; A.value = cmp_value; k_signal_wait_until(A)"),
    ("void rocshmem_barrier_all_kernel()", "k_barrier_all(A)"),
    ("void rocshmem_barrier_kernel(rocshmem_team_t team)", "A.team = team; k_barrier(A)"),
    ("void rocshmem_sync_all_kernel()", "k_sync_all(A)"),
    ("void rocshmem_team_sync_kernel(rocshmem_team_t team)", "A.team = team; k_team_sync(A)"),
    ("void rocshmem_alltoallmem_kernel(rocshmem_team_t team, void *dest, const void *source, size_t size)", "A.team = team; A.dest = dest; A.source = source; A.count = size; k_alltoallmem(A)"),
    ("void rocshmem_broadcastmem_kernel(rocshmem_team_t team, void *dest, const void *source, size_t nelems, int pe_root)", "A.team = team; A.dest = dest; A.source = source; A.count = nelems; A.pe = pe_root; k_broadcastmem(A)"),
];

/// `ROCSHMEM_OP` enumerator of a reduction op name.
pub fn op_enum(op: &str) -> &'static str {
    match op {
        "sum" => "ROCSHMEM_SUM",
        "max" => "ROCSHMEM_MAX",
        "min" => "ROCSHMEM_MIN",
        "prod" => "ROCSHMEM_PROD",
        "and" => "ROCSHMEM_AND",
        "or" => "ROCSHMEM_OR",
        "xor" => "ROCSHMEM_XOR",
        _ => panic!("op {op}"),
    }
}

/// Constants: (C++ enum it belongs to, or the C++ type of a constant; name; value).
pub struct Const {
    /// `enum X` for enumerators (values must be consecutive from 0 in order), else the C++
    /// type of a `constexpr` constant.
    pub group: &'static str,
    pub name: &'static str,
    pub value: i64,
}

const fn c(group: &'static str, name: &'static str, value: i64) -> Const {
    Const { group, name, value }
}

pub const CONSTS: &[Const] = &[
    c("enum ROCSHMEM_STATUS", "ROCSHMEM_SUCCESS", 0),
    c("enum ROCSHMEM_STATUS", "ROCSHMEM_ERROR", 1),
    c("enum ROCSHMEM_OP", "ROCSHMEM_SUM", 0),
    c("enum ROCSHMEM_OP", "ROCSHMEM_MAX", 1),
    c("enum ROCSHMEM_OP", "ROCSHMEM_MIN", 2),
    c("enum ROCSHMEM_OP", "ROCSHMEM_PROD", 3),
    c("enum ROCSHMEM_OP", "ROCSHMEM_AND", 4),
    c("enum ROCSHMEM_OP", "ROCSHMEM_OR", 5),
    c("enum ROCSHMEM_OP", "ROCSHMEM_XOR", 6),
    c("enum ROCSHMEM_OP", "ROCSHMEM_REPLACE", 7),
    c("enum ROCSHMEM_SIGNAL_OPS", "ROCSHMEM_SIGNAL_SET", 0),
    c("enum ROCSHMEM_SIGNAL_OPS", "ROCSHMEM_SIGNAL_ADD", 1),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_EQ", 0),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_NE", 1),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_GT", 2),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_GE", 3),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_LT", 4),
    c("enum rocshmem_cmps", "ROCSHMEM_CMP_LE", 5),
    c("enum rocshmem_thread_ops", "ROCSHMEM_THREAD_SINGLE", 0),
    c("enum rocshmem_thread_ops", "ROCSHMEM_THREAD_FUNNELED", 1),
    c("enum rocshmem_thread_ops", "ROCSHMEM_THREAD_WG_FUNNELED", 2),
    c("enum rocshmem_thread_ops", "ROCSHMEM_THREAD_SERIALIZED", 3),
    c("enum rocshmem_thread_ops", "ROCSHMEM_THREAD_MULTIPLE", 4),
    c("enum rocshmem_team_configs", "ROCSHMEM_TEAM_DEFAULT_CONFIGS", 0),
    c("enum rocshmem_team_configs", "ROCSHMEM_TEAM_NUM_CONTEXTS", 1),
    c("size_t", "ROCSHMEM_REDUCE_MIN_WRKDATA_SIZE", 1024),
    c("size_t", "ROCSHMEM_BARRIER_SYNC_SIZE", 256),
    c("size_t", "ROCSHMEM_REDUCE_SYNC_SIZE", 256),
    c("size_t", "ROCSHMEM_BCAST_SYNC_SIZE", 256),
    c("size_t", "ROCSHMEM_ALLTOALL_SYNC_SIZE", 257),
    c("size_t", "ROCSHMEM_FCOLLECT_SYNC_SIZE", 257),
    c("size_t", "ROCSHMEM_SYNC_VALUE", 0),
    c("int", "ROCSHMEM_CTX_ZERO", 0),
    c("int", "ROCSHMEM_CTX_NOSTORE", 1),
    c("int", "ROCSHMEM_CTX_SERIALIZED", 2),
    c("int", "ROCSHMEM_CTX_WG_PRIVATE", 4),
    c("int", "ROCSHMEM_CTX_SHARED", 8),
    c("unsigned int", "ROCSHMEM_INIT_WITH_MPI_COMM", 0),
    c("unsigned int", "ROCSHMEM_INIT_WITH_UNIQUEID", 1),
    // The element type of a type-erased tile reduction, carried in its flags (upstream's
    // names; the values and the mask are this library's: upstream's were not found).
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_UNKNOWN", 0),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_INT8", 1),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_UINT8", 2),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_INT16", 3),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_UINT16", 4),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_INT32", 5),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_UINT32", 6),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_INT64", 7),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_UINT64", 8),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_FLOAT", 9),
    c("enum ROCSHMEM_TILE_ELEMENT_TYPE", "ROCSHMEM_TILE_ELEMENT_DOUBLE", 10),
    c("uint64_t", "ROCSHMEM_TILE_ELEMENT_TYPE_SHIFT", 0),
    c("uint64_t", "ROCSHMEM_TILE_ELEMENT_TYPE_MASK", 0xff),
];

/// Preprocessor macros of the public headers (name, value).
pub const MACROS: &[(&str, i64)] = &[
    ("ROCSHMEM_MAJOR_VERSION", 1),
    ("ROCSHMEM_MINOR_VERSION", 4),
    ("ROCSHMEM_MAX_NAME_LEN", 64),
    ("ROCSHMEM_UNIQUE_ID_BYTES", 128),
];
