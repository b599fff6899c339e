//! The helpers every typed collective name calls.

use super::*;
use crate::coll::Group;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;
use crate::transport::Reduce;
use std::ffi::{c_int, c_long};

fn team_group(rt: &Runtime, ctx: rocshmem_ctx_t, team: rocshmem_team_t) -> Result<Group> {
    ctx_team(rt, Some(ctx))?; // the context must be valid too
    let t = team_of(rt, team)?;
    // `team` is the live team's handle (team_of checked it).
    Ok(Group { set: t.set, slot: t.slot, my_idx: t.my_idx, team: team.cast() })
}

fn active_set(rt: &Runtime, start: c_int, log_stride: c_int, size: c_int) -> Result<Group> {
    let set = PeSet::active_set(start, log_stride, size, rt.n_pes())?;
    let my_idx = set.index_of(rt.my_pe()).ok_or_else(|| {
        Error::invalid(format!("PE {} is not in the active set {start}/{log_stride}/{size}", rt.my_pe()))
    })?;
    Ok(Group { set, slot: rt.teams.active_set_slot, my_idx, team: std::ptr::null_mut() })
}

/// Team broadcast (OpenSHMEM 1.5 semantics: `dest` on every member, root included).
pub(crate) fn broadcast<T>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    team: rocshmem_team_t,
    dest: *mut T,
    src: *const T,
    nelems: c_int,
    pe_root: c_int,
) {
    void_call(call, || {
        let rt = rt()?;
        let g = team_group(rt, ctx, team)?;
        let bytes = crate::rma::byte_len(count(nelems, "nelems")?, std::mem::size_of::<T>())?;
        // SAFETY: the caller's pointers; ranges are checked against the heap.
        unsafe { crate::coll::broadcast(rt, &g, dest.cast(), src.cast(), bytes, pe_root, true) }
    })
}

/// Active-set broadcast (OpenSHMEM 1.4: `dest` on the root is left alone). `p_sync` is not
/// needed by this implementation and is not touched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn broadcast_active_set<T>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    dest: *mut T,
    src: *const T,
    nelems: c_int,
    pe_root: c_int,
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    p_sync: *mut c_long,
) {
    let _ = p_sync;
    void_call(call, || {
        let rt = rt()?;
        ctx_team(rt, Some(ctx))?;
        let g = active_set(rt, pe_start, log_pe_stride, pe_size)?;
        let bytes = crate::rma::byte_len(count(nelems, "nelems")?, std::mem::size_of::<T>())?;
        // SAFETY: the caller's pointers; ranges are checked against the heap.
        unsafe { crate::coll::broadcast(rt, &g, dest.cast(), src.cast(), bytes, pe_root, false) }
    })
}

/// Team reduction; returns 0 or ROCSHMEM_ERROR. `kernel`: the stream helper kernel of this
/// type and operation (`reduce_<type>_<op>`), run when the heap is GPU memory.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    team: rocshmem_team_t,
    dest: *mut T,
    src: *const T,
    nreduce: c_int,
    op: F,
    kernel: &str,
) -> c_int {
    team_reduce(call, ctx, team, dest, src, nreduce, op, Reduce::All, kernel)
}

/// Team reduce-scatter; returns 0 or ROCSHMEM_ERROR.
pub(crate) fn reduce_scatter<T: Scalar, F: Fn(T, T) -> T + Copy>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    team: rocshmem_team_t,
    dest: *mut T,
    src: *const T,
    nreduce: c_int,
    op: F,
) -> c_int {
    team_reduce(call, ctx, team, dest, src, nreduce, op, Reduce::Scatter, "")
}

/// A team reduction of either kind ([`crate::coll::reduce`]).
#[allow(clippy::too_many_arguments)]
fn team_reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    team: rocshmem_team_t,
    dest: *mut T,
    src: *const T,
    nreduce: c_int,
    op: F,
    how: Reduce,
    kernel: &str,
) -> c_int {
    status_call(call, || {
        let rt = rt()?;
        let g = team_group(rt, ctx, team)?;
        // SAFETY: the caller's pointers; ranges are checked against the heap.
        unsafe { crate::coll::reduce(rt, &g, dest, src, count(nreduce, "nreduce")?, op, how, kernel) }
    })
}

/// Legacy active-set reduction (`*_to_all`). `p_wrk`/`p_sync` are not needed and not touched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn to_all<T: Scalar, F: Fn(T, T) -> T + Copy>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    dest: *mut T,
    src: *const T,
    nreduce: c_int,
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    p_wrk: *mut T,
    p_sync: *mut c_long,
    op: F,
) {
    let _ = (p_wrk, p_sync);
    void_call(call, || {
        let rt = rt()?;
        ctx_team(rt, Some(ctx))?;
        let g = active_set(rt, pe_start, log_pe_stride, pe_size)?;
        // SAFETY: the caller's pointers; ranges are checked against the heap.
        unsafe { crate::coll::reduce(rt, &g, dest, src, count(nreduce, "nreduce")?, op, Reduce::All, "") }
    })
}
