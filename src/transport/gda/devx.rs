//! mlx5 DEVX commands: the PRM (programmer's reference manual) structures that create the
//! completion queue and the RC queue pair in memory we registered (umem) and move the queue
//! pair from RESET to RTS, as upstream (`provider_gda_mlx5.cpp`) and NVSHMEM do. Commands are
//! big-endian bit fields; [`set`] packs one as rdma-core's `DEVX_SET` / `DEVX_SET64` do (the
//! layout test checks it against rdma-core's `_devx_set`).
//!
//! The bit offsets below are those of the kernel's `mlx5_ifc.h` structures (`cqc`, `qpc`, `ads`,
//! `create_cq_in`, `create_qp_in`, `rst2init_qp_in`, `init2rtr_qp_in`, `rtr2rts_qp_in`), which
//! upstream vendors. **None of these commands has ever been sent to a NIC from this code**
//! (docs/gda.md, "Never run on a NIC").

/// Sets `bits` bits at big-endian bit offset `off` of `buf` (a field never crosses a 32-bit word,
/// except 64-bit fields, which are 64-bit aligned).
pub fn set(buf: &mut [u8], off: usize, bits: usize, value: u64) {
    if bits == 64 {
        assert!(off % 64 == 0, "64-bit PRM field at bit {off}");
        buf[off / 8..off / 8 + 8].copy_from_slice(&value.to_be_bytes());
        return;
    }
    assert!((1..=32).contains(&bits) && off % 32 + bits <= 32, "PRM field of {bits} bits at bit {off}");
    let at = off / 32 * 4;
    let shift = 32 - bits - off % 32;
    let mask: u32 = if bits == 32 { u32::MAX } else { ((1u32 << bits) - 1) << shift };
    let word = u32::from_be_bytes(buf[at..at + 4].try_into().unwrap());
    let word = (word & !mask) | (((value as u32) << shift) & mask);
    buf[at..at + 4].copy_from_slice(&word.to_be_bytes());
}

/// Reads a field written with [`set`].
pub fn get(buf: &[u8], off: usize, bits: usize) -> u64 {
    if bits == 64 {
        return u64::from_be_bytes(buf[off / 8..off / 8 + 8].try_into().unwrap());
    }
    let at = off / 32 * 4;
    let shift = 32 - bits - off % 32;
    let word = u32::from_be_bytes(buf[at..at + 4].try_into().unwrap());
    ((word >> shift) as u64) & if bits == 32 { u32::MAX as u64 } else { (1u64 << bits) - 1 }
}

/// A field: (bit offset, width).
pub type Field = (usize, usize);

/// Command opcodes.
pub const CMD_CREATE_CQ: u64 = 0x400;
pub const CMD_CREATE_QP: u64 = 0x500;
pub const CMD_RST2INIT_QP: u64 = 0x502;
pub const CMD_INIT2RTR_QP: u64 = 0x503;
pub const CMD_RTR2RTS_QP: u64 = 0x504;

/// Every command starts with its opcode; the QP transitions carry the QPN at 0x48.
pub const OPCODE: Field = (0x00, 16);
pub const QPN_IN: Field = (0x48, 24);
/// Output: status and syndrome, then the object number (cqn / qpn) at 0x48.
pub const OUT_STATUS: Field = (0x00, 8);
pub const OUT_SYNDROME: Field = (0x20, 32);
pub const OUT_OBJ: Field = (0x48, 24);
pub const OUT_BYTES: usize = 16;

/// `create_cq_in`: the CQ context at 0x80, then where the CQ ring is in the umem.
pub const CREATE_CQ_IN_BYTES: usize = 0x880 / 8;
pub const CQC: usize = 0x80;
pub const CQ_UMEM_OFFSET: Field = (0x280, 64);
pub const CQ_UMEM_ID: Field = (0x2c0, 32);
pub const CQ_UMEM_VALID: Field = (0x2e0, 1);
/// `cqc` fields.
pub const CQC_DBR_UMEM_VALID: Field = (0x06, 1);
pub const CQC_CQE_SZ: Field = (0x08, 3);
pub const CQC_OI: Field = (0x0e, 1);
pub const CQC_DBR_UMEM_ID: Field = (0x20, 32);
pub const CQC_LOG_CQ_SIZE: Field = (0x63, 5);
pub const CQC_UAR_PAGE: Field = (0x68, 24);
pub const CQC_C_EQN: Field = (0xa0, 32);
pub const CQC_LOG_PAGE_SIZE: Field = (0xc3, 5);
pub const CQC_DBR_ADDR: Field = (0x1c0, 64);

