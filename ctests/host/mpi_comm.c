/* rocSHMEM over an MPI communicator the program made itself (started by mpirun; linked with
 * MPI). The program initialises MPI, then:
 *   mpi_comm world    rocshmem_init_attr(ROCSHMEM_INIT_WITH_MPI_COMM) with attr.mpi_comm
 *                     pointing at MPI_COMM_WORLD;
 *   mpi_comm split    the same with a communicator of the even or the odd ranks: two separate
 *                     rocSHMEM jobs in one mpirun, PE numbers = ranks in the sub-communicator;
 *   mpi_comm thread   rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided, &comm).
 * Then PE numbers are checked against MPI ranks, random data goes around the ring with puts and
 * is checked on the receiving PE, checksums are compared through MPI, and after
 * rocshmem_finalize MPI is still usable (rocSHMEM did not initialise it, so it must not
 * finalise it). */
#include <mpi.h>
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

static uint64_t checksum(const unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "world";
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int wrank, wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (strcmp(mode, "split") == 0) MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comm);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  if (strcmp(mode, "thread") == 0) {
    int prov = -1;
    int rc = rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &prov, &comm);
    REQUIRE(rc == 0, "rocshmem_init_thread = %d", rc);
    CHECK(prov == ROCSHMEM_THREAD_MULTIPLE, "provided = %d", prov);
  } else {
    rocshmem_init_attr_t attr;
    memset(&attr, 0, sizeof attr);
    attr.mpi_comm = &comm;
    int rc = rocshmem_init_attr(ROCSHMEM_INIT_WITH_MPI_COMM, &attr);
    REQUIRE(rc == 0, "rocshmem_init_attr(ROCSHMEM_INIT_WITH_MPI_COMM) = %d", rc);
  }
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  CHECK(me == rank && n == size, "my_pe/n_pes = %d/%d, communicator rank/size = %d/%d", me, n, rank, size);

  /* The seed comes from world rank 0 over MPI (so both jobs of "split" use the same one). */
  uint64_t seed = tu_local_seed();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (wrank == 0) printf("mpi_comm %s: %d ranks, seed 0x%" PRIx64 " (replay: ROCSHMEM_TEST_SEED=0x%" PRIx64 ")\n", mode, wsize, seed, seed);

  const size_t sizes[] = {1, 33, 4096, 100000, (size_t)1 << 20};
  size_t max = (size_t)1 << 20;
  unsigned char *buf = (unsigned char *)rocshmem_malloc(max), *src = (unsigned char *)malloc(max),
                *want = (unsigned char *)malloc(max);
  REQUIRE(buf && src && want, "buffers");
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  for (int i = 0; i < 5; i++) {
    size_t len = sizes[i];
    hu_fill(src, len, seed, wrank, (uint64_t)i);
    rocshmem_putmem(buf, src, len, next);
    rocshmem_barrier_all();
    /* What the previous PE (in this job) sent: it generated with its world rank. */
    int prev_world = -1;
    MPI_Sendrecv(&wrank, 1, MPI_INT, next, 0, &prev_world, 1, MPI_INT, prev, 0, comm, MPI_STATUS_IGNORE);
    hu_fill(want, len, seed, prev_world, (uint64_t)i);
    long d = hu_first_diff(buf, want, len);
    CHECK(d < 0, "%zu bytes from PE %d differ at byte %ld", len, prev, d);
    /* and the same bytes seen through MPI: the checksum of what PE prev sent */
    uint64_t sent = checksum(src, len), got = 0;
    MPI_Sendrecv(&sent, 1, MPI_UINT64_T, next, 1, &got, 1, MPI_UINT64_T, prev, 1, comm, MPI_STATUS_IGNORE);
    CHECK(got == checksum(buf, len), "checksum of %zu bytes from PE %d differs from what it sent", len, prev);
    rocshmem_barrier_all();
  }
  rocshmem_free(buf);
  free(src);
  free(want);
  rocshmem_finalize();

  /* MPI belongs to the program: still initialised and working. */
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0, "rocshmem_finalize finalised an MPI that the program initialised");
  int failures = tu_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (strcmp(mode, "split") == 0) MPI_Comm_free(&comm);
  MPI_Finalize();
  if (tu_failures) fprintf(stderr, "rank %d: mpi_comm %s: %d check(s) failed\n", wrank, mode, tu_failures);
  if (wrank == 0 && total == 0) printf("mpi_comm %s: passed on %d ranks\n", mode, wsize);
  return total != 0;
}
