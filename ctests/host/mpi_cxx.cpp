// The C++ header's MPI overloads, compiled with MPI's own <mpi.h> (started by mpirun):
//   mpi_cxx init       the program initialises MPI, then rocshmem_init(MPI_COMM_WORLD);
//   mpi_cxx thread     the program initialises MPI, then
//                      rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided, MPI_COMM_WORLD);
//   mpi_cxx lib-init   rocshmem_init(MPI_COMM_WORLD) before MPI_Init: rocSHMEM initialises MPI,
//                      and so rocshmem_finalize finalises it.
// Then: PE numbers equal MPI ranks, a typed put ring with random data is checked on the
// receiving PE, and a team sum reduction agrees with MPI_Allreduce.
#include <mpi.h>
#include <rocshmem/rocshmem.hpp>

#include "test_util.h"
#include "host_util.h"

using namespace rocshmem;

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "init";
  bool lib_init = strcmp(mode, "lib-init") == 0;
  int provided = -1;
  if (!lib_init) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (strcmp(mode, "thread") == 0) {
    int prov = -1;
    int rc = rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, &prov, MPI_COMM_WORLD);
    REQUIRE(rc == 0, "rocshmem_init_thread = %d", rc);
    CHECK(prov == ROCSHMEM_THREAD_MULTIPLE, "provided = %d", prov);
  } else {
    rocshmem_init(MPI_COMM_WORLD);
  }
  int flag = 0;
  MPI_Initialized(&flag);
  REQUIRE(flag, "MPI is not initialised after rocshmem_init");
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  CHECK(me == rank && n == size, "my_pe/n_pes %d/%d vs MPI %d/%d", me, n, rank, size);
  uint64_t seed = hu_agree_seed("mpi_cxx");

  const int count = 50000;
  int *dst = static_cast<int *>(rocshmem_malloc(sizeof(int) * count));
  int *src = static_cast<int *>(rocshmem_malloc(sizeof(int) * count));
  int *want = new int[count];
  REQUIRE(dst && src, "rocshmem_malloc");
  hu_fill(src, sizeof(int) * count, seed, me, 1);
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  rocshmem_int_put(dst, src, count, next);
  rocshmem_barrier_all();
  hu_fill(want, sizeof(int) * count, seed, prev, 1);
  CHECK(memcmp(dst, want, sizeof(int) * count) == 0, "int_put from PE %d differs at byte %ld", prev,
        hu_first_diff(dst, want, sizeof(int) * count));

  // Sum of small values over the world team, against MPI's.
  for (int i = 0; i < count; i++) src[i] = (src[i] & 0xffff) - 0x8000;
  rocshmem_barrier_all();
  int rc = rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, count);
  CHECK(rc == 0, "rocshmem_ctx_int_sum_reduce = %d", rc);
  MPI_Allreduce(src, want, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(memcmp(dst, want, sizeof(int) * count) == 0, "sum_reduce differs from MPI_Allreduce at byte %ld",
        hu_first_diff(dst, want, sizeof(int) * count));
  rocshmem_free(src);
  rocshmem_free(dst);
  delete[] want;
  rocshmem_finalize();

  int finalized = 0;
  MPI_Finalized(&finalized);
  if (lib_init) {
    CHECK(finalized == 1, "rocSHMEM initialised MPI but rocshmem_finalize did not finalise it");
  } else {
    CHECK(finalized == 0, "rocshmem_finalize finalised the program's MPI");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
  }
  if (tu_failures) fprintf(stderr, "rank %d: mpi_cxx %s: %d check(s) failed\n", rank, mode, tu_failures);
  else if (rank == 0) printf("mpi_cxx %s: passed on %d ranks\n", mode, size);
  return tu_failures != 0;
}
