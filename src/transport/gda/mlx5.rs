//! The mlx5 wire formats as a NIC reads and writes them: send WQEs in, CQEs out. The NIC model
//! uses these; the device writer (`device/src/gda/mlx5.hpp`) is the other side. Both are checked
//! against rdma-core's `mlx5dv.h` in ctests/gda/layout_test.cpp (WQEs built by rdma-core's
//! helpers must parse here to what they say; CQEs written here must read back through
//! rdma-core's structures).

use super::abi::rocshmem_gda_wqe_desc;

/// Bytes of a send-queue block (WQEBB) and of a CQE.
pub const BLOCK: usize = 64;
pub const CQE_BYTES: usize = 64;

pub const OP_NOP: u8 = 0x00;
pub const OP_RDMA_WRITE: u8 = 0x08;
pub const OP_RDMA_WRITE_IMM: u8 = 0x09;
pub const OP_RDMA_READ: u8 = 0x10;
pub const OP_ATOMIC_CS: u8 = 0x11;
pub const OP_ATOMIC_FA: u8 = 0x12;
pub const OP_ATOMIC_MASKED_CS: u8 = 0x14;
pub const OP_ATOMIC_MASKED_FA: u8 = 0x15;
pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
pub const INLINE_SEG: u32 = 0x8000_0000;
pub const OPMOD_EXT4: u8 = 0x08;
pub const OPMOD_EXT8: u8 = 0x09;

pub const CQE_REQ: u8 = 0;
pub const CQE_REQ_ERR: u8 = 13;
pub const CQE_INVALID: u8 = 15;
/// The byte every CQE starts with in `op_own`: opcode invalid, owner 1 (hardware-owned on the
/// first pass), as upstream initialises its CQ.
pub const CQE_OP_OWN_INIT: u8 = (CQE_INVALID << 4) | 1;

pub const SYND_LOCAL_LENGTH: u8 = 0x01;
pub const SYND_LOCAL_QP_OP: u8 = 0x02;
pub const SYND_LOCAL_PROT: u8 = 0x04;
pub const SYND_WR_FLUSH: u8 = 0x05;
pub const SYND_REMOTE_INVAL_REQ: u8 = 0x12;
pub const SYND_REMOTE_ACCESS: u8 = 0x13;
pub const SYND_REMOTE_OP: u8 = 0x14;

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// The control segment's first 8 bytes: opcode, opmod, WQE index, QPN, ds.
pub fn parse_ctrl(b: &[u8]) -> (u8, u8, u16, u32, u8) {
    let w0 = be32(b, 0);
    let w1 = be32(b, 4);
    ((w0 & 0xff) as u8, (w0 >> 24) as u8, ((w0 >> 8) & 0xffff) as u16, w1 >> 8, (w1 & 0x3f) as u8)
}

/// Blocks a WQE of `ds` 16-byte units occupies.
pub fn blocks(ds: u8) -> usize {
    (ds as usize * 16).div_ceil(BLOCK).max(1)
}

