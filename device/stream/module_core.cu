// The stream helper kernels of the untyped calls as a module loaded at run time: PTX for NVIDIA
// GPUs (build.rs: clang -x cuda --cuda-device-only -S; loaded with cuModuleLoadData, launched
// with cuLaunchKernel, src/gpu/cuda.rs) and code objects for AMD GPUs (device/amd_build.rs:
// clang -x hip --cuda-device-only, one bundle of every arch; loaded with hipModuleLoadData,
// launched with hipModuleLaunchKernel, src/gpu/hip.rs), embedded in librocshmem, on the
// caller's stream.
// Self-contained, no -fgpu-rdc: the device library's templates are header-only, and the
// module's own device globals (ROCSHMEM_CTX_DEFAULT, team handles) come from gpu_globals.cpp;
// the core fills them after loading, as rocshmem_hipmodule_init does for JIT modules. The
// collectives spread over the grid they are launched with (grid.hpp).
// Whole programs: the large shared bodies out of line (ROCSHMEM_DEV_MODULE_OUTLINE, platform.hpp).
#define ROCSHMEM_STREAM_MODULE 1
#include "../src/gpu_globals.cpp"
#include "grid.hpp"

#define ROCSHMEM_STREAM_PTX_CORE(name)                                                           \
  extern "C" __global__ void __launch_bounds__(1024) rocshmemi_stream_##name(rocshmem_stream_args a) { \
    rocshmem::dev::stream::grid::k_##name(a);                                                       \
  }
ROCSHMEM_STREAM_CORE_KERNELS(ROCSHMEM_STREAM_PTX_CORE)
