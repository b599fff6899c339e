/* Teams: split_strided (evens/odds, random strided subsets, a split of a split), team_n_pes /
 * team_my_pe, translate_pe between teams, barrier and sync on split teams (checked to really
 * synchronise), data exchange addressed through translated PE numbers, destroy and reuse of
 * slots many more times than ROCSHMEM_MAX_NUM_TEAMS, split_2d, exhaustion of the team slots
 * (non-zero return and a message naming ROCSHMEM_MAX_NUM_TEAMS), ROCSHMEM_TEAM_SHARED and
 * ROCSHMEM_TEAM_INVALID (-1 from the queries). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#include <time.h>

static int me, n;
static int *flags; /* symmetric, one per round */
static int *slots; /* symmetric, n ints */

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Checks a team of world PEs start + i*stride, i < size, from this PE's point of view. */
static void check_team(rocshmem_team_t t, int start, int stride, int size, const char *what) {
  int member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
  if (!member) {
    CHECK(t == ROCSHMEM_TEAM_INVALID, "%s: PE %d is not a member but got a team", what, me);
    return;
  }
  REQUIRE(t != ROCSHMEM_TEAM_INVALID, "%s: member PE %d got ROCSHMEM_TEAM_INVALID", what, me);
  int idx = (me - start) / stride;
  CHECK(rocshmem_team_n_pes(t) == size, "%s: team_n_pes = %d, want %d", what, rocshmem_team_n_pes(t), size);
  CHECK(rocshmem_team_my_pe(t) == idx, "%s: team_my_pe = %d, want %d", what, rocshmem_team_my_pe(t), idx);
  for (int i = -1; i <= size; i++) {
    int w = rocshmem_team_translate_pe(t, i, ROCSHMEM_TEAM_WORLD);
    int want = (i >= 0 && i < size) ? start + i * stride : -1;
    CHECK(w == want, "%s: translate_pe(team, %d, WORLD) = %d, want %d", what, i, w, want);
  }
  for (int p = 0; p < n; p++) {
    int want = (p >= start && (p - start) % stride == 0 && (p - start) / stride < size) ? (p - start) / stride : -1;
    int got = rocshmem_team_translate_pe(ROCSHMEM_TEAM_WORLD, p, t);
    CHECK(got == want, "%s: translate_pe(WORLD, %d, team) = %d, want %d", what, p, got, want);
  }
}

/* On a split team: the last member enters late after raising a flag on every member; barrier
 * (or sync) must not let anyone out before that. Then every member tells every member its team
 * index (addressed by translating team PEs to world PEs). */
static void exercise(rocshmem_team_t t, int round, int use_sync) {
  int size = rocshmem_team_n_pes(t), idx = rocshmem_team_my_pe(t);
  if (idx == size - 1) {
    if (round < 3) sleep_ms(60);
    for (int i = 0; i < size; i++) rocshmem_int_p(&flags[round], 1, rocshmem_team_translate_pe(t, i, ROCSHMEM_TEAM_WORLD));
  }
  if (use_sync) {
    rocshmem_quiet();
    rocshmem_team_sync(t);
  } else {
    rocshmem_barrier(t);
  }
  CHECK(flags[round] == 1, "round %d: %s returned before the last member entered", round, use_sync ? "team_sync" : "barrier");
  for (int i = 0; i < size; i++) rocshmem_int_p(&slots[idx], 1000 * round + idx, rocshmem_team_translate_pe(t, i, ROCSHMEM_TEAM_WORLD));
  rocshmem_barrier(t);
  for (int i = 0; i < size; i++) CHECK(slots[i] == 1000 * round + i, "round %d: slot %d = %d", round, i, slots[i]);
  rocshmem_barrier(t); /* before anyone reuses the slots */
}

