/* The host API on a symmetric heap the CPU does not load and store itself (a GPU's heap:
 * stream helper kernels on the library's stream, copies through the GPU runtime): host
 * broadcast and reductions, every atomic operation at both widths, wait_until/test and their
 * vector forms, and the clear error of the forms that have no kernel (reduce-scatter).
 * Symmetric memory is only touched through rocshmem_putmem/getmem (the heap may be GPU memory).
 * Fresh random data at several sizes, checked on the receiving PE.
 *
 * Host platform (CI): ROCSHMEM_TEST_GPU_HEAP_ROUTE=1 sends these calls down that route (the
 * same kernels, run by the host launcher). NVIDIA (label gpu): the heap is GPU memory. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

static int me, npes, right, left;
static uint64_t seed;

/* Symmetric memory through the host API only. */
static void sym_write(void *sym, const void *src, size_t n) { rocshmem_putmem(sym, src, n, me); }
static void sym_read(void *dst, const void *sym, size_t n) { rocshmem_getmem(dst, sym, n, me); }
static void sym_zero(void *sym, size_t n, void *scratch) {
  memset(scratch, 0, n);
  sym_write(sym, scratch, n);
}

static const size_t kBytes[] = {1, 8, 1000, 40000, 1 << 20};
#define NSIZES (sizeof kBytes / sizeof kBytes[0])
#define MAXB (1 << 20)

static void test_broadcast(char *src, char *dst, char *buf, char *want) {
  for (size_t si = 0; si < NSIZES; si++) {
    size_t n = kBytes[si];
    int root = (int)((si + 1) % (size_t)npes);
    uint64_t salt = 0x100 + si;
    hu_fill(buf, n, seed, me, salt);
    sym_write(src, buf, n);
    sym_zero(dst, n, buf);
    rocshmem_barrier_all();
    rocshmem_ctx_char_broadcast(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, (int)n, root);
    sym_read(buf, dst, n);
    hu_fill(want, n, seed, root, salt);
    long d = hu_first_diff(buf, want, n);
    CHECK(d < 0, "char_broadcast %zu B from root %d: first difference at byte %ld", n, root, d);
    rocshmem_barrier_all();
  }
  /* int elements, in place on the root. */
  int n = 4099, root = npes - 1;
  hu_fill(buf, n * sizeof(int), seed, me, 0x1ff);
  sym_write(src, buf, n * sizeof(int));
  rocshmem_barrier_all();
  rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (int *)src, (const int *)src, n, root);
  sym_read(buf, src, n * sizeof(int));
  hu_fill(want, n * sizeof(int), seed, root, 0x1ff);
  long d = hu_first_diff(buf, want, n * sizeof(int));
  CHECK(d < 0, "int_broadcast in place, %d elements from root %d: first difference at byte %ld", n, root, d);
  rocshmem_barrier_all();
}

/* Values of PE p's source for the reductions: small, so that sums and products are exact. */
static void fill_long(long *v, int n, int pe, uint64_t salt) {
  uint64_t st = tu_stream(seed, pe, salt);
  for (int i = 0; i < n; i++) v[i] = (long)(tu_next(&st) % 2001) - 1000;
}
static void fill_double(double *v, int n, int pe, uint64_t salt) {
  uint64_t st = tu_stream(seed, pe, salt);
  for (int i = 0; i < n; i++) v[i] = (double)((int)(tu_next(&st) % 4001) - 2000) / 8.0;
}

