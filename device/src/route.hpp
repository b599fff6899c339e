/**
 * @file route.hpp
 * The device side of the transport split: one dispatch point per operation family, which sends
 * an operation on PE `pe` either to its IPC body (load/store to the peer's mapped heap, given by
 * the caller as a lambda and inlined) or to a remote transport's device code (ro.hpp, and GDA's
 * gda/route.hpp).
 *
 * The core decides the transport of every world PE once, at init (src/transport/route.rs), and
 * writes it in two tables of the device state: `peer_route` (puts, gets, the data of
 * put-with-signal) and `amo_route` (atomics and signal updates), ROCSHMEM_ROUTE_* per PE.
 * Device code reads them only when `rocshmemi_device_fast.flags` has a ROCSHMEM_FAST_REMOTE
 * bit, and tests that word only off the IPC fast path: the core leaves the constant table's
 * `n_bases` at 0 while a remote transport is active, so the IPC path's own test (default
 * context, PE in the table: direct()) also says "IPC only". An IPC operation costs no more
 * than before this split; the flag test had cost 5-10 % of a small put on the H200
 * (docs/benchmarks-nvidia.md, "The IPC fast path's one test").
 *
 * Group forms pass their scope G through, so that a transport posts a group's work once
 * (RO: rank 0 submits one command; GDA: one reservation and one doorbell per group).
 *
 * Adding a transport (as GDA): a case in each family below, its ROCSHMEM_FAST_* bit set by the
 * core, and the core writing its ROCSHMEM_ROUTE_* value into the tables. A route the device
 * does not carry stops the kernel (not_routed), never falls back silently.
 *
 * Teams: sync.hpp and coll.hpp name no transport. A team whose transport runs whole team
 * operations (RO: the proxy, with MPI) takes them through team_offload(); otherwise (IPC, and
 * GDA, whose teams run the load/store algorithms) the algorithms move data to and from members
 * through the member primitives (member_push, member_pull, member_g, member_signal), which
 * send a move to a member only a NIC reaches (GDA) as RDMA.
 */
#ifndef ROCSHMEM_DEVICE_ROUTE_HPP
#define ROCSHMEM_DEVICE_ROUTE_HPP

#include "common.hpp"
#include "gda/route.hpp"
#include "ro.hpp"