int main(void) {
  rocshmem_init();
  me = rocshmem_my_pe();
  n = rocshmem_n_pes();
  uint64_t seed = hu_agree_seed("teams");
  uint64_t plan = tu_stream(seed, -1, 5);
  const char *mt = getenv("ROCSHMEM_MAX_NUM_TEAMS");
  int max_teams = mt && *mt ? atoi(mt) : 40;
  const int rounds = 3 * max_teams + 40;
  flags = (int *)rocshmem_calloc((size_t)rounds + 8, sizeof(int));
  slots = (int *)rocshmem_calloc((size_t)n, sizeof(int));
  REQUIRE(flags && slots, "rocshmem_calloc");
  char err[4096];

  /* Predefined teams. */
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) == n && rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD) == me, "WORLD: %d/%d",
        rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD), rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD));
  CHECK(ROCSHMEM_TEAM_SHARED != ROCSHMEM_TEAM_INVALID, "ROCSHMEM_TEAM_SHARED is INVALID");
  /* SHARED: the PEs of this node (all of them, unless the test runs on pretend nodes). */
  int ns = hu_node_size(me, n), s0 = hu_node_start(me, n);
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_SHARED) == ns, "SHARED has %d PEs, want %d",
        rocshmem_team_n_pes(ROCSHMEM_TEAM_SHARED), ns);
  CHECK(rocshmem_team_my_pe(ROCSHMEM_TEAM_SHARED) == me - s0, "SHARED my_pe = %d", rocshmem_team_my_pe(ROCSHMEM_TEAM_SHARED));
  for (int p = 0; p < ns; p++)
    CHECK(rocshmem_team_translate_pe(ROCSHMEM_TEAM_SHARED, p, ROCSHMEM_TEAM_WORLD) == s0 + p, "SHARED %d -> WORLD", p);
  rocshmem_barrier(ROCSHMEM_TEAM_SHARED);
  rocshmem_team_sync(ROCSHMEM_TEAM_WORLD);

  /* INVALID: -1 from every query (no crash). */
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_INVALID) == -1, "team_n_pes(INVALID)");
  CHECK(rocshmem_team_my_pe(ROCSHMEM_TEAM_INVALID) == -1, "team_my_pe(INVALID)");
  CHECK(rocshmem_team_translate_pe(ROCSHMEM_TEAM_INVALID, 0, ROCSHMEM_TEAM_WORLD) == -1, "translate from INVALID");
  CHECK(rocshmem_team_translate_pe(ROCSHMEM_TEAM_WORLD, 0, ROCSHMEM_TEAM_INVALID) == -1, "translate to INVALID");
  CHECK(rocshmem_team_translate_pe(ROCSHMEM_TEAM_WORLD, n, ROCSHMEM_TEAM_WORLD) == -1, "translate of PE n");
  CHECK(rocshmem_team_translate_pe(ROCSHMEM_TEAM_WORLD, -1, ROCSHMEM_TEAM_WORLD) == -1, "translate of PE -1");
  rocshmem_team_destroy(ROCSHMEM_TEAM_INVALID); /* ignored */
  rocshmem_team_destroy(ROCSHMEM_TEAM_WORLD);   /* ignored: WORLD keeps working */
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) == n, "WORLD after team_destroy(WORLD)");

  int round = 0;
  /* Evens and odds. */
  rocshmem_team_t evens, odds;
  int ne = (n + 1) / 2, no = n / 2;
  CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, ne, NULL, 0, &evens) == 0, "split evens");
  check_team(evens, 0, 2, ne, "evens");
  if (no > 0) {
    CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 1, 2, no, NULL, 0, &odds) == 0, "split odds");
    check_team(odds, 1, 2, no, "odds");
  } else {
    odds = ROCSHMEM_TEAM_INVALID;
  }
  rocshmem_team_t mine = me % 2 == 0 ? evens : odds;
  rocshmem_team_t other = me % 2 == 0 ? odds : evens;
  CHECK(other == ROCSHMEM_TEAM_INVALID, "member of both evens and odds");
  exercise(mine, round++, 0);
  exercise(mine, round++, 1);
  /* Evens and SHARED/WORLD translate both ways. */
  if (me % 2 == 0)
    for (int i = 0; i < ne; i++)
      CHECK(rocshmem_team_translate_pe(evens, i, ROCSHMEM_TEAM_SHARED) ==
                (hu_node_start(2 * i, n) == s0 ? 2 * i - s0 : -1), "evens %d -> SHARED", i);
  /* A split of a split: every other even PE (world 0, 4, 8, ...). */
  if (me % 2 == 0) {
    rocshmem_team_t quarter;
    int nq = (ne + 1) / 2;
    CHECK(rocshmem_team_split_strided(evens, 0, 2, nq, NULL, 0, &quarter) == 0, "split of evens");
    check_team(quarter, 0, 4, nq, "evens of evens");
    if (quarter != ROCSHMEM_TEAM_INVALID) {
      for (int i = 0; i < nq; i++)
        CHECK(rocshmem_team_translate_pe(quarter, i, evens) == 2 * i, "quarter %d -> evens = %d", i,
              rocshmem_team_translate_pe(quarter, i, evens));
      rocshmem_barrier(quarter);
      rocshmem_team_destroy(quarter);
    }
  }
  rocshmem_barrier_all();
  round = 2;
  rocshmem_team_destroy(mine);

  /* Random strided subsets, created and destroyed many more times than there are slots. */
  for (int r = 0; r < rounds - 4; r++) {
    int stride = 1 + (int)(tu_next(&plan) % (uint64_t)(n > 1 ? n - 1 : 1));
    int start = (int)(tu_next(&plan) % (uint64_t)n);
    int maxsize = (n - 1 - start) / stride + 1;
    int size = 1 + (int)(tu_next(&plan) % (uint64_t)maxsize);
    rocshmem_team_t t;
    int rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
    REQUIRE(rc == 0, "round %d: split_strided(%d, %d, %d) = %d (slots not reused?)", r, start, stride, size, rc);
    char what[96];
    snprintf(what, sizeof what, "round %d split(%d,%d,%d)", r, start, stride, size);
    check_team(t, start, stride, size, what);
    if (t != ROCSHMEM_TEAM_INVALID) {
      exercise(t, round + r, r % 2);
      rocshmem_team_destroy(t);
    }
  }
  rocshmem_barrier_all();

  /* split_2d with a random x range. */
  for (int rep = 0; rep < 3; rep++) {
    int xr = 1 + (int)(tu_next(&plan) % (uint64_t)n);
    if (rep == 0) xr = n > 1 ? 2 : 1;
    rocshmem_team_t xt, yt;
    int rows = (n + xr - 1) / xr;
    hu_capture c2 = hu_capture_begin();
    int rc = rocshmem_team_split_2d(ROCSHMEM_TEAM_WORLD, xr, NULL, 0, &xt, NULL, 0, &yt);
    hu_capture_end(c2, err, sizeof err);
    if (rc != 0) {
      /* Allowed only when the rows and columns need more slots than there are; then both
       * handles are INVALID and no slot is lost (checked by the exhaustion count below). */
      CHECK(rows + xr > max_teams - 2, "split_2d(%d) = %d with %d free slots:\n%s", xr, rc, max_teams - 2, err);
      CHECK(xt == ROCSHMEM_TEAM_INVALID && yt == ROCSHMEM_TEAM_INVALID, "failed split_2d left team handles");
      CHECK(strstr(err, "ROCSHMEM_MAX_NUM_TEAMS") != NULL, "failed split_2d message:\n%s", err);
      continue;
    }
    CHECK(err[0] == 0, "split_2d printed:\n%s", err);
    int row = me / xr, col = me % xr;
    int rowlen = (row + 1) * xr <= n ? xr : n - row * xr;
    int collen = (n - col + xr - 1) / xr;
    char what[64];
    snprintf(what, sizeof what, "split_2d(%d) x", xr);
    check_team(xt, row * xr, 1, rowlen, what);
    snprintf(what, sizeof what, "split_2d(%d) y", xr);
    check_team(yt, col, xr, collen, what);
    rocshmem_barrier(xt);
    rocshmem_barrier(yt);
    rocshmem_team_destroy(xt);
    rocshmem_team_destroy(yt);
  }
  rocshmem_barrier_all();

  /* Bad arguments: non-zero and INVALID on every PE, nothing else breaks. */
  rocshmem_team_t bad = (rocshmem_team_t)1;
  hu_capture c = hu_capture_begin();
  int rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &bad);
  hu_capture_end(c, err, sizeof err);
  CHECK(rc != 0 && bad == ROCSHMEM_TEAM_INVALID, "split of n+1 PEs: rc %d", rc);
  CHECK(strstr(err, "rocshmem_team_split_strided") && hu_count_lines(err) == 1, "message:\n%s", err);
  c = hu_capture_begin();
  rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 0, 1, NULL, 0, &bad);
  rc |= rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, -1, 1, 1, NULL, 0, &bad);
  hu_capture_end(c, err, sizeof err);
  CHECK(rc != 0 && bad == ROCSHMEM_TEAM_INVALID && hu_count_lines(err) == 2, "bad splits: rc %d, stderr:\n%s", rc, err);
  /* A PE outside the parent holds INVALID and takes part with nothing to do (as upstream):
   * success, INVALID out, no message. */
  bad = (rocshmem_team_t)1;
  c = hu_capture_begin();
  rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad);
  hu_capture_end(c, err, sizeof err);
  CHECK(rc == 0 && bad == ROCSHMEM_TEAM_INVALID && err[0] == 0, "split of INVALID: rc %d, stderr:\n%s", rc, err);

  /* Exhaustion: WORLD and SHARED hold 2 slots, so max_teams - 2 splits fit. */
  rocshmem_team_t held[4096];
  int nheld = 0;
  for (;;) {
    rocshmem_team_t t;
    c = hu_capture_begin();
    rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t);
    hu_capture_end(c, err, sizeof err);
    if (rc != 0) {
      CHECK(t == ROCSHMEM_TEAM_INVALID, "failed split left a team handle");
      CHECK(strstr(err, "ROCSHMEM_MAX_NUM_TEAMS") && strstr(err, "rocshmem_team_split_strided") && hu_count_lines(err) == 1,
            "exhaustion message:\n%s", err);
      break;
    }
    REQUIRE(nheld < 4096, "more than 4096 teams");
    held[nheld++] = t;
  }
  CHECK(nheld == max_teams - 2, "%d splits fit, want ROCSHMEM_MAX_NUM_TEAMS - 2 = %d", nheld, max_teams - 2);
  /* The held teams still work, and after destroying them splits work again. */
  if (nheld > 0) exercise(held[nheld - 1], rounds + 1, 0);
  while (nheld > 0) rocshmem_team_destroy(held[--nheld]);
  rocshmem_team_t again;
  CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &again) == 0, "split after freeing all slots");
  if (again) {
    exercise(again, rounds + 2, 1);
    rocshmem_team_destroy(again);
  }

  /* split_2d that fails on some PEs only: PE 0 fills all but one of its slots with teams of
   * itself, so its row gets a slot and its column does not, while every other PE has room.
   * Every PE must still get a non-zero return and INVALID for both, and nobody may hang. */
  if (n >= 2) {
    rocshmem_team_t solo[4096];
    int k = max_teams - 3;
    for (int i = 0; i < k; i++) {
      CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &solo[i]) == 0, "solo split %d", i);
      CHECK((solo[i] != ROCSHMEM_TEAM_INVALID) == (me == 0), "solo split %d: PE %d got %p", i, me, (void *)solo[i]);
    }
    rocshmem_team_t xt = (rocshmem_team_t)1, yt = (rocshmem_team_t)1;
    c = hu_capture_begin();
    rc = rocshmem_team_split_2d(ROCSHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt);
    hu_capture_end(c, err, sizeof err);
    CHECK(rc != 0, "split_2d with PE 0 short of slots returned 0 on PE %d", me);
    CHECK(xt == ROCSHMEM_TEAM_INVALID && yt == ROCSHMEM_TEAM_INVALID, "partly failed split_2d left handles");
    CHECK(strstr(err, "rocshmem_team_split_2d") != NULL, "partly failed split_2d message:\n%s", err);
    for (int i = 0; i < k; i++) rocshmem_team_destroy(solo[i]);
    rocshmem_barrier_all();
    CHECK(rocshmem_team_split_2d(ROCSHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt) == 0, "split_2d after freeing");
    rocshmem_team_destroy(xt);
    rocshmem_team_destroy(yt);
  }

  rocshmem_free(slots);
  rocshmem_free(flags);
  rocshmem_finalize();
  TEST_DONE("teams");
  return tu_failures != 0;
}
