// The GDA posting code compiled for a GPU (device pass only, no GPU runtime headers): CUDA
// with `clang++ -x cuda --cuda-gpu-arch=sm_90 -nocudainc` to PTX, and HIP with `clang++ -x hip
// --offload-arch=gfx90a -nogpuinc -nogpulib` to AMDGPU assembly (ctests/gda/CMakeLists.txt).
// Each kernel is one operation as a thread posts it; ctests/gda/isa_count.sh counts their
// instructions (docs/gda.md, "Instruction counts").
#include "../../device/src/gda/qp.hpp"

namespace g = rocshmem::dev::gda;

#define GDA_KERNEL extern "C" __attribute__((global)) void

/** rocshmem_p of 8 bytes: an inline RDMA write, not waited for. */
GDA_KERNEL gda_k_put8_nbi(rocshmem_gda_qp *qp, uint64_t *dest, uint64_t value, uint32_t *status) {
  uint64_t end;
  *status = g::put_nbi(qp, dest, &value, 8, &end);
}

/** putmem_nbi of any size from the heap. */
GDA_KERNEL gda_k_put_nbi(rocshmem_gda_qp *qp, void *dest, const void *src, size_t n, uint32_t *status) {
  uint64_t end;
  *status = g::put_nbi(qp, dest, src, n, &end);
}

/** putmem (blocking): post, then wait for the completion. */
GDA_KERNEL gda_k_put(rocshmem_gda_qp *qp, void *dest, const void *src, size_t n, uint32_t *status) {
  uint64_t end;
  uint32_t s = g::put_nbi(qp, dest, src, n, &end);
  if (s == 0) s = g::wait_done(qp, end);
  *status = s;
}

GDA_KERNEL gda_k_get(rocshmem_gda_qp *qp, void *dest, const void *src, size_t n, uint32_t *status) {
  uint64_t end;
  uint32_t s = g::get_nbi(qp, dest, src, n, &end);
  if (s == 0) s = g::wait_done(qp, end);
  *status = s;
}

GDA_KERNEL gda_k_fetch_add64(rocshmem_gda_qp *qp, uint64_t *dest, uint64_t v, uint64_t *result, uint64_t *old,
                             uint32_t *status) {
  *status = g::amo_fetch(qp, g::AmoOp::fetch_add, dest, 8, v, 0, result, old);
}

GDA_KERNEL gda_k_cswap32(rocshmem_gda_qp *qp, uint32_t *dest, uint32_t v, uint32_t cond, uint64_t *result,
                         uint64_t *old, uint32_t *status) {
  *status = g::amo_fetch(qp, g::AmoOp::cswap, dest, 4, v, cond, result, old);
}

GDA_KERNEL gda_k_set64_nbi(rocshmem_gda_qp *qp, uint64_t *dest, uint64_t v, uint32_t *status) {
  uint64_t end;
  *status = g::amo_nbi(qp, g::AmoOp::set, dest, 8, v, 0, nullptr, &end);
}

GDA_KERNEL gda_k_put_signal_nbi(rocshmem_gda_qp *qp, void *dest, const void *src, size_t n, uint64_t *sig,
                                uint64_t value, uint32_t *status) {
  uint64_t end;
  *status = g::put_signal_nbi(qp, dest, src, n, sig, value, g::SigOp::add, &end);
}

GDA_KERNEL gda_k_quiet(rocshmem_gda_qp *qp, uint32_t *status) { *status = g::quiet(qp); }
