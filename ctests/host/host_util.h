/* Helpers of the host tests in this folder, on top of ../common/test_util.h: the run's seed
 * agreed on by every PE, random buffers any PE can recompute, and capture of what the library
 * prints on stderr (to check its one-line error messages). Header-only; include after
 * <rocshmem/rocshmem.h> (or .hpp) and "test_util.h". */
#ifndef ROCSHMEM_HOST_UTIL_H
#define ROCSHMEM_HOST_UTIL_H

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifdef __cplusplus
#define HU_NS rocshmem::
#else
#define HU_NS
#endif

/* PE 0's seed (ROCSHMEM_TEST_SEED, or time and pid) on every PE; PE 0 prints it so that a
 * failure can be replayed. Collective over all PEs. */
static inline uint64_t hu_agree_seed(const char *test) {
  uint64_t *slot = (uint64_t *)HU_NS rocshmem_malloc(sizeof(uint64_t));
  REQUIRE(slot != NULL, "rocshmem_malloc for the seed");
  int me = HU_NS rocshmem_my_pe(), n = HU_NS rocshmem_n_pes();
  if (me == 0) {
    uint64_t s = tu_local_seed();
    for (int p = 0; p < n; p++) HU_NS rocshmem_putmem(slot, &s, sizeof s, p);
    printf("%s: %d PE(s), seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", test, n, s, s);
    fflush(stdout);
  }
  HU_NS rocshmem_barrier_all();
  /* A get from this PE, not *slot: on a GPU platform the heap is device memory. */
  uint64_t seed = 0;
  HU_NS rocshmem_getmem(&seed, slot, sizeof seed, me);
  HU_NS rocshmem_free(slot);
  return seed;
}

/* Fills buf with n bytes of the stream (seed, pe, salt): the same bytes on any PE. */
static inline void hu_fill(void *buf, size_t n, uint64_t seed, int pe, uint64_t salt) {
  uint64_t st = tu_stream(seed, pe, salt);
  unsigned char *b = (unsigned char *)buf;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = tu_next(&st);
    memcpy(b + i, &v, 8);
  }
  if (i < n) {
    uint64_t v = tu_next(&st);
    memcpy(b + i, &v, n - i);
  }
}

/* A size as ROCSHMEM_HEAP_SIZE takes it: a number with an optional K/M/G/T suffix (binary). */
static inline size_t hu_parse_size(const char *s) {
  if (!s || !*s) return 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    case 't': case 'T': v <<= 40; break;
    default: break;
  }
  return (size_t)v;
}

/* Index of the first byte where a and b differ, or -1. */
static inline long hu_first_diff(const void *a, const void *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return (long)i;
  return -1;
}

/* A uniform random number in [lo, hi]. */
static inline size_t hu_range(uint64_t *st, size_t lo, size_t hi) {
  return lo + (size_t)(tu_next(st) % (uint64_t)(hi - lo + 1));
}

/* ---- stderr capture: fd 2 goes to a temporary file between begin and end. ---- */

typedef struct {
  int saved;
  int fd;
} hu_capture;

static inline hu_capture hu_capture_begin(void) {
  hu_capture c = {-1, -1};
  char path[] = "/tmp/rocshmem-test-stderr-XXXXXX";
  fflush(stderr);
  c.fd = mkstemp(path);
  if (c.fd < 0) return c;
  unlink(path);
  c.saved = dup(2);
  dup2(c.fd, 2);
  return c;
}

/* Restores stderr and returns what was written (NUL-terminated, truncated to cap-1 bytes). */
static inline size_t hu_capture_end(hu_capture c, char *out, size_t cap) {
  size_t got = 0;
  fflush(stderr);
  if (c.saved >= 0) {
    dup2(c.saved, 2);
    close(c.saved);
  }
  if (c.fd >= 0) {
    lseek(c.fd, 0, SEEK_SET);
    ssize_t r;
    while (got + 1 < cap && (r = read(c.fd, out + got, cap - 1 - got)) > 0) got += (size_t)r;
    close(c.fd);
  }
  out[got] = 0;
  return got;
}

/* Number of lines (newline-terminated) in s. */
static inline int hu_count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* The placement a test may expect (the RO tests, ctests/ro, run these programs on pretend
 * nodes): PE p is on node p / PES_PER_NODE (unset: every PE on one node). Under
 * ROCSHMEM_BACKEND=ro or gda with ROCSHMEM_DISABLE_MIXED_IPC=1 a PE maps only itself. */
static inline int hu_pes_per_node(int n) {
  const char *s = getenv("PES_PER_NODE");
  int k = s ? atoi(s) : 0;
  return k > 0 ? k : n;
}
static inline int hu_node_start(int pe, int n) { return pe / hu_pes_per_node(n) * hu_pes_per_node(n); }
static inline int hu_node_size(int pe, int n) {
  int k = hu_pes_per_node(n), s = hu_node_start(pe, n);
  return n - s < k ? n - s : k;
}
/* Whether rocshmem_ptr from `me` to `pe` is expected to be non-NULL. */
static inline int hu_mapped(int me, int pe, int n) {
  const char *b = getenv("ROCSHMEM_BACKEND"), *d = getenv("ROCSHMEM_DISABLE_MIXED_IPC");
  if (pe == me) return 1;
  if (b && (strcmp(b, "ro") == 0 || strcmp(b, "gda") == 0) && d && atoi(d) != 0) return 0;
  return hu_node_start(me, n) == hu_node_start(pe, n);
}

#endif
