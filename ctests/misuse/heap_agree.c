/* Heap calls that do not match across PEs are detected instead of silently shifting every
 * later object on some PEs.
 *
 *   heap_agree differ     (2+ PEs) the last PE calls calloc instead of malloc, align with another
 *                         alignment, frees another block: every PE gets NULL (or nothing freed)
 *                         and one line naming its own call and the other PE's; the heap is left
 *                         as it was (the next malloc lands where it would have) and works: fresh
 *                         random data put to the next PE arrives. A malloc of another size on the
 *                         last PE is served (asymmetric allocation, ctests/host/heap_asym.c):
 *                         same block everywhere, the largest size reserved.
 *   heap_agree skip-malloc   PE 1 skips a malloc (it goes on to a barrier): the job stops with
 *   heap_agree skip-free     a line naming the calls (these two, and extra-at-end, are run by
 *   heap_agree extra-at-end  expect.sh: non-zero exit, the line, nothing left in /dev/shm);
 *                         skip-free: PE 1 skips a free; extra-at-end: PE 0 makes one malloc
 *                         more than the others, which are in finalize.
 * Heap calls are numbered per PE: hu_agree_seed makes #1 (malloc) and #2 (free). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"


static size_t round128(size_t n) { return (n + 127) & ~(size_t)127; }

/* One line for this PE saying the heap calls differ, naming its call `mine` and PE `other`'s
 * call `theirs` (as the library describes calls) and the call number. */
static void expect_differ(const char *call, const char *mine, int other, const char *theirs, int seq, int line) {
  char both[256];
  snprintf(both, sizeof both, "this PE (PE %d) called %s and PE %d %s (heap call #%d of both)", me, mine, other,
           theirs, seq);
  mu_expect_line(line, call, "the PEs' heap calls differ: ", both, "; every PE must make the same", NULL);
}

