//! GDA queue-pair introspection. Only the GDA backend has queue pairs: with it (the NIC model,
//! docs/gda.md) the answers come from the device descriptors; otherwise they are "no provider"
//! and "not available", as upstream gives on IPC.

use std::ffi::c_int;

/// Upstream `QpInfoVendor` values.
pub const ROCSHMEM_QP_VENDOR_UNKNOWN: u32 = 0;

/// Device-visible resources of a GDA queue pair (upstream `rocshmem::QpInfo`, 96 bytes): the
/// vendor-neutral fields, then the provider union as five 64-bit words.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rocshmem_qp_info {
    pub sq_buf: u64,
    pub sq_prod: u64,
    pub cq_buf: u64,
    pub base_heap: u64,
    pub sq_depth: u32,
    pub cq_depth: u32,
    pub lkey: u32,
    pub rkey: u32,
    pub qpn: u32,
    pub vendor: u32,
    pub provider: [u64; 5],
}

const _: () = assert!(std::mem::size_of::<rocshmem_qp_info>() == 96);

/// The device queue pair to world PE `peer`, when the GDA backend runs.
#[cfg(feature = "test-doubles")]
fn device_qp(peer: c_int) -> Option<*const crate::transport::gda::abi::rocshmem_gda_qp> {
    let rt = crate::runtime::get_ready().ok()?;
    let g = rt.net.gda()?;
    let p = usize::try_from(peer).ok().filter(|p| *p < rt.n_pes())?;
    // SAFETY: one descriptor per world PE (qps_per_pe is 1).
    Some(unsafe { g.device_qps().add(p) })
}

/// No GDA transport in a build without the NIC model (feature `test-doubles`), so no queue pair.
#[cfg(not(feature = "test-doubles"))]
fn device_qp(_peer: c_int) -> Option<*const crate::transport::gda::abi::rocshmem_gda_qp> {
    None
}

/// The active GDA provider: mlx5 (3) when the GDA backend runs (its queue pairs are mlx5's),
/// else UNKNOWN (0).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_qp_introspect_provider() -> u32 {
    device_qp(0).map_or(ROCSHMEM_QP_VENDOR_UNKNOWN, |q| unsafe { (*q).vendor })
}

/// Whether `rocshmem_query_qp_info` can succeed: true when the GDA backend runs.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_qp_introspect_available() -> bool {
    device_qp(0).is_some()
}

/// Describes the queue pair device code uses to `peer` in context `ctx_id` (every context
/// shares one queue pair per peer in this build). False, with `out` untouched, without the GDA
/// backend or for a bad peer or context. `provider` holds the doorbell records and register
/// (SQ doorbell record, CQ doorbell record, doorbell), then the CQ's consumer counter.
///
/// # Safety
/// `out` must be NULL or valid for writing one `rocshmem_qp_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_query_qp_info(peer: c_int, ctx_id: c_int, out: *mut rocshmem_qp_info) -> bool {
    let Some(q) = device_qp(peer) else { return false };
    if ctx_id < 0 || out.is_null() {
        return false;
    }
    // SAFETY: a live descriptor (the runtime is up); its set-up fields do not change.
    let q = unsafe { &*q };
    let info = rocshmem_qp_info {
        sq_buf: q.sq as u64,
        sq_prod: &q.prod_idx as *const u64 as u64,
        cq_buf: q.cq as u64,
        base_heap: q.local_base,
        sq_depth: q.sq_depth,
        cq_depth: q.cq_depth,
        lkey: q.lkey,
        rkey: q.rkey,
        qpn: q.qpn,
        vendor: q.vendor,
        provider: [q.sq_dbrec as u64, q.cq_dbrec as u64, q.db as u64, &q.cq_ci as *const u64 as u64, 0],
    };
    // SAFETY: checked non-null; the caller's 96 bytes.
    unsafe { *out = info };
    true
}
