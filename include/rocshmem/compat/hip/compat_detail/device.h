/**
 * @file hip/compat_detail/device.h
 * rocSHMEM HIP-on-CUDA compatibility layer: device-side builtins (included by hip_runtime.h
 * when compiling CUDA). Not meant to be included directly.
 *
 * Wave (warp) intrinsics keep HIP's signatures: __ballot returns 64 bits, __shfl* take no mask.
 * On NVIDIA a wave is a 32-lane warp, so the upper 32 bits of a ballot are always zero; code
 * that assumes 64-lane waves must use warpSize instead.
 *
 * Masks: __ballot, __any and __all act on the lanes that are active (HIP's meaning, so
 * `__ballot(1)` gives the active lanes); the __shfl family names all 32 lanes, so every lane of
 * the warp must reach the call (as with HIP's shuffles in converged code).
 *
 * CUDA declares deprecated non-_sync __ballot/__any/__all/__shfl* with other signatures (and
 * they do not compile for sm_70+), so these names are function-like macros onto namespace
 * hip_compat. Only `name(` is rewritten. CUDA's half-precision headers (which declare __shfl
 * overloads) and libcu++'s header with a constructor named __any(...) are included by
 * hip_runtime.h before the macros. Another header included later that declares a function
 * named __any, __all, __ballot, __shfl, __shfl_up, __shfl_down, __shfl_xor or abort would be
 * rewritten too: include it before <hip/hip_runtime.h>, or wrap it as hip_cooperative_groups.h
 * does (push_macro / pop_macro).
 */
#ifndef ROCSHMEM_COMPAT_HIP_DEVICE_H
#define ROCSHMEM_COMPAT_HIP_DEVICE_H

#include <type_traits>

namespace hip_compat {

/** 64-bit mask of the active lanes whose predicate is non-zero. */
__device__ inline unsigned long long ballot(int predicate) {
  return static_cast<unsigned long long>(__ballot_sync(__activemask(), predicate));
}
/** Non-zero if the predicate is non-zero on any active lane. */
__device__ inline int any(int predicate) { return __any_sync(__activemask(), predicate); }
/** Non-zero if the predicate is non-zero on every active lane. */
__device__ inline int all(int predicate) { return __all_sync(__activemask(), predicate); }

constexpr unsigned int kFullWarp = 0xFFFFFFFFu;

/* HIP's shuffle overloads (the types ROCm declares them for). */
#define ROCSHMEM_HIP_COMPAT_SHFL(T)                                                      \
  __device__ inline T shfl(T var, int src_lane, int width = warpSize) {                  \
    return __shfl_sync(kFullWarp, var, src_lane, width);                                 \
  }                                                                                      \
  __device__ inline T shfl_up(T var, unsigned int lane_delta, int width = warpSize) {    \
    return __shfl_up_sync(kFullWarp, var, lane_delta, width);                            \
  }                                                                                      \
  __device__ inline T shfl_down(T var, unsigned int lane_delta, int width = warpSize) {  \
    return __shfl_down_sync(kFullWarp, var, lane_delta, width);                          \
  }                                                                                      \
  __device__ inline T shfl_xor(T var, int lane_mask, int width = warpSize) {             \
    return __shfl_xor_sync(kFullWarp, var, lane_mask, width);                            \
  }
ROCSHMEM_HIP_COMPAT_SHFL(int)
ROCSHMEM_HIP_COMPAT_SHFL(unsigned int)
ROCSHMEM_HIP_COMPAT_SHFL(long)
ROCSHMEM_HIP_COMPAT_SHFL(unsigned long)
ROCSHMEM_HIP_COMPAT_SHFL(long long)
ROCSHMEM_HIP_COMPAT_SHFL(unsigned long long)
ROCSHMEM_HIP_COMPAT_SHFL(float)
ROCSHMEM_HIP_COMPAT_SHFL(double)
#undef ROCSHMEM_HIP_COMPAT_SHFL

/* Other types CUDA can shuffle (__half, __half2, __nv_bfloat16, ...). */
template <class T, class = typename std::enable_if<!std::is_arithmetic<T>::value>::type>
__device__ inline T shfl(T var, int src_lane, int width = warpSize) {
  return __shfl_sync(kFullWarp, var, src_lane, width);
}
template <class T, class = typename std::enable_if<!std::is_arithmetic<T>::value>::type>
__device__ inline T shfl_up(T var, unsigned int lane_delta, int width = warpSize) {
  return __shfl_up_sync(kFullWarp, var, lane_delta, width);
}
template <class T, class = typename std::enable_if<!std::is_arithmetic<T>::value>::type>
__device__ inline T shfl_down(T var, unsigned int lane_delta, int width = warpSize) {
  return __shfl_down_sync(kFullWarp, var, lane_delta, width);
}
template <class T, class = typename std::enable_if<!std::is_arithmetic<T>::value>::type>
__device__ inline T shfl_xor(T var, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(kFullWarp, var, lane_mask, width);
}

}  // namespace hip_compat

