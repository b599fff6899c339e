/**
 * @file route.hpp
 * The device operations of the GDA backend (docs/gda.md): what the device dispatch of each
 * family (device/src/route.hpp) calls for a PE whose route is ROCSHMEM_ROUTE_GDA. Every
 * function takes a world PE; the queue pairs and the registered fetch words are in the device
 * table (`rocshmem_device_state::gda`, `rocshmem_gda_device` in device_abi.h), built by the
 * core (src/transport/gda/host.rs).
 *
 * - RMA: one thread of the group posts the whole transfer (one reservation, one doorbell; a
 *   transfer above the NIC's maximum message is split), the others wait at the group sync.
 *   Puts and gets complete before returning (the source is reusable, the data has arrived);
 *   `p` is an inline write and does not wait (its data is in the WQE).
 * - Sources and destinations above `inline_max` must be registered (the symmetric heap): the
 *   NIC reads and writes them itself. Anything else completes with a local protection error,
 *   which the queue pair keeps; the host reports it in one line at its next quiet, barrier or
 *   finalize (no bounce buffer on the device side).
 * - Atomics: fetching ones receive their value in a claimed fetch word (registered) and wait;
 *   the others do not wait. `g` is an RDMA read into a fetch word.
 * - quiet: waits until every queue pair this PE posted to has completed what was published.
 *   fence: nothing (one RC queue pair per peer executes in order).
 * Errors: every operation leaves a failed queue pair's status in the queue pair (`error`),
 * which the host turns into the project's one-line error; device calls return quietly.
 */
#ifndef ROCSHMEM_DEVICE_GDA_ROUTE_HPP
#define ROCSHMEM_DEVICE_GDA_ROUTE_HPP

#include "../common.hpp"
#include "qp.hpp"

