/* Asymmetric allocation: heap calls that differ across PEs only in their size are served (as
 * upstream's allocator serves OpenSHMEM's asym_alloc test): every PE gets the same block, which
 * reserves the largest size, so every later block stays symmetric.
 *
 *   - asym_alloc's pattern: PE p allocates (p + 1) ints, writes them to the next PE's block
 *     (as many as that PE asked for), and checks what the previous PE wrote into its own;
 *   - rounds of malloc / align (one alignment, sizes of each PE's own) / calloc (counts and
 *     sizes of each PE's own, over memory dirtied before) with sizes drawn per PE: the block
 *     has the same heap offset on every PE (offsets exchanged with puts), the next symmetric
 *     block follows the largest size, calloc zeroes what this PE asked for, fresh random data
 *     of the receiving PE's size put by the previous PE arrives, and nothing is printed;
 *   - after every block is freed the heap is empty again (the first block comes back).
 * Calls that truly differ (another call, another alignment) are refused: ctests/misuse/heap_agree.c. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <stdint.h>
#include <string.h>

static size_t round128(size_t n) { return (n + 127) & ~(size_t)127; }

/* PE p's call of a round (its own stream): count and element size; returns its bytes. */
static size_t pe_call(uint64_t seed, int p, int round, int kind, size_t *count, size_t *esz) {
  uint64_t st = tu_stream(seed, p, 1000 + (uint64_t)round);
  *count = hu_range(&st, 0, 300);
  *esz = hu_range(&st, 1, 257);
  return kind == 2 ? *count * *esz : *count * *esz + 1; /* calloc may ask for 0 bytes */
}

int main(void) {
  rocshmem_init();
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const uint64_t seed = hu_agree_seed("heap_asym");
  long *offs = (long *)rocshmem_malloc(sizeof(long) * (size_t)n);
  REQUIRE(offs != NULL, "rocshmem_malloc(offsets)");
  char *const first = (char *)offs;

  /* OpenSHMEM's asym_alloc: (me + 1) ints on PE me. */
  char err[4096];
  hu_capture cap = hu_capture_begin();
  int *ints = (int *)rocshmem_malloc(sizeof(int) * (size_t)(me + 1));
  hu_capture_end(cap, err, sizeof err);
  REQUIRE(ints != NULL, "rocshmem_malloc(%zu) (PE %d of %d)", sizeof(int) * (size_t)(me + 1), me, n);
  CHECK(err[0] == 0, "asymmetric malloc printed: %s", err);
  CHECK((char *)ints == first + round128(sizeof(long) * (size_t)n), "asymmetric block at %p, want %p", (void *)ints,
        (void *)(first + round128(sizeof(long) * (size_t)n)));
  int vals[64];
  for (int i = 0; i <= next; i++) vals[i] = (int)(tu_stream(seed, me, 100 + (uint64_t)i) & 0x7fffffff);
  rocshmem_int_put(ints, vals, (size_t)next + 1, next);
  rocshmem_barrier_all();
  for (int i = 0; i <= me; i++) {
    int want = (int)(tu_stream(seed, prev, 100 + (uint64_t)i) & 0x7fffffff);
    CHECK(ints[i] == want, "asym_alloc: int %d from PE %d: %d, want %d", i, prev, ints[i], want);
  }
  rocshmem_barrier_all();

  /* Rounds of asymmetric calls, each followed by a symmetric probe allocation. */
  for (int round = 0; round < 12; round++) {
    const int kind = round % 3; /* malloc, align, calloc: the same call on every PE */
    size_t count, esz, c, e, largest = 0;
    const size_t bytes = pe_call(seed, me, round, kind, &count, &esz);
    for (int p = 0; p < n; p++) {
      size_t b = pe_call(seed, p, round, kind, &c, &e);
      if (b > largest) largest = b;
    }
    const size_t nbytes = pe_call(seed, next, round, kind, &c, &e); /* what the next PE asks for */
    if (kind == 2) {
      /* Dirty the memory calloc will reuse: a symmetric block, filled, freed. */
      size_t dirty = 256 << 10;
      char *d = (char *)rocshmem_malloc(dirty);
      REQUIRE(d != NULL, "rocshmem_malloc(%zu)", dirty);
      memset(d, 0xa5, dirty);
      rocshmem_free(d);
    }
    char *blk;
    cap = hu_capture_begin();
    if (kind == 0) blk = (char *)rocshmem_malloc(bytes);
    else if (kind == 1) blk = (char *)rocshmem_align(4096, bytes);
    else blk = (char *)rocshmem_calloc(count, esz);
    hu_capture_end(cap, err, sizeof err);
    CHECK(err[0] == 0, "round %d: asymmetric call printed: %s", round, err);
    if (largest == 0) { /* every PE asked for nothing: an ordinary zero-size call */
      CHECK(blk == NULL, "round %d: a zero-size call on every PE returned %p", round, (void *)blk);
      continue;
    }
    REQUIRE(blk != NULL, "round %d: asymmetric call of %zu bytes (largest %zu) returned NULL", round, bytes, largest);
    if (kind == 1) CHECK(((uintptr_t)blk & 4095) == 0, "round %d: align(4096) gave %p", round, (void *)blk);
    if (kind == 2) {
      long nz = -1;
      for (size_t i = 0; i < bytes && nz < 0; i++)
        if (blk[i] != 0) nz = (long)i;
      CHECK(nz < 0, "round %d: calloc(%zu, %zu): byte %ld is not zero", round, count, esz, nz);
    }
    /* Same heap offset everywhere: each PE tells every PE its offset. */
    for (int p = 0; p < n; p++) rocshmem_long_p(&offs[me], (long)(blk - first), p);
    rocshmem_barrier_all();
    for (int p = 0; p < n; p++)
      CHECK(offs[p] == blk - first, "round %d: PE %d's block at offset %ld, mine %ld", round, p, offs[p],
            (long)(blk - first));
    /* The largest size is reserved: the next symmetric block follows it on every PE (first fit;
     * 8 KiB: more than the hole an aligned block may leave before it). */
    char *probe = (char *)rocshmem_malloc(8192);
    REQUIRE(probe != NULL, "round %d: probe malloc", round);
    CHECK(probe == blk + round128(largest), "round %d: the next block is at %p, want %p (the largest, %zu bytes, reserved)",
          round, (void *)probe, (void *)(blk + round128(largest)), largest);
    /* Fresh random data, as many bytes as the receiving PE asked for. */
    char *src = (char *)malloc(nbytes + 1), *want = (char *)malloc(bytes + 1);
    hu_fill(src, nbytes, seed, me, 2000 + (uint64_t)round);
    rocshmem_putmem(blk, src, nbytes, next);
    rocshmem_barrier_all();
    hu_fill(want, bytes, seed, prev, 2000 + (uint64_t)round);
    long d = hu_first_diff(blk, want, bytes);
    CHECK(d < 0, "round %d: %zu bytes from PE %d differ at byte %ld", round, bytes, prev, d);
    free(src);
    free(want);
    rocshmem_free(probe);
    rocshmem_free(blk);
  }

  rocshmem_free(ints);
  rocshmem_free(offs);
  char *again = (char *)rocshmem_malloc(8);
  CHECK(again == first, "the heap is empty again: malloc gave %p, want %p", (void *)again, (void *)first);
  rocshmem_free(again);
  rocshmem_finalize();
  TEST_DONE("heap_asym");
  return tu_failures != 0;
}
