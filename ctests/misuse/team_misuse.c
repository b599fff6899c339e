/* Team misuse is refused on every PE with the real cause, instead of aliasing or hanging.
 *
 *   team_misuse stale   a team handle kept after rocshmem_team_destroy is refused (queries give
 *                       -1, a collective returns an error, a second destroy does nothing) with
 *                       one line saying its team was destroyed, although the next team created
 *                       takes the same slot; the new team works (a reduction of fresh random
 *                       data, checked on every member); 300 create/destroy cycles on one slot
 *                       give 256 distinct handles before one comes back.
 *   team_misuse split   (2+ PEs) one PE passes bad split arguments (stride 0; a size past the
 *                       parent; valid but different ones; a NULL new_team; a different xrange
 *                       to split_2d): every PE gets a non-zero return and INVALID handles, with
 *                       one line naming that PE and what is wrong, and nobody hangs; then
 *                       correct splits still work, up to ROCSHMEM_MAX_NUM_TEAMS (no slot leaked).
 *   team_misuse finalized   after rocshmem_finalize every team call is refused with one line
 *                       saying so, on ROCSHMEM_TEAM_WORLD (INVALID by then) and on a team kept
 *                       from before (split_strided returned 0 and printed nothing).
 */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"

static uint64_t seed;

/* A sum reduction of fresh random ints over `team` (its members call it), checked. */
static void check_team_sum(rocshmem_team_t team, int start, int stride, int size, uint64_t salt, const char *what) {
  enum { N = 1000 };
  int *src = (int *)rocshmem_malloc(N * sizeof(int)), *dst = (int *)rocshmem_malloc(N * sizeof(int));
  REQUIRE(src && dst, "malloc");
  int idx = (me - start) / stride;
  int member = me >= start && (me - start) % stride == 0 && idx < size;
  if (member) {
    hu_fill(src, N * sizeof(int), seed, me, salt);
    for (int i = 0; i < N; i++) src[i] &= 0xffff;
    CHECK(rocshmem_team_my_pe(team) == idx && rocshmem_team_n_pes(team) == size, "%s: team_my_pe %d n_pes %d", what,
          rocshmem_team_my_pe(team), rocshmem_team_n_pes(team));
    CHECK(rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, team, dst, src, N) == 0, "%s: reduce", what);
    int *t = (int *)malloc(N * sizeof(int));
    long long *want = (long long *)calloc(N, sizeof(long long));
    for (int k = 0; k < size; k++) {
      hu_fill(t, N * sizeof(int), seed, start + k * stride, salt);
      for (int i = 0; i < N; i++) want[i] += t[i] & 0xffff;
    }
    for (int i = 0; i < N; i++)
      if (dst[i] != (int)want[i]) {
        CHECK(0, "%s: element %d is %d, want %lld", what, i, dst[i], want[i]);
        break;
      }
    free(t);
    free(want);
  }
  rocshmem_free(dst);
  rocshmem_free(src);
}

static void run_stale(void) {
  rocshmem_team_t t1 = ROCSHMEM_TEAM_INVALID, t2 = ROCSHMEM_TEAM_INVALID;
  REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t1) == 0, "split t1");
  check_team_sum(t1, 0, 1, npes, 1, "t1");
  rocshmem_team_destroy(t1);
  /* The next team takes the slot t1 had: a different shape, so aliasing would show. */
  int size2 = npes > 1 ? (npes + 1) / 2 : 1, stride2 = npes > 1 ? 2 : 1;
  REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, stride2, size2, NULL, 0, &t2) == 0, "split t2");
  int in_t2 = me % stride2 == 0;
  CHECK((t2 != ROCSHMEM_TEAM_INVALID) == in_t2, "t2 membership");
  CHECK(t2 != t1, "the new team got the destroyed team's handle %p", (void *)t1);

  int n;
  MU_CAPTURE(n = rocshmem_team_n_pes(t1));
  CHECK(n == -1, "team_n_pes of a destroyed team gave %d", n);
  mu_expect_line(__LINE__, "rocshmem_team_n_pes", "team that was destroyed", NULL);
  MU_CAPTURE(n = rocshmem_team_my_pe(t1));
  CHECK(n == -1, "team_my_pe of a destroyed team gave %d", n);
  mu_expect_line(__LINE__, "rocshmem_team_my_pe", "team that was destroyed", NULL);
  MU_CAPTURE(n = rocshmem_team_translate_pe(t1, 0, ROCSHMEM_TEAM_WORLD));
  CHECK(n == -1, "translate_pe from a destroyed team gave %d", n);
  mu_expect_line(__LINE__, "rocshmem_team_translate_pe", "team that was destroyed", NULL);
  int *v = (int *)rocshmem_malloc(64 * sizeof(int));
  int rc;
  MU_CAPTURE(rc = rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, t1, v, v, 64));
  CHECK(rc != 0, "reduce on a destroyed team returned %d", rc);
  mu_expect_line(__LINE__, "rocshmem_ctx_int_sum_reduce", "team that was destroyed", NULL);
  MU_CAPTURE({
    rocshmem_team_sync(t1);
    rocshmem_team_destroy(t1);
  });
  CHECK(hu_count_lines(err) == 2 && strstr(err, "rocshmem_team_sync: ") && strstr(err, "rocshmem_team_destroy: "),
        "team_sync and destroy of a destroyed team: %s", err);
  rocshmem_free(v);
  /* t2 is intact. */
  if (in_t2) CHECK(rocshmem_team_n_pes(t2) == size2, "t2 size");
  check_team_sum(t2, 0, stride2, size2, 2, "t2");
  rocshmem_team_destroy(t2);

  /* Many teams in turn on one slot: each handle differs from the previous 255. */
  enum { CYCLES = 300, GENS = 256 };
  static rocshmem_team_t seen[CYCLES];
  int repeats = 0;
  for (int k = 0; k < CYCLES; k++) {
    REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &seen[k]) == 0, "split %d", k);
    for (int j = k - 1; j >= 0 && j > k - GENS; j--) repeats += seen[j] == seen[k];
    if (k >= GENS) CHECK(seen[k] == seen[k - GENS], "cycle %d: handles come back after %d teams", k, GENS);
    rocshmem_team_destroy(seen[k]);
  }
  CHECK(repeats == 0, "%d handle(s) repeated within %d teams", repeats, GENS);
  if (me == 0) printf("team_misuse stale: %d PE(s): destroyed handles refused; %d cycles\n", npes, CYCLES);
}

