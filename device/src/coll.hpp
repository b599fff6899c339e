/**
 * @file coll.hpp
 * Team collectives at wave and work-group scope: their load/store bodies, and the team's
 * transport (route.hpp) when this PE does not map every member: a transport that runs the
 * collective whole takes it (route::team_offload; RO: the proxy, with MPI), otherwise the
 * bodies move data to and from members through route.hpp's member primitives (a member only a
 * NIC reaches gets RDMA). This file names no transport.
 *
 * Over IPC every member can read and write every other member's heap, so each collective is one
 * parallel pass of the calling group's threads, closed by a team barrier:
 *  - entry barrier, where the pass reads another member's memory: broadcast pulls from the
 *    root, alltoallv reads the displacements each member published, reductions read every
 *    member's source directly and combine in registers. fcollect and alltoall have none: they
 *    only read their own source and push into the peers, and OpenSHMEM requires every member's
 *    destination to be ready before any member calls (NVSHMEM's device alltoall relies on it too);
 *  - the pass;
 *  - exit barrier: every member's data has landed, and nobody reuses a source another member
 *    still reads.
 * Small reductions over the world team push instead (reduce_push): one round of flags, no
 * barrier.
 * In-place reductions (dest == source) go through the slot's scratch in chunks, with a barrier
 * between computing a chunk and writing it back. Any other overlap of dest and source (and
 * any overlap at all for fcollect and alltoall) is refused with ROCSHMEM_ERROR before the first
 * barrier, on every member alike (the offsets are symmetric), as OpenSHMEM leaves it undefined:
 * members read each other's sources while they write their destinations.
 */
#ifndef ROCSHMEM_DEVICE_COLL_HPP
#define ROCSHMEM_DEVICE_COLL_HPP

#include "common.hpp"
#include "numeric.hpp"
#include "sync.hpp"
#include "route.hpp"

namespace rocshmem {
namespace dev {

/** The state and team of a collective call, or null if the team is not usable here. */
struct CollCtx {
  const rocshmem_device_state *s;
  const rocshmem_team_device *t;
};

ROCSHMEM_DEV_INLINE CollCtx coll_ctx(rocshmem_ctx_t ctx, rocshmem_team_t team) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  const rocshmem_team_device *t = team_entry(team);
  return CollCtx{c->state, team_ok(t) ? t : nullptr};
}

/** Whether [d, d + dn) and [s, s + sn) overlap other than by starting together (`exact_ok`) or at all. */
ROCSHMEM_DEV_INLINE bool bad_overlap(const void *d, size_t dn, const void *s, size_t sn, bool exact_ok) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(d), b = reinterpret_cast<uintptr_t>(s);
  const bool overlap = dn > 0 && sn > 0 && a < b + sn && b < a + dn;
  return overlap && !(exact_ok && a == b);
}

/** Does the team reach a member through another transport than IPC (the stream kernels then
 *  run the collective on one work-group, which routes it)? */
ROCSHMEM_DEV_INLINE bool by_remote(const CollCtx &cc) { return !route::team_mapped(cc.t); }

/** The group copies `bytes` from local `source` to symmetric `to` (this PE's view) on world PE `w`. */
template <Grp G>
ROCSHMEM_DEV_INLINE void push(rocshmem_ctx_t ctx, const CollCtx &cc, void *to, const void *source, size_t bytes, int w) {
  route::member_push<G>(ctx, cc.s, to, source, bytes, w);
}

