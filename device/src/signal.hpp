/**
 * @file signal.hpp
 * Put-with-signal and the signal word operations.
 *
 * The payload and the signal are separate stores, so the signal is a release at system
 * scope: the peer that sees the signal sees the data. In group forms every thread stores its
 * share, the group syncs (which makes those stores visible to its leader), and the leader's
 * release store carries them all (release is cumulative).
 */
#ifndef ROCSHMEM_DEVICE_SIGNAL_HPP
#define ROCSHMEM_DEVICE_SIGNAL_HPP

#include "common.hpp"
#include "wait.hpp"

namespace rocshmem {
namespace dev {

/** Applies `sig_op` (ROCSHMEM_SIGNAL_SET or _ADD) to the signal word at world PE `wpe`. */
ROCSHMEM_DEV_INLINE void signal_world(const rocshmem_device_state *s, uint64_t *sig_addr, uint64_t signal, int sig_op,
                                      int wpe) {
  using namespace platform;
  uint64_t *sig = peer_ptr(s, sig_addr, wpe);
  if (sig_op == ROCSHMEM_SIGNAL_ADD) atomic_fetch_add<Scope::system, Order::release>(sig, signal);
  else atomic_store<Scope::system, Order::release>(sig, signal);
}

template <Grp G>
ROCSHMEM_DEV_INLINE void putmem_signal(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  const int wpe = ctx_world_pe(c, pe);
  grp_copy<G>(peer_ptr(c->state, dest, wpe), source, bytes);
  grp_sync<G>();
  if (grp_rank<G>() == 0) signal_world(c->state, sig_addr, signal, sig_op, wpe);
}

template <class T, Grp G>
ROCSHMEM_DEV_INLINE void put_signal(rocshmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe) {
  putmem_signal<G>(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);
}

ROCSHMEM_DEV_INLINE void signal_op(rocshmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  signal_world(c->state, sig_addr, signal, sig_op, ctx_world_pe(c, pe));
}

/** Reads a local signal word (acquire): later reads see what the signaller wrote before. */
template <Grp G>
ROCSHMEM_DEV_INLINE uint64_t signal_fetch(const uint64_t *sig_addr) {
  uint64_t v = 0;
  if (grp_rank<G>() == 0) v = platform::atomic_load<Scope::system, Order::acquire>(const_cast<uint64_t *>(sig_addr));
  // Every thread of the group gets the same value.
  return grp_broadcast<G>(v);
}

ROCSHMEM_DEV_INLINE uint64_t signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
  return poll_until(sig_addr, [=](uint64_t v) { return compare(v, cmp, cmp_value); });
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_SIGNAL_HPP
