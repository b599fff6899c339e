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
 *  platform id        kPlatform (0 host, 1 amd, 2 nvidia, as rocshmem_device_state::platform)
 *
 * Macros: ROCSHMEM_DEV (declares a device function: __device__ on GPUs, nothing on host),
 * ROCSHMEM_DEV_INLINE (forced-inline device function), ROCSHMEM_DEVICE_PASS (1 while compiling
 * device code: the GPU device pass, or always on host), ROCSHMEM_GPU_DEVICE_PASS (1 only in a
 * GPU's device pass).
 */
#ifndef ROCSHMEM_DEVICE_PLATFORM_HPP
#define ROCSHMEM_DEVICE_PLATFORM_HPP

#include <stdint.h>
#include <stddef.h>

namespace rocshmem {
namespace platform {
enum class Scope { wg, device, system };
enum class Order { relaxed, acquire, release, acq_rel };
}  // namespace platform
}  // namespace rocshmem

#if defined(__HIP__) || defined(__HIPCC__)
#include "amd.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS ROCSHMEM_DEVICE_PASS
#elif defined(__CUDACC__) || defined(__CUDA__)
#include "nvidia.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS ROCSHMEM_DEVICE_PASS
#else
#include "host.hpp"
#define ROCSHMEM_GPU_DEVICE_PASS 0
#endif

#endif  // ROCSHMEM_DEVICE_PLATFORM_HPP
