/* shmem_adapter.cuh: the few operations the GPU benchmarks use, mapped to either library.
 *
 * Every benchmark in bench/gpu is written once against the sh_* names below and compiled
 * twice by scripts/bench-nvidia.sh:
 *   default          this library: <rocshmem/rocshmem.hpp> (-I include/rocshmem/compat -I include),
 *                    librocshmem_device.a (-rdc=true) and librocshmem.so; started by rocshmem-run
 *   -DBENCH_NVSHMEM  NVSHMEM (nvshmem.h, libnvshmem_device.a, libnvshmem_host.so.3), initialised
 *                    with a unique id that rank 0 writes to $BENCH_UID_FILE; the rank and the
 *                    number of ranks come from BENCH_RANK / BENCH_NRANKS (or Open MPI's or a
 *                    PMI launcher's variables)
 * so both libraries run exactly the same kernels. The work-group (_wg) operations of this
 * library correspond to NVSHMEM's _block ones.
 */
#ifndef BENCH_GPU_SHMEM_ADAPTER_CUH
#define BENCH_GPU_SHMEM_ADAPTER_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BENCH_NVSHMEM
/* ------------------------------------------------------------------------------ NVSHMEM -- */
#include <nvshmem.h>
#include <nvshmemx.h>

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SH_LIB "nvshmem"
#define SH_CMP_GE NVSHMEM_CMP_GE
#define SH_SIGNAL_SET NVSHMEM_SIGNAL_SET

static inline int sh_env_int(const char *const *names, int fallback) {
  for (; *names; ++names) {
    const char *v = getenv(*names);
    if (v && *v) return atoi(v);
  }
  return fallback;
}

/** Initialises NVSHMEM with a unique id: rank 0 creates it and writes it (atomically, through a
 * rename) to $BENCH_UID_FILE; the other ranks wait for the file. The CUDA device (rank modulo
 * the device count) is chosen first, as NVSHMEM requires. Exits on any failure. */
static inline void sh_init() {
  static const char *const rank_vars[] = {"BENCH_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", nullptr};
  static const char *const size_vars[] = {"BENCH_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", nullptr};
  const int rank = sh_env_int(rank_vars, 0), nranks = sh_env_int(size_vars, 1);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    fprintf(stderr, "bench (nvshmem) rank %d: no CUDA device\n", rank);
    exit(3);
  }
  if (cudaSetDevice(rank % ndev) != cudaSuccess || cudaFree(0) != cudaSuccess) {
    fprintf(stderr, "bench (nvshmem) rank %d: cudaSetDevice(%d) failed\n", rank, rank % ndev);
    exit(3);
  }
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (nranks > 1) {
    const char *path = getenv("BENCH_UID_FILE");
    if (!path || !*path) {
      fprintf(stderr, "bench (nvshmem) rank %d: %d ranks need BENCH_UID_FILE (a path both can reach)\n", rank, nranks);
      exit(3);
    }
    if (rank == 0) {
      if (nvshmemx_get_uniqueid(&id) != 0) {
        fprintf(stderr, "bench (nvshmem): nvshmemx_get_uniqueid failed\n");
        exit(3);
      }
      char tmp[4096];
      snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
      FILE *f = fopen(tmp, "wb");
      if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "bench (nvshmem): cannot write %s: %s\n", path, strerror(errno));
        exit(3);
      }
    } else {
      bool got = false;
      for (int waited_ms = 0; waited_ms < 120000 && !got; waited_ms += 2) {
        FILE *f = fopen(path, "rb");
        if (f) {
          got = fread(&id, sizeof id, 1, f) == 1;
          fclose(f);
        }
        if (!got) {
          struct timespec ts = {0, 2000000};
          nanosleep(&ts, nullptr);
        }
      }
      if (!got) {
        fprintf(stderr, "bench (nvshmem) rank %d: no unique id in %s after 120 s\n", rank, path);
        exit(3);
      }
    }
  } else if (nvshmemx_get_uniqueid(&id) != 0) {
    fprintf(stderr, "bench (nvshmem): nvshmemx_get_uniqueid failed\n");
    exit(3);
  }
  if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != 0 ||
      nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
    fprintf(stderr, "bench (nvshmem) rank %d: nvshmemx_init_attr failed\n", rank);
    exit(3);
  }
}
static inline void sh_finalize() { nvshmem_finalize(); }
static inline int sh_my_pe() { return nvshmem_my_pe(); }
static inline int sh_n_pes() { return nvshmem_n_pes(); }
static inline void *sh_malloc(size_t bytes) { return nvshmem_malloc(bytes); }
static inline void sh_free(void *p) { nvshmem_free(p); }
static inline void sh_host_barrier_all() { nvshmem_barrier_all(); }
static inline void sh_host_int_p(int *dest, int value, int pe) { nvshmem_int_p(dest, value, pe); }
/** Launch of a kernel that synchronises with other PEs (NVSHMEM asks for its collective launch). */
static inline cudaError_t sh_launch_sync_kernel(const void *fn, dim3 grid, dim3 block, void **args, cudaStream_t st) {
  return nvshmemx_collective_launch(fn, grid, block, args, 0, st) == 0 ? cudaSuccess : cudaErrorLaunchFailure;
}

