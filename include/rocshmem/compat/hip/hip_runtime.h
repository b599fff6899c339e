/**
 * @file hip/hip_runtime.h
 * rocSHMEM HIP-on-CUDA compatibility layer: the main header.
 *
 * `#include <hip/hip_runtime.h>` in a HIP program built by nvcc with
 * -I<prefix>/include/rocshmem/compat lands here: CUDA's runtime, the HIP host API
 * (hip_runtime_api.h) and, when compiling CUDA (__CUDACC__), HIP's launch macro and device
 * builtins (compat_detail/device.h). See include/rocshmem/compat/README.md.
 */
#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_H

#include "hip_common.h"

#include <cuda_runtime.h>
/* Before the wave-intrinsic macros: these headers declare __shfl overloads of their own. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "hip_runtime_api.h"

/* What ROCm's hip_runtime.h brings in for host code. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__CUDACC__)
/*
 * HIP's wave intrinsics (__any, __all, __ballot, __shfl*) and abort() are function-like macros
 * (see compat_detail/device.h). libcu++ (CCCL) declares a constructor `__any(...)`; its header is
 * included here, before the macros exist, so that thrust, cub, cuda/std and cooperative groups
 * still compile when included after this header.
 */
#if defined(__has_include) && __cplusplus >= 201703L
#if __has_include(<cuda/std/__functional/invoke.h>)
#include <cuda/std/__functional/invoke.h>
#endif
#endif
#include "compat_detail/device.h"
#else
/* A host compiler cannot launch kernels: say so instead of a parse error. */
#define hipLaunchKernelGGL(...)                                                              \
  static_assert(false, "rocSHMEM HIP compat layer: hipLaunchKernelGGL needs nvcc (compile " \
                       "this file as CUDA, e.g. nvcc -x cu)")
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#endif

#endif  // HIP_INCLUDE_HIP_HIP_RUNTIME_H
