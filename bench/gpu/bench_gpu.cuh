/* bench_gpu.cuh: the harness shared by the GPU benchmarks (the .cu files of bench/gpu).
 *
 * Output, one line per fact, for scripts/bench-nvidia.sh to merge:
 *   R <op> <size> <unit> <value>        a result (PE 0); the median over timed repetitions
 *   V <op> <size> ok|FAIL <details>     the check of that configuration (the PE that checked)
 *   I <pe> <init ms> <finalize ms>      every PE, at the end
 *   D <pe> <device> <PCI bus id>        every PE, after init
 * Anything else is for humans. A result counts only when its configuration's check passed.
 *
 * Method: warm-up first; each timed repetition is one kernel launch (cudaEvent time for the
 * bandwidth kernels, the device clock %globaltimer around the timed loop for latencies, which
 * leaves launch skew between the PEs out); the reported value is the median over repetitions.
 * Data is random and non-zero, generated from a seed per configuration, and the receiving PE
 * checks it once per configuration (every iteration of the check launch for ping-pongs).
 */
#ifndef BENCH_GPU_BENCH_GPU_CUH
#define BENCH_GPU_BENCH_GPU_CUH

#include "shmem_adapter.cuh"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace bg {

extern int me, npes, peer;
extern cudaStream_t st;
extern double scale;  // BENCH_SCALE: multiplies iteration counts (default 1)

void check_cuda(cudaError_t e, const char *what, const char *file, int line);

/** Iterations scaled by BENCH_SCALE, at least lo. */
inline long iters(long n, long lo = 1) {
  long v = (long)((double)n * scale);
  return v < lo ? lo : v;
}

double now_s();
double median(std::vector<double> v);

/** Host stream sync, then the library's host barrier. */
void sync_barrier();

void result(const char *op, size_t size, const char *unit, double value);
/** Prints the V line; returns ok. */
bool verdict(const char *op, size_t size, bool ok, const char *detail);

/** Device-side scratch: [0] error count, [1] first bad index, [2] got, [3] expected,
 * [4..7] times (ns). Zeroed by reset_scratch. */
extern unsigned long long *d_scratch;
void reset_scratch();
void read_scratch(unsigned long long out[8]);

/** Fills words [0, nwords) of p with random non-zero values of (seed, index). */
void fill(uint32_t *p, size_t nwords, uint64_t seed);
/** Counts words of p that differ from fill(seed) in [0, nwords), and poison words that differ
 * from 0 in [nwords, nwords + guard). Returns the bad-word count; details in *detail. */
unsigned long long check(const uint32_t *p, size_t nwords, size_t guard, uint64_t seed, std::string *detail);

/** A seed for one configuration (the same on every PE). */
uint64_t seed_of(const char *op, size_t size, uint64_t extra = 0);

/** Launches a kernel; sync_kernel: one that waits for other PEs (NVSHMEM: collective launch). */
template <class... P, class... A>
void launch(bool sync_kernel, void (*k)(P...), unsigned grid, unsigned block, A... a) {
  static_assert(sizeof...(P) == sizeof...(A), "argument count");
  std::tuple<P...> t(static_cast<P>(a)...);
  void *args[sizeof...(P) + 1];
  std::apply([&](auto &...x) {
    int i = 0;
    ((args[i++] = (void *)&x), ...);
  }, t);
  cudaError_t e = sync_kernel ? sh_launch_sync_kernel((const void *)k, dim3(grid), dim3(block), args, st)
                              : cudaLaunchKernel((const void *)k, dim3(grid), dim3(block), args, 0, st);
  check_cuda(e, "kernel launch", __FILE__, __LINE__);
}

}  // namespace bg

#define CK(x) bg::check_cuda((x), #x, __FILE__, __LINE__)

/* ---- device helpers --------------------------------------------------------------------- */

__device__ __forceinline__ unsigned long long bg_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/** The benchmark data: a non-zero 32-bit value of (seed, index) (splitmix64). */
__host__ __device__ __forceinline__ uint32_t bg_val(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  uint32_t v = (uint32_t)(z ^ (z >> 32));
  return v ? v : 0x5bd1e995u;
}

/** Records a failure in the scratch words (first one's details kept). */
__device__ __forceinline__ void bg_kfail(unsigned long long *scratch, unsigned long long at, unsigned long long got,
                                         unsigned long long want) {
  if (atomicAdd(&scratch[0], 1ULL) == 0) {
    scratch[1] = at;
    scratch[2] = got;
    scratch[3] = want;
  }
}

/* ---- the benchmarks (one source each) --------------------------------------------------- */
void bench_put_bw(char *a, char *b, size_t max_bytes);  // bench_rma_bw.cu
void bench_get_bw(char *a, char *b, size_t max_bytes);  // bench_rma_bw.cu
void bench_p_quiet(void *small);                        // bench_p.cu
void bench_p_pingpong(void *small);                     // bench_p.cu
void bench_signal_pingpong(char *a, char *b, void *small, size_t max_bytes);  // bench_signal.cu
void bench_atomics(void *small);                        // bench_amo.cu
void bench_device_barriers(void *small);                // bench_sync.cu
void bench_host_barrier(void *small);                   // bench_sync.cu
void bench_collectives(char *a, char *b, size_t max_bytes);              // bench_coll.cu
void bench_on_stream(char *a, char *b, void *small, size_t max_bytes);   // bench_stream.cu

/* Collective data and checks (bench_coll.cu; bench_stream.cu's reduce uses them too). */
enum { COLL_REDUCE = 0, COLL_BCAST = 1, COLL_ALLTOALL = 2, COLL_FCOLLECT = 3 };
/** Fresh random source data of collective `op` (S = bytes) in src, dest and its guard zeroed. */
void coll_prepare(int op, char *dst, char *src, size_t bytes, uint64_t seed);
/** Checks this PE's dest after one collective `op`; prints the V line; returns ok. */
bool coll_verify(int op, const char *opname, const char *dst, size_t bytes, uint64_t seed);

/** Bytes of the small symmetric area (flags, slots, counters) every benchmark may use. */
#define BG_SMALL_BYTES 4096

#endif
