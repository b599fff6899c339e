/*
 * The kernel of the module example: built into its own code object (not linked into the
 * program), loaded at run time with hipModuleLoad, and initialised with
 * rocshmem_hipmodule_init, which sets this module's copies of ROCSHMEM_CTX_DEFAULT,
 * ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED.
 *
 *   AMD:    hipcc --genco -fgpu-rdc --offload-arch=<arch> rocshmem_module_kernel.cc
 *                 -I<prefix>/include -L<prefix>/lib -lrocshmem_device -o rocshmem_module_kernel.co
 *   NVIDIA: nvcc -x cu -rdc=true -dc -arch=sm_90 ... -o k.o
 *           nvcc -dlink -cubin -arch=sm_90 k.o <prefix>/lib/librocshmem_device.a -o rocshmem_module_kernel.cubin
 */
#include <hip/hip_runtime.h>

#include <rocshmem/rocshmem.hpp>

using namespace rocshmem;

// Puts `src` into the right neighbour's `dst` with the whole work-group, then a barrier (which
// completes the puts everywhere). info[0..3]: my PE, PE count, world team size, and 1 when
// the default context reached here set.
extern "C" __global__ void module_ring_put(int *dst, const int *src, size_t nelem, int *info) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  rocshmem_int_put_wg(dst, src, nelem, (me + 1) % npes);
  rocshmem_barrier_all_wg();
  if (threadIdx.x == 0) {
    info[0] = me;
    info[1] = npes;
    info[2] = rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD);
    info[3] = ROCSHMEM_CTX_DEFAULT.ctx_opaque != nullptr;
  }
}
