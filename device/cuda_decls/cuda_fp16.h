/* Declaration stub, NOT NVIDIA's header: __half for clang without the CUDA toolkit
 * (see cuda_runtime.h beside this file). */
#ifndef FAKE_CUDA_FP16_H
#define FAKE_CUDA_FP16_H

#include "cuda_runtime.h"

struct __half {
  unsigned short __x;
};
struct __half2 {
  __half x, y;
};
__host__ __device__ __half __float2half(float f);
__host__ __device__ float __half2float(__half h);
__device__ __half __hadd(__half a, __half b);
#if defined(__CUDA__)
__device__ __half __shfl_sync(unsigned int mask, __half var, int srcLane, int width = warpSize);
__device__ __half __shfl_up_sync(unsigned int mask, __half var, unsigned int delta,
                                 int width = warpSize);
__device__ __half __shfl_down_sync(unsigned int mask, __half var, unsigned int delta,
                                   int width = warpSize);
__device__ __half __shfl_xor_sync(unsigned int mask, __half var, int laneMask,
                                  int width = warpSize);
#endif

#endif  // FAKE_CUDA_FP16_H
