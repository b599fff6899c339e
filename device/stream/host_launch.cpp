// The host platform's side of the stream helper kernels: the core's ordered host queues
// (src/gpu/host_streams.rs) run each queued operation through rocshmemi_host_stream_launch, which
// starts its kernel on the host launcher's CPU threads (every work-group of the grid at once,
// so the collectives spread over several work-groups as on a GPU: grid.hpp) and returns when it
// has finished. Compiled into librocshmem by build.rs (host platform only).
#include "grid.hpp"

#include <string.h>

namespace {

using rocshmem::dev::stream::Args;
namespace grid = rocshmem::dev::stream::grid;

struct Entry {
  const char *name;
  void (*run)(const Args &);
};

#define ROCSHMEM_STREAM_HOST_CORE(name) {#name, grid::k_##name},
#define X(T, tname, op, OP) {"reduce_" #tname "_" #op, grid::k_reduce<T, rocshmem::OP>},
const Entry kKernels[] = {
    ROCSHMEM_STREAM_CORE_KERNELS(ROCSHMEM_STREAM_HOST_CORE)
#include "gen/reduce_list.inc"
};
#undef X
#undef ROCSHMEM_STREAM_HOST_CORE

struct Launch {
  void (*run)(const Args &);
  const Args *args;
};

}  // namespace

/**
 * Runs kernel `name` (a kernel of grid.hpp: "putmem", "reduce_int_sum", ...) with `args` on
 * `blocks` work-groups of `threads` CPU threads each, and returns when it has finished: 0, or
 * -1 if no kernel has that name.
 */
extern "C" int rocshmemi_host_stream_launch(const char *name, const rocshmem_stream_args *args, unsigned blocks,
                                            unsigned threads) {
  for (const Entry &e : kKernels) {
    if (strcmp(e.name, name) != 0) continue;
    Launch l{e.run, args};
    rocshmem::platform::host::launch(rocshmem::platform::host::Dim3{blocks, 1, 1},
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
