/**
 * @file platform.hpp
 * The platform layer: the only code in device/ that knows which machine it runs on.
 *
 * Everything else in device/ is written against the functions below, in namespace
 * rocshmem::platform. One of three implementations is chosen here:
 *  - amd.hpp     hipcc / clang -x hip (wave 64 on CDNA, 32 on RDNA)
 *  - nvidia.hpp  nvcc / clang -x cuda (wave = warp = 32)
 *  - host.hpp    plain C++: GPU threads are CPU threads started by the host launcher
 *                (host_launcher.cpp); the wave size is chosen per launch (32 or 64).
 *
 * Contract (identical on every platform):
 *  ids and sizes      thread_id(), block_size(), block_id(), grid_size(),
 *                     wave_size(), lane_id(), wave_id(), waves_per_block(),
 *                     wave_lanes()  (lanes present in the caller's wave: the last wave of a
 *                                    block may be partial)
 *  sync               wg_barrier()   every thread of the work-group (like __syncthreads)
 *                     wave_sync()    every present lane of the wave
 *                     wave_broadcast(v, src_lane) -> v of lane src_lane, to every lane
 *                                    (64-bit; a wave-level exchange, implies wave_sync)
 *                     wg_broadcast(v, src_thread) -> v of thread src_thread, to every thread
 *                                    of the work-group (64-bit; implies wg_barrier)
 *  fences             fence_wg(), fence_device(), fence_system()   (acq_rel at that scope)
 *  atomics            on uint32_t / uint64_t (and int32_t / int64_t) words, scope S
 *                     (Scope::wg, Scope::device, Scope::system), order O (Order::relaxed,
 *                     acquire, release, acq_rel):
 *                       atomic_load<S,O>(p)  atomic_store<S,O>(p,v)  atomic_fetch_add<S,O>(p,v)
 *                       atomic_add<S,O>(p,v)  (no result: the caller does not wait for it;
 *                                              relaxed or release only)
 *                       atomic_cas<S,O>(p, expected, desired) -> old value
 *                       atomic_exchange<S,O>(p,v)  atomic_fetch_and/or/xor<S,O>(p,v)
 *  read-only tables   load_readonly(p): a uint64_t the core wrote before any kernel ran
 *                     (the read-only cache on NVIDIA)
 *  polling            poll_load(p): an acquire load at system scope that the compiler may
 *                     not hoist out of a loop (for flags written by peers).
 *                     backoff(round): called in polling loops with round = 0,1,2,...;
 *                     GPU: short sleep (__nanosleep / s_sleep); host: spin, then yield, then
 *                     sleep, so that 8 PEs x many threads on 2 cores make progress.
 *                     park(word, seen, round) / unpark(word): waiting for a 64-bit word that
 *                     a thread of this process changes and then unparks; host: a futex
 *                     (the waiter sleeps until woken); GPU: backoff(round) / nothing.
 *  clock              clock_ns(): a monotonic nanosecond clock.
 *  trap               trap(): stops the kernel (host: the process); for states that cannot be.
 *  platform id        kPlatform (0 host, 1 amd, 2 nvidia, as rocshmem_device_state::platform)
 *
 * Macros: ROCSHMEM_DEV (declares a device function: __device__ on GPUs, nothing on host),
 * ROCSHMEM_DEV_INLINE (forced-inline device function), ROCSHMEM_DEV_OUTLINE (a device function
 * kept out of line: below), ROCSHMEM_DEVICE_PASS (1 while compiling
 * device code: the GPU device pass, or always on host), ROCSHMEM_GPU_DEVICE_PASS (1 only in a
 * GPU's device pass), ROCSHMEM_PLATFORM_GPU (1 on AMD and NVIDIA, 0 on host).
 *
 * What a platform header provides: the macros above (but ROCSHMEM_GPU_DEVICE_PASS), kPlatform,
 * the ids, sync but wg_broadcast (host: all), fences, load_readonly, backoff, park/unpark (host
 * only), clock_ns, trap, and five atomic primitives in namespace detail, for 32- and 64-bit words,
 * O already valid for them:
 *   load<S,O>(p) (O relaxed or acquire)  store<S,O>(p,v) (O relaxed or release)
 *   rmw<S,O,Rmw>(p,v) -> old value       red_add<S,O>(p,v) (no result)  cas<S,O>(p,e,d) -> old
 * This file writes the rest once on top of them: the public atomics (argument checks, order
 * mapping), poll_load, and on GPUs wg_broadcast and park/unpark.
 */
