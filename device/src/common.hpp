/**
 * @file common.hpp
 * What every part of the device library needs: the platform layer, the core's ABI structures,
 * the public types, and small helpers for scopes, state and addresses.
 *
 * Implementation symbols live in namespace rocshmem::dev; the public names are thin generated
 * entry points over them (device/gen/), so no implementation symbol carries a public host
 * name (which clashes on the host platform, and on NVIDIA where nvcc emits host stubs).
 */
#ifndef ROCSHMEM_DEVICE_COMMON_HPP
#define ROCSHMEM_DEVICE_COMMON_HPP

#include "../platform/platform.hpp"
#include "rocshmem_device/device_abi.h"
#include "rocshmem/rocshmem_common.hpp"

#include <type_traits>

/* The bitcode entry points: external functions with default visibility, so that opt keeps
 * them and link-only-needed linking (Triton) imports exactly those a kernel calls. Not `used`:
 * that puts them in llvm.compiler.used, which LinkOnlyNeeded imports whole, so every Triton
 * kernel pulled in all 578 (a minute of compile, and an assertion in Triton 3.6's LLVM). Named
 * by the platform (the host platform prefixes them: its host API owns the plain C names). */
#ifndef ROCSHMEM_BITCODE_FN
#define ROCSHMEM_BITCODE_FN ROCSHMEM_DEVICE_FN __attribute__((visibility("default")))
#endif
/* Those also in the AMD device archive (device/gen/bitcode_api_archived.cpp): hidden on GPUs, so
 * that an application's device link keeps only those it calls; on the host platform exported as
 * the others (the host library's rocshmemi_bc_* names). */
#ifndef ROCSHMEM_BITCODE_ARCHIVED_FN
#if ROCSHMEM_GPU_COMPILE
#define ROCSHMEM_BITCODE_ARCHIVED_FN ROCSHMEM_DEVICE_FN __attribute__((visibility("hidden")))
#else
#define ROCSHMEM_BITCODE_ARCHIVED_FN ROCSHMEM_BITCODE_FN
#endif
#endif
#ifndef ROCSHMEM_BITCODE_NAME
#define ROCSHMEM_BITCODE_NAME(name) name
#endif

/* The address table (rocshmem_device_fast, device_abi.h): constant memory on GPUs, so that
 * translating an address costs no dependent global loads. GPU builds define it in
 * gpu_globals.cpp, the host platform in src/cxx/shim_core.cpp; the core fills it at init. */
#if ROCSHMEM_GPU_COMPILE
#define ROCSHMEM_DEVICE_CONST __constant__
#else
#define ROCSHMEM_DEVICE_CONST
#endif
extern "C" ROCSHMEM_DEVICE_CONST rocshmem_device_fast rocshmemi_device_fast;

