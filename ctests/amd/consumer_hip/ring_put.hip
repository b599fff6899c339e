// Each PE puts its id into the next PE's symmetric word from a kernel, then every PE checks
// what it received (a program of the kind upstream's users write; see CMakeLists.txt).
#include <hip/hip_runtime.h>
#include <rocshmem/rocshmem.hpp>

#include <cstdio>

using namespace rocshmem;

__global__ void ring_put(int *word, int me, int n) {
  if (threadIdx.x == 0) {
    rocshmem_int_p(word, me + 1, (me + 1) % n);
    rocshmem_quiet();
  }
}

int main() {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  int *word = static_cast<int *>(rocshmem_malloc(sizeof(int)));
  if (word == nullptr) return 1;
  ring_put<<<1, 64>>>(word, me, n);
  if (hipDeviceSynchronize() != hipSuccess) return 1;
  rocshmem_barrier_all();
  int got = 0;
  if (hipMemcpy(&got, word, sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) return 1;
  int want = (me + n - 1) % n + 1;
  std::printf("PE %d: got %d, want %d\n", me, got, want);
  rocshmem_free(word);
  rocshmem_finalize();
  return got == want ? 0 : 1;
}
