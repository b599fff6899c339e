/**
 * @file hip/hip_runtime_api.h
 * rocSHMEM HIP-on-CUDA compatibility layer: the host API.
 *
 * The HIP runtime API that rocSHMEM-style programs use, as inline wrappers over the CUDA runtime
 * (and, for modules, 32-bit memsets and stream memory operations, the CUDA driver API). Types
 * are CUDA's where the layouts agree (streams, events, IPC handles, graphs, dim3) and our own
 * where HIP's differ (hipDeviceProp_t, hipDeviceAttribute_t, hipPointerAttribute_t,
 * hipDeviceptr_t = void *).
 *
 * Usable from nvcc (.cu) and from a host C++ compiler with CUDA's include directory on its path.
 * Link with -lcudart (nvcc does so by default); functions marked [driver] also need -lcuda.
 *
 * Errors: hipError_t is cudaError_t; each hipErrorX is a constant with the matching CUDA value
 * (CUDA's numbering, not ROCm's). hipGetErrorName gives the HIP name for the codes listed here.
 */
#ifndef HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
#define HIP_INCLUDE_HIP_HIP_RUNTIME_API_H

#include "hip_common.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Errors                                                                                       */
/* ------------------------------------------------------------------------------------------ */

typedef cudaError_t hipError_t;

/* X(hip name, CUDA value): the codes with a one-to-one CUDA counterpart. */
#define ROCSHMEM_HIP_COMPAT_ERRORS(X)                                        \
  X(hipSuccess, cudaSuccess)                                                 \
  X(hipErrorInvalidValue, cudaErrorInvalidValue)                             \
  X(hipErrorOutOfMemory, cudaErrorMemoryAllocation)                          \
  X(hipErrorNotInitialized, cudaErrorInitializationError)                    \
  X(hipErrorDeinitialized, cudaErrorCudartUnloading)                         \
  X(hipErrorProfilerDisabled, cudaErrorProfilerDisabled)                     \
  X(hipErrorProfilerNotInitialized, cudaErrorProfilerNotInitialized)         \
  X(hipErrorProfilerAlreadyStarted, cudaErrorProfilerAlreadyStarted)         \
  X(hipErrorProfilerAlreadyStopped, cudaErrorProfilerAlreadyStopped)         \
  X(hipErrorInvalidConfiguration, cudaErrorInvalidConfiguration)             \
  X(hipErrorInvalidPitchValue, cudaErrorInvalidPitchValue)                   \
  X(hipErrorInvalidSymbol, cudaErrorInvalidSymbol)                           \
  X(hipErrorInvalidDevicePointer, cudaErrorInvalidDevicePointer)             \
  X(hipErrorInvalidMemcpyDirection, cudaErrorInvalidMemcpyDirection)         \
  X(hipErrorInsufficientDriver, cudaErrorInsufficientDriver)                 \
  X(hipErrorMissingConfiguration, cudaErrorMissingConfiguration)             \
  X(hipErrorPriorLaunchFailure, cudaErrorPriorLaunchFailure)                 \
  X(hipErrorInvalidDeviceFunction, cudaErrorInvalidDeviceFunction)           \
  X(hipErrorNoDevice, cudaErrorNoDevice)                                     \
  X(hipErrorInvalidDevice, cudaErrorInvalidDevice)                           \
  X(hipErrorInvalidImage, cudaErrorInvalidKernelImage)                       \
  X(hipErrorInvalidContext, cudaErrorDeviceUninitialized)                    \
  X(hipErrorMapFailed, cudaErrorMapBufferObjectFailed)                       \
  X(hipErrorUnmapFailed, cudaErrorUnmapBufferObjectFailed)                   \
  X(hipErrorArrayIsMapped, cudaErrorArrayIsMapped)                           \
  X(hipErrorAlreadyMapped, cudaErrorAlreadyMapped)                           \
  X(hipErrorNoBinaryForGpu, cudaErrorNoKernelImageForDevice)                 \
  X(hipErrorAlreadyAcquired, cudaErrorAlreadyAcquired)                       \
  X(hipErrorNotMapped, cudaErrorNotMapped)                                   \
  X(hipErrorNotMappedAsArray, cudaErrorNotMappedAsArray)                     \
  X(hipErrorNotMappedAsPointer, cudaErrorNotMappedAsPointer)                 \
  X(hipErrorECCNotCorrectable, cudaErrorECCUncorrectable)                    \
  X(hipErrorUnsupportedLimit, cudaErrorUnsupportedLimit)                     \
  X(hipErrorContextAlreadyInUse, cudaErrorDeviceAlreadyInUse)                \
  X(hipErrorPeerAccessUnsupported, cudaErrorPeerAccessUnsupported)           \
  X(hipErrorInvalidKernelFile, cudaErrorInvalidPtx)                          \
  X(hipErrorInvalidGraphicsContext, cudaErrorInvalidGraphicsContext)         \
  X(hipErrorInvalidSource, cudaErrorInvalidSource)                           \
  X(hipErrorFileNotFound, cudaErrorFileNotFound)                             \
  X(hipErrorSharedObjectSymbolNotFound, cudaErrorSharedObjectSymbolNotFound) \
  X(hipErrorSharedObjectInitFailed, cudaErrorSharedObjectInitFailed)         \
  X(hipErrorOperatingSystem, cudaErrorOperatingSystem)                       \
  X(hipErrorInvalidHandle, cudaErrorInvalidResourceHandle)                   \
  X(hipErrorIllegalState, cudaErrorIllegalState)                             \
  X(hipErrorNotFound, cudaErrorSymbolNotFound)                               \
  X(hipErrorNotReady, cudaErrorNotReady)                                     \
  X(hipErrorIllegalAddress, cudaErrorIllegalAddress)                         \
  X(hipErrorLaunchOutOfResources, cudaErrorLaunchOutOfResources)             \
  X(hipErrorLaunchTimeOut, cudaErrorLaunchTimeout)                           \
  X(hipErrorPeerAccessAlreadyEnabled, cudaErrorPeerAccessAlreadyEnabled)     \
  X(hipErrorPeerAccessNotEnabled, cudaErrorPeerAccessNotEnabled)             \
  X(hipErrorSetOnActiveProcess, cudaErrorSetOnActiveProcess)                 \
  X(hipErrorContextIsDestroyed, cudaErrorContextIsDestroyed)                 \
  X(hipErrorAssert, cudaErrorAssert)                                         \
  X(hipErrorHostMemoryAlreadyRegistered, cudaErrorHostMemoryAlreadyRegistered) \
  X(hipErrorHostMemoryNotRegistered, cudaErrorHostMemoryNotRegistered)       \
  X(hipErrorLaunchFailure, cudaErrorLaunchFailure)                           \
  X(hipErrorCooperativeLaunchTooLarge, cudaErrorCooperativeLaunchTooLarge)   \
  X(hipErrorNotSupported, cudaErrorNotSupported)                             \
  X(hipErrorStreamCaptureUnsupported, cudaErrorStreamCaptureUnsupported)     \
  X(hipErrorStreamCaptureInvalidated, cudaErrorStreamCaptureInvalidated)     \
  X(hipErrorStreamCaptureMerge, cudaErrorStreamCaptureMerge)                 \
  X(hipErrorStreamCaptureUnmatched, cudaErrorStreamCaptureUnmatched)         \
  X(hipErrorStreamCaptureUnjoined, cudaErrorStreamCaptureUnjoined)           \
  X(hipErrorStreamCaptureIsolation, cudaErrorStreamCaptureIsolation)         \
  X(hipErrorStreamCaptureImplicit, cudaErrorStreamCaptureImplicit)           \
  X(hipErrorCapturedEvent, cudaErrorCapturedEvent)                           \
  X(hipErrorStreamCaptureWrongThread, cudaErrorStreamCaptureWrongThread)     \
  X(hipErrorGraphExecUpdateFailure, cudaErrorGraphExecUpdateFailure)         \
  X(hipErrorUnknown, cudaErrorUnknown)

#define ROCSHMEM_HIP_COMPAT_DEFINE_ERROR(hip_name, cuda_value) \
  constexpr hipError_t hip_name = cuda_value;
ROCSHMEM_HIP_COMPAT_ERRORS(ROCSHMEM_HIP_COMPAT_DEFINE_ERROR)
#undef ROCSHMEM_HIP_COMPAT_DEFINE_ERROR

