// ABI layout check, C++ side: what <rocshmem/rocshmem.hpp> and <rocshmem/qp_introspect.hpp>
// say (compiled as its own object; abi_layout_c.c compares).
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/qp_introspect.hpp>

#include <cstddef>

#include "abi_layout.h"

using namespace rocshmem;

static_assert(sizeof(rocshmem_ctx_t) == 16, "rocshmem_ctx_t");
static_assert(sizeof(rocshmem_uniqueid_t) == 128, "rocshmem_uniqueid_t");
static_assert(sizeof(rocshmem_init_attr_t) == 144, "rocshmem_init_attr_t");
static_assert(offsetof(rocshmem_init_attr_t, mpi_comm) == 136, "mpi_comm offset");
static_assert(sizeof(QpInfo) == 96, "QpInfo");
static_assert(static_cast<int>(BackendType::GDA_BACKEND) == 0 && static_cast<int>(BackendType::RO_BACKEND) == 1 &&
                  static_cast<int>(BackendType::IPC_BACKEND) == 2,
              "BackendType");
static_assert(static_cast<uint32_t>(QpInfoVendor::IONIC) == 1 && static_cast<uint32_t>(QpInfoVendor::BNXT) == 2 &&
                  static_cast<uint32_t>(QpInfoVendor::MLX5) == 3,
              "QpInfoVendor");
static_assert(sizeof(QpInfoVendor) == 4, "QpInfoVendor is uint32_t");

extern "C" void abi_cxx_facts(long *o) {
  o[ABI_SIZEOF_CTX] = sizeof(rocshmem_ctx_t);
  o[ABI_SIZEOF_TEAM] = sizeof(rocshmem_team_t);
  o[ABI_SIZEOF_UID] = sizeof(rocshmem_uniqueid_t);
  o[ABI_SIZEOF_ATTR] = sizeof(rocshmem_init_attr_t);
  o[ABI_OFF_ATTR_RANK] = offsetof(rocshmem_init_attr_t, rank);
  o[ABI_OFF_ATTR_NRANKS] = offsetof(rocshmem_init_attr_t, nranks);
  o[ABI_OFF_ATTR_UID] = offsetof(rocshmem_init_attr_t, uid);
  o[ABI_OFF_ATTR_MPI_COMM] = offsetof(rocshmem_init_attr_t, mpi_comm);
  o[ABI_SIZEOF_QPINFO] = sizeof(QpInfo);
  o[ABI_OFF_QP_SQ_DEPTH] = offsetof(QpInfo, sq_depth);
  o[ABI_OFF_QP_QPN] = offsetof(QpInfo, qpn);
  o[ABI_OFF_QP_VENDOR] = offsetof(QpInfo, vendor);
  o[ABI_OFF_QP_UNION] = offsetof(QpInfo, mlx5);
  o[ABI_SIZEOF_TEAM_CONFIG] = sizeof(rocshmem_team_config_t);
  o[ABI_SUCCESS] = ROCSHMEM_SUCCESS; o[ABI_ERROR] = ROCSHMEM_ERROR;
  o[ABI_SUM] = ROCSHMEM_SUM; o[ABI_MAX] = ROCSHMEM_MAX; o[ABI_MIN] = ROCSHMEM_MIN; o[ABI_PROD] = ROCSHMEM_PROD;
  o[ABI_AND] = ROCSHMEM_AND; o[ABI_OR] = ROCSHMEM_OR; o[ABI_XOR] = ROCSHMEM_XOR; o[ABI_REPLACE] = ROCSHMEM_REPLACE;
  o[ABI_SIGNAL_SET] = ROCSHMEM_SIGNAL_SET; o[ABI_SIGNAL_ADD] = ROCSHMEM_SIGNAL_ADD;
  o[ABI_CMP_EQ] = ROCSHMEM_CMP_EQ; o[ABI_CMP_NE] = ROCSHMEM_CMP_NE; o[ABI_CMP_GT] = ROCSHMEM_CMP_GT;
  o[ABI_CMP_GE] = ROCSHMEM_CMP_GE; o[ABI_CMP_LT] = ROCSHMEM_CMP_LT; o[ABI_CMP_LE] = ROCSHMEM_CMP_LE;
  o[ABI_THREAD_SINGLE] = ROCSHMEM_THREAD_SINGLE; o[ABI_THREAD_FUNNELED] = ROCSHMEM_THREAD_FUNNELED;
  o[ABI_THREAD_WG_FUNNELED] = ROCSHMEM_THREAD_WG_FUNNELED; o[ABI_THREAD_SERIALIZED] = ROCSHMEM_THREAD_SERIALIZED;
  o[ABI_THREAD_MULTIPLE] = ROCSHMEM_THREAD_MULTIPLE;
  o[ABI_TEAM_DEFAULT_CONFIGS] = ROCSHMEM_TEAM_DEFAULT_CONFIGS; o[ABI_TEAM_NUM_CONTEXTS] = ROCSHMEM_TEAM_NUM_CONTEXTS;
  o[ABI_CTX_ZERO] = ROCSHMEM_CTX_ZERO; o[ABI_CTX_NOSTORE] = ROCSHMEM_CTX_NOSTORE; o[ABI_CTX_SERIALIZED] = ROCSHMEM_CTX_SERIALIZED;
  o[ABI_CTX_WG_PRIVATE] = ROCSHMEM_CTX_WG_PRIVATE; o[ABI_CTX_SHARED] = ROCSHMEM_CTX_SHARED;
  o[ABI_INIT_WITH_MPI_COMM] = ROCSHMEM_INIT_WITH_MPI_COMM; o[ABI_INIT_WITH_UNIQUEID] = ROCSHMEM_INIT_WITH_UNIQUEID;
  o[ABI_REDUCE_MIN_WRKDATA_SIZE] = ROCSHMEM_REDUCE_MIN_WRKDATA_SIZE; o[ABI_BARRIER_SYNC_SIZE] = ROCSHMEM_BARRIER_SYNC_SIZE;
  o[ABI_REDUCE_SYNC_SIZE] = ROCSHMEM_REDUCE_SYNC_SIZE; o[ABI_BCAST_SYNC_SIZE] = ROCSHMEM_BCAST_SYNC_SIZE;
  o[ABI_ALLTOALL_SYNC_SIZE] = ROCSHMEM_ALLTOALL_SYNC_SIZE; o[ABI_FCOLLECT_SYNC_SIZE] = ROCSHMEM_FCOLLECT_SYNC_SIZE;
  o[ABI_SYNC_VALUE] = ROCSHMEM_SYNC_VALUE;
  o[ABI_MAJOR_VERSION] = ROCSHMEM_MAJOR_VERSION; o[ABI_MINOR_VERSION] = ROCSHMEM_MINOR_VERSION;
  o[ABI_MAX_NAME_LEN] = ROCSHMEM_MAX_NAME_LEN; o[ABI_UNIQUE_ID_BYTES] = ROCSHMEM_UNIQUE_ID_BYTES;
  o[ABI_VENDOR_MAJOR] = ROCSHMEM_VENDOR_MAJOR_VERSION; o[ABI_VENDOR_MINOR] = ROCSHMEM_VENDOR_MINOR_VERSION;
  o[ABI_VENDOR_PATCH] = ROCSHMEM_VENDOR_PATCH_VERSION;
  o[ABI_QP_VENDOR_UNKNOWN] = static_cast<long>(QpInfoVendor::UNKNOWN);
}
