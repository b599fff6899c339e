// Byte-level checks of the GDA wire formats against rdma-core's own <infiniband/mlx5dv.h>:
//  - every WQE the device writer builds (device/src/gda/mlx5.hpp) equals the bytes rdma-core's
//    helpers (mlx5dv_set_ctrl_seg, mlx5dv_set_data_seg) and structures (mlx5_wqe_raddr_seg,
//    mlx5_wqe_inl_data_seg, mlx5_wqe_atomic_seg) give, for every opcode and size class, on
//    random addresses, keys, indices and QPNs; the NIC model's parser (Rust) reads those
//    rdma-core-built WQEs back to what they say;
//  - doorbell record, doorbell register and CQ doorbell record values;
//  - CQEs: the device decoder reads mlx5_cqe64 / mlx5_err_cqe built through rdma-core's fields
//    and accessors, and CQEs written by the NIC model read back through them;
//  - the DEVX field packer against rdma-core's _devx_set / _devx_set64;
//  - every rdma-core structure field the core declares itself, against offsetof here.
// One process, no rocshmem_init. Exit status non-zero on any mismatch.
#include <endian.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "../../device/src/gda/mlx5.hpp"
#include "rocshmem_device/gda_abi.h"

extern "C" {
int rocshmemi_gda_parse_wqe(const void *wqe, size_t len, rocshmem_gda_wqe_desc *out);
void rocshmemi_gda_encode_cqe(uint8_t opcode, uint8_t owner, uint16_t wqe_counter, uint8_t wqe_opcode, uint32_t qpn,
                              uint32_t byte_cnt, uint8_t syndrome, uint8_t vendor_syndrome, uint8_t *out);
void rocshmemi_gda_devx_set(uint8_t *buf, size_t len, size_t off, size_t bits, uint64_t value);
bool rocshmemi_gda_ffi_layout(size_t i, char *name, size_t *offset, size_t *size);
}

namespace g = rocshmem::dev::gda;
using W = g::mlx5::Writer;

static_assert(g::mlx5::kOpNop == MLX5_OPCODE_NOP && g::mlx5::kOpRdmaWrite == MLX5_OPCODE_RDMA_WRITE &&
                  g::mlx5::kOpRdmaRead == MLX5_OPCODE_RDMA_READ && g::mlx5::kOpAtomicCs == MLX5_OPCODE_ATOMIC_CS &&
                  g::mlx5::kOpAtomicFa == MLX5_OPCODE_ATOMIC_FA &&
                  g::mlx5::kOpAtomicMaskedCs == MLX5_OPCODE_ATOMIC_MASKED_CS &&
                  g::mlx5::kOpAtomicMaskedFa == MLX5_OPCODE_ATOMIC_MASKED_FA,
              "opcodes");
static_assert(g::mlx5::kCtrlCqUpdate == MLX5_WQE_CTRL_CQ_UPDATE && g::mlx5::kCtrlFence == MLX5_WQE_CTRL_FENCE &&
                  g::mlx5::kInlineSeg == MLX5_INLINE_SEG && g::kBlock == MLX5_SEND_WQE_BB,
              "flags");
static_assert(g::mlx5::kCqeReq == MLX5_CQE_REQ && g::mlx5::kCqeReqErr == MLX5_CQE_REQ_ERR &&
                  g::mlx5::kCqeInvalid == MLX5_CQE_INVALID && g::mlx5::kSyndromeWrFlush == MLX5_CQE_SYNDROME_WR_FLUSH_ERR &&
                  g::mlx5::kSyndromeRemoteAccess == MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR &&
                  g::mlx5::kSyndromeLocalProt == MLX5_CQE_SYNDROME_LOCAL_PROT_ERR &&
                  g::mlx5::kSyndromeLocalQpOp == MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR,
              "CQE codes");
static_assert(W::kCqeTailOffset == offsetof(mlx5_cqe64, wqe_counter) && W::kCqeBytes == sizeof(mlx5_cqe64) &&
                  W::kCqeSyndromeOffset + 3 == offsetof(mlx5_err_cqe, syndrome) &&
                  W::kCqeSyndromeOffset + 2 == offsetof(mlx5_err_cqe, vendor_err_synd) &&
                  offsetof(mlx5_cqe64, op_own) == 63 && sizeof(mlx5_err_cqe) == 64,
              "CQE layout");