/* HIP's other spellings of the same codes. */
constexpr hipError_t hipErrorMemoryAllocation = cudaErrorMemoryAllocation;
constexpr hipError_t hipErrorInitializationError = cudaErrorInitializationError;
constexpr hipError_t hipErrorInvalidResourceHandle = cudaErrorInvalidResourceHandle;
constexpr hipError_t hipErrorMapBufferObjectFailed = cudaErrorMapBufferObjectFailed;
/* HIP-only codes without a CUDA counterpart report as unknown errors. */
constexpr hipError_t hipErrorRuntimeMemory = cudaErrorUnknown;
constexpr hipError_t hipErrorRuntimeOther = cudaErrorUnknown;
constexpr hipError_t hipErrorTbd = cudaErrorUnknown;

/** CUDA's description of the error. */
inline const char *hipGetErrorString(hipError_t error) { return cudaGetErrorString(error); }

/** HIP's name of the error ("hipErrorInvalidValue"); CUDA's name for codes not listed here. */
inline const char *hipGetErrorName(hipError_t error) {
  switch (error) {
#define ROCSHMEM_HIP_COMPAT_ERROR_NAME(hip_name, cuda_value) \
  case cuda_value:                                           \
    return #hip_name;
    ROCSHMEM_HIP_COMPAT_ERRORS(ROCSHMEM_HIP_COMPAT_ERROR_NAME)
#undef ROCSHMEM_HIP_COMPAT_ERROR_NAME
    default:
      return cudaGetErrorName(error);
  }
}

inline hipError_t hipGetLastError(void) { return cudaGetLastError(); }
inline hipError_t hipPeekAtLastError(void) { return cudaPeekAtLastError(); }
/** ROCm 6.2's variant that keeps the error; CUDA's peek does the same. */
inline hipError_t hipExtGetLastError(void) { return cudaPeekAtLastError(); }

namespace hip_compat {
/**
 * A driver-API result as a hipError_t. Since CUDA 10.1 the runtime's codes carry the driver's
 * numbers for the errors both report (1 invalid value, 2 out of memory, 200 invalid image,
 * 400 invalid handle, 500 not found, ...), so the value is kept.
 */
inline hipError_t from_driver(CUresult r) { return static_cast<hipError_t>(static_cast<int>(r)); }
/** Makes the current device's primary context current on this thread, as the runtime does on
 *  first use, when no context is: the driver calls need one. */
inline hipError_t ensure_context() {
  CUcontext ctx = nullptr;
  if (cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) return cudaSuccess;
  return cudaFree(nullptr);
}
/** A kernel (function pointer) as the address the runtime's launch calls take. */
template <class F>
inline const void *function_address(F f) {
  return reinterpret_cast<const void *>(f);
}
}  // namespace hip_compat

/* ------------------------------------------------------------------------------------------ */
/* Handles and plain types                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef CUmodule hipModule_t;
typedef CUfunction hipFunction_t;
typedef CUcontext hipCtx_t;
typedef int hipDevice_t;
/** A device address, as HIP declares it (CUDA's driver API uses an integer instead). */
typedef void *hipDeviceptr_t;
typedef cudaIpcMemHandle_t hipIpcMemHandle_t;
typedef cudaIpcEventHandle_t hipIpcEventHandle_t;
typedef cudaGraph_t hipGraph_t;
typedef cudaGraphExec_t hipGraphExec_t;
typedef cudaGraphNode_t hipGraphNode_t;
typedef cudaHostFn_t hipHostFn_t;
typedef cudaStreamCallback_t hipStreamCallback_t;
typedef cudaFuncAttributes hipFuncAttributes;
typedef cudaMemPool_t hipMemPool_t;
typedef cudaUUID_t hipUUID;

#define HIP_IPC_HANDLE_SIZE CUDA_IPC_HANDLE_SIZE

/* Memory copy directions. */
typedef cudaMemcpyKind hipMemcpyKind;
constexpr hipMemcpyKind hipMemcpyHostToHost = cudaMemcpyHostToHost;
constexpr hipMemcpyKind hipMemcpyHostToDevice = cudaMemcpyHostToDevice;
constexpr hipMemcpyKind hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
constexpr hipMemcpyKind hipMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;
constexpr hipMemcpyKind hipMemcpyDefault = cudaMemcpyDefault;
/* ROCm's "no SDMA engine" direction; CUDA chooses the copy engine itself. */
constexpr hipMemcpyKind hipMemcpyDeviceToDeviceNoCU = cudaMemcpyDeviceToDevice;

/* Special streams. */
#define hipStreamLegacy cudaStreamLegacy
#define hipStreamPerThread cudaStreamPerThread

/* Stream, event, device, host-allocation and IPC flags: CUDA's values. */
#define hipStreamDefault cudaStreamDefault
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipEventDefault cudaEventDefault
#define hipEventBlockingSync cudaEventBlockingSync
#define hipEventDisableTiming cudaEventDisableTiming
#define hipEventInterprocess cudaEventInterprocess
#define hipEventRecordDefault cudaEventRecordDefault
#define hipEventRecordExternal cudaEventRecordExternal
#define hipEventWaitDefault cudaEventWaitDefault
#define hipEventWaitExternal cudaEventWaitExternal
/* ROCm's release-scope event flags: CUDA events always release at system scope. */
#define hipEventReleaseToDevice 0x40000000u
#define hipEventReleaseToSystem 0x80000000u

#define hipDeviceScheduleAuto cudaDeviceScheduleAuto
#define hipDeviceScheduleSpin cudaDeviceScheduleSpin
#define hipDeviceScheduleYield cudaDeviceScheduleYield
#define hipDeviceScheduleBlockingSync cudaDeviceScheduleBlockingSync
#define hipDeviceScheduleMask cudaDeviceScheduleMask
#define hipDeviceMapHost cudaDeviceMapHost
#define hipDeviceLmemResizeToMax cudaDeviceLmemResizeToMax

#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostMallocPortable cudaHostAllocPortable
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostMallocWriteCombined cudaHostAllocWriteCombined
/* AMD-only coherence/NUMA hints: CUDA's pinned memory is always coherent; these are dropped. */
#define hipHostMallocNumaUser 0x20000000u
#define hipHostMallocCoherent 0x40000000u
#define hipHostMallocNonCoherent 0x80000000u
#define hipHostAllocDefault hipHostMallocDefault
#define hipHostAllocPortable hipHostMallocPortable
#define hipHostAllocMapped hipHostMallocMapped
#define hipHostAllocWriteCombined hipHostMallocWriteCombined

#define hipHostRegisterDefault cudaHostRegisterDefault
#define hipHostRegisterPortable cudaHostRegisterPortable
#define hipHostRegisterMapped cudaHostRegisterMapped
#define hipHostRegisterIoMemory cudaHostRegisterIoMemory
#define hipHostRegisterReadOnly cudaHostRegisterReadOnly

/* hipExtMallocWithFlags flags (ROCm's values). All give ordinary cudaMalloc memory. */
#define hipDeviceMallocDefault 0x0u
#define hipDeviceMallocFinegrained 0x1u
#define hipMallocSignalMemory 0x2u
#define hipDeviceMallocUncached 0x3u
#define hipDeviceMallocContiguous 0x4u

#define hipMemAttachGlobal cudaMemAttachGlobal
#define hipMemAttachHost cudaMemAttachHost
#define hipMemAttachSingle cudaMemAttachSingle

#define hipIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess

#define hipCpuDeviceId cudaCpuDeviceId
#define hipInvalidDeviceId cudaInvalidDeviceId

#define hipOccupancyDefault cudaOccupancyDefault
#define hipOccupancyDisableCachingOverride cudaOccupancyDisableCachingOverride

/* hipModuleLaunchKernel's `extra` markers. */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER CU_LAUNCH_PARAM_BUFFER_POINTER
#define HIP_LAUNCH_PARAM_BUFFER_SIZE CU_LAUNCH_PARAM_BUFFER_SIZE
#define HIP_LAUNCH_PARAM_END CU_LAUNCH_PARAM_END

/* Device limits. */
typedef cudaLimit hipLimit_t;
constexpr hipLimit_t hipLimitStackSize = cudaLimitStackSize;
constexpr hipLimit_t hipLimitPrintfFifoSize = cudaLimitPrintfFifoSize;
constexpr hipLimit_t hipLimitMallocHeapSize = cudaLimitMallocHeapSize;

