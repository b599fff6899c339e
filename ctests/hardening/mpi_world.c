/* MPI first, then rocSHMEM, the most common MPI pattern, in a program built by the MPI compiler
 * wrapper as a normal executable (not -fPIC), started by mpirun. Because the program names
 * MPI_COMM_WORLD, the executable holds its own copy of the MPI library's world communicator
 * (Open MPI: a copy relocation of ompi_mpi_comm_world), and that copy is the one MPI uses.
 *   mpi_world init     MPI_Init, MPI_Comm_rank(MPI_COMM_WORLD), then plain rocshmem_init()
 *   mpi_world thread   the same with rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided, NULL)
 * PE numbers must be the world ranks; random data goes around the ring with puts at several
 * sizes and is checked on the receiving PE, and every rank's result is combined with
 * MPI_Allreduce (MPI_INT, MPI_SUM: more predefined handles named by the program). Built with
 * Open MPI's wrapper and, where installed, with MPICH's (mpicc.mpich, run by mpiexec.mpich). */
#include <mpi.h>
#include <rocshmem/rocshmem.h>

#include "test_util.h"

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "init";
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (strcmp(mode, "thread") == 0) {
    int provided = -1;
    int rc = rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided, NULL);
    REQUIRE(rc == 0, "rocshmem_init_thread(..., NULL) = %d", rc);
    CHECK(provided == ROCSHMEM_THREAD_MULTIPLE, "provided = %d", provided);
  } else {
    rocshmem_init();
  }
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  CHECK(me == rank && n == size, "my_pe/n_pes = %d/%d, MPI_COMM_WORLD rank/size = %d/%d", me, n, rank, size);

  /* The seed: rank 0's, over MPI (the program's own use of MPI goes on working). */
  uint64_t seed = tu_local_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_world %s: %d ranks, seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", mode, size, seed, seed);

  const size_t sizes[] = {1, 7, 4096, 65537, (size_t)1 << 20};
  const size_t max = (size_t)1 << 20;
  unsigned char *dst = (unsigned char *)rocshmem_malloc(max);
  unsigned char *src = (unsigned char *)malloc(max), *want = (unsigned char *)malloc(max);
  REQUIRE(dst && src && want, "buffers");
  int next = (me + 1) % n, prev = (me + n - 1) % n, bad = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t len = sizes[i];
    uint64_t st = tu_stream(seed, me, i);
    for (size_t k = 0; k < len; k++) src[k] = (unsigned char)tu_next(&st);
    rocshmem_putmem(dst, src, len, next);
    rocshmem_barrier_all();
    st = tu_stream(seed, prev, i);
    for (size_t k = 0; k < len; k++) want[k] = (unsigned char)tu_next(&st);
    if (memcmp(dst, want, len) != 0) {
      bad++;
      CHECK(0, "%zu bytes from PE %d differ", len, prev);
    }
    rocshmem_barrier_all();
  }
  int all_bad = -1;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all_bad == 0, "%d ring transfers differed over all ranks", all_bad);
  rocshmem_free(dst);
  free(src);
  free(want);
  rocshmem_finalize();
  /* rocSHMEM did not initialise MPI, so MPI is still usable. */
  int ok = tu_failures == 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_ok == size) printf("mpi_world %s: passed on %d PEs\n", mode, size);
  MPI_Finalize();
  return tu_failures ? 1 : 0;
}
