// A user kernel the way Triton and other JIT users write one: it includes nothing of
// rocSHMEM, declares the extern "C" entry points of librocshmem_device_<arch>.bc itself, and is
// compiled to bitcode, linked with the library's bitcode (llvm-link --only-needed), lowered to
// PTX (llc) and loaded as a CUmodule (module_test.cu). Device-only: no CUDA headers.
//
//   clang++ -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 -nocudainc -nocudalib -emit-llvm -c
//
// Kernels (one work-group; every PE runs the same kernel at once; peer = (me + 1) % n):
//   module_exchange       each thread moves its own chunk with rocshmem_putmem to the peer's
//                         `dst`, rocshmem_quiet; thread 0 rocshmem_barrier_all; each thread
//                         gets its chunk of the peer's `dst` (which holds this PE's data) into
//                         `back` with rocshmem_getmem; thread 0 rocshmem_int_p(flag on the
//                         peer, *stamp), quiet, barrier_all; then checks rocshmem_ptr(dst, peer)
//                         and reads the peer's dst through it.
//   module_exchange_wg    the same with rocshmem_putmem_wg / getmem_wg / barrier_all_wg.
// `info` (8 ints, written by thread 0): my_pe, n_pes, rocshmem_ptr(dst, peer) != NULL,
// rocshmem_ptr(dst, me) == dst, first word of the peer's dst read through rocshmem_ptr, and
// 0xC0FFEE at [7] when the kernel ran to the end.
#define KDEV __attribute__((device))
#define KGLOBAL __attribute__((global))

typedef unsigned long size_t;

extern "C" {
KDEV int rocshmem_my_pe();
KDEV int rocshmem_n_pes();
KDEV void rocshmem_putmem(void *dest, const void *source, size_t nelems, int pe);
KDEV void rocshmem_getmem(void *dest, const void *source, size_t nelems, int pe);
KDEV void rocshmem_putmem_wg(void *dest, const void *source, size_t nelems, int pe);
KDEV void rocshmem_getmem_wg(void *dest, const void *source, size_t nelems, int pe);
KDEV void rocshmem_quiet();
KDEV void rocshmem_barrier_all();
KDEV void rocshmem_barrier_all_wg();
KDEV void rocshmem_int_p(int *dest, int value, int pe);
KDEV void *rocshmem_ptr(const void *dest, int pe);
}

static KDEV __attribute__((always_inline)) unsigned tid() { return __nvvm_read_ptx_sreg_tid_x(); }
static KDEV __attribute__((always_inline)) unsigned ntid() { return __nvvm_read_ptx_sreg_ntid_x(); }
static KDEV __attribute__((always_inline)) void block_sync() { __syncthreads(); }

static KDEV void finish(int *dst, int *flag, const int *stamp, int *info, int me, int n, int peer) {
  if (tid() == 0) {
    rocshmem_int_p(flag, *stamp, peer);
    rocshmem_quiet();
    rocshmem_barrier_all();  // the peer's flag and data have arrived here
    int *remote = (int *)rocshmem_ptr(dst, peer);
    info[0] = me;
    info[1] = n;
    info[2] = remote != nullptr;
    info[3] = rocshmem_ptr(dst, me) == (void *)dst;
    info[4] = remote ? *(volatile int *)remote : -1;
    info[7] = 0xC0FFEE;
  }
  block_sync();
}

// src, back: nelems ints of local device memory; dst (nelems ints), flag: symmetric; *stamp
// (local device memory) is what goes into the peer's flag. Arguments are read from memory so
// that a captured graph sees fresh values on every replay.
extern "C" KGLOBAL void module_exchange(const int *src, int *dst, int *back, int *flag, size_t nelems, const int *stamp,
                                        int *info) {
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes(), peer = (me + 1) % n;
  const size_t chunk = (nelems + ntid() - 1) / ntid();
  size_t lo = tid() * chunk, hi = lo + chunk;
  if (hi > nelems) hi = nelems;
  if (lo < hi) rocshmem_putmem(dst + lo, src + lo, (hi - lo) * sizeof(int), peer);
  rocshmem_quiet();
  block_sync();
  if (tid() == 0) rocshmem_barrier_all();
  block_sync();
  // The peer's dst now holds this PE's src.
  if (lo < hi) rocshmem_getmem(back + lo, dst + lo, (hi - lo) * sizeof(int), peer);
  block_sync();
  finish(dst, flag, stamp, info, me, n, peer);
}

extern "C" KGLOBAL void module_exchange_wg(const int *src, int *dst, int *back, int *flag, size_t nelems, const int *stamp,
                                           int *info) {
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes(), peer = (me + 1) % n;
  rocshmem_putmem_wg(dst, src, nelems * sizeof(int), peer);
  rocshmem_barrier_all_wg();
  rocshmem_getmem_wg(back, dst, nelems * sizeof(int), peer);
  block_sync();
  finish(dst, flag, stamp, info, me, n, peer);
}