/* Cache and shared-memory configuration. */
typedef cudaFuncCache hipFuncCache_t;
constexpr hipFuncCache_t hipFuncCachePreferNone = cudaFuncCachePreferNone;
constexpr hipFuncCache_t hipFuncCachePreferShared = cudaFuncCachePreferShared;
constexpr hipFuncCache_t hipFuncCachePreferL1 = cudaFuncCachePreferL1;
constexpr hipFuncCache_t hipFuncCachePreferEqual = cudaFuncCachePreferEqual;

typedef cudaFuncAttribute hipFuncAttribute;
constexpr hipFuncAttribute hipFuncAttributeMaxDynamicSharedMemorySize =
    cudaFuncAttributeMaxDynamicSharedMemorySize;
constexpr hipFuncAttribute hipFuncAttributePreferredSharedMemoryCarveout =
    cudaFuncAttributePreferredSharedMemoryCarveout;

/* Stream capture. */
typedef cudaStreamCaptureMode hipStreamCaptureMode;
constexpr hipStreamCaptureMode hipStreamCaptureModeGlobal = cudaStreamCaptureModeGlobal;
constexpr hipStreamCaptureMode hipStreamCaptureModeThreadLocal = cudaStreamCaptureModeThreadLocal;
constexpr hipStreamCaptureMode hipStreamCaptureModeRelaxed = cudaStreamCaptureModeRelaxed;
typedef cudaStreamCaptureStatus hipStreamCaptureStatus;
constexpr hipStreamCaptureStatus hipStreamCaptureStatusNone = cudaStreamCaptureStatusNone;
constexpr hipStreamCaptureStatus hipStreamCaptureStatusActive = cudaStreamCaptureStatusActive;
constexpr hipStreamCaptureStatus hipStreamCaptureStatusInvalidated =
    cudaStreamCaptureStatusInvalidated;

/* Managed-memory advice. The AMD-only coarse-grain advice values are not declared. */
typedef cudaMemoryAdvise hipMemoryAdvise;
constexpr hipMemoryAdvise hipMemAdviseSetReadMostly = cudaMemAdviseSetReadMostly;
constexpr hipMemoryAdvise hipMemAdviseUnsetReadMostly = cudaMemAdviseUnsetReadMostly;
constexpr hipMemoryAdvise hipMemAdviseSetPreferredLocation = cudaMemAdviseSetPreferredLocation;
constexpr hipMemoryAdvise hipMemAdviseUnsetPreferredLocation = cudaMemAdviseUnsetPreferredLocation;
constexpr hipMemoryAdvise hipMemAdviseSetAccessedBy = cudaMemAdviseSetAccessedBy;
constexpr hipMemoryAdvise hipMemAdviseUnsetAccessedBy = cudaMemAdviseUnsetAccessedBy;

/* hipStreamWaitValue32/64 comparisons: ROCm's values equal the driver's CU_STREAM_WAIT_VALUE_*. */
#define hipStreamWaitValueGte 0x0u
#define hipStreamWaitValueEq 0x1u
#define hipStreamWaitValueAnd 0x2u
#define hipStreamWaitValueNor 0x3u

/* ------------------------------------------------------------------------------------------ */
/* Devices                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** Feature bits of hipDeviceProp_t::arch (all set on NVIDIA devices of compute capability 7+). */
typedef struct hipDeviceArch_t {
  unsigned hasGlobalInt32Atomics : 1;
  unsigned hasGlobalFloatAtomicExch : 1;
  unsigned hasSharedInt32Atomics : 1;
  unsigned hasSharedFloatAtomicExch : 1;
  unsigned hasFloatAtomicAdd : 1;
  unsigned hasGlobalInt64Atomics : 1;
  unsigned hasSharedInt64Atomics : 1;
  unsigned hasDoubles : 1;
  unsigned hasWarpVote : 1;
  unsigned hasWarpBallot : 1;
  unsigned hasWarpShuffle : 1;
  unsigned hasFunnelShift : 1;
  unsigned hasThreadFenceSystem : 1;
  unsigned hasSyncThreadsExt : 1;
  unsigned hasSurfaceFuncs : 1;
  unsigned has3dGrid : 1;
  unsigned hasDynamicParallelism : 1;
} hipDeviceArch_t;

/**
 * Device properties with HIP's field names (the subset programs use). Filled by
 * hipGetDeviceProperties from cudaGetDeviceProperties and cudaDeviceGetAttribute (CUDA 13 dropped
 * clockRate, memoryClockRate and computeMode from cudaDeviceProp; they come from attributes).
 * gcnArchName holds "sm_XY" (e.g. "sm_90") in place of an AMD target name.
 */
typedef struct hipDeviceProp_t {
  char name[256];
  hipUUID uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  ///< kHz
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  ///< kHz
  int memoryBusWidth;   ///< bits
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  ///< always 0 (CUDA 13 removed multi-device launch)
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int memoryPoolsSupported;
  /* AMD-specific fields, filled with their NVIDIA equivalents. */
  char gcnArchName[256];               ///< "sm_XY"
  int gcnArch;                         ///< major * 100 + minor * 10 (e.g. 900)
  size_t maxSharedMemoryPerMultiProcessor;
  int clockInstructionRate;            ///< kHz of clock64(): the SM clock
  hipDeviceArch_t arch;
  int isLargeBar;                      ///< 0: no host access to device memory through a BAR
  int asicRevision;                    ///< 0
  int cooperativeMultiDeviceUnmatchedFunc;
  int cooperativeMultiDeviceUnmatchedGridDim;
  int cooperativeMultiDeviceUnmatchedBlockDim;
  int cooperativeMultiDeviceUnmatchedSharedMem;
} hipDeviceProp_t;

/**
 * Device attributes with HIP's names (the values are this layer's own, not ROCm's).
 * X(hip name, CUDA attribute) for those with a direct CUDA counterpart.
 */