/* Every PE calls the split with `my` arguments; every PE must fail naming PE `bad` and `text`. */
static void split_fails(int start, int stride, int size, int bad, int bstart, int bstride, int bsize, const char *text,
                        int line) {
  rocshmem_team_t t = (rocshmem_team_t)0x1;
  int mine_bad = me == bad;
  int rc;
  MU_CAPTURE(rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, mine_bad ? bstart : start,
                                              mine_bad ? bstride : stride, mine_bad ? bsize : size, NULL, 0, &t));
  CHECK(rc != 0 && t == ROCSHMEM_TEAM_INVALID, "line %d: split returned %d, team %p", line, rc, (void *)t);
  char who[64];
  snprintf(who, sizeof who, "PE %d (%sparent team PE %d)", bad, mine_bad ? "this PE, " : "", bad);
  mu_expect_line(line, "rocshmem_team_split_strided", who, text, "no team was created", NULL);
}

static void run_split(void) {
  REQUIRE(npes >= 2, "team_misuse split needs 2 or more PEs");
  const int bad = npes > 2 ? 2 : 1;
  /* Stride 0 on one PE. */
  split_fails(0, 1, npes, bad, 0, 0, npes, "start=0, stride=0, size=", __LINE__);
  CHECK(strstr(err, "stride >= 1") != NULL, "the cause: %s", err);
  /* A size that runs past the parent on one PE. */
  split_fails(0, 1, npes, bad, 0, 1, npes + 1, "is outside the parent team", __LINE__);
  /* Valid but different arguments on one PE (the others agree). */
  char common[64];
  snprintf(common, sizeof common, "passed start=0, stride=1, size=%d", npes);
  split_fails(0, 1, npes, bad, 0, 1, npes - 1, common, __LINE__);
  /* A NULL new_team on one PE. */
  {
    rocshmem_team_t t = (rocshmem_team_t)0x1;
    int rc;
    MU_CAPTURE(rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, me == bad ? NULL : &t));
    CHECK(rc != 0, "split with a NULL new_team on PE %d returned %d", bad, rc);
    if (me != bad) CHECK(t == ROCSHMEM_TEAM_INVALID, "team %p", (void *)t);
    char who[64];
    snprintf(who, sizeof who, "PE %d (", bad);
    mu_expect_line(__LINE__, "rocshmem_team_split_strided", who, "new_team is NULL", NULL);
  }
  /* split_2d with another xrange on one PE. */
  {
    rocshmem_team_t x = (rocshmem_team_t)0x1, y = (rocshmem_team_t)0x1;
    int xr = npes > 1 ? npes / 2 : 1;
    int rc;
    MU_CAPTURE(rc = rocshmem_team_split_2d(ROCSHMEM_TEAM_WORLD, me == bad ? xr + 1 : xr, NULL, 0, &x, NULL, 0, &y));
    CHECK(rc != 0 && x == ROCSHMEM_TEAM_INVALID && y == ROCSHMEM_TEAM_INVALID, "split_2d returned %d", rc);
    char who[64], arg[32];
    snprintf(who, sizeof who, "PE %d (", bad);
    snprintf(arg, sizeof arg, "xrange=%d", xr + 1);
    mu_expect_line(__LINE__, "rocshmem_team_split_2d", who, arg, NULL);
  }
  /* Correct splits work, and every slot is free again: ROCSHMEM_MAX_NUM_TEAMS - 2 teams at once. */
  const char *m = getenv("ROCSHMEM_MAX_NUM_TEAMS");
  int max = m ? atoi(m) : 40;
  rocshmem_team_t teams[64];
  int made = 0;
  for (int k = 0; k < max - 2 && k < 64; k++) {
    teams[k] = ROCSHMEM_TEAM_INVALID;
    CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &teams[k]) == 0, "team %d of %d", k,
          max - 2);
    made += teams[k] != ROCSHMEM_TEAM_INVALID;
  }
  CHECK(made == max - 2, "%d teams made, want %d", made, max - 2);
  check_team_sum(teams[made - 1], 0, 1, npes, 3, "the last team");
  for (int k = made - 1; k >= 0; k--) rocshmem_team_destroy(teams[k]);
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens) == 0, "evens");
  check_team_sum(evens, 0, 2, (npes + 1) / 2, 4, "evens");
  rocshmem_team_destroy(evens);
  if (me == 0) printf("team_misuse split: %d PE(s): bad arguments on PE %d refused everywhere\n", npes, bad);
}

