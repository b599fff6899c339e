/**
 * @file hip/hip_bf16.h
 * rocSHMEM HIP-on-CUDA compatibility layer: bfloat16. __hip_bfloat16 is CUDA's __nv_bfloat16
 * (2 bytes, the same bit layout); CUDA's functions (__float2bfloat16, __bfloat162float, ...)
 * carry the names HIP uses.
 */
#ifndef HIP_INCLUDE_HIP_HIP_BF16_H
#define HIP_INCLUDE_HIP_HIP_BF16_H

#include "hip_common.h"
#include <cuda_bf16.h>

typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;

#endif  // HIP_INCLUDE_HIP_HIP_BF16_H
