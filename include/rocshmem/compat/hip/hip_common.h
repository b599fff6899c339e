/**
 * @file hip/hip_common.h
 * rocSHMEM HIP-on-CUDA compatibility layer: platform macros.
 *
 * This directory (include/rocshmem/compat) is only for NVIDIA builds with nvcc: it maps the HIP
 * API onto CUDA so that HIP programs written for rocSHMEM compile unchanged. Under ROCm, build
 * with hipcc and leave this directory off the include path.
 *
 * Defined here: __HIP_PLATFORM_NVIDIA__ and its old spelling __HIP_PLATFORM_NVCC__, and
 * __HIP_DEVICE_COMPILE__ during the device pass (while __CUDA_ARCH__ is defined), as HIP does.
 * __HIPCC__ is deliberately NOT defined: code that tests it expects AMD's compiler.
 */
#ifndef ROCSHMEM_COMPAT_HIP_COMMON_H
#define ROCSHMEM_COMPAT_HIP_COMMON_H

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#error "rocSHMEM HIP compat layer: include/rocshmem/compat maps HIP onto CUDA for nvcc builds only; when compiling for AMD GPUs (hipcc, clang -x hip, __HIP_PLATFORM_AMD__) remove -I<prefix>/include/rocshmem/compat so that ROCm's own HIP headers are used"
#endif

#if !defined(__cplusplus)
#error "rocSHMEM HIP compat layer: the HIP-on-CUDA headers are C++ only (compile with nvcc or a C++ compiler)"
#endif

#include "hip_version.h"

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#ifndef __HIP_PLATFORM_NVCC__
#define __HIP_PLATFORM_NVCC__ 1
#endif

#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

/* HIP's export macros, for headers that use them in declarations. */
#ifndef HIP_PUBLIC_API
#define HIP_PUBLIC_API
#endif
#ifndef HIP_INTERNAL_EXPORTED_API
#define HIP_INTERNAL_EXPORTED_API
#endif

/*
 * ROCSHMEM_HIP_COMPAT_UNSUPPORTED(name, hint): defines `name` as a function template that
 * accepts any arguments and, when a call instantiates it, stops the compile with
 *   "rocSHMEM HIP compat layer: <name> is not supported on NVIDIA/CUDA; <hint>".
 * A plain mention (no call) compiles, so headers that only name the function still build.
 */
namespace hip_compat {
namespace detail {
template <class... T>
struct always_false {
  static constexpr bool value = false;
};
}  // namespace detail
}  // namespace hip_compat

#define ROCSHMEM_HIP_COMPAT_UNSUPPORTED(name, hint)                                             \
  template <class... HipCompatArgs>                                                            \
  inline hipError_t name(HipCompatArgs &&...) {                                                \
    static_assert(::hip_compat::detail::always_false<HipCompatArgs...>::value,                 \
                  "rocSHMEM HIP compat layer: " #name " is not supported on NVIDIA/CUDA; " hint \
                  " (see include/rocshmem/compat/README.md)");                                 \
    return hipErrorNotSupported;                                                               \
  }

#endif  // ROCSHMEM_COMPAT_HIP_COMMON_H
