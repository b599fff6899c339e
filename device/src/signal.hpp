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
#include "route.hpp"
#include "wait.hpp"

namespace rocshmem {
namespace dev {

/** Applies `sig_op` (ROCSHMEM_SIGNAL_SET or _ADD) to the signal word `sig` (a peer's address). */
ROCSHMEM_DEV_INLINE void signal_at(uint64_t *sig, uint64_t signal, int sig_op) {
  using namespace platform;
  if (sig_op == ROCSHMEM_SIGNAL_ADD) atomic_add<Scope::system, Order::release>(sig, signal);
  else atomic_store<Scope::system, Order::release>(sig, signal);
}

template <Grp G>
ROCSHMEM_DEV_INLINE void putmem_signal(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  route::put_signal<G>(
      ctx, dest, source, bytes, sig_addr, signal, sig_op, pe, [=] { grp_copy<G>(ctx_peer_ptr(ctx, dest, pe), source, bytes); },
      [=] {
        grp_sync<G>();
        if (grp_rank<G>() == 0) signal_at(ctx_peer_ptr(ctx, sig_addr, pe), signal, sig_op);
      });
}

template <class T, Grp G>
ROCSHMEM_DEV_INLINE void put_signal(rocshmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe) {
  putmem_signal<G>(ctx, dest, source, nelems * sizeof(T), sig_addr, signal, sig_op, pe);
}

ROCSHMEM_DEV_INLINE void signal_op(rocshmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
  route::signal_op(ctx, sig_addr, signal, sig_op, pe, [=] { signal_at(ctx_peer_ptr(ctx, sig_addr, pe), signal, sig_op); });
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
