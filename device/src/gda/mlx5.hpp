/**
 * @file mlx5.hpp
 * The mlx5 (ConnectX) writer: send WQEs, doorbell values and CQE decoding, in the layouts of
 * rdma-core's <infiniband/mlx5dv.h> (struct mlx5_wqe_ctrl_seg, mlx5_wqe_raddr_seg,
 * mlx5_wqe_data_seg, mlx5_wqe_inl_data_seg, mlx5_wqe_atomic_seg, mlx5_cqe64, mlx5_err_cqe).
 * ctests/gda/layout_test.cpp compares every builder, byte for byte, with rdma-core's own
 * helpers; the values below are rdma-core's, restated so that device code needs no verbs
 * headers.
 *
 * WQE shapes (ds = size in 16-byte units; one WQEBB is 64 bytes):
 *   RDMA write / read       ctrl | raddr | data                      ds 3, 1 WQEBB
 *   RDMA write, inline      ctrl | raddr | inline (4 + len bytes)    ds 3 (<= 12 B) or 4 (<= 28 B)
 *   atomic (std, masked_fa, 4-byte masked_cs)
 *                           ctrl | raddr | atomic | data             ds 4, 1 WQEBB
 *   8-byte masked_cs        ctrl | raddr | atomic | atomic masks | data   ds 5, 2 WQEBBs
 *   NOP                     ctrl                                     ds 1
 * Extended (masked) atomics carry opmod 0x08 (4 bytes) or 0x09 (8 bytes) in the control
 * segment, as NVSHMEM's IBGDA writes them; a 4-byte fetched value arrives big-endian, an 8-byte
 * one in host order (NVSHMEM and upstream rocSHMEM read them so).
 */
#ifndef ROCSHMEM_DEVICE_GDA_MLX5_HPP
#define ROCSHMEM_DEVICE_GDA_MLX5_HPP

#include "wqe.hpp"

namespace rocshmem {
namespace dev {
namespace gda {
namespace mlx5 {

// Opcodes and flags (mlx5dv.h).
constexpr uint8_t kOpNop = 0x00;
constexpr uint8_t kOpRdmaWrite = 0x08;
constexpr uint8_t kOpRdmaRead = 0x10;
constexpr uint8_t kOpAtomicCs = 0x11;
constexpr uint8_t kOpAtomicFa = 0x12;
constexpr uint8_t kOpAtomicMaskedCs = 0x14;
constexpr uint8_t kOpAtomicMaskedFa = 0x15;
constexpr uint8_t kCtrlCqUpdate = 2 << 2;  // MLX5_WQE_CTRL_CQ_UPDATE
constexpr uint8_t kCtrlFence = 4 << 5;     // MLX5_WQE_CTRL_FENCE
constexpr uint32_t kInlineSeg = 0x80000000u;
constexpr uint8_t kOpmodExt4 = 0x08;  // extended atomic, 4 bytes
constexpr uint8_t kOpmodExt8 = 0x09;  // extended atomic, 8 bytes

// CQE opcodes (op_own >> 4) and syndromes.
constexpr uint8_t kCqeReq = 0;
constexpr uint8_t kCqeReqErr = 13;
constexpr uint8_t kCqeRespErr = 14;
constexpr uint8_t kCqeInvalid = 15;
constexpr uint8_t kSyndromeLocalLength = 0x01;
constexpr uint8_t kSyndromeLocalQpOp = 0x02;
constexpr uint8_t kSyndromeLocalProt = 0x04;
constexpr uint8_t kSyndromeWrFlush = 0x05;
constexpr uint8_t kSyndromeRemoteInvalReq = 0x12;
constexpr uint8_t kSyndromeRemoteAccess = 0x13;
constexpr uint8_t kSyndromeRemoteOp = 0x14;

struct Writer {
  /** Inline data fits the first WQEBB after the inline header (upstream's mlx5 InlineMax). */
  static constexpr uint32_t kInlineMax = 28;
  /** Bytes of one CQE; the last 4 (wqe_counter, signature, op_own) are read first. */
  static constexpr uint32_t kCqeBytes = 64;
  static constexpr uint32_t kCqeTailOffset = 60;
  /** Offset of the 4 bytes ending in the error syndrome (mlx5_err_cqe::syndrome is byte 55). */
  static constexpr uint32_t kCqeSyndromeOffset = 52;

