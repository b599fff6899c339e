/* Every PE initialises, learns its number, and puts its number into every PE's array; each
 * PE checks what it received. */
#include <rocshmem/rocshmem.h>

#include "test_util.h"

int main(int argc, char **argv) {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  REQUIRE(n >= 1 && me >= 0 && me < n, "my_pe=%d n_pes=%d", me, n);
  int *slots = (int *)rocshmem_malloc(sizeof(int) * (size_t)n);
  REQUIRE(slots != NULL, "rocshmem_malloc");
  for (int i = 0; i < n; i++) slots[i] = -1;
  rocshmem_barrier_all();
  for (int p = 0; p < n; p++) rocshmem_int_p(&slots[me], 1000 + me, p);
  rocshmem_barrier_all();
  for (int i = 0; i < n; i++) CHECK(slots[i] == 1000 + i, "slot %d = %d", i, slots[i]);
  int major = 0, minor = 0;
  rocshmem_info_get_version(&major, &minor);
  CHECK(major == 1 && minor == 4, "OpenSHMEM version %d.%d", major, minor);
  char name[ROCSHMEM_MAX_NAME_LEN];
  rocshmem_info_get_name(name);
  CHECK(strlen(name) > 0 && strlen(name) < ROCSHMEM_MAX_NAME_LEN, "name '%s'", name);
  if (me == 0) printf("hello from %d PEs (%s)\n", n, name);
  if (argc > 1 && strcmp(argv[1], "--stats") == 0) {
    /* With ROCSHMEM_DEBUG_LEVEL=...:stats the counters saw our n puts (checked by ctest's
     * PASS_REGULAR_EXPRESSION); after a reset they read zero. */
    fflush(stdout);
    rocshmem_dump_stats();
    rocshmem_reset_stats();
    rocshmem_dump_stats();
  }
  rocshmem_free(slots);
  rocshmem_finalize();
  TEST_DONE("hello");
  return tu_failures != 0;
}
