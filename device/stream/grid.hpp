/**
 * @file grid.hpp
 * The stream helper kernels as the core launches them (module_core.cu, module_reduce.cu,
 * host_launch.cpp): the bodies of kernels.hpp, except that the collectives
 * (alltoallmem, broadcastmem, the typed reductions) spread their data over every work-group of
 * the grid they are launched with. The core chooses the grid by size (src/gpu/stream_plan.rs,
 * `groups`): one work-group for small calls, which then run exactly the work-group bodies of
 * kernels.hpp, up to the GPU's multiprocessor count for large ones.
 *
 * A collective on G > 1 work-groups:
 *  - entry: the FIRST work-group to arrive runs the team's entry barrier (team_sync, as the
 *    one-work-group body does), then releases the others through this PE's grid slot;
 *  - every work-group moves its share: a contiguous range of the data (reductions: elements of
 *    dest, combining every member's source through peer pointers, as combine_into does;
 *    alltoall: a range of the n blocks this PE sends, in the same rotated order; broadcast: a
 *    range of the root's bytes);
 *  - exit: each work-group counts itself out; the LAST one runs the team's exit barrier.
 * No work-group waits for one that may not have started: the others wait only for the first
 * arrival, which is running, and only the last one waits at the exit. So no co-residency is
 * needed (no cooperative launch), and a GPU busy with other kernels delays the call but cannot
 * deadlock it. Each team barrier is run once per call, as by one work-group, so the team's
 * flag counts do not depend on G, and PEs may even use different grids.
 *
 * The grid slot (two words per team slot, per PE) is zero between calls: the last work-group
 * resets it before its exit barrier. So nothing is reset on the host, and a CUDA graph replays
 * the kernel as often as it likes. At most one collective per team is in flight on a PE
 * (OpenSHMEM's rule), so the calls of a team never share a slot at once.
 *
 * In-place reductions (dest overlapping source) stage through the team's scratch with a team
 * barrier per chunk: they stay on one work-group, running the device library's reduction (the
 * core launches one; if it is given more, work-group 0 does it all and the others return).
 */
#ifndef ROCSHMEM_DEVICE_STREAM_GRID_HPP
#define ROCSHMEM_DEVICE_STREAM_GRID_HPP

#include "kernels.hpp"

namespace rocshmem {
namespace dev {
namespace stream {

/** Team slots with a grid slot: ROCSHMEM_MAX_NUM_TEAMS is at most 4096. */
constexpr int kGridSlots = 4096;
/** Shares of the data start at multiples of this many bytes (whole 16-byte words). */
constexpr size_t kShareAlign = 512;

/** This PE's state of the multi-work-group collective in flight on one team. */
struct GridSlot {
  uint64_t arrive;  // low 32 bits: work-groups arrived; kReleased: the entry barrier is passed
  uint64_t depart;  // work-groups done with their share
};
constexpr uint64_t kReleased = uint64_t(1) << 32;

// One per PTX module (a module global, zero when loaded) or per process (host platform).
static ROCSHMEM_DEVICE_VAR GridSlot rocshmemi_stream_grid[kGridSlots];

/** The share of a collective's data that one work-group moves: part `rank` of `groups`. */
struct Part {
  size_t rank, groups;

