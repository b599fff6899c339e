/**
 * @file kernels.hpp
 * The helper kernels of the stream-ordered host API (`rocshmem_*_on_stream`): one work-group
 * each, run on the caller's stream. Written once, over the device library's templates, and
 * used three ways:
 *  - host platform: host_launch.cpp runs them on the host launcher's CPU threads, from the
 *    core's ordered host queues (src/gpu/host_streams.rs);
 *  - NVIDIA: module_core.cu / module_reduce.cu compile them to PTX at build time (build.rs); the
 *    core loads that PTX and launches them with cuLaunchKernel on the caller's stream;
 *  - AMD: the same two files compile to code objects for every arch of the device build
 *    (device/amd_build.rs); the core loads them with hipModuleLoadData and launches them with
 *    hipModuleLaunchKernel on the caller's stream;
 *  - GPU builds of the device library: device/gen/api_stream.cpp defines upstream's public
 *    `rocshmem_*_kernel` names over the same bodies.
 * Every internal kernel takes one rocshmem_stream_args (stream_args.h) by value.
 */
#ifndef ROCSHMEM_DEVICE_STREAM_KERNELS_HPP
#define ROCSHMEM_DEVICE_STREAM_KERNELS_HPP

#include "../src/device.hpp"
#include "stream_args.h"

/* The 14 kernels of the untyped calls (amo: the host atomics on a heap of GPU memory): X(name). The 163 reductions are listed in
 * gen/reduce_list.inc (generated from codegen/table.rs): X(C++ type, type name, op name, ROCSHMEM_OP). */
#define ROCSHMEM_STREAM_CORE_KERNELS(X) \
  X(putmem)                             \
  X(getmem)                             \
  X(putmem_signal)                      \
  X(signal_wait_until)                  \
  X(signal_add)                         \
  X(signal_set)                         \
  X(quiet)                              \
  X(barrier_all)                        \
  X(barrier)                            \
  X(sync_all)                           \
  X(team_sync)                          \
  X(alltoallmem)                        \
  X(broadcastmem)                       \
  X(amo)