/**
 * Runs team operation `o` on the team's transport when it runs collectives whole, and returns
 * true; false when the caller runs the load/store body.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE bool remote_coll(const CollCtx &cc, const route::TeamOp &o) {
  return route::team_offload<G>(cc.s, cc.t, o);
}

template <Grp G>
ROCSHMEM_DEV_INLINE int broadcastmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dest, const void *source,
                                     size_t bytes, int pe_root) {
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t || pe_root < 0 || pe_root >= cc.t->n_pes) return ROCSHMEM_ERROR;
  if (bad_overlap(dest, bytes, source, bytes, true)) return ROCSHMEM_ERROR;
  route::TeamOp o{route::TeamKind::broadcast, dest, source, bytes};
  o.root = pe_root;
  if (remote_coll<G>(cc, o)) return ROCSHMEM_SUCCESS;
  team_sync<G>(cc.s, cc.t, true);
  if (cc.t->my_pe != pe_root && route::member_remote(cc.s, world_pe(cc.t, pe_root))) {
    route::member_pull<G>(ctx, cc.s, dest, source, bytes, world_pe(cc.t, pe_root));
    team_sync<G>(cc.s, cc.t, true);
    return ROCSHMEM_SUCCESS;
  }
  const void *from = cc.t->my_pe == pe_root ? source : peer_ptr(cc.s, source, world_pe(cc.t, pe_root));
  if (from != dest) grp_copy<G>(dest, from, bytes);
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

template <Grp G>
ROCSHMEM_DEV_INLINE int fcollectmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dest, const void *source,
                                    size_t bytes) {
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t) return ROCSHMEM_ERROR;
  if (bad_overlap(dest, bytes * size_t(cc.t->n_pes), source, bytes, false)) return ROCSHMEM_ERROR;
  if (remote_coll<G>(cc, {route::TeamKind::fcollect, dest, source, bytes})) return ROCSHMEM_SUCCESS;
  const int n = cc.t->n_pes;
  char *slot = static_cast<char *>(dest) + size_t(cc.t->my_pe) * bytes;
  for (int k = 0; k < n; ++k) {
    // Start with the next member, so that members do not all write to the same peer at once.
    int j = (cc.t->my_pe + k) % n;
    push<G>(ctx, cc, slot, source, bytes, world_pe(cc.t, j));
  }
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

template <Grp G>
ROCSHMEM_DEV_INLINE int alltoallmem(rocshmem_ctx_t ctx, rocshmem_team_t team, void *dest, const void *source,
                                    size_t bytes) {
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t) return ROCSHMEM_ERROR;
  const size_t all = bytes * size_t(cc.t->n_pes);
  if (bad_overlap(dest, all, source, all, false)) return ROCSHMEM_ERROR;
  if (remote_coll<G>(cc, {route::TeamKind::alltoall, dest, source, bytes})) return ROCSHMEM_SUCCESS;
  const int n = cc.t->n_pes, me = cc.t->my_pe;
  for (int k = 0; k < n; ++k) {
    int j = (me + k) % n;
    char *to = static_cast<char *>(dest) + size_t(me) * bytes;
    push<G>(ctx, cc, to, static_cast<const char *>(source) + size_t(j) * bytes, bytes, world_pe(cc.t, j));
  }
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

/**
 * PE i sends source_nelems[j] elements from source + source_displs[j] to PE j, which places
 * them at dest + (its dest_displs[i]). The displacement arrays may be private memory, so each
 * member first publishes its dest_displs in its slot scratch, where the senders read them.
 */
template <class T, Grp G>
ROCSHMEM_DEV_INLINE int alltoallv(rocshmem_ctx_t ctx, rocshmem_team_t team, T *dest, const size_t *dest_nelems,
                                  const size_t *dest_displs, const T *source, const size_t *source_nelems,
                                  const size_t *source_displs) {
  (void)dest_nelems;
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t) return ROCSHMEM_ERROR;
  const route::AlltoallvArgs v{dest_nelems, dest_displs, source_nelems, source_displs};
  route::TeamOp o{route::TeamKind::alltoallv, dest, source};
  o.elem = route::elem_code<T>();
  o.v = &v;
  if (remote_coll<G>(cc, o)) return ROCSHMEM_SUCCESS;
  const int n = cc.t->n_pes, me = cc.t->my_pe;
  if (uint64_t(n) * 8 > cc.s->dev_scratch_bytes) return ROCSHMEM_ERROR;
  uint64_t *mine = reinterpret_cast<uint64_t *>(sync_slot(cc.s, cc.t->slot, cc.s->my_pe).scratch);
  for (int j = int(grp_rank<G>()); j < n; j += int(grp_size<G>())) mine[j] = dest_displs[j];
  team_sync<G>(cc.s, cc.t, true);
  for (int k = 0; k < n; ++k) {
    int j = (me + k) % n, wj = world_pe(cc.t, j);
    if (route::member_remote(cc.s, wj)) {
      // Member j's displacement for this PE, read from its scratch (at this PE's offset).
      uint64_t displ = 0;
      if (grp_rank<G>() == 0) displ = route::member_g(ctx, mine + me, wj);
      displ = grp_broadcast<G>(displ);
      route::member_push<G>(ctx, cc.s, dest + displ, source + source_displs[j], source_nelems[j] * sizeof(T), wj);
      continue;
    }
    const uint64_t *theirs = reinterpret_cast<const uint64_t *>(sync_slot(cc.s, cc.t->slot, wj).scratch);
    T *to = peer_ptr(cc.s, dest + theirs[me], wj);
    grp_copy<G>(to, source + source_displs[j], source_nelems[j] * sizeof(T));
  }
  team_sync<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