namespace rocshmem {
namespace dev {

using platform::Order;
using platform::Scope;

/** Who calls: one thread, every lane of a wave, or every thread of a work-group. */
enum class Grp { thread, wave, wg };

template <Grp G>
ROCSHMEM_DEV_INLINE unsigned grp_rank() {
  if constexpr (G == Grp::thread) return 0;
  else if constexpr (G == Grp::wave) return platform::lane_id();
  else return platform::thread_id();
}

template <Grp G>
ROCSHMEM_DEV_INLINE unsigned grp_size() {
  if constexpr (G == Grp::thread) return 1;
  else if constexpr (G == Grp::wave) return platform::wave_lanes();
  else return platform::block_size();
}

template <Grp G>
ROCSHMEM_DEV_INLINE void grp_sync() {
  if constexpr (G == Grp::wave) platform::wave_sync();
  else if constexpr (G == Grp::wg) platform::wg_barrier();
}

/** A value computed by rank 0 of the group, given to every member. */
template <Grp G>
ROCSHMEM_DEV_INLINE uint64_t grp_broadcast(uint64_t v) {
  if constexpr (G == Grp::thread) return v;
  else if constexpr (G == Grp::wave) return platform::wave_broadcast(v, 0);
  else return platform::wg_broadcast(v, 0);
}

/** The handle the plain (context-less) forms pass: it means the default context. */
ROCSHMEM_DEV_INLINE rocshmem_ctx_t default_handle() { return rocshmem_ctx_t{nullptr, nullptr}; }

/** The context entry behind a handle; a NULL handle is the default context. */
ROCSHMEM_DEV_INLINE const rocshmem_ctx_device *ctx_entry(rocshmem_ctx_t ctx) {
  void *p = ctx.ctx_opaque ? ctx.ctx_opaque : ROCSHMEM_CTX_DEFAULT.ctx_opaque;
  return static_cast<const rocshmem_ctx_device *>(p);
}

ROCSHMEM_DEV_INLINE const rocshmem_ctx_device *default_ctx() { return ctx_entry(rocshmem_ctx_t{nullptr, nullptr}); }

ROCSHMEM_DEV_INLINE const rocshmem_device_state *state_of(const rocshmem_ctx_device *c) { return c->state; }

ROCSHMEM_DEV_INLINE const rocshmem_team_device *team_entry(rocshmem_team_t t) {
  return reinterpret_cast<const rocshmem_team_device *>(t);
}

/** Is this a live team of which this PE is a member? */
ROCSHMEM_DEV_INLINE bool team_ok(const rocshmem_team_device *t) {
  return t != nullptr && t->magic == ROCSHMEM_TEAM_MAGIC && t->my_pe >= 0 && t->n_pes > 0;
}

/** World PE of member `i` of team `t`. */
ROCSHMEM_DEV_INLINE int world_pe(const rocshmem_team_device *t, int i) { return t->start + i * t->stride; }

/** World PE of `pe` as a context's PE number (relative to the context's team). */
ROCSHMEM_DEV_INLINE int ctx_world_pe(const rocshmem_ctx_device *c, int pe) {
  return c->team ? world_pe(c->team, pe) : pe;
}

/**
 * The address in world PE `pe`'s heap of the symmetric object at local address `addr`: from
 * the constant table for the first ROCSHMEM_FAST_PES PEs, else from the state. (The fields
 * are read by name, not through a pointer, so GPUs read them as constants.)
 */
template <class T>
ROCSHMEM_DEV_INLINE T *peer_ptr(const rocshmem_device_state *s, T *addr, int pe) {
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (pe < rocshmemi_device_fast.n_bases) {
    return reinterpret_cast<T *>(a - rocshmemi_device_fast.heap_base + rocshmemi_device_fast.heap_bases[pe]);
  }
  // Read-only loads: a plain load here could be merged with the constant one above into one
  // generic load of a selected address, which costs the constant cache on NVIDIA.
  return reinterpret_cast<T *>(a - platform::load_readonly(s->heap_bases + s->my_pe) +
                               platform::load_readonly(s->heap_bases + pe));
}

/**
 * peer_ptr for PE `pe` of context `ctx`. The default context (a NULL handle or its own entry)
 * is on the world team, so its PEs are world PEs and nothing of its entry needs reading.
 */
template <class T>
ROCSHMEM_DEV_INLINE T *ctx_peer_ptr(rocshmem_ctx_t ctx, T *addr, int pe) {
  void *o = ctx.ctx_opaque;
  if ((o == nullptr || o == rocshmemi_device_fast.default_ctx) && pe < rocshmemi_device_fast.n_bases) {
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    return reinterpret_cast<T *>(a - rocshmemi_device_fast.heap_base + rocshmemi_device_fast.heap_bases[pe]);
  }
  const rocshmem_ctx_device *c = ctx_entry(ctx);
  return peer_ptr(c->state, addr, ctx_world_pe(c, pe));
}

/** Is `[addr, addr+len)` inside this PE's symmetric heap? */
ROCSHMEM_DEV_INLINE bool in_heap(const rocshmem_device_state *s, const void *addr, size_t len) {
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  uintptr_t b = s->heap_bases[s->my_pe] + s->control_len;
  return a >= b && len <= s->heap_size && a - b <= s->heap_size - len;
}

/** Is world PE `pe` mapped here (reachable by load/store: its heap base is not 0)? */
ROCSHMEM_DEV_INLINE bool pe_mapped(const rocshmem_device_state *s, int pe) {
  if (pe < rocshmemi_device_fast.n_bases) return rocshmemi_device_fast.heap_bases[pe] != 0;
  return platform::load_readonly(s->heap_bases + pe) != 0;
}

/** World PE `pe`'s heap base as mapped here: from the constant table when it holds it. */
ROCSHMEM_DEV_INLINE uint64_t heap_base_of(const rocshmem_device_state *s, int pe) {
  if (pe < rocshmemi_device_fast.n_bases) return rocshmemi_device_fast.heap_bases[pe];
  return platform::load_readonly(s->heap_bases + pe);
}

/** This PE's heap base: from the constant table when it is filled (a module that was given only
 *  the three upstream globals has it empty). */
ROCSHMEM_DEV_INLINE uint64_t local_heap_base(const rocshmem_device_state *s) {
  if (rocshmemi_device_fast.n_bases > 0) return rocshmemi_device_fast.heap_base;
  return platform::load_readonly(s->heap_bases + s->my_pe);
}

/** Device synchronisation slot `slot` of world PE `pe`: header, then one flag per member. */
struct SyncSlot {
  uint64_t *seq;      // local: collectives completed on this slot by this PE
  uint64_t *flags;    // flags[i]: last sequence number member i signalled to this PE
  char *scratch;      // dev_scratch_bytes of collective scratch
};

ROCSHMEM_DEV_INLINE SyncSlot sync_slot(const rocshmem_device_state *s, int slot, int pe) {
  char *base = reinterpret_cast<char *>(heap_base_of(s, pe) + s->dev_sync_off + uint64_t(slot) * s->dev_sync_slot_bytes);
  uint64_t flag_bytes = (uint64_t(s->n_pes) * 8 + 63) / 64 * 64;
  return SyncSlot{reinterpret_cast<uint64_t *>(base), reinterpret_cast<uint64_t *>(base + ROCSHMEM_DEV_SYNC_HEADER),
                  base + ROCSHMEM_DEV_SYNC_HEADER + flag_bytes};
}

/** A fresh read of memory others write (every call reads it again); any 1/2/4/8-byte type. */
template <class T>
ROCSHMEM_DEV_INLINE T volatile_load(const T *p) {
  using W = typename std::conditional<
      sizeof(T) == 1, uint8_t,
      typename std::conditional<sizeof(T) == 2, uint16_t,
                                typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type;
  static_assert(sizeof(T) == sizeof(W), "element types are 1, 2, 4 or 8 bytes");
  W w = *reinterpret_cast<const volatile W *>(p);
  T v;
  __builtin_memcpy(&v, &w, sizeof(T));
  return v;
}

/** Waits until `*p` (a 64-bit word written by peers) satisfies `done(value)`; returns the value. */
template <class Pred>
ROCSHMEM_DEV_INLINE uint64_t poll_until(uint64_t *p, Pred done) {
  for (uint32_t round = 0;; ++round) {
    uint64_t v = platform::poll_load(p);
    if (done(v)) return v;
    platform::backoff(round);
  }
}

/**
 * Copies `bytes` with every thread of the group taking a share: 16-byte words when both ends
 * allow it, else 8, 4 or 1. No synchronisation: callers sync when the data must be complete.
 */
template <Grp G>
ROCSHMEM_DEV_INLINE void grp_copy(void *dst, const void *src, size_t bytes) {
  const unsigned r = grp_rank<G>(), n = grp_size<G>();
  char *d = static_cast<char *>(dst);
  const char *s = static_cast<const char *>(src);
  uintptr_t mis = reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s);
  size_t done = 0;
  if ((mis & 15) == 0) {
    struct alignas(16) V16 {
      uint64_t a, b;
    };
    const size_t words = bytes / 16;
    V16 *dw = reinterpret_cast<V16 *>(d);
    const V16 *sw = reinterpret_cast<const V16 *>(s);
    // Four (then two) loads in flight before their stores: a thread with several words waits
    // for one load latency per batch, not per word. (Source and destination of a copy do not
    // overlap; the group's threads never ordered their accesses among themselves anyway.)
    size_t i = r;
    for (; i + 3 * size_t(n) < words; i += 4 * size_t(n)) {
      const V16 a = sw[i], b = sw[i + n], c = sw[i + 2 * size_t(n)], e = sw[i + 3 * size_t(n)];
      dw[i] = a;
      dw[i + n] = b;
      dw[i + 2 * size_t(n)] = c;
      dw[i + 3 * size_t(n)] = e;
    }
    if (i + n < words) {
      const V16 a = sw[i], b = sw[i + n];
      dw[i] = a;
      dw[i + n] = b;
      i += 2 * size_t(n);
    }
    // A branch per remaining word, not predicated loads and stores: the predicated form
    // (tried in the fifth step) cost 110 ns a call on the H200, measured (0.145 against 0.199
    // GB/s for a 64 B put, docs/benchmarks-nvidia.md, "The copy loop").
    if (i < words) dw[i] = sw[i];
    done = words * 16;
  } else if ((mis & 7) == 0) {
    size_t words = bytes / 8;
    for (size_t i = r; i < words; i += n) reinterpret_cast<uint64_t *>(d)[i] = reinterpret_cast<const uint64_t *>(s)[i];
    done = words * 8;
  } else if ((mis & 3) == 0) {
    size_t words = bytes / 4;
    for (size_t i = r; i < words; i += n) reinterpret_cast<uint32_t *>(d)[i] = reinterpret_cast<const uint32_t *>(s)[i];
    done = words * 4;
  }
  for (size_t i = done + r; i < bytes; i += n) d[i] = s[i];
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_COMMON_HPP