/// Parses one WQE (all its blocks, contiguous in `b`). Errors are the CQE syndrome a NIC would
/// report: a malformed WQE is a local QP operation error.
pub fn parse_wqe(b: &[u8]) -> Result<rocshmem_gda_wqe_desc, u8> {
    let (opcode, opmod, idx, qpn, ds) = parse_ctrl(b);
    let nbb = blocks(ds);
    if ds == 0 || b.len() < nbb * BLOCK {
        return Err(SYND_LOCAL_QP_OP);
    }
    let mut d = rocshmem_gda_wqe_desc {
        opcode: opcode as u32,
        opmod: opmod as u32,
        wqe_index: idx as u32,
        qpn,
        ds: ds as u32,
        nbb: nbb as u32,
        fm_ce_se: b[11] as u32,
        ..Default::default()
    };
    let raddr = |d: &mut rocshmem_gda_wqe_desc| {
        d.raddr = be64(b, 16);
        d.rkey = be32(b, 24);
    };
    let data = |d: &mut rocshmem_gda_wqe_desc, at: usize| {
        d.byte_count = be32(b, at);
        d.lkey = be32(b, at + 4);
        d.laddr = be64(b, at + 8);
    };
    match opcode {
        OP_NOP => {}
        OP_RDMA_WRITE | OP_RDMA_READ => {
            if ds < 3 {
                return Err(SYND_LOCAL_QP_OP);
            }
            raddr(&mut d);
            let bc = be32(b, 32);
            if opcode == OP_RDMA_WRITE && bc & INLINE_SEG != 0 {
                let len = (bc & 0x3ff) as usize;
                if 36 + len > ds as usize * 16 || len > d.inline_data.len() {
                    return Err(SYND_LOCAL_QP_OP);
                }
                d.inline_len = len as u32;
                d.byte_count = len as u32;
                d.inline_data[..len].copy_from_slice(&b[36..36 + len]);
            } else {
                data(&mut d, 32);
            }
        }
        OP_ATOMIC_CS | OP_ATOMIC_FA => {
            if ds != 4 {
                return Err(SYND_LOCAL_QP_OP);
            }
            raddr(&mut d);
            d.swap_add = be64(b, 32);
            d.compare = be64(b, 40);
            data(&mut d, 48);
        }
        OP_ATOMIC_MASKED_CS | OP_ATOMIC_MASKED_FA => {
            raddr(&mut d);
            match (opmod, opcode, ds) {
                (OPMOD_EXT4, OP_ATOMIC_MASKED_FA, 4) => {
                    d.swap_add = be32(b, 32) as u64;
                    d.swap_mask = be32(b, 36) as u64;
                }
                (OPMOD_EXT4, OP_ATOMIC_MASKED_CS, 4) => {
                    d.swap_add = be32(b, 32) as u64;
                    d.compare = be32(b, 36) as u64;
                    d.swap_mask = be32(b, 40) as u64;
                    d.compare_mask = be32(b, 44) as u64;
                }
                (OPMOD_EXT8, OP_ATOMIC_MASKED_FA, 4) => {
                    d.swap_add = be64(b, 32);
                    d.swap_mask = be64(b, 40);
                }
                (OPMOD_EXT8, OP_ATOMIC_MASKED_CS, 5) => {
                    d.swap_add = be64(b, 32);
                    d.compare = be64(b, 40);
                    d.swap_mask = be64(b, 48);
                    d.compare_mask = be64(b, 56);
                }
                _ => return Err(SYND_LOCAL_QP_OP),
            }
            data(&mut d, (ds as usize - 1) * 16);
        }
        _ => return Err(SYND_LOCAL_QP_OP),
    }
    Ok(d)
}

/// Bytes an atomic WQE works on (its data segment's byte count): 8 for IB atomics, 4 or 8 for
/// extended ones.
pub fn atomic_size(d: &rocshmem_gda_wqe_desc) -> u32 {
    match d.opmod as u8 {
        OPMOD_EXT4 => 4,
        _ => 8,
    }
}

/// What one CQE says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    /// `CQE_REQ` or `CQE_REQ_ERR`.
    pub opcode: u8,
    pub owner: u8,
    pub wqe_counter: u16,
    /// The completed WQE's opcode and QP (`sop_drop_qpn` / `s_wqe_opcode_qpn`).
    pub wqe_opcode: u8,
    pub qpn: u32,
    pub byte_cnt: u32,
    pub syndrome: u8,
    pub vendor_syndrome: u8,
}

/// Writes `c` as a 64-byte mlx5 CQE: bytes 0..60, then (`tail`) the last four bytes
/// (wqe_counter, signature, op_own) as one little-endian word for the caller to store last.
pub fn encode_cqe(c: &Cqe, out: &mut [u8; CQE_BYTES]) -> u32 {
    out.fill(0);
    if c.opcode == CQE_REQ_ERR {
        out[54] = c.vendor_syndrome;
        out[55] = c.syndrome;
    } else {
        out[44..48].copy_from_slice(&c.byte_cnt.to_be_bytes());
    }
    out[56..60].copy_from_slice(&(((c.wqe_opcode as u32) << 24) | (c.qpn & 0xff_ffff)).to_be_bytes());
    out[60..62].copy_from_slice(&c.wqe_counter.to_be_bytes());
    out[63] = (c.opcode << 4) | (c.owner & 1);
    u32::from_le_bytes(out[60..64].try_into().unwrap())
}