namespace rocshmem {
namespace dev {
namespace stream {

using Args = rocshmem_stream_args;

ROCSHMEM_DEV_INLINE rocshmem_ctx_t ctx_of(const Args &a) { return rocshmem_ctx_t{a.ctx_opaque, a.ctx_team}; }

ROCSHMEM_DEV_INLINE bool leader() { return platform::thread_id() == 0; }

// Data movement ends with a system-scope fence, so the next operation on the stream (a
// signal, a barrier kernel, a copy) finds the data delivered.
ROCSHMEM_DEV_INLINE void k_putmem(const Args &a) {
  putmem<Grp::wg>(ctx_of(a), a.dest, a.source, size_t(a.count), a.pe);
  if (leader()) quiet(ctx_of(a));
}
ROCSHMEM_DEV_INLINE void k_getmem(const Args &a) {
  getmem<Grp::wg>(ctx_of(a), a.dest, a.source, size_t(a.count), a.pe);
  if (leader()) quiet(ctx_of(a));
}
ROCSHMEM_DEV_INLINE void k_putmem_signal(const Args &a) {
  putmem_signal<Grp::wg>(ctx_of(a), a.dest, a.source, size_t(a.count), a.sig_addr, a.value, a.op, a.pe);
}
ROCSHMEM_DEV_INLINE void k_signal_wait_until(const Args &a) {
  if (leader()) (void)signal_wait_until(a.sig_addr, a.op, a.value);
  platform::wg_barrier();
}
ROCSHMEM_DEV_INLINE void k_signal_add(const Args &a) {
  if (leader()) signal_op(ctx_of(a), a.sig_addr, a.value, ROCSHMEM_SIGNAL_ADD, a.pe);
}
ROCSHMEM_DEV_INLINE void k_signal_set(const Args &a) {
  if (leader()) signal_op(ctx_of(a), a.sig_addr, a.value, ROCSHMEM_SIGNAL_SET, a.pe);
}
ROCSHMEM_DEV_INLINE void k_quiet(const Args &a) {
  if (leader()) quiet(ctx_of(a));
}
ROCSHMEM_DEV_INLINE void k_barrier_all(const Args &a) { barrier<Grp::wg>(ctx_of(a), world_team(ctx_of(a))); }
ROCSHMEM_DEV_INLINE void k_barrier(const Args &a) { barrier<Grp::wg>(ctx_of(a), a.team); }
ROCSHMEM_DEV_INLINE void k_sync_all(const Args &a) { dev::sync<Grp::wg>(ctx_of(a), world_team(ctx_of(a))); }
ROCSHMEM_DEV_INLINE void k_team_sync(const Args &a) { dev::sync<Grp::wg>(ctx_of(a), a.team); }
ROCSHMEM_DEV_INLINE void k_alltoallmem(const Args &a) {
  (void)alltoallmem<Grp::wg>(ctx_of(a), a.team, a.dest, a.source, size_t(a.count));
}
ROCSHMEM_DEV_INLINE void k_broadcastmem(const Args &a) {
  (void)broadcastmem<Grp::wg>(ctx_of(a), a.team, a.dest, a.source, size_t(a.count), a.pe);
}

/** One atomic of word type W on PE a.pe's word at symmetric a.dest: a.op is the AmoOp. */
template <class W>
ROCSHMEM_DEV_INLINE W amo_word(const Args &a) {
  W *dest = static_cast<W *>(a.dest);
  const W v = W(a.value), c = W(a.cond);
  switch (AmoOp(a.op)) {
#define ROCSHMEM_STREAM_AMO_CASE(op) \
  case AmoOp::op:                    \
    return amo<W, AmoOp::op>(ctx_of(a), dest, v, c, a.pe);
    ROCSHMEM_STREAM_AMO_CASE(fetch)
    ROCSHMEM_STREAM_AMO_CASE(set)
    ROCSHMEM_STREAM_AMO_CASE(swap)
    ROCSHMEM_STREAM_AMO_CASE(compare_swap)
    ROCSHMEM_STREAM_AMO_CASE(fetch_inc)
    ROCSHMEM_STREAM_AMO_CASE(inc)
    ROCSHMEM_STREAM_AMO_CASE(fetch_add)
    ROCSHMEM_STREAM_AMO_CASE(add)
    ROCSHMEM_STREAM_AMO_CASE(fetch_and)
    ROCSHMEM_STREAM_AMO_CASE(and_)
    ROCSHMEM_STREAM_AMO_CASE(fetch_or)
    ROCSHMEM_STREAM_AMO_CASE(or_)
    ROCSHMEM_STREAM_AMO_CASE(fetch_xor)
    ROCSHMEM_STREAM_AMO_CASE(xor_)
#undef ROCSHMEM_STREAM_AMO_CASE
  }
  return W(0);
}

/** A host atomic on a heap of GPU memory (src/transport/gpu_heap.rs, `GpuHeap::amo`): one system-scope
 *  atomic of a.count (4 or 8) bytes on PE a.pe's word at symmetric a.dest (the host AMO types
 *  are words of these two sizes: src/amo.rs); the old (or fetched) value goes to *a.sig_addr. */
ROCSHMEM_DEV_INLINE void k_amo(const Args &a) {
  if (!leader()) return;
  const uint64_t old = a.count == 4 ? uint64_t(amo_word<uint32_t>(a)) : amo_word<uint64_t>(a);
  *a.sig_addr = old;
  quiet(ctx_of(a));
}

/** ROCSHMEM_OP and dev::Op have the same values (checked below). Also the body of upstream's
 *  rocshmem_reduce_on_stream_kernel, which rocshmem_HOST.hpp defines over
 *  rocshmemi_reduce_on_stream (device/gen/api_stream.cpp). */
template <class T, ROCSHMEM_OP OP>
ROCSHMEM_DEV_INLINE void k_reduce(const Args &a) {
  (void)reduce<T, static_cast<Op>(OP), Grp::wg>(ctx_of(a), a.team, static_cast<T *>(a.dest),
                                                static_cast<const T *>(a.source), int(a.count));
}

static_assert(int(Op::sum) == ROCSHMEM_SUM && int(Op::max) == ROCSHMEM_MAX && int(Op::min) == ROCSHMEM_MIN &&
                  int(Op::prod) == ROCSHMEM_PROD && int(Op::and_) == ROCSHMEM_AND && int(Op::or_) == ROCSHMEM_OR &&
                  int(Op::xor_) == ROCSHMEM_XOR,
              "dev::Op follows ROCSHMEM_OP");

}  // namespace stream
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_STREAM_KERNELS_HPP
