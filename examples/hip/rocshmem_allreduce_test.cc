/*
 * allreduce: every PE contributes random ints and gets, on the GPU, their sum, minimum and
 * maximum over all PEs (rocshmem_ctx_int_<op>_reduce_wg on ROCSHMEM_TEAM_WORLD), out of place
 * and in place; the host recomputes each result from every PE's data and compares.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_allreduce_test [elements]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

enum Op { SUM, MIN, MAX };

__global__ void allreduce(int *dst, const int *src, int nelem, int op) {
  switch (op) {
    case SUM: rocshmem_ctx_int_sum_reduce_wg(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, nelem); break;
    case MIN: rocshmem_ctx_int_min_reduce_wg(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, nelem); break;
    default: rocshmem_ctx_int_max_reduce_wg(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, nelem); break;
  }
}

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const std::vector<size_t> sizes = example::sizes(argc, argv, 1 << 16);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem);
  int *dst = example::sym_alloc<int>(max_elem);
  example::Seeds seeds;
  example::Checker check("allreduce");
  std::vector<int> host(max_elem);
  static const char *names[] = {"sum", "min", "max"};

  int round = 0;
  for (size_t nelem : sizes) {
    for (int op = SUM; op <= MAX; op++) {
      for (int in_place = 0; in_place < 2; in_place++, round++) {
        const std::vector<uint64_t> &seed = seeds.next(round);
        int *out = in_place ? src : dst;
        // Small values: the sum over any number of PEs stays far from overflow.
        for (size_t i = 0; i < nelem; i++) host[i] = example::value(seed[me], i, 1000000);
        CHECK_HIP(hipMemcpy(src, host.data(), nelem * sizeof(int), hipMemcpyHostToDevice));
        if (!in_place) CHECK_HIP(hipMemset(dst, 0, nelem * sizeof(int)));
        CHECK_HIP(hipDeviceSynchronize());
        rocshmem_barrier_all();

        hipLaunchKernelGGL(allreduce, dim3(1), dim3(256), 0, 0, out, src, static_cast<int>(nelem), op);
        CHECK_HIP(hipGetLastError());
        CHECK_HIP(hipDeviceSynchronize());

        CHECK_HIP(hipMemcpy(host.data(), out, nelem * sizeof(int), hipMemcpyDeviceToHost));
        for (size_t i = 0; i < nelem; i++) {
          long long want = example::value(seed[0], i, 1000000);
          for (int p = 1; p < npes; p++) {
            long long v = example::value(seed[p], i, 1000000);
            want = op == SUM ? want + v : op == MIN ? (v < want ? v : want) : (v > want ? v : want);
          }
          check.expect(host[i] == want, names[op], i, host[i], want, seed[me]);
        }
        rocshmem_barrier_all();
      }
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