/// Values of the doorbell record and register for producer index `prod` (as the device writer
/// writes them): the record holds the low 16 bits, big-endian; the register a control segment's
/// first 8 bytes with that index and the QPN.
pub fn doorbell_index(db: u64) -> (u16, u32) {
    let w0 = u32::from_be(db as u32);
    let w1 = u32::from_be((db >> 32) as u32);
    (((w0 >> 8) & 0xffff) as u16, w1 >> 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctrl(b: &mut [u8], opcode: u8, opmod: u8, idx: u16, qpn: u32, ds: u8, fm: u8) {
        b[0..4].copy_from_slice(&(((opmod as u32) << 24) | ((idx as u32) << 8) | opcode as u32).to_be_bytes());
        b[4..8].copy_from_slice(&((qpn << 8) | ds as u32).to_be_bytes());
        b[11] = fm;
    }

    #[test]
    fn rdma_write_inline_and_pointer() {
        let mut b = [0u8; 64];
        ctrl(&mut b, OP_RDMA_WRITE, 0, 0xbeef, 0x12345, 4, CTRL_CQ_UPDATE);
        b[16..24].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
        b[24..28].copy_from_slice(&0xabcdu32.to_be_bytes());
        b[32..36].copy_from_slice(&(20u32 | INLINE_SEG).to_be_bytes());
        for i in 0..20 {
            b[36 + i] = i as u8 * 3;
        }
        let d = parse_wqe(&b).unwrap();
        assert_eq!((d.opcode, d.wqe_index, d.qpn, d.ds, d.nbb), (OP_RDMA_WRITE as u32, 0xbeef, 0x12345, 4, 1));
        assert_eq!(
            (d.raddr, d.rkey, d.inline_len, d.fm_ce_se),
            (0x1122_3344_5566_7788, 0xabcd, 20, CTRL_CQ_UPDATE as u32)
        );
        assert_eq!(d.inline_data[19], 57);
        // An inline length past the WQE's size is malformed.
        b[32..36].copy_from_slice(&(40u32 | INLINE_SEG).to_be_bytes());
        assert_eq!(parse_wqe(&b).unwrap_err(), SYND_LOCAL_QP_OP);
    }

    #[test]
    fn masked_cs8_spans_two_blocks() {
        let mut b = [0u8; 128];
        ctrl(&mut b, OP_ATOMIC_MASKED_CS, OPMOD_EXT8, 7, 9, 5, 0);
        b[32..40].copy_from_slice(&5u64.to_be_bytes());
        b[48..56].copy_from_slice(&u64::MAX.to_be_bytes());
        b[64..68].copy_from_slice(&8u32.to_be_bytes());
        b[68..72].copy_from_slice(&77u32.to_be_bytes());
        b[72..80].copy_from_slice(&0x1000u64.to_be_bytes());
        let d = parse_wqe(&b).unwrap();
        assert_eq!((d.nbb, d.swap_add, d.swap_mask, d.byte_count, d.lkey, d.laddr), (2, 5, u64::MAX, 8, 77, 0x1000));
        assert_eq!(parse_wqe(&b[..64]).unwrap_err(), SYND_LOCAL_QP_OP);
    }

    #[test]
    fn cqe_tail_is_stored_last() {
        let mut out = [0u8; 64];
        let c = Cqe {
            opcode: CQE_REQ_ERR,
            owner: 1,
            wqe_counter: 0x1234,
            wqe_opcode: 8,
            qpn: 5,
            byte_cnt: 0,
            syndrome: 0x13,
            vendor_syndrome: 0x88,
        };
        let tail = encode_cqe(&c, &mut out);
        assert_eq!(out[55], 0x13);
        assert_eq!(tail.to_le_bytes(), [0x12, 0x34, 0, (CQE_REQ_ERR << 4) | 1]);
        assert_eq!(doorbell_index(((5u32 << 8).to_be() as u64) << 32 | (0x4321u32 << 8).to_be() as u64), (0x4321, 5));
    }
}
