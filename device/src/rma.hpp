/**
 * @file rma.hpp
 * Put, get, p, g, fences and quiet over load/store to the peers' mapped heaps (IPC).
 *
 * On load/store transports a blocking put is complete (the source reusable) once the stores
 * are issued, so blocking and non-blocking forms share one path; `quiet` makes them visible
 * at system scope, `fence` orders them. Group forms split the copy over the group's threads
 * and sync at the end, so that no thread returns while another still reads the source.
 */
#ifndef ROCSHMEM_DEVICE_RMA_HPP
#define ROCSHMEM_DEVICE_RMA_HPP

#include "common.hpp"
#include "gda/route.hpp"
#include "ro.hpp"

namespace rocshmem {
namespace dev {

template <Grp G>
ROCSHMEM_DEV_INLINE void putmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int pe) {
  int world;
  if (ro::active() && ro::remote(ctx, pe, &world)) return ro::putmem<G>(ctx, dest, source, bytes, world);
  if (gda::active() && gda::remote(ctx, pe, &world)) return gda::putmem<G>(ctx, dest, source, bytes, world);
  grp_copy<G>(ctx_peer_ptr(ctx, dest, pe), source, bytes);
  grp_sync<G>();
}

template <Grp G>
ROCSHMEM_DEV_INLINE void getmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int pe) {
  int world;
  if (ro::active() && ro::remote(ctx, pe, &world)) return ro::getmem<G>(ctx, dest, source, bytes, world);
  if (gda::active() && gda::remote(ctx, pe, &world)) return gda::getmem<G>(ctx, dest, source, bytes, world);
  grp_copy<G>(dest, ctx_peer_ptr(ctx, source, pe), bytes);
  grp_sync<G>();
}

template <class T, Grp G>
ROCSHMEM_DEV_INLINE void put(rocshmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe) {
  putmem<G>(ctx, dest, source, nelems * sizeof(T), pe);
}

template <class T, Grp G>
ROCSHMEM_DEV_INLINE void get(rocshmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe) {
  getmem<G>(ctx, dest, source, nelems * sizeof(T), pe);
}

template <class T>
ROCSHMEM_DEV_INLINE void p(rocshmem_ctx_t ctx, T *dest, T value, int pe) {
  int world;
  if (ro::active() && ro::remote(ctx, pe, &world)) return ro::p(ctx, dest, value, world);
  if (gda::active() && gda::remote(ctx, pe, &world)) return gda::p(ctx, dest, value, world);
  *ctx_peer_ptr(ctx, dest, pe) = value;
}

template <class T>
ROCSHMEM_DEV_INLINE T g(rocshmem_ctx_t ctx, const T *source, int pe) {
  int world;
  if (ro::active() && ro::remote(ctx, pe, &world)) return ro::g(ctx, source, world);
  if (gda::active() && gda::remote(ctx, pe, &world)) return gda::g(ctx, source, world);
  // volatile: the value may change under us; every g must read the peer again.
  return volatile_load(ctx_peer_ptr(ctx, source, pe));
}

/** Orders this PE's earlier puts, AMOs and signals to each peer before later ones. */
/** RO: later commands of this queue run after the earlier ones complete. */
ROCSHMEM_DEV_INLINE void fence(rocshmem_ctx_t ctx) {
  platform::fence_system();
  if (ro::active()) ro::order(ro::state(ctx), false);
}

/** Completes this PE's earlier puts, AMOs and signals (visible at system scope). */
/** RO: the proxy has completed every earlier command when this returns. */
ROCSHMEM_DEV_INLINE void quiet(rocshmem_ctx_t ctx) {
  platform::fence_system();
  if (ro::active()) ro::order(ro::state(ctx), true);
  if (gda::active()) gda::quiet_all(ctx);
}

/** Per-PE forms: load/store ordering is not per destination, so they are the whole fence/quiet. */
ROCSHMEM_DEV_INLINE void fence_pe(rocshmem_ctx_t ctx, int) { fence(ctx); }

ROCSHMEM_DEV_INLINE void pe_quiet(rocshmem_ctx_t ctx, const int *, size_t) { quiet(ctx); }

ROCSHMEM_DEV_INLINE void threadfence_system(rocshmem_ctx_t) { platform::fence_system(); }

ROCSHMEM_DEV_INLINE void *ptr(const void *dest, int pe) {
  const rocshmem_device_state *s = state_of(default_ctx());
  if (pe < 0 || pe >= s->n_pes || !in_heap(s, dest, 1) || !ro::mapped(s, pe)) return nullptr;
  return peer_ptr(s, const_cast<void *>(dest), pe);
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_RMA_HPP
