/**
 * @file sync.hpp
 * Barrier and sync over a team, at thread, wave and work-group scope.
 *
 * One flag word per (member, slot) on every PE: to arrive, a member adds one to its own flag
 * word on every other member, then waits until every member's word on this PE has reached
 * the slot's sequence number (counted locally). That is one round of independent stores (the
 * group's threads split the peers), not log(P) dependent rounds: on NVLink-class links a
 * round trip costs more than a few extra stores. Flags only grow, so nothing is reset between
 * collectives, and work-groups that enter the same barrier at once (each counted) cannot
 * make a flag go backwards.
 *
 * barrier = quiet + sync: its flag updates are releases at system scope, so the peers see this
 * PE's earlier stores when they pass. sync orders nothing and uses relaxed updates.
 */
#ifndef ROCSHMEM_DEVICE_SYNC_HPP
#define ROCSHMEM_DEVICE_SYNC_HPP

#include "common.hpp"
#include "ro.hpp"

namespace rocshmem {
namespace dev {

template <Grp G>
ROCSHMEM_DEV_INLINE void team_sync(const rocshmem_device_state *s, const rocshmem_team_device *t, bool release) {
  using namespace platform;
  if (ro::active()) {
    // Members only the proxy reaches: an MPI barrier once the earlier commands completed.
    if (t->ro_remote > 0) {
      return ro::team_op<G>(s, t, release ? ROCSHMEM_RO_BARRIER : ROCSHMEM_RO_SYNC, nullptr, nullptr, 0);
    }
    // All mapped: the load/store barrier below, once this group's commands have completed.
    grp_sync<G>();
    if (grp_rank<G>() == 0) ro::order(s, true);
  }
  grp_sync<G>();  // the group's earlier stores are visible to the threads that signal
  const int n = t->n_pes, me = t->my_pe;
  SyncSlot mine = sync_slot(s, t->slot, s->my_pe);
  uint64_t seq = 0;
  if (grp_rank<G>() == 0) seq = atomic_fetch_add<Scope::device, Order::relaxed>(mine.seq, uint64_t(1)) + 1;
  seq = grp_broadcast<G>(seq);
  const unsigned r = grp_rank<G>(), gs = grp_size<G>();
  for (int i = int(r); i < n; i += int(gs)) {
    if (i == me) continue;
    uint64_t *flag = sync_slot(s, t->slot, world_pe(t, i)).flags + me;
    // No-return adds: the peers' flags need not round-trip before this PE starts waiting.
    if (release) atomic_add<Scope::system, Order::release>(flag, uint64_t(1));
    else atomic_add<Scope::system, Order::relaxed>(flag, uint64_t(1));
  }
  for (int i = int(r); i < n; i += int(gs)) {
    if (i != me) poll_until(mine.flags + i, [=](uint64_t v) { return v >= seq; });
  }
  grp_sync<G>();
}

/** The world team of a context's state (slot 0), as a handle. */
ROCSHMEM_DEV_INLINE rocshmem_team_t world_team(rocshmem_ctx_t ctx) {
  return reinterpret_cast<rocshmem_team_t>(ctx_entry(ctx)->state->teams);
}

/** Team barrier; on ROCSHMEM_TEAM_INVALID (a PE outside the team) it does nothing. */
template <Grp G>
ROCSHMEM_DEV_INLINE void barrier(rocshmem_ctx_t ctx, rocshmem_team_t team) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  const rocshmem_team_device *t = team_entry(team);
  if (team_ok(t)) team_sync<G>(c->state, t, true);
}

/** Team sync (no completion of earlier stores); a no-op on ROCSHMEM_TEAM_INVALID. */
template <Grp G>
ROCSHMEM_DEV_INLINE void sync(rocshmem_ctx_t ctx, rocshmem_team_t team) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  const rocshmem_team_device *t = team_entry(team);
  if (team_ok(t)) team_sync<G>(c->state, t, false);
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_SYNC_HPP
