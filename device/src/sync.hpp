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
#include "route.hpp"

namespace rocshmem {
namespace dev {

/** What a barrier needs of a team: its members, and where its synchronisation slot lies. */
struct SyncTeam {
  int n, me;          // members, and this PE's index among them
  int start, stride;  // member i is world PE start + i * stride
  uint64_t off;       // bytes from a heap base to the team's synchronisation slot
};

/**
 * One barrier round over `t` (see the file comment); `release`: the flag updates are releases
 * at system scope (barrier), else relaxed (sync). `s` is read only for PEs beyond the constant
 * table (ROCSHMEM_FAST_PES), so the world team's barrier passes none.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE void sync_round(const rocshmem_device_state *s, const SyncTeam &t, bool release) {
  using namespace platform;
  grp_sync<G>();  // the group's earlier stores are visible to the threads that signal
  const unsigned r = grp_rank<G>(), gs = grp_size<G>();
  // Arrive first: the flag updates depend on nothing but the addresses, so they leave before
  // this PE's sequence number comes back (an atomic round trip to L2) and the wave or group
  // exchanges it. Flags and sequence numbers only count, so the order between them is free.
  for (int i = int(r); i < t.n; i += int(gs)) {
    if (i == t.me) continue;
    if (s != nullptr && route::member_remote(s, t.start + i * t.stride)) {
      // A member only a NIC reaches: a NIC atomic on its flag (at this PE's offset of the slot).
      // (Out of line, like every transport path: the IPC barrier stays small.)
      route::member_signal(s, t.start + i * t.stride,
                           reinterpret_cast<uint64_t *>(local_heap_base(s) + t.off + ROCSHMEM_DEV_SYNC_HEADER) + t.me);
      continue;
    }
    uint64_t *flag =
        reinterpret_cast<uint64_t *>(heap_base_of(s, t.start + i * t.stride) + t.off + ROCSHMEM_DEV_SYNC_HEADER) + t.me;
    // No-return adds: the peers' flags need not round-trip before this PE starts waiting.
    if (release) atomic_add<Scope::system, Order::release>(flag, uint64_t(1));
    else atomic_add<Scope::system, Order::relaxed>(flag, uint64_t(1));
  }
  uint64_t *mine = reinterpret_cast<uint64_t *>(local_heap_base(s) + t.off);
  uint64_t seq = 0;
  if (r == 0) seq = atomic_fetch_add<Scope::device, Order::relaxed>(mine, uint64_t(1)) + 1;
  seq = grp_broadcast<G>(seq);
  uint64_t *flags = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(mine) + ROCSHMEM_DEV_SYNC_HEADER);
  for (int i = int(r); i < t.n; i += int(gs)) {
    if (i != t.me) poll_until(flags + i, [=](uint64_t v) { return v >= seq; });
  }
  grp_sync<G>();
}

/**
 * A round that carries data (reduce_push, coll.hpp): this round's sequence number first, then
 * `push(seq)` (the group's stores into the peers), then the arrivals as releases at system
 * scope, so that a member that has seen this PE's flag reach `seq` also sees what it pushed.
 * The arrivals wait for the sequence number here, unlike sync_round's, because what is pushed
 * depends on it. The flag addressing and the wait loop repeat sync_round's (about eight
 * lines): this is the form measured on one H100 (docs/benchmarks-nvidia.md, the pushed small
 * reductions); a helper shared by both rounds was not measured.
 */
template <Grp G, class Push>
ROCSHMEM_DEV_INLINE void sync_round_push(const rocshmem_device_state *s, const SyncTeam &t, Push push) {
  using namespace platform;
  grp_sync<G>();  // the group's earlier stores (the source) are visible to every pushing thread
  const unsigned r = grp_rank<G>(), gs = grp_size<G>();
  uint64_t *mine = reinterpret_cast<uint64_t *>(local_heap_base(s) + t.off);
  uint64_t seq = 0;
  if (r == 0) seq = atomic_fetch_add<Scope::device, Order::relaxed>(mine, uint64_t(1)) + 1;
  seq = grp_broadcast<G>(seq);
  push(seq);
  grp_sync<G>();  // every thread's pushes are issued before any thread's release
  for (int i = int(r); i < t.n; i += int(gs)) {
    if (i == t.me) continue;
    uint64_t *flag =
        reinterpret_cast<uint64_t *>(heap_base_of(s, t.start + i * t.stride) + t.off + ROCSHMEM_DEV_SYNC_HEADER) + t.me;
    atomic_add<Scope::system, Order::release>(flag, uint64_t(1));
  }
  uint64_t *flags = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(mine) + ROCSHMEM_DEV_SYNC_HEADER);
  for (int i = int(r); i < t.n; i += int(gs)) {
    if (i != t.me) poll_until(flags + i, [=](uint64_t v) { return v >= seq; });
  }
  grp_sync<G>();
}

/**
 * The world team's barrier from the constant table alone (no entry, state or heap-base
 * loads), when it holds every PE and no remote transport is active; false if it cannot.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE bool world_sync(const rocshmem_team_device *t, bool release) {
  const rocshmem_device_fast &f = rocshmemi_device_fast;
  // n_bases is 0 while a remote transport is active (src/runtime/device.rs).
  if (t == nullptr || t != f.world_team || f.n_bases != f.n_pes) return false;
  sync_round<G>(nullptr, SyncTeam{f.n_pes, f.my_pe, 0, 1, f.world_sync_off}, release);
  return true;
}

/** team_sync for a team that is not on world_sync's path. */
template <Grp G>
ROCSHMEM_DEV_INLINE void team_sync_entry(const rocshmem_device_state *s, const rocshmem_team_device *t, bool release) {
  // Members only a transport that runs barriers whole reaches: its barrier (RO: MPI's, once
  // the earlier commands completed).
  if (route::team_offload<G>(s, t, {release ? route::TeamKind::barrier : route::TeamKind::sync})) return;
  // All mapped, or members only a NIC reaches (the barrier below, those signalled with NIC
  // atomics): once this group's remote operations completed.
  route::complete<G>(s);
  const SyncTeam st{t->n_pes, t->my_pe, t->start, t->stride,
                    s->dev_sync_off + uint64_t(t->slot) * s->dev_sync_slot_bytes};
  sync_round<G>(s, st, release);
}

template <Grp G>
ROCSHMEM_DEV_INLINE void team_sync(const rocshmem_device_state *s, const rocshmem_team_device *t, bool release) {
  if (!world_sync<G>(t, release)) team_sync_entry<G>(s, t, release);
}

/**
 * team_sync kept out of line: the barriers inside a collective's body that is itself large
 * (a reduction's algorithm, the stream kernels), one copy per group scope instead of one per
 * call site. The barrier and sync calls of the API keep theirs inline.
 */
template <Grp G>
ROCSHMEM_DEV_OUTLINE void team_sync_call(const rocshmem_device_state *s, const rocshmem_team_device *t, bool release) {
  team_sync<G>(s, t, release);
}

/** The world team of a context's state (slot 0), as a handle. */
ROCSHMEM_DEV_INLINE rocshmem_team_t world_team(rocshmem_ctx_t ctx) {
  // Every context's state is this PE's one state, whose world team the constant table names.
  if (rocshmemi_device_fast.world_team != nullptr) return reinterpret_cast<rocshmem_team_t>(rocshmemi_device_fast.world_team);
  return reinterpret_cast<rocshmem_team_t>(ctx_entry(ctx)->state->teams);
}

/** Team barrier; on ROCSHMEM_TEAM_INVALID (a PE outside the team) it does nothing. */
template <Grp G>
ROCSHMEM_DEV_INLINE void barrier(rocshmem_ctx_t ctx, rocshmem_team_t team) {
  const rocshmem_team_device *t = team_entry(team);
  if (world_sync<G>(t, true)) return;
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  if (team_ok(t)) team_sync_entry<G>(c->state, t, true);
}

/** Team sync (no completion of earlier stores); a no-op on ROCSHMEM_TEAM_INVALID. */
template <Grp G>
ROCSHMEM_DEV_INLINE void sync(rocshmem_ctx_t ctx, rocshmem_team_t team) {
  const rocshmem_team_device *t = team_entry(team);
  if (world_sync<G>(t, false)) return;
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  if (team_ok(t)) team_sync_entry<G>(c->state, t, false);
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_SYNC_HPP
