/*
 * broadcast: each PE in turn is the root; it broadcasts random ints to every PE of
 * ROCSHMEM_TEAM_WORLD (rocshmem_ctx_int_broadcast_wg). Every PE, the root included (OpenSHMEM
 * 1.5), checks that its destination holds the root's source.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_broadcast_test [elements]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

__global__ void broadcast(int *dst, const int *src, int nelem, int root) {
  rocshmem_ctx_int_broadcast_wg(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, nelem, root);
}

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const std::vector<size_t> sizes = example::sizes(argc, argv);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem);
  int *dst = example::sym_alloc<int>(max_elem);
  example::Seeds seeds;
  example::Checker check("broadcast");
  std::vector<int> host(max_elem);

  int round = 0;
  for (size_t nelem : sizes) {
    for (int root = 0; root < npes; root++, round++) {
      const std::vector<uint64_t> &seed = seeds.next(round);
      for (size_t i = 0; i < nelem; i++) host[i] = example::value(seed[me], i);
      CHECK_HIP(hipMemcpy(src, host.data(), nelem * sizeof(int), hipMemcpyHostToDevice));
      CHECK_HIP(hipMemset(dst, 0, nelem * sizeof(int)));
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();

      broadcast<<<dim3(1), dim3(256), 0, 0>>>(dst, src, static_cast<int>(nelem), root);
      CHECK_HIP(hipGetLastError());
      CHECK_HIP(hipDeviceSynchronize());

      CHECK_HIP(hipMemcpy(host.data(), dst, nelem * sizeof(int), hipMemcpyDeviceToHost));
      for (size_t i = 0; i < nelem; i++) {
        int want = example::value(seed[root], i);
        check.expect(host[i] == want, "dst", i, host[i], want, seed[root]);
      }
      rocshmem_barrier_all();
    }
  }

  rocshmem_free(dst);
  rocshmem_free(src);
  return check.finish();
}

int main(int argc, char **argv) {
  rocshmem_init();
  int rc = run(argc, argv);
  rocshmem_finalize();
  return rc;
}