__device__ __forceinline__ void sh_putmem_nbi_block(void *d, const void *s, size_t n, int pe) {
  nvshmemx_putmem_nbi_block(d, s, n, pe);
}
__device__ __forceinline__ void sh_getmem_block(void *d, const void *s, size_t n, int pe) {
  nvshmemx_getmem_block(d, s, n, pe);
}
__device__ __forceinline__ void sh_int_p(int *d, int v, int pe) { nvshmem_int_p(d, v, pe); }
__device__ __forceinline__ void sh_uint64_p(uint64_t *d, uint64_t v, int pe) { nvshmem_uint64_p(d, v, pe); }
__device__ __forceinline__ void sh_quiet() { nvshmem_quiet(); }
__device__ __forceinline__ void sh_fence() { nvshmem_fence(); }
__device__ __forceinline__ void sh_uint64_wait_until_ge(uint64_t *ivar, uint64_t v) {
  nvshmem_uint64_wait_until(ivar, NVSHMEM_CMP_GE, v);
}
__device__ __forceinline__ uint64_t sh_signal_wait_until_ge(uint64_t *sig, uint64_t v) {
  return nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, v);
}
__device__ __forceinline__ void sh_putmem_signal_nbi_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v,
                                                           int pe) {
  nvshmemx_putmem_signal_nbi_block(d, s, n, sig, v, NVSHMEM_SIGNAL_SET, pe);
}
__device__ __forceinline__ int sh_int_atomic_fetch_add(int *d, int v, int pe) {
  return nvshmem_int_atomic_fetch_add(d, v, pe);
}
__device__ __forceinline__ int sh_int_atomic_compare_swap(int *d, int cond, int v, int pe) {
  return nvshmem_int_atomic_compare_swap(d, cond, v, pe);
}
__device__ __forceinline__ void sh_int_atomic_add(int *d, int v, int pe) { nvshmem_int_atomic_add(d, v, pe); }
__device__ __forceinline__ void sh_int_atomic_inc(int *d, int pe) { nvshmem_int_atomic_inc(d, pe); }
__device__ __forceinline__ void sh_barrier_all() { nvshmem_barrier_all(); }
__device__ __forceinline__ void sh_barrier_all_warp() { nvshmemx_barrier_all_warp(); }
__device__ __forceinline__ void sh_barrier_all_block() { nvshmemx_barrier_all_block(); }
__device__ __forceinline__ void sh_sync_all() { nvshmem_sync_all(); }
__device__ __forceinline__ void sh_sync_all_warp() { nvshmemx_sync_all_warp(); }
__device__ __forceinline__ void sh_sync_all_block() { nvshmemx_sync_all_block(); }

/* Collectives over the world team; sizes in bytes (per PE for alltoall and fcollect). The
 * broadcast uses the char form: NVSHMEM 3.8's host header declares broadcastmem_block without
 * its root argument, the typed char form is the same code path and declared consistently. */
__device__ __forceinline__ void sh_float_sum_reduce_block(float *d, const float *s, size_t n) {
  nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, d, s, n);
}
__device__ __forceinline__ void sh_float_sum_reduce_warp(float *d, const float *s, size_t n) {
  nvshmemx_float_sum_reduce_warp(NVSHMEM_TEAM_WORLD, d, s, n);
}
__device__ __forceinline__ void sh_broadcastmem_block(void *d, const void *s, size_t bytes, int root) {
  nvshmemx_char_broadcast_block(NVSHMEM_TEAM_WORLD, (char *)d, (const char *)s, bytes, root);
}
__device__ __forceinline__ void sh_broadcastmem_warp(void *d, const void *s, size_t bytes, int root) {
  nvshmemx_char_broadcast_warp(NVSHMEM_TEAM_WORLD, (char *)d, (const char *)s, bytes, root);
}
__device__ __forceinline__ void sh_alltoallmem_block(void *d, const void *s, size_t bytes) {
  nvshmemx_alltoallmem_block(NVSHMEM_TEAM_WORLD, d, s, bytes);
}
__device__ __forceinline__ void sh_alltoallmem_warp(void *d, const void *s, size_t bytes) {
  nvshmemx_alltoallmem_warp(NVSHMEM_TEAM_WORLD, d, s, bytes);
}
__device__ __forceinline__ void sh_fcollectmem_block(void *d, const void *s, size_t bytes) {
  nvshmemx_fcollectmem_block(NVSHMEM_TEAM_WORLD, d, s, bytes);
}
__device__ __forceinline__ void sh_fcollectmem_warp(void *d, const void *s, size_t bytes) {
  nvshmemx_fcollectmem_warp(NVSHMEM_TEAM_WORLD, d, s, bytes);
}

