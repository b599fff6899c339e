/**
 * @file hip/hip_version.h
 * rocSHMEM HIP-on-CUDA compatibility layer: version macros.
 *
 * The layer presents the HIP 6.2 API (the signatures below follow that release) on top of the
 * CUDA runtime. HIP_VERSION_GITHASH and ROCSHMEM_HIP_COMPAT let a program tell that it is built
 * against this layer rather than against ROCm's HIP.
 */
#ifndef ROCSHMEM_COMPAT_HIP_VERSION_H
#define ROCSHMEM_COMPAT_HIP_VERSION_H

#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 0
#define HIP_VERSION_GITHASH "rocshmem-hip-compat"
#define HIP_VERSION_BUILD_ID 0
#define HIP_VERSION_BUILD_NAME "rocSHMEM HIP-on-CUDA compatibility layer"
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)

/** Set when HIP is provided by this layer (HIP mapped onto CUDA); absent under ROCm. */
#define ROCSHMEM_HIP_COMPAT 1
/** Revision of this layer (bumped when the covered API grows). */
#define ROCSHMEM_HIP_COMPAT_VERSION 1

#endif  // ROCSHMEM_COMPAT_HIP_VERSION_H
