/**
 * @file rma.hpp
 * Put, get, p, g, fences and quiet: their IPC bodies (load/store to the peers' mapped heaps),
 * each given to its family's dispatch (route.hpp), which runs it or a remote transport.
 *
 * On load/store transports a blocking put is complete (the source reusable) once the stores
 * are issued, so blocking and non-blocking forms share one path; `quiet` makes them visible
 * at system scope, `fence` orders them. Group forms split the copy over the group's threads
 * and sync at the end, so that no thread returns while another still reads the source.
 */
#ifndef ROCSHMEM_DEVICE_RMA_HPP
#define ROCSHMEM_DEVICE_RMA_HPP

#include "common.hpp"
#include "route.hpp"

namespace rocshmem {
namespace dev {

template <Grp G>
ROCSHMEM_DEV_INLINE void putmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int pe) {
  route::rma<G>(ctx, route::Rma::put, dest, source, bytes, pe, [=] {
    grp_copy<G>(ctx_peer_ptr(ctx, dest, pe), source, bytes);
    grp_sync<G>();
  });
}

template <Grp G>
ROCSHMEM_DEV_INLINE void getmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int pe) {
  route::rma<G>(ctx, route::Rma::get, dest, source, bytes, pe, [=] {
    grp_copy<G>(dest, ctx_peer_ptr(ctx, source, pe), bytes);
    grp_sync<G>();
  });
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
  route::p(ctx, dest, value, pe, [=] { *ctx_peer_ptr(ctx, dest, pe) = value; });
}

template <class T>
ROCSHMEM_DEV_INLINE T g(rocshmem_ctx_t ctx, const T *source, int pe) {
  // volatile: the value may change under us; every g must read the peer again.
  return route::g(ctx, source, pe, [=] { return volatile_load(ctx_peer_ptr(ctx, source, pe)); });
}

/** Orders this PE's earlier puts, AMOs and signals to each peer before later ones. */
/** RO: later commands of this queue run after the earlier ones complete. */
ROCSHMEM_DEV_INLINE void fence(rocshmem_ctx_t ctx) {
  platform::fence_system();
  route::order(ctx, false);
}

/** Completes this PE's earlier puts, AMOs and signals (visible at system scope). */
/** RO: the proxy has completed every earlier command when this returns. */
ROCSHMEM_DEV_INLINE void quiet(rocshmem_ctx_t ctx) {
  platform::fence_system();
  route::order(ctx, true);
}

/** Per-PE forms: load/store ordering is not per destination, so they are the whole fence/quiet. */
ROCSHMEM_DEV_INLINE void fence_pe(rocshmem_ctx_t ctx, int) { fence(ctx); }

ROCSHMEM_DEV_INLINE void pe_quiet(rocshmem_ctx_t ctx, const int *, size_t) { quiet(ctx); }

ROCSHMEM_DEV_INLINE void threadfence_system(rocshmem_ctx_t) { platform::fence_system(); }

ROCSHMEM_DEV_INLINE void *ptr(const void *dest, int pe) {
  const rocshmem_device_state *s = state_of(default_ctx());
  if (pe < 0 || pe >= s->n_pes || !in_heap(s, dest, 1) || !pe_mapped(s, pe)) return nullptr;
  return peer_ptr(s, const_cast<void *>(dest), pe);
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_RMA_HPP
