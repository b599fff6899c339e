/* A child of fork() is not a PE: every rocSHMEM call it makes fails with one line saying so, and
 * the parent's job goes on untouched (before, a child calling rocshmem_finalize ran the finalize
 * protocol on the parent's control region and stopped the whole job).
 *
 *   fork    each PE forks three children: one makes host calls (queries, put, barrier, malloc, a
 *           team split, finalize), each refused with the line; one calls rocshmem_global_exit(7)
 *           (the child exits alone, with 7); one calls rocshmem_init (refused, it exits 1). The
 *           parents meanwhile and afterwards put fresh random data around the ring, checked on
 *           the receiving PE, and finalize normally. */
#include <rocshmem/rocshmem.h>

#include <sys/wait.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"

enum { BYTES = 1 << 16 };

/* The calls of a forked child, each refused with one line; exits with the number of failures. */
static void child_calls(unsigned char *heap) {
  int pe = 0;
  MU_CAPTURE(pe = rocshmem_my_pe());
  CHECK(pe == -1, "rocshmem_my_pe in the child returned %d", pe);
  mu_expect_line(__LINE__, "rocshmem_my_pe", "called in a forked child", "not a PE", NULL);
  unsigned char junk[64] = {0};
  MU_CAPTURE(rocshmem_putmem(heap, junk, sizeof junk, (me + 1) % npes));
  mu_expect_line(__LINE__, "rocshmem_putmem", "called in a forked child", NULL);
  MU_CAPTURE(rocshmem_barrier_all());
  mu_expect_line(__LINE__, "rocshmem_barrier_all", "called in a forked child", NULL);
  void *p = (void *)1;
  MU_CAPTURE(p = rocshmem_malloc(4096));
  CHECK(p == NULL, "rocshmem_malloc in the child returned %p", p);
  mu_expect_line(__LINE__, "rocshmem_malloc", "called in a forked child", NULL);
  rocshmem_team_t t = (rocshmem_team_t)1;
  int rc = 0;
  MU_CAPTURE(rc = rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t));
  CHECK(rc != 0 && t == ROCSHMEM_TEAM_INVALID, "team_split_strided in the child: %d", rc);
  mu_expect_line(__LINE__, "rocshmem_team_split_strided", "called in a forked child", NULL);
  MU_CAPTURE(rocshmem_finalize());
  mu_expect_line(__LINE__, "rocshmem_finalize", "called in a forked child", NULL);
  fflush(stdout);
  _exit(tu_failures);
}

/* Forks a child that runs `what` (0: child_calls, 1: global_exit, 2: init) and returns its exit
 * status; the child's stderr goes to `err`. */
static int fork_child(int what, unsigned char *heap) {
  fflush(stdout);
  int status = -1;
  MU_CAPTURE({
    pid_t c = fork();
    if (c == 0) {
      if (what == 0) child_calls(heap);
      if (what == 1) rocshmem_global_exit(7);
      if (what == 2) rocshmem_init();
      _exit(99); /* none of them may return */
    }
    REQUIRE(c > 0, "fork");
    REQUIRE(waitpid(c, &status, 0) == c, "waitpid");
  });
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* One round of the ring: fresh random data to the next PE, checked by it. */
static void ring(unsigned char *heap, uint64_t seed, uint64_t salt) {
  int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  unsigned char *mine = (unsigned char *)malloc(BYTES), *want = (unsigned char *)malloc(BYTES);
  hu_fill(mine, BYTES, seed, me, salt);
  rocshmem_putmem(heap, mine, BYTES, next);
  rocshmem_barrier_all();
  hu_fill(want, BYTES, seed, prev, salt);
  long d = hu_first_diff(heap, want, BYTES);
  CHECK(d < 0, "round %d: byte %ld from PE %d differs", (int)salt, d, prev);
  rocshmem_barrier_all();
  free(mine);
  free(want);
}

int main(void) {
  uint64_t seed = mu_start("fork");
  unsigned char *heap = (unsigned char *)rocshmem_malloc(BYTES);
  REQUIRE(heap != NULL, "rocshmem_malloc");
  ring(heap, seed, 1);
  int st = fork_child(0, heap);
  CHECK(st == 0, "the child making calls ended with %d (its failed checks, or a signal)", st);
  if (st != 0) fprintf(stderr, "child's output:\n%s", err);
  ring(heap, seed, 2);
  st = fork_child(1, heap);
  CHECK(st == 7, "the child calling rocshmem_global_exit(7) ended with %d", st);
  CHECK(strstr(err, "called in a forked child") && strstr(err, "rocshmem_global_exit") &&
            strstr(err, "exits alone, with status 7"),
        "the global_exit child printed:\n%s", err);
  st = fork_child(2, heap);
  CHECK(st == 1, "the child calling rocshmem_init ended with %d", st);
  CHECK(strstr(err, "rocshmem_init") && strstr(err, "called in a forked child"), "the init child printed:\n%s", err);
  ring(heap, seed, 3);
  rocshmem_free(heap);
  rocshmem_finalize();
  TEST_DONE("fork");
  return tu_failures != 0;
}