#define ROCSHMEM_HIP_COMPAT_ATTRIBUTES(X)                                                     \
  X(hipDeviceAttributeMaxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock)                      \
  X(hipDeviceAttributeMaxBlockDimX, cudaDevAttrMaxBlockDimX)                                  \
  X(hipDeviceAttributeMaxBlockDimY, cudaDevAttrMaxBlockDimY)                                  \
  X(hipDeviceAttributeMaxBlockDimZ, cudaDevAttrMaxBlockDimZ)                                  \
  X(hipDeviceAttributeMaxGridDimX, cudaDevAttrMaxGridDimX)                                    \
  X(hipDeviceAttributeMaxGridDimY, cudaDevAttrMaxGridDimY)                                    \
  X(hipDeviceAttributeMaxGridDimZ, cudaDevAttrMaxGridDimZ)                                    \
  X(hipDeviceAttributeMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerBlock)            \
  X(hipDeviceAttributeTotalConstantMemory, cudaDevAttrTotalConstantMemory)                    \
  X(hipDeviceAttributeWarpSize, cudaDevAttrWarpSize)                                          \
  X(hipDeviceAttributeMaxPitch, cudaDevAttrMaxPitch)                                          \
  X(hipDeviceAttributeMaxRegistersPerBlock, cudaDevAttrMaxRegistersPerBlock)                  \
  X(hipDeviceAttributeClockRate, cudaDevAttrClockRate)                                        \
  X(hipDeviceAttributeTextureAlignment, cudaDevAttrTextureAlignment)                          \
  X(hipDeviceAttributeTexturePitchAlignment, cudaDevAttrTexturePitchAlignment)                \
  X(hipDeviceAttributeDeviceOverlap, cudaDevAttrGpuOverlap)                                   \
  X(hipDeviceAttributeMultiprocessorCount, cudaDevAttrMultiProcessorCount)                    \
  X(hipDeviceAttributeKernelExecTimeout, cudaDevAttrKernelExecTimeout)                        \
  X(hipDeviceAttributeIntegrated, cudaDevAttrIntegrated)                                      \
  X(hipDeviceAttributeCanMapHostMemory, cudaDevAttrCanMapHostMemory)                          \
  X(hipDeviceAttributeComputeMode, cudaDevAttrComputeMode)                                    \
  X(hipDeviceAttributeSurfaceAlignment, cudaDevAttrSurfaceAlignment)                          \
  X(hipDeviceAttributeConcurrentKernels, cudaDevAttrConcurrentKernels)                        \
  X(hipDeviceAttributeEccEnabled, cudaDevAttrEccEnabled)                                      \
  X(hipDeviceAttributePciBusId, cudaDevAttrPciBusId)                                          \
  X(hipDeviceAttributePciDeviceId, cudaDevAttrPciDeviceId)                                    \
  X(hipDeviceAttributePciDomainID, cudaDevAttrPciDomainId)                                    \
  X(hipDeviceAttributeTccDriver, cudaDevAttrTccDriver)                                        \
  X(hipDeviceAttributeMemoryClockRate, cudaDevAttrMemoryClockRate)                            \
  X(hipDeviceAttributeMemoryBusWidth, cudaDevAttrGlobalMemoryBusWidth)                        \
  X(hipDeviceAttributeL2CacheSize, cudaDevAttrL2CacheSize)                                    \
  X(hipDeviceAttributeMaxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor)    \
  X(hipDeviceAttributeAsyncEngineCount, cudaDevAttrAsyncEngineCount)                          \
  X(hipDeviceAttributeUnifiedAddressing, cudaDevAttrUnifiedAddressing)                        \
  X(hipDeviceAttributeComputeCapabilityMajor, cudaDevAttrComputeCapabilityMajor)              \
  X(hipDeviceAttributeComputeCapabilityMinor, cudaDevAttrComputeCapabilityMinor)              \
  X(hipDeviceAttributeStreamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported)        \
  X(hipDeviceAttributeGlobalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported)              \
  X(hipDeviceAttributeLocalL1CacheSupported, cudaDevAttrLocalL1CacheSupported)                \
  X(hipDeviceAttributeMaxSharedMemoryPerMultiprocessor,                                       \
    cudaDevAttrMaxSharedMemoryPerMultiprocessor)                                              \
  X(hipDeviceAttributeSharedMemPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor) \
  X(hipDeviceAttributeMaxRegistersPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor) \
  X(hipDeviceAttributeManagedMemory, cudaDevAttrManagedMemory)                                \
  X(hipDeviceAttributeIsMultiGpuBoard, cudaDevAttrIsMultiGpuBoard)                            \
  X(hipDeviceAttributeMultiGpuBoardGroupID, cudaDevAttrMultiGpuBoardGroupID)                  \
  X(hipDeviceAttributeHostNativeAtomicSupported, cudaDevAttrHostNativeAtomicSupported)        \
  X(hipDeviceAttributeSingleToDoublePrecisionPerfRatio,                                       \
    cudaDevAttrSingleToDoublePrecisionPerfRatio)                                              \
  X(hipDeviceAttributePageableMemoryAccess, cudaDevAttrPageableMemoryAccess)                  \
  X(hipDeviceAttributeConcurrentManagedAccess, cudaDevAttrConcurrentManagedAccess)            \
  X(hipDeviceAttributeComputePreemptionSupported, cudaDevAttrComputePreemptionSupported)      \
  X(hipDeviceAttributeCanUseHostPointerForRegisteredMem,                                      \
    cudaDevAttrCanUseHostPointerForRegisteredMem)                                             \
  X(hipDeviceAttributeCooperativeLaunch, cudaDevAttrCooperativeLaunch)                        \
  X(hipDeviceAttributeSharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin)        \
  X(hipDeviceAttributePageableMemoryAccessUsesHostPageTables,                                 \
    cudaDevAttrPageableMemoryAccessUsesHostPageTables)                                        \
  X(hipDeviceAttributeDirectManagedMemAccessFromHost, cudaDevAttrDirectManagedMemAccessFromHost) \
  X(hipDeviceAttributeMaxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor)      \
  X(hipDeviceAttributePersistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize)          \
  X(hipDeviceAttributeAccessPolicyMaxWindowSize, cudaDevAttrMaxAccessPolicyWindowSize)        \
  X(hipDeviceAttributeReservedSharedMemPerBlock, cudaDevAttrReservedSharedMemoryPerBlock)     \
  X(hipDeviceAttributeHostRegisterSupported, cudaDevAttrHostRegisterSupported)                \
  X(hipDeviceAttributeMemoryPoolsSupported, cudaDevAttrMemoryPoolsSupported)                  \
  X(hipDeviceAttributeMemoryPoolSupportedHandleTypes, cudaDevAttrMemoryPoolSupportedHandleTypes) \
  X(hipDeviceAttributeClockInstructionRate, cudaDevAttrClockRate)                             \
  X(hipDeviceAttributePhysicalMultiProcessorCount, cudaDevAttrMultiProcessorCount)

typedef enum hipDeviceAttribute_t {
#define ROCSHMEM_HIP_COMPAT_ATTRIBUTE_ENUM(hip_name, cuda_attr) hip_name,
  ROCSHMEM_HIP_COMPAT_ATTRIBUTES(ROCSHMEM_HIP_COMPAT_ATTRIBUTE_ENUM)
#undef ROCSHMEM_HIP_COMPAT_ATTRIBUTE_ENUM
  /* Answered by this layer (no CUDA attribute): */
  hipDeviceAttributeWallClockRate,        ///< kHz of wall_clock64(): 1000000 (it counts ns)
  hipDeviceAttributeIsLargeBar,           ///< 0
  hipDeviceAttributeAsicRevision,         ///< 0
  hipDeviceAttributeCanUseStreamWaitValue,  ///< 1 (hipStreamWaitValue32/64 use the driver's)
  hipDeviceAttributeCooperativeMultiDeviceLaunch,  ///< 0 (removed in CUDA 13)
  hipDeviceAttributeFineGrainSupport,     ///< 1 (hipDeviceMallocFinegrained is accepted)
  hipDeviceAttributeImageSupport,         ///< 1
  hipDeviceAttributePciDomainId = hipDeviceAttributePciDomainID  ///< older spelling
} hipDeviceAttribute_t;

/** Reads one attribute; hipErrorInvalidValue for a null pointer or an unknown attribute. */
inline hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int device) {
  if (value == nullptr) return hipErrorInvalidValue;
  switch (attr) {
#define ROCSHMEM_HIP_COMPAT_ATTRIBUTE_CASE(hip_name, cuda_attr) \
  case hip_name:                                                \
    return cudaDeviceGetAttribute(value, cuda_attr, device);
    ROCSHMEM_HIP_COMPAT_ATTRIBUTES(ROCSHMEM_HIP_COMPAT_ATTRIBUTE_CASE)
#undef ROCSHMEM_HIP_COMPAT_ATTRIBUTE_CASE
    default:
      break;
  }
  /* Attributes answered here still check the device number. */
  int probe = 0;
  hipError_t err = cudaDeviceGetAttribute(&probe, cudaDevAttrWarpSize, device);
  if (err != cudaSuccess) return err;
  switch (attr) {
    case hipDeviceAttributeWallClockRate:
      *value = 1000000;
      return hipSuccess;
    case hipDeviceAttributeIsLargeBar:
    case hipDeviceAttributeAsicRevision:
    case hipDeviceAttributeCooperativeMultiDeviceLaunch:
      *value = 0;
      return hipSuccess;
    case hipDeviceAttributeCanUseStreamWaitValue:
    case hipDeviceAttributeFineGrainSupport:
    case hipDeviceAttributeImageSupport:
      *value = 1;
      return hipSuccess;
    default:
      return hipErrorInvalidValue;
  }
}

inline hipError_t hipGetDeviceCount(int *count) { return cudaGetDeviceCount(count); }
inline hipError_t hipGetDevice(int *device) { return cudaGetDevice(device); }
inline hipError_t hipSetDevice(int device) { return cudaSetDevice(device); }
inline hipError_t hipSetDeviceFlags(unsigned flags) { return cudaSetDeviceFlags(flags); }
inline hipError_t hipGetDeviceFlags(unsigned *flags) { return cudaGetDeviceFlags(flags); }
inline hipError_t hipDeviceSynchronize(void) { return cudaDeviceSynchronize(); }
inline hipError_t hipDeviceReset(void) { return cudaDeviceReset(); }
inline hipError_t hipDeviceGet(hipDevice_t *device, int ordinal) {
  if (device == nullptr) return hipErrorInvalidValue;
  int count = 0;
  hipError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return err;
  if (ordinal < 0 || ordinal >= count) return hipErrorInvalidDevice;
  *device = ordinal;
  return hipSuccess;
}
inline hipError_t hipDeviceGetLimit(size_t *value, hipLimit_t limit) {
  return cudaDeviceGetLimit(value, limit);
}
inline hipError_t hipDeviceSetLimit(hipLimit_t limit, size_t value) {
  return cudaDeviceSetLimit(limit, value);
}
inline hipError_t hipDeviceSetCacheConfig(hipFuncCache_t config) {
  return cudaDeviceSetCacheConfig(config);
}
inline hipError_t hipDeviceGetCacheConfig(hipFuncCache_t *config) {
  return cudaDeviceGetCacheConfig(config);
}
inline hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device) {
  return cudaDeviceGetPCIBusId(pciBusId, len, device);
}
inline hipError_t hipDeviceGetByPCIBusId(int *device, const char *pciBusId) {
  return cudaDeviceGetByPCIBusId(device, pciBusId);
}
inline hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device) {
  if (name == nullptr || len <= 0) return hipErrorInvalidValue;
  cudaDeviceProp p;
  hipError_t err = cudaGetDeviceProperties(&p, device);
  if (err != cudaSuccess) return err;
  snprintf(name, static_cast<size_t>(len), "%s", p.name);
  return hipSuccess;
}
inline hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t device) {
  if (major == nullptr || minor == nullptr) return hipErrorInvalidValue;
  hipError_t err = cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device);
  if (err != cudaSuccess) return err;
  return cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, device);
}
inline hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device) {
  if (bytes == nullptr) return hipErrorInvalidValue;
  cudaDeviceProp p;
  hipError_t err = cudaGetDeviceProperties(&p, device);
  if (err == cudaSuccess) *bytes = p.totalGlobalMem;
  return err;
}
inline hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
  return cudaDeviceGetStreamPriorityRange(leastPriority, greatestPriority);
}
inline hipError_t hipDriverGetVersion(int *version) { return cudaDriverGetVersion(version); }
/** CUDA's runtime version (e.g. 13000), not a HIP version. */
inline hipError_t hipRuntimeGetVersion(int *version) { return cudaRuntimeGetVersion(version); }
inline hipError_t hipInit(unsigned int flags) {
  if (flags != 0) return hipErrorInvalidValue;
  return hip_compat::ensure_context();
}