/** A team's members as world PEs: member m is start + m * stride. */
struct Members {
  int n, start, stride;
};

/**
 * out[i] = op over members m of src_m[offset + i], for i < count, split over the threads of a
 * group: this is thread `r` of `gs`.
 * Each thread takes kCombineBatch elements a pass, so that a member's loads are in flight
 * together (and the next member's are issued before the first are combined) instead of one
 * load latency per element; members are still combined in index order, so every PE gets the
 * same bits. The members come in registers (`mb`, read before the entry barrier): `out` is a
 * plain pointer, and a store through it would otherwise make the compiler read the team's
 * fields again for every element; read after the barrier, each is a trip to L2 before the
 * first source load (an acquire poll invalidates L1 on NVIDIA).
 * In the stream kernels' modules, out of line: one copy per type and op, shared by the grid's
 * reduction and the in-place one (ROCSHMEM_DEV_MODULE_OUTLINE).
 */
template <class T, Op OP>
ROCSHMEM_DEV_MODULE_OUTLINE void combine_span(const rocshmem_device_state *s, Members mb, T *out, const T *source,
                                       size_t offset, size_t count, size_t r, size_t gs) {
  using N = Num<T>;
  using C = typename N::calc;
  // 8 on GPUs; 2 on the host platform, where it buys nothing but keeps the batched path
  // tested at half the compile time of 8 (every type and op instantiates it).
  constexpr unsigned kCombineBatch = ROCSHMEM_PLATFORM_GPU ? 8 : 2;
  const int n = mb.n, start = mb.start, stride = mb.stride;
  const T *src = source + offset;
  size_t i = r;
  for (; i + (kCombineBatch - 1) * gs < count; i += kCombineBatch * gs) {
    C acc[kCombineBatch];
    const T *p0 = peer_ptr(s, src, start);
    for (unsigned u = 0; u < kCombineBatch; ++u) acc[u] = N::to(p0[i + u * gs]);
    for (int m = 1; m < n; ++m) {
      const T *pm = peer_ptr(s, src, start + m * stride);
      T v[kCombineBatch];
      for (unsigned u = 0; u < kCombineBatch; ++u) v[u] = pm[i + u * gs];
      for (unsigned u = 0; u < kCombineBatch; ++u) acc[u] = combine<OP>(acc[u], N::to(v[u]));
    }
    for (unsigned u = 0; u < kCombineBatch; ++u) out[i + u * gs] = N::from(acc[u]);
  }
  for (; i < count; i += gs) {
    C acc = N::to(peer_ptr(s, src, start)[i]);
    for (int m = 1; m < n; ++m) acc = combine<OP>(acc, N::to(peer_ptr(s, src, start + m * stride)[i]));
    out[i] = N::from(acc);
  }
}

/** combine_span over the calling group. */
template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE void combine_into(const rocshmem_device_state *s, const Members &mb, T *out, const T *source,
                                      size_t offset, size_t count) {
  combine_span<T, OP>(s, mb, out, source, offset, count, grp_rank<G>(), grp_size<G>());
}

/**
 * reduce_impl with members only a NIC reaches (route::member_remote): in chunks, each such
 * member's part of the source read into the upper half of the slot's scratch (registered) with
 * RDMA reads (a mapped member's read directly), combined in member order into the lower half,
 * written to dest after a barrier (every member has read its chunk of every source: in place
 * works).
 */
template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE void reduce_by_reads(rocshmem_ctx_t ctx, const CollCtx &cc, T *dest, const T *source, size_t block,
                                    size_t count) {
  using N = Num<T>;
  using C = typename N::calc;
  char *scratch = sync_slot(cc.s, cc.t->slot, cc.s->my_pe).scratch;
  const size_t half = cc.s->dev_scratch_bytes / 2;
  C *acc = reinterpret_cast<C *>(scratch);
  T *got = reinterpret_cast<T *>(scratch + half);
  const size_t chunk = half / (sizeof(C) > sizeof(T) ? sizeof(C) : sizeof(T));
  const unsigned r = grp_rank<G>(), gs = grp_size<G>();
  for (size_t at = 0; at < count; at += chunk) {
    const size_t len = count - at < chunk ? count - at : chunk;
    for (int m = 0; m < cc.t->n_pes; ++m) {
      const int wm = world_pe(cc.t, m);
      const T *from = peer_ptr(cc.s, source, wm) + block + at;
      if (route::member_remote(cc.s, wm)) {
        route::member_pull<G>(ctx, cc.s, got, source + block + at, len * sizeof(T), wm);
        from = got;
      }
      for (size_t i = r; i < len; i += gs) acc[i] = m == 0 ? N::to(from[i]) : combine<OP>(acc[i], N::to(from[i]));
      grp_sync<G>();  // `got` is read before the next member's data lands in it
    }
    team_sync_call<G>(cc.s, cc.t, true);
    for (size_t i = r; i < len; i += gs) dest[at + i] = N::from(acc[i]);
    grp_sync<G>();
  }
}