#ifndef ROCSHMEM_DEVICE_PLATFORM_HPP
#define ROCSHMEM_DEVICE_PLATFORM_HPP

#if __cplusplus < 201703L
#error "the rocshmem device platform layer needs C++17 (-std=c++17)"
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

namespace rocshmem {
namespace platform {
enum class Scope { wg, device, system };
enum class Order { relaxed, acquire, release, acq_rel };

namespace detail {
/** The read-modify-write operations of a platform's detail::rmw. */
enum class Rmw { add, exch, and_, or_, xor_ };

// A load has no release half and a store no acquire half: each takes the half that applies.
constexpr Order load_order(Order o) {
  return (o == Order::acquire || o == Order::acq_rel) ? Order::acquire : Order::relaxed;
}
constexpr Order store_order(Order o) {
  return (o == Order::release || o == Order::acq_rel) ? Order::release : Order::relaxed;
}
/** o as the memory order of the compilers' __atomic / __hip_atomic builtins (AMD, host). */
constexpr int builtin_order(Order o) {
  return o == Order::relaxed   ? __ATOMIC_RELAXED
         : o == Order::acquire ? __ATOMIC_ACQUIRE
         : o == Order::release ? __ATOMIC_RELEASE
                               : __ATOMIC_ACQ_REL;
}
}  // namespace detail
}  // namespace platform
}  // namespace rocshmem

#if defined(__HIP__) || defined(__HIPCC__)
#include "amd.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS ROCSHMEM_DEVICE_PASS
#define ROCSHMEM_PLATFORM_GPU 1
#elif defined(__CUDACC__) || defined(__CUDA__)
#include "nvidia.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS ROCSHMEM_DEVICE_PASS
#define ROCSHMEM_PLATFORM_GPU 1
#else
#include "host.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS 0
#define ROCSHMEM_PLATFORM_GPU 0
#endif

// A device function kept out of line on purpose: one copy per template instance instead of one
// per call site, for large bodies that many entry points share (a reduction's algorithm, the
// barrier inside a collective), where a call costs nothing next to the work and barriers inside.
// The whole device API inlined everything once: every reduction's algorithm then appeared in each
// of its ~4 wrappers and each barrier in each of its ~6 sites, and the AMD bitcode's optimiser
// spent most of its minutes per arch on those copies (docs/development.md, "Where the time goes").
#ifndef ROCSHMEM_DEV_NO_OUTLINE
#define ROCSHMEM_DEV_OUTLINE ROCSHMEM_DEV __attribute__((noinline)) inline
#else
// Experiment switch (-DROCSHMEM_DEV_NO_OUTLINE): everything inlined, as before 6383765.
#define ROCSHMEM_DEV_OUTLINE ROCSHMEM_DEV_INLINE
#endif

// Out of line only in the stream kernels' modules (device/stream/module_*.cu define
// ROCSHMEM_STREAM_MODULE): whole programs the core loads, one collective per kernel launch, so
// a call costs nothing there and one copy per type instead of one per kernel halves their
// compile for every arch (docs/development.md). Inline in the device library, whose entry points
// users' kernels inline: there a call on a collective's path costs latency (on an H100,
// broadcastmem_wg of 8 B 4.0 -> 4.6 us, a wave's float sum reduction of 64 KiB 26 -> 42 us, when
// these bodies were out of line in the library). The library's own AMD optimiser still sees
// them out of line (device/amd_build/bitcode.rs, SHARED_BODIES).
#ifdef ROCSHMEM_STREAM_MODULE
#define ROCSHMEM_DEV_MODULE_OUTLINE ROCSHMEM_DEV_OUTLINE
#else
#define ROCSHMEM_DEV_MODULE_OUTLINE ROCSHMEM_DEV_INLINE
#endif

