/**
 * @file host.hpp
 * The platform layer on the host (plain C++17): GPU threads are CPU threads started by the
 * host launcher (host_launcher.cpp, in librocshmem). Included by platform.hpp; see there for
 * the contract.
 *
 * Ids come from the launcher's per-thread state, reached only through the exported function
 * host::current(): inline code must not touch a thread_local defined in the library (GCC
 * would reference TLS wrapper symbols that librocshmem.so does not export).
 */
#ifndef ROCSHMEM_DEVICE_PLATFORM_HOST_HPP
#define ROCSHMEM_DEVICE_PLATFORM_HOST_HPP

#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "../../include/rocshmem/rocshmem_host_launch.hpp"

#define ROCSHMEM_DEV
#define ROCSHMEM_DEV_INLINE inline
#define ROCSHMEM_DEVICE_PASS 1
/* The host API owns the plain C names in this process: bitcode entry points get a prefix. */
#define ROCSHMEM_BITCODE_NAME(name) rocshmemi_bc_##name

namespace rocshmem {
namespace platform {

constexpr unsigned kPlatform = 0;

namespace detail {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

inline const host::KernelThread &self(const char *what) { return host::kernel_thread(what); }

// The atomic primitives of the contract (platform.hpp): one CPU memory, so the scope is
// irrelevant.
template <Scope S, Order O, class T>
inline T load(const T *p) {
  return __atomic_load_n(p, builtin_order(O));
}

template <Scope S, Order O, class T>
inline void store(T *p, T v) {
  __atomic_store_n(p, v, builtin_order(O));
}

template <Scope S, Order O, Rmw OP, class T>
inline T rmw(T *p, T v) {
  constexpr int mo = builtin_order(O);
  if constexpr (OP == Rmw::add) {
    return __atomic_fetch_add(p, v, mo);
  } else if constexpr (OP == Rmw::exch) {
    return __atomic_exchange_n(p, v, mo);
  } else if constexpr (OP == Rmw::and_) {
    return __atomic_fetch_and(p, v, mo);
  } else if constexpr (OP == Rmw::or_) {
    return __atomic_fetch_or(p, v, mo);
  } else {
    return __atomic_fetch_xor(p, v, mo);
  }
}

template <Scope S, Order O, class T>
inline void red_add(T *p, T v) {
  (void)__atomic_fetch_add(p, v, builtin_order(O));
}

template <Scope S, Order O, class T>
inline T cas(T *p, T expected, T desired) {
  constexpr int mo = builtin_order(O), fail = builtin_order(load_order(O));
  __atomic_compare_exchange_n(p, &expected, desired, false, mo, fail);
  return expected;
}
}  // namespace detail

// ---- ids and sizes ----------------------------------------------------------------------
ROCSHMEM_DEV_INLINE uint32_t thread_id() { return detail::self("thread_id").thread_id; }
ROCSHMEM_DEV_INLINE uint32_t block_size() { return detail::self("block_size").block_size; }
ROCSHMEM_DEV_INLINE uint32_t block_id() { return detail::self("block_id").block_id; }
ROCSHMEM_DEV_INLINE uint32_t grid_size() { return detail::self("grid_size").grid_size; }
ROCSHMEM_DEV_INLINE uint32_t wave_size() { return detail::self("wave_size").wave_size; }
ROCSHMEM_DEV_INLINE uint32_t lane_id() { return detail::self("lane_id").lane_id; }
ROCSHMEM_DEV_INLINE uint32_t wave_id() { return detail::self("wave_id").wave_id; }
ROCSHMEM_DEV_INLINE uint32_t waves_per_block() { return detail::self("waves_per_block").waves_per_block; }
ROCSHMEM_DEV_INLINE uint32_t wave_lanes() { return detail::self("wave_lanes").wave_lanes; }

// ---- sync (blocking barriers in the launcher: never a spin on 2 cores) -----------------
ROCSHMEM_DEV_INLINE void wg_barrier() { host::group_barrier(); }
ROCSHMEM_DEV_INLINE void wave_sync() { host::wave_barrier(); }
ROCSHMEM_DEV_INLINE uint64_t wave_broadcast(uint64_t v, uint32_t src_lane) { return host::wave_exchange(v, src_lane); }
ROCSHMEM_DEV_INLINE uint64_t wg_broadcast(uint64_t v, uint32_t src_thread) { return host::group_exchange(v, src_thread); }

// ---- fences: one CPU memory, so every scope is a full fence ------------------------------
ROCSHMEM_DEV_INLINE void fence_wg() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
ROCSHMEM_DEV_INLINE void fence_device() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
ROCSHMEM_DEV_INLINE void fence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/** A 64-bit word that no one writes while kernels run (core tables). */
ROCSHMEM_DEV_INLINE uint64_t load_readonly(const uint64_t *p) { return *p; }

// ---- polling ----------------------------------------------------------------------------
/**
 * Called with round = 0, 1, 2, ... while polling. On a kernel's lane: hands the wave's thread
 * to the next lane (a sibling may be what this one waits for); once every lane of the wave
 * waits, the thread backs off as one poller would (the launcher's host::backoff: spin, yield,
 * then sleep 1 us doubling to 100 us, then 1 ms after about 10 ms, so that 8 PEs x hundreds of
 * threads on 2 cores leave the cores to the writers they wait for).
 */
ROCSHMEM_DEV_INLINE void backoff(uint32_t round) { host::backoff(round); }

/**
 * Waits for a word that a thread of this process changes and then unparks (the RO proxy
 * answering a command): spins briefly, then blocks on a futex until woken (or 1 ms). Blocked
 * waiters use no CPU, so the proxy they wait for gets the core.
 */
ROCSHMEM_DEV_INLINE void park(const uint64_t *word, uint64_t seen, uint32_t round) {
  if (round < 4) {
    for (uint32_t i = 0, n = 16u << round; i < n; i++) detail::cpu_relax();
  } else {
    host::park(word, seen);
  }
}
ROCSHMEM_DEV_INLINE void unpark(const uint64_t *word) { host::unpark(word); }

// ---- trap -------------------------------------------------------------------------------
/** Stops the kernel (here: the process) on a state device code cannot go on from. */
[[noreturn]] ROCSHMEM_DEV_INLINE void trap() { __builtin_trap(); }

// ---- clock ------------------------------------------------------------------------------
ROCSHMEM_DEV_INLINE uint64_t clock_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace platform
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_PLATFORM_HOST_HPP
