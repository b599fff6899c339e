/**
 * @file amd.hpp
 * The platform layer on AMD GPUs (hipcc, or clang -x hip; works with -nogpuinc too: only
 * clang builtins and two device-library functions are used). Included by platform.hpp;
 * see there for the contract.
 *
 * Waves are 64 lanes on CDNA (gfx9), 32 on RDNA when compiled for wave32. Block and grid
 * extents come from the device library (ockl), as HIP's blockDim/gridDim do, so that both
 * code object v4 and v5 dispatch layouts work.
 */
#ifndef ROCSHMEM_DEVICE_PLATFORM_AMD_HPP
#define ROCSHMEM_DEVICE_PLATFORM_AMD_HPP

#if __cplusplus < 201703L
#error "the rocshmem device platform layer needs C++17 (-std=c++17)"
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#define ROCSHMEM_DEV __attribute__((device))
#define ROCSHMEM_DEV_INLINE __attribute__((device)) __attribute__((always_inline)) inline
#if defined(__HIP_DEVICE_COMPILE__)
#define ROCSHMEM_DEVICE_PASS 1
#else
#define ROCSHMEM_DEVICE_PASS 0
#endif

// As HIP declares them (amd_hip_runtime.h); defined in ockl.bc.
extern "C" __attribute__((device)) __attribute__((const)) size_t __ockl_get_local_size(unsigned int);
extern "C" __attribute__((device)) __attribute__((const)) size_t __ockl_get_num_groups(unsigned int);

namespace rocshmem {
namespace platform {

constexpr unsigned kPlatform = 1;

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

// A load has no release half and a store no acquire half: each takes the half that applies.
constexpr int rmw_order(Order o) {
  return o == Order::relaxed   ? __ATOMIC_RELAXED
         : o == Order::acquire ? __ATOMIC_ACQUIRE
         : o == Order::release ? __ATOMIC_RELEASE
                               : __ATOMIC_ACQ_REL;
}
constexpr int load_order(Order o) {
  return (o == Order::acquire || o == Order::acq_rel) ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
}
constexpr int store_order(Order o) {
  return (o == Order::release || o == Order::acq_rel) ? __ATOMIC_RELEASE : __ATOMIC_RELAXED;
}
constexpr int hip_scope(Scope s) {
  return s == Scope::wg ? __HIP_MEMORY_SCOPE_WORKGROUP
         : s == Scope::device ? __HIP_MEMORY_SCOPE_AGENT
                              : __HIP_MEMORY_SCOPE_SYSTEM;
}

ROCSHMEM_DEV_INLINE uint32_t local_id() {
  return __builtin_amdgcn_workitem_id_x() +
         uint32_t(__ockl_get_local_size(0)) *
             (__builtin_amdgcn_workitem_id_y() + uint32_t(__ockl_get_local_size(1)) * __builtin_amdgcn_workitem_id_z());
}
}  // namespace detail

// ---- ids and sizes ----------------------------------------------------------------------
ROCSHMEM_DEV_INLINE uint32_t wave_size() {
#if __has_builtin(__builtin_amdgcn_wavefrontsize)
  return __builtin_amdgcn_wavefrontsize();
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
  return __AMDGCN_WAVEFRONT_SIZE;
#else
  return 64;  // host pass only: never executed
#endif
}
ROCSHMEM_DEV_INLINE uint32_t thread_id() { return detail::local_id(); }
ROCSHMEM_DEV_INLINE uint32_t block_size() {
  return uint32_t(__ockl_get_local_size(0) * __ockl_get_local_size(1) * __ockl_get_local_size(2));
}
ROCSHMEM_DEV_INLINE uint32_t block_id() {
  return __builtin_amdgcn_workgroup_id_x() +
         uint32_t(__ockl_get_num_groups(0)) *
             (__builtin_amdgcn_workgroup_id_y() + uint32_t(__ockl_get_num_groups(1)) * __builtin_amdgcn_workgroup_id_z());
}
ROCSHMEM_DEV_INLINE uint32_t grid_size() {
  return uint32_t(__ockl_get_num_groups(0) * __ockl_get_num_groups(1) * __ockl_get_num_groups(2));
}
// Hardware waves are consecutive linear ids, so the mbcnt lane equals thread_id() % wave.
ROCSHMEM_DEV_INLINE uint32_t lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
ROCSHMEM_DEV_INLINE uint32_t wave_id() { return thread_id() / wave_size(); }
ROCSHMEM_DEV_INLINE uint32_t waves_per_block() { return (block_size() + wave_size() - 1) / wave_size(); }
ROCSHMEM_DEV_INLINE uint32_t wave_lanes() {
  uint32_t rest = block_size() - wave_id() * wave_size();
  return rest < wave_size() ? rest : wave_size();
}

// ---- sync -------------------------------------------------------------------------------
// __syncthreads: the fences make writes before the barrier visible to the group after it.
ROCSHMEM_DEV_INLINE void wg_barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
ROCSHMEM_DEV_INLINE void wave_sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
/** Lane src_lane's v (src_lane modulo the wave size, as __shfl) to every lane. */
ROCSHMEM_DEV_INLINE uint64_t wave_broadcast(uint64_t v, uint32_t src_lane) {
  wave_sync();
  int addr = int((src_lane % wave_size()) << 2);  // ds_bpermute addresses bytes
  uint32_t lo = uint32_t(__builtin_amdgcn_ds_bpermute(addr, int(uint32_t(v))));
  uint32_t hi = uint32_t(__builtin_amdgcn_ds_bpermute(addr, int(uint32_t(v >> 32))));
  return uint64_t{hi} << 32 | lo;
}

/** Thread src_thread's v to every thread of the work-group, through one LDS word. */
ROCSHMEM_DEV_INLINE uint64_t wg_broadcast(uint64_t v, uint32_t src_thread) {
  __attribute__((shared)) uint64_t slot;  // one per work-group (function-scope LDS is static)
  wg_barrier();                           // the previous broadcast's readers are done with slot
  if (thread_id() == src_thread) slot = v;
  wg_barrier();
  return slot;
}

// ---- fences -----------------------------------------------------------------------------
ROCSHMEM_DEV_INLINE void fence_wg() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }
ROCSHMEM_DEV_INLINE void fence_device() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
ROCSHMEM_DEV_INLINE void fence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