/* Stream-ordered host operations. */
#define SH_HAVE_ON_STREAM 1
static inline void sh_putmem_on_stream(void *d, const void *s, size_t bytes, int pe, cudaStream_t st) {
  nvshmemx_putmem_on_stream(d, s, bytes, pe, st);
}
static inline void sh_barrier_all_on_stream(cudaStream_t st) { nvshmemx_barrier_all_on_stream(st); }
static inline int sh_float_sum_reduce_on_stream(float *d, const float *s, size_t n, cudaStream_t st) {
  return nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, d, s, n, st);
}

#else
/* ---------------------------------------------------------------------------- rocSHMEM -- */
#include <rocshmem/rocshmem.hpp>

#define SH_LIB "rocshmem"
#define SH_CMP_GE rocshmem::ROCSHMEM_CMP_GE
#define SH_SIGNAL_SET rocshmem::ROCSHMEM_SIGNAL_SET

/** rocshmem_init (void; it reports and exits on failure): the launcher (rocshmem-run, mpirun)
 * or a lone process; the library picks the GPU (local rank modulo the device count) and makes
 * its context current. */
static inline void sh_init() { rocshmem::rocshmem_init(); }
static inline void sh_finalize() { rocshmem::rocshmem_finalize(); }
static inline int sh_my_pe() { return rocshmem::rocshmem_my_pe(); }
static inline int sh_n_pes() { return rocshmem::rocshmem_n_pes(); }
static inline void *sh_malloc(size_t bytes) { return rocshmem::rocshmem_malloc(bytes); }
static inline void sh_free(void *p) { rocshmem::rocshmem_free(p); }
static inline void sh_host_barrier_all() { rocshmem::rocshmem_barrier_all(); }
static inline void sh_host_int_p(int *dest, int value, int pe) { rocshmem::rocshmem_int_p(dest, value, pe); }
/** This library needs no special launch for kernels that synchronise with other PEs. */
static inline cudaError_t sh_launch_sync_kernel(const void *fn, dim3 grid, dim3 block, void **args, cudaStream_t st) {
  return cudaLaunchKernel(fn, grid, block, args, 0, st);
}

__device__ __forceinline__ void sh_putmem_nbi_block(void *d, const void *s, size_t n, int pe) {
  rocshmem::rocshmem_putmem_nbi_wg(d, s, n, pe);
}
__device__ __forceinline__ void sh_getmem_block(void *d, const void *s, size_t n, int pe) {
  rocshmem::rocshmem_getmem_wg(d, s, n, pe);
}
__device__ __forceinline__ void sh_int_p(int *d, int v, int pe) { rocshmem::rocshmem_int_p(d, v, pe); }
__device__ __forceinline__ void sh_uint64_p(uint64_t *d, uint64_t v, int pe) { rocshmem::rocshmem_uint64_p(d, v, pe); }
__device__ __forceinline__ void sh_quiet() { rocshmem::rocshmem_quiet(); }
__device__ __forceinline__ void sh_fence() { rocshmem::rocshmem_fence(); }
__device__ __forceinline__ void sh_uint64_wait_until_ge(uint64_t *ivar, uint64_t v) {
  rocshmem::rocshmem_uint64_wait_until(ivar, rocshmem::ROCSHMEM_CMP_GE, v);
}
__device__ __forceinline__ uint64_t sh_signal_wait_until_ge(uint64_t *sig, uint64_t v) {
  return rocshmem::rocshmem_signal_wait_until(sig, rocshmem::ROCSHMEM_CMP_GE, v);
}
__device__ __forceinline__ void sh_putmem_signal_nbi_block(void *d, const void *s, size_t n, uint64_t *sig, uint64_t v,
                                                           int pe) {
  rocshmem::rocshmem_putmem_signal_nbi_wg(d, s, n, sig, v, rocshmem::ROCSHMEM_SIGNAL_SET, pe);
}
__device__ __forceinline__ int sh_int_atomic_fetch_add(int *d, int v, int pe) {
  return rocshmem::rocshmem_int_atomic_fetch_add(d, v, pe);
}
__device__ __forceinline__ int sh_int_atomic_compare_swap(int *d, int cond, int v, int pe) {
  return rocshmem::rocshmem_int_atomic_compare_swap(d, cond, v, pe);
}
__device__ __forceinline__ void sh_int_atomic_add(int *d, int v, int pe) { rocshmem::rocshmem_int_atomic_add(d, v, pe); }
__device__ __forceinline__ void sh_int_atomic_inc(int *d, int pe) { rocshmem::rocshmem_int_atomic_inc(d, pe); }
__device__ __forceinline__ void sh_barrier_all() { rocshmem::rocshmem_barrier_all(); }
__device__ __forceinline__ void sh_barrier_all_warp() { rocshmem::rocshmem_barrier_all_wave(); }
__device__ __forceinline__ void sh_barrier_all_block() { rocshmem::rocshmem_barrier_all_wg(); }
__device__ __forceinline__ void sh_sync_all() { rocshmem::rocshmem_sync_all(); }
__device__ __forceinline__ void sh_sync_all_warp() { rocshmem::rocshmem_sync_all_wave(); }
__device__ __forceinline__ void sh_sync_all_block() { rocshmem::rocshmem_sync_all_wg(); }

