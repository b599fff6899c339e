//! GDA queue-pair introspection. Only the GDA backend has queue pairs; this build has none,
//! so the answers are "no provider" and "not available", as upstream gives on IPC.

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

/// The active GDA provider: always UNKNOWN (0) here, as no GDA backend is built.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_qp_introspect_provider() -> u32 {
    ROCSHMEM_QP_VENDOR_UNKNOWN
}

/// Whether `rocshmem_query_qp_info` can succeed: false without a GDA backend.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_qp_introspect_available() -> bool {
    false
}

/// Describes the queue pair to `peer` in context `ctx_id` (> 0). Returns false: no GDA
/// backend, so no queue pairs; `out` is left untouched.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_query_qp_info(peer: c_int, ctx_id: c_int, out: *mut rocshmem_qp_info) -> bool {
    let _ = (peer, ctx_id, out);
    false
}
