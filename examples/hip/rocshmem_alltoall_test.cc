/*
 * alltoall: every PE holds one block of random ints per PE and sends block j to PE j
 * (rocshmem_ctx_int_alltoall_wg on ROCSHMEM_TEAM_WORLD); afterwards block j of each PE's
 * destination must be block <this PE> of PE j's source. Checked for every element.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_alltoall_test [elements per block]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

__global__ void alltoall(int *dst, const int *src, int nelem) {
  rocshmem_ctx_int_alltoall_wg(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, nelem);
}

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const std::vector<size_t> sizes = example::sizes(argc, argv, 1 << 15);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem * npes);
  int *dst = example::sym_alloc<int>(max_elem * npes);
  example::Seeds seeds;
  example::Checker check("alltoall");
  std::vector<int> host(max_elem * npes);

  int round = 0;
  for (size_t nelem : sizes) {
    for (int rep = 0; rep < 2; rep++, round++) {
      const std::vector<uint64_t> &seed = seeds.next(round);
      // Element i of PE p's source is value(seed[p], i): block j starts at j * nelem.
      for (size_t i = 0; i < nelem * npes; i++) host[i] = example::value(seed[me], i);
      CHECK_HIP(hipMemcpy(src, host.data(), nelem * npes * sizeof(int), hipMemcpyHostToDevice));
      CHECK_HIP(hipMemset(dst, 0, nelem * npes * sizeof(int)));
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();

      alltoall<<<dim3(1), dim3(rep ? 1024 : 128), 0, 0>>>(dst, src, static_cast<int>(nelem));
      CHECK_HIP(hipGetLastError());
      CHECK_HIP(hipDeviceSynchronize());

      CHECK_HIP(hipMemcpy(host.data(), dst, nelem * npes * sizeof(int), hipMemcpyDeviceToHost));
      for (int j = 0; j < npes; j++)
        for (size_t i = 0; i < nelem; i++) {
          int want = example::value(seed[j], me * nelem + i);
          check.expect(host[j * nelem + i] == want, "dst", j * nelem + i, host[j * nelem + i], want, seed[j]);
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
