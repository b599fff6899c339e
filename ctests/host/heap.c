/* Symmetric heap: rocshmem_malloc / _align / _calloc give the same offset on every PE (checked
 * by exchanging offsets with puts and through rocshmem_ptr), calloc zeroes, align honours the
 * alignment, the rocshmem_ptr address of a peer's copy is usable with loads and stores, and
 * malloc and free are collective (no PE returns before every PE has entered). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <stdint.h>
#include <time.h>

#define MAX_LIVE 12

typedef struct {
  char *p;
  size_t size;
} block;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(void) {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  uint64_t seed = hu_agree_seed("heap");
  /* Sizes and the order of frees must be the same on every PE (the calls are collective):
   * one stream, identical everywhere. */
  uint64_t plan = tu_stream(seed, -1, 1);

  long *offs = (long *)rocshmem_malloc(sizeof(long) * (size_t)n);
  REQUIRE(offs != NULL, "rocshmem_malloc(offsets)");
  char *anchor = (char *)offs;
  /* rocshmem_ptr of the anchor on every PE, and of it on ourselves. */
  CHECK(rocshmem_ptr(anchor, me) == anchor, "rocshmem_ptr(x, my_pe) = %p, x = %p", rocshmem_ptr(anchor, me), (void *)anchor);

  block live[MAX_LIVE];
  int nlive = 0;
  const size_t small_align[] = {8, 16, 64, 128, 256, 1024, 4096};
  const int rounds = 36;
  char *scratch = (char *)malloc(1 << 20);
  REQUIRE(scratch != NULL, "malloc");

  for (int r = 0; r < rounds; r++) {
    int kind = r % 3; /* 0 malloc, 1 align, 2 calloc */
    size_t size;
    switch (tu_next(&plan) % 3) {
      case 0: size = hu_range(&plan, 1, 64); break;
      case 1: size = hu_range(&plan, 65, 4096); break;
      default: size = hu_range(&plan, 4097, 1 << 20); break;
    }
    size_t align = small_align[tu_next(&plan) % (sizeof small_align / sizeof small_align[0])];
    char *p;
    if (kind == 0) {
      p = (char *)rocshmem_malloc(size);
    } else if (kind == 1) {
      p = (char *)rocshmem_align(align, size);
    } else {
      size_t count = hu_range(&plan, 1, 8);
      size_t each = size / count + 1;
      size = count * each;
      p = (char *)rocshmem_calloc(count, each);
    }
    REQUIRE(p != NULL, "round %d: allocation of %zu bytes (kind %d)", r, size, kind);
    if (kind == 0) CHECK((uintptr_t)p % 128 == 0, "rocshmem_malloc(%zu) = %p is not 128-byte aligned", size, (void *)p);
    if (kind == 1) CHECK((uintptr_t)p % align == 0, "rocshmem_align(%zu, %zu) = %p", align, size, (void *)p);
    if (kind == 2) {
      long bad = -1;
      for (size_t i = 0; i < size; i++)
        if (p[i]) {
          bad = (long)i;
          break;
        }
      CHECK(bad < 0, "round %d: rocshmem_calloc block of %zu bytes has byte %ld = %d", r, size, bad, bad < 0 ? 0 : p[bad]);
    }
    /* Everyone has checked its zeroes before anyone writes. */
    rocshmem_barrier_all();

    /* Same offset everywhere: tell every PE ours. */
    long off = (long)(p - anchor);
    for (int q = 0; q < n; q++) rocshmem_long_p(&offs[me], off, q);
    rocshmem_barrier_all();
    for (int q = 0; q < n; q++) CHECK(offs[q] == off, "round %d: PE %d has offset %ld, this PE %ld", r, q, offs[q], off);

    /* rocshmem_ptr: the peer's copy sits at the same distance from the peer's anchor, and it
     * is usable: write our bytes straight into the next PE's copy. */
    for (int q = 0; q < n; q++) {
      char *pq = (char *)rocshmem_ptr(p, q), *aq = (char *)rocshmem_ptr(anchor, q);
      if (!hu_mapped(me, q, n)) { /* RO backend: a peer reached through MPI has no address here */
        CHECK(pq == NULL && aq == NULL, "rocshmem_ptr to unmapped PE %d is not NULL", q);
        continue;
      }
      CHECK(pq != NULL && aq != NULL, "rocshmem_ptr to PE %d is NULL", q);
      if (pq && aq) CHECK(pq - aq == off, "round %d: PE %d: ptr distance %ld, offset %ld", r, q, (long)(pq - aq), off);
    }
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    size_t len = size < (1u << 20) ? size : (1u << 20);
    hu_fill(scratch, len, seed, me, 100 + (uint64_t)r);
    char *dst = (char *)rocshmem_ptr(p, next);
    if (dst)
      memcpy(dst, scratch, len);
    else /* RO backend: the next PE is not mapped here */
      rocshmem_putmem(p, scratch, len, next);
    rocshmem_barrier_all();
    hu_fill(scratch, len, seed, prev, 100 + (uint64_t)r);
    long d = hu_first_diff(p, scratch, len);
    CHECK(d < 0, "round %d: %zu bytes stored by PE %d through rocshmem_ptr differ at byte %ld", r, len, prev, d);
    rocshmem_barrier_all(); /* nobody frees what a peer is still reading */

    live[nlive].p = p;
    live[nlive].size = size;
    nlive++;
    /* Free a random live block now and then (same choice on every PE). */
    if (nlive == MAX_LIVE || tu_next(&plan) % 3 == 0) {
      int k = (int)(tu_next(&plan) % (uint64_t)nlive);
      rocshmem_free(live[k].p);
      live[k] = live[--nlive];
    }
  }
  while (nlive > 0) rocshmem_free(live[--nlive].p);

  /* Alignments above a page: either honoured on every PE, or NULL on every PE with one line
   * naming the call and the alignment (never a misaligned block). */
  {
    const size_t big[] = {8192, 65536, (size_t)2 << 20};
    for (int i = 0; i < 3; i++) {
      char err[2048];
      hu_capture c = hu_capture_begin();
      char *p = (char *)rocshmem_align(big[i], 1000);
      hu_capture_end(c, err, sizeof err);
      if (p) {
        CHECK((uintptr_t)p % big[i] == 0, "rocshmem_align(%zu) = %p is misaligned", big[i], (void *)p);
        CHECK(err[0] == 0, "successful rocshmem_align printed:\n%s", err);
      } else {
        CHECK(strstr(err, "rocshmem_align") && strstr(err, "alignment") && hu_count_lines(err) == 1,
              "rocshmem_align(%zu) = NULL without one line naming it:\n%s", big[i], err);
      }
      /* the same answer on every PE */
      offs[me] = p != NULL;
      for (int q = 0; q < n; q++) rocshmem_long_p(&offs[me], p != NULL, q);
      rocshmem_barrier_all();
      for (int q = 0; q < n; q++) CHECK(offs[q] == (p != NULL), "rocshmem_align(%zu): PE %d got %s", big[i], q, offs[q] ? "memory" : "NULL");
      rocshmem_barrier_all();
      rocshmem_free(p);
    }
  }

  /* Zero bytes: NULL, and no harm; free(NULL) is a no-op (both still collective). */
  CHECK(rocshmem_malloc(0) == NULL, "rocshmem_malloc(0) is not NULL");
  rocshmem_free(NULL);

  /* Collective free and malloc: the last PE enters late, after putting a flag on everyone; no
   * PE may return before that, so everyone sees the flag. */
  int *flag = (int *)rocshmem_calloc(2, sizeof(int));
  REQUIRE(flag != NULL, "rocshmem_calloc(flag)");
  int *victim = (int *)rocshmem_malloc(64);
  REQUIRE(victim != NULL, "rocshmem_malloc(victim)");
  int late = n - 1;
  if (me == late) {
    sleep_ms(150);
    for (int q = 0; q < n; q++) rocshmem_int_p(&flag[0], 1, q);
  }
  rocshmem_free(victim);
  CHECK(flag[0] == 1, "rocshmem_free returned before PE %d entered it", late);
  if (me == late) {
    sleep_ms(150);
    for (int q = 0; q < n; q++) rocshmem_int_p(&flag[1], 1, q);
  }
  void *again = rocshmem_malloc(256);
  CHECK(again != NULL, "rocshmem_malloc(256)");
  CHECK(flag[1] == 1, "rocshmem_malloc returned before PE %d entered it", late);
  rocshmem_free(again);
  rocshmem_free(flag);
  rocshmem_free(offs);
  free(scratch);

  rocshmem_finalize();
  TEST_DONE("heap");
  return tu_failures != 0;
}
