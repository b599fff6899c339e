/* Host collectives over all PEs, latency per size: float sum reduction (sum_to_all) and 32-bit
 * broadcast from PE 0 (broadcast32), the OpenSHMEM 1.4 active-set forms both libraries have, and
 * sync_all. Each call is timed on PE 0 from a common start (an untimed barrier_all before every
 * call, which also makes pSync reusable); reports the median in microseconds and, from 64 KiB,
 * the bandwidth (bytes of dest per PE / median).
 *
 * Checked once per size before timing, on every PE: random non-zero data (the reduction's
 * floats are small integers, so the sums are exact); the reduction's dest on every PE, the
 * broadcast's dest on every PE but the root (OpenSHMEM 1.4 leaves the root's unspecified).
 * A wrong result stops the run with exit status 1 (scripts/bench.sh reports it as FAILED).
 *
 * argv[1]: seconds per size (default 0.1, times BENCH_SCALE). */
#include "bench_common.h"

static const size_t sizes[] = {8, 1024, 65536, 1048576, 16777216};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Word i of PE p's source: non-zero (splitmix64 of seed, p, i). */
static uint32_t val(uint64_t seed, int p, uint64_t i) {
  uint64_t z = seed + (uint64_t)p * 0x632be59bd9b4e019ULL + (i + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  uint32_t v = (uint32_t)(z ^ (z >> 32));
  return v ? v : 0x5bd1e995u;
}
static float rval(uint64_t seed, int p, uint64_t i) { return (float)(val(seed, p, i) % 1023u + 1u); }

static long *psync;
static float *pwrk;

static void fill_sync(size_t n) {
  for (size_t i = 0; i < n; i++) psync[i] = B_SYNC_VALUE;
}

/* One call of `op` (0 reduce, 1 broadcast) of `bytes`. */
static void coll(int op, void *dst, void *src, size_t bytes, int npes) {
  if (op == 0) B_float_sum_to_all((float *)dst, (const float *)src, (int)(bytes / 4), 0, 0, npes, pwrk, psync);
  else B_broadcast32(dst, src, bytes / 4, 0, 0, 0, npes, psync);
}

static uint64_t seed_for(int op, size_t bytes) {
  const char *s = getenv("BENCH_SEED");
  uint64_t seed = (s && *s) ? strtoull(s, NULL, 0) : 0x2545f4914f6cdd1dULL;
  return seed ^ ((uint64_t)op << 56) ^ (uint64_t)bytes * 0xff51afd7ed558ccdULL;
}

static void check(int op, const void *dst, size_t bytes, uint64_t seed, int me, int npes) {
  size_t words = bytes / 4;
  if (op == 1 && me == 0) return;
  for (size_t i = 0; i < words; i++) {
    uint32_t got, want;
    if (op == 0) {
      float s = 0.0f, g = ((const float *)dst)[i];
      for (int p = 0; p < npes; p++) s += rval(seed, p, i);
      memcpy(&got, &g, 4);
      memcpy(&want, &s, 4);
    } else {
      got = ((const uint32_t *)dst)[i];
      want = val(seed, 0, i);
    }
    if (got != want) {
      fprintf(stderr, "bench (%s) PE %d: CHECK FAILED: %s %zu B: word %zu is 0x%x, want 0x%x\n", BENCH_LIB, me,
              op ? "broadcast32" : "float_sum_to_all", bytes, i, got, want);
      exit(1);
    }
  }
}

int main(int argc, char **argv) {
  double budget = b_budget(argc > 1 ? atof(argv[1]) : 0.1);
  B_init();
  int me = B_my_pe(), npes = B_n_pes();
  size_t maxb = sizes[NSIZES - 1];
  size_t sync_n = B_REDUCE_SYNC_SIZE > B_BCAST_SYNC_SIZE ? B_REDUCE_SYNC_SIZE : B_BCAST_SYNC_SIZE;
  size_t wrk_n = maxb / 8 + 1 > (size_t)B_REDUCE_MIN_WRKDATA_SIZE ? maxb / 8 + 1 : (size_t)B_REDUCE_MIN_WRKDATA_SIZE;
  void *src = B_malloc(maxb), *dst = B_malloc(maxb);
  long *scratch = (long *)B_malloc(sizeof(long));
  psync = (long *)B_malloc(sync_n * sizeof(long));
  pwrk = (float *)B_malloc(wrk_n * sizeof(float));
  if (!src || !dst || !scratch || !psync || !pwrk) { b_fail("malloc"); return 1; }
  fill_sync(sync_n);
  B_barrier_all();

  static const char *names[] = {"float_sum_to_all", "broadcast32"};
  for (int op = 0; op < 2; op++) {
    for (size_t k = 0; k < NSIZES; k++) {
      size_t bytes = sizes[k], words = bytes / 4;
      uint64_t seed = seed_for(op, bytes);
      for (size_t i = 0; i < words; i++) {
        if (op == 0) ((float *)src)[i] = rval(seed, me, i);
        else ((uint32_t *)src)[i] = val(seed, me, i);
      }
      memset(dst, 0, bytes);
      B_barrier_all();
      coll(op, dst, src, bytes, npes);
      B_barrier_all();
      check(op, dst, bytes, seed, me, npes);

      /* Calibration, then the timed calls (a barrier before each). */
      const int warm = 20;
      double t0 = b_now();
      for (int i = 0; i < warm; i++) {
        B_barrier_all();
        coll(op, dst, src, bytes, npes);
      }
      double per = (b_now() - t0) / warm;
      long iters = b_bcast_long(scratch, b_clamp(budget / (per > 0 ? per : 1e-6), 20, 200000));
      double *lat = (double *)b_alloc_touched(sizeof(double) * (size_t)iters, 0);
      for (long i = 0; i < iters; i++) {
        B_barrier_all();
        double a = b_now();
        coll(op, dst, src, bytes, npes);
        lat[i] = b_now() - a;
      }
      B_barrier_all();
      if (me == 0) {
        char row[48];
        snprintf(row, sizeof row, "%s_%zu", names[op], bytes);
        double med = b_quantile(lat, (size_t)iters, 0.5);
        b_result("coll", row, "median_us", med * 1e6);
        if (bytes >= 65536) b_result("coll", row, "GBps", (double)bytes / med / 1e9);
      }
      free(lat);
    }
  }

  /* sync_all: checked (each PE puts a fresh value into the next PE's word i % 2, quiet,
   * sync_all, then reads its own word), then each call timed on PE 0. */
  {
    long *slot = (long *)B_malloc(2 * sizeof(long));
    if (!slot) { b_fail("malloc"); return 1; }
    slot[0] = slot[1] = 0;
    B_barrier_all();
    uint64_t seed = seed_for(2, 0);
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    for (int i = 0; i < 64; i++) {
      B_long_p(&slot[i & 1], (long)val(seed, me, (uint64_t)i), next);
      B_quiet();
      B_sync_all();
      long got = *(volatile long *)&slot[i & 1], want = (long)val(seed, prev, (uint64_t)i);
      if (got != want) {
        fprintf(stderr, "bench (%s) PE %d: CHECK FAILED: sync_all round %d: own word is %ld, want %ld\n", BENCH_LIB, me,
                i, got, want);
        exit(1);
      }
    }
    B_barrier_all();
    B_free(slot);
    const int warm = 200;
    for (int i = 0; i < warm; i++) B_sync_all();
    double t0 = b_now();
    for (int i = 0; i < warm; i++) B_sync_all();
    double per = (b_now() - t0) / warm;
    long iters = b_bcast_long(scratch, b_clamp(budget / (per > 0 ? per : 1e-6), 1000, 2000000));
    double *lat = (double *)b_alloc_touched(sizeof(double) * (size_t)iters, 0);
    for (long i = 0; i < iters; i++) {
      double a = b_now();
      B_sync_all();
      lat[i] = b_now() - a;
    }
    if (me == 0) b_result("coll", "sync_all_0", "median_us", b_quantile(lat, (size_t)iters, 0.5) * 1e6);
    free(lat);
  }

  B_barrier_all();
  B_free(pwrk);
  B_free(psync);
  B_free(scratch);
  B_free(dst);
  B_free(src);
  B_finalize();
  return 0;
}