namespace rocshmem {
namespace platform {

namespace detail {
// The value argument of an atomic takes its type from the pointer (so `p, 1` works).
template <class T>
struct nondeduced {
  using type = T;
};
template <class T>
using nd = typename nondeduced<T>::type;

template <class T>
ROCSHMEM_DEV_INLINE constexpr void check_word() {
  static_assert(std::is_integral<T>::value && (sizeof(T) == 4 || sizeof(T) == 8),
                "platform atomics work on 32- and 64-bit integer words");
}

/** rmw<S,O,OP> after the word check: what every read-modify-write below is. */
template <Scope S, Order O, Rmw OP, class T>
ROCSHMEM_DEV_INLINE T checked_rmw(T *p, T v) {
  check_word<T>();
  return rmw<S, O, OP>(p, v);
}
}  // namespace detail

#if ROCSHMEM_PLATFORM_GPU
// ---- sync and polling shared by the GPUs (the host launcher has its own) -----------------
/** Thread src_thread's v to every thread of the work-group, through one shared (LDS) word. */
ROCSHMEM_DEV_INLINE uint64_t wg_broadcast(uint64_t v, uint32_t src_thread) {
  __attribute__((shared)) uint64_t slot;  // one per work-group (function-scope shared is static)
  wg_barrier();                           // the previous broadcast's readers are done with slot
  if (thread_id() == src_thread) slot = v;
  wg_barrier();
  return slot;
}

/** park/unpark (see above): a GPU has no futex; the waiter polls with backoff(). */
ROCSHMEM_DEV_INLINE void park(const uint64_t *, uint64_t, uint32_t round) { backoff(round); }
ROCSHMEM_DEV_INLINE void unpark(const uint64_t *) {}
#endif

// ---- atomics ----------------------------------------------------------------------------
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_load(const T *p) {
  detail::check_word<T>();
  return detail::load<S, detail::load_order(O)>(p);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void atomic_store(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  detail::store<S, detail::store_order(O)>(p, v);
}

/** Adds without returning the old value, so the thread does not wait for it (relaxed or
 *  release; the compilers pick the no-return instruction). */
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void atomic_add(T *p, detail::nd<T> v) {
  static_assert(O == Order::relaxed || O == Order::release, "atomic_add is relaxed or release");
  detail::check_word<T>();
  detail::red_add<S, O>(p, v);
}

/** Compare-and-swap; returns the old value (equal to expected when it succeeded). */
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_cas(T *p, detail::nd<T> expected, detail::nd<T> desired) {
  detail::check_word<T>();
  return detail::cas<S, O>(p, expected, desired);
}

// The read-modify-writes: each returns the old value.
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_add(T *p, detail::nd<T> v) { return detail::checked_rmw<S, O, detail::Rmw::add>(p, v); }
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_exchange(T *p, detail::nd<T> v) { return detail::checked_rmw<S, O, detail::Rmw::exch>(p, v); }
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_and(T *p, detail::nd<T> v) { return detail::checked_rmw<S, O, detail::Rmw::and_>(p, v); }
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_or(T *p, detail::nd<T> v) { return detail::checked_rmw<S, O, detail::Rmw::or_>(p, v); }
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_xor(T *p, detail::nd<T> v) { return detail::checked_rmw<S, O, detail::Rmw::xor_>(p, v); }

// ---- polling ----------------------------------------------------------------------------
/** An acquire load at system scope (an atomic, or volatile asm: re-read on every iteration). */
template <class T>
ROCSHMEM_DEV_INLINE std::remove_cv_t<T> poll_load(const T *p) {
  using U = std::remove_cv_t<T>;
  detail::check_word<U>();
  return detail::load<Scope::system, Order::acquire>(const_cast<const U *>(p));
}

}  // namespace platform
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_PLATFORM_HPP
