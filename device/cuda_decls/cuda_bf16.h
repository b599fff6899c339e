/* Declaration stub, NOT NVIDIA's header: __nv_bfloat16 for clang without the CUDA
 * toolkit (see cuda_runtime.h beside this file). */
#ifndef FAKE_CUDA_BF16_H
#define FAKE_CUDA_BF16_H

#include "cuda_runtime.h"

struct __nv_bfloat16 {
  unsigned short __x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
__host__ __device__ __nv_bfloat16 __float2bfloat16(float f);
__host__ __device__ float __bfloat162float(__nv_bfloat16 h);

#endif  // FAKE_CUDA_BF16_H
