//! `StreamArgs`, the one argument of every stream helper kernel: a leaf, which the GPU
//! runtimes launch the kernels with and the stream-ordered calls (`src/stream.rs`) fill.

use std::ffi::c_void;

/// The one argument of every helper kernel: `rocshmem_stream_args` of
/// device/stream/stream_args.h (same layout, checked on both sides).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamArgs {
    pub ctx_opaque: *mut c_void,
    pub ctx_team: *mut c_void,
    pub team: *mut u64,
    pub dest: *mut c_void,
    pub source: *const c_void,
    /// Bytes, elements for reductions, or the amo kernel's width (4 or 8).
    pub count: u64,
    /// Signal word, or the word the amo kernel writes the old value to.
    pub sig_addr: *mut u64,
    /// Signal value, the comparison value of signal_wait_until, or the amo kernel's operand.
    pub value: u64,
    /// Target PE, or the root of broadcastmem.
    pub pe: i32,
    /// sig_op, the comparison of signal_wait_until, or the amo kernel's `AmoOp`.
    pub op: i32,
    /// The comparison value of the amo kernel's compare-and-swap.
    pub cond: u64,
}

const _: () = assert!(std::mem::size_of::<StreamArgs>() == 80);
const _: () = assert!(std::mem::offset_of!(StreamArgs, pe) == 64);
const _: () = assert!(std::mem::offset_of!(StreamArgs, cond) == 72);

// SAFETY: plain addresses and values handed to a kernel; the memory they name is the user's,
// ordered by the stream.
unsafe impl Send for StreamArgs {}

impl Default for StreamArgs {
    fn default() -> StreamArgs {
        StreamArgs {
            ctx_opaque: std::ptr::null_mut(),
            ctx_team: std::ptr::null_mut(),
            team: std::ptr::null_mut(),
            dest: std::ptr::null_mut(),
            source: std::ptr::null(),
            count: 0,
            sig_addr: std::ptr::null_mut(),
            value: 0,
            pe: 0,
            op: 0,
            cond: 0,
        }
    }
}