  /** Control segment (mlx5dv_set_ctrl_seg with signature 0 and imm 0). */
  ROCSHMEM_DEV_INLINE static void ctrl(Wqe &w, uint8_t opcode, uint8_t opmod, uint16_t idx, uint32_t qpn,
                                       uint8_t ds, uint8_t fm_ce_se) {
    w.dw[0] = bswap32((uint32_t(opmod) << 24) | (uint32_t(idx) << 8) | opcode);
    w.dw[1] = bswap32((qpn << 8) | ds);
    w.dw[2] = uint32_t(fm_ce_se) << 24;  // signature, dci_stream_channel_id (2), fm_ce_se
    w.dw[3] = 0;                         // imm
  }

  /** Remote address segment at word 4. */
  ROCSHMEM_DEV_INLINE static void raddr(Wqe &w, uint64_t addr, uint32_t rkey) {
    put_be64(w, 4, addr);
    w.dw[6] = bswap32(rkey);
    w.dw[7] = 0;
  }

  /** Data segment at word i (mlx5dv_set_data_seg). */
  ROCSHMEM_DEV_INLINE static void data(Wqe &w, uint32_t i, uint64_t addr, uint32_t lkey, uint32_t len) {
    w.dw[i] = bswap32(len);
    w.dw[i + 1] = bswap32(lkey);
    put_be64(w, i + 2, addr);
  }

  ROCSHMEM_DEV_INLINE static uint8_t flags(bool signal) { return signal ? kCtrlCqUpdate : 0; }

  ROCSHMEM_DEV_INLINE static void rdma(Wqe &w, Rdma op, uint16_t idx, uint32_t qpn, bool signal, uint64_t raddr_,
                                       uint32_t rkey, uint64_t laddr, uint32_t lkey, uint32_t len) {
    clear(w, 1);
    ctrl(w, op == Rdma::write ? kOpRdmaWrite : kOpRdmaRead, 0, idx, qpn, 3, flags(signal));
    raddr(w, raddr_, rkey);
    data(w, 8, laddr, lkey, len);
  }

  /** `len` <= kInlineMax bytes of `src` travel in the WQE (no key: src may be any memory). */
  ROCSHMEM_DEV_INLINE static void rdma_inline(Wqe &w, uint16_t idx, uint32_t qpn, bool signal, uint64_t raddr_,
                                              uint32_t rkey, const void *src, uint32_t len) {
    clear(w, 1);
    ctrl(w, kOpRdmaWrite, 0, idx, qpn, len <= 12 ? 3 : 4, flags(signal));
    raddr(w, raddr_, rkey);
    w.dw[8] = bswap32(len | kInlineSeg);
    put_bytes(w, 36, src, len);
  }

  /** Blocks an atomic of this form and size occupies. */
  ROCSHMEM_DEV_INLINE static uint32_t atomic_blocks(AmoForm form, uint32_t size) {
    return (form == AmoForm::masked_cs && size == 8) ? 2 : 1;
  }

