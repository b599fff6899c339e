/**
 * @file rocshmem_common.hpp
 * Types, handles and constants of the rocSHMEM API (upstream layouts: rocshmem_ctx_t is 16
 * bytes, the team handle a pointer, the unique id 128 bytes, the init attributes 144 bytes).
 */
#ifndef ROCSHMEM_COMMON_HPP
#define ROCSHMEM_COMMON_HPP

#include <array>
#include <stddef.h>
#include <stdint.h>
#if !(defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__) || defined(__CUDA__))
/* Upstream programs get these through <hip/hip_runtime.h>; plain C++ builds include them here
 * so that such programs compile unchanged on the host platform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#endif

#ifdef USE_FUNC_CALL
#define ATTR_NO_INLINE __attribute__((noinline))
#else
#define ATTR_NO_INLINE
#endif

/* Is this a GPU compile (HIP or CUDA)? Host-platform builds use plain C++. */
#if defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__) || defined(__CUDA__)
#define ROCSHMEM_GPU_COMPILE 1
#define ROCSHMEM_HOST __host__
#define ROCSHMEM_HOST_DEVICE __host__ __device__
/* A device function of the API (rocshmem_DEVICE.hpp), and a device global. */
#define ROCSHMEM_DEVICE_FN __device__ ATTR_NO_INLINE
#define ROCSHMEM_DEVICE_VAR __device__
/* Names on both sides: the host library defines the host side, the device library the device
 * side (in its device compilation pass only). */
#define ROCSHMEM_HD_API __host__ __device__
#else
/* The host platform: "device" functions are ordinary functions that kernels run by the host
 * launcher call (see rocshmem/host_kernel.hpp). */
#define ROCSHMEM_GPU_COMPILE 0
#define ROCSHMEM_HOST
#define ROCSHMEM_HOST_DEVICE
#define ROCSHMEM_DEVICE_FN ATTR_NO_INLINE
#define ROCSHMEM_DEVICE_VAR
#define ROCSHMEM_HD_API
#endif

/* Upstream's declarations say __host__; plain C++ has no such keyword. */
#if !ROCSHMEM_GPU_COMPILE && !defined(__host__)
#define __host__
#endif


/* 16-bit floats with upstream's layout (one unsigned short), when HIP does not provide them. */
#if ROCSHMEM_GPU_COMPILE
#include <hip/hip_fp16.h>
#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
#else
/* HIP < 5.7 has no hip_bf16.h: upstream's layout (one unsigned short). */
struct __hip_bfloat16 {
  unsigned short data;
};
#endif
#elif !defined(HIP_INCLUDE_HIP_HIP_FP16_H) && !defined(ROCSHMEM_HAVE_HIP_HALF)
struct __half {
  unsigned short __x;
};
struct __hip_bfloat16 {
  unsigned short data;
};
#endif

/* HIP handle types, as HIP declares them, for the declarations that take them. */
#if !ROCSHMEM_GPU_COMPILE
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModule_t *hipModule_t;
#endif

#include "rocshmem_constants.hpp"

namespace rocshmem {

/** Bitwise flags of team configurations (ignored by the split calls, as upstream). */
typedef struct {
  int num_contexts;
} rocshmem_team_config_t;

/** A communication context, passed by value. */
typedef struct rocshmem_ctx {
  void *ctx_opaque;
  void *team_opaque;

  ROCSHMEM_HOST_DEVICE bool operator==(const struct rocshmem_ctx &other) const {
    return ctx_opaque == other.ctx_opaque && team_opaque == other.team_opaque;
  }
  ROCSHMEM_HOST_DEVICE bool operator!=(const struct rocshmem_ctx &other) const { return !(*this == other); }
} rocshmem_ctx_t;

/**
 * The default context. On the host platform it is an ordinary variable set by rocshmem_init;
 * host calls also accept a context whose ctx_opaque is NULL as the default context.
 */
extern "C" ROCSHMEM_DEVICE_VAR rocshmem_ctx_t ROCSHMEM_CTX_DEFAULT;

/** A context value that names no context. */
extern rocshmem_ctx_t ROCSHMEM_CTX_INVALID;

/** Which backend carries the traffic. */
enum class BackendType { GDA_BACKEND, RO_BACKEND, IPC_BACKEND };
BackendType get_backend_type();

/** A team handle. */
typedef uint64_t *rocshmem_team_t;

namespace host {
/** All PEs. Set by rocshmem_init. */
extern rocshmem_team_t ROCSHMEM_TEAM_WORLD;
/** The PEs that share this PE's memory domain (node). Set by rocshmem_init. */
extern rocshmem_team_t ROCSHMEM_TEAM_SHARED;
}  // namespace host

#if ROCSHMEM_GPU_COMPILE
/* GPU programs: the team handles are device globals (unmangled, 8 bytes, as upstream), which
 * kernels read; host code reads their host shadows. The device library defines them and fills
 * both at init (device/src/gpu_globals.cpp). */
namespace device {
extern "C" {
extern __device__ rocshmem_team_t ROCSHMEM_TEAM_WORLD;
extern __device__ rocshmem_team_t ROCSHMEM_TEAM_SHARED;
}
}  // namespace device
#endif
/* Host code of a CUDA program built by nvcc without -rdc: nvcc gives an extern __device__
 * variable a private, never-filled host shadow there (and device code of such a program cannot
 * use it at all), so host code names the host handles instead (measured: a NULL team). */
#if ROCSHMEM_GPU_COMPILE && defined(__NVCC__) && !defined(__CUDACC_RDC__) && !defined(__CUDA_ARCH__)
#define ROCSHMEM_TEAMS_FROM_HOST 1
#elif ROCSHMEM_GPU_COMPILE
#define ROCSHMEM_TEAMS_FROM_HOST 0
#else
#define ROCSHMEM_TEAMS_FROM_HOST 1
#endif
#if ROCSHMEM_TEAMS_FROM_HOST
using host::ROCSHMEM_TEAM_SHARED;
using host::ROCSHMEM_TEAM_WORLD;
#else
using device::ROCSHMEM_TEAM_SHARED;
using device::ROCSHMEM_TEAM_WORLD;
#endif

const rocshmem_team_t ROCSHMEM_TEAM_INVALID = nullptr;

/** The unique id of unique-id initialisation: ROCSHMEM_UNIQUE_ID_BYTES opaque bytes. */
using rocshmem_uniqueid_t = std::array<uint8_t, ROCSHMEM_UNIQUE_ID_BYTES>;

/** Attributes of rocshmem_init_attr. `mpi_comm` points to an MPI_Comm. */
struct rocshmem_init_attr_t {
  int32_t rank;
  int32_t nranks;
  rocshmem_uniqueid_t uid;
  void *mpi_comm;
};
typedef struct rocshmem_init_attr_t rocshmem_init_attr_t;

static_assert(sizeof(rocshmem_ctx_t) == 16, "rocshmem_ctx_t layout");
static_assert(sizeof(rocshmem_uniqueid_t) == 128, "rocshmem_uniqueid_t layout");
static_assert(sizeof(rocshmem_init_attr_t) == 144, "rocshmem_init_attr_t layout");

}  // namespace rocshmem

#endif  // ROCSHMEM_COMMON_HPP
