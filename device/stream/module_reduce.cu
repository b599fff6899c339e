// The 163 typed reduce_on_stream helper kernels (PTX for NVIDIA, code objects for AMD): a module
// of its own, so that init does not pay for their JIT on NVIDIA (the core loads it in the
// background; see docs/streams.md). Built and used as module_core.cu.
// Whole programs: the large shared bodies out of line (ROCSHMEM_DEV_MODULE_OUTLINE, platform.hpp).
#define ROCSHMEM_STREAM_MODULE 1
#include "../src/gpu_globals.cpp"
#include "grid.hpp"

#define X(T, tname, op, OP)                                                                          \
  extern "C" __global__ void __launch_bounds__(1024) rocshmemi_stream_reduce_##tname##_##op(rocshmem_stream_args a) { \
    rocshmem::dev::stream::grid::k_reduce<T, rocshmem::OP>(a);                                          \
  }
#include "gen/reduce_list.inc"
#undef X