  /**
   * An atomic on `size` bytes at raddr; the old value goes to laddr (key lkey). Forms and
   * sizes: std_fa / std_cs on 8 bytes; masked_fa / masked_cs on 4 or 8.
   */
  ROCSHMEM_DEV_INLINE static void atomic(Wqe &w, const AmoArgs &a, uint16_t idx, uint32_t qpn, bool signal,
                                         uint64_t raddr_, uint32_t rkey, uint64_t laddr, uint32_t lkey) {
    const bool two = atomic_blocks(a.form, a.size) == 2;
    clear(w, two ? 2 : 1);
    uint8_t opcode = kOpAtomicFa, opmod = 0;
    switch (a.form) {
      case AmoForm::std_fa:
        put_be64(w, 8, a.swap_add);
        break;
      case AmoForm::std_cs:
        opcode = kOpAtomicCs;
        put_be64(w, 8, a.swap_add);
        put_be64(w, 10, a.compare);
        break;
      case AmoForm::masked_fa:
        opcode = kOpAtomicMaskedFa;
        if (a.size == 4) {
          opmod = kOpmodExt4;
          w.dw[8] = bswap32(uint32_t(a.swap_add));
          w.dw[9] = bswap32(uint32_t(a.swap_mask));
        } else {
          opmod = kOpmodExt8;
          put_be64(w, 8, a.swap_add);
          put_be64(w, 10, a.swap_mask);
        }
        break;
      case AmoForm::masked_cs:
        opcode = kOpAtomicMaskedCs;
        if (a.size == 4) {
          opmod = kOpmodExt4;
          w.dw[8] = bswap32(uint32_t(a.swap_add));
          w.dw[9] = bswap32(uint32_t(a.compare));
          w.dw[10] = bswap32(uint32_t(a.swap_mask));
          w.dw[11] = bswap32(uint32_t(a.compare_mask));
        } else {
          opmod = kOpmodExt8;
          put_be64(w, 8, a.swap_add);
          put_be64(w, 10, a.compare);
          put_be64(w, 12, a.swap_mask);
          put_be64(w, 14, a.compare_mask);
        }
        break;
    }
    ctrl(w, opcode, opmod, idx, qpn, two ? 5 : 4, flags(signal));
    raddr(w, raddr_, rkey);
    data(w, two ? 16 : 12, laddr, lkey, a.size);
  }

  ROCSHMEM_DEV_INLINE static void nop(Wqe &w, uint16_t idx, uint32_t qpn, bool signal) {
    clear(w, 1);
    ctrl(w, kOpNop, 0, idx, qpn, 1, flags(signal));
  }

  /** Doorbell record: the producer counter's low 16 bits, big-endian. */
  ROCSHMEM_DEV_INLINE static uint32_t dbrec(uint64_t prod) { return bswap32(uint32_t(prod) & 0xffffu); }

  /**
   * The 8 bytes written to the doorbell register: a control segment's first 8 bytes naming the
   * producer index and the QP (NVSHMEM's ibgda_ring_db; upstream rocSHMEM writes the last
   * WQE's first 8 bytes instead, which names the same QP).
   */
  ROCSHMEM_DEV_INLINE static uint64_t doorbell(uint64_t prod, uint32_t qpn) {
    return (uint64_t(bswap32(qpn << 8)) << 32) | bswap32((uint32_t(prod) & 0xffffu) << 8);
  }

  /** CQ doorbell record: the consumer counter's low 24 bits, big-endian. */
  ROCSHMEM_DEV_INLINE static uint32_t cq_dbrec(uint64_t ci) { return bswap32(uint32_t(ci) & 0xffffffu); }

  /** Decodes bytes 60..63 of a CQE read as one little-endian 32-bit word. */
  ROCSHMEM_DEV_INLINE static Completion decode(uint32_t tail) {
    const uint8_t op_own = uint8_t(tail >> 24);
    return Completion{uint8_t(op_own >> 4), uint8_t(op_own & 1), bswap16(uint16_t(tail))};
  }

  /** The syndrome (low 8 bits) and vendor syndrome (next 8) from bytes 52..55 of an error CQE. */
  ROCSHMEM_DEV_INLINE static uint32_t syndrome(uint32_t word52) {
    return ((word52 >> 24) & 0xffu) | (((word52 >> 16) & 0xffu) << 8);
  }
};

}  // namespace mlx5
}  // namespace gda
}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_GDA_MLX5_HPP
