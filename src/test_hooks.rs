//! Internal entry points (`rocshmemi_gda_*`, not upstream API) through which the tests drive
//! GDA pieces directly: the NIC model (ctests/gda/model_test), and the NIC-side parsers checked
//! against rdma-core (ctests/gda/layout_test). Declared by the tests themselves; they sit
//! outside `api/` (above it: they use its boundary helpers) so cbindgen does not put them in
//! rocshmem.h.

use crate::api::{status_call, value_call};
use crate::error::Error;
use crate::runtime;
use crate::transport::gda::abi::*;
use crate::transport::gda::devx;
use crate::transport::gda::mlx5;
use crate::transport::gda::model::{Model, Mr, Peer, fresh_key};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

static MODEL: Mutex<Option<Model>> = Mutex::new(None);

/// Collective: starts this PE's NIC model with a queue pair to every PE (itself included) and
/// this PE's heap registered; `*qps` receives the `n_pes` device descriptors (index = peer).
///
/// # Safety
/// `cfg` and `qps` must be valid pointers (`cfg` may be NULL: defaults).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmemi_gda_model_start(
    cfg: *const rocshmem_gda_model_config,
    qps: *mut *mut rocshmem_gda_qp,
) -> c_int {
    status_call("rocshmemi_gda_model_start", || {
        let rt = runtime::get()?;
        if qps.is_null() {
            return Err(Error::NullPointer("qps"));
        }
        let n = rt.n_pes();
        if !rt.heap.host_accessible() || (0..n).any(|p| !rt.heap.mapped(p)) {
            return Err(Error::Unsupported(
                "the GDA NIC model runs on the host platform with every PE's heap mapped (ROCSHMEM_GPU=host, one node)"
                    .into(),
            ));
        }
        let mut cfg = if cfg.is_null() { rocshmem_gda_model_config::default() } else { unsafe { *cfg } };
        if cfg.sq_depth == 0 {
            cfg.sq_depth = u32::try_from(rt.cfg.gda_sq_size).unwrap_or(0);
        }
        let mut slot = MODEL.lock().unwrap();
        if slot.is_some() {
            return Err(Error::invalid("the GDA NIC model is already running on this PE"));
        }
        let me = rt.my_pe();
        let base = rt.heap.user_base(me) as u64;
        let len = rt.cfg.heap_size as u64;
        let key = fresh_key(me);
        let mut msg = Vec::with_capacity(20);
        msg.extend_from_slice(&base.to_le_bytes());
        msg.extend_from_slice(&len.to_le_bytes());
        msg.extend_from_slice(&key.to_le_bytes());
        let all = rt.job.allgather(&msg)?;
        let peers: Vec<Peer> = all
            .iter()
            .enumerate()
            .map(|(p, m)| Peer {
                base: u64::from_le_bytes(m[0..8].try_into().unwrap()),
                len: u64::from_le_bytes(m[8..16].try_into().unwrap()),
                rkey: u32::from_le_bytes(m[16..20].try_into().unwrap()),
                here: rt.heap.user_base(p),
            })
            .collect();
        let local = Mr { base, len, key, here: base as usize };
        let mut model = Model::start(me, &cfg, local, &[], &peers)?;
        // SAFETY: checked non-null above.
        unsafe { *qps = model.descriptors() };
        *slot = Some(model);
        Ok(())
    })
}

/// Collective: stops this PE's model (waiting device threads give up), then waits for every PE.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmemi_gda_model_stop() -> c_int {
    status_call("rocshmemi_gda_model_stop", || {
        let rt = runtime::get()?;
        let model = MODEL.lock().unwrap().take();
        let Some(mut model) = model else {
            return Err(Error::invalid("the GDA NIC model is not running on this PE"));
        };
        model.stop();
        drop(model);
        rt.job.barrier()
    })
}

