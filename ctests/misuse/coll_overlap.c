/* Collectives whose dest partly overlaps their source are refused on every member, before any
 * data moves (OpenSHMEM allows dest == source for reductions and broadcast, and no overlap at
 * all for alltoall): a reduction with dest = source + 1 element over ~400 KB used to give
 * wrong elements at the chunk boundaries of the split algorithm. Exact in place, and buffers
 * that touch without overlapping, still work, checked element by element on every PE against
 * every PE's fresh random data. Covered: team reduce, reduce_scatter, broadcast, the legacy
 * active-set to_all and broadcast, and the stream forms (reduce, broadcastmem, alltoallmem). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"

#define NE 100000 /* ints: 400 KB, above the size at which a reduction splits into chunks */

static uint64_t seed;
static long p_sync[ROCSHMEM_REDUCE_SYNC_SIZE];
static int p_wrk[ROCSHMEM_REDUCE_MIN_WRKDATA_SIZE];

/* PE pe's random ints for `salt` (the same on every PE). */
static void fill_ints(int *v, size_t n, int pe, uint64_t salt) {
  hu_fill(v, n * sizeof(int), seed, pe, salt);
  for (size_t i = 0; i < n; i++) v[i] &= 0xffff; /* sums stay far from overflow */
}

/* Exactly one line naming this PE and `call`, saying dest overlaps source. */
static void expect_refused(const char *call, int line) {
  mu_expect_line(line, call, ": invalid argument: dest ", "overlaps source", "use separate buffers", NULL);
}

/* The region still holds this PE's data for `salt` (nothing was written). */
static void expect_untouched(const int *region, size_t n, uint64_t salt, const char *what) {
  int *want = (int *)malloc(n * sizeof(int));
  fill_ints(want, n, me, salt);
  long d = hu_first_diff(region, want, n * sizeof(int));
  CHECK(d < 0, "%s: the refused call changed byte %ld", what, d);
  free(want);
}

/* out[i] == sum over PEs of their data for `salt`, elements [lo, lo + n) of it. */
static void expect_sum(const int *out, size_t lo, size_t n, size_t total, uint64_t salt, const char *what) {
  long long *want = (long long *)calloc(n, sizeof(long long));
  int *theirs = (int *)malloc(total * sizeof(int));
  for (int p = 0; p < npes; p++) {
    fill_ints(theirs, total, p, salt);
    for (size_t i = 0; i < n; i++) want[i] += theirs[lo + i];
  }
  int bad = 0;
  for (size_t i = 0; i < n && bad < 3; i++)
    if (out[i] != (int)want[i]) {
      CHECK(0, "%s: element %zu is %d, want %lld", what, i, out[i], want[i]);
      bad++;
    }
  free(want);
  free(theirs);
}

