/**
 * @file qp.hpp
 * Posting to a GDA queue pair from device threads, through a vendor writer (mlx5.hpp):
 * reserve send-queue blocks, write WQEs, publish them in order, ring the doorbell, poll the
 * completion queue, wait. Many threads of many work-groups post to one queue pair at once.
 * The layout of a queue pair (rocshmem_gda_qp) is in gda_abi.h, written from
 * src/transport/gda/abi.rs. docs/gda.md, "Posting", explains the protocol; in short:
 *
 *  1. reserve: `first = fetch_add(resv_head, n)`; wait until blocks [first, first + n) are free,
 *     i.e. `done >= first + n - sq_depth` (polling the CQ meanwhile).
 *  2. write the WQE's blocks at `(first + i) % sq_depth`, then fence (device scope when the SQ
 *     is in GPU memory, system scope otherwise) so the NIC can read them once told.
 *  3. publish in order: CAS `ready_head` from `first` to `first + n` (waits for every earlier
 *     reservation to be published).
 *  4. ring: unless `prod_idx` already covers `first + n`, take `post_lock` (a try-lock inside
 *     the loop, so lanes of one wave never wait on each other), read `ready_head`, store the
 *     doorbell record, then the doorbell register (release stores at system scope after a
 *     system fence), set `prod_idx`. One doorbell may cover many threads' WQEs.
 *  5. completions: each post's last WQE asks for a CQE (a one-block WQE: an 8-byte masked
 *     compare-swap, two blocks, is followed by a NOP that asks instead). Whoever wins the
 *     `cq_lock` try-lock consumes valid CQEs (opcode not invalid, owner bit equal to the pass
 *     parity of the consumer index), advances `done` to the completed WQE's index + 1 (the
 *     16-bit counter extended from `done`), and writes the CQ doorbell record. An error CQE
 *     sets `error` once; every wait then returns it instead of hanging.
 *
 * Every function returns a status: 0, or ROCSHMEM_GDA_ERR_* (gda_abi.h).
 */
#ifndef ROCSHMEM_DEVICE_GDA_QP_HPP
#define ROCSHMEM_DEVICE_GDA_QP_HPP

#include "mlx5.hpp"
#include "rocshmem_device/gda_abi.h"

