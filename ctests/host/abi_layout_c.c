/* ABI layout check, C side: what <rocshmem/rocshmem.h> says, against upstream's values (the
 * expected table below), against the C++ headers (abi_layout_cxx.cpp, compiled into the same
 * program) and against the library at run time. */
#include <rocshmem/rocshmem.h>

#include <stdio.h>
#include <string.h>

#include "abi_layout.h"

_Static_assert(sizeof(rocshmem_ctx_t) == 16, "rocshmem_ctx_t");
_Static_assert(sizeof(rocshmem_uniqueid_t) == 128, "rocshmem_uniqueid_t");
_Static_assert(sizeof(rocshmem_init_attr_t) == 144, "rocshmem_init_attr_t");
_Static_assert(offsetof(rocshmem_init_attr_t, mpi_comm) == 136, "mpi_comm offset");
_Static_assert(sizeof(rocshmem_qp_info) == 96, "QpInfo");

void abi_c_facts(long *o) {
  o[ABI_SIZEOF_CTX] = sizeof(rocshmem_ctx_t);
  o[ABI_SIZEOF_TEAM] = sizeof(rocshmem_team_t);
  o[ABI_SIZEOF_UID] = sizeof(rocshmem_uniqueid_t);
  o[ABI_SIZEOF_ATTR] = sizeof(rocshmem_init_attr_t);
  o[ABI_OFF_ATTR_RANK] = offsetof(rocshmem_init_attr_t, rank);
  o[ABI_OFF_ATTR_NRANKS] = offsetof(rocshmem_init_attr_t, nranks);
  o[ABI_OFF_ATTR_UID] = offsetof(rocshmem_init_attr_t, uid);
  o[ABI_OFF_ATTR_MPI_COMM] = offsetof(rocshmem_init_attr_t, mpi_comm);
  o[ABI_SIZEOF_QPINFO] = sizeof(rocshmem_qp_info);
  o[ABI_OFF_QP_SQ_DEPTH] = offsetof(rocshmem_qp_info, sq_depth);
  o[ABI_OFF_QP_QPN] = offsetof(rocshmem_qp_info, qpn);
  o[ABI_OFF_QP_VENDOR] = offsetof(rocshmem_qp_info, vendor);
  o[ABI_OFF_QP_UNION] = offsetof(rocshmem_qp_info, provider);
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
  o[ABI_QP_VENDOR_UNKNOWN] = ROCSHMEM_QP_VENDOR_UNKNOWN;
}

/* Upstream's values (rocshmem-api.md §1.3, §2; QpInfo from qp_introspect.hpp). -1: no fixed
 * expectation (checked only for C/C++ agreement). */
static const long expected[ABI_COUNT] = {
  [ABI_SIZEOF_CTX] = 16, [ABI_SIZEOF_TEAM] = 8, [ABI_SIZEOF_UID] = 128, [ABI_SIZEOF_ATTR] = 144,
  [ABI_OFF_ATTR_RANK] = 0, [ABI_OFF_ATTR_NRANKS] = 4, [ABI_OFF_ATTR_UID] = 8, [ABI_OFF_ATTR_MPI_COMM] = 136,
  [ABI_SIZEOF_QPINFO] = 96, [ABI_OFF_QP_SQ_DEPTH] = 32, [ABI_OFF_QP_QPN] = 48, [ABI_OFF_QP_VENDOR] = 52,
  [ABI_OFF_QP_UNION] = 56, [ABI_SIZEOF_TEAM_CONFIG] = 4,
  [ABI_SUCCESS] = 0, [ABI_ERROR] = 1,
  [ABI_SUM] = 0, [ABI_MAX] = 1, [ABI_MIN] = 2, [ABI_PROD] = 3, [ABI_AND] = 4, [ABI_OR] = 5, [ABI_XOR] = 6, [ABI_REPLACE] = 7,
  [ABI_SIGNAL_SET] = 0, [ABI_SIGNAL_ADD] = 1,
  [ABI_CMP_EQ] = 0, [ABI_CMP_NE] = 1, [ABI_CMP_GT] = 2, [ABI_CMP_GE] = 3, [ABI_CMP_LT] = 4, [ABI_CMP_LE] = 5,
  [ABI_THREAD_SINGLE] = 0, [ABI_THREAD_FUNNELED] = 1, [ABI_THREAD_WG_FUNNELED] = 2, [ABI_THREAD_SERIALIZED] = 3,
  [ABI_THREAD_MULTIPLE] = 4,
  [ABI_TEAM_DEFAULT_CONFIGS] = 0, [ABI_TEAM_NUM_CONTEXTS] = 1,
  [ABI_CTX_ZERO] = 0, [ABI_CTX_NOSTORE] = 1, [ABI_CTX_SERIALIZED] = 2, [ABI_CTX_WG_PRIVATE] = 4, [ABI_CTX_SHARED] = 8,
  [ABI_INIT_WITH_MPI_COMM] = 0, [ABI_INIT_WITH_UNIQUEID] = 1,
  [ABI_REDUCE_MIN_WRKDATA_SIZE] = 1024, [ABI_BARRIER_SYNC_SIZE] = 256, [ABI_REDUCE_SYNC_SIZE] = 256,
  [ABI_BCAST_SYNC_SIZE] = 256, [ABI_ALLTOALL_SYNC_SIZE] = 257, [ABI_FCOLLECT_SYNC_SIZE] = 257, [ABI_SYNC_VALUE] = 0,
  [ABI_MAJOR_VERSION] = 1, [ABI_MINOR_VERSION] = 4, [ABI_MAX_NAME_LEN] = 64, [ABI_UNIQUE_ID_BYTES] = 128,
  [ABI_VENDOR_MAJOR] = -1, [ABI_VENDOR_MINOR] = -1, [ABI_VENDOR_PATCH] = -1,
  [ABI_QP_VENDOR_UNKNOWN] = 0,
};