/// `create_qp_in` / the `*2*_qp_in` transitions: the QP context at 0xc0.
pub const CREATE_QP_IN_BYTES: usize = 0x880 / 8;
pub const MODIFY_QP_IN_BYTES: usize = 0x880 / 8;
pub const QPC: usize = 0xc0;
pub const WQ_UMEM_OFFSET: Field = (0x800, 64);
pub const WQ_UMEM_ID: Field = (0x840, 32);
pub const WQ_UMEM_VALID: Field = (0x860, 1);
/// `qpc` fields.
pub const QPC_ST: Field = (0x08, 8);
pub const QPC_PM_STATE: Field = (0x13, 2);
pub const QPC_PD: Field = (0x28, 24);
pub const QPC_MTU: Field = (0x40, 3);
pub const QPC_LOG_MSG_MAX: Field = (0x43, 5);
pub const QPC_LOG_SQ_SIZE: Field = (0x51, 4);
pub const QPC_UAR_PAGE: Field = (0x68, 24);
pub const QPC_LOG_PAGE_SIZE: Field = (0xa3, 5);
pub const QPC_REMOTE_QPN: Field = (0xa8, 24);
pub const QPC_PRIMARY_PATH: usize = 0xc0;
pub const QPC_LOG_ACK_REQ_FREQ: Field = (0x380, 4);
pub const QPC_LOG_SRA_MAX: Field = (0x388, 3);
pub const QPC_RETRY_COUNT: Field = (0x38d, 3);
pub const QPC_RNR_RETRY: Field = (0x390, 3);
pub const QPC_NEXT_SEND_PSN: Field = (0x3c8, 24);
pub const QPC_CQN_SND: Field = (0x3e8, 24);
pub const QPC_LOG_RRA_MAX: Field = (0x488, 3);
pub const QPC_ATOMIC_MODE: Field = (0x48c, 4);
pub const QPC_RRE: Field = (0x490, 1);
pub const QPC_RWE: Field = (0x491, 1);
pub const QPC_RAE: Field = (0x492, 1);
pub const QPC_MIN_RNR_NAK: Field = (0x4a3, 5);
pub const QPC_NEXT_RCV_PSN: Field = (0x4a8, 24);
pub const QPC_DBR_ADDR: Field = (0x500, 64);
pub const QPC_RQ_TYPE: Field = (0x565, 3);
pub const QPC_CS_REQ: Field = (0x630, 8);
pub const QPC_CS_RES: Field = (0x638, 8);
pub const QPC_DBR_UMEM_VALID: Field = (0x683, 1);
pub const QPC_DBR_UMEM_ID: Field = (0x720, 32);
/// `ads` (address path) fields, relative to the path.
pub const ADS_PKEY_INDEX: Field = (0x10, 16);
pub const ADS_GRH: Field = (0x28, 1);
pub const ADS_MLID: Field = (0x29, 7);
pub const ADS_RLID: Field = (0x30, 16);
pub const ADS_ACK_TIMEOUT: Field = (0x40, 5);
pub const ADS_SRC_ADDR_INDEX: Field = (0x48, 8);
pub const ADS_STAT_RATE: Field = (0x54, 4);
pub const ADS_HOP_LIMIT: Field = (0x58, 8);
pub const ADS_TCLASS: Field = (0x64, 8);
pub const ADS_FLOW_LABEL: Field = (0x6c, 20);
pub const ADS_RGID: usize = 0x80;
pub const ADS_DSCP: Field = (0x10a, 6);
pub const ADS_UDP_SPORT: Field = (0x110, 16);
pub const ADS_ETH_PRIO: Field = (0x121, 3);
pub const ADS_SL: Field = (0x124, 4);
pub const ADS_VHCA_PORT_NUM: Field = (0x128, 8);
pub const ADS_RMAC_47_32: Field = (0x130, 16);
pub const ADS_RMAC_31_0: Field = (0x140, 32);

/// Values of those fields.
pub const CQE_SZ_64: u64 = 0;
pub const QPC_ST_RC: u64 = 0;
pub const PM_STATE_MIGRATED: u64 = 3;
pub const RQ_TYPE_ZERO_LEN: u64 = 3;
pub const ATOMIC_MODE_UP_TO_8B: u64 = 3;
pub const LOG_MSG_MAX_1G: u64 = 30;
pub const LOG_ACK_REQ_FREQ_MAX: u64 = 8;

