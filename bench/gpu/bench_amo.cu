/* Fetching atomic round trip.
 *
 * int_atomic_fetch_add_rtt_1thread: one thread on PE 0 adds 1 to a counter on PE 1 with
 *   int_atomic_fetch_add, back to back (each waits for its result); time per operation (device
 *   clock over the timed loop, after warm-up). Every returned value is checked in every launch
 *   (the n-th add returns n - 1), and PE 1 checks the final count.
 */
#include "bench_gpu.cuh"

using namespace bg;

static __global__ void k_fetch_add(int *ctr, int pe, long base, long warm, long n, unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 0; i < warm + n; ++i) {
    if (i == warm) t0 = bg_clock_ns();
    int old = sh_int_atomic_fetch_add(ctr, 1, pe);
    if (old != (int)(base + i)) bg_kfail(scratch, (unsigned long long)i, (unsigned)old, (unsigned)(base + i));
  }
  scratch[4] = bg_clock_ns() - t0;
}

void bench_fetch_add(void *small) {
  int *ctr = static_cast<int *>(small);
  CK(cudaMemsetAsync(small, 0, BG_SMALL_BYTES, st));
  sync_barrier();
  const char *op = "int_atomic_fetch_add_rtt_1thread";
  const long warm = 200, n = iters(20000, 1000);
  const int timed = (int)iters(7, 3);
  long base = 0;
  std::vector<double> us;
  unsigned long long bad = 0;
  char detail[160] = "";
  for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
    if (me == 0) {
      reset_scratch();
      launch(false, k_fetch_add, 1, 1, ctr, peer, base, warm, n, d_scratch);
      unsigned long long s[8];
      read_scratch(s);
      if (s[0] && !bad)
        snprintf(detail, sizeof detail, "launch_%d:%llu_bad,first_op_%llu:got_%lld,want_%lld", t, s[0], s[1],
                 (long long)(int)s[2], (long long)(int)s[3]);
      bad += s[0];
      if (t > 0) us.push_back((double)s[4] * 1e-3 / (double)n);
    }
    base += warm + n;
    sync_barrier();
  }
  if (me == 0) {
    verdict(op, 4, bad == 0, detail);
    result(op, 4, "us", median(us));
  } else {
    int got = 0;
    CK(cudaMemcpy(&got, ctr, sizeof got, cudaMemcpyDeviceToHost));
    char d[96];
    snprintf(d, sizeof d, "final_count_%d,want_%ld", got, base);
    verdict(op, 4, got == (int)base, got == (int)base ? "" : d);
  }
}
