/* Host ping-pong between PE 0 and PE 1; round trip timed on PE 0 for every iteration.
 *
 *   p:        PE 0: long_p(flag, seq, 1); wait_until(flag >= seq)     PE 1: the mirror image
 *   putmem S: putmem(buf, src, S, peer); fence; long_p(flag, seq, peer); wait as above; the
 *             receiver checks the first and last byte of the payload before answering.
 *
 *   raw:      the p exchange as plain release stores through rocshmem_ptr and a spin on
 *             acquire loads (no pause), no library call: the floor (rocSHMEM build only).
 *
 * seq grows across all variants, so no flag is ever reset. argv[1]: seconds per variant
 * (default 0.25, times BENCH_SCALE). */
#include "bench_common.h"

#define MAX_PAYLOAD 65536

static long *flag;
static char *buf, *src;
static long seq;
static int errors;

static long *peer_flag; /* raw variant: the peer's flag through B_ptr (rocSHMEM build only) */

/* One round trip of variant `size` (0: p only; -1: raw loads and stores, no library call) as
 * PE `me`. */
static inline void round_trip(int me, long size) {
  seq++;
  int peer = 1 - me;
  if (size < 0) {
    if (me == 0) __atomic_store_n(peer_flag, seq, __ATOMIC_RELEASE);
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < seq) {
    } /* no pause instruction: the floor */
    if (me == 1) __atomic_store_n(peer_flag, seq, __ATOMIC_RELEASE);
    return;
  }
  if (me == 0) {
    if (size) {
      src[0] = src[size - 1] = (char)seq;
      B_putmem(buf, src, size, peer);
      B_fence();
    }
    B_long_p(flag, seq, peer);
    B_long_wait_until(flag, B_CMP_GE, seq);
    if (size && (buf[0] != (char)seq || buf[size - 1] != (char)seq)) errors++;
  } else {
    B_long_wait_until(flag, B_CMP_GE, seq);
    if (size) {
      if (buf[0] != (char)seq || buf[size - 1] != (char)seq) errors++;
      src[0] = src[size - 1] = (char)seq;
      B_putmem(buf, src, size, peer);
      B_fence();
    }
    B_long_p(flag, seq, peer);
  }
}

int main(int argc, char **argv) {
  double budget = b_budget(argc > 1 ? atof(argv[1]) : 0.25);
  B_init();
  int me = B_my_pe(), n = B_n_pes();
  if (n < 2) {
    if (me == 0) fprintf(stderr, "bench_pingpong needs at least 2 PEs\n");
    B_finalize();
    return 1;
  }
  flag = (long *)B_malloc(sizeof(long));
  long *scratch = (long *)B_malloc(sizeof(long));
  buf = (char *)B_malloc(MAX_PAYLOAD);
  if (!flag || !scratch || !buf) { b_fail("malloc"); return 1; }
  *flag = 0;
  memset(buf, 0, MAX_PAYLOAD);
  src = (char *)b_alloc_touched(MAX_PAYLOAD, 0);
  const long max_iters = 1000000;
  double *lat = (double *)b_alloc_touched(sizeof(double) * max_iters, 0);
  B_barrier_all();

  /* -1: the raw floor (plain stores through rocshmem_ptr, spin on loads): rocSHMEM build only */
  static const long sizes[] = {-1, 0, 8, 64, 512, 4096, 16384, 65536};
  peer_flag = NULL;
#ifndef BENCH_OSHMEM
  peer_flag = (long *)B_ptr(flag, 1 - (me & 1));
#endif
  for (size_t v = 0; v < sizeof sizes / sizeof sizes[0]; v++) {
    long size = sizes[v];
    if (size < 0 && b_bcast_long(scratch, peer_flag != NULL) == 0) continue;
    const int warm = 500;
    long iters = 0;
    if (me <= 1) {
      double t0 = b_now();
      for (int i = 0; i < warm; i++) round_trip(me, size);
      double per = (b_now() - t0) / warm;
      iters = b_clamp(budget / (per > 0 ? per : 1e-9), 20000, max_iters);
    }
    iters = b_bcast_long(scratch, iters); /* PE 0's choice */
    if (me <= 1) {
      for (long i = 0; i < iters; i++) {
        double a = b_now();
        round_trip(me, size);
        lat[i] = b_now() - a;
      }
    }
    if (me == 0) {
      char row[32];
      if (size > 0) snprintf(row, sizeof row, "putmem_%ld", size);
      else snprintf(row, sizeof row, "%s", size < 0 ? "raw_8" : "p_8");
      b_result("pingpong", row, "iters", (double)iters);
      b_result("pingpong", row, "mean_us", b_mean(lat, (size_t)iters) * 1e6);
      b_result("pingpong", row, "median_us", b_quantile(lat, (size_t)iters, 0.5) * 1e6);
      b_result("pingpong", row, "p99_us", b_quantile(lat, (size_t)iters, 0.99) * 1e6);
    }
    B_barrier_all();
  }
  if (errors) b_fail("payload check failed");
  B_barrier_all();
  free(lat);
  B_free(buf);
  B_free(scratch);
  B_free(flag);
  B_finalize();
  return errors != 0;
}
