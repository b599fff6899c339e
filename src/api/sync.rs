//! Ordering and synchronisation: quiet, fence, barriers.

use super::*;
use crate::runtime::Stats;
use crate::team::WORLD_SLOT;

fn barrier_on(call: &'static str, team: Option<rocshmem_team_t>) {
    void_call(call, || {
        let rt = rt()?;
        let t = match team {
            None => rt.world(),
            Some(h) => team_of(rt, h)?,
        };
        Stats::add(&rt.stats.barriers, 1);
        crate::rma::quiet();
        rt.net.barrier(&rt.heap, t.set, t.slot)
    })
}

/// Completes this PE's operations and waits until every PE calls it.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_barrier_all() {
    barrier_on("rocshmem_barrier_all", None)
}

/// `rocshmem_barrier_all` over the members of `team`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_barrier(team: rocshmem_team_t) {
    barrier_on("rocshmem_barrier", Some(team))
}

/// Waits until every PE calls it (a barrier without the completion of operations; on this
/// backend operations are complete anyway).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_sync_all() {
    void_call("rocshmem_sync_all", || {
        let rt = rt()?;
        Stats::add(&rt.stats.barriers, 1);
        rt.net.barrier(&rt.heap, rt.world().set, WORLD_SLOT)
    })
}

/// `rocshmem_sync_all` over the members of `team`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_sync(team: rocshmem_team_t) {
    void_call("rocshmem_team_sync", || {
        let rt = rt()?;
        let t = team_of(rt, team)?;
        Stats::add(&rt.stats.barriers, 1);
        rt.net.barrier(&rt.heap, t.set, t.slot)
    })
}

/// Completes every operation this PE issued.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_quiet() {
    void_call("rocshmem_quiet", || rt().map(|_| crate::rma::quiet()))
}

/// `rocshmem_quiet` for context `ctx`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_ctx_quiet(ctx: rocshmem_ctx_t) {
    void_call("rocshmem_ctx_quiet", || {
        ctx_team(rt()?, Some(ctx))?;
        crate::rma::quiet();
        Ok(())
    })
}

/// Orders this PE's puts, atomics and stores to each PE.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_fence() {
    void_call("rocshmem_fence", || rt().map(|_| crate::rma::quiet()))
}

/// `rocshmem_fence` for context `ctx`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_ctx_fence(ctx: rocshmem_ctx_t) {
    void_call("rocshmem_ctx_fence", || {
        ctx_team(rt()?, Some(ctx))?;
        crate::rma::quiet();
        Ok(())
    })
}