// The descriptor as cbindgen wrote it (src/transport/gda/abi.rs asserts the same on its side).
static_assert(sizeof(rocshmem_gda_qp) == 384 && offsetof(rocshmem_gda_qp, resv_head) == 128 &&
                  offsetof(rocshmem_gda_qp, ready_head) == 192 && offsetof(rocshmem_gda_qp, prod_idx) == 256 &&
                  offsetof(rocshmem_gda_qp, done) == 320 && sizeof(rocshmem_gda_wqe_desc) == 128,
              "gda_abi.h layout");

static int failures = 0;
static uint64_t rng_state;

static uint64_t rnd() {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      if (failures++ < 20) {                                              \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
        fprintf(stderr, __VA_ARGS__);                                     \
        fprintf(stderr, "\n");                                            \
      }                                                                   \
    }                                                                     \
  } while (0)

/** Our WQE's bytes, as they would be stored in the send queue. */
static void bytes_of(const g::Wqe &w, uint8_t *out) { memcpy(out, w.dw, w.nbb * g::kBlock); }

static std::string hex(const uint8_t *b, size_t n) {
  std::string s;
  char t[4];
  for (size_t i = 0; i < n; ++i) {
    snprintf(t, sizeof t, "%02x%s", b[i], (i % 16 == 15) ? "|" : "");
    s += t;
  }
  return s;
}

static void compare(const char *what, const g::Wqe &w, const uint8_t *expect, uint32_t nbb) {
  uint8_t got[2 * g::kBlock];
  CHECK(w.nbb == nbb, "%s: %u blocks, rdma-core's WQE has %u", what, w.nbb, nbb);
  bytes_of(w, got);
  const size_t n = nbb * g::kBlock;
  CHECK(memcmp(got, expect, n) == 0, "%s:\n  ours      %s\n  rdma-core %s", what, hex(got, n).c_str(),
        hex(expect, n).c_str());
}

/** The model parses rdma-core's bytes to the given fields (or fails the check). */
static rocshmem_gda_wqe_desc parsed(const char *what, const uint8_t *wqe, size_t len) {
  rocshmem_gda_wqe_desc d;
  memset(&d, 0, sizeof d);
  const int rc = rocshmemi_gda_parse_wqe(wqe, len, &d);
  CHECK(rc == 0, "%s: the model refused rdma-core's WQE (syndrome %#x)", what, rc);
  return d;
}

static uint8_t ds_of(uint32_t bytes) { return uint8_t((bytes + 15) / 16); }

static void check_rdma() {
  const uint32_t lens[] = {1, 2, 63, 64, 4096, 65537, 1u << 20, 1u << 30, 0x7fffffffu};
  for (int op = 0; op < 2; ++op) {
    for (uint32_t len : lens) {
      for (int rep = 0; rep < 8; ++rep) {
        const uint16_t idx = rep == 0 ? 0 : rep == 1 ? 0xffff : uint16_t(rnd());
        const uint32_t qpn = uint32_t(rnd()) & 0xffffff;
        const uint64_t raddr = rnd(), laddr = rnd();
        const uint32_t rkey = uint32_t(rnd()), lkey = uint32_t(rnd());
        const bool sig = rep & 1;
        const uint8_t opcode = op == 0 ? MLX5_OPCODE_RDMA_WRITE : MLX5_OPCODE_RDMA_READ;
        alignas(64) uint8_t e[64] = {};
        mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(e), idx, opcode, 0, qpn,
                            sig ? MLX5_WQE_CTRL_CQ_UPDATE : 0, 3, 0, 0);
        auto *r = reinterpret_cast<mlx5_wqe_raddr_seg *>(e + 16);
        r->raddr = htobe64(raddr);
        r->rkey = htobe32(rkey);
        r->reserved = 0;
        mlx5dv_set_data_seg(reinterpret_cast<mlx5_wqe_data_seg *>(e + 32), len, lkey, laddr);
        g::Wqe w;
        W::rdma(w, op == 0 ? g::Rdma::write : g::Rdma::read, idx, qpn, sig, raddr, rkey, laddr, lkey, len);
        compare(op == 0 ? "RDMA write" : "RDMA read", w, e, 1);
        const rocshmem_gda_wqe_desc d = parsed("RDMA", e, 64);
        CHECK(d.opcode == opcode && d.wqe_index == idx && d.qpn == qpn && d.ds == 3 && d.raddr == raddr &&
                  d.rkey == rkey && d.laddr == laddr && d.lkey == lkey && d.byte_count == len && d.inline_len == 0 &&
                  (d.fm_ce_se == (sig ? uint32_t(MLX5_WQE_CTRL_CQ_UPDATE) : 0u)),
              "model parse of an RDMA WQE (len %u)", len);
      }
    }
  }
}

