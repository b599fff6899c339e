/**
 * @file dtest.hpp
 * The harness of the device functional tests (rocshmem_device_tests): one source for every
 * platform.
 *
 *  - Host platform (plain C++, no GPU): kernels run on CPU threads started by librocshmem's
 *    launcher (<rocshmem/host_kernel.hpp>, rocshmem_host_launch).
 *  - HIP (hipcc) or CUDA through the HIP compat layer (nvcc with include/rocshmem/compat on the
 *    include path): hipLaunchKernelGGL + hipDeviceSynchronize; symmetric memory is device
 *    memory, so the host only touches it through dt::to_host / dt::to_dev.
 *
 * Kernels are plain `__global__ void k(...)` functions using threadIdx/blockIdx/blockDim/
 * gridDim/warpSize/__syncthreads with 1-D grids and blocks, launched with dt::launch(k, grid,
 * block, args...). Work-group shared variables are declared with DT_SHARED(type, name).
 * Every buffer a kernel touches comes from rocshmem_malloc (dt::alloc, collective).
 *
 * Checks in kernels go through dt_kfail(kerr, code, at, expected, got): the first failure's
 * details are kept and the host reports them after the launch (dt::check_kernel).
 */
#ifndef ROCSHMEM_DTEST_HPP
#define ROCSHMEM_DTEST_HPP

#if defined(__HIPCC__) || defined(__CUDACC__)
#define DT_GPU 1
#include <hip/hip_runtime.h>
#else
#define DT_GPU 0
#endif

#include <rocshmem/rocshmem.hpp>

#if !DT_GPU
#include <rocshmem/host_kernel.hpp>
#endif

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace rocshmem;

/* The tests call the rocSHMEM 2.x names on purpose: no deprecation warnings (nvcc's front end
 * ignores GCC's pragma; the build adds -Wno-deprecated-declarations for GCC and clang). */
#if defined(__CUDACC__) && !defined(__HIP__)
#pragma nv_diag_suppress 1444
#endif

#define DT_DEV __device__
#define DT_HD __host__ __device__

typedef unsigned long long dt_u64;

/* ---- work-group shared variables ------------------------------------------------------ */

/** Most work-groups a launch may have (host platform: DT_SHARED storage per work-group). */
#define DT_MAX_WG 1024

#if DT_GPU
#define DT_SHARED(T, name) __shared__ T name
#else
/* No __shared__ on the host platform: one static slot per work-group, indexed by blockIdx
 * (a process runs one launch at a time). */
#define DT_SHARED(T, name)                \
  static T name##_dt_per_wg[DT_MAX_WG];   \
  T &name = name##_dt_per_wg[blockIdx.x]
#endif

/* ---- ids (1-D grids and blocks) ------------------------------------------------------- */

DT_DEV inline unsigned dt_tid() { return threadIdx.x; }
DT_DEV inline unsigned dt_bid() { return blockIdx.x; }
DT_DEV inline unsigned dt_bdim() { return blockDim.x; }
DT_DEV inline unsigned dt_gdim() { return gridDim.x; }
DT_DEV inline unsigned dt_gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }
DT_DEV inline unsigned dt_nthreads() { return gridDim.x * blockDim.x; }
DT_DEV inline unsigned dt_ws() { return (unsigned)warpSize; }
DT_DEV inline unsigned dt_lane() { return threadIdx.x % (unsigned)warpSize; }
DT_DEV inline unsigned dt_wave() { return threadIdx.x / (unsigned)warpSize; }
DT_DEV inline unsigned dt_wpb() { return (blockDim.x + (unsigned)warpSize - 1) / (unsigned)warpSize; }
/** Lanes present in the caller's wave (the last wave of a block may be partial). */
DT_DEV inline unsigned dt_wave_lanes() {
  unsigned first = dt_wave() * (unsigned)warpSize, left = blockDim.x - first;
  return left < (unsigned)warpSize ? left : (unsigned)warpSize;
}

/* ---- device atomics on the harness's own words --------------------------------------- */

