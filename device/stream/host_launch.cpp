// The host platform's side of the stream helper kernels: the core's ordered host queues
// (src/stream/host.rs) run each queued operation through rocshmemi_host_stream_launch, which
// starts its kernel on one work-group of the host launcher's CPU threads and returns when it
// has finished. Compiled into librocshmem by build.rs (host platform only).
#include "kernels.hpp"

#include <string.h>

namespace {

using rocshmem::dev::stream::Args;

struct Entry {
  const char *name;
  void (*run)(const Args &);
};

#define ROCSHMEM_STREAM_HOST_CORE(name) {#name, rocshmem::dev::stream::k_##name},
#define X(T, tname, op, OP) {"reduce_" #tname "_" #op, rocshmem::dev::stream::k_reduce<T, rocshmem::OP>},
const Entry kKernels[] = {
    ROCSHMEM_STREAM_CORE_KERNELS(ROCSHMEM_STREAM_HOST_CORE)
#include "reduce_list.inc"
};
#undef X
#undef ROCSHMEM_STREAM_HOST_CORE

struct Launch {
  void (*run)(const Args &);
  const Args *args;
};

}  // namespace

/**
 * Runs kernel `name` (a kernel of kernels.hpp: "putmem", "reduce_int_sum", ...) with `args` on
 * one work-group of `threads` CPU threads, and returns when it has finished: 0, or -1 if no
 * kernel has that name.
 */
extern "C" int rocshmemi_host_stream_launch(const char *name, const rocshmem_stream_args *args, unsigned threads) {
  for (const Entry &e : kKernels) {
    if (strcmp(e.name, name) != 0) continue;
    Launch l{e.run, args};
    rocshmem::platform::host::launch(rocshmem::platform::host::Dim3{1, 1, 1},
                                     rocshmem::platform::host::Dim3{threads, 1, 1}, 0,
                                     [](void *p) {
                                       const Launch *l = static_cast<const Launch *>(p);
                                       l->run(*l->args);
                                     },
                                     &l);
    return 0;
  }
  return -1;
}

/** How many kernels the host platform has (the core checks it against its own list). */
extern "C" int rocshmemi_host_stream_kernel_count(void) { return int(sizeof kKernels / sizeof kKernels[0]); }
