/* A call that keeps failing the same way prints a few lines, then a count, instead of a line per
 * call (3,000 misaligned atomics printed 3,000 lines; a thread calling after finalize 136,024
 * lines in 0.2 s).
 *
 *   error_flood   3,000 atomics on a misaligned address (each refused), then finalize, then 0.2 s of
 *           rocshmem_long_p calls after finalize. lines.sh counts what was printed: 3 lines per
 *           PE for each, the count of the 2,997 atomics not printed at finalize, the count of the
 *           late calls at exit. */
#include <rocshmem/rocshmem.h>

#include <time.h>

#include "test_util.h"
#include "host_util.h"
#include "misuse_util.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  uint64_t seed = mu_start("error_flood");
  long *buf = (long *)rocshmem_calloc(8, sizeof(long));
  REQUIRE(buf != NULL, "rocshmem_calloc");
  rocshmem_barrier_all();
  long *misaligned = (long *)((char *)buf + 1);
  for (int i = 0; i < 3000; i++) {
    long old = rocshmem_long_atomic_fetch_add(misaligned, 1, (me + 1) % npes);
    if (old != 0) CHECK(0, "refused atomic %d returned %ld", i, old);
  }
  /* The refused atomics changed nothing; an aligned one works. */
  long add = (long)(seed & 0xffff) + me;
  rocshmem_long_atomic_add(&buf[2], add, (me + 1) % npes);
  rocshmem_barrier_all();
  long want = (long)(seed & 0xffff) + (me + npes - 1) % npes;
  CHECK(buf[0] == 0 && buf[1] == 0, "the refused atomics wrote: %ld %ld", buf[0], buf[1]);
  CHECK(buf[2] == want, "buf[2] is %ld, want %ld", buf[2], want);
  rocshmem_barrier_all();
  rocshmem_finalize();
  long calls = 0;
  for (double t0 = now_s(); now_s() - t0 < 0.2; calls++) rocshmem_long_p(buf, 1, 0);
  printf("error_flood: PE %d made %ld calls after finalize\n", me, calls);
  TEST_DONE("error_flood");
  return tu_failures != 0;
}