/** Fills `prop` for `device` (see hipDeviceProp_t). */
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int device) {
  if (prop == nullptr) return hipErrorInvalidValue;
  cudaDeviceProp p;
  hipError_t err = cudaGetDeviceProperties(&p, device);
  if (err != cudaSuccess) return err;
  memset(prop, 0, sizeof(*prop));
  memcpy(prop->name, p.name, sizeof(prop->name));
  prop->name[sizeof(prop->name) - 1] = '\0';
  prop->uuid = p.uuid;
  memcpy(prop->luid, p.luid, sizeof(prop->luid));
  prop->luidDeviceNodeMask = p.luidDeviceNodeMask;
  prop->totalGlobalMem = p.totalGlobalMem;
  prop->sharedMemPerBlock = p.sharedMemPerBlock;
  prop->regsPerBlock = p.regsPerBlock;
  prop->warpSize = p.warpSize;
  prop->memPitch = p.memPitch;
  prop->maxThreadsPerBlock = p.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = p.maxThreadsDim[i];
    prop->maxGridSize[i] = p.maxGridSize[i];
  }
  prop->totalConstMem = p.totalConstMem;
  prop->major = p.major;
  prop->minor = p.minor;
  prop->textureAlignment = p.textureAlignment;
  prop->texturePitchAlignment = p.texturePitchAlignment;
  prop->multiProcessorCount = p.multiProcessorCount;
  prop->integrated = p.integrated;
  prop->canMapHostMemory = p.canMapHostMemory;
  prop->concurrentKernels = p.concurrentKernels;
  prop->ECCEnabled = p.ECCEnabled;
  prop->pciBusID = p.pciBusID;
  prop->pciDeviceID = p.pciDeviceID;
  prop->pciDomainID = p.pciDomainID;
  prop->tccDriver = p.tccDriver;
  prop->asyncEngineCount = p.asyncEngineCount;
  prop->unifiedAddressing = p.unifiedAddressing;
  prop->memoryBusWidth = p.memoryBusWidth;
  prop->l2CacheSize = p.l2CacheSize;
  prop->persistingL2CacheMaxSize = p.persistingL2CacheMaxSize;
  prop->maxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  prop->streamPrioritiesSupported = p.streamPrioritiesSupported;
  prop->globalL1CacheSupported = p.globalL1CacheSupported;
  prop->localL1CacheSupported = p.localL1CacheSupported;
  prop->sharedMemPerMultiprocessor = p.sharedMemPerMultiprocessor;
  prop->regsPerMultiprocessor = p.regsPerMultiprocessor;
  prop->managedMemory = p.managedMemory;
  prop->isMultiGpuBoard = p.isMultiGpuBoard;
  prop->multiGpuBoardGroupID = p.multiGpuBoardGroupID;
  prop->hostNativeAtomicSupported = p.hostNativeAtomicSupported;
  prop->pageableMemoryAccess = p.pageableMemoryAccess;
  prop->concurrentManagedAccess = p.concurrentManagedAccess;
  prop->computePreemptionSupported = p.computePreemptionSupported;
  prop->canUseHostPointerForRegisteredMem = p.canUseHostPointerForRegisteredMem;
  prop->cooperativeLaunch = p.cooperativeLaunch;
  prop->cooperativeMultiDeviceLaunch = 0;
  prop->sharedMemPerBlockOptin = p.sharedMemPerBlockOptin;
  prop->pageableMemoryAccessUsesHostPageTables = p.pageableMemoryAccessUsesHostPageTables;
  prop->directManagedMemAccessFromHost = p.directManagedMemAccessFromHost;
  prop->maxBlocksPerMultiProcessor = p.maxBlocksPerMultiProcessor;
  prop->accessPolicyMaxWindowSize = p.accessPolicyMaxWindowSize;
  prop->reservedSharedMemPerBlock = p.reservedSharedMemPerBlock;
  prop->hostRegisterSupported = p.hostRegisterSupported;
  prop->memoryPoolsSupported = p.memoryPoolsSupported;

  /* Fields that CUDA 13 keeps only as attributes (valid queries on a device that answered
   * cudaGetDeviceProperties; a failure would leave 0). */
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) == cudaSuccess) prop->clockRate = v;
  v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, device) == cudaSuccess)
    prop->memoryClockRate = v;
  v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, device) == cudaSuccess)
    prop->computeMode = v;
  v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrGpuOverlap, device) == cudaSuccess)
    prop->deviceOverlap = v;
  v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrKernelExecTimeout, device) == cudaSuccess)
    prop->kernelExecTimeoutEnabled = v;
  v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrSingleToDoublePrecisionPerfRatio, device) ==
      cudaSuccess)
    prop->singleToDoublePrecisionPerfRatio = v;

  snprintf(prop->gcnArchName, sizeof(prop->gcnArchName), "sm_%d%d", p.major, p.minor);
  prop->gcnArch = p.major * 100 + p.minor * 10;
  prop->maxSharedMemoryPerMultiProcessor = p.sharedMemPerMultiprocessor;
  prop->clockInstructionRate = prop->clockRate;
  prop->arch.hasGlobalInt32Atomics = 1;
  prop->arch.hasGlobalFloatAtomicExch = 1;
  prop->arch.hasSharedInt32Atomics = 1;
  prop->arch.hasSharedFloatAtomicExch = 1;
  prop->arch.hasFloatAtomicAdd = 1;
  prop->arch.hasGlobalInt64Atomics = 1;
  prop->arch.hasSharedInt64Atomics = 1;
  prop->arch.hasDoubles = 1;
  prop->arch.hasWarpVote = 1;
  prop->arch.hasWarpBallot = 1;
  prop->arch.hasWarpShuffle = 1;
  prop->arch.hasFunnelShift = 1;
  prop->arch.hasThreadFenceSystem = 1;
  prop->arch.hasSyncThreadsExt = 1;
  prop->arch.hasSurfaceFuncs = 1;
  prop->arch.has3dGrid = 1;
  prop->arch.hasDynamicParallelism = 1;
  prop->isLargeBar = 0;
  prop->asicRevision = 0;
  return hipSuccess;
}

/* ROCm 6 names the function through a versioned symbol; both spellings work here. */
inline hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_t *prop, int device) {
  return hipGetDeviceProperties(prop, device);
}
typedef hipDeviceProp_t hipDeviceProp_tR0600;

/* Peer access. */
inline hipError_t hipDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice) {
  return cudaDeviceCanAccessPeer(canAccessPeer, device, peerDevice);
}
inline hipError_t hipDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  return cudaDeviceEnablePeerAccess(peerDevice, flags);
}
inline hipError_t hipDeviceDisablePeerAccess(int peerDevice) {
  return cudaDeviceDisablePeerAccess(peerDevice);
}

/* ------------------------------------------------------------------------------------------ */
/* Memory                                                                                       */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipMalloc(void **ptr, size_t size) { return cudaMalloc(ptr, size); }
template <class T>
inline hipError_t hipMalloc(T **ptr, size_t size) {
  return cudaMalloc(reinterpret_cast<void **>(ptr), size);
}
inline hipError_t hipFree(void *ptr) { return cudaFree(ptr); }

