/**
 * @file hip/hip_ext.h
 * rocSHMEM HIP-on-CUDA compatibility layer: ROCm's extensions. The ones that have a CUDA
 * counterpart (hipExtMallocWithFlags, hipExtHostAlloc, hipExtGetLastError) are declared in
 * hip_runtime_api.h; the AMD-only ones (hipExtLaunchKernelGGL, hipExtLaunchKernel, CU masks,
 * ...) are declared so that a call stops the compile with a message naming this layer.
 */
#ifndef HIP_INCLUDE_HIP_HIP_EXT_H
#define HIP_INCLUDE_HIP_HIP_EXT_H

#include "hip_runtime.h"

#endif  // HIP_INCLUDE_HIP_HIP_EXT_H