/* Collectives over the world team with the default context; sizes in bytes (per PE for
 * alltoall and fcollect). Upstream's counts are int: the benchmark stays below 2^31. */
__device__ __forceinline__ void sh_float_sum_reduce_block(float *d, const float *s, size_t n) {
  rocshmem::rocshmem_ctx_float_sum_reduce_wg(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s, (int)n);
}
__device__ __forceinline__ void sh_float_sum_reduce_warp(float *d, const float *s, size_t n) {
  rocshmem::rocshmem_ctx_float_sum_reduce_wave(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s,
                                               (int)n);
}
__device__ __forceinline__ void sh_broadcastmem_block(void *d, const void *s, size_t bytes, int root) {
  rocshmem::rocshmem_ctx_broadcastmem_wg(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s, (int)bytes,
                                         root);
}
__device__ __forceinline__ void sh_broadcastmem_warp(void *d, const void *s, size_t bytes, int root) {
  rocshmem::rocshmem_ctx_broadcastmem_wave(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s,
                                           (int)bytes, root);
}
__device__ __forceinline__ void sh_alltoallmem_block(void *d, const void *s, size_t bytes) {
  rocshmem::rocshmem_ctx_alltoallmem_wg(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s, (int)bytes);
}
__device__ __forceinline__ void sh_alltoallmem_warp(void *d, const void *s, size_t bytes) {
  rocshmem::rocshmem_ctx_alltoallmem_wave(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s,
                                          (int)bytes);
}
__device__ __forceinline__ void sh_fcollectmem_block(void *d, const void *s, size_t bytes) {
  rocshmem::rocshmem_ctx_fcollectmem_wg(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s, (int)bytes);
}
__device__ __forceinline__ void sh_fcollectmem_warp(void *d, const void *s, size_t bytes) {
  rocshmem::rocshmem_ctx_fcollectmem_wave(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD, d, s,
                                          (int)bytes);
}

/* Stream-ordered host operations (upstream >= 3.4/3.5 signatures). scripts/bench-nvidia.sh
 * defines BENCH_ROC_ON_STREAM when include/rocshmem declares them; without it `-b stream`
 * stops with an error that says so (bench_stream.cu). Host code reads the host shadows of
 * ROCSHMEM_CTX_DEFAULT and ROCSHMEM_TEAM_WORLD, which init fills (device/src/gpu_globals.cpp). */
#ifdef BENCH_ROC_ON_STREAM
#define SH_HAVE_ON_STREAM 1
static inline void sh_putmem_on_stream(void *d, const void *s, size_t bytes, int pe, cudaStream_t st) {
  rocshmem::rocshmem_putmem_on_stream(d, s, bytes, pe, st);
}
static inline void sh_barrier_all_on_stream(cudaStream_t st) { rocshmem::rocshmem_barrier_all_on_stream(st); }
static inline int sh_float_sum_reduce_on_stream(float *d, const float *s, size_t n, cudaStream_t st) {
  return rocshmem::rocshmem_ctx_float_sum_reduce_on_stream(rocshmem::ROCSHMEM_CTX_DEFAULT, rocshmem::ROCSHMEM_TEAM_WORLD,
                                                           d, s, (int)n, st);
}
#else
#define SH_HAVE_ON_STREAM 0
#endif
#endif

#endif