/** hipExtMallocWithFlags: every ROCm flag gives cudaMalloc memory (device memory on NVIDIA is
 *  coherent for system-scope atomics and fences; there is no fine/coarse-grain distinction). */
inline hipError_t hipExtMallocWithFlags(void **ptr, size_t size, unsigned int flags) {
  if (flags > hipDeviceMallocContiguous) return hipErrorInvalidValue;
  return cudaMalloc(ptr, size);
}
template <class T>
inline hipError_t hipExtMallocWithFlags(T **ptr, size_t size, unsigned int flags) {
  return hipExtMallocWithFlags(reinterpret_cast<void **>(ptr), size, flags);
}

inline hipError_t hipMallocManaged(void **ptr, size_t size, unsigned int flags = hipMemAttachGlobal) {
  return cudaMallocManaged(ptr, size, flags);
}
template <class T>
inline hipError_t hipMallocManaged(T **ptr, size_t size, unsigned int flags = hipMemAttachGlobal) {
  return cudaMallocManaged(reinterpret_cast<void **>(ptr), size, flags);
}

inline hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream) {
  return cudaMallocAsync(ptr, size, stream);
}
template <class T>
inline hipError_t hipMallocAsync(T **ptr, size_t size, hipStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void **>(ptr), size, stream);
}
inline hipError_t hipFreeAsync(void *ptr, hipStream_t stream) { return cudaFreeAsync(ptr, stream); }

inline hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
  return cudaMallocPitch(ptr, pitch, width, height);
}

/** Pinned host memory. The AMD-only coherence/NUMA bits are accepted and dropped. */
inline hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags = hipHostMallocDefault) {
  const unsigned int amd_only = hipHostMallocNumaUser | hipHostMallocCoherent | hipHostMallocNonCoherent;
  return cudaHostAlloc(ptr, size, flags & ~amd_only);
}
template <class T>
inline hipError_t hipHostMalloc(T **ptr, size_t size, unsigned int flags = hipHostMallocDefault) {
  return hipHostMalloc(reinterpret_cast<void **>(ptr), size, flags);
}
inline hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags = hipHostAllocDefault) {
  return hipHostMalloc(ptr, size, flags);
}
template <class T>
inline hipError_t hipHostAlloc(T **ptr, size_t size, unsigned int flags = hipHostAllocDefault) {
  return hipHostMalloc(reinterpret_cast<void **>(ptr), size, flags);
}
inline hipError_t hipExtHostAlloc(void **ptr, size_t size, unsigned int flags) {
  return hipHostMalloc(ptr, size, flags);
}
inline hipError_t hipMallocHost(void **ptr, size_t size) { return cudaMallocHost(ptr, size); }
template <class T>
inline hipError_t hipMallocHost(T **ptr, size_t size) {
  return cudaMallocHost(reinterpret_cast<void **>(ptr), size);
}
inline hipError_t hipHostFree(void *ptr) { return cudaFreeHost(ptr); }
inline hipError_t hipFreeHost(void *ptr) { return cudaFreeHost(ptr); }
inline hipError_t hipHostGetDevicePointer(void **devPtr, void *hostPtr, unsigned int flags) {
  return cudaHostGetDevicePointer(devPtr, hostPtr, flags);
}
inline hipError_t hipHostGetFlags(unsigned int *flags, void *hostPtr) {
  return cudaHostGetFlags(flags, hostPtr);
}
inline hipError_t hipHostRegister(void *hostPtr, size_t size, unsigned int flags) {
  return cudaHostRegister(hostPtr, size, flags);
}
inline hipError_t hipHostUnregister(void *hostPtr) { return cudaHostUnregister(hostPtr); }

inline hipError_t hipMemGetInfo(size_t *free, size_t *total) { return cudaMemGetInfo(free, total); }

inline hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind) {
  return cudaMemcpy(dst, src, size, kind);
}
inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                                 hipStream_t stream = 0) {
  return cudaMemcpyAsync(dst, src, size, kind, stream);
}
inline hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t size, hipMemcpyKind kind,
                                      hipStream_t stream) {
  hipError_t err = cudaMemcpyAsync(dst, src, size, kind, stream);
  if (err != cudaSuccess) return err;
  return cudaStreamSynchronize(stream);
}
inline hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void *src, size_t size) {
  return cudaMemcpy(dst, src, size, cudaMemcpyHostToDevice);
}
inline hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t size) {
  return cudaMemcpy(dst, src, size, cudaMemcpyDeviceToHost);
}
inline hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t size) {
  return cudaMemcpy(dst, src, size, cudaMemcpyDeviceToDevice);
}
inline hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, const void *src, size_t size, hipStream_t stream) {
  return cudaMemcpyAsync(dst, src, size, cudaMemcpyHostToDevice, stream);
}
inline hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t size, hipStream_t stream) {
  return cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToHost, stream);
}
inline hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t size,
                                     hipStream_t stream) {
  return cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, stream);
}
inline hipError_t hipMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, hipMemcpyKind kind) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
inline hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, hipMemcpyKind kind,
                                   hipStream_t stream = 0) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream);
}
inline hipError_t hipMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                size_t size) {
  return cudaMemcpyPeer(dst, dstDevice, src, srcDevice, size);
}
inline hipError_t hipMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                     size_t size, hipStream_t stream = 0) {
  return cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, size, stream);
}

/*
 * Symbols. HIP_SYMBOL(x) is `x` here (ROCm spells it `&x`); both forms of call work:
 *   hipMemcpyToSymbol(HIP_SYMBOL(var), ...)  - the variable, bound by reference (template);
 *   hipMemcpyToSymbol(&var, ...)             - its address, through the const void * overload.
 */
#define HIP_SYMBOL(X) X

inline hipError_t hipMemcpyToSymbol(const void *symbol, const void *src, size_t size,
                                    size_t offset = 0, hipMemcpyKind kind = hipMemcpyHostToDevice) {
  return cudaMemcpyToSymbol(symbol, src, size, offset, kind);
}
template <class T>
inline hipError_t hipMemcpyToSymbol(T &symbol, const void *src, size_t size, size_t offset = 0,
                                    hipMemcpyKind kind = hipMemcpyHostToDevice) {
  return cudaMemcpyToSymbol(static_cast<const void *>(&symbol), src, size, offset, kind);
}
inline hipError_t hipMemcpyToSymbolAsync(const void *symbol, const void *src, size_t size,
                                         size_t offset, hipMemcpyKind kind, hipStream_t stream = 0) {
  return cudaMemcpyToSymbolAsync(symbol, src, size, offset, kind, stream);
}
template <class T>
inline hipError_t hipMemcpyToSymbolAsync(T &symbol, const void *src, size_t size, size_t offset,
                                         hipMemcpyKind kind, hipStream_t stream = 0) {
  return cudaMemcpyToSymbolAsync(static_cast<const void *>(&symbol), src, size, offset, kind,
                                 stream);
}
inline hipError_t hipMemcpyFromSymbol(void *dst, const void *symbol, size_t size, size_t offset = 0,
                                      hipMemcpyKind kind = hipMemcpyDeviceToHost) {
  return cudaMemcpyFromSymbol(dst, symbol, size, offset, kind);
}
template <class T>
inline hipError_t hipMemcpyFromSymbol(void *dst, T &symbol, size_t size, size_t offset = 0,
                                      hipMemcpyKind kind = hipMemcpyDeviceToHost) {
  return cudaMemcpyFromSymbol(dst, static_cast<const void *>(&symbol), size, offset, kind);
}
inline hipError_t hipMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t size,
                                           size_t offset, hipMemcpyKind kind,
                                           hipStream_t stream = 0) {
  return cudaMemcpyFromSymbolAsync(dst, symbol, size, offset, kind, stream);
}
template <class T>
inline hipError_t hipMemcpyFromSymbolAsync(void *dst, T &symbol, size_t size, size_t offset,
                                           hipMemcpyKind kind, hipStream_t stream = 0) {
  return cudaMemcpyFromSymbolAsync(dst, static_cast<const void *>(&symbol), size, offset, kind,
                                   stream);
}
inline hipError_t hipGetSymbolAddress(void **devPtr, const void *symbol) {
  return cudaGetSymbolAddress(devPtr, symbol);
}
template <class T>
inline hipError_t hipGetSymbolAddress(void **devPtr, T &symbol) {
  return cudaGetSymbolAddress(devPtr, static_cast<const void *>(&symbol));
}
inline hipError_t hipGetSymbolSize(size_t *size, const void *symbol) {
  return cudaGetSymbolSize(size, symbol);
}
template <class T>
inline hipError_t hipGetSymbolSize(size_t *size, T &symbol) {
  return cudaGetSymbolSize(size, static_cast<const void *>(&symbol));
}