static void test_reduce(char *src, char *dst, char *buf, char *want) {
  const int counts[] = {1, 7, 1000, 40000};
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
    int n = counts[ci];
    uint64_t salt = 0x200 + ci;
    long *lb = (long *)buf, *lw = (long *)want;
    /* long sum, out of place */
    fill_long(lb, n, me, salt);
    sym_write(src, lb, n * sizeof(long));
    sym_zero(dst, n * sizeof(long), buf);
    rocshmem_barrier_all();
    int rc = rocshmem_ctx_long_sum_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (long *)dst, (const long *)src, n);
    CHECK(rc == 0, "long_sum_reduce(%d) returned %d", n, rc);
    memset(lw, 0, n * sizeof(long));
    for (int p = 0; p < npes; p++) {
      fill_long(lb, n, p, salt);
      for (int i = 0; i < n; i++) lw[i] += lb[i];
    }
    sym_read(buf, dst, n * sizeof(long));
    for (int i = 0; i < n; i++) {
      if (lb[i] != lw[i]) {
        CHECK(0, "long_sum_reduce(%d): element %d is %ld, want %ld", n, i, lb[i], lw[i]);
        break;
      }
    }
    rocshmem_barrier_all();
    /* double max, in place */
    double *db = (double *)buf, *dw = (double *)want;
    fill_double(db, n, me, salt + 0x10);
    sym_write(src, db, n * sizeof(double));
    rocshmem_barrier_all();
    rc = rocshmem_ctx_double_max_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (double *)src, (const double *)src, n);
    CHECK(rc == 0, "double_max_reduce(%d) in place returned %d", n, rc);
    fill_double(dw, n, 0, salt + 0x10);
    for (int p = 1; p < npes; p++) {
      fill_double(db, n, p, salt + 0x10);
      for (int i = 0; i < n; i++) dw[i] = db[i] > dw[i] ? db[i] : dw[i];
    }
    sym_read(buf, src, n * sizeof(double));
    for (int i = 0; i < n; i++) {
      if (db[i] != dw[i]) {
        CHECK(0, "double_max_reduce(%d) in place: element %d is %g, want %g", n, i, db[i], dw[i]);
        break;
      }
    }
    rocshmem_barrier_all();
    /* uint xor, out of place, over random bits */
    unsigned *ub = (unsigned *)buf, *uw = (unsigned *)want;
    hu_fill(ub, n * sizeof(unsigned), seed, me, salt + 0x20);
    sym_write(src, ub, n * sizeof(unsigned));
    rocshmem_barrier_all();
    rc = rocshmem_ctx_uint_xor_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (unsigned *)dst, (const unsigned *)src, n);
    CHECK(rc == 0, "uint_xor_reduce(%d) returned %d", n, rc);
    memset(uw, 0, n * sizeof(unsigned));
    for (int p = 0; p < npes; p++) {
      hu_fill(ub, n * sizeof(unsigned), seed, p, salt + 0x20);
      for (int i = 0; i < n; i++) uw[i] ^= ub[i];
    }
    sym_read(buf, dst, n * sizeof(unsigned));
    long d = hu_first_diff(ub, uw, n * sizeof(unsigned));
    CHECK(d < 0, "uint_xor_reduce(%d): first difference at byte %ld", n, d);
    rocshmem_barrier_all();
  }
}

/* Atomics: PE `left` is the only one that operates on this PE's words, so every fetched value
 * is known; then every PE adds to PE 0's counter at once. */
