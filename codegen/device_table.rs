//! THE device table: one row per pattern of public device names, in blocks expanded by
//! `device.rs` (see there for `D`/`HD`/`Erased`/`C`). A block's rows are expanded for each of its
//! scopes in turn (scope-major, the order of the generated files), each row for each type of
//! its type sets (T25, AMO12, ... from `table.rs`: the one type list) and, with `{op}` in its
//! name, each reduction op of the type, in the plain and/or `ctx_` forms.
//!
//! Placeholders: `{T}` the C++ element type (`{t}` its TYPENAME in names), `{op}`/`{OP}` the
//! reduction op (name / dev::Op), `{s}` the scope's name suffix, `{G}` its dev::Grp, `{R}` the
//! result of a collective in that scope and `{V}` the cast that drops the call's int where
//! `{R}` is void; `CTX` is the context argument (the default context in plain forms).
//!
//! A row is `r(side, forms, name, ret, params, body, types, bitcode)`: `types` lists the type
//! sets (none: untyped), `bitcode` which forms get an `extern "C"` bitcode entry point
//! (plain forms only, but for `Erased` rows).

use super::device::{Bitcode, Bitcode::*, Block, Forms, Forms::*, Row, Scope, Side, Side::*};
use super::table::{AMO12, AMO14, AMO7, T13, T25, TO_ALL_FLOAT, TO_ALL_INT};

