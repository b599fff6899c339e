/* Shared code of the host benchmarks.
 *
 * Every benchmark is written once against the B_* names below and compiled twice: against
 * rocSHMEM (<rocshmem/rocshmem.h>, the default) and, with -DBENCH_OSHMEM, against Open MPI's
 * OpenSHMEM (<shmem.h>), so both libraries run exactly the same loop.
 *
 * Output: one line per number, for scripts/bench.sh to collect,
 *     R <table> <row> <metric> <value>
 * printed by PE 0 only. Anything else a benchmark prints is for humans (or errors, on stderr).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef BENCH_OSHMEM
#include <shmem.h>
#define BENCH_LIB "oshmem"
#define B_init shmem_init
#define B_finalize shmem_finalize
#define B_my_pe shmem_my_pe
#define B_n_pes shmem_n_pes
#define B_malloc shmem_malloc
#define B_free shmem_free
#define B_ptr shmem_ptr
#define B_barrier_all shmem_barrier_all
#define B_quiet shmem_quiet
#define B_fence shmem_fence
#define B_putmem shmem_putmem
#define B_getmem shmem_getmem
#define B_long_p shmem_long_p
#define B_long_g shmem_long_g
#define B_long_wait_until shmem_long_wait_until
#define B_CMP_EQ SHMEM_CMP_EQ
#define B_CMP_GE SHMEM_CMP_GE
/* Open MPI 4.1 has no int64/uint64 AMO names (OpenSHMEM 1.4 table): long and unsigned long are
 * the same 64-bit types on x86-64 Linux. */
typedef long b_i64;
typedef unsigned long b_u64;
#define B_i64_fetch_add shmem_long_atomic_fetch_add
#define B_i64_add shmem_long_atomic_add
#define B_i64_compare_swap shmem_long_atomic_compare_swap
#define B_i64_fetch shmem_long_atomic_fetch
#define B_u64_fetch_add shmem_ulong_atomic_fetch_add
#define B_u64_add shmem_ulong_atomic_add
#define B_u64_compare_swap shmem_ulong_atomic_compare_swap
#define B_u64_fetch shmem_ulong_atomic_fetch
/* Collectives: the OpenSHMEM 1.4 active-set forms, which both libraries have. */
#define B_sync_all shmem_sync_all
#define B_float_sum_to_all shmem_float_sum_to_all
#define B_broadcast32 shmem_broadcast32
#define B_SYNC_VALUE SHMEM_SYNC_VALUE
#define B_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define B_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define B_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#else
#include <rocshmem/rocshmem.h>
#define BENCH_LIB "rocshmem"
#define B_init rocshmem_init
#define B_finalize rocshmem_finalize
#define B_my_pe rocshmem_my_pe
#define B_n_pes rocshmem_n_pes
#define B_malloc rocshmem_malloc
#define B_free rocshmem_free
#define B_ptr rocshmem_ptr
#define B_barrier_all rocshmem_barrier_all
#define B_quiet rocshmem_quiet
#define B_fence rocshmem_fence
#define B_putmem rocshmem_putmem
#define B_getmem rocshmem_getmem
#define B_long_p rocshmem_long_p
#define B_long_g rocshmem_long_g
#define B_long_wait_until rocshmem_long_wait_until
#define B_CMP_EQ ROCSHMEM_CMP_EQ
#define B_CMP_GE ROCSHMEM_CMP_GE
typedef int64_t b_i64;
typedef uint64_t b_u64;
#define B_i64_fetch_add rocshmem_int64_atomic_fetch_add
#define B_i64_add rocshmem_int64_atomic_add
#define B_i64_compare_swap rocshmem_int64_atomic_compare_swap
#define B_i64_fetch rocshmem_int64_atomic_fetch
#define B_u64_fetch_add rocshmem_uint64_atomic_fetch_add
#define B_u64_add rocshmem_uint64_atomic_add
#define B_u64_compare_swap rocshmem_uint64_atomic_compare_swap
#define B_u64_fetch rocshmem_uint64_atomic_fetch
#define B_sync_all rocshmem_sync_all
#define B_float_sum_to_all(d, s, n, start, log, size, wrk, sync) \
  rocshmem_ctx_float_sum_to_all(ROCSHMEM_CTX_DEFAULT, d, s, n, start, log, size, wrk, sync)
/* shmem_broadcast32: 32-bit elements, the root's dest not written (OpenSHMEM 1.4). */
#define B_broadcast32(d, s, n, root, start, log, size, sync)                                          \
  rocshmem_ctx_int_broadcast_active_set(ROCSHMEM_CTX_DEFAULT, (int *)(d), (const int *)(s), (int)(n), root, start, \
                                        log, size, sync)
#define B_SYNC_VALUE ROCSHMEM_SYNC_VALUE
#define B_REDUCE_SYNC_SIZE ROCSHMEM_REDUCE_SYNC_SIZE
#define B_BCAST_SYNC_SIZE ROCSHMEM_BCAST_SYNC_SIZE
#define B_REDUCE_MIN_WRKDATA_SIZE ROCSHMEM_REDUCE_MIN_WRKDATA_SIZE
#endif

/* Keeps the compiler from merging or dropping repeated operations on memory. */
#define B_CLOBBER() __asm__ __volatile__("" ::: "memory")

static inline double b_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int b_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its q-quantile (0 <= q <= 1), nearest rank. */
static inline double b_quantile(double *v, size_t n, double q) {
  if (n == 0) return 0.0;
  qsort(v, n, sizeof(double), b_cmp_double);
  size_t i = (size_t)(q * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

static inline double b_mean(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return n ? s / (double)n : 0.0;
}

/* Seconds of measurement per data point; BENCH_SCALE (a factor, default 1) lengthens or
 * shortens every benchmark at once. */
static inline double b_budget(double seconds) {
  const char *s = getenv("BENCH_SCALE");
  double f = s ? atof(s) : 1.0;
  if (!(f > 0)) f = 1.0;
  return seconds * f;
}

static inline void b_result(const char *table, const char *row, const char *metric, double value) {
  printf("R %s %s %s %.6g\n", table, row, metric, value);
  fflush(stdout);
}

/* PE 0's value of v on every PE (sym: one symmetric long of scratch). A barrier is included. */
static inline long b_bcast_long(long *sym, long v) {
  B_barrier_all();
  if (B_my_pe() == 0)
    for (int p = 0; p < B_n_pes(); p++) B_long_p(sym, v, p);
  B_barrier_all();
  return *(volatile long *)sym;
}

static inline long b_clamp(double x, long lo, long hi) {
  if (!(x >= (double)lo)) return lo;
  if (x > (double)hi) return hi;
  return (long)x;
}

/* Allocates n bytes of page-aligned private memory and touches every page. */
static inline void *b_alloc_touched(size_t n, int fill) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, n ? n : 1) != 0) {
    fprintf(stderr, "bench: cannot allocate %zu bytes\n", n);
    exit(1);
  }
  memset(p, fill, n);
  return p;
}

static inline void b_fail(const char *what) {
  fprintf(stderr, "bench (%s) PE %d: %s\n", BENCH_LIB, B_my_pe(), what);
  fflush(stderr);
}

#endif