// ---- atomics ----------------------------------------------------------------------------
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_load(const T *p) {
  detail::check_word<T>();
  constexpr int mo = detail::load_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_load(p, mo, sc);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void atomic_store(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::store_order(O), sc = detail::hip_scope(S);
  __hip_atomic_store(p, v, mo, sc);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_add(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_fetch_add(p, v, mo, sc);
}

/** Adds without returning the old value (the compiler picks the no-return instruction). */
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void atomic_add(T *p, detail::nd<T> v) {
  static_assert(O == Order::relaxed || O == Order::release, "atomic_add is relaxed or release");
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  (void)__hip_atomic_fetch_add(p, v, mo, sc);
}

/** Compare-and-swap; returns the old value (equal to expected when it succeeded). */
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_cas(T *p, detail::nd<T> expected, detail::nd<T> desired) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), fail = detail::load_order(O), sc = detail::hip_scope(S);
  __hip_atomic_compare_exchange_strong(p, &expected, desired, mo, fail, sc);
  return expected;
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_exchange(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_exchange(p, v, mo, sc);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_and(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_fetch_and(p, v, mo, sc);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_or(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_fetch_or(p, v, mo, sc);
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T atomic_fetch_xor(T *p, detail::nd<T> v) {
  detail::check_word<T>();
  constexpr int mo = detail::rmw_order(O), sc = detail::hip_scope(S);
  return __hip_atomic_fetch_xor(p, v, mo, sc);
}

/** A 64-bit word that no one writes while kernels run (core tables). */
ROCSHMEM_DEV_INLINE uint64_t load_readonly(const uint64_t *p) { return *p; }

// ---- polling ----------------------------------------------------------------------------
/** An acquire load at system scope (an atomic: re-read on every iteration). */
template <class T>
ROCSHMEM_DEV_INLINE std::remove_cv_t<T> poll_load(const T *p) {
  detail::check_word<std::remove_cv_t<T>>();
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
}

/** s_sleep takes a constant (units of 64 clocks): short at first, then ~8k clocks. */
ROCSHMEM_DEV_INLINE void backoff(uint32_t round) {
  if (round < 4)
    __builtin_amdgcn_s_sleep(1);
  else if (round < 16)
    __builtin_amdgcn_s_sleep(16);
  else
    __builtin_amdgcn_s_sleep(127);
}

/** park/unpark (platform.hpp): a GPU has no futex; the waiter polls with backoff(). */
ROCSHMEM_DEV_INLINE void park(const uint64_t *, uint64_t, uint32_t round) { backoff(round); }
ROCSHMEM_DEV_INLINE void unpark(const uint64_t *) {}

// ---- clock ------------------------------------------------------------------------------
/** The constant 100 MHz "real time" counter (CDNA, RDNA), in ns. */
ROCSHMEM_DEV_INLINE uint64_t clock_ns() {
#if __has_builtin(__builtin_readsteadycounter)
  return __builtin_readsteadycounter() * 10;
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__) || \
    defined(__gfx1150__) || defined(__gfx1151__)
  // gfx11 has no s_memrealtime: MSG_RTN_GET_REALTIME (the builtin needs clang >= 17).
#if __has_builtin(__builtin_amdgcn_s_sendmsg_rtnl)
  return __builtin_amdgcn_s_sendmsg_rtnl(0x83) * 10;
#else
  uint64_t t;
  __asm__ volatile("s_sendmsg_rtn_b64 %0, sendmsg(MSG_RTN_GET_REALTIME)\n\ts_waitcnt lgkmcnt(0)" : "=s"(t));
  return t * 10;
#endif
#else
  return __builtin_amdgcn_s_memrealtime() * 10;
#endif
}

}  // namespace platform
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_PLATFORM_AMD_HPP
