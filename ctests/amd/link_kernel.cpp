// Link check for librocshmem_device.a (scripts/check-amd.sh): a user kernel, compiled and
// device-linked with -fgpu-rdc as upstream's examples are, that calls the device API and reads
// the device globals. Built and linked only (no AMD GPU needed); never run in CI.
#include <hip/hip_runtime.h>

#include <rocshmem/rocshmem.hpp>

using namespace rocshmem;

// The glue (device/src/gpu_globals.cpp); rocshmem.hpp declares it too in HIP code.
extern "C" int rocshmemi_device_globals_set(const void *ctx16, const void *world8, const void *shared8,
                                            const void *fast, size_t fast_bytes);

__global__ void ring_put(int *dst, const int *src, int n) {
  int me = rocshmem_my_pe();
  int npes = rocshmem_n_pes();
  rocshmem_int_put(dst, src, n, (me + 1) % npes);
  rocshmem_quiet();
  if (rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) != npes) dst[0] = -1;
  if (ROCSHMEM_CTX_DEFAULT.ctx_opaque == nullptr) dst[1] = -1;
  (void)ROCSHMEM_TEAM_SHARED;
  rocshmem_wg_barrier_all();  // a 2.x name: checks the legacy names link too
}

int main() {
  rocshmem_ctx_t ctx{nullptr, nullptr};
  rocshmem_team_t world = nullptr, shared = nullptr;
  if (rocshmemi_device_globals_set(&ctx, &world, &shared, nullptr, 0) != 0) return 1;
  int *d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(int)) != hipSuccess) return 1;
  hipLaunchKernelGGL(ring_put, dim3(1), dim3(64), 0, 0, d, d + 32, 32);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