static void check_inline() {
  // Every length, from a word-aligned source and from a misaligned one.
  for (uint32_t n = 0; n < 2 * W::kInlineMax; ++n) {
    const uint32_t len = 1 + n % W::kInlineMax;
    alignas(8) uint8_t buf[40];
    for (auto &b : buf) b = uint8_t(rnd());
    const uint8_t *data = buf + (n < W::kInlineMax ? 0 : 1);
    const uint16_t idx = uint16_t(rnd());
    const uint32_t qpn = uint32_t(rnd()) & 0xffffff;
    const uint64_t raddr = rnd();
    const uint32_t rkey = uint32_t(rnd());
    // rdma-core's provider sizes an inline WQE as ctrl + raddr + inline header + data.
    const uint8_t ds = ds_of(sizeof(mlx5_wqe_ctrl_seg) + sizeof(mlx5_wqe_raddr_seg) + sizeof(mlx5_wqe_inl_data_seg) + len);
    alignas(64) uint8_t e[64] = {};
    mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(e), idx, MLX5_OPCODE_RDMA_WRITE, 0, qpn,
                        MLX5_WQE_CTRL_CQ_UPDATE, ds, 0, 0);
    auto *r = reinterpret_cast<mlx5_wqe_raddr_seg *>(e + 16);
    r->raddr = htobe64(raddr);
    r->rkey = htobe32(rkey);
    auto *inl = reinterpret_cast<mlx5_wqe_inl_data_seg *>(e + 32);
    inl->byte_count = htobe32(len | MLX5_INLINE_SEG);
    memcpy(e + 32 + sizeof(*inl), data, len);
    g::Wqe w;
    W::rdma_inline(w, idx, qpn, true, raddr, rkey, data, len);
    compare("inline RDMA write", w, e, 1);
    const rocshmem_gda_wqe_desc d = parsed("inline", e, 64);
    CHECK(d.inline_len == len && d.byte_count == len && memcmp(d.inline_data, data, len) == 0 && d.ds == ds,
          "model parse of an inline WQE of %u bytes", len);
  }
}

/** Expected bytes of an atomic WQE: ctrl, raddr, `seg` (16 or 32 bytes), data. */
static uint32_t expect_atomic(uint8_t *e, uint8_t opcode, uint8_t opmod, uint16_t idx, uint32_t qpn, uint64_t raddr,
                              uint32_t rkey, const uint8_t *seg, uint32_t seg_len, uint64_t laddr, uint32_t lkey,
                              uint32_t size) {
  const uint32_t bytes = 16 + 16 + seg_len + 16;
  memset(e, 0, 128);
  mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(e), idx, opcode, opmod, qpn, MLX5_WQE_CTRL_CQ_UPDATE,
                      ds_of(bytes), 0, 0);
  auto *r = reinterpret_cast<mlx5_wqe_raddr_seg *>(e + 16);
  r->raddr = htobe64(raddr);
  r->rkey = htobe32(rkey);
  memcpy(e + 32, seg, seg_len);
  mlx5dv_set_data_seg(reinterpret_cast<mlx5_wqe_data_seg *>(e + 32 + seg_len), size, lkey, laddr);
  return (bytes + 63) / 64;
}