int main(void) {
  long c[ABI_COUNT], cxx[ABI_COUNT];
  memset(c, 0xff, sizeof c);
  memset(cxx, 0xff, sizeof cxx);
  abi_c_facts(c);
  abi_cxx_facts(cxx);
  int bad = 0;
  for (int i = 0; i < ABI_COUNT; i++) {
    if (c[i] != cxx[i]) {
      fprintf(stderr, "FAIL: fact %d: C header says %ld, C++ headers say %ld\n", i, c[i], cxx[i]);
      bad++;
    }
    if (expected[i] != -1 && c[i] != expected[i]) {
      fprintf(stderr, "FAIL: fact %d: the headers say %ld, upstream %ld\n", i, c[i], expected[i]);
      bad++;
    }
  }
  /* The library writes the attribute struct where the headers say the fields are. */
  rocshmem_uniqueid_t uid;
  for (int i = 0; i < 128; i++) uid.internal[i] = (unsigned char)(i * 7 + 1);
  unsigned char raw[144];
  memset(raw, 0xab, sizeof raw);
  if (rocshmem_set_attr_uniqueid_args(3, 9, &uid, (rocshmem_init_attr_t *)(void *)raw) != 0) {
    fprintf(stderr, "FAIL: rocshmem_set_attr_uniqueid_args\n");
    bad++;
  }
  int rank, nranks;
  void *comm;
  memcpy(&rank, raw + 0, 4);
  memcpy(&nranks, raw + 4, 4);
  memcpy(&comm, raw + 136, sizeof comm);
  if (rank != 3 || nranks != 9 || memcmp(raw + 8, uid.internal, 128) != 0 || comm != NULL) {
    fprintf(stderr, "FAIL: the library's rocshmem_init_attr_t layout: rank %d nranks %d comm %p\n", rank, nranks, comm);
    bad++;
  }
  /* And the vendor version the headers carry is the library's. */
  int ma = -1, mi = -1, pa = -1;
  rocshmem_vendor_get_version_info(&ma, &mi, &pa);
  if (ma != c[ABI_VENDOR_MAJOR] || mi != c[ABI_VENDOR_MINOR] || pa != c[ABI_VENDOR_PATCH]) {
    fprintf(stderr, "FAIL: library version %d.%d.%d, headers %ld.%ld.%ld\n", ma, mi, pa, c[ABI_VENDOR_MAJOR],
            c[ABI_VENDOR_MINOR], c[ABI_VENDOR_PATCH]);
    bad++;
  }
  if (bad == 0) printf("abi_layout: %d facts agree between the C header, the C++ headers, upstream and the library\n", ABI_COUNT);
  return bad != 0;
}