namespace rocshmem {
namespace dev {
namespace gda {

ROCSHMEM_DEV_INLINE const rocshmem_gda_device *table(rocshmem_ctx_t ctx) { return ctx_entry(ctx)->state->gda; }

/** The queue pair to world PE `world` (the first of its `qps_per_pe`). */
ROCSHMEM_DEV_INLINE Qp *qp_to(const rocshmem_gda_device *t, int world) {
  return static_cast<Qp *>(t->qps) + size_t(world) * size_t(t->qps_per_pe);
}

/** A fetch word claimed for the calling thread (probing from a slot spread by thread). */
ROCSHMEM_DEV_INLINE uint32_t claim_fetch(const rocshmem_gda_device *t) {
  const uint32_t mask = t->n_fetch - 1;
  uint32_t i = (platform::block_id() * platform::block_size() + platform::thread_id()) * 2654435761u;
  for (uint32_t round = 0;; ++round, ++i) {
    i &= mask;
    if (platform::atomic_cas<Scope::device, Order::acquire>(t->fetch_busy + i, 0u, 1u) == 0u) return i;
    if ((round & mask) == mask) platform::backoff(round / (mask + 1));
  }
}

ROCSHMEM_DEV_INLINE void release_fetch(const rocshmem_gda_device *t, uint32_t i) {
  platform::atomic_store<Scope::device, Order::release>(t->fetch_busy + i, 0u);
}

/**
 * A put (`put`: `source` local, `dest` symmetric) or get (`source` symmetric, `dest` local and
 * registered) of `bytes` with world PE `world`, complete on return.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE void rma(rocshmem_ctx_t ctx, bool put, void *dest, const void *source, size_t bytes, int world) {
  grp_sync<G>();  // the group's stores into the source are done
  if (grp_rank<G>() == 0 && bytes > 0) {
    Qp *qp = qp_to(table(ctx), world);
    uint64_t end = 0;
    const uint32_t s = put ? put_nbi(qp, dest, source, bytes, &end) : get_nbi(qp, dest, source, bytes, &end);
    if (s == 0 && end != 0) (void)wait_done(qp, end);
  }
  grp_sync<G>();
}

template <Grp G>
ROCSHMEM_DEV_INLINE void putmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int world) {
  rma<G>(ctx, true, dest, source, bytes, world);
}

template <Grp G>
ROCSHMEM_DEV_INLINE void getmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes, int world) {
  rma<G>(ctx, false, dest, source, bytes, world);
}

template <class T>
ROCSHMEM_DEV_INLINE void p(rocshmem_ctx_t ctx, T *dest, T value, int world) {
  uint64_t end = 0;
  (void)put_nbi(qp_to(table(ctx), world), dest, &value, sizeof(T), &end);
}

template <class T>
ROCSHMEM_DEV_INLINE T g(rocshmem_ctx_t ctx, const T *source, int world) {
  const rocshmem_gda_device *t = table(ctx);
  Qp *qp = qp_to(t, world);
  const uint32_t i = claim_fetch(t);
  uint64_t end = 0;
  uint64_t *slot = t->fetch + i;
  T v{};
  if (get_nbi(qp, slot, source, sizeof(T), &end, t->fetch_lkey) == 0 && wait_done(qp, end) == 0) {
    const uint64_t w = platform::atomic_load<Scope::system, Order::relaxed>(slot);
    __builtin_memcpy(&v, &w, sizeof(T));
  }
  release_fetch(t, i);
  return v;
}

/**
 * An atomic in the order of dev::AmoOp / ROCSHMEM_RO_AMO_* (fetch, set, swap, compare_swap,
 * fetch_inc, inc, fetch_add, add, fetch_and, and, fetch_or, or, fetch_xor, xor) on the
 * `size`-byte word at symmetric `dest` of world PE `world`; returns the old value of fetching ones.
 */
ROCSHMEM_DEV_INLINE uint64_t amo(rocshmem_ctx_t ctx, uint8_t op, void *dest, uint64_t value, uint64_t cond,
                                 uint32_t size, int world, bool fetching) {
  static constexpr AmoOp kOps[14] = {AmoOp::fetch,     AmoOp::set,  AmoOp::swap,      AmoOp::cswap, AmoOp::fetch_add,
                                     AmoOp::add,       AmoOp::fetch_add, AmoOp::add,  AmoOp::fetch_and, AmoOp::and_,
                                     AmoOp::fetch_or,  AmoOp::or_,  AmoOp::fetch_xor, AmoOp::xor_};
  if (op == 4 || op == 5) value = 1;  // fetch_inc, inc
  const rocshmem_gda_device *t = table(ctx);
  Qp *qp = qp_to(t, world);
  if (!fetching) {
    uint64_t end = 0;
    (void)amo_nbi(qp, kOps[op], dest, size, value, cond, nullptr, &end);
    return 0;
  }
  const uint32_t i = claim_fetch(t);
  uint64_t old = 0;
  (void)amo_fetch(qp, kOps[op], dest, size, value, cond, t->fetch + i, &old, t->fetch_lkey);
  release_fetch(t, i);
  return old;
}

/**
 * Put with signal: the data (when `with_data`) and the signal update in one reservation and one
 * doorbell on the queue pair to `world` (the NIC applies the signal after the data); complete
 * on return unless `nbi`.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE void put_signal(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int world, bool with_data) {
  grp_sync<G>();
  if (grp_rank<G>() == 0) {
    platform::fence_system();  // the group's stores (data to a mapped peer) before the signal
    Qp *qp = qp_to(table(ctx), world);
    const SigOp op = sig_op == ROCSHMEM_SIGNAL_ADD ? SigOp::add : SigOp::set;
    uint64_t end = 0;
    uint32_t s = 0;
    if (with_data && bytes > qp->max_msg) {
      // Longer than one message: the data first, then the signal (in order on the queue pair).
      s = put_nbi(qp, dest, source, bytes, &end);
      bytes = 0;
    }
    if (s == 0) s = put_signal_nbi(qp, dest, source, with_data ? bytes : 0, sig_addr, signal, op, &end);
    if (s == 0 && end != 0) (void)wait_done(qp, end);
  }
  grp_sync<G>();
}

/** Completes every operation this PE posted through GDA (quiet; a queue pair nobody posted to
 *  costs two loads). */
ROCSHMEM_DEV_INLINE void quiet_table(const rocshmem_gda_device *t) {
  for (int pe = 0; pe < t->n_pes; ++pe)
    for (int q = 0; q < t->qps_per_pe; ++q) (void)gda::quiet(qp_to(t, pe) + q);
}

ROCSHMEM_DEV_INLINE void quiet_all(rocshmem_ctx_t ctx) { quiet_table(table(ctx)); }

/**
 * A barrier signal: adds 1 to the flag word at symmetric address `flag` (this PE's view) on
 * world PE `world`, after everything posted to it before (one queue pair, in order).
 */
ROCSHMEM_DEV_INLINE void signal_flag(const rocshmem_gda_device *t, int world, uint64_t *flag) {
  uint64_t end = 0;
  (void)amo_nbi(qp_to(t, world), AmoOp::add, flag, 8, 1, 0, nullptr, &end);
}

}  // namespace gda
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_GDA_ROUTE_HPP
