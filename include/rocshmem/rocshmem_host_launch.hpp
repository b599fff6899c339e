/**
 * @file rocshmem_host_launch.hpp
 * The host platform's kernel launcher: "GPU" threads are CPU threads.
 *
 * launch() starts every wave of every work-group at once (one CPU thread each, its lanes
 * fibers on that thread that switch where a lane waits: barriers, exchanges, back-off, park)
 * and returns when all have finished, so work-group barriers, wave exchanges and flags polled
 * between waves and blocks behave as on a GPU (a barrier some thread skips deadlocks, as on a
 * GPU). As on a GPU, where a wave's lanes run in lockstep, a lane that waits for another lane of
 * its own wave must wait through those calls (backoff() in its polling loop), never spin alone.
 * A wave's lanes share its CPU thread, so `thread_local` storage is per wave, not per lane.
 *
 * This header is shared by the device library's host platform (device/platform/host.hpp) and
 * by programs (<rocshmem/host_kernel.hpp>); the functions are in librocshmem.
 * Plain C++17; harmless, but unused, in a HIP or CUDA compile.
 */
#ifndef ROCSHMEM_HOST_LAUNCH_HPP
#define ROCSHMEM_HOST_LAUNCH_HPP

#include <stdint.h>

#include <type_traits>
#include <utility>

namespace rocshmem {
namespace platform {
namespace host {

/** Grid or block extent; x varies fastest in linear ids. */
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct Group;  // the launcher's work-group state (barrier, exchange slot)
struct Wave;   // the launcher's wave state (barrier, exchange slot)

/**
 * What a kernel thread knows about itself. Filled by launch() before the kernel starts and
 * read-only afterwards. The layout is shared by inline code in programs and the library.
 */
struct alignas(64) KernelThread {
  Dim3 thread_idx;  ///< position in the work-group
  Dim3 block_idx;   ///< position of the work-group in the grid
  Dim3 block_dim;   ///< work-group extent
  Dim3 grid_dim;    ///< grid extent, in work-groups
  uint32_t thread_id;        ///< linear id in the work-group (x fastest)
  uint32_t block_id;         ///< linear id of the work-group in the grid (x fastest)
  uint32_t block_size;       ///< threads per work-group
  uint32_t grid_size;        ///< work-groups in the grid
  uint32_t wave_size;        ///< 32 or 64, per launch
  uint32_t lane_id;          ///< thread_id % wave_size
  uint32_t wave_id;          ///< thread_id / wave_size
  uint32_t waves_per_block;  ///< ceil(block_size / wave_size)
  uint32_t wave_lanes;       ///< lanes present in this wave (the last may be partial)
  Group *group;
  Wave *wave;
};

/** The calling thread's state; nullptr outside a kernel (not a launcher thread). */
KernelThread *current();

/** Prints that `what` was called outside a kernel, then aborts. */
[[noreturn]] void outside_kernel(const char *what);

/** The calling thread's state; aborts with a message outside a kernel. */
inline const KernelThread &kernel_thread(const char *what = "a device function") {
  KernelThread *t = current();
  if (t == nullptr) outside_kernel(what);
  return *t;
}

/** True on the threads of a running kernel. */
inline bool in_kernel() { return current() != nullptr; }

/** Blocks until every thread of the caller's work-group has arrived (reusable). */
void group_barrier();
/** Blocks until every present lane of the caller's wave has arrived (reusable). */
void wave_barrier();
/**
 * A wave barrier that also hands lane `src_lane`'s v to every lane. src_lane is taken modulo
 * the wave size, as GPU shuffles do; a lane not present in a partial wave gives 0.
 */
uint64_t wave_exchange(uint64_t v, uint32_t src_lane);

/**
 * A work-group barrier that also hands thread `src_thread`'s v to every thread of the
 * work-group; src_thread >= the work-group size gives 0.
 */
uint64_t group_exchange(uint64_t v, uint32_t src_thread);

/**
 * One round of a polling loop (round = 0, 1, 2, ... since the wait began): on a kernel's lane,
 * lets the wave's other lanes run, and once all of them wait, backs off as one CPU thread polling
 * alone (spin, yield, then sleep 1 us doubling to 100 us, 1 ms after about 10 ms); elsewhere the
 * latter only.
 */
void backoff(uint32_t round);
/**
 * On a kernel's lane: lets the wave's other lanes run, and once all of them wait, parks the
 * thread as below on the word of the first lane that parked. Elsewhere:
 * sleeps until `*word` may have changed from `seen` (a futex on its low 32 bits, which on a
 * little-endian machine start at `word`), or a bound has passed (1 ms, doubling to 64 ms while
 * the same thread's parks on the same word time out): callers re-check and call again.
 * For words another thread of this process changes and then passes to unpark() (the RO
 * queue's slot sequence words: the proxy thread wakes the producer it answered).
 */
void park(const uint64_t *word, uint64_t seen);
/** Wakes every thread parked on `word`. */
void unpark(const uint64_t *word);

/** The wave size used when launch() gets 0: ROCSHMEM_HOST_WAVE_SIZE (32 or 64), else 64. */
unsigned default_wave_size();

/**
 * Runs kernel(arg) on grid.x*grid.y*grid.z work-groups of block.x*block.y*block.z threads,
 * all at once, and returns when every thread has returned. wave_size: 32, 64, or 0 for
 * default_wave_size(). Bad shapes (a zero extent, more than 1024 threads per work-group),
 * a bad wave size or a launch from inside a kernel print one line and abort.
 */
void launch(Dim3 grid, Dim3 block, unsigned wave_size, void (*kernel)(void *), void *arg);

/** launch() for any callable f(): every thread calls the same f (share it, or copy inside). */
template <class F>
void launch(Dim3 grid, Dim3 block, unsigned wave_size, F &&f) {
  using Fn = std::remove_reference_t<F>;
  launch(grid, block, wave_size, [](void *p) { (*static_cast<Fn *>(p))(); },
         const_cast<void *>(static_cast<const void *>(&f)));
}

}  // namespace host
}  // namespace platform
}  // namespace rocshmem

/** 1 on the threads of a running host-platform kernel, else 0 (for C and FFI callers). */
extern "C" int rocshmem_platform_host_in_kernel(void);

#endif  // ROCSHMEM_HOST_LAUNCH_HPP
