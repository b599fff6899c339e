/**
 * @file gpu_globals.cpp
 * The device globals of a GPU build, and the host glue that fills them (GPU builds only; the
 * host platform defines ordinary host variables in src/cxx/shim_core.cpp instead).
 *
 * Device globals (unmangled, upstream's names and sizes, see rocshmem-api.md §7):
 *   ROCSHMEM_CTX_DEFAULT   rocshmem_ctx_t,  16 bytes  (extern "C", namespace rocshmem)
 *   ROCSHMEM_TEAM_WORLD    rocshmem_team_t,  8 bytes  (extern "C", namespace rocshmem::device)
 *   ROCSHMEM_TEAM_SHARED   rocshmem_team_t,  8 bytes  (extern "C", namespace rocshmem::device)
 * and the library's own address table (not upstream's; read by RMA, AMO and signal code):
 *   rocshmemi_device_fast  rocshmem_device_fast, __constant__ (device_abi.h)
 * Device code reaches all device state through them (ctx_opaque points at the default context
 * entry, the team handles at team entries; see device_abi.h). They are `used` so that
 * opt / link-only-needed linking (Triton) keeps them in librocshmem_device_<arch>.bc, and they
 * have default visibility so hipModuleGetGlobal finds them in a JIT module
 * (rocshmem_hipmodule_init copies the library's values there).
 *
 * Host glue, in librocshmem_device.a (HIP only):
 *   extern "C" int rocshmemi_device_globals_set(const void *ctx16, const void *world8,
 *                                               const void *shared8, const void *fast,
 *                                               size_t fast_bytes);
 * Called by the core at init (and at finalize with zeroes) when the program is linked with
 * librocshmem_device.a: copies the 16 + 8 + 8 bytes and the address table (whose size must
 * match this library's: a mismatch means a core and a device library of different versions)
 * into the device variables of the
 * program's own code object (hipMemcpyToSymbol, which synchronises: never called during
 * stream capture), and writes the same bytes into their host shadows, so that host code that
 * names ROCSHMEM_CTX_DEFAULT (for example to pass it to a host API call) sees the same value.
 * A NULL argument leaves that global unchanged. Returns 0 (ROCSHMEM_SUCCESS), or -1 after
 * printing one line naming the HIP error. The core finds the function through a weak
 * reference (linked into the same executable) or with dlsym (exported to librocshmem.so): a
 * program that does not link the device library has no device globals to set.
 */
#include "rocshmem/rocshmem_common.hpp"
#include "rocshmem_device/device_abi.h"

#if ROCSHMEM_GPU_COMPILE

#define ROCSHMEM_GPU_GLOBAL __attribute__((used, visibility("default")))

// Defined at global scope: the header declares them (extern "C") inside namespace rocshmem,
// which names the same objects, but nvcc's registration stub refers to them as ::NAME.
extern "C" {
ROCSHMEM_DEVICE_VAR ROCSHMEM_GPU_GLOBAL rocshmem::rocshmem_ctx_t ROCSHMEM_CTX_DEFAULT = {nullptr, nullptr};
ROCSHMEM_DEVICE_VAR ROCSHMEM_GPU_GLOBAL rocshmem::rocshmem_team_t ROCSHMEM_TEAM_WORLD = nullptr;
ROCSHMEM_DEVICE_VAR ROCSHMEM_GPU_GLOBAL rocshmem::rocshmem_team_t ROCSHMEM_TEAM_SHARED = nullptr;
__constant__ ROCSHMEM_GPU_GLOBAL rocshmem_device_fast rocshmemi_device_fast = {};
}

static_assert(sizeof(ROCSHMEM_CTX_DEFAULT) == 16, "ROCSHMEM_CTX_DEFAULT is 16 bytes (upstream)");
static_assert(sizeof(ROCSHMEM_TEAM_WORLD) == 8, "ROCSHMEM_TEAM_WORLD is 8 bytes (upstream)");
static_assert(sizeof(ROCSHMEM_TEAM_SHARED) == 8, "ROCSHMEM_TEAM_SHARED is 8 bytes (upstream)");

#if (defined(__HIP__) && !defined(__HIP_DEVICE_COMPILE__)) || (defined(__CUDACC__) && !defined(__CUDA_ARCH__))
// The host pass (on NVIDIA, HIP's names come from include/rocshmem/compat).
#include <hip/hip_runtime.h>

#include <stdio.h>
#include <string.h>

namespace {
/** Copies `bytes` into the device variable `symbol` and into its host shadow `shadow`. */
int set_one(const void *symbol, void *shadow, const void *src, size_t bytes, const char *name) {
  if (src == nullptr) return 0;
  hipError_t e = hipMemcpyToSymbol(symbol, src, bytes, 0, hipMemcpyHostToDevice);
  if (e != hipSuccess) {
    fprintf(stderr, "rocshmem: error: setting the device global %s: hipMemcpyToSymbol: %s\n", name,
            hipGetErrorString(e));
    return -1;
  }
  memcpy(shadow, src, bytes);
  return 0;
}
}  // namespace

// What every -fgpu-rdc translation unit that includes rocshmem.hpp refers to (AMD), so that the
// linker takes this object, the glue above all, from librocshmem.a or librocshmem_device.a with
// -l as with the archive's path. Its name is the advice a link without either shows.
extern "C" __attribute__((visibility("default"))) const int rocshmemi_link_librocshmem_a_or_librocshmem_device_a = 1;

extern "C" __attribute__((visibility("default"))) int rocshmemi_device_globals_set(const void *ctx16,
                                                                                   const void *world8,
                                                                                   const void *shared8,
                                                                                   const void *fast,
                                                                                   size_t fast_bytes) {
  if (fast != nullptr && fast_bytes != sizeof(rocshmem_device_fast)) {
    fprintf(stderr,
            "rocshmem: error: the core's device address table is %zu bytes, this device library's %zu: "
            "librocshmem and librocshmem_device come from different versions\n",
            fast_bytes, sizeof(rocshmem_device_fast));
    return -1;
  }
  // On the host, &X of a __device__ variable is its host shadow, which is also the symbol
  // handle HIP's hipMemcpyToSymbol(const void *) maps to the device copy (every HIP version).
  int rc = set_one(&::ROCSHMEM_CTX_DEFAULT, &::ROCSHMEM_CTX_DEFAULT, ctx16, 16, "ROCSHMEM_CTX_DEFAULT");
  rc |= set_one(&::ROCSHMEM_TEAM_WORLD, &::ROCSHMEM_TEAM_WORLD, world8, 8, "ROCSHMEM_TEAM_WORLD");
  rc |= set_one(&::ROCSHMEM_TEAM_SHARED, &::ROCSHMEM_TEAM_SHARED, shared8, 8, "ROCSHMEM_TEAM_SHARED");
  rc |= set_one(&::rocshmemi_device_fast, &::rocshmemi_device_fast, fast, sizeof(rocshmem_device_fast),
                "rocshmemi_device_fast");
  return rc == 0 ? 0 : -1;
}
#endif  // HIP host pass

#endif  // ROCSHMEM_GPU_COMPILE
