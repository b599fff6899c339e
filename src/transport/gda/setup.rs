//! Building queue pairs on an mlx5 NIC, the way upstream (`provider_gda_mlx5.cpp`) and NVSHMEM
//! do: open the device with DEVX, a protection domain, the heap registered (host memory with
//! `ibv_reg_mr`, GPU memory through a dma-buf with `ibv_reg_dmabuf_mr`), and per peer: one umem
//! holding send queue, CQ and doorbell records (layout.rs), a dedicated UAR page, the CQ and
//! the RC QP as DEVX objects (devx.rs), the exchange of [`Endpoint`]s through the bootstrap,
//! and RST -> INIT -> RTR -> RTS.
//!
//! **Never run on a NIC** (there is none here; docs/gda.md lists what has not run). What can be
//! checked without one is: the endpoint exchange format and the queue pair attributes
//! ([`path_attrs`], tests below), the commands (devx.rs), the memory layout (layout.rs), the
//! structure layouts against rdma-core's headers and the symbol table (verbs.rs). Mapping the
//! UAR and the queue memory for the GPU (`cudaHostRegister` with `cudaHostRegisterIoMemory` /
//! `hipHostRegister` with `hipHostRegisterIoMemory`) belongs to the GPU runtimes and is phase B.

use super::devx::{self, Grh, PathAttrs, QpObjects};
use super::discovery::Choice;
use super::layout::QpLayout;
use super::verbs::*;
use std::ffi::{c_int, c_void};

/// What a PE tells each peer about its end of their queue pair (and its heap registration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub qpn: u32,
    pub lid: u16,
    /// PRM/verbs MTU code of the port (1: 256 B .. 5: 4096 B).
    pub mtu: u8,
    /// 0 InfiniBand, 1 RoCE v1, 2 RoCE v2.
    pub link: u8,
    pub gid: [u8; 16],
    pub mac: [u8; 6],
    pub rkey: u32,
    pub heap_base: u64,
}

/// Bytes of an encoded [`Endpoint`].
pub const ENDPOINT_BYTES: usize = 44;