/* Define ROCSHMEM_HIP_COMPAT_NO_WAVE_MACROS to keep these names CUDA's (then call
 * hip_compat::ballot, hip_compat::shfl, ... directly). */
#if !defined(ROCSHMEM_HIP_COMPAT_NO_WAVE_MACROS)
#define __ballot(predicate) ::hip_compat::ballot(predicate)
#define __any(predicate) ::hip_compat::any(predicate)
#define __all(predicate) ::hip_compat::all(predicate)
#define __shfl(...) ::hip_compat::shfl(__VA_ARGS__)
#define __shfl_up(...) ::hip_compat::shfl_up(__VA_ARGS__)
#define __shfl_down(...) ::hip_compat::shfl_down(__VA_ARGS__)
#define __shfl_xor(...) ::hip_compat::shfl_xor(__VA_ARGS__)
#endif

/** This thread's lane in its warp (0..31). */
__device__ inline unsigned int __lane_id() {
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

/* Lane masks relative to the calling lane, 64-bit as in HIP. */
__device__ inline unsigned long long __lanemask_lt() {
  unsigned int m;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}
__device__ inline unsigned long long __lanemask_le() {
  unsigned int m;
  asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(m));
  return m;
}
__device__ inline unsigned long long __lanemask_gt() {
  unsigned int m;
  asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(m));
  return m;
}
__device__ inline unsigned long long __lanemask_eq() {
  unsigned int m;
  asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(m));
  return m;
}

/** The multiprocessor the thread runs on (HIP: the compute unit). */
__device__ inline unsigned int __smid(void) {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/**
 * A constant-rate clock: CUDA's %globaltimer, in nanoseconds. ROCm's wall_clock64 counts a
 * fixed-frequency counter whose rate hipDeviceAttributeWallClockRate gives in kHz; here that
 * attribute is 1000000, so `ticks / rate_khz` is milliseconds on both platforms. The timer's
 * resolution is the hardware's (about a microsecond on some GPUs).
 */
__device__ inline long long wall_clock64() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return static_cast<long long>(t);
}

/** The SM cycle counter, as HIP names it besides clock64(). */
__device__ inline long long __clock64() { return clock64(); }

/*
 * abort() in device code stops the kernel with __trap() (the launch fails with an
 * unspecified launch failure); on the host it is the C library's abort. CUDA has no device
 * abort, so abort is a function-like macro. Define ROCSHMEM_HIP_COMPAT_NO_ABORT_MACRO before
 * including hip_runtime.h to leave abort alone.
 */
#if !defined(ROCSHMEM_HIP_COMPAT_NO_ABORT_MACRO)
__host__ __device__ inline void rocshmem_hip_compat_abort() {
#if defined(__CUDA_ARCH__)
  __trap();
#else
  abort();
#endif
}
namespace std {
using ::rocshmem_hip_compat_abort;
}
#define abort() rocshmem_hip_compat_abort()
#endif

/* HIP's launch helpers. */
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define hipLaunchKernelGGL(kernel_name, num_blocks, num_threads, mem_per_block, stream, ...) \
  do {                                                                                       \
    kernel_name<<<(num_blocks), (num_threads), (mem_per_block), (stream)>>>(__VA_ARGS__);    \
  } while (0)

/* Dynamic shared memory. */
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

/* HIP's older coordinate spellings. */
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

/* AMD-only launch: a call stops the compile. */
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtLaunchKernelGGL,
                                "use hipLaunchKernelGGL and time it with hipEventRecord")

#endif  // ROCSHMEM_COMPAT_HIP_DEVICE_H
