/**
 * @file hip/hip_vector_types.h
 * rocSHMEM HIP-on-CUDA compatibility layer: dim3, int2, float4, ... are CUDA's, with the same
 * names and make_* constructors as HIP's.
 */
#ifndef HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H
#define HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H

#include "hip_common.h"
#include <cuda_runtime.h>

#endif  // HIP_INCLUDE_HIP_HIP_VECTOR_TYPES_H
