/**
 * @file stream_args.h
 * The one argument of every stream helper kernel (device/stream/kernels.hpp): what a
 * `rocshmem_*_on_stream` call passes to the kernel it enqueues. Plain C, 80 bytes; the Rust
 * core has the same struct (src/gpu/stream_args.rs, `StreamArgs`), and both check the layout.
 */
#ifndef ROCSHMEM_STREAM_ARGS_H
#define ROCSHMEM_STREAM_ARGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rocshmem_stream_args {
  void *ctx_opaque;       /* the context (rocshmem_ctx_t, NULL: the default context) */
  void *ctx_team;         /*   and its team_opaque */
  uint64_t *team;         /* rocshmem_team_t of collectives */
  void *dest;             /* destination (symmetric, or local for getmem) */
  const void *source;     /* source */
  uint64_t count;         /* bytes (putmem, getmem, ..., broadcastmem), elements (reductions),
                             the width of amo (4 or 8) */
  uint64_t *sig_addr;     /* signal word, or the word amo writes the old value to */
  uint64_t value;         /* signal value, the comparison value of signal_wait_until, amo's operand */
  int32_t pe;             /* target PE, or the root of broadcastmem */
  int32_t op;             /* sig_op (ROCSHMEM_SIGNAL_SET / _ADD), cmp of signal_wait_until, amo's AmoOp */
  uint64_t cond;          /* the comparison value of amo's compare-and-swap */
};

#ifdef __cplusplus
}
static_assert(sizeof(rocshmem_stream_args) == 80, "rocshmem_stream_args is 80 bytes (src/gpu/stream_args.rs)");
static_assert(__builtin_offsetof(rocshmem_stream_args, pe) == 64 && __builtin_offsetof(rocshmem_stream_args, cond) == 72,
              "rocshmem_stream_args layout");
#endif

#endif /* ROCSHMEM_STREAM_ARGS_H */