impl Endpoint {
    pub fn to_bytes(&self) -> [u8; ENDPOINT_BYTES] {
        let mut b = [0u8; ENDPOINT_BYTES];
        b[0..4].copy_from_slice(&self.qpn.to_le_bytes());
        b[4..6].copy_from_slice(&self.lid.to_le_bytes());
        b[6] = self.mtu;
        b[7] = self.link;
        b[8..24].copy_from_slice(&self.gid);
        b[24..30].copy_from_slice(&self.mac);
        b[32..36].copy_from_slice(&self.rkey.to_le_bytes());
        b[36..44].copy_from_slice(&self.heap_base.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<Endpoint> {
        if b.len() != ENDPOINT_BYTES {
            return None;
        }
        Some(Endpoint {
            qpn: u32::from_le_bytes(b[0..4].try_into().ok()?),
            lid: u16::from_le_bytes(b[4..6].try_into().ok()?),
            mtu: b[6],
            link: b[7],
            gid: b[8..24].try_into().ok()?,
            mac: b[24..30].try_into().ok()?,
            rkey: u32::from_le_bytes(b[32..36].try_into().ok()?),
            heap_base: u64::from_le_bytes(b[36..44].try_into().ok()?),
        })
    }
}

/// Link settings from the environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkConfig {
    /// `ROCSHMEM_GDA_TRAFFIC_CLASS` (RoCE: the DSCP is its upper 6 bits).
    pub traffic_class: u8,
    /// `ROCSHMEM_GDA_SERVICE_LEVEL` (InfiniBand SL, RoCE priority).
    pub sl: u8,
}

/// The INIT -> RTR -> RTS attributes of the queue pair from `local` to `remote`: the smaller
/// MTU of the two ports, 16 outstanding reads/atomics each way, an ACK timeout of 4.096 us x
/// 2^20 (about 4 s), 7 retries, RNR retry 7 and an RNR NAK timer of 12 (verbs' and NVSHMEM's
/// usual values), PSNs 0; a GRH on RoCE (hop limit 255, the traffic class) with the peer's GID
/// and MAC.
pub fn path_attrs(local: &Endpoint, remote: &Endpoint, port: u8, sgid_index: u8, link: &LinkConfig) -> PathAttrs {
    let global = (local.link != 0).then_some(Grh {
        sgid_index,
        dgid: remote.gid,
        hop_limit: 255,
        traffic_class: link.traffic_class,
        flow_label: 0,
        rmac: Some(remote.mac),
        roce_v2: local.link == 2,
    });
    PathAttrs {
        port,
        pkey_index: 0,
        mtu: local.mtu.min(remote.mtu).max(1),
        remote_qpn: remote.qpn,
        rq_psn: 0,
        sq_psn: 0,
        log_rra_max: 4,
        log_sra_max: 4,
        min_rnr_nak: 12,
        ack_timeout: 20,
        retry_count: 7,
        rnr_retry: 7,
        rlid: remote.lid,
        sl: link.sl,
        global,
    }
}

/// The MAC of the network device behind GID `index` of `port` (RoCE), from sysfs.
pub fn gid_mac(sysfs: &std::path::Path, nic: &str, port: u8, index: u16) -> Option<[u8; 6]> {
    let ndev =
        std::fs::read_to_string(sysfs.join(format!("class/infiniband/{nic}/ports/{port}/gid_attrs/ndevs/{index}")))
            .ok()?;
    let text = std::fs::read_to_string(sysfs.join(format!("class/net/{}/address", ndev.trim()))).ok()?;
    let bytes: Vec<u8> = text.trim().split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
    bytes.try_into().ok()
}

/// An opened mlx5 device with its protection domain. Never run on a NIC.
pub struct Device {
    pub verbs: Verbs,
    pub ctx: *mut IbvContext,
    pub pd: *mut IbvPd,
    pub pdn: u32,
    pub port: u8,
    pub port_attr: IbvPortAttr,
}

/// One queue pair's NIC objects. Never run on a NIC.
pub struct HwQp {
    pub umem: *mut Mlx5dvDevxUmem,
    pub uar: *mut Mlx5dvDevxUar,
    pub cq: *mut DevxObj,
    pub qp: *mut DevxObj,
    pub cqn: u32,
    pub qpn: u32,
}

fn devx_status(out: &[u8], what: &str) -> Result<(), String> {
    let status = devx::get(out, devx::OUT_STATUS.0, devx::OUT_STATUS.1);
    if status != 0 {
        let synd = devx::get(out, devx::OUT_SYNDROME.0, devx::OUT_SYNDROME.1);
        return Err(format!("{what}: the NIC refused the command (status {status:#x}, syndrome {synd:#x})"));
    }
    Ok(())
}

impl Device {
    /// Opens `choice.nic` with DEVX and allocates a protection domain.
    pub fn open(verbs: Verbs, choice: &Choice) -> Result<Device, String> {
        let mut n: c_int = 0;
        // SAFETY: rdma-core's device list API; the list is freed before returning.
        let ctx = unsafe {
            let list = (verbs.get_device_list)(&mut n);
            if list.is_null() {
                return Err("ibv_get_device_list failed".into());
            }
            let mut ctx = std::ptr::null_mut();
            for i in 0..n.max(0) as usize {
                let d = *list.add(i);
                let name = std::ffi::CStr::from_ptr((verbs.get_device_name)(d)).to_string_lossy();
                if name == choice.nic {
                    let mut attr = Mlx5dvContextAttr { flags: MLX5DV_CONTEXT_FLAGS_DEVX, comp_mask: 0 };
                    ctx = (verbs.dv_open_device)(d, &mut attr);
                }
            }
            (verbs.free_device_list)(list);
            ctx
        };
        if ctx.is_null() {
            return Err(format!(
                "mlx5dv_open_device({}) with DEVX failed (is the NIC an mlx5 with DEVX support?)",
                choice.nic
            ));
        }
        // SAFETY: an open context.
        let pd = unsafe { (verbs.alloc_pd)(ctx) };
        if pd.is_null() {
            return Err(format!("ibv_alloc_pd on {} failed", choice.nic));
        }
        let mut dv_pd = Mlx5dvPd::default();
        let mut obj = Mlx5dvObj { others: [[std::ptr::null_mut(); 2]; 6], pd_in: pd, pd_out: &mut dv_pd };
        // SAFETY: the object names our PD.
        if unsafe { (verbs.dv_init_obj)(&mut obj, MLX5DV_OBJ_PD) } != 0 {
            return Err("mlx5dv_init_obj(PD) failed".into());
        }
        let mut port_attr = IbvPortAttr::default();
        // SAFETY: the structure is at least as large as rdma-core's.
        if unsafe { (verbs.query_port)(ctx, choice.port, &mut port_attr) } != 0 {
            return Err(format!("ibv_query_port({} port {}) failed", choice.nic, choice.port));
        }
        Ok(Device { verbs, ctx, pd, pdn: dv_pd.pdn, port: choice.port, port_attr })
    }

