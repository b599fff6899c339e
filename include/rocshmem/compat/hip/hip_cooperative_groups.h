/**
 * @file hip/hip_cooperative_groups.h
 * rocSHMEM HIP-on-CUDA compatibility layer: cooperative groups are CUDA's (namespace
 * cooperative_groups, as in HIP). A grid-wide sync needs a cooperative launch
 * (hipLaunchCooperativeKernel).
 */
#ifndef HIP_INCLUDE_HIP_HIP_COOPERATIVE_GROUPS_H
#define HIP_INCLUDE_HIP_HIP_COOPERATIVE_GROUPS_H

#include "hip_runtime.h"

#if defined(__CUDACC__)
/* CUDA's header is read without the compat macros (it defines a helper named abort()). */
#pragma push_macro("abort")
#pragma push_macro("__any")
#pragma push_macro("__all")
#pragma push_macro("__ballot")
#pragma push_macro("__shfl")
#pragma push_macro("__shfl_up")
#pragma push_macro("__shfl_down")
#pragma push_macro("__shfl_xor")
#undef abort
#undef __any
#undef __all
#undef __ballot
#undef __shfl
#undef __shfl_up
#undef __shfl_down
#undef __shfl_xor
#include <cooperative_groups.h>
#pragma pop_macro("abort")
#pragma pop_macro("__any")
#pragma pop_macro("__all")
#pragma pop_macro("__ballot")
#pragma pop_macro("__shfl")
#pragma pop_macro("__shfl_up")
#pragma pop_macro("__shfl_down")
#pragma pop_macro("__shfl_xor")
#endif

#endif  // HIP_INCLUDE_HIP_HIP_COOPERATIVE_GROUPS_H
