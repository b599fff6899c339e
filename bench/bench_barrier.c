/* Host barrier_all latency at the job's PE count: warm-up, then many barriers each timed on
 * PE 0; reports median, p99 and mean in microseconds.
 *
 * argv[1]: seconds of measurement (default 1.0, times BENCH_SCALE). */
#include "bench_common.h"

int main(int argc, char **argv) {
  double budget = b_budget(argc > 1 ? atof(argv[1]) : 1.0);
  B_init();
  int me = B_my_pe(), n = B_n_pes();
  long *scratch = (long *)B_malloc(sizeof(long));
  if (!scratch) { b_fail("malloc"); return 1; }

  /* Warm-up (the first barriers may set up connections), then a timed calibration run from
   * which PE 0 sizes the measured run. */
  const int warm = 200;
  for (int i = 0; i < warm; i++) B_barrier_all();
  double t0 = b_now();
  for (int i = 0; i < warm; i++) B_barrier_all();
  double per = (b_now() - t0) / warm;
  long iters = b_bcast_long(scratch, b_clamp(budget / (per > 0 ? per : 1e-6), 1000, 2000000));

  double *lat = (double *)b_alloc_touched(sizeof(double) * (size_t)iters, 0);
  B_barrier_all();
  double start = b_now();
  for (long i = 0; i < iters; i++) {
    double a = b_now();
    B_barrier_all();
    lat[i] = b_now() - a;
  }
  double total = b_now() - start;
  if (me == 0) {
    char row[32];
    snprintf(row, sizeof row, "np%d", n);
    double mean = total / (double)iters;
    b_result("barrier", row, "iters", (double)iters);
    b_result("barrier", row, "mean_us", mean * 1e6);
    b_result("barrier", row, "median_us", b_quantile(lat, (size_t)iters, 0.5) * 1e6);
    b_result("barrier", row, "p99_us", b_quantile(lat, (size_t)iters, 0.99) * 1e6);
  }
  free(lat);
  B_free(scratch);
  B_finalize();
  return 0;
}