int main(void) {
  seed = mu_start("coll_overlap");
  for (int i = 0; i < ROCSHMEM_REDUCE_SYNC_SIZE; i++) p_sync[i] = ROCSHMEM_SYNC_VALUE;
  const rocshmem_ctx_t ctx = ROCSHMEM_CTX_DEFAULT;
  const rocshmem_team_t world = ROCSHMEM_TEAM_WORLD;
  int *buf = (int *)rocshmem_malloc(2 * (NE + 1) * sizeof(int));
  REQUIRE(buf != NULL, "rocshmem_malloc");
  uint64_t salt = 1;

  /* Team reduce, dest = source + 1 and dest = source - 1: refused, nothing written. */
  for (int shift = -1; shift <= 1; shift += 2) {
    int *src = buf + 1, *dst = src + shift;
    fill_ints(buf, NE + 2, me, ++salt);
    rocshmem_barrier_all();
    int rc;
    MU_CAPTURE(rc = rocshmem_ctx_int_sum_reduce(ctx, world, dst, src, NE));
    CHECK(rc != 0, "reduce with dest = source %+d returned %d", shift, rc);
    expect_refused("rocshmem_ctx_int_sum_reduce", __LINE__);
    expect_untouched(buf, NE + 2, salt, "reduce");
  }
  /* Exactly in place: correct. */
  fill_ints(buf, NE, me, ++salt);
  rocshmem_barrier_all();
  CHECK(rocshmem_ctx_int_sum_reduce(ctx, world, buf, buf, NE) == 0, "reduce in place");
  expect_sum(buf, 0, NE, NE, salt, "reduce in place");
  /* Adjacent (dest right after source): no overlap, correct. */
  fill_ints(buf, NE, me, ++salt);
  rocshmem_barrier_all();
  CHECK(rocshmem_ctx_int_sum_reduce(ctx, world, buf + NE, buf, NE) == 0, "reduce into the next elements");
  expect_sum(buf + NE, 0, NE, NE, salt, "reduce into the next elements");
  rocshmem_barrier_all();

  /* Legacy 2.x team name, same function. */
  fill_ints(buf, NE + 1, me, ++salt);
  rocshmem_barrier_all();
  int rc;
  MU_CAPTURE(rc = rocshmem_ctx_int_sum_to_all_team(ctx, world, buf + 1, buf, NE));
  CHECK(rc != 0, "to_all_team with dest = source + 1 returned %d", rc);
  expect_refused("rocshmem_ctx_int_sum_to_all_team", __LINE__);
  expect_untouched(buf, NE + 1, salt, "to_all_team");

  /* Active-set to_all (void). */
  MU_CAPTURE(rocshmem_ctx_int_sum_to_all(ctx, buf + 1, buf, NE, 0, 0, npes, p_wrk, p_sync));
  expect_refused("rocshmem_ctx_int_sum_to_all", __LINE__);
  expect_untouched(buf, NE + 1, salt, "to_all");

  /* reduce_scatter: each member gets NS elements; source NS * npes. */
  const int ns = NE / npes;
  fill_ints(buf, (size_t)ns * npes + 1, me, ++salt);
  rocshmem_barrier_all();
  MU_CAPTURE(rc = rocshmem_ctx_int_sum_reduce_scatter(ctx, world, buf + 1, buf, ns));
  CHECK(rc != 0, "reduce_scatter with dest = source + 1 returned %d", rc);
  expect_refused("rocshmem_ctx_int_sum_reduce_scatter", __LINE__);
  expect_untouched(buf, (size_t)ns * npes + 1, salt, "reduce_scatter");
  fill_ints(buf, (size_t)ns * npes, me, ++salt);
  rocshmem_barrier_all();
  CHECK(rocshmem_ctx_int_sum_reduce_scatter(ctx, world, buf, buf, ns) == 0, "reduce_scatter in place");
  expect_sum(buf, (size_t)me * ns, ns, (size_t)ns * npes, salt, "reduce_scatter in place");
  rocshmem_barrier_all();

  /* Team broadcast (void) from the last PE. */
  const int root = npes - 1;
  fill_ints(buf, NE + 1, me, ++salt);
  rocshmem_barrier_all();
  MU_CAPTURE(rocshmem_ctx_int_broadcast(ctx, world, buf + 1, buf, NE, root));
  expect_refused("rocshmem_ctx_int_broadcast", __LINE__);
  expect_untouched(buf, NE + 1, salt, "broadcast");
  MU_CAPTURE(rocshmem_ctx_int_broadcast_active_set(ctx, buf + 1, buf, NE, root, 0, 0, npes, p_sync));
  expect_refused("rocshmem_ctx_int_broadcast_active_set", __LINE__);
  expect_untouched(buf, NE + 1, salt, "broadcast_active_set");
  /* In place: every PE gets the root's data. */
  rocshmem_ctx_int_broadcast(ctx, world, buf, buf, NE, root);
  {
    int *want = (int *)malloc(NE * sizeof(int));
    fill_ints(want, NE, root, salt);
    long d = hu_first_diff(buf, want, NE * sizeof(int));
    CHECK(d < 0, "broadcast in place from PE %d differs at byte %ld", root, d);
    free(want);
  }
  rocshmem_barrier_all();

  /* Stream forms (host queues here): refused when called, nothing enqueued. */
  fill_ints(buf, 2 * NE, me, ++salt);
  rocshmem_barrier_all();
  MU_CAPTURE(rc = rocshmem_ctx_int_sum_reduce_on_stream(ctx, world, buf + 1, buf, NE, NULL));
  CHECK(rc != 0, "reduce_on_stream with dest = source + 1 returned %d", rc);
  expect_refused("rocshmem_ctx_int_sum_reduce_on_stream", __LINE__);
  MU_CAPTURE(rocshmem_broadcastmem_on_stream(world, buf + 1, buf, NE * sizeof(int), root, NULL));
  expect_refused("rocshmem_broadcastmem_on_stream", __LINE__);
  MU_CAPTURE(rocshmem_alltoallmem_on_stream(world, buf, buf, (size_t)ns * sizeof(int), NULL));
  expect_refused("rocshmem_alltoallmem_on_stream", __LINE__);
  CHECK(rocshmem_host_stream_synchronize(NULL) == 0, "the default stream has nothing that failed");
  expect_untouched(buf, 2 * NE, salt, "stream calls");
  /* In place on a stream: correct. */
  rocshmem_barrier_all();
  CHECK(rocshmem_ctx_int_sum_reduce_on_stream(ctx, world, buf, buf, NE, NULL) == 0, "reduce_on_stream in place");
  CHECK(rocshmem_host_stream_synchronize(NULL) == 0, "synchronize");
  expect_sum(buf, 0, NE, 2 * NE, salt, "reduce_on_stream in place");

  rocshmem_barrier_all();
  rocshmem_free(buf);
  if (me == 0) printf("coll_overlap: %d PE(s): partial overlaps refused, in place and adjacent correct\n", npes);
  rocshmem_finalize();
  TEST_DONE("coll_overlap");
  return tu_failures != 0;
}