static int run_differ(uint64_t seed) {
  REQUIRE(npes >= 2, "heap_agree differ needs 2 or more PEs");
  uint64_t st = tu_stream(seed, -1, 1); /* shared by all PEs: collective sizes */
  const int odd = npes - 1;
  size_t sa = hu_range(&st, 1, 64 << 10), sb = hu_range(&st, 1, 64 << 10), sc = hu_range(&st, 1, 64 << 10);
  size_t sb_odd = sb + 128 + hu_range(&st, 0, 1000);
  char mine[128], theirs[128];

  char *a = (char *)rocshmem_malloc(sa); /* #3 */
  REQUIRE(a != NULL, "malloc(%zu)", sa);

  /* #4: another size on the last PE: served, the largest reserved on every PE, nothing said. */
  char *asym;
  MU_CAPTURE(asym = (char *)rocshmem_malloc(me == odd ? sb_odd : sb));
  CHECK(asym == a + round128(sa), "malloc with different sizes returned %p, want %p", (void *)asym,
        (void *)(a + round128(sa)));
  CHECK(err[0] == 0, "malloc with different sizes printed: %s", err);
  void *b;

  /* #5: calloc on the last PE, malloc on the others (same bytes). */
  MU_CAPTURE(b = me == odd ? rocshmem_calloc(1, sb) : rocshmem_malloc(sb));
  CHECK(b == NULL, "calloc against malloc returned %p", b);
  char as_calloc[128], as_malloc[128];
  snprintf(as_calloc, sizeof as_calloc, "rocshmem_calloc(count=1, size=%zu)", sb);
  snprintf(as_malloc, sizeof as_malloc, "rocshmem_malloc(size=%zu)", sb);
  expect_differ(me == odd ? "rocshmem_calloc" : "rocshmem_malloc", me == odd ? as_calloc : as_malloc,
                me == odd ? 0 : odd, me == odd ? as_malloc : as_calloc, 5, __LINE__);

  /* #6: another alignment on the last PE. */
  MU_CAPTURE(b = rocshmem_align(me == odd ? 4096 : 256, sb));
  CHECK(b == NULL, "align with different alignments returned %p", b);
  snprintf(mine, sizeof mine, "rocshmem_align(alignment=%d, size=%zu)", me == odd ? 4096 : 256, sb);
  snprintf(theirs, sizeof theirs, "rocshmem_align(alignment=%d, size=%zu)", me == odd ? 256 : 4096, sb);
  expect_differ("rocshmem_align", mine, me == odd ? 0 : odd, theirs, 6, __LINE__);

  /* #7: the failed calls left nothing: the next block follows asym, whose largest size is reserved. */
  char *cc = (char *)rocshmem_malloc(sc);
  CHECK(cc == asym + round128(sb_odd), "malloc after the refused calls: %p, want %p (%p + %zu)", (void *)cc,
        (void *)(asym + round128(sb_odd)), (void *)asym, round128(sb_odd));
  REQUIRE(cc != NULL, "malloc(%zu)", sc);
  /* Symmetric on every PE: fresh random bytes to the next PE land where it reads them. */
  char *src = (char *)malloc(sc), *want = (char *)malloc(sc);
  hu_fill(src, sc, seed, me, 7);
  rocshmem_putmem(cc, src, sc, (me + 1) % npes);
  rocshmem_barrier_all();
  hu_fill(want, sc, seed, (me + npes - 1) % npes, 7);
  long d = hu_first_diff(cc, want, sc);
  CHECK(d < 0, "data from PE %d differs at byte %ld of %zu", (me + npes - 1) % npes, d, sc);

  /* #8: the last PE frees another block: nothing is freed anywhere. */
  MU_CAPTURE(rocshmem_free(me == odd ? (void *)a : (void *)cc));
  char fa[128], fc[128];
  snprintf(fa, sizeof fa, "rocshmem_free(heap offset 0x%zx)", (size_t)0);
  snprintf(fc, sizeof fc, "rocshmem_free(heap offset 0x%zx)", (size_t)(cc - a));
  expect_differ("rocshmem_free", me == odd ? fa : fc, me == odd ? 0 : odd, me == odd ? fc : fa, 8, __LINE__);
  CHECK(strstr(err, "nothing was freed on any PE") != NULL, "%s", err);
  /* #9: both still allocated: the next block follows cc. */
  char *dd = (char *)rocshmem_malloc(64);
  CHECK(dd == cc + round128(sc), "malloc after the refused free: %p, want %p", (void *)dd, (void *)(cc + round128(sc)));
  /* cc still holds the data (nobody reused it). */
  d = hu_first_diff(cc, want, sc);
  CHECK(d < 0, "data in the block whose free was refused differs at byte %ld", d);

  /* #10..13: matching frees work (asym's too), and leave an empty heap. */
  MU_CAPTURE({
    rocshmem_free(dd);
    rocshmem_free(cc);
    rocshmem_free(asym);
    rocshmem_free(a);
  });
  CHECK(err[0] == 0, "matching frees printed: %s", err);
  char *again = (char *)rocshmem_malloc(sa);
  CHECK(again == a, "the heap is empty again: malloc gave %p, want %p", (void *)again, (void *)a);
  rocshmem_free(again);
  free(src);
  free(want);
  printf("heap_agree differ: PE %d: 3 mismatches refused on every PE, heap unchanged; 1 asymmetric malloc served\n", me);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "differ";
  uint64_t seed = mu_start("heap_agree");
  if (strcmp(mode, "differ") == 0) {
    run_differ(seed);
  } else if (strcmp(mode, "skip-malloc") == 0) {
    void *a = rocshmem_malloc(1024); /* #3 */
    void *b = me == 1 ? NULL : rocshmem_malloc(2048); /* #4, not on PE 1 */
    rocshmem_barrier_all();
    if (me == 1) sleep(2); /* the others see it outside any heap call (not yet in finalize) */
    printf("heap_agree skip-malloc: PE %d went on (%p %p)\n", me, a, b);
  } else if (strcmp(mode, "skip-free") == 0) {
    void *a = rocshmem_malloc(1024); /* #3 */
    if (me != 1) rocshmem_free(a); /* #4, not on PE 1 */
    rocshmem_barrier_all();
    if (me == 1) sleep(2);
    printf("heap_agree skip-free: PE %d went on\n", me);
  } else if (strcmp(mode, "extra-at-end") == 0) {
    void *a = me == 0 ? rocshmem_malloc(512) : NULL; /* #3 on PE 0 only */
    printf("heap_agree extra-at-end: PE %d went on (%p)\n", me, a);
  } else {
    fprintf(stderr, "usage: heap_agree differ|skip-malloc|skip-free|extra-at-end\n");
    return 2;
  }
  rocshmem_finalize();
  TEST_DONE("heap_agree");
  return tu_failures != 0;
}
