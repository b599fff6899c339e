/* Heap exhaustion, run with a small ROCSHMEM_HEAP_SIZE (1 MiB, set by the test registration):
 * an allocation that does not fit returns NULL on every PE with one line on stderr naming the
 * PE, the call and ROCSHMEM_HEAP_SIZE; the heap still works afterwards; a bad alignment also
 * gives NULL on every PE without breaking the collective sequence. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

static void check_report(const char *text, int me, const char *call, const char *word) {
  char pe[32];
  snprintf(pe, sizeof pe, "PE %d", me);
  CHECK(hu_count_lines(text) == 1, "%s: expected one line on stderr, got:\n%s", call, text);
  CHECK(strstr(text, pe) && strstr(text, call) && strstr(text, word), "%s: stderr does not name '%s', the call and '%s':\n%s",
        call, pe, word, text);
}

int main(void) {
  rocshmem_init();
  int me = rocshmem_my_pe();
  uint64_t seed = hu_agree_seed("heap_exhaust");
  const char *hs = getenv("ROCSHMEM_HEAP_SIZE");
  size_t heap = hu_parse_size(hs);
  REQUIRE(heap >= 65536 && heap <= (64u << 20), "run with a small ROCSHMEM_HEAP_SIZE (got %s)", hs ? hs : "unset");
  char err[4096];

  /* Too big at once. */
  hu_capture c = hu_capture_begin();
  void *p = rocshmem_malloc(heap + 4096);
  hu_capture_end(c, err, sizeof err);
  CHECK(p == NULL, "rocshmem_malloc(heap + 4 KiB) = %p", p);
  check_report(err, me, "rocshmem_malloc", "ROCSHMEM_HEAP_SIZE");

  /* Fill it with blocks of random (agreed) sizes until one fails. */
  uint64_t plan = tu_stream(seed, -1, 7);
  void *blocks[4096];
  int nb = 0;
  for (;;) {
    size_t sz = hu_range(&plan, 1, heap / 16);
    c = hu_capture_begin();
    void *b = rocshmem_malloc(sz);
    hu_capture_end(c, err, sizeof err);
    if (!b) {
      check_report(err, me, "rocshmem_malloc", "ROCSHMEM_HEAP_SIZE");
      break;
    }
    CHECK(err[0] == 0, "a successful rocshmem_malloc printed:\n%s", err);
    memset(b, 0x5a, sz);
    REQUIRE(nb < 4096, "more than 4096 blocks fit a heap of %zu bytes", heap);
    blocks[nb++] = b;
  }
  CHECK(nb >= 1, "not even one block fit");
  /* calloc hits the same wall. */
  c = hu_capture_begin();
  p = rocshmem_calloc(heap / 64, 128);
  hu_capture_end(c, err, sizeof err);
  CHECK(p == NULL, "rocshmem_calloc past the end = %p", p);
  check_report(err, me, "rocshmem_calloc", "ROCSHMEM_HEAP_SIZE");

  /* Free everything: one big block fits again, and is usable across PEs. */
  while (nb > 0) rocshmem_free(blocks[--nb]);
  size_t big = heap / 2;
  unsigned char *q = (unsigned char *)rocshmem_malloc(big);
  REQUIRE(q != NULL, "rocshmem_malloc(%zu) after freeing everything", big);
  int n = rocshmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
  unsigned char *mine = (unsigned char *)malloc(big), *want = (unsigned char *)malloc(big);
  REQUIRE(mine && want, "malloc");
  hu_fill(mine, big, seed, me, 3);
  rocshmem_putmem(q, mine, big, next);
  rocshmem_barrier_all();
  hu_fill(want, big, seed, prev, 3);
  long d = hu_first_diff(q, want, big);
  CHECK(d < 0, "%zu bytes from PE %d differ at byte %ld", big, prev, d);

  /* A bad alignment: NULL everywhere, one line naming the call, and the heap still works. */
  c = hu_capture_begin();
  p = rocshmem_align(24, 64);
  hu_capture_end(c, err, sizeof err);
  CHECK(p == NULL, "rocshmem_align(24, 64) = %p", p);
  check_report(err, me, "rocshmem_align", "alignment");
  void *ok = rocshmem_align(256, 64);
  CHECK(ok != NULL && (uintptr_t)ok % 256 == 0, "rocshmem_align(256, 64) = %p", ok);
  rocshmem_free(ok);
  rocshmem_free(q);
  free(mine);
  free(want);
  rocshmem_finalize();
  TEST_DONE("heap_exhaust");
  return tu_failures != 0;
}
