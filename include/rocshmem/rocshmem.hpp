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

/*
 * MPI_Comm for the MPI overloads. Upstream, without an external MPI, declares Open MPI's ABI
 * type so that `rocshmem_init(MPI_Comm)` links the same way; so do we. If <mpi.h> is found
 * it is used (an Open MPI <mpi.h> declares the same type).
 */
#if !defined(MPI_VERSION)
#if defined(__has_include)
#if __has_include(<mpi.h>)
#include <mpi.h>
#endif
#endif
#endif
#if !defined(MPI_VERSION)
typedef struct ompi_communicator_t *MPI_Comm;
#endif

#include "rocshmem_HOST.hpp"
#include "rocshmem_RMA.hpp"
#include "rocshmem_AMO.hpp"
#include "rocshmem_SIG_OP.hpp"
#include "rocshmem_COLL.hpp"
#include "rocshmem_P2P_SYNC.hpp"
#include "rocshmem_RMA_X.hpp"
#include "rocshmem_DEVICE.hpp"

namespace rocshmem {

/** The library version, "major.minor.patch". */
constexpr char VERSION[] = ROCSHMEM_VERSION;

}  // namespace rocshmem

#endif  // ROCSHMEM_HPP
