// A PE lost mid-run under the RO backend: every PE's kernel sends fetch-adds (which always go
// through the proxies and MPI) to its neighbours and reads words back, and PE 1's kernel kills
// its process after half a second (at least one round done). The others are then waiting for
// their proxies, which wait in MPI on the dead PE: the job must end with a message naming it
// (lost_pe.sh checks), not hang. A survivor still running after 50 s says so and exits 99.
#include <rocshmem/host_kernel.hpp>
#include <rocshmem/rocshmem.hpp>

#include <signal.h>
#include <stdio.h>
#include <time.h>

using namespace rocshmem;

static double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

__global__ void storm(uint64_t *words, int me, int npes, int victim, double t0) {
  for (int r = 0; now_s() - t0 < 50; ++r) {
    if (me == victim && r > 0 && now_s() - t0 > 0.5 && threadIdx.x == 0 && blockIdx.x == 0) {
      fprintf(stderr, "lost_pe: PE %d kills itself inside its kernel\n", me);
      fflush(stderr);
      raise(SIGKILL);
    }
    const int pe = (me + 1 + r) % npes;
    rocshmem_uint64_atomic_fetch_add(words + threadIdx.x, 1, pe);
    (void)rocshmem_uint64_g(words + threadIdx.x, pe);
  }
}

int main() {
  rocshmem_init();
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  if (npes < 2) {
    fprintf(stderr, "lost_pe: needs 2 or more PEs\n");
    return 2;
  }
  auto *words = static_cast<uint64_t *>(rocshmem_malloc(64 * sizeof(uint64_t)));
  rocshmem_barrier_all();
  rocshmem_host_launch(storm, dim3(2), dim3(32), words, me, npes, 1, now_s());
  fprintf(stderr, "lost_pe: PE %d survived 50 s with PE 1 dead\n", me);
  return 99;
}
