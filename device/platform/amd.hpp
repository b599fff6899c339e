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

#include <stddef.h>
#include <stdint.h>

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

// The atomic primitives of the contract (platform.hpp), on HIP's scoped builtins.
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T load(const T *p) {
  return __hip_atomic_load(p, builtin_order(O), hip_scope(S));
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void store(T *p, T v) {
  __hip_atomic_store(p, v, builtin_order(O), hip_scope(S));
}

template <Scope S, Order O, Rmw OP, class T>
ROCSHMEM_DEV_INLINE T rmw(T *p, T v) {
  constexpr int mo = builtin_order(O), sc = hip_scope(S);
  if constexpr (OP == Rmw::add) {
    return __hip_atomic_fetch_add(p, v, mo, sc);
  } else if constexpr (OP == Rmw::exch) {
    return __hip_atomic_exchange(p, v, mo, sc);
  } else if constexpr (OP == Rmw::and_) {
    return __hip_atomic_fetch_and(p, v, mo, sc);
  } else if constexpr (OP == Rmw::or_) {
    return __hip_atomic_fetch_or(p, v, mo, sc);
  } else {
    return __hip_atomic_fetch_xor(p, v, mo, sc);
  }
}

/** A fetch-add whose result is unused: the compiler picks the no-return instruction. */
template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE void red_add(T *p, T v) {
  (void)__hip_atomic_fetch_add(p, v, builtin_order(O), hip_scope(S));
}

template <Scope S, Order O, class T>
ROCSHMEM_DEV_INLINE T cas(T *p, T expected, T desired) {
  constexpr int mo = builtin_order(O), fail = builtin_order(load_order(O)), sc = hip_scope(S);
  __hip_atomic_compare_exchange_strong(p, &expected, desired, mo, fail, sc);
  return expected;
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

// ---- fences -----------------------------------------------------------------------------
ROCSHMEM_DEV_INLINE void fence_wg() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }
ROCSHMEM_DEV_INLINE void fence_device() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
ROCSHMEM_DEV_INLINE void fence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

/** A 64-bit word that no one writes while kernels run (core tables). */
ROCSHMEM_DEV_INLINE uint64_t load_readonly(const uint64_t *p) { return *p; }

// ---- polling ----------------------------------------------------------------------------
/** s_sleep takes a constant (units of 64 clocks): short at first, then ~8k clocks. */
ROCSHMEM_DEV_INLINE void backoff(uint32_t round) {
  if (round < 4)
    __builtin_amdgcn_s_sleep(1);
  else if (round < 16)
    __builtin_amdgcn_s_sleep(16);
  else
    __builtin_amdgcn_s_sleep(127);
}

// ---- trap -------------------------------------------------------------------------------
/** Stops the kernel (an error the launch reports) on a state device code cannot go on from. */
[[noreturn]] ROCSHMEM_DEV_INLINE void trap() { __builtin_trap(); }

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
