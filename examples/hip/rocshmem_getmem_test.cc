/*
 * getmem: every PE reads its right neighbour's symmetric buffer into its own, first with one
 * thread (rocshmem_getmem) and then with the whole work-group (rocshmem_getmem_wg), at several
 * sizes, and checks every element against the data the neighbour wrote.
 *
 *   AMD:    hipcc -fgpu-rdc --offload-arch=<arch> -c rocshmem_getmem_test.cc -I<prefix>/include
 *           hipcc -fgpu-rdc --hip-link --offload-arch=<arch> rocshmem_getmem_test.o <prefix>/lib/librocshmem.a
 *   NVIDIA: nvcc -x cu -rdc=true -arch=sm_90 -I<prefix>/include/rocshmem/compat -I<prefix>/include ...
 *           (see docs/amd.md and examples/CMakeLists.txt)
 *   run:    rocshmem-run -n 2 ./rocshmem_getmem_test [elements]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

__global__ void getmem_thread(int *dst, const int *src, size_t nelem, int peer) {
  if (threadIdx.x == 0) {
    rocshmem_getmem(dst, src, nelem * sizeof(int), peer);
    rocshmem_quiet();
  }
  __syncthreads();
}

__global__ void getmem_wg(int *dst, const int *src, size_t nelem, int peer) {
  rocshmem_getmem_wg(dst, src, nelem * sizeof(int), peer);
}

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const int peer = (me + 1) % npes;
  const std::vector<size_t> sizes = example::sizes(argc, argv);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem);
  int *dst = example::sym_alloc<int>(max_elem);
  example::Seeds seeds;
  example::Checker check("getmem");
  std::vector<int> host(max_elem);

  int round = 0;
  for (size_t nelem : sizes) {
    for (int wg = 0; wg < 2; wg++, round++) {
      const std::vector<uint64_t> &seed = seeds.next(round);
      for (size_t i = 0; i < nelem; i++) host[i] = example::value(seed[me], i);
      CHECK_HIP(hipMemcpy(src, host.data(), nelem * sizeof(int), hipMemcpyHostToDevice));
      CHECK_HIP(hipMemset(dst, 0, nelem * sizeof(int)));
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();  // every PE's src is written

      if (wg)
        getmem_wg<<<dim3(1), dim3(256), 0, 0>>>(dst, src, nelem, peer);
      else
        getmem_thread<<<dim3(1), dim3(64), 0, 0>>>(dst, src, nelem, peer);
      CHECK_HIP(hipGetLastError());
      CHECK_HIP(hipDeviceSynchronize());

      CHECK_HIP(hipMemcpy(host.data(), dst, nelem * sizeof(int), hipMemcpyDeviceToHost));
      for (size_t i = 0; i < nelem; i++) {
        int want = example::value(seed[peer], i);
        check.expect(host[i] == want, wg ? "dst (wg)" : "dst", i, host[i], want, seed[peer]);
      }
      rocshmem_barrier_all();  // the peer has read src before it is rewritten
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
