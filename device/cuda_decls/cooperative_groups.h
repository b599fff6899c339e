/* Declaration stub, NOT NVIDIA's header: the cooperative-groups names the compat tests use, for clang
 * without the CUDA toolkit (see cuda_runtime.h beside this file). */
#ifndef FAKE_COOPERATIVE_GROUPS_H
#define FAKE_COOPERATIVE_GROUPS_H

#include "cuda_runtime.h"

namespace cooperative_groups {
namespace details {
/* CUDA's header has a helper of this name: the compat abort() macro must not reach it. */
__device__ inline void abort() { __trap(); }
}  // namespace details
class thread_block {
 public:
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
};
template <unsigned int Size>
class thread_block_tile {
 public:
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
  __device__ unsigned int size() const { return Size; }
};
__device__ thread_block this_thread_block();
template <unsigned int Size>
__device__ thread_block_tile<Size> tiled_partition(const thread_block &parent);
}  // namespace cooperative_groups

#endif  // FAKE_COOPERATIVE_GROUPS_H
