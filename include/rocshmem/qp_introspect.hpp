/**
 * @file qp_introspect.hpp
 * GDA queue-pair introspection for external work-queue builders (upstream layout).
 * Only the GDA backend has queue pairs; without it the provider is UNKNOWN and queries fail.
 */
#ifndef ROCSHMEM_QP_INTROSPECT_HPP
#define ROCSHMEM_QP_INTROSPECT_HPP

#include <stdint.h>

namespace rocshmem {

/** The NIC provider of a queue pair. */
enum class QpInfoVendor : uint32_t {
  UNKNOWN = 0,
  IONIC = 1,
  BNXT = 2,
  MLX5 = 3,
};

/** Device-visible resources of one peer's RC queue pair. */
struct QpInfo {
  uint64_t sq_buf;
  uint64_t sq_prod;
  uint64_t cq_buf;
  uint64_t base_heap;
  uint32_t sq_depth;
  uint32_t cq_depth;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t qpn;
  QpInfoVendor vendor;
  union {
    struct {
      uint64_t dbrec;
      uint64_t bf;
    } mlx5;
    struct {
      uint64_t db;
      uint64_t dbval;
      uint64_t sq_mask;
      uint64_t cq_mask;
      uint8_t udma_idx;
    } ionic;
    struct {
      uint64_t dbr;
    } bnxt;
  };
};

static_assert(sizeof(QpInfo) == 96, "QpInfo layout");

/** The active GDA provider, or UNKNOWN. Safe before init. */
QpInfoVendor rocshmem_qp_introspect_provider();
/** Whether rocshmem_query_qp_info can succeed in this process. */
bool rocshmem_qp_introspect_available();
/** Describes the queue pair to `peer` in context `ctx_id` (> 0); false if there is none. */
bool rocshmem_query_qp_info(int peer, int ctx_id, QpInfo *out);

}  // namespace rocshmem

#endif  // ROCSHMEM_QP_INTROSPECT_HPP
