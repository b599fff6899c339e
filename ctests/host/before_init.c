/* Calls before rocshmem_init, as programs written for rocSHMEM 2.x make them (2.x started the
 * library on demand): rocshmem_my_pe, rocshmem_n_pes, rocshmem_team_my_pe/_n_pes,
 * rocshmem_malloc, rocshmem_barrier_all.
 *
 *   before_init report     (default): each returns its failure value (-1, NULL) and the process
 *                          prints exactly one line, naming the first call and saying
 *                          "call rocshmem_init first"; after rocshmem_init everything works.
 *   before_init on-demand  (ROCSHMEM_INIT_ON_DEMAND=1): the first call starts the library as
 *                          rocshmem_init() would; the calls return real values, nothing is
 *                          printed, and the program's own rocshmem_init() later is a no-op.
 * Both end with a ring of puts of fresh random data, checked on the receiving PE. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#define N 4099

int main(int argc, char **argv) {
  const int on_demand = argc > 1 && strcmp(argv[1], "on-demand") == 0;
  char err[8192];

  hu_capture cap = hu_capture_begin();
  const int pe0 = rocshmem_my_pe();
  const int n0 = rocshmem_n_pes();
  const int team_pe0 = rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD);
  const int team_n0 = rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD);
  long *early = (long *)rocshmem_malloc(N * sizeof(long));
  rocshmem_barrier_all();
  hu_capture_end(cap, err, sizeof err);

  cap = hu_capture_begin();
  rocshmem_init();
  char err_init[4096];
  hu_capture_end(cap, err_init, sizeof err_init);

  const int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  REQUIRE(me >= 0 && me < n, "after rocshmem_init: my_pe %d, n_pes %d", me, n);
  if (on_demand) {
    CHECK(pe0 == me && n0 == n, "before init (on demand): my_pe %d n_pes %d, after: %d %d", pe0, n0, me, n);
    CHECK(team_pe0 == me && team_n0 == n, "before init (on demand): team_my_pe %d team_n_pes %d", team_pe0, team_n0);
    CHECK(early != NULL, "before init (on demand): rocshmem_malloc returned NULL");
    CHECK(err[0] == 0, "before init (on demand): the library printed: %s", err);
    CHECK(err_init[0] == 0, "rocshmem_init after an on-demand start printed: %s", err_init);
  } else {
    CHECK(pe0 == -1 && n0 == -1, "before init: my_pe %d n_pes %d (want -1 -1)", pe0, n0);
    CHECK(team_pe0 == -1 && team_n0 == -1, "before init: team_my_pe %d team_n_pes %d (want -1 -1)", team_pe0,
          team_n0);
    CHECK(early == NULL, "before init: rocshmem_malloc returned %p", (void *)early);
    CHECK(hu_count_lines(err) == 1, "before init: %d lines on stderr (want 1):\n%s", hu_count_lines(err), err);
    CHECK(strstr(err, "rocshmem_my_pe") != NULL && strstr(err, "call rocshmem_init first") != NULL,
          "before init: the line does not name rocshmem_my_pe or say \"call rocshmem_init first\": %s", err);
    CHECK(strstr(err, "error") != NULL, "before init: not an error line: %s", err);
    CHECK(err_init[0] == 0, "rocshmem_init printed: %s", err_init);
  }

  /* The library works: a ring of puts, checked by the receiver. */
  const uint64_t seed = hu_agree_seed(on_demand ? "before_init on-demand" : "before_init report");
  long *buf = early ? early : (long *)rocshmem_malloc(N * sizeof(long));
  REQUIRE(buf != NULL, "rocshmem_malloc after init");
  long *src = (long *)malloc(N * sizeof(long)), *want = (long *)malloc(N * sizeof(long));
  REQUIRE(src && want, "malloc");
  hu_fill(src, N * sizeof(long), seed, me, 1);
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  rocshmem_long_put(buf, src, N, to);
  rocshmem_barrier_all();
  hu_fill(want, N * sizeof(long), seed, from, 1);
  long got[N];
  rocshmem_getmem(got, buf, sizeof got, me);
  long d = hu_first_diff(got, want, sizeof got);
  CHECK(d < 0, "data from PE %d differs at byte %ld", from, d);
  rocshmem_barrier_all();
  rocshmem_free(buf);
  free(src);
  free(want);
  rocshmem_finalize();
  TEST_DONE(on_demand ? "before_init on-demand" : "before_init report");
  return tu_failures != 0;
}