fn put(buf: &mut [u8], base: usize, f: Field, v: u64) {
    set(buf, base + f.0, f.1, v);
}

fn log2(v: u32) -> u64 {
    v.trailing_zeros() as u64
}

/// Where the pieces of one queue pair are in its umem, and the objects it refers to.
#[derive(Debug, Clone, Copy)]
pub struct QpObjects {
    pub umem_id: u32,
    pub uar_page: u32,
    pub pdn: u32,
    pub eqn: u32,
    pub sq_depth: u32,
    pub cq_depth: u32,
    pub sq_off: u64,
    pub cq_off: u64,
    pub sq_dbrec_off: u64,
    pub cq_dbrec_off: u64,
}

/// CREATE_CQ: 64-byte CQEs, overrun ignore off (the device code keeps the consumer index in
/// the CQ doorbell record), ring and doorbell record in the umem.
pub fn create_cq_in(o: &QpObjects) -> Vec<u8> {
    let mut b = vec![0u8; CREATE_CQ_IN_BYTES];
    put(&mut b, 0, OPCODE, CMD_CREATE_CQ);
    put(&mut b, CQC, CQC_CQE_SZ, CQE_SZ_64);
    put(&mut b, CQC, CQC_LOG_CQ_SIZE, log2(o.cq_depth));
    put(&mut b, CQC, CQC_UAR_PAGE, o.uar_page as u64);
    put(&mut b, CQC, CQC_C_EQN, o.eqn as u64);
    put(&mut b, CQC, CQC_LOG_PAGE_SIZE, 0); // 4 KiB adapter pages
    put(&mut b, CQC, CQC_DBR_UMEM_VALID, 1);
    put(&mut b, CQC, CQC_DBR_UMEM_ID, o.umem_id as u64);
    put(&mut b, CQC, CQC_DBR_ADDR, o.cq_dbrec_off);
    put(&mut b, 0, CQ_UMEM_OFFSET, o.cq_off);
    put(&mut b, 0, CQ_UMEM_ID, o.umem_id as u64);
    put(&mut b, 0, CQ_UMEM_VALID, 1);
    b
}

/// CREATE_QP: RC, send queue only (zero-length RQ), no scatter-to-CQE, send CQ `cqn`.
pub fn create_qp_in(o: &QpObjects, cqn: u32) -> Vec<u8> {
    let mut b = vec![0u8; CREATE_QP_IN_BYTES];
    put(&mut b, 0, OPCODE, CMD_CREATE_QP);
    put(&mut b, QPC, QPC_ST, QPC_ST_RC);
    put(&mut b, QPC, QPC_PM_STATE, PM_STATE_MIGRATED);
    put(&mut b, QPC, QPC_PD, o.pdn as u64);
    put(&mut b, QPC, QPC_LOG_SQ_SIZE, log2(o.sq_depth));
    put(&mut b, QPC, QPC_UAR_PAGE, o.uar_page as u64);
    put(&mut b, QPC, QPC_LOG_PAGE_SIZE, 0);
    put(&mut b, QPC, QPC_CQN_SND, cqn as u64);
    put(&mut b, QPC, QPC_RQ_TYPE, RQ_TYPE_ZERO_LEN);
    put(&mut b, QPC, QPC_CS_REQ, 0);
    put(&mut b, QPC, QPC_CS_RES, 0);
    put(&mut b, QPC, QPC_DBR_ADDR, o.sq_dbrec_off);
    put(&mut b, QPC, QPC_DBR_UMEM_VALID, 1);
    put(&mut b, QPC, QPC_DBR_UMEM_ID, o.umem_id as u64);
    put(&mut b, 0, WQ_UMEM_OFFSET, o.sq_off);
    put(&mut b, 0, WQ_UMEM_ID, o.umem_id as u64);
    put(&mut b, 0, WQ_UMEM_VALID, 1);
    b
}