    /// Registers `[addr, addr + len)` for local and remote read, write and atomics; `dmabuf`:
    /// GPU memory exported as (fd, offset). Returns (lkey, rkey).
    ///
    /// # Safety
    /// The range must be memory of this process that stays valid until it is deregistered.
    pub unsafe fn register(
        &self,
        addr: *mut c_void,
        len: usize,
        dmabuf: Option<(c_int, u64)>,
        relaxed: bool,
    ) -> Result<(u32, u32), String> {
        let mut access =
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
        if relaxed {
            access |= IBV_ACCESS_RELAXED_ORDERING;
        }
        // SAFETY: the caller passes memory of this process that stays until deregistration.
        let mr = unsafe {
            match dmabuf {
                Some((fd, off)) => (self.verbs.reg_dmabuf_mr)(self.pd, off, len, addr as u64, fd, access),
                None => (self.verbs.reg_mr)(self.pd, addr, len, access),
            }
        };
        if mr.is_null() {
            return Err(format!("registering {len} bytes with the NIC failed ({})", std::io::Error::last_os_error()));
        }
        // SAFETY: a registration rdma-core returned.
        let m = unsafe { *mr };
        Ok((m.lkey, m.rkey))
    }

    /// Creates the CQ and the QP of one queue pair in `mem` (laid out as `l`, registered as umem).
    ///
    /// # Safety
    /// `mem` must be `l.umem_bytes()` bytes of page-aligned memory that outlives the queue pair.
    pub unsafe fn create_qp(&self, l: &QpLayout, mem: *mut c_void) -> Result<HwQp, String> {
        let v = &self.verbs;
        let mut umem_in = Mlx5dvDevxUmemIn {
            addr: mem,
            size: l.umem_bytes(),
            access: IBV_ACCESS_LOCAL_WRITE as u32,
            pgsz_bitmap: !(super::layout::PAGE as u64 - 1),
            comp_mask: 0,
            dmabuf_fd: -1,
        };
        // SAFETY: DEVX calls on our context with buffers of the PRM sizes.
        unsafe {
            let umem = (v.devx_umem_reg_ex)(self.ctx, &mut umem_in);
            if umem.is_null() {
                return Err("mlx5dv_devx_umem_reg_ex failed".into());
            }
            let mut uar = (v.devx_alloc_uar)(self.ctx, MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED);
            if uar.is_null() {
                uar = (v.devx_alloc_uar)(self.ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
            }
            if uar.is_null() {
                return Err("mlx5dv_devx_alloc_uar failed".into());
            }
            let mut eqn = 0u32;
            if (v.devx_query_eqn)(self.ctx, 0, &mut eqn) != 0 {
                return Err("mlx5dv_devx_query_eqn failed".into());
            }
            let o = QpObjects {
                umem_id: (*umem).umem_id,
                uar_page: (*uar).page_id,
                pdn: self.pdn,
                eqn,
                sq_depth: l.sq_depth,
                cq_depth: l.cq_depth,
                sq_off: l.sq_off as u64,
                cq_off: l.cq_off as u64,
                sq_dbrec_off: l.sq_dbrec_off as u64,
                cq_dbrec_off: l.cq_dbrec_off as u64,
            };
            let mut out = [0u8; devx::OUT_BYTES];
            let cq_in = devx::create_cq_in(&o);
            let cq =
                (v.devx_obj_create)(self.ctx, cq_in.as_ptr().cast(), cq_in.len(), out.as_mut_ptr().cast(), out.len());
            if cq.is_null() {
                devx_status(&out, "CREATE_CQ")?;
                return Err("mlx5dv_devx_obj_create(CREATE_CQ) failed".into());
            }
            let cqn = devx::get(&out, devx::OUT_OBJ.0, devx::OUT_OBJ.1) as u32;
            let qp_in = devx::create_qp_in(&o, cqn);
            let qp =
                (v.devx_obj_create)(self.ctx, qp_in.as_ptr().cast(), qp_in.len(), out.as_mut_ptr().cast(), out.len());
            if qp.is_null() {
                devx_status(&out, "CREATE_QP")?;
                return Err("mlx5dv_devx_obj_create(CREATE_QP) failed".into());
            }
            let qpn = devx::get(&out, devx::OUT_OBJ.0, devx::OUT_OBJ.1) as u32;
            Ok(HwQp { umem, uar, cq, qp, cqn, qpn })
        }
    }

    /// RST -> INIT -> RTR -> RTS with `attrs`.
    pub fn connect(&self, qp: &HwQp, attrs: &PathAttrs) -> Result<(), String> {
        for (what, cmd) in [
            ("RST2INIT_QP", devx::rst2init_in(qp.qpn, attrs)),
            ("INIT2RTR_QP", devx::init2rtr_in(qp.qpn, attrs)),
            ("RTR2RTS_QP", devx::rtr2rts_in(qp.qpn, attrs)),
        ] {
            let mut out = [0u8; devx::OUT_BYTES];
            // SAFETY: a DEVX object of ours and PRM-sized buffers.
            let rc = unsafe {
                (self.verbs.devx_obj_modify)(qp.qp, cmd.as_ptr().cast(), cmd.len(), out.as_mut_ptr().cast(), out.len())
            };
            if rc != 0 {
                devx_status(&out, what)?;
                return Err(format!("mlx5dv_devx_obj_modify({what}) failed: errno {rc}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(qpn: u32, mtu: u8, link: u8) -> Endpoint {
        Endpoint {
            qpn,
            lid: 7,
            mtu,
            link,
            gid: [qpn as u8; 16],
            mac: [2, 0, 0, 0, 0, qpn as u8],
            rkey: 0x1234,
            heap_base: 0x7f00_0000_0000,
        }
    }

    #[test]
    fn endpoint_round_trips() {
        let e = ep(0xabcdef, 5, 2);
        assert_eq!(Endpoint::from_bytes(&e.to_bytes()), Some(e));
        assert_eq!(Endpoint::from_bytes(&[0; 10]), None);
    }

    #[test]
    fn attributes_for_roce_v2_and_infiniband() {
        let link = LinkConfig { traffic_class: 106, sl: 3 };
        let a = path_attrs(&ep(1, 5, 2), &ep(2, 3, 2), 1, 3, &link);
        assert_eq!((a.mtu, a.remote_qpn, a.ack_timeout, a.retry_count), (3, 2, 20, 7));
        let g = a.global.as_ref().unwrap();
        assert_eq!(
            (g.sgid_index, g.traffic_class, g.hop_limit, g.roce_v2, g.rmac),
            (3, 106, 255, true, Some([2, 0, 0, 0, 0, 2]))
        );
        let ib = path_attrs(&ep(1, 4, 0), &ep(2, 5, 0), 1, 0, &link);
        assert_eq!((ib.global.is_none(), ib.rlid, ib.sl, ib.mtu), (true, 7, 3, 4));
        // The command carries the SL on InfiniBand.
        let rtr = devx::init2rtr_in(1, &ib);
        let p = devx::QPC + devx::QPC_PRIMARY_PATH;
        assert_eq!(devx::get(&rtr, p + devx::ADS_SL.0, devx::ADS_SL.1), 3);
        assert_eq!(devx::get(&rtr, p + devx::ADS_RLID.0, devx::ADS_RLID.1), 7);
    }

    #[test]
    fn roce_mac_from_sysfs() {
        let s = super::super::discovery::tests::FakeSys::new("mac");
        let gids = [("0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2")];
        s.nic("mlx5_0", "mlx5_core", "pci0000:00/0000:00:01.0", &[("4: ACTIVE", "Ethernet", &gids[..])]);
        let nd = s.root.join("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs");
        std::fs::create_dir_all(&nd).unwrap();
        std::fs::write(nd.join("0"), "eth7\n").unwrap();
        std::fs::create_dir_all(s.root.join("class/net/eth7")).unwrap();
        std::fs::write(s.root.join("class/net/eth7/address"), "0c:42:a1:00:be:ef\n").unwrap();
        assert_eq!(gid_mac(&s.root, "mlx5_0", 1, 0), Some([0x0c, 0x42, 0xa1, 0x00, 0xbe, 0xef]));
        assert_eq!(gid_mac(&s.root, "mlx5_0", 1, 1), None);
    }
}
