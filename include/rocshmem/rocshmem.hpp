/**
 * @file rocshmem.hpp
 * The rocSHMEM C++ API: drop-in for upstream's <rocshmem/rocshmem.hpp>.
 *
 * Same names (namespace rocshmem), types, constants, default arguments and overloads as
 * upstream rocSHMEM, so programs written for it build unchanged. Semantics follow OpenSHMEM
 * (1.4 for the active-set forms, 1.5 for teams) unless a comment says otherwise.
 *
 * Compile modes:
 *  - HIP (hipcc / clang -x hip): HIP's runtime and half types are used;
 *  - plain C++ (the host platform, no GPU): no HIP headers are needed; the 16-bit float types
 *    are declared here with upstream's layout.
 */
#ifndef ROCSHMEM_HPP
#define ROCSHMEM_HPP

#ifdef ROCSHMEM_H
#error "include either <rocshmem/rocshmem.h> (C) or <rocshmem/rocshmem.hpp> (C++), not both"
#endif

#if defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__) || defined(__CUDA__)
/* On NVIDIA this is our HIP-on-CUDA layer (include/rocshmem/compat). */
#include <hip/hip_runtime.h>
#endif

#include "rocshmem_config.h"
#include "rocshmem_common.hpp"

/* MPI_Comm for the MPI overloads: Open MPI's type, from <mpi.h> or declared there. */
#include "rocshmem_mpi.hpp"

#include "rocshmem_HOST.hpp"
#include "rocshmem_RMA.hpp"
#include "rocshmem_AMO.hpp"
#include "rocshmem_SIG_OP.hpp"
#include "rocshmem_COLL.hpp"
#include "rocshmem_P2P_SYNC.hpp"
#include "rocshmem_RMA_X.hpp"
#include "rocshmem_DEVICE.hpp"
/* The tile templates (upstream's rocshmem_TILE.hpp); device code also includes
 * <rocshmem/rocshmem_device.hpp> for their definitions. */
#include "rocshmem_TILE.hpp"

/*
 * AMD (HIP, -fgpu-rdc): every translation unit that includes this header refers to a symbol of
 * the device library's host part, which holds the glue that fills the program's device globals
 * (ROCSHMEM_CTX_DEFAULT, ...) at init. So upstream's link lines (`hipcc -fgpu-rdc app.o
 * <prefix>/lib/librocshmem.a`, or `-lrocshmem` where the archive is what -l finds) link it like
 * any other symbol. Linked with librocshmem.so instead, the program also needs
 * -lrocshmem_device (else the linker names this symbol). -fgpu-rdc code linked with
 * librocshmem.so alone (its kernels loaded as a module) defines ROCSHMEM_NO_DEVICE_LIBRARY.
 */
#if defined(__HIP__) && defined(__CLANG_RDC__) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(ROCSHMEM_NO_DEVICE_LIBRARY)
extern "C" const int rocshmemi_link_librocshmem_a_or_librocshmem_device_a;
__attribute__((used)) static const int *const rocshmemi_device_library_ref =
    &rocshmemi_link_librocshmem_a_or_librocshmem_device_a;
#endif

namespace rocshmem {

/** The library version, "major.minor.patch". */
constexpr char VERSION[] = ROCSHMEM_VERSION;

}  // namespace rocshmem

#endif  // ROCSHMEM_HPP