/// The remote end and link parameters of the INIT -> RTR -> RTS transitions (docs/gda.md,
/// "Queue pair attributes").
#[derive(Debug, Clone, PartialEq)]
pub struct PathAttrs {
    pub port: u8,
    pub pkey_index: u16,
    /// PRM MTU code (1: 256 B .. 5: 4096 B).
    pub mtu: u8,
    pub remote_qpn: u32,
    pub rq_psn: u32,
    pub sq_psn: u32,
    /// log2 of outstanding RDMA reads / atomics (as responder, as requester).
    pub log_rra_max: u8,
    pub log_sra_max: u8,
    pub min_rnr_nak: u8,
    pub ack_timeout: u8,
    pub retry_count: u8,
    pub rnr_retry: u8,
    /// InfiniBand: remote LID and SL; RoCE: the GRH fields and the remote MAC.
    pub rlid: u16,
    pub sl: u8,
    pub global: Option<Grh>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Grh {
    pub sgid_index: u8,
    pub dgid: [u8; 16],
    pub hop_limit: u8,
    pub traffic_class: u8,
    pub flow_label: u32,
    /// RoCE: the peer's MAC address, and whether the GID is RoCE v2 (UDP encapsulated).
    pub rmac: Option<[u8; 6]>,
    pub roce_v2: bool,
}

fn modify_head(cmd: u64, qpn: u32) -> Vec<u8> {
    let mut b = vec![0u8; MODIFY_QP_IN_BYTES];
    put(&mut b, 0, OPCODE, cmd);
    put(&mut b, 0, QPN_IN, qpn as u64);
    b
}

/// RST2INIT: remote read, write and atomics (8 bytes) allowed; port and pkey.
pub fn rst2init_in(qpn: u32, a: &PathAttrs) -> Vec<u8> {
    let mut b = modify_head(CMD_RST2INIT_QP, qpn);
    put(&mut b, QPC, QPC_PM_STATE, PM_STATE_MIGRATED);
    put(&mut b, QPC, QPC_ATOMIC_MODE, ATOMIC_MODE_UP_TO_8B);
    put(&mut b, QPC, QPC_RRE, 1);
    put(&mut b, QPC, QPC_RWE, 1);
    put(&mut b, QPC, QPC_RAE, 1);
    let p = QPC + QPC_PRIMARY_PATH;
    put(&mut b, p, ADS_VHCA_PORT_NUM, a.port as u64);
    put(&mut b, p, ADS_PKEY_INDEX, a.pkey_index as u64);
    b
}

/// The UDP source port RoCE v2 derives from a flow label (rdma-core's
/// `ibv_flow_label_to_udp_sport`): folded to 14 bits, in 0xC000..0xFFFF.
pub fn flow_label_to_udp_sport(fl: u32) -> u16 {
    let fl_low = fl & 0x03fff;
    let fl_high = fl & 0xfc000;
    ((fl_low ^ (fl_high >> 14)) as u16) | 0xc000
}

/// The symmetric flow label of a connection (the kernel's `rdma_calc_flow_label`).
pub fn calc_flow_label(local_qpn: u32, remote_qpn: u32) -> u32 {
    let mut v = local_qpn as u64 * remote_qpn as u64;
    v ^= v >> 20;
    v ^= v >> 40;
    (v & 0xfffff) as u32
}

/// INIT2RTR: MTU, remote QP, responder resources, and the address path (LID/SL on InfiniBand;
/// GID, traffic class, flow label, MAC, priority and UDP source port on RoCE).
pub fn init2rtr_in(qpn: u32, a: &PathAttrs) -> Vec<u8> {
    let mut b = modify_head(CMD_INIT2RTR_QP, qpn);
    put(&mut b, QPC, QPC_MTU, a.mtu as u64);
    put(&mut b, QPC, QPC_LOG_MSG_MAX, LOG_MSG_MAX_1G);
    put(&mut b, QPC, QPC_REMOTE_QPN, a.remote_qpn as u64);
    put(&mut b, QPC, QPC_LOG_RRA_MAX, a.log_rra_max as u64);
    put(&mut b, QPC, QPC_MIN_RNR_NAK, a.min_rnr_nak as u64);
    put(&mut b, QPC, QPC_NEXT_RCV_PSN, a.rq_psn as u64);
    let p = QPC + QPC_PRIMARY_PATH;
    put(&mut b, p, ADS_VHCA_PORT_NUM, a.port as u64);
    match &a.global {
        None => {
            put(&mut b, p, ADS_RLID, a.rlid as u64);
            put(&mut b, p, ADS_SL, a.sl as u64);
        }
        Some(g) => {
            let fl = if g.flow_label != 0 { g.flow_label } else { calc_flow_label(qpn, a.remote_qpn) };
            put(&mut b, p, ADS_SRC_ADDR_INDEX, g.sgid_index as u64);
            put(&mut b, p, ADS_HOP_LIMIT, g.hop_limit as u64);
            put(&mut b, p, ADS_TCLASS, g.traffic_class as u64);
            put(&mut b, p, ADS_FLOW_LABEL, fl as u64);
            let at = (p + ADS_RGID) / 8;
            b[at..at + 16].copy_from_slice(&g.dgid);
            match g.rmac {
                None => {
                    // InfiniBand with a GRH.
                    put(&mut b, p, ADS_GRH, 1);
                    put(&mut b, p, ADS_RLID, a.rlid as u64);
                    put(&mut b, p, ADS_SL, a.sl as u64);
                }
                Some(mac) => {
                    put(&mut b, p, ADS_ETH_PRIO, a.sl as u64);
                    put(&mut b, p, ADS_RMAC_47_32, u16::from_be_bytes([mac[0], mac[1]]) as u64);
                    put(&mut b, p, ADS_RMAC_31_0, u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]) as u64);
                    if g.roce_v2 {
                        put(&mut b, p, ADS_DSCP, (g.traffic_class >> 2) as u64);
                        put(&mut b, p, ADS_UDP_SPORT, flow_label_to_udp_sport(fl) as u64);
                    }
                }
            }
        }
    }
    b
}

