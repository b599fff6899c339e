/**
 * @file wqe.hpp
 * The vendor-neutral side of the GDA posting code: a WQE as built in registers, the atomic
 * operations in NIC terms, a completion as decoded from a CQE, byte order. Each NIC family has
 * a writer with the interface below (mlx5.hpp implements it; bnxt_re and ionic are described in
 * docs/gda.md, "Other NICs"); qp.hpp posts through a writer and never touches a vendor layout.
 *
 * Writer interface (static members of a struct, all usable on every platform):
 *   kInlineMax                      largest inline put the writer can build in one WQE
 *   rdma(w, op, idx, qpn, signal, raddr, rkey, laddr, lkey, len)    RDMA write / read
 *   rdma_inline(w, idx, qpn, signal, raddr, rkey, src, len)         RDMA write, data in the WQE
 *   atomic(w, AmoForm, idx, qpn, signal, raddr, rkey, laddr, lkey, operands)
 *   nop(w, idx, qpn, signal)
 *   dbrec(prod), doorbell(prod, qpn)   the doorbell record and register values for producer
 *                                      index `prod` (in WQEBBs)
 *   cq_dbrec(ci)                       the CQ doorbell record for consumer index ci
 *   kCqeBytes, decode(tail_word), syndrome(word)   completion decoding (see Completion)
 * Every builder fills `w` (all its blocks, unused bytes zero) and sets w.nbb.
 *
 * Header-only, compiled for the host platform, AMD and NVIDIA alike; only platform.hpp is used.
 */
#ifndef ROCSHMEM_DEVICE_GDA_WQE_HPP
#define ROCSHMEM_DEVICE_GDA_WQE_HPP

#include "../../platform/platform.hpp"

namespace rocshmem {
namespace dev {
namespace gda {

/** Bytes of a WQE building block (mlx5 WQEBB; the unit of the send-queue ring). */
constexpr uint32_t kBlock = 64;
/** Most blocks one WQE built here spans. */
constexpr uint32_t kMaxBlocks = 2;

/** A WQE in registers: 16 little-endian 32-bit words per block, as they go to memory. */
struct Wqe {
  uint32_t dw[kMaxBlocks * kBlock / 4];
  uint32_t nbb;
};

/** RDMA operations. */
enum class Rdma : uint8_t { write, read };

/**
 * Atomic forms a NIC executes. std_*: the IB atomics on 8 bytes (upstream rocSHMEM uses only
 * these). masked_*: mlx5's extended atomics on 4 or 8 bytes (NVSHMEM's IBGDA uses them for
 * 32-bit types and for swap, and, or, xor in one operation):
 *   masked_fa: old + add, with carries stopped at the bits set in `boundary` (all ones: xor);
 *   masked_cs: if ((old ^ compare) & compare_mask) == 0: (old & ~swap_mask) | (swap & swap_mask).
 */
enum class AmoForm : uint8_t { std_fa, std_cs, masked_fa, masked_cs };

/** The operands of one atomic, host order. */
struct AmoArgs {
  AmoForm form;
  uint32_t size;          // 4 or 8 (std forms: 8)
  uint64_t swap_add;      // add value, or swap data
  uint64_t compare;       // compare data (cs forms)
  uint64_t swap_mask;     // masked_cs: swap mask; masked_fa: field boundary
  uint64_t compare_mask;  // masked_cs
};

/** A decoded completion-queue entry. */
struct Completion {
  uint8_t opcode;        // vendor opcode (mlx5: 0 requester, 13 requester error, 15 invalid)
  uint8_t owner;         // ownership bit
  uint16_t wqe_counter;  // index (low 16 bits) of the WQE this entry completes
};

// ---- byte order (every platform here is little-endian; NIC structures are big-endian) -----
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GDA posting code assumes a little-endian processor"
#endif

ROCSHMEM_DEV_INLINE constexpr uint16_t bswap16(uint16_t x) { return uint16_t((x >> 8) | (x << 8)); }
ROCSHMEM_DEV_INLINE constexpr uint32_t bswap32(uint32_t x) {
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}
ROCSHMEM_DEV_INLINE constexpr uint64_t bswap64(uint64_t x) {
  return (uint64_t(bswap32(uint32_t(x))) << 32) | bswap32(uint32_t(x >> 32));
}

/** Stores a big-endian 64-bit value into dw[i], dw[i + 1] (bytes i*4 .. i*4 + 7). */
ROCSHMEM_DEV_INLINE void put_be64(Wqe &w, uint32_t i, uint64_t v) {
  w.dw[i] = bswap32(uint32_t(v >> 32));
  w.dw[i + 1] = bswap32(uint32_t(v));
}

ROCSHMEM_DEV_INLINE void clear(Wqe &w, uint32_t nbb) {
  for (uint32_t i = 0; i < nbb * kBlock / 4; ++i) w.dw[i] = 0;
  w.nbb = nbb;
}

/** Copies `len` (<= the space left) bytes of `src` into the WQE at byte offset `off`. */
ROCSHMEM_DEV_INLINE void put_bytes(Wqe &w, uint32_t off, const void *src, uint32_t len) {
  const uint8_t *s = static_cast<const uint8_t *>(src);
  for (uint32_t i = 0; i < len; ++i) {
    const uint32_t b = off + i;
    w.dw[b / 4] |= uint32_t(s[i]) << (8 * (b % 4));
  }
}

}  // namespace gda
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_GDA_WQE_HPP