DT_DEV inline dt_u64 dt_atomic_add(dt_u64 *p, dt_u64 v) {
#if DT_GPU
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

DT_DEV inline dt_u64 dt_atomic_cas(dt_u64 *p, dt_u64 expected, dt_u64 desired) {
#if DT_GPU
  return atomicCAS(p, expected, desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
#endif
}

/** A fresh read of a value another PE writes (no caching across iterations). */
template <class T>
DT_DEV inline T dt_volatile_load(const T *p) {
  if constexpr (std::is_scalar<T>::value) {
    return *const_cast<const volatile T *>(p);
  } else {  // __half, __hip_bfloat16: byte by byte
    T v;
    const volatile unsigned char *s = reinterpret_cast<const volatile unsigned char *>(p);
    unsigned char *d = reinterpret_cast<unsigned char *>(&v);
    for (size_t i = 0; i < sizeof(T); ++i) d[i] = s[i];
    return v;
  }
}

/** Same bits (works for the 16-bit float structs too; no memcmp in device code). */
template <class T>
DT_DEV inline bool dt_same(const T &a, const T &b) {
  const unsigned char *x = reinterpret_cast<const unsigned char *>(&a), *y = reinterpret_cast<const unsigned char *>(&b);
  for (size_t i = 0; i < sizeof(T); ++i)
    if (x[i] != y[i]) return false;
  return true;
}

/* ---- kernel-side failure reports ------------------------------------------------------ */

/** kerr layout: [0] failures, [1] first code, [2] at, [3] expected, [4] got, [5] PE/extra. */
#define DT_KERR_WORDS 8

/** What a kernel check is about (printed by the host). */
enum DtCode {
  KC_NONE = 0,
  KC_CTX_CREATE,     // rocshmem_wg_(team_)ctx_create failed: at = block, got = return value
  KC_DATA,           // data checked in the kernel: at = index, expected, got
  KC_RET,            // a call returned non-zero: at = call index, got = return value
  KC_WAIT_VALUE,     // value after a wait: at = index, expected, got
  KC_TEST,           // rocshmem_*_test result: at = phase, expected, got
  KC_ANY_INDEX,      // wait_until_any index: at = phase, expected, got
  KC_SOME,           // wait_until_some result: at = phase, expected, got
  KC_SIGNAL,         // signal value: at = unit, expected, got
  KC_PTR,            // rocshmem_ptr result: at = pe, expected (1 non-NULL, 0 NULL), got
  KC_TEAM,           // team / ctx query: at = what, expected, got
  KC_COUNT           // counter after a barrier: at = round, expected, got
};

DT_DEV inline void dt_kfail(dt_u64 *kerr, int code, dt_u64 at, dt_u64 expected, dt_u64 got) {
  if (dt_atomic_cas(&kerr[1], 0, (dt_u64)code) == 0) {
    kerr[2] = at;
    kerr[3] = expected;
    kerr[4] = got;
  }
  dt_atomic_add(&kerr[0], 1);
}

/* ---- values anyone can recompute ------------------------------------------------------ */

DT_HD inline uint64_t dt_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** The stream (seed, pe, salt): element i is dt_at(dt_key(seed, pe, salt), i). */
DT_HD inline uint64_t dt_key(uint64_t seed, int pe, uint64_t salt) {
  return dt_mix(seed ^ dt_mix(0x632be59bd9b4e019ULL * (uint64_t)(pe + 1)) ^ dt_mix(salt * 0x85ebca6b0ULL + 17));
}
DT_HD inline uint64_t dt_at(uint64_t key, uint64_t i) { return dt_mix(key + (i + 1) * 0x9e3779b97f4a7c15ULL); }

/* ---- contexts in kernels -------------------------------------------------------------- */

/** How a kernel reaches its context. */
enum DtCtxMode {
  CM_PLAIN = 0,    // the context-less names (default context)
  CM_DEFAULT = 1,  // the rocshmem_ctx_ names with ROCSHMEM_CTX_DEFAULT
  CM_WG = 2,       // rocshmem_ctx_ names with a context from rocshmem_wg_ctx_create
  CM_TEAM = 3      // rocshmem_ctx_ names with rocshmem_wg_team_create_ctx(team)
};

/** Work-group collective: sets *ctx (a DT_SHARED variable) for the mode; false on failure. */
DT_DEV inline bool dt_open_ctx(int mode, rocshmem_team_t team, rocshmem_ctx_t *ctx, dt_u64 *kerr) {
  int ret = 0;
  if (mode == CM_WG) {
    ret = rocshmem_wg_ctx_create(0, ctx);
  } else if (mode == CM_TEAM) {
    ret = rocshmem_wg_team_create_ctx(team, 0, ctx);
  } else {
    if (dt_tid() == 0) *ctx = ROCSHMEM_CTX_DEFAULT;
    __syncthreads();
  }
  if (ret != 0) {
    if (dt_tid() == 0) dt_kfail(kerr, KC_CTX_CREATE, dt_bid(), 0, (dt_u64)(int64_t)ret);
    return false;
  }
  return true;
}

/** Work-group collective: gives back a context dt_open_ctx created. */
DT_DEV inline void dt_close_ctx(int mode, rocshmem_ctx_t *ctx) {
  if (mode == CM_WG || mode == CM_TEAM) rocshmem_wg_ctx_destroy(ctx);
}

DT_DEV inline void dt_quiet(int mode, rocshmem_ctx_t ctx) {
  if (mode == CM_PLAIN) rocshmem_quiet();
  else rocshmem_ctx_quiet(ctx);
}

DT_DEV inline void dt_fence(int mode, rocshmem_ctx_t ctx) {
  if (mode == CM_PLAIN) rocshmem_fence();
  else rocshmem_ctx_fence(ctx);
}

/* ---- the host side -------------------------------------------------------------------- */

namespace dt {

struct Opts {
  unsigned w = 2;                 // work-groups per launch (-w)
  unsigned z = 64;                // threads per work-group (-z)
  size_t max_bytes = 262144;      // largest transfer (-s)
  bool light = false;             // fewer element types (-L: for many oversubscribed PEs)
};

/** A team the tests use, as this PE sees it. */
struct Team {
  const char *name = "world";
  rocshmem_team_t h = ROCSHMEM_TEAM_INVALID;
  int my = -1;             // this PE's number in the team, -1 if not a member
  int n = 0;               // members
  std::vector<int> world;  // world PE of each member
  bool member() const { return my >= 0; }
};

extern Opts opt;
extern int me, npes;
extern uint64_t seed;
extern std::string test;     // the test being run
extern long nfail;           // failures of this test on this PE
extern dt_u64 *kerr;         // DT_KERR_WORDS symmetric words for kernel-side checks
extern Team world, rest, evens, odds;  // see dtest_main.cpp

/** Records a failure: "FAIL <test>: PE <me>: <message>" (the first few are printed). */
void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** failf unless ok; returns ok. */
bool checkf(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** A fresh salt for a launch's data (the same sequence on every PE). */
uint64_t next_salt();

/** rocshmem_malloc (collective), aborting the test on failure. */
void *alloc(size_t bytes);
template <class T>
T *alloc_n(size_t n) {
  return static_cast<T *>(alloc(n * sizeof(T) + 1));
}
void release(void *p);

/** Host <-> symmetric (device) memory. to_host is complete when it returns; to_dev and
 *  dev_zero are NOT (hipMemcpy from pageable host memory returns once the bytes are staged,
 *  hipMemset is asynchronous with respect to the host): they are ordered before this PE's next
 *  launch and to_host, and before other PEs only by dt::barrier (see device_sync). */
void to_host(void *dst, const void *dev_src, size_t bytes);
void to_dev(void *dev_dst, const void *src, size_t bytes);
void dev_zero(void *dev, size_t bytes);
/** Waits until this PE's copies, fills and kernels have reached memory (hipDeviceSynchronize;
 *  host platform: the emulated copy queue, see dtest_main.cpp). */
void device_sync();

/** Bytes of the stream (seed, pe, salt), recomputable on any PE. */
void fill(void *host, size_t bytes, int pe, uint64_t salt);
/** fill() into symmetric memory. */
void dev_fill(void *dev, size_t bytes, int pe, uint64_t salt);

/** device_sync, then rocshmem_barrier_all: after it every PE's earlier to_dev / dev_zero has
 *  landed, so a peer's kernel can neither read stale data nor have its puts overwritten by a
 *  late fill. (rocshmem_barrier_all orders host code only, as upstream's and NVSHMEM's.) */
void barrier();

/** The launch's wave size (host platform: ROCSHMEM_HOST_WAVE_SIZE; GPU: the device's). */
unsigned wave_size();

/** After a launch: reports (and clears) what the kernel recorded in kerr. */
void check_kernel(const std::string &what);

/** Compares n elements of size esz; reports the first mismatch with its index and the count. */
bool compare(const void *got, const void *expected, size_t n, size_t esz, const std::string &what);

/** Hex of an element of size esz. */
std::string hex(const void *p, size_t esz);

/** printf into a std::string. */
std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

#if DT_GPU
void hip_check(hipError_t e, const char *what);
#endif

/** Runs kernel(args...) on grid x block threads and waits for it. */
template <class... P, class... A>
void launch(void (*kernel)(P...), unsigned grid, unsigned block, A &&...args) {
  static_assert(sizeof...(P) == sizeof...(A), "dt::launch: wrong number of kernel arguments");
#if DT_GPU
  hipLaunchKernelGGL(kernel, dim3(grid), dim3(block), 0, 0, static_cast<P>(std::forward<A>(args))...);
  hip_check(hipGetLastError(), "kernel launch");
  hip_check(hipDeviceSynchronize(), "hipDeviceSynchronize");
#else
  device_sync();  // the stream's earlier copies land before the kernel starts
  rocshmem_host_launch(kernel, dim3(grid), dim3(block), std::forward<A>(args)...);
#endif
}

/* 16-bit floats <-> float, round to nearest even. */
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

/** Byte sizes: the list below filtered by cap and -s. */
std::vector<size_t> sizes_upto(size_t cap);

}  // namespace dt

/** A test: name, function, and whether `-t all-quick` runs it. */
struct DtTest {
  const char *name;
  void (*fn)();
  bool quick;
  const char *what;
};

void dt_register_rma(std::vector<DtTest> &v);
void dt_register_amo(std::vector<DtTest> &v);
void dt_register_sync(std::vector<DtTest> &v);
void dt_register_coll(std::vector<DtTest> &v);
void dt_register_tile(std::vector<DtTest> &v);
void dt_register_triton(std::vector<DtTest> &v);

#endif  // ROCSHMEM_DTEST_HPP