/* After finalize: every team call refuses, with one line, on `kept` (a team made before) and on
 * ROCSHMEM_TEAM_WORLD. */
static void run_finalized(rocshmem_team_t kept) {
  const char *after = "called after rocshmem_finalize";
  rocshmem_team_t teams[2] = {ROCSHMEM_TEAM_WORLD, kept};
  for (int i = 0; i < 2; i++) {
    rocshmem_team_t t = teams[i], out = (rocshmem_team_t)1, x = (rocshmem_team_t)1, y = (rocshmem_team_t)1;
    int rc = 0;
    MU_CAPTURE(rc = rocshmem_team_split_strided(t, 0, 1, 1, NULL, 0, &out));
    CHECK(rc != 0 && out == ROCSHMEM_TEAM_INVALID, "team %d: split_strided returned %d", i, rc);
    mu_expect_line(__LINE__, "rocshmem_team_split_strided", after, NULL);
    MU_CAPTURE(rc = rocshmem_team_split_2d(t, 1, NULL, 0, &x, NULL, 0, &y));
    CHECK(rc != 0 && x == ROCSHMEM_TEAM_INVALID && y == ROCSHMEM_TEAM_INVALID, "team %d: split_2d returned %d", i, rc);
    mu_expect_line(__LINE__, "rocshmem_team_split_2d", after, NULL);
    MU_CAPTURE(rc = rocshmem_team_n_pes(t));
    CHECK(rc == -1, "team %d: n_pes returned %d", i, rc);
    mu_expect_line(__LINE__, "rocshmem_team_n_pes", after, NULL);
    MU_CAPTURE(rc = rocshmem_team_my_pe(t));
    CHECK(rc == -1, "team %d: my_pe returned %d", i, rc);
    mu_expect_line(__LINE__, "rocshmem_team_my_pe", after, NULL);
    MU_CAPTURE(rc = rocshmem_team_translate_pe(t, 0, kept));
    CHECK(rc == -1, "team %d: translate_pe returned %d", i, rc);
    mu_expect_line(__LINE__, "rocshmem_team_translate_pe", after, NULL);
    MU_CAPTURE(rocshmem_team_sync(t));
    mu_expect_line(__LINE__, "rocshmem_team_sync", after, NULL);
  }
  MU_CAPTURE(rocshmem_team_destroy(kept));
  mu_expect_line(__LINE__, "rocshmem_team_destroy", after, NULL);
  MU_CAPTURE(rocshmem_team_destroy(ROCSHMEM_TEAM_WORLD));
  mu_expect_line(__LINE__, "rocshmem_team_destroy", after, NULL);
  if (me == 0) printf("team_misuse finalized: %d PE(s): every team call refused after finalize\n", npes);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "stale";
  seed = mu_start("team_misuse");
  rocshmem_team_t kept = ROCSHMEM_TEAM_INVALID;
  if (strcmp(mode, "stale") == 0) {
    run_stale();
  } else if (strcmp(mode, "split") == 0) {
    run_split();
  } else if (strcmp(mode, "finalized") == 0) {
    REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &kept) == 0, "split");
    check_team_sum(kept, 0, 1, npes, 5, "kept");
  } else {
    fprintf(stderr, "usage: team_misuse stale|split|finalized\n");
    return 2;
  }
  rocshmem_finalize();
  if (strcmp(mode, "finalized") == 0) run_finalized(kept);
  TEST_DONE("team_misuse");
  return tu_failures != 0;
}