/// RTR2RTS: requester resources, retries, timeouts, send PSN.
pub fn rtr2rts_in(qpn: u32, a: &PathAttrs) -> Vec<u8> {
    let mut b = modify_head(CMD_RTR2RTS_QP, qpn);
    put(&mut b, QPC, QPC_LOG_ACK_REQ_FREQ, LOG_ACK_REQ_FREQ_MAX);
    put(&mut b, QPC, QPC_LOG_SRA_MAX, a.log_sra_max as u64);
    put(&mut b, QPC, QPC_NEXT_SEND_PSN, a.sq_psn as u64);
    put(&mut b, QPC, QPC_RETRY_COUNT, a.retry_count as u64);
    put(&mut b, QPC, QPC_RNR_RETRY, a.rnr_retry as u64);
    put(&mut b, QPC + QPC_PRIMARY_PATH, ADS_ACK_TIMEOUT, a.ack_timeout as u64);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_round_trip_and_neighbours_untouched() {
        let mut b = vec![0xa5u8; 32];
        set(&mut b, 0x63, 5, 0x1f);
        assert_eq!(get(&b, 0x63, 5), 0x1f);
        assert_eq!(get(&b, 0x60, 3), 0b101); // the 3 bits before keep their value
        assert_eq!(get(&b, 0x68, 8), 0xa5);
        set(&mut b, 0x40, 64, 0x0102_0304_0506_0708);
        assert_eq!(&b[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        set(&mut b, 0x20, 32, 0xdead_beef);
        assert_eq!(&b[4..8], &[0xde, 0xad, 0xbe, 0xef]);
        set(&mut b, 0x08, 24, 0x12_3456);
        assert_eq!(&b[1..4], &[0x12, 0x34, 0x56]);
    }

    /// Fields set by one command must not overlap and must lie inside their structure.
    #[test]
    fn command_fields_are_disjoint() {
        let qpc = [
            QPC_ST,
            QPC_PM_STATE,
            QPC_PD,
            QPC_MTU,
            QPC_LOG_MSG_MAX,
            QPC_LOG_SQ_SIZE,
            QPC_UAR_PAGE,
            QPC_LOG_PAGE_SIZE,
            QPC_REMOTE_QPN,
            QPC_LOG_ACK_REQ_FREQ,
            QPC_LOG_SRA_MAX,
            QPC_RETRY_COUNT,
            QPC_RNR_RETRY,
            QPC_NEXT_SEND_PSN,
            QPC_CQN_SND,
            QPC_LOG_RRA_MAX,
            QPC_ATOMIC_MODE,
            QPC_RRE,
            QPC_RWE,
            QPC_RAE,
            QPC_MIN_RNR_NAK,
            QPC_NEXT_RCV_PSN,
            QPC_DBR_ADDR,
            QPC_RQ_TYPE,
            QPC_CS_REQ,
            QPC_CS_RES,
            QPC_DBR_UMEM_VALID,
            QPC_DBR_UMEM_ID,
        ];
        let ads = [
            ADS_PKEY_INDEX,
            ADS_GRH,
            ADS_MLID,
            ADS_RLID,
            ADS_ACK_TIMEOUT,
            ADS_SRC_ADDR_INDEX,
            ADS_STAT_RATE,
            ADS_HOP_LIMIT,
            ADS_TCLASS,
            ADS_FLOW_LABEL,
            (ADS_RGID, 128),
            ADS_DSCP,
            ADS_UDP_SPORT,
            ADS_ETH_PRIO,
            ADS_SL,
            ADS_VHCA_PORT_NUM,
            ADS_RMAC_47_32,
            ADS_RMAC_31_0,
        ];
        let cqc = [
            CQC_DBR_UMEM_VALID,
            CQC_CQE_SZ,
            CQC_OI,
            CQC_DBR_UMEM_ID,
            CQC_LOG_CQ_SIZE,
            CQC_UAR_PAGE,
            CQC_C_EQN,
            CQC_LOG_PAGE_SIZE,
            CQC_DBR_ADDR,
        ];
        for (fields, size) in [(&qpc[..], 0x740), (&ads[..], 0x160), (&cqc[..], 0x200)] {
            let mut used = vec![false; size];
            for &(off, bits) in fields {
                assert!(off + bits <= size, "field at {off:#x} past the structure");
                for u in &mut used[off..off + bits] {
                    assert!(!*u, "overlap at {off:#x}");
                    *u = true;
                }
            }
        }
        // The primary path lies inside the QP context; both contexts end where the commands'
        // next fields start.
        assert!(QPC_PRIMARY_PATH + 0x160 <= QPC_LOG_ACK_REQ_FREQ.0);
        assert_eq!(QPC + 0x740, WQ_UMEM_OFFSET.0);
        assert_eq!(CQC + 0x200, CQ_UMEM_OFFSET.0);
    }

    #[test]
    fn commands_carry_their_values() {
        let o = QpObjects {
            umem_id: 77,
            uar_page: 0x1234,
            pdn: 0xabc,
            eqn: 5,
            sq_depth: 1024,
            cq_depth: 2048,
            sq_off: 0,
            cq_off: 65536,
            sq_dbrec_off: 196608,
            cq_dbrec_off: 196736,
        };
        let cq = create_cq_in(&o);
        assert_eq!(get(&cq, OPCODE.0, 16), 0x400);
        assert_eq!(get(&cq, CQC + CQC_LOG_CQ_SIZE.0, 5), 11);
        assert_eq!(get(&cq, CQ_UMEM_OFFSET.0, 64), 65536);
        let qp = create_qp_in(&o, 0x99);
        assert_eq!(get(&qp, QPC + QPC_LOG_SQ_SIZE.0, 4), 10);
        assert_eq!(get(&qp, QPC + QPC_CQN_SND.0, 24), 0x99);
        assert_eq!(get(&qp, QPC + QPC_DBR_ADDR.0, 64), 196608);
        // RoCE v2 attributes as the setup computes them (traffic class 104: DSCP 26; SL 3).
        use super::super::setup::{Endpoint, LinkConfig, path_attrs};
        let ep = |qpn: u32| Endpoint {
            qpn,
            lid: 0,
            mtu: 5,
            link: 2,
            gid: [9; 16],
            mac: [1, 2, 3, 4, 5, 6],
            rkey: 0,
            heap_base: 0,
        };
        let a = path_attrs(&ep(0x41), &ep(0x42), 1, 3, &LinkConfig { traffic_class: 104, sl: 3 });
        let rtr = init2rtr_in(0x41, &a);
        let p = QPC + QPC_PRIMARY_PATH;
        assert_eq!(get(&rtr, QPN_IN.0, 24), 0x41);
        assert_eq!(get(&rtr, p + ADS_DSCP.0, 6), 26);
        assert_eq!(get(&rtr, p + ADS_ETH_PRIO.0, 3), 3);
        assert_eq!(get(&rtr, p + ADS_RMAC_31_0.0, 32), 0x0304_0506);
        let fl = calc_flow_label(0x41, 0x42);
        assert_eq!(get(&rtr, p + ADS_FLOW_LABEL.0, 20), fl as u64);
        assert_eq!(get(&rtr, p + ADS_UDP_SPORT.0, 16), flow_label_to_udp_sport(fl) as u64);
        assert!(flow_label_to_udp_sport(fl) >= 0xc000);
        let rts = rtr2rts_in(0x41, &a);
        assert_eq!(get(&rts, p + ADS_ACK_TIMEOUT.0, 5), 20);
        assert_eq!(get(&rts, QPC + QPC_RETRY_COUNT.0, 3), 7);
    }
}
