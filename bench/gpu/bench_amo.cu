/* Atomic latencies, one thread on PE 0 against a counter on PE 1 (device clock over the timed
 * loop, after warm-up; time per operation).
 *
 * Fetching (each waits for its result):
 *   int_atomic_fetch_add_rtt_1thread       fetch_add(ctr, 1): the n-th returns n - 1
 *   int_atomic_compare_swap_rtt_1thread    compare_swap(ctr, n - 1, n): succeeds every time, so
 *                                          the n-th returns n - 1
 * Non-fetching, each followed by quiet (the time until the update is complete at the target):
 *   int_atomic_add+quiet_1thread           add(ctr, v) with random non-zero v
 *   int_atomic_inc+quiet_1thread           inc(ctr)
 * Checked in every launch: every returned value (fetching kinds), and PE 1's final counter
 * (every kind: the count, or for add the 32-bit sum of every value added).
 */
#include "bench_gpu.cuh"

using namespace bg;

enum { AMO_FETCH_ADD = 0, AMO_COMPARE_SWAP = 1, AMO_ADD_QUIET = 2, AMO_INC_QUIET = 3 };

/** The value added by operation k (AMO_ADD_QUIET): random, non-zero, small. */
__host__ __device__ __forceinline__ int amo_addend(uint64_t seed, uint64_t k) {
  return (int)(bg_val(seed, k) & 0xffffu) | 1;
}

template <int KIND>
static __global__ void k_amo(int *ctr, int pe, uint64_t seed, long base, long warm, long n,
                             unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 0; i < warm + n; ++i) {
    if (i == warm) t0 = bg_clock_ns();
    const long k = base + i;
    if (KIND == AMO_FETCH_ADD || KIND == AMO_COMPARE_SWAP) {
      int old = KIND == AMO_FETCH_ADD ? sh_int_atomic_fetch_add(ctr, 1, pe)
                                      : sh_int_atomic_compare_swap(ctr, (int)k, (int)(k + 1), pe);
      if (old != (int)k) bg_kfail(scratch, (unsigned long long)i, (unsigned)old, (unsigned)k);
    } else {
      if (KIND == AMO_ADD_QUIET) sh_int_atomic_add(ctr, amo_addend(seed, (uint64_t)k), pe);
      if (KIND == AMO_INC_QUIET) sh_int_atomic_inc(ctr, pe);
      sh_quiet();
    }
  }
  scratch[4] = bg_clock_ns() - t0;
}

template <int KIND>
static void one(int *ctr, const char *op) {
  CK(cudaMemsetAsync(ctr, 0, 64, st));
  sync_barrier();
  const uint64_t seed = seed_of(op, 4);
  const long warm = 200, n = iters(20000, 1000);
  const int timed = (int)iters(7, 3);
  long base = 0;
  uint32_t want_sum = 0;  // AMO_ADD_QUIET: the 32-bit sum of every addend
  std::vector<double> us;
  unsigned long long bad = 0;
  char detail[160] = "";
  for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
    if (me == 0) {
      reset_scratch();
      launch(false, k_amo<KIND>, 1, 1, ctr, peer, seed, base, warm, n, d_scratch);
      unsigned long long s[8];
      read_scratch(s);
      if (s[0] && !bad)
        snprintf(detail, sizeof detail, "launch_%d:%llu_bad,first_op_%llu:got_%lld,want_%lld", t, s[0], s[1],
                 (long long)(int)s[2], (long long)(int)s[3]);
      bad += s[0];
      if (t > 0) us.push_back((double)s[4] * 1e-3 / (double)n);
    }
    if (KIND == AMO_ADD_QUIET)
      for (long i = 0; i < warm + n; ++i) want_sum += (uint32_t)amo_addend(seed, (uint64_t)(base + i));
    base += warm + n;
    sync_barrier();
  }
  if (me == 0) {
    verdict(op, 4, bad == 0, detail);
    result(op, 4, "us", median(us));
  } else {
    int got = 0;
    CK(cudaMemcpy(&got, ctr, sizeof got, cudaMemcpyDeviceToHost));
    const uint32_t want = KIND == AMO_ADD_QUIET ? want_sum : (uint32_t)base;
    char d[96];
    snprintf(d, sizeof d, "final_counter_0x%x,want_0x%x", (unsigned)got, (unsigned)want);
    verdict(op, 4, (uint32_t)got == want, (uint32_t)got == want ? "" : d);
  }
}

void bench_atomics(void *small) {
  int *ctr = static_cast<int *>(small);
  one<AMO_FETCH_ADD>(ctr, "int_atomic_fetch_add_rtt_1thread");
  one<AMO_COMPARE_SWAP>(ctr, "int_atomic_compare_swap_rtt_1thread");
  one<AMO_ADD_QUIET>(ctr, "int_atomic_add+quiet_1thread");
  one<AMO_INC_QUIET>(ctr, "int_atomic_inc+quiet_1thread");
}
