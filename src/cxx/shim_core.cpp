// The hand-written part of the C++ shim: the C++ globals upstream programs use on the host,
// and the overloads that take an MPI_Comm. Everything else is generated (gen/shim.cpp).
#include <cstdlib>
#include <cstring>

#include "rocshmem/rocshmem.hpp"
#include "rocshmem/api_trace.h"
#include "rocshmem_device/device_abi.h"

#if !ROCSHMEM_GPU_COMPILE
// GPU programs (compiled as HIP or CUDA) name the team handles ROCSHMEM_TEAM_WORLD/_SHARED
// (unmangled, the host shadows of the device globals). A program linked with the device library
// defines them itself and gets them filled by its glue; one that is not (host code that only
// passes ROCSHMEM_TEAM_WORLD to a host or *_on_stream call) finds these weak copies, which
// rocshmemi_cxx_publish sets. Asm labels: in this (host) compile the identifiers are the
// namespaced host variables.
extern "C" {
__attribute__((weak)) rocshmem::rocshmem_team_t rocshmemi_gpu_team_world __asm__("ROCSHMEM_TEAM_WORLD") = nullptr;
__attribute__((weak)) rocshmem::rocshmem_team_t rocshmemi_gpu_team_shared __asm__("ROCSHMEM_TEAM_SHARED") = nullptr;
}

// The host platform's copy of the device library's address table (device/src/common.hpp).
// Weak: a GPU program linking librocshmem_device.a statically carries the host shadow of the
// device global of the same name.
extern "C" {
__attribute__((weak)) rocshmem_device_fast rocshmemi_device_fast = {};
}
#endif

// The device library's host glue (device/src/gpu_globals.cpp), when the program links it: a
// weak reference, so that a static link that has it (hipcc unpacks an archive given by path and
// links its device object) finds it without the program exporting it, and so that linking the
// program with librocshmem.so exports the program's copy for this library.
extern "C" __attribute__((weak)) int rocshmemi_device_globals_set(const void *, const void *, const void *,
                                                                  const void *, size_t);
extern "C" void *rocshmemi_device_globals_set_linked(void) {
  return reinterpret_cast<void *>(&rocshmemi_device_globals_set);
}

// CUDA's module and stream structs (global namespace, as cuda.h declares them).
struct CUmod_st;
struct CUstream_st;

namespace rocshmem {

namespace c_abi {
extern "C" {
int rocshmem_init_thread(int requested, int *provided, void *mpi_comm);
bool rocshmemi_initialized();
}
}  // namespace c_abi

#if !ROCSHMEM_GPU_COMPILE
// On the host platform the "device" globals are ordinary host variables.
extern "C" {
// Weak: a GPU program linking librocshmem_device.a statically carries the host shadow of the
// device global of the same name, which then is the one.
__attribute__((weak)) rocshmem_ctx_t ROCSHMEM_CTX_DEFAULT = {nullptr, nullptr};
}
rocshmem_ctx_t ROCSHMEM_CTX_INVALID = {nullptr, nullptr};
#endif

namespace host {
rocshmem_team_t ROCSHMEM_TEAM_WORLD = ROCSHMEM_TEAM_INVALID;
rocshmem_team_t ROCSHMEM_TEAM_SHARED = ROCSHMEM_TEAM_INVALID;
}  // namespace host

BackendType get_backend_type() { return BackendType::IPC_BACKEND; }

void rocshmem_init(MPI_Comm comm) {
  // Upstream aborts when init fails; a second init only reports.
  if (c_abi::rocshmem_init_thread(ROCSHMEM_THREAD_MULTIPLE, nullptr, &comm) != 0 && !c_abi::rocshmemi_initialized()) {
    exit(1);
  }
}

int rocshmem_init_thread(int requested, int *provided, MPI_Comm comm) {
  return c_abi::rocshmem_init_thread(requested, provided, &comm);
}

// On NVIDIA, HIP programs built through include/rocshmem/compat pass CUDA's module and stream
// types (hipModule_t = CUmodule, hipStream_t = cudaStream_t), which mangle differently.
int rocshmem_hipmodule_init(::CUmod_st *module, ::CUstream_st *stream) {
  return rocshmem_hipmodule_init(reinterpret_cast<hipModule_t>(module), reinterpret_cast<hipStream_t>(stream));
}

// rocSHMEM 2.x: the communicator defaulted to MPI_COMM_WORLD; a NULL one means the world as
// launched (rocshmem-run, mpirun or a single PE).
int rocshmem_init_thread(int requested, int *provided) {
  return c_abi::rocshmem_init_thread(requested, provided, nullptr);
}

}  // namespace rocshmem

// The dispatch table of the stream-ordered calls (api_trace.h), for tracing tools.
extern "C" const rocshmemApiFuncTable *RocshmemGetFunctionTable(void) {
  static const rocshmemApiFuncTable table = {
      sizeof(rocshmemApiFuncTable),
      &rocshmem::rocshmem_barrier_all_on_stream,
      &rocshmem::rocshmem_quiet_on_stream,
      &rocshmem::rocshmem_sync_all_on_stream,
      &rocshmem::rocshmem_alltoallmem_on_stream,
      &rocshmem::rocshmem_broadcastmem_on_stream,
      &rocshmem::rocshmem_getmem_on_stream,
      &rocshmem::rocshmem_putmem_on_stream,
      &rocshmem::rocshmem_putmem_signal_on_stream,
      &rocshmem::rocshmem_signal_wait_until_on_stream,
  };
  return &table;
}

// The rocSHMEM 2.x names of the same globals (gen/shim_v2.cpp).
extern "C" void rocshmemi_cxx_publish_v2(void *ctx_opaque, void *team_opaque, void *world);

// Called by the core at init (handles) and finalize (nulls).
extern "C" void rocshmemi_cxx_publish(rocshmem::rocshmem_ctx_t ctx, rocshmem::rocshmem_team_t world,
                                      rocshmem::rocshmem_team_t shared, const rocshmem_device_fast *fast) {
#if !ROCSHMEM_GPU_COMPILE
  rocshmem::ROCSHMEM_CTX_DEFAULT = ctx;
  if (fast != nullptr) rocshmemi_device_fast = *fast;
  else std::memset(&rocshmemi_device_fast, 0, sizeof rocshmemi_device_fast);
#else
  (void)ctx;
  (void)fast;
#endif
  rocshmem::host::ROCSHMEM_TEAM_WORLD = world;
  rocshmem::host::ROCSHMEM_TEAM_SHARED = shared;
  rocshmemi_cxx_publish_v2(ctx.ctx_opaque, ctx.team_opaque, world);
#if !ROCSHMEM_GPU_COMPILE
  rocshmemi_gpu_team_world = world;
  rocshmemi_gpu_team_shared = shared;
#endif
}