static void check_atomics() {
  for (int rep = 0; rep < 64; ++rep) {
    const uint16_t idx = uint16_t(rnd());
    const uint32_t qpn = uint32_t(rnd()) & 0xffffff;
    const uint64_t raddr = rnd() & ~7ull, laddr = rnd() & ~7ull, a = rnd(), b = rnd(), am = rnd(), bm = rnd();
    const uint32_t rkey = uint32_t(rnd()), lkey = uint32_t(rnd());
    alignas(64) uint8_t e[128];
    g::Wqe w;
    // IB atomics (8 bytes): mlx5_wqe_atomic_seg.
    for (int cs = 0; cs < 2; ++cs) {
      mlx5_wqe_atomic_seg s;
      s.swap_add = htobe64(a);
      s.compare = htobe64(cs ? b : 0);
      const uint32_t nbb = expect_atomic(e, cs ? MLX5_OPCODE_ATOMIC_CS : MLX5_OPCODE_ATOMIC_FA, 0, idx, qpn, raddr, rkey,
                                         reinterpret_cast<uint8_t *>(&s), 16, laddr, lkey, 8);
      W::atomic(w, g::AmoArgs{cs ? g::AmoForm::std_cs : g::AmoForm::std_fa, 8, a, cs ? b : 0, 0, 0}, idx, qpn, true,
                raddr, rkey, laddr, lkey);
      compare(cs ? "compare-swap" : "fetch-add", w, e, nbb);
      const rocshmem_gda_wqe_desc d = parsed("IB atomic", e, 64);
      CHECK(d.swap_add == a && d.compare == (cs ? b : 0) && d.byte_count == 8 && d.laddr == laddr && d.lkey == lkey &&
                d.raddr == raddr,
            "model parse of an IB atomic");
    }
    // Extended atomics, 4 bytes: one 16-byte segment of big-endian 32-bit words.
    for (int cs = 0; cs < 2; ++cs) {
      uint32_t seg[4] = {htobe32(uint32_t(a)), htobe32(uint32_t(cs ? b : am)), cs ? htobe32(uint32_t(am)) : 0u,
                         cs ? htobe32(uint32_t(bm)) : 0u};
      const uint32_t nbb = expect_atomic(e, cs ? MLX5_OPCODE_ATOMIC_MASKED_CS : MLX5_OPCODE_ATOMIC_MASKED_FA, 0x08, idx,
                                         qpn, raddr, rkey, reinterpret_cast<uint8_t *>(seg), 16, laddr, lkey, 4);
      const g::AmoArgs args = cs ? g::AmoArgs{g::AmoForm::masked_cs, 4, a, b, am, bm}
                                 : g::AmoArgs{g::AmoForm::masked_fa, 4, a, 0, am, 0};
      W::atomic(w, args, idx, qpn, true, raddr, rkey, laddr, lkey);
      compare(cs ? "4-byte masked compare-swap" : "4-byte masked fetch-add", w, e, nbb);
      const rocshmem_gda_wqe_desc d = parsed("4-byte masked atomic", e, 64);
      CHECK(d.opmod == 0x08 && d.swap_add == uint32_t(a) && d.byte_count == 4 && d.swap_mask == uint32_t(am) &&
                (!cs || (d.compare == uint32_t(b) && d.compare_mask == uint32_t(bm))),
            "model parse of a 4-byte masked atomic");
    }
    // Extended atomics, 8 bytes: fetch-add with its field boundary (one block); compare-swap
    // with data and masks in two atomic segments (two blocks).
    {
      uint64_t seg[2] = {htobe64(a), htobe64(am)};
      const uint32_t nbb = expect_atomic(e, MLX5_OPCODE_ATOMIC_MASKED_FA, 0x09, idx, qpn, raddr, rkey,
                                         reinterpret_cast<uint8_t *>(seg), 16, laddr, lkey, 8);
      W::atomic(w, g::AmoArgs{g::AmoForm::masked_fa, 8, a, 0, am, 0}, idx, qpn, true, raddr, rkey, laddr, lkey);
      compare("8-byte masked fetch-add", w, e, nbb);
      const rocshmem_gda_wqe_desc d = parsed("8-byte masked fetch-add", e, 64);
      CHECK(d.swap_add == a && d.swap_mask == am && d.byte_count == 8, "model parse of an 8-byte masked fetch-add");
    }
    {
      mlx5_wqe_atomic_seg seg[2];
      seg[0].swap_add = htobe64(a);
      seg[0].compare = htobe64(b);
      seg[1].swap_add = htobe64(am);
      seg[1].compare = htobe64(bm);
      const uint32_t nbb = expect_atomic(e, MLX5_OPCODE_ATOMIC_MASKED_CS, 0x09, idx, qpn, raddr, rkey,
                                         reinterpret_cast<uint8_t *>(seg), 32, laddr, lkey, 8);
      CHECK(nbb == 2 && W::atomic_blocks(g::AmoForm::masked_cs, 8) == 2, "8-byte masked compare-swap is two blocks");
      W::atomic(w, g::AmoArgs{g::AmoForm::masked_cs, 8, a, b, am, bm}, idx, qpn, true, raddr, rkey, laddr, lkey);
      compare("8-byte masked compare-swap", w, e, nbb);
      const rocshmem_gda_wqe_desc d = parsed("8-byte masked compare-swap", e, 128);
      CHECK(d.nbb == 2 && d.swap_add == a && d.compare == b && d.swap_mask == am && d.compare_mask == bm &&
                d.laddr == laddr && d.byte_count == 8,
            "model parse of an 8-byte masked compare-swap");
    }
    // NOP.
    memset(e, 0, 64);
    mlx5dv_set_ctrl_seg(reinterpret_cast<mlx5_wqe_ctrl_seg *>(e), idx, MLX5_OPCODE_NOP, 0, qpn, MLX5_WQE_CTRL_CQ_UPDATE,
                        1, 0, 0);
    W::nop(w, idx, qpn, true);
    compare("NOP", w, e, 1);
    CHECK(parsed("NOP", e, 64).opcode == MLX5_OPCODE_NOP, "model parse of a NOP");
  }
}