/**
 * Small reductions over the world team on IPC, pushed instead of pulled: each PE stores its
 * source into every other member's scratch (the world slot's, at its own index, in the half
 * the round's parity names), then one round of flags (sync_round_push), and combines from its
 * own scratch in member order (every PE gets the same bits). One synchronisation instead of the
 * pull's two barriers (entry: the sources are ready; exit: nobody reads them any more): the
 * source is read only by its own group here, and a half is written again only two rounds
 * later, which a PE cannot reach before every member has arrived at the round in between,
 * after it combined. (NVSHMEM's small reductions push too: recursive exchange.) The halves
 * have a fixed size (kPushHalfBytes, members x bytes must fit; the slot's scratch is 64 KiB,
 * src/heap/mod.rs): halves sized by the call would let a call's half overlap the previous
 * call's other half, which a member one round ahead writes while this PE still combines.
 */
constexpr size_t kPushHalfBytes = 2048;

/**
 * reduce_push's exchange, the same for every type and op (in the stream kernels' modules one copy
 * per group scope: ROCSHMEM_DEV_MODULE_OUTLINE):
 * each member's `bytes` (the j-th block of them for member j when `scatter`) stored into every
 * other member's scratch at this PE's index, one round of flags. Returns the half of this PE's
 * scratch that the round filled (member m's bytes at m * bytes).
 */
template <Grp G>
ROCSHMEM_DEV_MODULE_OUTLINE const char *push_exchange(const void *source, bool scatter, size_t bytes) {
  const rocshmem_device_fast &f = rocshmemi_device_fast;
  const int n = f.n_pes, me = f.my_pe;
  const size_t half = kPushHalfBytes;
  // The slot's scratch, after its header and flag words (sync_slot), from a heap base.
  const uint64_t scratch_off = f.world_sync_off + ROCSHMEM_DEV_SYNC_HEADER + (uint64_t(n) * 8 + 63) / 64 * 64;
  const SyncTeam st{n, me, 0, 1, f.world_sync_off};
  uint64_t parity = 0;
  sync_round_push<G>(nullptr, st, [&](uint64_t seq) {
    parity = seq & 1;
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      char *to = reinterpret_cast<char *>(f.heap_bases[j] + scratch_off + parity * half + size_t(me) * bytes);
      grp_copy<G>(to, static_cast<const char *>(source) + (scatter ? size_t(j) * bytes : 0), bytes);
    }
  });
  return reinterpret_cast<const char *>(f.heap_base + scratch_off + parity * half);
}

template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE void reduce_push(T *dest, const T *source, bool scatter, size_t count) {
  using N = Num<T>;
  using C = typename N::calc;
  const int n = rocshmemi_device_fast.n_pes, me = rocshmemi_device_fast.my_pe;
  const T *got = reinterpret_cast<const T *>(push_exchange<G>(source, scatter, count * sizeof(T)));
  const T *mine = source + (scatter ? size_t(me) * count : 0);
  const size_t r = grp_rank<G>(), gs = grp_size<G>();
  for (size_t i = r; i < count; i += gs) {
    C acc = N::to(me == 0 ? mine[i] : got[i]);
    for (int m = 1; m < n; ++m) acc = combine<OP>(acc, N::to(m == me ? mine[i] : got[size_t(m) * count + i]));
    dest[i] = N::from(acc);
  }
  grp_sync<G>();
}

/**
 * dest[i] = op over members of source[block + i], for i < nreduce, where block is 0 for a
 * reduction and my_pe * nreduce for a reduce-scatter.
 */
