/*
 * Helpers shared by the HIP examples (not part of the rocSHMEM API): HIP error checks, random
 * data that every PE can regenerate for any other PE, and the result line; on the host
 * platform, the few HIP runtime calls the tile examples make.
 *
 * Data: each PE draws a fresh seed at start-up (or takes ROCSHMEM_EXAMPLE_SEED, to repeat a
 * run) and publishes it in a symmetric word; `value(seed, i)` is then known to every PE, so a
 * receiver checks what arrived against what the sender must have sent.
 */
#ifndef ROCSHMEM_EXAMPLE_UTIL_HPP
#define ROCSHMEM_EXAMPLE_UTIL_HPP

#if defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__) || defined(__CUDA__)
#include <hip/hip_runtime.h>

/** Work-group shared memory: `__shared__` on GPUs. */
#define EXAMPLE_SHARED(T, name) __shared__ T name
#else
/*
 * The host platform (a plain C++ compiler, no GPU): kernels run on CPU threads of the library's
 * launcher (<rocshmem/host_kernel.hpp>) and symmetric memory is host memory, so the few HIP
 * runtime calls the examples make are plain memory operations here, and hipLaunchKernelGGL
 * runs the kernel and returns when it is done. Only what the examples use.
 */
#include <rocshmem/host_kernel.hpp>

#include <string.h>

enum hipMemcpyKind { hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice,
                     hipMemcpyDefault };
inline hipError_t hipMemcpy(void *dst, const void *src, size_t bytes, hipMemcpyKind) {
  memmove(dst, src, bytes);
  return hipSuccess;
}
inline hipError_t hipMemset(void *dst, int value, size_t bytes) {
  memset(dst, value, bytes);
  return hipSuccess;
}
inline hipError_t hipDeviceSynchronize() { return hipSuccess; }
inline hipError_t hipGetLastError() { return hipSuccess; }
inline const char *hipGetErrorString(hipError_t e) { return e == hipSuccess ? "no error" : "error"; }
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  rocshmem_host_launch(kernel, dim3(grid), dim3(block), __VA_ARGS__)

/** Work-group shared memory: no __shared__ on the host platform, so one variable per
 *  work-group, chosen by blockIdx (a process runs one launch at a time). */
#define EXAMPLE_SHARED(T, name)              \
  static T name##_per_wg[1024];              \
  T &name = name##_per_wg[blockIdx.x]
#endif

#include <rocshmem/rocshmem.hpp>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <random>
#include <vector>

#define CHECK_HIP(cmd)                                                                              \
  do {                                                                                              \
    hipError_t e_ = (cmd);                                                                          \
    if (e_ != hipSuccess) {                                                                         \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #cmd, hipGetErrorString(e_)); \
      exit(2);                                                                                      \
    }                                                                                               \
  } while (0)

namespace example {

using namespace rocshmem;

/** A 64-bit mix of (seed, i): the value element i of a PE's data is derived from. */
inline uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** Element i of the int data seeded with `seed`: any int, or within [-lim, lim] if lim > 0. */
inline int value(uint64_t seed, uint64_t i, int lim = 0) {
  uint64_t z = mix(seed, i);
  if (lim > 0) return static_cast<int>(z % (2ULL * lim + 1)) - lim;
  return static_cast<int>(static_cast<uint32_t>(z));
}

/** Symmetric allocation that exits with a message when the heap is too small. */
template <typename T>
T *sym_alloc(size_t n) {
  T *p = static_cast<T *>(rocshmem_malloc(n * sizeof(T)));
  if (p == nullptr) {
    fprintf(stderr, "PE %d: rocshmem_malloc(%zu bytes) failed: raise ROCSHMEM_HEAP_SIZE\n", rocshmem_my_pe(),
            n * sizeof(T));
    rocshmem_global_exit(2);
  }
  return p;
}

/**
 * Every PE's seed for `round`: each PE draws its own, stores it in its symmetric word, and,
 * after a barrier, reads the others' with rocshmem_getmem from the host.
 */
class Seeds {
 public:
  Seeds() : word_(sym_alloc<uint64_t>(1)) {
    const char *fixed = getenv("ROCSHMEM_EXAMPLE_SEED");
    base_ = fixed ? strtoull(fixed, nullptr, 0) : (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                                      std::random_device{}();
  }
  ~Seeds() { rocshmem_free(word_); }
  /** Publishes this PE's seed of `round` and returns every PE's. A collective call. */
  const std::vector<uint64_t> &next(int round) {
    const int me = rocshmem_my_pe(), n = rocshmem_n_pes();
    uint64_t mine = mix(base_ ^ (static_cast<uint64_t>(me) << 48), static_cast<uint64_t>(round));
    CHECK_HIP(hipMemcpy(word_, &mine, sizeof mine, hipMemcpyHostToDevice));
    CHECK_HIP(hipDeviceSynchronize());
    rocshmem_barrier_all();
    all_.assign(n, 0);
    for (int p = 0; p < n; p++) rocshmem_getmem(&all_[p], word_, sizeof(uint64_t), p);
    rocshmem_barrier_all();  // nobody overwrites its word before every PE has read it
    return all_;
  }

 private:
  uint64_t *word_;
  uint64_t base_ = 0;
  std::vector<uint64_t> all_;
};

/** Counts mismatches and prints the first few, naming the seed so a run can be repeated. */
class Checker {
 public:
  explicit Checker(const char *name) : name_(name) {}
  void expect(bool ok, const char *what, size_t i, long long got, long long want, uint64_t seed) {
    if (ok) return;
    if (bad_++ < 8)
      fprintf(stderr, "%s: PE %d: %s[%zu] = %lld, expected %lld (seed 0x%" PRIx64 ")\n", name_, rocshmem_my_pe(),
              what, i, got, want, seed);
  }
  long bad() const { return bad_; }
  /** Prints the PE's result line; the exit status of main. */
  int finish() const {
    printf("%s: PE %d of %d: %s\n", name_, rocshmem_my_pe(), rocshmem_n_pes(), bad_ ? "[FAIL]" : "[PASS]");
    fflush(stdout);
    return bad_ ? 1 : 0;
  }

 private:
  const char *name_;
  long bad_ = 0;
};

/** Element counts every example runs through: one element, odd sizes, and a large one. */
inline std::vector<size_t> sizes(int argc, char **argv, size_t largest = 1 << 18) {
  if (argc > 1) return {static_cast<size_t>(strtoull(argv[1], nullptr, 0))};
  return {1, 7, 1000, 4099, largest};
}

}  // namespace example

#endif  // ROCSHMEM_EXAMPLE_UTIL_HPP