  /** [lo, hi) of `total` units, in chunks that are multiples of `align` units. */
  ROCSHMEM_DEV_INLINE void range(size_t total, size_t align, size_t *lo, size_t *hi) const {
    size_t chunk = (total + groups - 1) / groups;
    chunk = (chunk + align - 1) / align * align;
    const size_t l = rank * chunk;
    *lo = l < total ? l : total;
    *hi = total - *lo < chunk ? total : *lo + chunk;
  }
};

/**
 * Entry barrier, `body(part)` (this work-group's share), exit barrier: see the top of the file.
 * On one work-group (or a team slot without a grid slot: then work-group 0 does it all) this
 * is exactly the work-group body of the device library's collectives.
 */
template <class Body>
ROCSHMEM_DEV_INLINE void collective(const CollCtx &cc, Body body) {
  using namespace platform;
  const bool spread = grid_size() > 1 && cc.t->slot >= 0 && cc.t->slot < kGridSlots;
  if (!spread && block_id() != 0) return;
  GridSlot *g = rocshmemi_stream_grid + (spread ? cc.t->slot : 0);
  bool first = true;
  if (spread) {
    uint64_t ticket = 0;
    if (leader()) ticket = atomic_fetch_add<Scope::system, Order::acq_rel>(&g->arrive, uint64_t(1));
    ticket = wg_broadcast(ticket, 0);
    first = (ticket & (kReleased - 1)) == 0;
    if (!first && (ticket & kReleased) == 0) {
      if (leader()) (void)poll_until(&g->arrive, [](uint64_t v) { return (v & kReleased) != 0; });
      wg_barrier();
    }
  }
  if (first) {
    // The team's entry barrier, once for the whole grid (its flags are acquired at system
    // scope; the release below passes them on to the other work-groups).
    team_sync_call<Grp::wg>(cc.s, cc.t, true);
    if (spread && leader()) atomic_add<Scope::system, Order::release>(&g->arrive, kReleased);
  }
  body(spread ? Part{block_id(), grid_size()} : Part{0, 1});
  if (spread) {
    wg_barrier();  // this work-group's stores are done before its leader counts it out (a release)
    uint64_t done = 0;
    if (leader()) done = atomic_fetch_add<Scope::system, Order::acq_rel>(&g->depart, uint64_t(1));
    done = wg_broadcast(done, 0);
    if (done + 1 < grid_size()) return;
    // Last: every work-group has passed the entry (nobody reads the slot again) and done its
    // share (acquired above; the exit barrier's release at system scope passes it on).
    if (leader()) {
      atomic_store<Scope::device, Order::relaxed>(&g->arrive, uint64_t(0));
      atomic_store<Scope::device, Order::relaxed>(&g->depart, uint64_t(0));
    }
  }
  team_sync_call<Grp::wg>(cc.s, cc.t, true);
}

/** The kernels the core launches: kernels.hpp's bodies, the collectives over the grid. */
namespace grid {

using stream::k_amo;
using stream::k_barrier;
using stream::k_barrier_all;
using stream::k_getmem;
using stream::k_putmem;
using stream::k_putmem_signal;
using stream::k_quiet;
using stream::k_signal_add;
using stream::k_signal_set;
using stream::k_signal_wait_until;
using stream::k_sync_all;
using stream::k_team_sync;

/** A member only a remote transport reaches (RO: the proxy): work-group 0 hands the whole
 *  collective to it (the one-work-group body routes it there); the others have nothing to move. */
ROCSHMEM_DEV_INLINE void on_proxy(const Args &a, void (*body)(const Args &)) {
  if (platform::block_id() == 0) body(a);
}

ROCSHMEM_DEV_INLINE void k_alltoallmem(const Args &a) {
  const CollCtx cc = coll_ctx(ctx_of(a), a.team);
  if (!cc.t) return;
  if (by_remote(cc)) return on_proxy(a, stream::k_alltoallmem);
  const size_t bytes = size_t(a.count);
  const int n = cc.t->n_pes, me = cc.t->my_pe;
  char *to = static_cast<char *>(a.dest) + size_t(me) * bytes;
  const char *source = static_cast<const char *>(a.source);
  collective(cc, [&](Part part) {
    // The n blocks this PE sends, one after the other in alltoallmem's rotated order (the k-th
    // goes to member me + k, so that members do not all write to the same peer at once).
    size_t lo, hi;
    part.range(bytes * size_t(n), kShareAlign, &lo, &hi);
    for (size_t x = lo; x < hi;) {
      const size_t k = x / bytes, off = x % bytes, len = bytes - off < hi - x ? bytes - off : hi - x;
      const int j = int((size_t(me) + k) % size_t(n));
      grp_copy<Grp::wg>(peer_ptr(cc.s, to + off, world_pe(cc.t, j)), source + size_t(j) * bytes + off, len);
      x += len;
    }
  });
}

ROCSHMEM_DEV_INLINE void k_broadcastmem(const Args &a) {
  const CollCtx cc = coll_ctx(ctx_of(a), a.team);
  if (!cc.t || a.pe < 0 || a.pe >= cc.t->n_pes) return;
  if (by_remote(cc)) return on_proxy(a, stream::k_broadcastmem);
  char *dest = static_cast<char *>(a.dest);
  const char *from = cc.t->my_pe == a.pe ? static_cast<const char *>(a.source)
                                         : peer_ptr(cc.s, static_cast<const char *>(a.source), world_pe(cc.t, a.pe));
  collective(cc, [&](Part part) {
    if (from == dest) return;
    size_t lo, hi;
    part.range(size_t(a.count), kShareAlign, &lo, &hi);
    grp_copy<Grp::wg>(dest + lo, from + lo, hi - lo);
  });
}

template <class T, ROCSHMEM_OP OP>
ROCSHMEM_DEV_INLINE void k_reduce(const Args &a) {
  const CollCtx cc = coll_ctx(ctx_of(a), a.team);
  if (!cc.t) return;
  if (by_remote(cc)) return on_proxy(a, stream::k_reduce<T, OP>);
  T *dest = static_cast<T *>(a.dest);
  const T *source = static_cast<const T *>(a.source);
  const size_t count = size_t(a.count);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dest), s = reinterpret_cast<uintptr_t>(source);
  if (d < s + count * sizeof(T) && s < d + count * sizeof(T)) {
    // In place (the core refuses a partial overlap): the device library's reduction, which
    // stages through the team's scratch, on one work-group.
    if (platform::block_id() == 0) stream::k_reduce<T, OP>(a);
    return;
  }
  const Members mb{cc.t->n_pes, cc.t->start, cc.t->stride};  // before the entry barrier (combine_into)
  collective(cc, [&](Part part) {
    size_t lo, hi;
    part.range(count, kShareAlign / sizeof(T), &lo, &hi);
    combine_into<T, static_cast<Op>(OP), Grp::wg>(cc.s, mb, dest + lo, source, lo, hi - lo);
  });
}

}  // namespace grid
}  // namespace stream
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_STREAM_GRID_HPP