namespace rocshmem {
namespace dev {

/** The transport of one operation (ROCSHMEM_ROUTE_*, src/device_abi.rs). */
enum class Route : uint8_t { ipc = ROCSHMEM_ROUTE_IPC, ro = ROCSHMEM_ROUTE_RO, gda = ROCSHMEM_ROUTE_GDA };

namespace route {

/**
 * The remote transports this build's device code carries (ROCSHMEM_FAST_* bits). GDA only on
 * the host platform, where it runs (against the NIC model): on a GPU init refuses
 * ROCSHMEM_BACKEND=gda (docs/gda.md), so GPU builds leave GDA's device code out. Inlined into
 * a kernel of the device bitcode it had taken a 1024-thread kernel past 64 registers, which
 * then did not launch ("too many resources requested", gpu_module_relaxed_np2 on the H200).
 */
constexpr int kCarried = ROCSHMEM_FAST_RO | (ROCSHMEM_PLATFORM_GPU ? 0 : ROCSHMEM_FAST_GDA);

/** Is transport `bit` (a ROCSHMEM_FAST_* bit or mask) active? One load of the constant table. */
ROCSHMEM_DEV_INLINE bool active(int bit) { return (rocshmemi_device_fast.flags & bit & kCarried) != 0; }

/** Is any transport other than IPC active (so that the route tables must be read)? */
ROCSHMEM_DEV_INLINE bool remote_active() { return active(ROCSHMEM_FAST_REMOTE); }

/**
 * The IPC fast path: context `ctx` is the default one (a NULL handle or its own entry) and PE
 * `pe` is in the constant table, so ctx_peer_ptr() maps it from constants. The core leaves the
 * table empty while a remote transport is active (src/runtime/device.rs), so true also means
 * "IPC only": the one test the IPC body makes anyway, which the compiler then folds into it.
 */
ROCSHMEM_DEV_INLINE bool direct(rocshmem_ctx_t ctx, int pe) {
  const void *o = ctx.ctx_opaque;
  return (o == nullptr || o == rocshmemi_device_fast.default_ctx) && pe < rocshmemi_device_fast.n_bases;
}

/** A peer as a remote transport needs it: its route and its world PE number. */
struct Peer {
  Route route;
  int world;
};

/** The route of context PE `pe`: from amo_route (`amo`) or peer_route; only when remote_active(). */
ROCSHMEM_DEV_INLINE Peer peer(rocshmem_ctx_t ctx, int pe, bool amo) {
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  const int world = ctx_world_pe(c, pe);
  const uint8_t *table = amo ? c->state->amo_route : c->state->peer_route;
  return Peer{Route(table[world]), world};
}

/**
 * A route this build's device code does not carry (the core never writes one, so only a
 * corrupt table gets here). Stops the kernel rather than pretend.
 */
[[noreturn]] ROCSHMEM_DEV_INLINE void not_routed() { platform::trap(); }

/** Opens each Route::gda case: a build without GDA (kCarried) stops there, and the rest of the
 * case is dead code the compiler drops. */
ROCSHMEM_DEV_INLINE void gda_carried() {
  if constexpr ((kCarried & ROCSHMEM_FAST_GDA) == 0) not_routed();
}

/*
 * Each family is an inlined direct() test, whose true side is the caller's IPC body, and an
 * out-of-line routed side (`*_routed`: another context, a PE past the constant table, or a
 * remote transport active) that runs the IPC body when no remote transport is active, else
 * reads the route and runs the IPC body (a mapped peer) or the transport. Out of line like
 * ro::submit: the slow path's table reads and switch stay out of every IPC call site, and the
 * IPC body is not a join of two paths (no convergence barrier around it on NVIDIA). The IPC
 * bodies capture by value, so nothing of the caller goes to the stack on the IPC side.
 */
#if defined(ROCSHMEM_DEVICE_BITCODE)
// The LLVM bitcode for Triton and other LLVM front ends (device/bitcode.cmake defines this) has
// them inline: Triton 3.6's NVPTX back end asserts (SelectionDAG::ReplaceAllUsesWith, "Cannot use
// this version") on out-of-line routed functions taking the IPC body by value (found by
// examples/triton/check_compile.py on the H200, reproduced with the CPU-only triton wheel).
#define ROCSHMEM_ROUTED ROCSHMEM_DEV_INLINE
#else
#define ROCSHMEM_ROUTED ROCSHMEM_DEV_OUTLINE
#endif

// ---- RMA: putmem/getmem (every group form), p, g ----

enum class Rma : uint8_t { put = ROCSHMEM_RO_PUT, get = ROCSHMEM_RO_GET };

template <Grp G, class Ipc>
ROCSHMEM_ROUTED void rma_routed(rocshmem_ctx_t ctx, Rma op, void *dest, const void *source, size_t bytes, int pe,
                                Ipc ipc) {
  if (!remote_active()) return ipc();
  const Peer p = peer(ctx, pe, false);
  switch (p.route) {
    case Route::ipc: return ipc();
    case Route::ro: return ro::rma<G>(ctx, uint8_t(op), dest, source, bytes, p.world);
    case Route::gda:
      gda_carried();
      if (op == Rma::put) return gda::putmem<G>(ctx, dest, source, bytes, p.world);
      return gda::getmem<G>(ctx, dest, source, bytes, p.world);
    default: not_routed();
  }
}

/** A put or get of `bytes` by group G with PE `pe`; `ipc()` is the load/store body. */
template <Grp G, class Ipc>
ROCSHMEM_DEV_INLINE void rma(rocshmem_ctx_t ctx, Rma op, void *dest, const void *source, size_t bytes, int pe, Ipc ipc) {
  if (direct(ctx, pe)) return ipc();
  rma_routed<G>(ctx, op, dest, source, bytes, pe, ipc);
}

template <class T, class Ipc>
ROCSHMEM_ROUTED void p_routed(rocshmem_ctx_t ctx, T *dest, T value, int pe, Ipc ipc) {
  if (!remote_active()) return ipc();
  const Peer r = peer(ctx, pe, false);
  switch (r.route) {
    case Route::ipc: return ipc();
    case Route::ro: return ro::p(ctx, dest, value, r.world);
    case Route::gda: gda_carried(); return gda::p(ctx, dest, value, r.world);
    default: not_routed();
  }
}

/** A single-element put. */
template <class T, class Ipc>
ROCSHMEM_DEV_INLINE void p(rocshmem_ctx_t ctx, T *dest, T value, int pe, Ipc ipc) {
  if (direct(ctx, pe)) return ipc();
  p_routed(ctx, dest, value, pe, ipc);
}

template <class T, class Ipc>
ROCSHMEM_ROUTED T g_routed(rocshmem_ctx_t ctx, const T *source, int pe, Ipc ipc) {
  if (!remote_active()) return ipc();
  const Peer r = peer(ctx, pe, false);
  switch (r.route) {
    case Route::ipc: return ipc();
    case Route::ro: return ro::g(ctx, source, r.world);
    case Route::gda: gda_carried(); return gda::g(ctx, source, r.world);
    default: not_routed();
  }
}

/** A single-element get. */
template <class T, class Ipc>
ROCSHMEM_DEV_INLINE T g(rocshmem_ctx_t ctx, const T *source, int pe, Ipc ipc) {
  if (direct(ctx, pe)) return ipc();
  return g_routed(ctx, source, pe, ipc);
}

// ---- AMO ----

template <class Ipc>
ROCSHMEM_ROUTED uint64_t amo_routed(rocshmem_ctx_t ctx, uint8_t op, void *dest, uint64_t value, uint64_t cond,
                                    unsigned width, int pe, bool fetch, Ipc ipc) {
  if (!remote_active()) return ipc();
  const Peer r = peer(ctx, pe, true);
  switch (r.route) {
    case Route::ipc: return ipc();
    case Route::ro: return ro::amo(ctx, op, dest, value, cond, width, r.world, fetch);
    case Route::gda: gda_carried(); return gda::amo(ctx, op, dest, value, cond, width, r.world, fetch);
    default: not_routed();
  }
}

/**
 * Atomic `op` (an AmoOp, the RO codes) on a 4- or 8-byte word of PE `pe`: `value`/`cond` as
 * the low bytes of 64-bit words; `fetch`: the caller needs the old value. Returns it.
 */
template <class Ipc>
ROCSHMEM_DEV_INLINE uint64_t amo(rocshmem_ctx_t ctx, uint8_t op, void *dest, uint64_t value, uint64_t cond,
                                 unsigned width, int pe, bool fetch, Ipc ipc) {
  if (direct(ctx, pe)) return ipc();
  return amo_routed(ctx, op, dest, value, cond, width, pe, fetch, ipc);
}

// ---- Signal: put-with-signal (every group form) and signal_op ----

template <Grp G, class IpcData, class IpcSignal>
ROCSHMEM_ROUTED void put_signal_routed(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, IpcData ipc_data,
                                       IpcSignal ipc_signal) {
  if (!remote_active()) {
    ipc_data();
    return ipc_signal();
  }
  const Peer data = peer(ctx, pe, false), sig = peer(ctx, pe, true);
  if (data.route == Route::ipc) ipc_data();
  switch (data.route == Route::ipc ? sig.route : data.route) {
    case Route::ipc: return ipc_signal();
    // RO carries the update (an atomic), after the data when it carries that too (and then
    // waits: the source is reusable on return).
    case Route::ro: {
      const bool with_data = data.route == Route::ro;
      return ro::put_signal<G>(ctx, dest, source, with_data ? bytes : 0, sig_addr, signal, sig_op, sig.world, with_data);
    }
    // GDA: the data (when it carries it) and the update, a NIC atomic, in one post.
    case Route::gda: {
      gda_carried();
      const bool with_data = data.route == Route::gda;
      return gda::put_signal<G>(ctx, dest, source, bytes, sig_addr, signal, sig_op, sig.world, with_data);
    }
    default: not_routed();
  }
}

/**
 * `bytes` from `source` to `dest` on PE `pe`, then the signal update (`sig_op` of `signal` on
 * `sig_addr`) after the data. The data goes by the peer's RMA route, the update by its AMO
 * route; `ipc_data()` copies the data by load/store (no sync), `ipc_signal()` is the rest of
 * the IPC form (group sync, then rank 0's release update).
 */
template <Grp G, class IpcData, class IpcSignal>
ROCSHMEM_DEV_INLINE void put_signal(rocshmem_ctx_t ctx, void *dest, const void *source, size_t bytes,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, IpcData ipc_data,
                                    IpcSignal ipc_signal) {
  if (direct(ctx, pe)) {
    ipc_data();
    return ipc_signal();
  }
  put_signal_routed<G>(ctx, dest, source, bytes, sig_addr, signal, sig_op, pe, ipc_data, ipc_signal);
}

template <class Ipc>
ROCSHMEM_ROUTED void signal_op_routed(rocshmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                      Ipc ipc) {
  if (!remote_active()) return ipc();
  const Peer r = peer(ctx, pe, true);
  switch (r.route) {
    case Route::ipc: return ipc();
    case Route::ro: return ro::put_signal<Grp::thread>(ctx, sig_addr, sig_addr, 0, sig_addr, signal, sig_op, r.world, false);
    case Route::gda:
      gda_carried();
      return gda::put_signal<Grp::thread>(ctx, sig_addr, sig_addr, 0, sig_addr, signal, sig_op, r.world, false);
    default: not_routed();
  }
}

/** signal_op: the signal update alone, by the AMO route. */
template <class Ipc>
ROCSHMEM_DEV_INLINE void signal_op(rocshmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                   Ipc ipc) {
  if (direct(ctx, pe)) return ipc();
  signal_op_routed(ctx, sig_addr, signal, sig_op, pe, ipc);
}

// ---- Ordering: fence and quiet over every active transport ----

/**
 * After the caller's system fence (which orders and completes IPC stores): `quiet` completes,
 * else orders, what every active remote transport has in flight from this PE.
 */
ROCSHMEM_DEV_INLINE void order(const rocshmem_device_state *s, bool quiet) {
  if (active(ROCSHMEM_FAST_RO)) ro::order(s, quiet);
  // GDA: fence needs nothing (one RC queue pair per peer executes in order).
  if (active(ROCSHMEM_FAST_GDA) && quiet) gda::quiet_table(s->gda);
}

ROCSHMEM_ROUTED void order_routed(rocshmem_ctx_t ctx, bool quiet) { order(ctx_entry(ctx)->state, quiet); }
ROCSHMEM_ROUTED void order_routed(const rocshmem_device_state *s, bool quiet) { order(s, quiet); }

/** fence (`quiet` false) or quiet of context `ctx`, on its remote transports. */
ROCSHMEM_DEV_INLINE void order(rocshmem_ctx_t ctx, bool quiet) {
  if (remote_active()) order_routed(ctx, quiet);
}

/** Before a load/store barrier: group G's operations on remote transports are complete. */
template <Grp G>
ROCSHMEM_DEV_INLINE void complete(const rocshmem_device_state *s) {
  if (!remote_active()) return;
  grp_sync<G>();
  if (grp_rank<G>() == 0) order_routed(s, true);
}

/** Arrival at a barrier member that GDA reaches: a NIC atomic add of one on its `flag`. */
ROCSHMEM_ROUTED void signal_flag_routed(const rocshmem_device_state *s, int world, uint64_t *flag) {
  gda_carried();
  gda::signal_flag(s->gda, world, flag);
}

// ---- Teams: barriers and the collectives' data movement ----

/**
 * The transport of team `t`'s barriers and collectives: IPC when this PE maps every member,
 * else the transport of the members it does not (`remote_members` counts them: the RO proxy runs
 * the operation with MPI over the whole team).
 */
ROCSHMEM_DEV_INLINE Route team(const rocshmem_team_device *t) {
  if (!remote_active() || t->remote_members == 0) return Route::ipc;
  if (active(ROCSHMEM_FAST_RO)) return Route::ro;
  if (active(ROCSHMEM_FAST_GDA)) return Route::gda;
  not_routed();
}

/** Does this PE map every member of `t` (its barriers and collectives are IPC)? */
ROCSHMEM_DEV_INLINE bool team_mapped(const rocshmem_team_device *t) { return team(t) == Route::ipc; }

/** A team operation a transport may run whole (each transport maps it to its own code). */
enum class TeamKind : uint8_t { barrier, sync, broadcast, fcollect, alltoall, alltoallv, reduce, reduce_scatter };

/** The element type of a collective, as the transports that run collectives whole name it. */
template <class T>
ROCSHMEM_DEV_INLINE constexpr uint8_t elem_code() {
  return ro::dtype<T>();
}

/** The count and displacement arrays of an alltoallv (private memory of the caller). */
struct AlltoallvArgs {
  const size_t *dest_nelems, *dest_displs, *source_nelems, *source_displs;
};

/** What a team operation carries to a transport that runs it whole. */
struct TeamOp {
  TeamKind kind;
  void *dest = nullptr;
  const void *source = nullptr;
  uint64_t len = 0;
  uint8_t elem = 0;  // elem_code<T>() (alltoallv, reductions)
  uint8_t op = 0;    // the reduction's Op (numeric.hpp)
  int root = 0;      // broadcast: the root member
  const AlltoallvArgs *v = nullptr;
};

/** RO's queue code of a team operation (rocshmem_ro_cmd::op). */
ROCSHMEM_DEV_INLINE uint8_t ro_code(TeamKind k) {
  switch (k) {
    case TeamKind::barrier: return ROCSHMEM_RO_BARRIER;
    case TeamKind::sync: return ROCSHMEM_RO_SYNC;
    case TeamKind::broadcast: return ROCSHMEM_RO_BROADCAST;
    case TeamKind::fcollect: return ROCSHMEM_RO_FCOLLECT;
    case TeamKind::alltoall: return ROCSHMEM_RO_ALLTOALL;
    case TeamKind::alltoallv: return ROCSHMEM_RO_ALLTOALLV;
    case TeamKind::reduce: return ROCSHMEM_RO_REDUCE;
    case TeamKind::reduce_scatter: return ROCSHMEM_RO_REDUCE_SCATTER;
  }
  not_routed();
}

/** Team operation `o` over `t` by its remote transport `r` (a team() that is not IPC), by group G. */
template <Grp G>
ROCSHMEM_DEV_INLINE void team_op(Route r, const rocshmem_device_state *s, const rocshmem_team_device *t,
                                 const TeamOp &o) {
  switch (r) {
    case Route::ro:
      if (o.kind == TeamKind::alltoallv) {
        // submit() copies the arguments into the queue's host-visible argument block of the slot.
        const rocshmem_ro_alltoallv args{ro::addr(o.dest),          o.v->dest_nelems,    o.v->dest_displs,
                                         ro::addr(o.source),        o.v->source_nelems, o.v->source_displs};
        return ro::team_op<G>(s, t, ROCSHMEM_RO_ALLTOALLV, nullptr, nullptr, 0, o.elem, o.op, o.root, &args);
      }
      return ro::team_op<G>(s, t, ro_code(o.kind), o.dest, o.source, o.len, o.elem, o.op, o.root);
    default: not_routed();
  }
}

/**
 * Runs team operation `o` on the team's transport when that transport runs team operations
 * whole (RO), and returns true; false when the caller runs its load/store algorithm (IPC, and
 * GDA through the member primitives below).
 */
template <Grp G>
ROCSHMEM_DEV_INLINE bool team_offload(const rocshmem_device_state *s, const rocshmem_team_device *t, const TeamOp &o) {
  const Route r = team(t);
  if (r == Route::ipc || r == Route::gda) return false;
  team_op<G>(r, s, t, o);
  return true;
}

/** Is world PE `w` a member that only a NIC reaches (GDA), so that data moves to it as RDMA? */
ROCSHMEM_DEV_INLINE bool member_remote(const rocshmem_device_state *s, int w) {
  return active(ROCSHMEM_FAST_GDA) && s->peer_route[w] == ROCSHMEM_ROUTE_GDA;
}

/** Is some member of `t` member_remote()? */
ROCSHMEM_DEV_INLINE bool any_member_remote(const rocshmem_device_state *s, const rocshmem_team_device *t) {
  if (!active(ROCSHMEM_FAST_GDA)) return false;
  for (int m = 0; m < t->n_pes; ++m)
    if (member_remote(s, world_pe(t, m))) return true;
  return false;
}

/** The group copies `bytes` from local `source` to symmetric `to` (this PE's view) on member `w`. */
template <Grp G>
ROCSHMEM_DEV_INLINE void member_push(rocshmem_ctx_t ctx, const rocshmem_device_state *s, void *to, const void *source,
                                     size_t bytes, int w) {
  if (member_remote(s, w)) return gda::putmem<G>(ctx, to, source, bytes, w);
  grp_copy<G>(peer_ptr(s, to, w), source, bytes);
}

/** The group copies `bytes` from symmetric `from` (this PE's view) on member `w` to local `dest`. */
template <Grp G>
ROCSHMEM_DEV_INLINE void member_pull(rocshmem_ctx_t ctx, const rocshmem_device_state *s, void *dest, const void *from,
                                     size_t bytes, int w) {
  if (member_remote(s, w)) return gda::getmem<G>(ctx, dest, from, bytes, w);
  grp_copy<G>(dest, peer_ptr(s, from, w), bytes);
}

/** One word at symmetric `from` (this PE's view) on member `w`, which member_remote() says a NIC reaches. */
ROCSHMEM_DEV_INLINE uint64_t member_g(rocshmem_ctx_t ctx, const uint64_t *from, int w) { return gda::g(ctx, from, w); }

/** Arrival at a barrier member `w` that member_remote() says a NIC reaches: one added to its `flag`. */
ROCSHMEM_DEV_INLINE void member_signal(const rocshmem_device_state *s, int w, uint64_t *flag) {
  signal_flag_routed(s, w, flag);
}

}  // namespace route
}  // namespace dev
}  // namespace rocshmem

#undef ROCSHMEM_ROUTED

#endif  // ROCSHMEM_DEVICE_ROUTE_HPP
