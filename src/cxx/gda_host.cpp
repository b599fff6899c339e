// The host side of the GDA transport (src/transport/gda/host.rs) posts through the same code as
// device threads: the posting functions of device/src/gda/qp.hpp, compiled here for the CPU
// and called from Rust through these extern "C" entry points (internal, not API). Each returns
// a status: 0 or ROCSHMEM_GDA_ERR_* (gda_abi.h), and completes what it posted before returning.
#include "../../device/src/gda/qp.hpp"

namespace gda = rocshmem::dev::gda;

extern "C" {

/** Puts `len` bytes from local memory `src` registered under `lkey` (the heap's: ~0) to
 *  symmetric `dest` on the queue pair's peer, and waits for the NIC to complete it (the source
 *  may be reused on return). */
uint32_t rocshmemi_gda_host_put(rocshmem_gda_qp *qp, void *dest, const void *src, size_t len, uint32_t lkey) {
  uint64_t end = 0;
  uint32_t s = gda::put_nbi(qp, dest, src, len, &end, lkey);
  if (s == 0 && end != 0) s = gda::wait_done(qp, end);
  return s;
}

/** Gets `len` bytes of symmetric `src` on the peer into local memory `dest` registered under
 *  `lkey`. */
uint32_t rocshmemi_gda_host_get(rocshmem_gda_qp *qp, void *dest, const void *src, size_t len, uint32_t lkey) {
  uint64_t end = 0;
  uint32_t s = gda::get_nbi(qp, dest, src, len, &end, lkey);
  if (s == 0 && end != 0) s = gda::wait_done(qp, end);
  return s;
}

/** Atomic `op` (qp.hpp's AmoOp order) on the `size`-byte word at symmetric `dest`; the old value
 *  goes through registered `result` into `*old` when `result` is given. */
uint32_t rocshmemi_gda_host_amo(rocshmem_gda_qp *qp, uint8_t op, void *dest, uint32_t size, uint64_t value,
                                uint64_t cond, void *result, uint32_t lkey, uint64_t *old) {
  if (result != nullptr)
    return gda::amo_fetch(qp, static_cast<gda::AmoOp>(op), dest, size, value, cond, result, old, lkey);
  uint64_t end = 0;
  uint32_t s = gda::amo_nbi(qp, static_cast<gda::AmoOp>(op), dest, size, value, cond, nullptr, &end);
  if (s == 0 && end != 0) s = gda::wait_done(qp, end);
  *old = 0;
  return s;
}

/** Waits until everything published on the queue pair is complete. */
uint32_t rocshmemi_gda_host_quiet(rocshmem_gda_qp *qp) { return gda::quiet(qp); }

}  // extern "C"
