/*
 * Negative parse test of the rocSHMEM HIP compat headers: each case calls one HIP API that
 * the layer does not support on NVIDIA, and compiling it must fail with the layer's message
 * ("rocSHMEM HIP compat layer: <name> is not supported on NVIDIA/CUDA; ..."). Select the case
 * with -DCASE=<n>; CMakeLists.txt checks the message for each.
 */
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>

__global__ void kernel(int *p) { p[0] = 1; }

int main() {
  int *d = nullptr;
  hipStream_t stream = nullptr;
  hipEvent_t start = nullptr, stop = nullptr;
  (void)d;
  (void)stream;
  (void)start;
  (void)stop;
#if CASE == 1
  hipExtLaunchKernelGGL(kernel, dim3(1), dim3(1), 0, stream, start, stop, 0, d);
#elif CASE == 2
  void *args[] = {&d};
  hipExtLaunchKernel(reinterpret_cast<const void *>(kernel), dim3(1), dim3(1), args, 0, stream,
                     start, stop, 0);
#elif CASE == 3
  uint32_t mask[2] = {0xF, 0};
  hipExtStreamCreateWithCUMask(&stream, 2, mask);
#elif CASE == 4
  hipModule_t module;
  hipModuleLoadDataEx(&module, "image", 0, nullptr, nullptr);
#elif CASE == 5
  hipLaunchCooperativeKernelMultiDevice(nullptr, 2, 0);
#elif CASE == 6
  unsigned int link = 0, hops = 0;
  hipExtGetLinkTypeAndHopCount(0, 1, &link, &hops);
#else
#error "compile with -DCASE=1..6"
#endif
  return 0;
}