inline hipError_t hipMemset(void *dst, int value, size_t size) { return cudaMemset(dst, value, size); }
inline hipError_t hipMemsetAsync(void *dst, int value, size_t size, hipStream_t stream = 0) {
  return cudaMemsetAsync(dst, value, size, stream);
}
inline hipError_t hipMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height) {
  return cudaMemset2D(dst, pitch, value, width, height);
}
/* 8/16/32-bit fills [driver: link with -lcuda]. `count` is in elements. */
inline hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuMemsetD8(reinterpret_cast<CUdeviceptr>(dst), value, count));
}
inline hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuMemsetD16(reinterpret_cast<CUdeviceptr>(dst), value, count));
}
inline hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuMemsetD32(reinterpret_cast<CUdeviceptr>(dst), static_cast<unsigned int>(value), count));
}
inline hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                                   hipStream_t stream = 0) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream));
}
inline hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                                    hipStream_t stream = 0) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count, stream));
}
inline hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count,
                                    hipStream_t stream = 0) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst),
                                                  static_cast<unsigned int>(value), count, stream));
}

/* Managed memory: prefetch and advice (CUDA 13 names locations with cudaMemLocation). */
namespace hip_compat {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
inline cudaMemLocation location_of(int device) {
  cudaMemLocation loc;
  memset(&loc, 0, sizeof(loc));
  if (device == cudaCpuDeviceId) {
    loc.type = cudaMemLocationTypeHost;
    loc.id = 0;
  } else {
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
  }
  return loc;
}
#endif
}  // namespace hip_compat

inline hipError_t hipMemPrefetchAsync(const void *ptr, size_t count, int device,
                                      hipStream_t stream = 0) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
  return cudaMemPrefetchAsync(ptr, count, hip_compat::location_of(device), 0, stream);
#else
  return cudaMemPrefetchAsync(ptr, count, device, stream);
#endif
}
inline hipError_t hipMemAdvise(const void *ptr, size_t count, hipMemoryAdvise advice, int device) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
  return cudaMemAdvise(ptr, count, advice, hip_compat::location_of(device));
#else
  return cudaMemAdvise(ptr, count, advice, device);
#endif
}

/* Pointer attributes. */
typedef enum hipMemoryType {
  hipMemoryTypeUnregistered = 0,
  hipMemoryTypeHost = 1,
  hipMemoryTypeDevice = 2,
  hipMemoryTypeManaged = 3,
  hipMemoryTypeArray = 10,
  hipMemoryTypeUnified = 11
} hipMemoryType;

/** HIP 6's layout (`type`); `memoryType` (HIP 5's name) reads the same field. */
typedef struct hipPointerAttribute_t {
  union {
    hipMemoryType type;
    hipMemoryType memoryType;
  };
  int device;
  void *devicePointer;
  void *hostPointer;
  int isManaged;
  unsigned allocationFlags;
} hipPointerAttribute_t;

/** Type, device and both addresses of `ptr` (allocationFlags is 0). Unregistered host memory
 *  gives hipSuccess with type hipMemoryTypeUnregistered, as CUDA 11+ does. */
inline hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr) {
  if (attributes == nullptr) return hipErrorInvalidValue;
  cudaPointerAttributes a;
  hipError_t err = cudaPointerGetAttributes(&a, ptr);
  if (err != cudaSuccess) return err;
  memset(attributes, 0, sizeof(*attributes));
  switch (a.type) {
    case cudaMemoryTypeHost:
      attributes->type = hipMemoryTypeHost;
      break;
    case cudaMemoryTypeDevice:
      attributes->type = hipMemoryTypeDevice;
      break;
    case cudaMemoryTypeManaged:
      attributes->type = hipMemoryTypeManaged;
      break;
    default:
      attributes->type = hipMemoryTypeUnregistered;
      break;
  }
  attributes->device = a.device;
  attributes->devicePointer = a.devicePointer;
  attributes->hostPointer = a.hostPointer;
  attributes->isManaged = a.type == cudaMemoryTypeManaged ? 1 : 0;
  attributes->allocationFlags = 0;
  return hipSuccess;
}

/* ------------------------------------------------------------------------------------------ */
/* IPC                                                                                          */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *handle, void *devPtr) {
  return cudaIpcGetMemHandle(handle, devPtr);
}
inline hipError_t hipIpcOpenMemHandle(void **devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
  return cudaIpcOpenMemHandle(devPtr, handle, flags);
}
inline hipError_t hipIpcCloseMemHandle(void *devPtr) { return cudaIpcCloseMemHandle(devPtr); }
inline hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t *handle, hipEvent_t event) {
  return cudaIpcGetEventHandle(handle, event);
}
inline hipError_t hipIpcOpenEventHandle(hipEvent_t *event, hipIpcEventHandle_t handle) {
  return cudaIpcOpenEventHandle(event, handle);
}

/* ------------------------------------------------------------------------------------------ */
/* Streams and events                                                                           */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipStreamCreate(hipStream_t *stream) { return cudaStreamCreate(stream); }
inline hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags) {
  return cudaStreamCreateWithFlags(stream, flags);
}
inline hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority) {
  return cudaStreamCreateWithPriority(stream, flags, priority);
}
inline hipError_t hipStreamDestroy(hipStream_t stream) { return cudaStreamDestroy(stream); }
inline hipError_t hipStreamSynchronize(hipStream_t stream) { return cudaStreamSynchronize(stream); }
inline hipError_t hipStreamQuery(hipStream_t stream) { return cudaStreamQuery(stream); }
inline hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags = 0) {
  return cudaStreamWaitEvent(stream, event, flags);
}
inline hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags) {
  return cudaStreamGetFlags(stream, flags);
}
inline hipError_t hipStreamGetPriority(hipStream_t stream, int *priority) {
  return cudaStreamGetPriority(stream, priority);
}
inline hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback,
                                       void *userData, unsigned int flags) {
  return cudaStreamAddCallback(stream, callback, userData, flags);
}
inline hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData) {
  return cudaLaunchHostFunc(stream, fn, userData);
}

/* Stream memory operations [driver: link with -lcuda]. A mask other than all ones (ROCm's
 * extension) is not supported by CUDA and returns hipErrorNotSupported. */
inline hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value,
                                       unsigned int flags, uint32_t mask = 0xFFFFFFFFu) {
  if (mask != 0xFFFFFFFFu) return hipErrorNotSupported;
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuStreamWaitValue32(stream, reinterpret_cast<CUdeviceptr>(ptr), value, flags));
}
inline hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value,
                                       unsigned int flags,
                                       uint64_t mask = 0xFFFFFFFFFFFFFFFFull) {
  if (mask != 0xFFFFFFFFFFFFFFFFull) return hipErrorNotSupported;
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuStreamWaitValue64(stream, reinterpret_cast<CUdeviceptr>(ptr), value, flags));
}
inline hipError_t hipStreamWriteValue32(hipStream_t stream, void *ptr, uint32_t value,
                                        unsigned int flags) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuStreamWriteValue32(stream, reinterpret_cast<CUdeviceptr>(ptr), value, flags));
}
inline hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value,
                                        unsigned int flags) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(
      cuStreamWriteValue64(stream, reinterpret_cast<CUdeviceptr>(ptr), value, flags));
}

inline hipError_t hipEventCreate(hipEvent_t *event) { return cudaEventCreate(event); }
inline hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned int flags) {
  /* ROCm's release-scope bits have no CUDA meaning. */
  return cudaEventCreateWithFlags(event, flags & ~(hipEventReleaseToDevice | hipEventReleaseToSystem));
}
inline hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream = 0) {
  return cudaEventRecord(event, stream);
}
inline hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream = 0,
                                          unsigned int flags = 0) {
  return cudaEventRecordWithFlags(event, stream, flags);
}
inline hipError_t hipEventSynchronize(hipEvent_t event) { return cudaEventSynchronize(event); }
inline hipError_t hipEventQuery(hipEvent_t event) { return cudaEventQuery(event); }
inline hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) {
  return cudaEventElapsedTime(ms, start, stop);
}
inline hipError_t hipEventDestroy(hipEvent_t event) { return cudaEventDestroy(event); }