static void check_doorbells() {
  for (int rep = 0; rep < 1000; ++rep) {
    const uint64_t prod = rep < 3 ? uint64_t(rep) * 0xffff : rnd();
    const uint32_t qpn = uint32_t(rnd()) & 0xffffff;
    mlx5_wqe_ctrl_seg c;
    memset(&c, 0, sizeof c);
    mlx5dv_set_ctrl_seg(&c, uint16_t(prod), 0, 0, qpn, 0, 0, 0, 0);
    uint64_t db;
    memcpy(&db, &c, 8);
    CHECK(W::doorbell(prod, qpn) == db, "doorbell value for prod %#llx qpn %#x", (unsigned long long)prod, qpn);
    CHECK(W::dbrec(prod) == htobe32(uint32_t(prod) & 0xffff), "doorbell record for %#llx", (unsigned long long)prod);
    CHECK(W::cq_dbrec(prod) == htobe32(uint32_t(prod) & 0xffffff), "CQ doorbell record for %#llx",
          (unsigned long long)prod);
  }
}

static void check_cqes() {
  for (int rep = 0; rep < 512; ++rep) {
    const uint16_t counter = uint16_t(rnd());
    const uint8_t owner = rep & 1, opcode = (rep & 2) ? MLX5_CQE_REQ_ERR : (rep & 4) ? MLX5_CQE_INVALID : MLX5_CQE_REQ;
    const uint8_t synd = uint8_t(rnd()), vendor = uint8_t(rnd()), wqe_op = uint8_t(rnd());
    const uint32_t qpn = uint32_t(rnd()) & 0xffffff, byte_cnt = uint32_t(rnd());
    // rdma-core's structure, read by the device decoder.
    alignas(64) uint8_t buf[64];
    for (auto &b : buf) b = uint8_t(rnd());
    auto *cqe = reinterpret_cast<mlx5_cqe64 *>(buf);
    cqe->wqe_counter = htobe16(counter);
    cqe->op_own = uint8_t(opcode << 4) | (cqe->op_own & 0x0e);
    mlx5dv_set_cqe_owner(cqe, owner);
    auto *err = reinterpret_cast<mlx5_err_cqe *>(buf);
    err->syndrome = synd;
    err->vendor_err_synd = vendor;
    uint32_t tail, w52;
    memcpy(&tail, buf + W::kCqeTailOffset, 4);
    memcpy(&w52, buf + W::kCqeSyndromeOffset, 4);
    const g::Completion c = W::decode(tail);
    CHECK(c.opcode == mlx5dv_get_cqe_opcode(cqe) && c.owner == mlx5dv_get_cqe_owner(cqe) &&
              c.wqe_counter == be16toh(cqe->wqe_counter),
          "CQE decode: opcode %u/%u owner %u/%u counter %#x/%#x", c.opcode, mlx5dv_get_cqe_opcode(cqe), c.owner,
          mlx5dv_get_cqe_owner(cqe), c.wqe_counter, be16toh(cqe->wqe_counter));
    CHECK(W::syndrome(w52) == (uint32_t(synd) | uint32_t(vendor) << 8), "error CQE syndrome");
    // The model's CQEs, read through rdma-core's structure.
    if (opcode == MLX5_CQE_INVALID) continue;
    rocshmemi_gda_encode_cqe(opcode, owner, counter, wqe_op, qpn, byte_cnt, synd, vendor, buf);
    CHECK(mlx5dv_get_cqe_opcode(cqe) == opcode && mlx5dv_get_cqe_owner(cqe) == owner &&
              be16toh(cqe->wqe_counter) == counter && be32toh(cqe->sop_drop_qpn) == ((uint32_t(wqe_op) << 24) | qpn),
          "model CQE header");
    if (opcode == MLX5_CQE_REQ)
      CHECK(be32toh(cqe->byte_cnt) == byte_cnt, "model CQE byte count");
    else
      CHECK(err->syndrome == synd && err->vendor_err_synd == vendor &&
                be32toh(err->s_wqe_opcode_qpn) == ((uint32_t(wqe_op) << 24) | qpn),
            "model error CQE");
  }
}