fn with_model<T>(call: &'static str, fail: T, f: impl FnOnce(&Model) -> crate::error::Result<T>) -> T {
    value_call(call, fail, || {
        let slot = MODEL.lock().unwrap();
        let model = slot.as_ref().ok_or_else(|| Error::invalid("the GDA NIC model is not running on this PE"))?;
        f(model)
    })
}

/// Makes the `n`-th next WQE (0: the next) on the queue pair to `peer` complete with `syndrome`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmemi_gda_model_inject(peer: c_int, n: u64, syndrome: u8) -> c_int {
    with_model("rocshmemi_gda_model_inject", 1, |m| m.inject(peer.max(0) as usize, n, syndrome).map(|()| 0))
}

/// Empties every queue pair of this PE and clears its counters and error (no kernel may run).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmemi_gda_model_reset() -> c_int {
    with_model("rocshmemi_gda_model_reset", 1, |m| {
        m.reset();
        Ok(0)
    })
}

/// Copies the model's counters.
///
/// # Safety
/// `out` must be valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmemi_gda_model_stats(out: *mut rocshmem_gda_model_stats) -> c_int {
    with_model("rocshmemi_gda_model_stats", 1, |m| {
        if out.is_null() {
            return Err(Error::NullPointer("out"));
        }
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = m.stats() };
        Ok(0)
    })
}

/// Parses `len` bytes of one WQE as the model does: 0, or the syndrome a NIC would report.
///
/// # Safety
/// `wqe` valid for `len` bytes, `out` for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmemi_gda_parse_wqe(
    wqe: *const c_void,
    len: usize,
    out: *mut rocshmem_gda_wqe_desc,
) -> c_int {
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(wqe as *const u8, len) };
    match mlx5::parse_wqe(bytes) {
        Ok(d) => {
            // SAFETY: the caller's contract.
            unsafe { *out = d };
            0
        }
        Err(s) => s as c_int,
    }
}

/// Writes a 64-byte CQE as the model does (the `tail` word included).
///
/// # Safety
/// `out` valid for 64 bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rocshmemi_gda_encode_cqe(
    opcode: u8,
    owner: u8,
    wqe_counter: u16,
    wqe_opcode: u8,
    qpn: u32,
    byte_cnt: u32,
    syndrome: u8,
    vendor_syndrome: u8,
    out: *mut u8,
) {
    let c = mlx5::Cqe { opcode, owner, wqe_counter, wqe_opcode, qpn, byte_cnt, syndrome, vendor_syndrome };
    let mut bytes = [0u8; mlx5::CQE_BYTES];
    let tail = mlx5::encode_cqe(&c, &mut bytes);
    bytes[60..64].copy_from_slice(&tail.to_le_bytes());
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, mlx5::CQE_BYTES) };
}

/// Sets `bits` bits at bit offset `off` of a big-endian PRM structure (DEVX_SET), as the
/// command builders do.
///
/// # Safety
/// `buf` valid for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmemi_gda_devx_set(buf: *mut u8, len: usize, off: usize, bits: usize, value: u64) {
    // SAFETY: the caller's contract.
    let b = unsafe { std::slice::from_raw_parts_mut(buf, len) };
    devx::set(b, off, bits, value);
}

/// Row `i` of the table of rdma-core structure layouts the core declares itself (name
/// "struct.field", its offset, and the structure's size); false past the end. The layout test
/// compares every row with the real headers.
///
/// # Safety
/// `name` valid for writing 64 bytes; `offset` and `size` for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmemi_gda_ffi_layout(
    i: usize,
    name: *mut c_char,
    offset: *mut usize,
    size: *mut usize,
) -> bool {
    let Some((n, o, s)) = crate::transport::gda::verbs::LAYOUT.get(i) else { return false };
    let text = n.as_bytes();
    // SAFETY: the caller's contract; names are shorter than 63 bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), name as *mut u8, text.len().min(63));
        *name.add(text.len().min(63)) = 0;
        *offset = *o;
        *size = *s;
    }
    true
}