static void test_atomics(long *l64, int *i32, unsigned *u32, uint64_t *m64, double *f64, float *f32) {
  long lz = 0;
  int iz = 0;
  unsigned uz = 0;
  uint64_t mz = 0;
  sym_write(l64, &lz, sizeof lz);
  sym_write(i32, &iz, sizeof iz);
  sym_write(u32, &uz, sizeof uz);
  sym_write(m64, &mz, sizeof mz);
  rocshmem_barrier_all();
  uint64_t st = tu_stream(seed, me, 0x300);
  long lsum = 0;
  int isum = 0;
  for (int r = 0; r < 6; r++) {
    long v = (long)(tu_next(&st) % 1000000) - 500000;
    long old = rocshmem_long_atomic_fetch_add(l64, v, right);
    CHECK(old == lsum, "long_atomic_fetch_add round %d on PE %d: fetched %ld, want %ld", r, right, old, lsum);
    lsum += v;
    int w = (int)(tu_next(&st) % 1000);
    int iold = rocshmem_int_atomic_fetch_add(i32, w, right);
    CHECK(iold == isum, "int_atomic_fetch_add round %d: fetched %d, want %d", r, iold, isum);
    isum += w;
  }
  rocshmem_int_atomic_inc(i32, right);
  rocshmem_int_atomic_add(i32, 5, right);
  int ifi = rocshmem_int_atomic_fetch_inc(i32, right);
  CHECK(ifi == isum + 6, "int_atomic_fetch_inc fetched %d, want %d", ifi, isum + 6);
  isum += 7;
  /* compare_swap: one that fails, one that succeeds */
  long c1 = rocshmem_long_atomic_compare_swap(l64, lsum + 1, 42, right);
  CHECK(c1 == lsum, "long_atomic_compare_swap (no match) fetched %ld, want %ld", c1, lsum);
  long c2 = rocshmem_long_atomic_compare_swap(l64, lsum, 42, right);
  CHECK(c2 == lsum, "long_atomic_compare_swap (match) fetched %ld, want %ld", c2, lsum);
  long lf = rocshmem_long_atomic_fetch(l64, right);
  CHECK(lf == 42, "long_atomic_fetch after compare_swap: %ld, want 42", lf);
  /* bitwise, 32 and 64 bits */
  unsigned ua = (unsigned)tu_next(&st), ub = (unsigned)tu_next(&st);
  rocshmem_uint_atomic_set(u32, ua, right);
  unsigned uo = rocshmem_uint_atomic_fetch_xor(u32, ub, right);
  CHECK(uo == ua, "uint_atomic_fetch_xor fetched %#x, want %#x", uo, ua);
  uo = rocshmem_uint_atomic_fetch_and(u32, ub, right);
  CHECK(uo == (ua ^ ub), "uint_atomic_fetch_and fetched %#x, want %#x", uo, ua ^ ub);
  uint64_t ma = tu_next(&st), mb = tu_next(&st);
  rocshmem_uint64_atomic_or(m64, ma, right);
  uint64_t mo = rocshmem_uint64_atomic_fetch_and(m64, mb, right);
  CHECK(mo == ma, "uint64_atomic_fetch_and fetched %#" PRIx64 ", want %#" PRIx64, mo, ma);
  rocshmem_uint64_atomic_xor(m64, ma, right);
  mo = rocshmem_uint64_atomic_swap(m64, mb, right);
  CHECK(mo == ((ma & mb) ^ ma), "uint64_atomic_swap fetched %#" PRIx64 ", want %#" PRIx64, mo, (ma & mb) ^ ma);
  /* floating point: set, fetch, swap move bits */
  double da = (double)(int64_t)tu_next(&st) / 3.0, db = -1.0 / 7.0;
  rocshmem_double_atomic_set(f64, da, right);
  double dfo = rocshmem_double_atomic_fetch(f64, right);
  CHECK(dfo == da, "double_atomic_fetch: %g, want %g", dfo, da);
  dfo = rocshmem_double_atomic_swap(f64, db, right);
  CHECK(dfo == da, "double_atomic_swap fetched %g, want %g", dfo, da);
  float fa = (float)(int32_t)tu_next(&st) / 9.0f;
  rocshmem_float_atomic_set(f32, fa, right);
  float ffo = rocshmem_float_atomic_swap(f32, 0.5f, right);
  CHECK(ffo == fa, "float_atomic_swap fetched %g, want %g", (double)ffo, (double)fa);
  rocshmem_barrier_all();

  /* On the receiving PE: what PE `left` left here. */
  uint64_t sl = tu_stream(seed, left, 0x300);
  long want_l = 0;
  int want_i = 0;
  for (int r = 0; r < 6; r++) {
    want_l += (long)(tu_next(&sl) % 1000000) - 500000;
    want_i += (int)(tu_next(&sl) % 1000);
  }
  (void)want_l; /* replaced by the compare_swap */
  unsigned la = (unsigned)tu_next(&sl), lb = (unsigned)tu_next(&sl);
  uint64_t lma = tu_next(&sl), lmb = tu_next(&sl);
  double lda = (double)(int64_t)tu_next(&sl) / 3.0;
  (void)lda;
  long gl;
  int gi;
  unsigned gu;
  uint64_t gm;
  double gd;
  float gf;
  sym_read(&gl, l64, sizeof gl);
  sym_read(&gi, i32, sizeof gi);
  sym_read(&gu, u32, sizeof gu);
  sym_read(&gm, m64, sizeof gm);
  sym_read(&gd, f64, sizeof gd);
  sym_read(&gf, f32, sizeof gf);
  CHECK(gl == 42, "long word after PE %d's atomics: %ld, want 42", left, gl);
  CHECK(gi == want_i + 7, "int word after PE %d's atomics: %d, want %d", left, gi, want_i + 7);
  CHECK(gu == ((la ^ lb) & lb), "uint word after PE %d's atomics: %#x, want %#x", left, gu, (la ^ lb) & lb);
  CHECK(gm == lmb, "uint64 word after PE %d's atomics: %#" PRIx64 ", want %#" PRIx64, left, gm, lmb);
  (void)lma;
  CHECK(gd == -1.0 / 7.0, "double word after PE %d's swap: %g", left, gd);
  CHECK(gf == 0.5f, "float word after PE %d's swap: %g", left, (double)gf);

  /* Contention: every PE adds to PE 0's counter, fetching and not. */
  sym_write(l64, &lz, sizeof lz);
  rocshmem_barrier_all();
  for (int r = 0; r < 20; r++) {
    if (r % 2) rocshmem_long_atomic_add(l64, me + 1, 0);
    else (void)rocshmem_long_atomic_fetch_add(l64, me + 1, 0);
  }
  rocshmem_barrier_all();
  if (me == 0) {
    long want = 20L * npes * (npes + 1) / 2;
    sym_read(&gl, l64, sizeof gl);
    CHECK(gl == want, "PE 0's counter after %d PEs x 20 adds: %ld, want %ld", npes, gl, want);
  }
  rocshmem_barrier_all();
}