#[allow(clippy::too_many_arguments)] // a row's eight columns
const fn r(side: Side, forms: Forms, name: &'static str, ret: &'static str, params: &'static str, body: &'static str, types: &'static [&'static [&'static str]], bitcode: Bitcode) -> Row {
    Row { side, forms, name, ret, params, body, types, bitcode }
}

const fn scope(s: &'static str, grp: &'static str, ret: &'static str, forms: Forms) -> Scope {
    Scope { s, grp, ret, forms }
}

/// No scope (the row's name is used as it is).
const NONE: &[Scope] = &[scope("", "", "", Both)];
const THREAD: Scope = scope("", "dev::Grp::thread", "", Both);
const WAVE: Scope = scope("_wave", "dev::Grp::wave", "", Both);
const WG: Scope = scope("_wg", "dev::Grp::wg", "", Both);
const SCOPES: &[Scope] = &[THREAD, WAVE, WG];
/// Put-with-signal: blocking and non-blocking, per thread, work-group and wave.
const SIG_SCOPES: &[Scope] = &[
    THREAD, WG, WAVE,
    scope("_nbi", "dev::Grp::thread", "", Both), scope("_nbi_wg", "dev::Grp::wg", "", Both), scope("_nbi_wave", "dev::Grp::wave", "", Both),
];
/// Collectives: a work-group form returns nothing (and has a plain form where upstream has
/// one), a wave form returns the status and takes a context.
const COLL_SCOPES: &[Scope] = &[scope("_wg", "dev::Grp::wg", "void", Both), scope("_wave", "dev::Grp::wave", "int", CtxOnly)];

macro_rules! rma { () => { "{T} *dest, const {T} *source, size_t nelems, int pe" } }
macro_rules! mem { () => { "void *dest, const void *source, size_t nelems, int pe" } }
macro_rules! sig { () => { "uint64_t *sig_addr, uint64_t signal, int sig_op, int pe" } }
macro_rules! coll { () => { "rocshmem_team_t team, {T} *dest, const {T} *source, int nelems" } }
macro_rules! collmem { () => { "rocshmem_team_t team, void *dest, const void *source, int nelems" } }
macro_rules! red { () => { "rocshmem_team_t team, {T} *dest, const {T} *source, int nreduce" } }
macro_rules! tile { () => { "void *dst, const void *src, const size_t *dst_strides, const size_t *src_strides, const size_t *start_coord, const size_t *boundary, int ndim, size_t element_size" } }
macro_rules! tile_args { () => { "dst, src, dst_strides, src_strides, start_coord, boundary, ndim, element_size" } }
macro_rules! p2p { ($rest:literal) => { concat!("{T} *ivars, ", $rest) } }

const U: &[&[&str]] = &[];
const T: &[&[&str]] = &[T25];

/// The bitcode types of p (T13 and int64) and of the point-to-point waits (T13 and uint64).
const P_BITCODE: Bitcode = Types(&[T13, &["int64"]]);
const P2P_BITCODE: Bitcode = Types(&[T13, &["uint64"]]);

const CORE: &[Row] = &[
    r(HD, Plain, "my_pe", "int", "", "dev::my_pe(CTX)", U, Untyped),
    r(HD, Plain, "n_pes", "int", "", "dev::n_pes(CTX)", U, Untyped),
    r(D, CtxOnly, "my_pe", "int", "", "dev::my_pe(CTX)", U, No),
    r(D, CtxOnly, "n_pes", "int", "", "dev::n_pes(CTX)", U, No),
    r(HD, Plain, "team_my_pe", "int", "rocshmem_team_t team", "dev::team_my_pe(team)", U, No),
    r(HD, Plain, "team_n_pes", "int", "rocshmem_team_t team", "dev::team_n_pes(team)", U, No),
    r(HD, Plain, "team_translate_pe", "int", "rocshmem_team_t src_team, int src_pe, rocshmem_team_t dest_team", "dev::team_translate_pe(src_team, src_pe, dest_team)", U, No),
    r(HD, Plain, "ptr", "void *", "const void *dest, int pe", "dev::ptr(dest, pe)", U, Untyped),
    r(HD, Plain, "query_thread", "void", "int *provided", "dev::query_thread(provided)", U, Untyped),
    r(HD, Both, "quiet", "void", "", "dev::quiet(CTX)", U, Untyped),
    r(HD, Both, "fence", "void", "", "dev::fence(CTX)", U, Untyped),
    r(D, Both, "fence", "void", "int pe", "dev::fence_pe(CTX, pe)", U, Untyped),
    r(D, Both, "pe_quiet", "void", "const int *target_pes, size_t npes", "dev::pe_quiet(CTX, target_pes, npes)", U, Untyped),
    r(D, Both, "threadfence_system", "void", "", "dev::threadfence_system(CTX)", U, Untyped),
    r(D, Plain, "wg_init", "void", "", "dev::nothing()", U, No),
    r(D, Plain, "wg_finalize", "void", "", "dev::nothing()", U, No),
    r(D, Plain, "wg_init_thread", "void", "int requested, int *provided", "dev::wg_init_thread(requested, provided)", U, No),
    r(D, Plain, "wg_ctx_create", "int", "int64_t options, rocshmem_ctx_t *ctx", "dev::wg_ctx_create(options, ctx)", U, No),
    r(D, Plain, "wg_team_create_ctx", "int", "rocshmem_team_t team, long options, rocshmem_ctx_t *ctx", "dev::wg_team_create_ctx(team, options, ctx)", U, No),
    r(D, Plain, "wg_ctx_destroy", "void", "rocshmem_ctx_t *ctx", "dev::wg_ctx_destroy(ctx)", U, No),
];

/// Put and get, per thread (RMA: also host names) and per wave / work-group (RMA_X).
const RMA: &[Row] = &[
    r(HD, Both, "{T}_put{s}", "void", rma!(), "dev::put<{T}, {G}>(CTX, dest, source, nelems, pe)", T, Types(&[T13])),
    r(HD, Both, "putmem{s}", "void", mem!(), "dev::putmem<{G}>(CTX, dest, source, nelems, pe)", U, Untyped),
    r(HD, Both, "{T}_get{s}", "void", rma!(), "dev::get<{T}, {G}>(CTX, dest, source, nelems, pe)", T, Types(&[T13])),
    r(HD, Both, "getmem{s}", "void", mem!(), "dev::getmem<{G}>(CTX, dest, source, nelems, pe)", U, Untyped),
    r(HD, Both, "{T}_put_nbi{s}", "void", rma!(), "dev::put<{T}, {G}>(CTX, dest, source, nelems, pe)", T, Types(&[T13])),
    r(HD, Both, "putmem_nbi{s}", "void", mem!(), "dev::putmem<{G}>(CTX, dest, source, nelems, pe)", U, Untyped),
    r(HD, Both, "{T}_get_nbi{s}", "void", rma!(), "dev::get<{T}, {G}>(CTX, dest, source, nelems, pe)", T, Types(&[T13])),
    r(HD, Both, "getmem_nbi{s}", "void", mem!(), "dev::getmem<{G}>(CTX, dest, source, nelems, pe)", U, Untyped),
];

const RMA_P_G: &[Row] = &[
    r(HD, Both, "{T}_p", "void", "{T} *dest, {T} value, int pe", "dev::p<{T}>(CTX, dest, value, pe)", T, P_BITCODE),
    r(HD, Both, "{T}_g", "{T}", "const {T} *source, int pe", "dev::g<{T}>(CTX, source, pe)", T, Types(&[T13])),
];

const AMO: &[Row] = &[
    r(HD, Both, "{T}_atomic_fetch", "{T}", "{T} *source, int pe", "dev::amo<{T}, dev::AmoOp::fetch>(CTX, source, dev::zero<{T}>(), dev::zero<{T}>(), pe)", &[AMO14], Types(&[AMO14])),
    r(HD, Both, "{T}_atomic_set", "void", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::set>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO14], Types(&[AMO14])),
    r(HD, Both, "{T}_atomic_swap", "{T}", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::swap>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO14], Types(&[AMO14])),
    r(HD, Both, "{T}_atomic_compare_swap", "{T}", "{T} *dest, {T} cond, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::compare_swap>(CTX, dest, value, cond, pe)", &[AMO12], Types(&[AMO12])),
    r(HD, Both, "{T}_atomic_fetch_inc", "{T}", "{T} *dest, int pe", "dev::amo<{T}, dev::AmoOp::fetch_inc>(CTX, dest, dev::zero<{T}>(), dev::zero<{T}>(), pe)", &[AMO12], Types(&[AMO12])),
    r(HD, Both, "{T}_atomic_inc", "void", "{T} *dest, int pe", "dev::amo<{T}, dev::AmoOp::inc>(CTX, dest, dev::zero<{T}>(), dev::zero<{T}>(), pe)", &[AMO12], Types(&[AMO12])),
    r(HD, Both, "{T}_atomic_fetch_add", "{T}", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::fetch_add>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO12], Types(&[AMO12])),
    r(HD, Both, "{T}_atomic_add", "void", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::add>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO12], Types(&[AMO12])),
    r(HD, Both, "{T}_atomic_fetch_and", "{T}", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::fetch_and>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
    r(HD, Both, "{T}_atomic_and", "void", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::and_>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
    r(HD, Both, "{T}_atomic_fetch_or", "{T}", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::fetch_or>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
    r(HD, Both, "{T}_atomic_or", "void", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::or_>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
    r(HD, Both, "{T}_atomic_fetch_xor", "{T}", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::fetch_xor>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
    r(HD, Both, "{T}_atomic_xor", "void", "{T} *dest, {T} value, int pe", "dev::amo<{T}, dev::AmoOp::xor_>(CTX, dest, value, dev::zero<{T}>(), pe)", &[AMO7], Types(&[AMO7])),
];

const PUT_SIGNAL: &[Row] = &[
    r(D, Both, "putmem_signal{s}", "void", concat!("void *dest, const void *source, size_t nelems, ", sig!()), "dev::putmem_signal<{G}>(CTX, dest, source, nelems, sig_addr, signal, sig_op, pe)", U, Untyped),
    r(D, Both, "{T}_put_signal{s}", "void", concat!("{T} *dest, const {T} *source, size_t nelems, ", sig!()), "dev::put_signal<{T}, {G}>(CTX, dest, source, nelems, sig_addr, signal, sig_op, pe)", T, Types(&[T13])),
];

const SIGNAL_FETCH: &[Row] = &[
    r(D, Plain, "signal_fetch{s}", "uint64_t", "const uint64_t *sig_addr", "dev::signal_fetch<{G}>(sig_addr)", U, Untyped),
];

const SIGNAL: &[Row] = &[
    r(D, Both, "signal_add", "void", "uint64_t *sig_addr, uint64_t signal, int pe", "dev::signal_op(CTX, sig_addr, signal, ROCSHMEM_SIGNAL_ADD, pe)", U, No),
    r(D, Both, "signal_set", "void", "uint64_t *sig_addr, uint64_t signal, int pe", "dev::signal_op(CTX, sig_addr, signal, ROCSHMEM_SIGNAL_SET, pe)", U, No),
    r(D, Plain, "signal_wait_until", "uint64_t", "uint64_t *sig_addr, int cmp, uint64_t cmp_value", "dev::signal_wait_until(sig_addr, cmp, cmp_value)", U, No),
];

const P2P_SYNC: &[Row] = &[
    r(HD, Plain, "{T}_wait_until", "void", p2p!("int cmp, {T} val"), "dev::wait_until<{T}>(ivars, cmp, val)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_any", "size_t", p2p!("size_t nelems, const int *status, int cmp, {T} val"), "dev::wait_any<{T}, false>(ivars, nelems, status, cmp, &val)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_all", "void", p2p!("size_t nelems, const int *status, int cmp, {T} val"), "dev::wait_all<{T}, false>(ivars, nelems, status, cmp, &val)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_some", "size_t", p2p!("size_t nelems, size_t *indices, const int *status, int cmp, {T} val"), "dev::wait_some<{T}, false>(ivars, nelems, indices, status, cmp, &val)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_any_vector", "size_t", p2p!("size_t nelems, const int *status, int cmp, {T} *vals"), "dev::wait_any<{T}, true>(ivars, nelems, status, cmp, vals)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_all_vector", "void", p2p!("size_t nelems, const int *status, int cmp, {T} *vals"), "dev::wait_all<{T}, true>(ivars, nelems, status, cmp, vals)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_wait_until_some_vector", "size_t", p2p!("size_t nelems, size_t *indices, const int *status, int cmp, {T} *vals"), "dev::wait_some<{T}, true>(ivars, nelems, indices, status, cmp, vals)", T, P2P_BITCODE),
    r(HD, Plain, "{T}_test", "int", p2p!("int cmp, {T} val"), "dev::test<{T}>(ivars, cmp, val)", T, P2P_BITCODE),
];

/// Barriers: the per-thread forms without a team are also host names (HD); the wave and
/// work-group ones, and those of other parameters than the host's, become device-only.
const BARRIER: &[Row] = &[
    r(HD, Plain, "barrier_all{s}", "void", "", "dev::barrier<{G}>(CTX, dev::world_team(CTX))", U, Untyped),
    r(HD, Plain, "barrier{s}", "void", "", "dev::barrier<{G}>(CTX, dev::world_team(CTX))", U, Untyped),
    r(HD, Plain, "sync_all{s}", "void", "", "dev::sync<{G}>(CTX, dev::world_team(CTX))", U, Untyped),
    r(D, CtxOnly, "barrier{s}", "void", "rocshmem_team_t team", "dev::barrier<{G}>(CTX, team)", U, No),
    r(D, CtxOnly, "sync{s}", "void", "rocshmem_team_t team", "dev::sync<{G}>(CTX, team)", U, No),
];

const COLL: &[Row] = &[
    r(D, OfScope, "{T}_alltoall{s}", "{R}", coll!(), "{V}dev::alltoallmem<{G}>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))", T, No),
    r(D, CtxOnly, "alltoallmem{s}", "{R}", collmem!(), "{V}dev::alltoallmem<{G}>(CTX, team, dest, source, size_t(nelems))", U, No),
    r(D, CtxOnly, "{T}_broadcast{s}", "{R}", concat!(coll!(), ", int pe_root"), "{V}dev::broadcastmem<{G}>(CTX, team, dest, source, size_t(nelems) * sizeof({T}), pe_root)", T, No),
    r(D, CtxOnly, "broadcastmem{s}", "{R}", concat!(collmem!(), ", int pe_root"), "{V}dev::broadcastmem<{G}>(CTX, team, dest, source, size_t(nelems), pe_root)", U, No),
    r(D, CtxOnly, "{T}_fcollect{s}", "{R}", coll!(), "{V}dev::fcollectmem<{G}>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))", T, No),
    r(D, CtxOnly, "fcollectmem{s}", "{R}", collmem!(), "{V}dev::fcollectmem<{G}>(CTX, team, dest, source, size_t(nelems))", U, No),
    r(D, CtxOnly, "{T}_{op}_reduce{s}", "int", red!(), "dev::reduce<{T}, {OP}, {G}>(CTX, team, dest, source, nreduce)", T, No),
    r(D, CtxOnly, "{T}_{op}_reduce_scatter{s}", "int", red!(), "dev::reduce_scatter<{T}, {OP}, {G}>(CTX, team, dest, source, nreduce)", T, No),
];

const ALLTOALLV: &[Row] = &[
    r(D, Plain, "{T}_alltoallv_wg", "void", "rocshmem_team_t team, {T} *dest, const size_t dest_nelems[], const size_t dest_displs[], {T} *source, const size_t source_nelems[], const size_t source_displs[]", "(void)dev::alltoallv<{T}, dev::Grp::wg>(CTX, team, dest, dest_nelems, dest_displs, source, source_nelems, source_displs)", T, No),
];

const TILE_WAIT: &[Row] = &[
    r(D, Both, "tile_collective_wait", "int", "rocshmem_team_t team, uint64_t flags", "dev::tile_collective_wait(CTX, team, flags)", U, Untyped),
];

/// Tiles: the type-erased forms (the tensor templates are header-only upstream).
const TILE: &[Row] = &[
    r(Erased, CtxOnly, "tile_put{s}", "int", concat!(tile!(), ", int pe, uint64_t flags"), concat!("dev::tile_put<{G}>(CTX, ", tile_args!(), ", pe, flags)"), U, Untyped),
    r(Erased, CtxOnly, "tile_get{s}", "int", concat!(tile!(), ", int pe, uint64_t flags"), concat!("dev::tile_get<{G}>(CTX, ", tile_args!(), ", pe, flags)"), U, Untyped),
    r(Erased, Plain, "tile_allgather{s}", "int", concat!("rocshmem_team_t team, ", tile!(), ", uint64_t flags"), concat!("dev::tile_allgather<{G}>(CTX, team, ", tile_args!(), ", flags)"), U, Untyped),
    r(Erased, Plain, "tile_broadcast{s}", "int", concat!("rocshmem_team_t team, ", tile!(), ", int pe_root, uint64_t flags"), concat!("dev::tile_broadcast<{G}>(CTX, team, ", tile_args!(), ", pe_root, flags)"), U, Untyped),
    r(Erased, Plain, "tile_sum_reduce{s}", "int", concat!("rocshmem_team_t team, ", tile!(), ", int root, uint64_t flags"), concat!("dev::tile_reduce<{G}, dev::Op::sum>(CTX, team, ", tile_args!(), ", root, flags)"), U, Untyped),
    r(Erased, Plain, "tile_max_reduce{s}", "int", concat!("rocshmem_team_t team, ", tile!(), ", int root, uint64_t flags"), concat!("dev::tile_reduce<{G}, dev::Op::max>(CTX, team, ", tile_args!(), ", root, flags)"), U, Untyped),
    r(Erased, Plain, "tile_min_reduce{s}", "int", concat!("rocshmem_team_t team, ", tile!(), ", int root, uint64_t flags"), concat!("dev::tile_reduce<{G}, dev::Op::min>(CTX, team, ", tile_args!(), ", root, flags)"), U, Untyped),
];

/// C-linkage entry points with no C++ name, for PyTorch's Triton layer
/// (torch/distributed/_symmetric_memory/_rocshmem_triton.py): the team is an `int`, 0 = the
/// world team (any other fails with ROCSHMEM_ERROR), on the default context. The typed
/// reductions are upstream's (its wrapper file, for that layer); signal_op, alltoallmem_wg and
/// broadcastmem_wg are this library's, with the reductions' shape (upstream's bitcode has
/// none, so that layer stubs them out).
const TRITON: &[Row] = &[
    r(C, Plain, "{T}_{aop}_reduce_wg", "int", "int team, {T} *dest, const {T} *source, int nreduce", "team != 0 ? ROCSHMEM_ERROR : dev::reduce<{T}, {OP}, dev::Grp::wg>(CTX, dev::world_team(CTX), dest, source, nreduce)", &[TO_ALL_INT, TO_ALL_FLOAT], Types(&[TO_ALL_INT, TO_ALL_FLOAT])),
    r(C, Plain, "signal_op", "void", "uint64_t *sig_addr, uint64_t signal, int sig_op, int pe", "dev::signal_op(CTX, sig_addr, signal, sig_op, pe)", U, Untyped),
    r(C, Plain, "alltoallmem_wg", "int", "int team, void *dest, const void *source, size_t nbytes", "team != 0 ? ROCSHMEM_ERROR : dev::alltoallmem<dev::Grp::wg>(CTX, dev::world_team(CTX), dest, source, nbytes)", U, Untyped),
    r(C, Plain, "broadcastmem_wg", "int", "int team, void *dest, const void *source, size_t nbytes, int pe_root", "team != 0 ? ROCSHMEM_ERROR : dev::broadcastmem<dev::Grp::wg>(CTX, dev::world_team(CTX), dest, source, nbytes, pe_root)", U, Untyped),
];

/// rocSHMEM 2.x names (renamed in 3.0), kept as deprecated aliases.
const LEGACY: &[Row] = &[
    r(D, CtxOnly, "{T}_wg_alltoall", "void", coll!(), "(void)dev::alltoallmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))", &[T13], No),
    r(D, CtxOnly, "{T}_wg_broadcast", "void", concat!(coll!(), ", int pe_root"), "(void)dev::broadcastmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}), pe_root)", &[T13], No),
    r(D, CtxOnly, "{T}_wg_fcollect", "void", coll!(), "(void)dev::fcollectmem<dev::Grp::wg>(CTX, team, dest, source, size_t(nelems) * sizeof({T}))", &[T13], No),
    r(D, CtxOnly, "{T}_{op}_wg_reduce", "int", red!(), "dev::reduce<{T}, {OP}, dev::Grp::wg>(CTX, team, dest, source, nreduce)", &[TO_ALL_INT, TO_ALL_FLOAT], No),
    r(D, Both, "wg_barrier_all", "void", "", "dev::barrier<dev::Grp::wg>(CTX, dev::world_team(CTX))", U, No),
    r(D, Both, "wg_sync_all", "void", "", "dev::sync<dev::Grp::wg>(CTX, dev::world_team(CTX))", U, No),
    r(D, Both, "wg_team_sync", "void", "rocshmem_team_t team", "dev::sync<dev::Grp::wg>(CTX, team)", U, No),
];

const fn block(family: &'static str, scopes: &'static [Scope], rows: &'static [Row]) -> Block {
    Block { family, scopes, rows, legacy: false }
}

/// The blocks, in the order of the generated files.
pub const BLOCKS: &[Block] = &[
    block("core", NONE, CORE),
    block("RMA", &[THREAD], RMA),
    block("RMA_X", &[WAVE, WG], RMA),
    block("RMA", NONE, RMA_P_G),
    block("AMO", NONE, AMO),
    block("SIG_OP", SIG_SCOPES, PUT_SIGNAL),
    block("SIG_OP", SCOPES, SIGNAL_FETCH),
    block("SIG_OP", NONE, SIGNAL),
    block("P2P_SYNC", NONE, P2P_SYNC),
    block("COLL", SCOPES, BARRIER),
    block("COLL", COLL_SCOPES, COLL),
    block("COLL", NONE, ALLTOALLV),
    block("TILE", NONE, TILE_WAIT),
    block("TILE", SCOPES, TILE),
    block("COLL", NONE, TRITON),
    Block { family: "COLL-legacy", scopes: NONE, rows: LEGACY, legacy: true },
];
