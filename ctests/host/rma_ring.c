/* putmem / getmem around a ring (PE i -> PE i+k) with fresh random data at sizes from 1 byte to
 * a few MiB: blocking, _nbi + quiet, and the ctx_ forms on a created context and on
 * ROCSHMEM_CTX_DEFAULT. Every transfer lands at a random offset between guard bytes, and the
 * receiving PE checks the data and that the guards are untouched. Also: a second
 * rocshmem_ctx_create beyond ROCSHMEM_MAX_NUM_HOST_CONTEXTS fails, and works again after
 * rocshmem_ctx_destroy. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#define GUARD 64
#define GUARD_BYTE 0xEE
#define MAX_SIZE ((size_t)4 << 20)
#define MAX_OFF 40

enum mode { PUT, GET, PUT_NBI, GET_NBI, CTX_PUT, CTX_GET, CTX_PUT_NBI, CTX_GET_NBI, DEFAULT_CTX_PUT, NMODES };
static const char *mode_name[NMODES] = {"putmem", "getmem", "putmem_nbi", "getmem_nbi", "ctx_putmem",
                                        "ctx_getmem", "ctx_putmem_nbi", "ctx_getmem_nbi", "ctx_putmem(DEFAULT)"};

static int me, n;
static unsigned char *sym, *priv, *want;

/* The window [GUARD + off, GUARD + off + size) of a buffer; guards all around it. */
static void check_window(const unsigned char *buf, size_t off, size_t size, const char *what, int from, size_t bufsize) {
  long d = hu_first_diff(buf + GUARD + off, want, size);
  CHECK(d < 0, "%s: %zu bytes from PE %d differ at byte %ld (got 0x%02x, want 0x%02x)", what, size, from, d,
        d < 0 ? 0 : buf[GUARD + off + (size_t)d], d < 0 ? 0 : want[d]);
  for (size_t i = 0; i < bufsize; i++) {
    if (i >= GUARD + off && i < GUARD + off + size) continue;
    if (buf[i] != GUARD_BYTE) {
      CHECK(buf[i] == GUARD_BYTE, "%s (%zu bytes from PE %d): byte %zu outside the window was overwritten", what, size, from, i);
      break;
    }
  }
}

static void one(enum mode m, size_t size, int k, uint64_t seed, uint64_t salt, rocshmem_ctx_t ctx) {
  int to = (me + k) % n, from = (me + n - k) % n;
  size_t bufsize = size + MAX_OFF + 2 * GUARD;
  /* Offsets agreed by sender and receiver: derived from the seed and the receiver. */
  uint64_t s = tu_stream(seed, to, salt ^ 0xabc);
  size_t off_to = (size_t)(tu_next(&s) % MAX_OFF);
  s = tu_stream(seed, me, salt ^ 0xabc);
  size_t off_me = (size_t)(tu_next(&s) % MAX_OFF);
  memset(sym, GUARD_BYTE, bufsize);
  memset(priv, GUARD_BYTE, bufsize);
  int is_get = m == GET || m == GET_NBI || m == CTX_GET || m == CTX_GET_NBI;
  if (is_get) hu_fill(sym + GUARD + off_me, size, seed, me, salt); /* the source others read */
  rocshmem_barrier_all();

  if (!is_get) {
    unsigned char *src = priv + GUARD; /* private source buffer */
    hu_fill(src, size, seed, me, salt);
    unsigned char *dst = sym + GUARD + off_to;
    switch (m) {
      case PUT: rocshmem_putmem(dst, src, size, to); break;
      case PUT_NBI: {
        /* in up to 4 pieces, completed by one quiet */
        size_t piece = size / 4 + 1;
        for (size_t o = 0; o < size; o += piece) rocshmem_putmem_nbi(dst + o, src + o, size - o < piece ? size - o : piece, to);
        rocshmem_quiet();
        break;
      }
      case CTX_PUT: rocshmem_ctx_putmem(ctx, dst, src, size, to); break;
      case CTX_PUT_NBI:
        rocshmem_ctx_putmem_nbi(ctx, dst, src, size, to);
        rocshmem_ctx_quiet(ctx);
        break;
      case DEFAULT_CTX_PUT: rocshmem_ctx_putmem(ROCSHMEM_CTX_DEFAULT, dst, src, size, to); break;
      default: break;
    }
    rocshmem_barrier_all();
    hu_fill(want, size, seed, from, salt);
    check_window(sym, off_me, size, mode_name[m], from, bufsize);
  } else {
    /* Read PE `to`'s source (at its offset) into our private buffer at our offset. */
    unsigned char *dst = priv + GUARD + off_me;
    const unsigned char *src = sym + GUARD + off_to;
    switch (m) {
      case GET: rocshmem_getmem(dst, src, size, to); break;
      case GET_NBI: rocshmem_getmem_nbi(dst, src, size, to); rocshmem_quiet(); break;
      case CTX_GET: rocshmem_ctx_getmem(ctx, dst, src, size, to); break;
      case CTX_GET_NBI: rocshmem_ctx_getmem_nbi(ctx, dst, src, size, to); rocshmem_ctx_quiet(ctx); break;
      default: break;
    }
    hu_fill(want, size, seed, to, salt);
    check_window(priv, off_me, size, mode_name[m], to, bufsize);
    rocshmem_barrier_all(); /* nobody refills its source while a peer reads it */
  }
}