template <class T, Op OP, Grp G>
ROCSHMEM_DEV_OUTLINE int reduce_impl(rocshmem_ctx_t ctx, rocshmem_team_t team, T *dest, const T *source, int nreduce,
                                    bool scatter) {
#ifndef ROCSHMEM_REDUCE_WORLD_FAST_OFF
  // The world team over IPC (every PE mapped, no remote transport: n_bases == n_pes), not in
  // place: everything from the constant table, as the world barrier does (sync.hpp,
  // world_sync), so neither the context's nor the team's entry is read.
  const rocshmem_device_fast &f = rocshmemi_device_fast;
  const rocshmem_team_device *wt = team_entry(team);
  if (wt != nullptr && wt == f.world_team && f.n_bases == f.n_pes && nreduce > 0 &&
      static_cast<const void *>(dest) != static_cast<const void *>(source)) {
    const size_t count = size_t(nreduce);
    const size_t src_len = scatter ? count * size_t(f.n_pes) : count;
    if (bad_overlap(dest, count * sizeof(T), source, src_len * sizeof(T), true)) return ROCSHMEM_ERROR;
#ifndef ROCSHMEM_REDUCE_PUSH_OFF
    if (size_t(f.n_pes) * count * sizeof(T) <= kPushHalfBytes) {
      reduce_push<T, OP, G>(dest, source, scatter, count);
      return ROCSHMEM_SUCCESS;
    }
#endif
    team_sync_call<G>(nullptr, wt, true);
    combine_into<T, OP, G>(nullptr, Members{f.n_pes, 0, 1}, dest, source, scatter ? size_t(f.my_pe) * count : 0,
                           count);
    team_sync_call<G>(nullptr, wt, true);
    return ROCSHMEM_SUCCESS;
  }
#endif
  CollCtx cc = coll_ctx(ctx, team);
  if (!cc.t || nreduce < 0) return ROCSHMEM_ERROR;
  const size_t count = size_t(nreduce);
  const size_t src_len = scatter ? count * size_t(cc.t->n_pes) : count;
  if (bad_overlap(dest, count * sizeof(T), source, src_len * sizeof(T), true)) return ROCSHMEM_ERROR;
  route::TeamOp o{scatter ? route::TeamKind::reduce_scatter : route::TeamKind::reduce, dest, source, count};
  o.elem = route::elem_code<T>();
  o.op = uint8_t(OP);
  if (remote_coll<G>(cc, o)) return ROCSHMEM_SUCCESS;
  const size_t block = scatter ? size_t(cc.t->my_pe) * count : 0;
  if (route::any_member_remote(cc.s, cc.t)) {
    team_sync_call<G>(cc.s, cc.t, true);
    reduce_by_reads<T, OP, G>(ctx, cc, dest, source, block, count);
    team_sync_call<G>(cc.s, cc.t, true);
    return ROCSHMEM_SUCCESS;
  }
  const bool in_place = count > 0 && static_cast<const void *>(dest) == static_cast<const void *>(source);
  const Members mb{cc.t->n_pes, cc.t->start, cc.t->stride};  // before the barrier: see combine_into
  team_sync_call<G>(cc.s, cc.t, true);
  if (!in_place) {
    combine_into<T, OP, G>(cc.s, mb, dest, source, block, count);
  } else {
    T *scratch = reinterpret_cast<T *>(sync_slot(cc.s, cc.t->slot, cc.s->my_pe).scratch);
    const size_t chunk = cc.s->dev_scratch_bytes / sizeof(T);
    for (size_t at = 0; at < count; at += chunk) {
      size_t len = count - at < chunk ? count - at : chunk;
      combine_into<T, OP, G>(cc.s, mb, scratch, source, block + at, len);
      // Every member has read what it needs of this chunk before anyone overwrites it.
      team_sync_call<G>(cc.s, cc.t, true);
      grp_copy<G>(dest + at, scratch, len * sizeof(T));
      grp_sync<G>();
    }
  }
  team_sync_call<G>(cc.s, cc.t, true);
  return ROCSHMEM_SUCCESS;
}

template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE int reduce(rocshmem_ctx_t ctx, rocshmem_team_t team, T *dest, const T *source, int nreduce) {
  return reduce_impl<T, OP, G>(ctx, team, dest, source, nreduce, false);
}

template <class T, Op OP, Grp G>
ROCSHMEM_DEV_INLINE int reduce_scatter(rocshmem_ctx_t ctx, rocshmem_team_t team, T *dest, const T *source,
                                       int nreduce) {
  return reduce_impl<T, OP, G>(ctx, team, dest, source, nreduce, true);
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_COLL_HPP
