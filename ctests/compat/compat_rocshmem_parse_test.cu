/*
 * Parse test: a rocSHMEM HIP program (hip_runtime.h + rocshmem.hpp) through the HIP compat
 * layer, as nvcc would see it. Checked with clang against the stub CUDA headers:
 *
 *   clang++-16 -x cuda --cuda-gpu-arch=sm_90 -nocudainc -nocudalib -fsyntax-only \
 *     -I device/cuda_decls -I include/rocshmem/compat -I include \
 *     ctests/compat/compat_rocshmem_parse_test.cu
 */
#include <hip/hip_runtime.h>
#include <rocshmem/rocshmem.hpp>

using namespace rocshmem;

__global__ void touch(int *p, int value) {
  if (threadIdx.x == 0) p[0] = value;
}

int main() {
  int num_gpus = 0;
  if (hipGetDeviceCount(&num_gpus) != hipSuccess || num_gpus == 0) return 1;
  rocshmem_init();
  int me = rocshmem_my_pe();
  if (hipSetDevice(me % num_gpus) != hipSuccess) return 1;
  int *buf = static_cast<int *>(rocshmem_malloc(sizeof(int)));
  hipStream_t stream;
  if (hipStreamCreate(&stream) != hipSuccess) return 1;
  hipLaunchKernelGGL(touch, dim3(1), dim3(64), 0, stream, buf, me);
  if (hipStreamSynchronize(stream) != hipSuccess) return 1;
  rocshmem_barrier_all();
  rocshmem_free(buf);
  if (hipStreamDestroy(stream) != hipSuccess) return 1;
  rocshmem_finalize();
  return 0;
}