namespace rocshmem {
namespace dev {
namespace gda {

using platform::Order;
using platform::Scope;
using Qp = rocshmem_gda_qp;

// ---- small helpers ------------------------------------------------------------------------

ROCSHMEM_DEV_INLINE bool try_lock(uint32_t *lock) {
  return platform::atomic_cas<Scope::device, Order::acquire>(lock, 0u, 1u) == 0u;
}
ROCSHMEM_DEV_INLINE void unlock(uint32_t *lock) { platform::atomic_store<Scope::device, Order::release>(lock, 0u); }

/** The queue pair's error, or ROCSHMEM_GDA_ERR_STOPPED once the core stopped it, or 0. */
ROCSHMEM_DEV_INLINE uint32_t qp_status(const Qp *qp) {
  const uint32_t e = platform::atomic_load<Scope::device, Order::relaxed>(&qp->error);
  if (e != 0) return e;
  return platform::atomic_load<Scope::system, Order::relaxed>(&qp->stopped) != 0 ? ROCSHMEM_GDA_ERR_STOPPED : 0u;
}

/** The 64-bit index whose low 16 bits are `c`, at or after `base` (and less than 2^16 after). */
ROCSHMEM_DEV_INLINE uint64_t extend16(uint64_t base, uint16_t c) { return base + uint16_t(c - uint16_t(base)); }

/** Address of send-queue block `idx` (any 64-bit index; the ring wraps). */
ROCSHMEM_DEV_INLINE uint8_t *sq_block(const Qp *qp, uint64_t idx) {
  return qp->sq + (idx & (qp->sq_depth - 1)) * kBlock;
}

/** Address of PE-local heap memory `p` as the NIC sees it (the registered heap, key lkey). */
ROCSHMEM_DEV_INLINE uint64_t wire_local(const void *p) { return reinterpret_cast<uint64_t>(p); }

/** Where symmetric address `p` (this PE's view) is on the peer, for rkey. */
ROCSHMEM_DEV_INLINE uint64_t wire_remote(const Qp *qp, const void *p) {
  return qp->remote_base + (reinterpret_cast<uint64_t>(p) - qp->local_base);
}

// ---- completions --------------------------------------------------------------------------

/**
 * Consumes the completions that have arrived, if no other thread is doing so; returns the
 * queue pair's status afterwards.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t progress(Qp *qp) {
  if (!try_lock(&qp->cq_lock)) return qp_status(qp);
  uint64_t ci = platform::atomic_load<Scope::device, Order::relaxed>(&qp->cq_ci);
  const uint64_t done0 = platform::atomic_load<Scope::device, Order::relaxed>(&qp->done);
  uint64_t done = done0;
  const uint32_t depth = qp->cq_depth;
  uint32_t err = 0, err_info = 0;
  for (uint32_t n = 0; n < depth; ++n) {
    const uint8_t *cqe = qp->cq + (ci & (depth - 1)) * W::kCqeBytes;
    const uint32_t tail = platform::atomic_load<Scope::system, Order::acquire>(
        reinterpret_cast<const uint32_t *>(cqe + W::kCqeTailOffset));
    const Completion c = W::decode(tail);
    if (c.opcode == mlx5::kCqeInvalid || c.owner != ((ci & depth) != 0 ? 1 : 0)) break;  // not written yet
    if (c.opcode == mlx5::kCqeReq) {
      done = extend16(done, c.wqe_counter) + 1;
    } else if (err == 0) {
      if (c.opcode == mlx5::kCqeReqErr) {
        const uint32_t s = W::syndrome(platform::atomic_load<Scope::system, Order::relaxed>(
            reinterpret_cast<const uint32_t *>(cqe + W::kCqeSyndromeOffset)));
        err = ROCSHMEM_GDA_ERR_CQE | (s & 0xffu);
        err_info = uint32_t(c.wqe_counter) | ((s >> 8) << 16);
      } else {
        err = ROCSHMEM_GDA_ERR_BAD_CQE | c.opcode;
        err_info = c.wqe_counter;
      }
    }
    ++ci;
  }
  if (err != 0 && platform::atomic_cas<Scope::device, Order::relaxed>(&qp->error, 0u, err) == 0u)
    platform::atomic_store<Scope::device, Order::relaxed>(&qp->err_info, err_info);
  if (ci != platform::atomic_load<Scope::device, Order::relaxed>(&qp->cq_ci)) {
    platform::atomic_store<Scope::device, Order::relaxed>(&qp->cq_ci, ci);
    platform::atomic_store<Scope::system, Order::release>(qp->cq_dbrec, W::cq_dbrec(ci));
  }
  if (done != done0) platform::atomic_store<Scope::device, Order::release>(&qp->done, done);
  unlock(&qp->cq_lock);
  return qp_status(qp);
}

/** Waits until the NIC completed every block below `target`; returns early with an error. */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t wait_done(Qp *qp, uint64_t target) {
  for (uint32_t round = 0;; ++round) {
    if (platform::atomic_load<Scope::device, Order::acquire>(&qp->done) >= target) return 0;
    const uint32_t s = progress<W>(qp);
    if (platform::atomic_load<Scope::device, Order::acquire>(&qp->done) >= target) return 0;
    if (s != 0) return s;
    platform::backoff(round);
  }
}

// ---- posting ------------------------------------------------------------------------------

/** Reserves `nbb` blocks; waits for room. On success `*first` is the first block's index. */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t reserve(Qp *qp, uint32_t nbb, uint64_t *first) {
  const uint32_t s = qp_status(qp);
  if (s != 0) return s;
  const uint64_t f = platform::atomic_fetch_add<Scope::device, Order::relaxed>(&qp->resv_head, uint64_t(nbb));
  *first = f;
  if (f + nbb <= qp->sq_depth) return 0;
  const uint64_t need = f + nbb - qp->sq_depth;
  if (platform::atomic_load<Scope::device, Order::acquire>(&qp->done) >= need) return 0;
  platform::atomic_add<Scope::device, Order::relaxed>(&qp->full_waits, uint64_t(1));
  return wait_done<W>(qp, need);
}

/** Stores a built WQE into its blocks (which the caller reserved). */
ROCSHMEM_DEV_INLINE void write_wqe(const Qp *qp, uint64_t first, const Wqe &w) {
  for (uint32_t b = 0; b < w.nbb; ++b) {
    uint64_t *dst = reinterpret_cast<uint64_t *>(sq_block(qp, first + b));
    const uint32_t *src = w.dw + b * (kBlock / 4);
    for (uint32_t i = 0; i < kBlock / 8; ++i) dst[i] = uint64_t(src[2 * i]) | (uint64_t(src[2 * i + 1]) << 32);
  }
}

/**
 * Makes this thread's WQE stores visible to the NIC. Called by every thread that wrote blocks,
 * before the blocks are published (by itself, or by a group leader after a group sync).
 */
ROCSHMEM_DEV_INLINE void wqe_fence(const Qp *qp) {
  if (qp->flags & ROCSHMEM_GDA_QP_SQ_DEVICE_MEM)
    platform::fence_device();
  else
    platform::fence_system();
}

/** Tells the NIC about every published block, unless someone already covered `next`. */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t ring(Qp *qp, uint64_t next) {
  for (uint32_t round = 0;; ++round) {
    if (platform::atomic_load<Scope::device, Order::acquire>(&qp->prod_idx) >= next) return 0;
    if (try_lock(&qp->post_lock)) {
      const uint64_t ready = platform::atomic_load<Scope::device, Order::acquire>(&qp->ready_head);
      if (ready > platform::atomic_load<Scope::device, Order::relaxed>(&qp->prod_idx)) {
        platform::fence_system();
        platform::atomic_store<Scope::system, Order::release>(qp->sq_dbrec, W::dbrec(ready));
        platform::atomic_store<Scope::system, Order::release>(qp->db, W::doorbell(ready, qp->qpn));
        platform::atomic_store<Scope::device, Order::release>(&qp->prod_idx, ready);
      }
      unlock(&qp->post_lock);
      return 0;
    }
    const uint32_t s = qp_status(qp);
    if (s != 0) return s;
    platform::backoff(round);
  }
}

/**
 * Publishes blocks [first, first + nbb), written and fenced (wqe_fence) by their writers, once
 * every earlier block is published; then rings the doorbell.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t publish(Qp *qp, uint64_t first, uint32_t nbb) {
  for (uint32_t round = 0;; ++round) {
    if (platform::atomic_cas<Scope::device, Order::release>(&qp->ready_head, first, first + nbb) == first) break;
    const uint32_t s = qp_status(qp);
    if (s != 0) return s;
    platform::backoff(round);
  }
  return ring<W>(qp, first + nbb);
}

/**
 * Posts up to two WQEs as one reservation (a put-with-signal is a write and an atomic); the
 * last asks for a completion. A last WQE of two blocks gets a NOP after it that asks instead
 * (completion accounting counts one-block WQEs). `*end` is the index after the last block.
 */
template <class W = mlx5::Writer, class Build>
ROCSHMEM_DEV uint32_t post(Qp *qp, uint32_t n_wqes, const uint32_t *blocks, Build build, uint64_t *end) {
  const bool tail_nop = blocks[n_wqes - 1] > 1;
  uint32_t nbb = tail_nop ? 1 : 0;
  for (uint32_t i = 0; i < n_wqes; ++i) nbb += blocks[i];
  uint64_t first = 0;
  const uint32_t s = reserve<W>(qp, nbb, &first);
  if (s != 0) return s;
  uint64_t at = first;
  Wqe w;
  for (uint32_t i = 0; i < n_wqes; ++i) {
    build(w, i, uint16_t(at), !tail_nop && i + 1 == n_wqes);
    write_wqe(qp, at, w);
    at += w.nbb;
  }
  if (tail_nop) {
    W::nop(w, uint16_t(at), qp->qpn, true);
    write_wqe(qp, at, w);
  }
  wqe_fence(qp);
  *end = first + nbb;
  return publish<W>(qp, first, nbb);
}

// ---- operations (one thread; every address is in the symmetric heap unless said) ---------

/** `lkey` argument meaning "the queue pair's own key" (the registered heap). */
constexpr uint32_t kHeapKey = 0xffffffffu;

/**
 * Puts `len` bytes from local `src` to symmetric `dest` on the peer; returns once posted. A
 * source above `inline_max` is read by the NIC: the heap, or memory registered under `lkey`.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t put_nbi(Qp *qp, void *dest, const void *src, size_t len, uint64_t *end,
                              uint32_t lkey = kHeapKey) {
  *end = 0;
  if (lkey == kHeapKey) lkey = qp->lkey;
  const uint32_t one = 1;
  if (len <= qp->inline_max && len <= W::kInlineMax) {
    if (len == 0) return qp_status(qp);
    return post<W>(qp, 1, &one, [&](Wqe &w, uint32_t, uint16_t idx, bool sig) {
      W::rdma_inline(w, idx, qp->qpn, sig, wire_remote(qp, dest), qp->rkey, src, uint32_t(len));
    }, end);
  }
  for (size_t off = 0; off < len; off += qp->max_msg) {
    const uint32_t n = uint32_t(len - off < qp->max_msg ? len - off : qp->max_msg);
    const uint8_t *d = static_cast<const uint8_t *>(dest) + off;
    const uint8_t *sp = static_cast<const uint8_t *>(src) + off;
    const uint32_t s = post<W>(qp, 1, &one, [&](Wqe &w, uint32_t, uint16_t idx, bool sig) {
      W::rdma(w, Rdma::write, idx, qp->qpn, sig, wire_remote(qp, d), qp->rkey, wire_local(sp), lkey, n);
    }, end);
    if (s != 0) return s;
  }
  return 0;
}

/**
 * Gets `len` bytes from symmetric `src` on the peer into local registered memory `dest`: the
 * heap, or memory registered under `lkey`.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t get_nbi(Qp *qp, void *dest, const void *src, size_t len, uint64_t *end,
                              uint32_t lkey = kHeapKey) {
  *end = 0;
  if (lkey == kHeapKey) lkey = qp->lkey;
  const uint32_t one = 1;
  for (size_t off = 0; off < len; off += qp->max_msg) {
    const uint32_t n = uint32_t(len - off < qp->max_msg ? len - off : qp->max_msg);
    uint8_t *d = static_cast<uint8_t *>(dest) + off;
    const uint8_t *sp = static_cast<const uint8_t *>(src) + off;
    const uint32_t s = post<W>(qp, 1, &one, [&](Wqe &w, uint32_t, uint16_t idx, bool sig) {
      W::rdma(w, Rdma::read, idx, qp->qpn, sig, wire_remote(qp, sp), qp->rkey, wire_local(d), lkey, n);
    }, end);
    if (s != 0) return s;
  }
  return qp_status(qp);
}

/** The OpenSHMEM atomics, in NIC forms. */
enum class AmoOp : uint8_t { fetch, set, swap, cswap, fetch_add, add, fetch_and, and_, fetch_or, or_, fetch_xor, xor_ };

/**
 * The NIC form of `op` on `size` bytes (4 or 8): 8-byte add and compare-swap (and fetch, as an
 * add of 0) are IB atomics; everything else is an extended (masked) atomic, as NVSHMEM does.
 */
ROCSHMEM_DEV_INLINE AmoArgs amo_args(AmoOp op, uint32_t size, uint64_t value, uint64_t cond) {
  const uint64_t ones = size == 8 ? ~uint64_t(0) : 0xffffffffull;
  value &= ones;
  cond &= ones;
  switch (op) {
    case AmoOp::fetch:
      return size == 8 ? AmoArgs{AmoForm::std_fa, 8, 0, 0, 0, 0} : AmoArgs{AmoForm::masked_fa, 4, 0, 0, 0, 0};
    case AmoOp::fetch_add:
    case AmoOp::add:
      return size == 8 ? AmoArgs{AmoForm::std_fa, 8, value, 0, 0, 0} : AmoArgs{AmoForm::masked_fa, 4, value, 0, 0, 0};
    case AmoOp::cswap:
      return size == 8 ? AmoArgs{AmoForm::std_cs, 8, value, cond, 0, 0}
                       : AmoArgs{AmoForm::masked_cs, 4, value, cond, ones, ones};
    case AmoOp::set:
    case AmoOp::swap:
      return AmoArgs{AmoForm::masked_cs, size, value, 0, ones, 0};
    case AmoOp::fetch_and:
    case AmoOp::and_:
      return AmoArgs{AmoForm::masked_cs, size, value, 0, ~value & ones, 0};
    case AmoOp::fetch_or:
    case AmoOp::or_:
      return AmoArgs{AmoForm::masked_cs, size, value, 0, value, 0};
    case AmoOp::fetch_xor:
    case AmoOp::xor_:
      return AmoArgs{AmoForm::masked_fa, size, value, 0, ones, 0};
  }
  return AmoArgs{AmoForm::std_fa, 8, 0, 0, 0, 0};
}

/**
 * Posts an atomic on symmetric `dest` (aligned to `size`). The old value goes to `result`
 * (registered local memory: the heap, or memory registered under `lkey`) when given, else to
 * the queue pair's scratch word.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t amo_nbi(Qp *qp, AmoOp op, void *dest, uint32_t size, uint64_t value, uint64_t cond,
                              void *result, uint64_t *end, uint32_t result_lkey = kHeapKey) {
  *end = 0;
  if ((size != 4 && size != 8) || (reinterpret_cast<uint64_t>(dest) & (size - 1)) != 0) return ROCSHMEM_GDA_ERR_ARG;
  const AmoArgs a = amo_args(op, size, value, cond);
  const uint32_t blocks = W::atomic_blocks(a.form, a.size);
  const uint64_t laddr = result ? wire_local(result) : qp->scratch;
  const uint32_t lkey = !result ? qp->scratch_lkey : result_lkey == kHeapKey ? qp->lkey : result_lkey;
  return post<W>(qp, 1, &blocks, [&](Wqe &w, uint32_t, uint16_t idx, bool sig) {
    W::atomic(w, a, idx, qp->qpn, sig, wire_remote(qp, dest), qp->rkey, laddr, lkey);
  }, end);
}

/** A fetched value as the NIC left it in `result` (4-byte values arrive big-endian). */
ROCSHMEM_DEV_INLINE uint64_t fetched(const void *result, uint32_t size) {
  if (size == 8) return platform::atomic_load<Scope::system, Order::relaxed>(static_cast<const uint64_t *>(result));
  return bswap32(platform::atomic_load<Scope::system, Order::relaxed>(static_cast<const uint32_t *>(result)));
}

/** A fetching atomic: posts, waits for its completion, returns the old value in `*old`. */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t amo_fetch(Qp *qp, AmoOp op, void *dest, uint32_t size, uint64_t value, uint64_t cond,
                                void *result, uint64_t *old, uint32_t result_lkey = kHeapKey) {
  uint64_t end = 0;
  uint32_t s = amo_nbi<W>(qp, op, dest, size, value, cond, result, &end, result_lkey);
  if (s == 0) s = wait_done<W>(qp, end);
  *old = s == 0 ? fetched(result, size) : 0;
  return s;
}

/** How a put-with-signal updates the signal word (OpenSHMEM ROCSHMEM_SIGNAL_SET / _ADD). */
enum class SigOp : uint8_t { set, add };

/**
 * Put with signal: an RDMA write of the data, then an 8-byte atomic on the signal word, in one
 * reservation and one doorbell. An RC queue pair executes them in order at the target, so the
 * signal is seen after the data (upstream and NVSHMEM signal with an atomic the same way; a
 * write-with-immediate would need receive queues at the target). Needs len <= max_msg.
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t put_signal_nbi(Qp *qp, void *dest, const void *src, size_t len, uint64_t *sig_addr, uint64_t signal,
                                     SigOp op, uint64_t *end) {
  *end = 0;
  if (len > qp->max_msg || (reinterpret_cast<uint64_t>(sig_addr) & 7) != 0) return ROCSHMEM_GDA_ERR_ARG;
  const AmoArgs a = amo_args(op == SigOp::add ? AmoOp::add : AmoOp::set, 8, signal, 0);
  const bool inl = len <= qp->inline_max && len <= W::kInlineMax;
  const uint32_t blocks[2] = {1, W::atomic_blocks(a.form, 8)};
  const uint32_t skip = len == 0 ? 1 : 0;  // a zero-length put is only the signal
  return post<W>(qp, 2 - skip, blocks + skip, [&](Wqe &w, uint32_t i, uint16_t idx, bool signaled) {
    if (i + skip == 1) {
      W::atomic(w, a, idx, qp->qpn, signaled, wire_remote(qp, sig_addr), qp->rkey, qp->scratch, qp->scratch_lkey);
    } else if (inl) {
      W::rdma_inline(w, idx, qp->qpn, signaled, wire_remote(qp, dest), qp->rkey, src, uint32_t(len));
    } else {
      W::rdma(w, Rdma::write, idx, qp->qpn, signaled, wire_remote(qp, dest), qp->rkey, wire_local(src), qp->lkey,
              uint32_t(len));
    }
  }, end);
}

/**
 * Quiet: every operation this thread posted (and everything published before the call) is
 * complete at the target. Fence needs nothing on one RC queue pair (the NIC executes a queue
 * pair's WQEs in order; upstream quiets only with several queue pairs per peer).
 */
template <class W = mlx5::Writer>
ROCSHMEM_DEV uint32_t quiet(Qp *qp) {
  return wait_done<W>(qp, platform::atomic_load<Scope::device, Order::acquire>(&qp->ready_head));
}

}  // namespace gda
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_GDA_QP_HPP