int main(void) {
  rocshmem_init();
  me = rocshmem_my_pe();
  n = rocshmem_n_pes();
  uint64_t seed = hu_agree_seed("rma_ring");
  size_t bufmax = MAX_SIZE + MAX_OFF + 2 * GUARD;
  sym = (unsigned char *)rocshmem_malloc(bufmax);
  priv = (unsigned char *)malloc(bufmax);
  want = (unsigned char *)malloc(MAX_SIZE);
  REQUIRE(sym && priv && want, "buffers");

  rocshmem_ctx_t ctx;
  int rc = rocshmem_ctx_create(0, &ctx);
  REQUIRE(rc == 0, "rocshmem_ctx_create = %d", rc);
  /* ROCSHMEM_MAX_NUM_HOST_CONTEXTS is 1 by default: a second one must fail, and say why. */
  const char *mx = getenv("ROCSHMEM_MAX_NUM_HOST_CONTEXTS");
  if (!mx || atoi(mx) == 1) {
    rocshmem_ctx_t extra;
    char err[2048];
    hu_capture c = hu_capture_begin();
    rc = rocshmem_ctx_create(0, &extra);
    hu_capture_end(c, err, sizeof err);
    CHECK(rc != 0, "a second rocshmem_ctx_create succeeded beyond ROCSHMEM_MAX_NUM_HOST_CONTEXTS=1");
    CHECK(strstr(err, "ROCSHMEM_MAX_NUM_HOST_CONTEXTS") && strstr(err, "rocshmem_ctx_create") && hu_count_lines(err) == 1,
          "message for the failed ctx_create:\n%s", err);
    /* After destroying the first one, a create succeeds again. */
    rocshmem_ctx_destroy(ctx);
    rc = rocshmem_ctx_create(ROCSHMEM_CTX_SERIALIZED, &ctx);
    REQUIRE(rc == 0, "rocshmem_ctx_create after destroy = %d", rc);
  }

  const size_t fixed[] = {1, 2, 7, 8, 128, 4093, 65536, ((size_t)1 << 20) + 3, MAX_SIZE};
  const int nfixed = (int)(sizeof fixed / sizeof fixed[0]);
  uint64_t plan = tu_stream(seed, -1, 11);
  uint64_t salt = 1;
  int checks = 0;
  for (int i = 0; i < nfixed + 4; i++) {
    /* the fixed sizes, then a few random ones */
    size_t size = i < nfixed ? fixed[i] : hu_range(&plan, 1, MAX_SIZE);
    int k = n > 1 ? 1 + (int)(tu_next(&plan) % (uint64_t)(n - 1)) : 0;
    if (i == 0) k = 1 % n; /* the plain ring first */
    /* at most a few modes at the large sizes, to keep 8 oversubscribed PEs quick */
    for (int m = 0; m < NMODES; m++) {
      if (size >= ((size_t)1 << 20) && (m + i) % 3 != 0) continue;
      one((enum mode)m, size, k, seed, salt++, ctx);
      checks++;
    }
  }
  /* A put to ourselves is a local copy. */
  one(PUT, 1000, 0, seed, salt++, ctx);
  one(CTX_GET, 1000, 0, seed, salt++, ctx);

  rocshmem_ctx_destroy(ctx);
  rocshmem_free(sym);
  free(priv);
  free(want);
  if (me == 0) printf("rma_ring: %d transfers per PE checked\n", checks);
  rocshmem_finalize();
  TEST_DONE("rma_ring");
  return tu_failures != 0;
}