/* wait_until/test: PE `left` sets this PE's flags after a delay, so the wait really polls. */
static void test_wait(long *flag, long *vec) {
  const size_t nv = 16;
  long zeros[16] = {0};
  sym_write(flag, zeros, sizeof(long));
  sym_write(vec, zeros, sizeof zeros);
  rocshmem_barrier_all();
  long v = (long)(tu_stream(seed, left, 0x400) % 100000) + 1;
  long mine = (long)(tu_stream(seed, me, 0x400) % 100000) + 1;
  CHECK(rocshmem_long_test(flag, ROCSHMEM_CMP_EQ, v) == 0, "long_test before the put: satisfied");
  rocshmem_barrier_all();
  usleep(20000);
  rocshmem_long_p(flag, mine, right);
  rocshmem_long_wait_until(flag, ROCSHMEM_CMP_EQ, v);
  CHECK(rocshmem_long_test(flag, ROCSHMEM_CMP_EQ, v) == 1, "long_test after the wait: not satisfied");
  long got;
  sym_read(&got, flag, sizeof got);
  CHECK(got == v, "flag after wait_until: %ld, want %ld", got, v);
  rocshmem_barrier_all();

  /* vector forms: the left PE sets element k (an atomic), then all of them */
  size_t k = (size_t)(tu_stream(seed, left, 0x401) % nv), mk = (size_t)(tu_stream(seed, me, 0x401) % nv);
  usleep(10000);
  rocshmem_long_atomic_set(&vec[mk], 7, right);
  size_t any = rocshmem_long_wait_until_any(vec, nv, NULL, ROCSHMEM_CMP_EQ, 7);
  CHECK(any == k, "long_wait_until_any: index %zu, want %zu", any, k);
  size_t idx[16];
  size_t some = rocshmem_long_wait_until_some(vec, nv, idx, NULL, ROCSHMEM_CMP_GT, 0);
  CHECK(some == 1 && idx[0] == k, "long_wait_until_some: %zu indices, first %zu, want 1 and %zu", some, idx[0], k);
  rocshmem_barrier_all();
  long wantv[16];
  for (size_t i = 0; i < nv; i++) wantv[i] = (long)i + 1 + (i == k ? 7 : 0);
  for (size_t i = 0; i < nv; i++) rocshmem_long_atomic_add(&vec[i], (long)i + 1, right);
  rocshmem_long_wait_until_all_vector(vec, nv, NULL, ROCSHMEM_CMP_EQ, wantv);
  long all[16];
  sym_read(all, vec, sizeof all);
  for (size_t i = 0; i < nv; i++) CHECK(all[i] == wantv[i], "vec[%zu] after wait_until_all_vector: %ld, want %ld", i, all[i], wantv[i]);
  rocshmem_barrier_all();
  /* wait_until_all: the left PE sets the flag last, after its adds to every element */
  for (size_t i = 0; i < nv; i++) rocshmem_long_atomic_add(&vec[i], 100, right);
  rocshmem_long_atomic_set(flag, -1, right);
  rocshmem_long_wait_until_all(flag, 1, NULL, ROCSHMEM_CMP_EQ, -1);
  sym_read(all, vec, sizeof all);
  for (size_t i = 0; i < nv; i++) CHECK(all[i] == wantv[i] + 100, "vec[%zu] after wait_until_all: %ld, want %ld", i, all[i], wantv[i] + 100);
  rocshmem_barrier_all();
}

/* The forms without a kernel: one error line and ROCSHMEM_ERROR, nothing written. */
static void test_refusals(char *src, char *dst) {
  hu_capture c = hu_capture_begin();
  int rc = rocshmem_ctx_int_sum_reduce_scatter(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (int *)dst, (const int *)src, 4);
  char out[1024];
  hu_capture_end(c, out, sizeof out);
  CHECK(rc != 0, "int_sum_reduce_scatter on this heap returned 0");
  CHECK(hu_count_lines(out) == 1 && strstr(out, "rocshmem_ctx_int_sum_reduce_scatter") &&
            strstr(out, "host reduce-scatter collectives"),
        "reduce_scatter error: '%s'", out);
  rocshmem_barrier_all();
}

int main(void) {
  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  right = (me + 1) % npes;
  left = (me + npes - 1) % npes;
  seed = hu_agree_seed("host_gpu_heap");
  char *src = (char *)rocshmem_malloc(MAXB), *dst = (char *)rocshmem_malloc(MAXB);
  char *words = (char *)rocshmem_malloc(4096);
  char *buf = (char *)malloc(MAXB), *want = (char *)malloc(MAXB);
  REQUIRE(src && dst && words && buf && want, "allocations");
  test_broadcast(src, dst, buf, want);
  test_reduce(src, dst, buf, want);
  test_atomics((long *)words, (int *)(words + 64), (unsigned *)(words + 128), (uint64_t *)(words + 192),
               (double *)(words + 256), (float *)(words + 320));
  test_wait((long *)(words + 512), (long *)(words + 1024));
  test_refusals(src, dst);
  rocshmem_free(words);
  rocshmem_free(dst);
  rocshmem_free(src);
  free(buf);
  free(want);
  rocshmem_finalize();
  if (tu_failures == 0) printf("host_gpu_heap: PE %d: PASS\n", me);
  return tu_failures != 0;
}
