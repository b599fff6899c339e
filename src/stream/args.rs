//! `StreamArgs`, the one argument of every stream helper kernel: a leaf, so that the GPU
//! runtimes (`gpu/`) that launch the kernels need nothing else of `stream/`.

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
    /// Bytes, or elements for reductions.
    pub count: u64,
    pub sig_addr: *mut u64,
    /// Signal value, or the comparison value of signal_wait_until.
    pub value: u64,
    /// Target PE, or the root of broadcastmem.
    pub pe: i32,
    /// sig_op, or the comparison of signal_wait_until.
    pub op: i32,
    pub reserved: [i32; 2],
}

const _: () = assert!(std::mem::size_of::<StreamArgs>() == 80);
const _: () = assert!(std::mem::offset_of!(StreamArgs, pe) == 64);

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
            reserved: [0; 2],
        }
    }
}
