/**
 * @file hip/hip_fp16.h
 * rocSHMEM HIP-on-CUDA compatibility layer: 16-bit floats. HIP's __half and __half2 are CUDA's
 * (same names, same 2-byte layout); the arithmetic and conversion functions are CUDA's, which
 * share HIP's names (__float2half, __half2float, __hadd, ...).
 */
#ifndef HIP_INCLUDE_HIP_HIP_FP16_H
#define HIP_INCLUDE_HIP_HIP_FP16_H

#include "hip_common.h"
#include <cuda_fp16.h>

#endif  // HIP_INCLUDE_HIP_HIP_FP16_H