/* ------------------------------------------------------------------------------------------ */
/* Graphs (stream capture)                                                                      */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
  return cudaStreamBeginCapture(stream, mode);
}
inline hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph) {
  return cudaStreamEndCapture(stream, graph);
}
inline hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *status) {
  return cudaStreamIsCapturing(stream, status);
}
inline hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode) {
  return cudaThreadExchangeStreamCaptureMode(mode);
}
inline hipError_t hipGraphCreate(hipGraph_t *graph, unsigned int flags) {
  return cudaGraphCreate(graph, flags);
}
/** HIP keeps CUDA 11's five-argument form; the error node and log are not reported. */
inline hipError_t hipGraphInstantiate(hipGraphExec_t *graphExec, hipGraph_t graph,
                                      hipGraphNode_t *errorNode = nullptr, char *logBuffer = nullptr,
                                      size_t bufferSize = 0) {
  if (errorNode != nullptr) *errorNode = nullptr;
  if (logBuffer != nullptr && bufferSize > 0) logBuffer[0] = '\0';
  return cudaGraphInstantiate(graphExec, graph, 0);
}
inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *graphExec, hipGraph_t graph,
                                               unsigned long long flags) {
  return cudaGraphInstantiateWithFlags(graphExec, graph, flags);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) {
  return cudaGraphLaunch(graphExec, stream);
}
inline hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream) {
  return cudaGraphUpload(graphExec, stream);
}
inline hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec) {
  return cudaGraphExecDestroy(graphExec);
}
inline hipError_t hipGraphDestroy(hipGraph_t graph) { return cudaGraphDestroy(graph); }

/* ------------------------------------------------------------------------------------------ */
/* Kernels: launch, attributes, occupancy                                                       */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipLaunchKernel(const void *function, dim3 numBlocks, dim3 dimBlocks, void **args,
                                  size_t sharedMemBytes = 0, hipStream_t stream = 0) {
  return cudaLaunchKernel(function, numBlocks, dimBlocks, args, sharedMemBytes, stream);
}
template <class F>
inline hipError_t hipLaunchKernel(F function, dim3 numBlocks, dim3 dimBlocks, void **args,
                                  size_t sharedMemBytes = 0, hipStream_t stream = 0) {
  return cudaLaunchKernel(hip_compat::function_address(function), numBlocks, dimBlocks, args,
                          sharedMemBytes, stream);
}
inline hipError_t hipLaunchCooperativeKernel(const void *function, dim3 numBlocks, dim3 dimBlocks,
                                             void **args, unsigned int sharedMemBytes,
                                             hipStream_t stream) {
  return cudaLaunchCooperativeKernel(function, numBlocks, dimBlocks, args, sharedMemBytes, stream);
}
template <class F>
inline hipError_t hipLaunchCooperativeKernel(F function, dim3 numBlocks, dim3 dimBlocks, void **args,
                                             unsigned int sharedMemBytes, hipStream_t stream) {
  return cudaLaunchCooperativeKernel(hip_compat::function_address(function), numBlocks, dimBlocks,
                                     args, sharedMemBytes, stream);
}

inline hipError_t hipFuncGetAttributes(hipFuncAttributes *attr, const void *function) {
  return cudaFuncGetAttributes(attr, function);
}
template <class F>
inline hipError_t hipFuncGetAttributes(hipFuncAttributes *attr, F function) {
  return cudaFuncGetAttributes(attr, hip_compat::function_address(function));
}
inline hipError_t hipFuncSetAttribute(const void *function, hipFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(function, attr, value);
}
template <class F>
inline hipError_t hipFuncSetAttribute(F function, hipFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(hip_compat::function_address(function), attr, value);
}
inline hipError_t hipFuncSetCacheConfig(const void *function, hipFuncCache_t config) {
  return cudaFuncSetCacheConfig(function, config);
}
template <class F>
inline hipError_t hipFuncSetCacheConfig(F function, hipFuncCache_t config) {
  return cudaFuncSetCacheConfig(hip_compat::function_address(function), config);
}

inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *function,
                                                               int blockSize,
                                                               size_t dynSharedMemPerBlk) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, function, blockSize,
                                                       dynSharedMemPerBlk);
}
template <class F>
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, F function,
                                                               int blockSize,
                                                               size_t dynSharedMemPerBlk) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      numBlocks, hip_compat::function_address(function), blockSize, dynSharedMemPerBlk);
}
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *function, int blockSize, size_t dynSharedMemPerBlk,
    unsigned int flags) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, function, blockSize,
                                                                dynSharedMemPerBlk, flags);
}
template <class F>
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, F function,
                                                                        int blockSize,
                                                                        size_t dynSharedMemPerBlk,
                                                                        unsigned int flags) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      numBlocks, hip_compat::function_address(function), blockSize, dynSharedMemPerBlk, flags);
}
/** Largest block size with the best occupancy, and the grid that fills the device with it. */
template <class F>
inline hipError_t hipOccupancyMaxPotentialBlockSize(int *gridSize, int *blockSize, F function,
                                                    size_t dynSharedMemPerBlk = 0,
                                                    int blockSizeLimit = 0) {
  return cudaOccupancyMaxPotentialBlockSize(gridSize, blockSize, function, dynSharedMemPerBlk,
                                            blockSizeLimit);
}

/* ------------------------------------------------------------------------------------------ */
/* Modules [driver: link with -lcuda]. Images are CUDA's (cubin, fatbin or PTX), not AMD code    */
/* objects: build them with nvcc --cubin / --fatbin / --ptx.                                    */
/* ------------------------------------------------------------------------------------------ */

inline hipError_t hipModuleLoad(hipModule_t *module, const char *fname) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuModuleLoad(module, fname));
}
inline hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuModuleLoadData(module, image));
}
inline hipError_t hipModuleUnload(hipModule_t module) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuModuleUnload(module));
}
inline hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module,
                                       const char *name) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuModuleGetFunction(function, module, name));
}
inline hipError_t hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes, hipModule_t module,
                                     const char *name) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  CUdeviceptr p = 0;
  err = hip_compat::from_driver(cuModuleGetGlobal(&p, bytes, module, name));
  if (err == cudaSuccess && dptr != nullptr) *dptr = reinterpret_cast<void *>(p);
  return err;
}
inline hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, hipStream_t stream,
                                        void **kernelParams, void **extra) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX,
                                                blockDimY, blockDimZ, sharedMemBytes, stream,
                                                kernelParams, extra));
}
inline hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX,
                                                   unsigned int gridDimY, unsigned int gridDimZ,
                                                   unsigned int blockDimX, unsigned int blockDimY,
                                                   unsigned int blockDimZ,
                                                   unsigned int sharedMemBytes, hipStream_t stream,
                                                   void **kernelParams) {
  hipError_t err = hip_compat::ensure_context();
  if (err != cudaSuccess) return err;
  return hip_compat::from_driver(cuLaunchCooperativeKernel(f, gridDimX, gridDimY, gridDimZ,
                                                           blockDimX, blockDimY, blockDimZ,
                                                           sharedMemBytes, stream, kernelParams));
}

/* ------------------------------------------------------------------------------------------ */
/* Not supported: a call stops the compile with a message naming this layer.                    */
/* ------------------------------------------------------------------------------------------ */

ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtLaunchKernel,
                                "use hipLaunchKernel and time it with hipEventRecord")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtLaunchMultiKernelMultiDevice,
                                "launch on each device with hipLaunchKernelGGL")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipLaunchCooperativeKernelMultiDevice,
                                "CUDA 13 removed multi-device cooperative launch; launch per device")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtModuleLaunchKernel, "use hipModuleLaunchKernel")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipHccModuleLaunchKernel, "use hipModuleLaunchKernel")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipModuleLoadDataEx,
                                "JIT options differ between ROCm and CUDA; use hipModuleLoadData")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtStreamCreateWithCUMask,
                                "CU masks are AMD-only; use hipStreamCreateWithFlags")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtStreamGetCUMask, "CU masks are AMD-only")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipExtGetLinkTypeAndHopCount,
                                "xGMI link queries are AMD-only; use hipDeviceCanAccessPeer")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipMemPtrGetInfo, "use hipPointerGetAttributes")
ROCSHMEM_HIP_COMPAT_UNSUPPORTED(hipDeviceGetGraphMemAttribute, "not mapped by this layer")

#endif  // HIP_INCLUDE_HIP_HIP_RUNTIME_API_H
