/* Single-thread latencies with int_p.
 *
 * int_p+quiet_1thread: PE 0, one thread: int_p of a random value to one of 64 words on PE 1,
 *   then quiet; time per pair (device clock over the timed loop, after warm-up iterations).
 *   PE 1 checks that each of the 64 words holds the last value written to it.
 * p_pingpong_4B: round trip between one thread on each PE: int_p(data) + fence + uint64_p(flag)
 *   to the peer, then uint64_wait_until(own flag >= n); the peer answers the same way. Every
 *   received payload is checked on both PEs in every launch; time per round trip on PE 0.
 */
#include "bench_gpu.cuh"

using namespace bg;

static __global__ void k_p_quiet(int *dst, int pe, uint64_t seed, long warm, long n, unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 0; i < warm + n; ++i) {
    if (i == warm) t0 = bg_clock_ns();
    sh_int_p(dst + (i & 63), (int)bg_val(seed, (uint64_t)i), pe);
    sh_quiet();
  }
  scratch[4] = bg_clock_ns() - t0;
}

void bench_p_quiet(void *small) {
  int *dst = static_cast<int *>(small);
  CK(cudaMemsetAsync(small, 0, BG_SMALL_BYTES, st));
  sync_barrier();
  const char *op = "int_p+quiet_1thread";
  const uint64_t seed = seed_of(op, 4);
  const long warm = 200, n = iters(20000, 1000);
  const int timed = (int)iters(7, 3);
  std::vector<double> us;
  for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up and check
    if (me == 0) {
      reset_scratch();
      launch(false, k_p_quiet, 1, 1, dst, peer, seed, warm, n, d_scratch);
      unsigned long long s[8];
      read_scratch(s);
      if (t > 0) us.push_back((double)s[4] * 1e-3 / (double)n);
    }
    sync_barrier();
    if (t == 0 && me == 1) {
      int got[64];
      CK(cudaMemcpy(got, dst, sizeof got, cudaMemcpyDeviceToHost));
      int bad = 0, first = -1;
      for (int j = 0; j < 64; ++j) {
        long last = warm + n - 1;
        last -= ((last & 63) - j + 64) & 63;  // the last i with i % 64 == j
        if (got[j] != (int)bg_val(seed, (uint64_t)last)) {
          if (first < 0) first = j;
          ++bad;
        }
      }
      char d[96];
      snprintf(d, sizeof d, "%d_of_64_words_wrong,first_%d", bad, first);
      verdict(op, 4, bad == 0, bad ? d : "");
    }
    sync_barrier();
  }
  if (me == 0) result(op, 4, "us", median(us));
}

/* data: one int, written by the peer. flag: one uint64_t, written by the peer. */
static __global__ void k_p_pingpong(int *data, uint64_t *flag, int me, int pe, uint64_t seed, uint64_t base, long warm,
                                    long n, unsigned long long *scratch) {
  unsigned long long t0 = 0;
  for (long i = 1; i <= warm + n; ++i) {
    const uint64_t k = base + (uint64_t)i;
    if (me == 0) {
      if (i == warm + 1) t0 = bg_clock_ns();
      sh_int_p(data, (int)bg_val(seed, 2 * k), pe);
      sh_fence();
      sh_uint64_p(flag, k, pe);
      sh_uint64_wait_until_ge(flag, k);
      int got = *(volatile int *)data;
      if (got != (int)bg_val(seed, 2 * k + 1)) bg_kfail(scratch, k, (unsigned)got, bg_val(seed, 2 * k + 1));
    } else {
      sh_uint64_wait_until_ge(flag, k);
      int got = *(volatile int *)data;
      if (got != (int)bg_val(seed, 2 * k)) bg_kfail(scratch, k, (unsigned)got, bg_val(seed, 2 * k));
      sh_int_p(data, (int)bg_val(seed, 2 * k + 1), pe);
      sh_fence();
      sh_uint64_p(flag, k, pe);
    }
  }
  scratch[4] = bg_clock_ns() - t0;
}

void bench_p_pingpong(void *small) {
  uint64_t *flag = static_cast<uint64_t *>(small);
  int *data = reinterpret_cast<int *>(static_cast<char *>(small) + 64);
  CK(cudaMemsetAsync(small, 0, BG_SMALL_BYTES, st));
  sync_barrier();
  const char *op = "p_pingpong_rtt";
  const uint64_t seed = seed_of(op, 4);
  const long warm = 100, n = iters(10000, 500);
  const int timed = (int)iters(7, 3);
  uint64_t base = 0;
  std::vector<double> us;
  unsigned long long bad = 0;
  char detail[160] = "";
  for (int t = 0; t <= timed; ++t) {  // t == 0: warm-up
    reset_scratch();
    sync_barrier();
    launch(true, k_p_pingpong, 1, 1, data, flag, me, peer, seed, base, warm, n, d_scratch);
    unsigned long long s[8];
    read_scratch(s);
    base += (uint64_t)(warm + n);
    if (s[0] && !bad)
      snprintf(detail, sizeof detail, "launch_%d:%llu_bad,first_round_%llu:got_0x%llx,want_0x%llx", t, s[0], s[1], s[2],
               s[3]);
    bad += s[0];
    if (t > 0 && me == 0) us.push_back((double)s[4] * 1e-3 / (double)n);
    sync_barrier();
  }
  verdict(op, 4, bad == 0, detail);
  if (me == 0) result(op, 4, "us", median(us));
}
