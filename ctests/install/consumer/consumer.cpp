// Built against an installed rocSHMEM: each PE adds its number to PE 0 with an atomic.
#include <rocshmem/rocshmem.hpp>
#include <cstdio>

using namespace rocshmem;

int main() {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  long *sum = static_cast<long *>(rocshmem_calloc(1, sizeof(long)));
  rocshmem_long_atomic_add(sum, me + 1, 0);
  rocshmem_barrier_all();
  int ok = me != 0 || *sum == static_cast<long>(n) * (n + 1) / 2;
  if (me == 0) std::printf("consumer: sum %ld over %d PEs %s\n", *sum, n, ok ? "ok" : "WRONG");
  rocshmem_free(sum);
  rocshmem_finalize();
  return ok ? 0 : 1;
}
