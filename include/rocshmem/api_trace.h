/**
 * @file api_trace.h
 * The dispatch table of the host stream-ordered calls for tracing tools (upstream's header of
 * the same name, for rocprofiler-sdk): RocshmemGetFunctionTable() returns the library's table,
 * one pointer per call, in upstream's order. C and C++.
 */
#ifndef ROCSHMEM_API_TRACE_H
#define ROCSHMEM_API_TRACE_H

#include <stddef.h>
#include <stdint.h>

#if defined(__HIP__) || defined(__HIPCC__) || defined(__CUDACC__) || defined(__CUDA__)
#include <hip/hip_runtime_api.h>
#else
/* The host platform: HIP's stream handle type, as HIP declares it. */
typedef struct ihipStream_t *hipStream_t;
#endif

/* The team handle, as rocshmem_common.hpp declares it in namespace rocshmem. */
typedef uint64_t *rocshmem_team_t;

#ifdef __cplusplus
extern "C" {
#endif

/* Raised only when the layout of the table changes. */
#define ROCSHMEM_API_TRACE_VERSION_MAJOR 0
/* Raised when members are added at the end. */
#define ROCSHMEM_API_TRACE_VERSION_PATCH 7

typedef void (*barrier_all_on_stream_fn_t)(hipStream_t stream);
typedef void (*quiet_on_stream_fn_t)(hipStream_t stream);
typedef void (*sync_all_on_stream_fn_t)(hipStream_t stream);
typedef void (*alltoallmem_on_stream_fn_t)(rocshmem_team_t team, void *dest, const void *source, size_t size,
                                           hipStream_t stream);
typedef void (*broadcastmem_on_stream_fn_t)(rocshmem_team_t team, void *dest, const void *source, size_t nelems,
                                            int pe_root, hipStream_t stream);
typedef void (*getmem_on_stream_fn_t)(void *dest, const void *source, size_t nelems, int pe, hipStream_t stream);
typedef void (*putmem_on_stream_fn_t)(void *dest, const void *source, size_t nelems, int pe, hipStream_t stream);
typedef void (*putmem_signal_on_stream_fn_t)(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                             uint64_t signal, int sig_op, int pe, hipStream_t stream);
typedef void (*signal_wait_until_on_stream_fn_t)(uint64_t *sig_addr, int cmp, uint64_t cmp_value, hipStream_t stream);

/* `size` is sizeof the table the library was built with; members are only ever added at the end. */
typedef struct rocshmemApiFuncTable {
  uint64_t size;
  barrier_all_on_stream_fn_t barrier_all_on_stream_fn;
  quiet_on_stream_fn_t quiet_on_stream_fn;
  sync_all_on_stream_fn_t sync_all_on_stream_fn;
  alltoallmem_on_stream_fn_t alltoallmem_on_stream_fn;
  broadcastmem_on_stream_fn_t broadcastmem_on_stream_fn;
  getmem_on_stream_fn_t getmem_on_stream_fn;
  putmem_on_stream_fn_t putmem_on_stream_fn;
  putmem_signal_on_stream_fn_t putmem_signal_on_stream_fn;
  signal_wait_until_on_stream_fn_t signal_wait_until_on_stream_fn;
} rocshmemApiFuncTable;

/* The library's table (static storage; never NULL). */
const rocshmemApiFuncTable *RocshmemGetFunctionTable(void);

#ifdef __cplusplus
}
#endif

#endif /* ROCSHMEM_API_TRACE_H */
