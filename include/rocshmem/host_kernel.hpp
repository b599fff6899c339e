/**
 * @file host_kernel.hpp
 * HIP-style kernels on the host platform (no GPU): the same kernel source runs on CPU
 * threads started by librocshmem's launcher.
 *
 * In plain C++ this header provides:
 *  - __global__, __device__, __host__, __forceinline__, __launch_bounds__(...) (no effect);
 *  - threadIdx, blockIdx, blockDim, gridDim (.x .y .z of the calling kernel thread),
 *    warpSize (the launch's wave size, 32 or 64), __syncthreads();
 *  - dim3, and rocshmem_host_launch(kernel, grid, block, args...): runs `void kernel(P...)`
 *    on every thread of grid x block at once, each with its own copy of the arguments, and
 *    returns when all have finished. The wave size is ROCSHMEM_HOST_WAVE_SIZE (32 or 64),
 *    default 64.
 *  - streams for the stream-ordered calls (rocshmem_*_on_stream): hipStream_t, hipError_t,
 *    hipSuccess, hipStreamCreate, hipStreamSynchronize, hipStreamDestroy over the library's
 *    ordered host queues (rocshmem_host_stream_*); a NULL stream is the default queue.
 * Not provided: __shared__ (declare work-group memory outside the kernel and index it by
 * blockIdx), dynamic shared memory, <<<...>>>, launching your own kernels on a stream.
 *
 * threadIdx & co. and warpSize are macros (GCC has no property syntax): they are lvalues of
 * unsigned (int for warpSize), so `printf("%u", threadIdx.x)` works. Used outside a kernel
 * they print a message and abort.
 *
 * In a HIP or CUDA compile this header is empty: the compiler provides all of the above.
 */
#ifndef ROCSHMEM_HOST_KERNEL_HPP
#define ROCSHMEM_HOST_KERNEL_HPP

#if !(defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__))

#include <tuple>
#include <type_traits>
#include <utility>

#include "rocshmem_host_launch.hpp"

#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

#define threadIdx (::rocshmem::platform::host::kernel_thread("threadIdx").thread_idx)
#define blockIdx (::rocshmem::platform::host::kernel_thread("blockIdx").block_idx)
#define blockDim (::rocshmem::platform::host::kernel_thread("blockDim").block_dim)
#define gridDim (::rocshmem::platform::host::kernel_thread("gridDim").grid_dim)
#define warpSize (static_cast<int>(::rocshmem::platform::host::kernel_thread("warpSize").wave_size))

/** Every thread of the work-group waits here for the others (blocks; reusable). */
inline void __syncthreads() { ::rocshmem::platform::host::group_barrier(); }

/** HIP's dim3: dim3(4), dim3(8, 8), or an integer where a dim3 is expected. */
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(::rocshmem::platform::host::Dim3 d) : x(d.x), y(d.y), z(d.z) {}
  constexpr operator ::rocshmem::platform::host::Dim3() const { return {x, y, z}; }
};

/**
 * Runs kernel(args...) on grid x block threads at once, like kernel<<<grid, block>>>(args...)
 * followed by a device synchronize. Arguments are converted to the kernel's parameter types
 * once, here, and every thread receives its own copy.
 */
template <class... P, class... A>
void rocshmem_host_launch(void (*kernel)(P...), dim3 grid, dim3 block, A &&...args) {
  static_assert(sizeof...(P) == sizeof...(A), "rocshmem_host_launch: wrong number of kernel arguments");
  const std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
  ::rocshmem::platform::host::launch(grid, block, 0, [&params, kernel]() { std::apply(kernel, params); });
}

/* Streams: the library's ordered host queues (what rocshmem_*_on_stream runs on here). */
extern "C" {
int rocshmem_host_stream_create(void **stream);
int rocshmem_host_stream_synchronize(void *stream);
int rocshmem_host_stream_destroy(void *stream);
}
typedef struct ihipStream_t *hipStream_t;
typedef int hipError_t;
constexpr hipError_t hipSuccess = 0;
/** What the stream calls below return when the library reported an error (one line on stderr). */
constexpr hipError_t hipErrorUnknown = 999;

inline hipError_t hipStreamCreate(hipStream_t *stream) {
  void *s = nullptr;
  if (rocshmem_host_stream_create(&s) != 0) return hipErrorUnknown;
  *stream = static_cast<hipStream_t>(s);
  return hipSuccess;
}
/** Waits for the stream's operations; hipErrorUnknown if one of them failed. */
inline hipError_t hipStreamSynchronize(hipStream_t stream) {
  return rocshmem_host_stream_synchronize(stream) == 0 ? hipSuccess : hipErrorUnknown;
}
inline hipError_t hipStreamDestroy(hipStream_t stream) {
  return rocshmem_host_stream_destroy(stream) == 0 ? hipSuccess : hipErrorUnknown;
}

#endif  // not a GPU compile

#endif  // ROCSHMEM_HOST_KERNEL_HPP
