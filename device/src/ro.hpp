/**
 * @file ro.hpp
 * The device side of the RO backend (docs/ro.md): operations on PEs this process cannot reach
 * by load/store (their heap base is 0), and every atomic, become commands in a queue that a
 * proxy thread of the core runs with MPI. The queue layout and protocol are defined once, in
 * src/device_abi.rs (rocshmem_ro_*).
 *
 * Every RO operation is issued by one thread; the group forms sync around it. Commands that
 * return something or must be complete when the call returns (get, g, fetching atomics, put,
 * quiet, barriers, collectives) wait for the proxy; p, non-fetching atomics and fences do not
 * (the queue keeps them in order, and a later quiet waits for them).
 */
#ifndef ROCSHMEM_DEVICE_RO_HPP
#define ROCSHMEM_DEVICE_RO_HPP

#include "common.hpp"

namespace rocshmem {
namespace dev {
namespace ro {

/** The queue of the calling work-group. */
ROCSHMEM_DEV_INLINE rocshmem_ro_queue *my_queue(const rocshmem_ro_device *ro) {
  return ro->queues + platform::block_id() % ro->n_queues;
}

/**
 * Waits until slot `seq` reads `want`; false if the proxy stopped first. On the host platform
 * the proxy is a thread of this process competing with every "GPU thread" for a few cores:
 * waiters block on a futex that the proxy wakes (platform::park), because sleeping and
 * polling starved the proxies (measured: 4 PEs x 64 threads on 2 cores took minutes).
 */
ROCSHMEM_DEV_INLINE bool wait_seq(const rocshmem_ro_device *ro, const uint64_t *seq, uint64_t want) {
  for (uint32_t round = 0;; ++round) {
    const uint64_t seen = platform::poll_load(seq);
    if (seen == want) return true;
    if (volatile_load(&ro->stopped)) return false;
    platform::park(seq, seen, round);
  }
}

/** What a command's producer fills in (the slot's other fields are the ring's). */
struct Cmd {
  uint8_t op = ROCSHMEM_RO_NOP, sub = 0, dtype = 0;
  int32_t pe = 0;
  uint64_t dst = 0, src = 0, len = 0, value = 0, cond = 0;
};

template <class T>
ROCSHMEM_DEV_INLINE uint64_t addr(T *p) {
  return reinterpret_cast<uint64_t>(p);
}

/**
 * Hands `c` to the proxy; with `wait`, returns once it ran, with its result. Waits for a free
 * slot first (the ring is bounded: back-pressure, never an overrun). If the proxy has stopped
 * (finalize, or a fatal error it reported), gives up and returns 0.
 */
// Out of line: it is the slow path, and inlined into every operation it doubled the device
// bitcode and the code of kernels that never use RO.
// `args`: an ALLTOALLV argument block, copied into the slot's entry of the queue's `args`
// (host-visible; the caller's copy may be GPU thread memory), which `src` then names.
ROCSHMEM_DEV __attribute__((noinline)) inline uint64_t submit(const rocshmem_device_state *s, const Cmd &c,
                                                               bool wait, const rocshmem_ro_alltoallv *args = nullptr) {
  using namespace platform;
  rocshmem_ro_device *ro = s->ro;
  rocshmem_ro_queue *q = my_queue(ro);
  const uint64_t slots = ro->slots;
  const uint64_t t = atomic_fetch_add<Scope::system, Order::relaxed>(&q->tail, uint64_t(1));
  rocshmem_ro_cmd *slot = q->cmds + (t & (slots - 1));
  if (!wait_seq(ro, &slot->seq, t)) return 0;
  uint64_t src = c.src;
  if (args) {
    rocshmem_ro_alltoallv *a = q->args + (t & (slots - 1));
    *a = *args;
    src = addr(a);
  }
  slot->op = c.op;
  slot->sub = c.sub;
  slot->dtype = c.dtype;
  slot->flags = wait ? ROCSHMEM_RO_FLAG_WAIT : 0;
  slot->pe = c.pe;
  slot->dst = c.dst;
  slot->src = src;
  slot->len = c.len;
  slot->value = c.value;
  slot->cond = c.cond;
  slot->result = 0;
  // Release: the proxy that sees the ticket sees the command, and every store this thread made
  // before (data a put or a collective reads). Nobody wakes the proxy: it polls, also on the
  // host platform, because it drives MPI's progress for the other PEs' atomics on this PE's
  // window (a proxy sleeping until woken made them wait: docs/development.md, 2026-12-07).
  atomic_store<Scope::system, Order::release>(&slot->seq, t + 1);
  if (!wait) return 0;
  if (!wait_seq(ro, &slot->seq, t + 2)) return 0;
  const uint64_t result = volatile_load(&slot->result);
  atomic_store<Scope::system, Order::release>(&slot->seq, t + slots);
  // A producer that took ticket t + slots waits for this slot (the fence: the store above
  // before the load of tail; that producer takes its ticket, then reads seq).
  fence_system();
  if (atomic_load<Scope::system, Order::relaxed>(&q->tail) > t + slots) unpark(&slot->seq);
  return result;
}

/** submit() by rank 0 of the group, the result given to every member. */
template <Grp G>
ROCSHMEM_DEV_INLINE uint64_t grp_submit(const rocshmem_device_state *s, const Cmd &c, bool wait,
                                        const rocshmem_ro_alltoallv *args = nullptr) {
  grp_sync<G>();  // the group's stores (a put's source) are made before the command is
  uint64_t r = 0;
  if (grp_rank<G>() == 0) r = submit(s, c, wait, args);
  return grp_broadcast<G>(r);  // implies the group's sync
}

ROCSHMEM_DEV_INLINE const rocshmem_device_state *state(rocshmem_ctx_t ctx) { return ctx_entry(ctx)->state; }

/** A put (PUT) or get (GET) of `bytes` between local and symmetric memory; waits until done. */
template <Grp G>
ROCSHMEM_DEV_INLINE void rma(rocshmem_ctx_t ctx, uint8_t op, void *dest, const void *source, size_t bytes, int world) {
  Cmd c;
  c.op = op;
  c.pe = world;
  c.dst = addr(dest);
  c.src = addr(source);
  c.len = bytes;
  (void)grp_submit<G>(state(ctx), c, true);
}

template <class T>
ROCSHMEM_DEV_INLINE void p(rocshmem_ctx_t ctx, T *dest, T value, int world) {
  Cmd c;
  c.op = ROCSHMEM_RO_P;
  c.pe = world;
  c.dst = addr(dest);
  c.len = sizeof(T);
  __builtin_memcpy(&c.value, &value, sizeof(T));
  (void)submit(state(ctx), c, false);
}

template <class T>
ROCSHMEM_DEV_INLINE T g(rocshmem_ctx_t ctx, const T *source, int world) {
  Cmd c;
  c.op = ROCSHMEM_RO_G;
  c.pe = world;
  c.src = addr(source);
  c.len = sizeof(T);
  uint64_t r = submit(state(ctx), c, true);
  T v;
  __builtin_memcpy(&v, &r, sizeof(T));
  return v;
}

/** An atomic on a 4- or 8-byte word of world PE `world`; `fetch`: wait for the old value. */
ROCSHMEM_DEV_INLINE uint64_t amo(rocshmem_ctx_t ctx, uint8_t op, void *dest, uint64_t value, uint64_t cond,
                                 unsigned width, int world, bool fetch) {
  Cmd c;
  c.op = ROCSHMEM_RO_AMO;
  c.sub = op;
  c.pe = world;
  c.dst = addr(dest);
  c.len = width;
  c.value = value;
  c.cond = cond;
  return submit(state(ctx), c, fetch);
}

/** The signal update of put-with-signal / signal_op (set or add), alone or after a put. */
template <Grp G>
ROCSHMEM_DEV_INLINE void put_signal(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int world, bool wait) {
  Cmd c;
  c.op = ROCSHMEM_RO_PUT_SIGNAL;
  c.sub = sig_op == ROCSHMEM_SIGNAL_ADD ? 1 : 0;
  c.pe = world;
  c.dst = addr(dest);
  c.src = addr(source);
  c.len = bytes;
  c.value = signal;
  c.cond = addr(sig_addr);
  (void)grp_submit<G>(state(ctx), c, wait);
}

/** fence (no wait: later commands of this queue run after the earlier ones complete) or quiet. */
ROCSHMEM_DEV_INLINE void order(const rocshmem_device_state *s, bool quiet) {
  Cmd c;
  c.op = quiet ? ROCSHMEM_RO_QUIET : ROCSHMEM_RO_FENCE;
  (void)submit(s, c, quiet);
}

/** A team operation run by the proxy with MPI (team members it cannot map). */
template <Grp G>
ROCSHMEM_DEV_INLINE void team_op(const rocshmem_device_state *s, const rocshmem_team_device *t, uint8_t op,
                                 void *dest, const void *source, uint64_t len, uint8_t dtype = 0, uint8_t sub = 0,
                                 int root = 0, const rocshmem_ro_alltoallv *args = nullptr) {
  Cmd c;
  c.op = op;
  c.sub = sub;
  c.dtype = dtype;
  c.pe = root;
  c.dst = addr(dest);
  c.src = addr(source);
  c.len = len;
  c.cond = uint64_t(uint32_t(t->slot));
  (void)grp_submit<G>(s, c, true, args);
}

/** The RO element type code of T (reductions, alltoallv). */
template <class T>
ROCSHMEM_DEV_INLINE constexpr uint8_t dtype() {
  if constexpr (std::is_same<T, __half>::value) return ROCSHMEM_RO_F16;
  else if constexpr (std::is_same<T, __hip_bfloat16>::value) return ROCSHMEM_RO_BF16;
  else if constexpr (std::is_same<T, float>::value) return ROCSHMEM_RO_F32;
  else if constexpr (std::is_same<T, double>::value) return ROCSHMEM_RO_F64;
  else {
    static_assert(std::is_integral<T>::value, "RO element types are integers and floats");
    constexpr uint8_t base = std::is_signed<T>::value ? ROCSHMEM_RO_I8 : ROCSHMEM_RO_U8;
    return sizeof(T) == 1 ? base : sizeof(T) == 2 ? base + 1 : sizeof(T) == 4 ? base + 2 : base + 3;
  }
}

}  // namespace ro
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_RO_HPP
