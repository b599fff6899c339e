/* Host atomic latency from PE 0 to a 64-bit word on PE 1: fetch_add, add, compare_swap, fetch
 * on int64 and uint64. Each point is the median over TRIALS trials of (trial time / ops);
 * the non-fetching add ends every trial with quiet. The rocSHMEM build also times the raw
 * CPU atomic on the same word through rocshmem_ptr (the floor of this backend).
 *
 * argv[1]: seconds per operation (default 0.1, times BENCH_SCALE). */
#include "bench_common.h"

#define TRIALS 5

enum op { FETCH_ADD, ADD, COMPARE_SWAP, FETCH, NOPS };
static const char *op_name[] = {"fetch_add", "add", "compare_swap", "fetch"};

static b_i64 *ivar;
static b_u64 *uvar;
static b_i64 iexpect; /* what the word holds on PE 1 */
static b_u64 uexpect;
static int bad;

static double run(int is_unsigned, enum op o, long iters, int raw) {
  volatile b_i64 sink = 0;
  double t0 = b_now();
  if (!is_unsigned) {
    b_i64 *r = raw ? (b_i64 *)B_ptr(ivar, 1) : NULL;
    switch (o) {
      case FETCH_ADD:
        for (long i = 0; i < iters; i++) sink += raw ? __atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST) : B_i64_fetch_add(ivar, 1, 1);
        iexpect += iters;
        break;
      case ADD:
        for (long i = 0; i < iters; i++) raw ? (void)__atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST) : B_i64_add(ivar, 1, 1);
        B_quiet();
        iexpect += iters;
        break;
      case COMPARE_SWAP:
        for (long i = 0; i < iters; i++) {
          b_i64 old = iexpect;
          if (raw) __atomic_compare_exchange_n(r, &old, iexpect + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
          else old = B_i64_compare_swap(ivar, iexpect, iexpect + 1, 1);
          bad |= old != iexpect;
          iexpect++;
        }
        break;
      case FETCH:
        for (long i = 0; i < iters; i++) sink += raw ? __atomic_load_n(r, __ATOMIC_SEQ_CST) : B_i64_fetch(ivar, 1);
        break;
      default:
        break;
    }
  } else {
    b_u64 *r = raw ? (b_u64 *)B_ptr(uvar, 1) : NULL;
    switch (o) {
      case FETCH_ADD:
        for (long i = 0; i < iters; i++) sink += (b_i64)(raw ? __atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST) : B_u64_fetch_add(uvar, 1, 1));
        uexpect += (b_u64)iters;
        break;
      case ADD:
        for (long i = 0; i < iters; i++) raw ? (void)__atomic_fetch_add(r, 1, __ATOMIC_SEQ_CST) : B_u64_add(uvar, 1, 1);
        B_quiet();
        uexpect += (b_u64)iters;
        break;
      case COMPARE_SWAP:
        for (long i = 0; i < iters; i++) {
          b_u64 old = uexpect;
          if (raw) __atomic_compare_exchange_n(r, &old, uexpect + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
          else old = B_u64_compare_swap(uvar, uexpect, uexpect + 1, 1);
          bad |= old != uexpect;
          uexpect++;
        }
        break;
      case FETCH:
        for (long i = 0; i < iters; i++) sink += (b_i64)(raw ? __atomic_load_n(r, __ATOMIC_SEQ_CST) : B_u64_fetch(uvar, 1));
        break;
      default:
        break;
    }
  }
  (void)sink;
  return b_now() - t0;
}

int main(int argc, char **argv) {
  double budget = b_budget(argc > 1 ? atof(argv[1]) : 0.1);
  B_init();
  int me = B_my_pe(), n = B_n_pes();
  if (n < 2) {
    if (me == 0) fprintf(stderr, "bench_atomic needs at least 2 PEs\n");
    B_finalize();
    return 1;
  }
  ivar = (b_i64 *)B_malloc(64);
  uvar = (b_u64 *)B_malloc(64);
  if (!ivar || !uvar) { b_fail("malloc"); return 1; }
  *ivar = 0;
  *uvar = 0;
  B_barrier_all();
  if (me == 0) {
    int have_raw = 0;
#ifndef BENCH_OSHMEM
    have_raw = B_ptr(ivar, 1) != NULL && B_ptr(uvar, 1) != NULL;
#endif
    for (int u = 0; u <= 1; u++) {
      for (int o = 0; o < NOPS; o++) {
        for (int raw = 0; raw <= have_raw; raw++) {
          char row[48];
          snprintf(row, sizeof row, "%s_%s", u ? "uint64" : "int64", op_name[o]);
          run(u, (enum op)o, 100, raw);
          double t = run(u, (enum op)o, 1000, raw);
          long iters = b_clamp(budget / TRIALS / (t / 1000 > 0 ? t / 1000 : 1e-9), 1000, 50000000);
          double ns[TRIALS];
          for (int k = 0; k < TRIALS; k++) ns[k] = run(u, (enum op)o, iters, raw) / (double)iters * 1e9;
          b_result("atomic", row, raw ? "raw_ns" : "ns", b_quantile(ns, TRIALS, 0.5));
        }
      }
    }
    if (B_i64_fetch(ivar, 1) != iexpect || B_u64_fetch(uvar, 1) != uexpect) bad = 1;
    if (bad) b_fail("atomic results wrong");
  }
  B_barrier_all();
  B_free(uvar);
  B_free(ivar);
  B_finalize();
  return bad;
}
