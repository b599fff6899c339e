/* Host putmem/getmem bandwidth from PE 0 to PE 1, 1 KiB .. 64 MiB (powers of 4), against a
 * plain memcpy of the same size between two private buffers of the same process. Every
 * buffer is touched before timing; each point is the median of TRIALS trials of at least
 * budget/TRIALS seconds each (a trial ends with quiet, so the puts are complete).
 *
 * argv[1]: seconds per size and method (default 0.1, times BENCH_SCALE). */
#include "bench_common.h"

#define MAX_SIZE ((size_t)64 << 20)
#define TRIALS 5

enum kind { MEMCPY, PUTMEM, GETMEM };
static const char *kind_name[] = {"memcpy", "putmem", "getmem"};

static char *priv_src, *priv_dst, *sym_dst, *sym_src;

static double run(enum kind k, size_t size, long iters) {
  double t0 = b_now();
  switch (k) {
    case MEMCPY:
      for (long i = 0; i < iters; i++) {
        memcpy(priv_dst, priv_src, size);
        B_CLOBBER();
      }
      break;
    case PUTMEM:
      for (long i = 0; i < iters; i++) B_putmem(sym_dst, priv_src, size, 1);
      B_quiet();
      break;
    case GETMEM:
      for (long i = 0; i < iters; i++) {
        B_getmem(priv_dst, sym_src, size, 1);
        B_CLOBBER();
      }
      break;
  }
  return b_now() - t0;
}

int main(int argc, char **argv) {
  double budget = b_budget(argc > 1 ? atof(argv[1]) : 0.1);
  B_init();
  int me = B_my_pe(), n = B_n_pes();
  if (n < 2) {
    if (me == 0) fprintf(stderr, "bench_bw needs at least 2 PEs\n");
    B_finalize();
    return 1;
  }
  sym_dst = (char *)B_malloc(MAX_SIZE);
  sym_src = (char *)B_malloc(MAX_SIZE);
  if (!sym_dst || !sym_src) { b_fail("symmetric malloc of 2 x 64 MiB"); return 1; }
  memset(sym_dst, 0, MAX_SIZE); /* each PE touches its own symmetric pages */
  memset(sym_src, 0x5a, MAX_SIZE);
  priv_src = (char *)b_alloc_touched(MAX_SIZE, 0xa5);
  priv_dst = (char *)b_alloc_touched(MAX_SIZE, 0);
  B_barrier_all();

  int errors = 0;
  if (me == 0) {
    for (size_t size = 1024; size <= MAX_SIZE; size *= 4) {
      char row[32];
      snprintf(row, sizeof row, "%zu", size);
      for (int k = MEMCPY; k <= GETMEM; k++) {
        /* Size the trial from one warm run (which also faults in anything left). */
        double one = run((enum kind)k, size, 1);
        one = run((enum kind)k, size, 1);
        long iters = b_clamp(budget / TRIALS / (one > 0 ? one : 1e-9), 1, 10000000);
        double gbs[TRIALS];
        for (int t = 0; t < TRIALS; t++) gbs[t] = (double)size * (double)iters / run((enum kind)k, size, iters) / 1e9;
        b_result("bw", row, kind_name[k], b_quantile(gbs, TRIALS, 0.5));
      }
    }
    /* The data really arrived / came back. */
    if (memcmp(priv_dst, sym_src, 4096) != 0) errors++;
  }
  B_barrier_all();
  if (me == 1 && (sym_dst[0] != (char)0xa5 || sym_dst[MAX_SIZE - 1] != (char)0xa5)) errors++;
  if (errors) b_fail("data check failed");
  B_barrier_all();
  B_free(sym_src);
  B_free(sym_dst);
  B_finalize();
  return errors != 0;
}