static void check_devx_set() {
  for (int rep = 0; rep < 20000; ++rep) {
    uint8_t ours[64], theirs[64];
    for (size_t i = 0; i < sizeof ours; ++i) ours[i] = theirs[i] = uint8_t(rnd());
    const uint64_t v = rnd();
    if (rep % 7 == 0) {
      const size_t off = (rnd() % 8) * 64;
      rocshmemi_gda_devx_set(ours, sizeof ours, off, 64, v);
      _devx_set64(theirs, v, off);
    } else {
      const size_t bits = 1 + rnd() % 32, off = (rnd() % 16) * 32 + rnd() % (33 - bits);
      rocshmemi_gda_devx_set(ours, sizeof ours, off, bits, v);
      _devx_set(theirs, uint32_t(v), off, bits);
    }
    CHECK(memcmp(ours, theirs, sizeof ours) == 0, "DEVX field packing differs from rdma-core's _devx_set");
  }
}

#define ROW(t, f) {#t "." #f, offsetof(t, f), sizeof(t)}
struct Row {
  const char *name;
  size_t offset, size;
};

static void check_ffi_layout() {
  const Row rows[] = {
      ROW(ibv_mr, context), ROW(ibv_mr, addr), ROW(ibv_mr, length), ROW(ibv_mr, lkey), ROW(ibv_mr, rkey),
      ROW(ibv_port_attr, state), ROW(ibv_port_attr, active_mtu), ROW(ibv_port_attr, gid_tbl_len),
      ROW(ibv_port_attr, max_msg_sz), ROW(ibv_port_attr, lid), ROW(ibv_port_attr, sm_sl),
      ROW(ibv_port_attr, link_layer), ROW(ibv_port_attr, port_cap_flags2), ROW(mlx5dv_context_attr, flags),
      ROW(mlx5dv_context_attr, comp_mask), ROW(mlx5dv_pd, pdn), ROW(mlx5dv_pd, comp_mask), ROW(mlx5dv_obj, pd.in),
      ROW(mlx5dv_obj, pd.out), ROW(mlx5dv_devx_uar, reg_addr), ROW(mlx5dv_devx_uar, base_addr),
      ROW(mlx5dv_devx_uar, page_id), ROW(mlx5dv_devx_uar, mmap_off), ROW(mlx5dv_devx_uar, comp_mask),
      ROW(mlx5dv_devx_umem, umem_id), ROW(mlx5dv_devx_umem_in, addr), ROW(mlx5dv_devx_umem_in, size),
      ROW(mlx5dv_devx_umem_in, access), ROW(mlx5dv_devx_umem_in, pgsz_bitmap), ROW(mlx5dv_devx_umem_in, comp_mask),
      ROW(mlx5dv_devx_umem_in, dmabuf_fd),
  };
  size_t n = 0;
  char name[64];
  size_t off, size;
  for (; rocshmemi_gda_ffi_layout(n, name, &off, &size); ++n) {
    const Row *r = nullptr;
    for (const Row &x : rows)
      if (strcmp(x.name, name) == 0) r = &x;
    CHECK(r != nullptr, "the core declares %s, which this test does not know", name);
    if (!r) continue;
    // The core's ibv_port_attr has room for fields later releases append; it must not be smaller.
    const bool port = strncmp(name, "ibv_port_attr.", 14) == 0;
    CHECK(off == r->offset && (port ? size >= r->size : size == r->size), "%s: offset %zu size %zu, rdma-core %zu %zu",
          name, off, size, r->offset, r->size);
  }
  CHECK(n == sizeof rows / sizeof rows[0], "%zu layout rows from the core, %zu here", n, sizeof rows / sizeof rows[0]);
}

int main() {
  const char *s = getenv("ROCSHMEM_TEST_SEED");
  const uint64_t seed = (s && *s) ? strtoull(s, nullptr, 0) : ((uint64_t)time(nullptr) << 20) ^ (uint64_t)getpid();
  rng_state = seed;
  printf("gda_layout: seed %#llx (replay: ROCSHMEM_TEST_SEED=%#llx)\n", (unsigned long long)seed,
         (unsigned long long)seed);
  check_rdma();
  check_inline();
  check_atomics();
  check_doorbells();
  check_cqes();
  check_devx_set();
  check_ffi_layout();
  printf("%s gda_layout (%d failures)\n", failures ? "FAIL" : "PASS", failures);
  return failures != 0;
}
