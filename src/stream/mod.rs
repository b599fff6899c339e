//! The stream-ordered host API (`rocshmem_*_on_stream`): every call enqueues one helper kernel
//! (device/stream/grid.hpp) on the caller's stream and returns at once: one work-group, or for
//! a large collective (alltoall, broadcast, reduction) several ([`groups`]).
//!
//! - Host platform: a stream is an ordered host queue owned by the core ([`host`]): a worker
//!   thread per queue runs its operations in order, each on the host launcher's CPU threads;
//!   NULL is a per-process default queue.
//! - NVIDIA: the kernels are PTX embedded at build time, loaded by the CUDA runtime layer and
//!   launched with `cuLaunchKernel` on the caller's stream; large putmem/getmem are a copy on
//!   the stream instead ([`GpuRuntime::stream_launch`], [`GpuRuntime::stream_copy`]).
//!
//! Nothing here synchronises the device or touches the legacy stream, so the calls can be
//! captured in a CUDA/HIP graph. See docs/streams.md.

pub mod host;
pub mod pack;

use crate::error::{Error, Result};
use crate::gpu::Platform;
use crate::runtime::Runtime;
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

/// The helper kernels of the untyped calls (device/stream/kernels.hpp, same order); the typed
/// reductions are `reduce_<type>_<op>`.
pub const CORE_KERNELS: [&str; 13] = [
    "putmem",
    "getmem",
    "putmem_signal",
    "signal_wait_until",
    "signal_add",
    "signal_set",
    "quiet",
    "barrier_all",
    "barrier",
    "sync_all",
    "team_sync",
    "alltoallmem",
    "broadcastmem",
];

/// Threads of each work-group a kernel runs on. Waits, signals and quiet need one thread;
/// barriers one wave; data movement a full work-group on a GPU, or for a small put/get one
/// thread per 16 bytes in whole waves (a 1024-thread block costs more to start and to sync
/// than an 8-byte put: 3.5 us against NVSHMEM's 1.7 us per call on the H200 pair). On the
/// host platform every thread is a CPU thread started per launch, so fewer.
pub fn threads(platform: Platform, kernel: &str, bytes: u64) -> u32 {
    let single = matches!(kernel, "signal_wait_until" | "signal_add" | "signal_set" | "quiet");
    let sync = matches!(kernel, "barrier_all" | "barrier" | "sync_all" | "team_sync");
    let rma = matches!(kernel, "putmem" | "getmem" | "putmem_signal");
    match (platform, single, sync) {
        (_, true, _) => 1,
        (Platform::Host, false, _) => 32,
        (_, false, true) => 32,
        _ if rma => (bytes.div_ceil(16).div_ceil(32) * 32).clamp(32, 1024) as u32,
        _ => 1024,
    }
}

/// Bytes of a collective's data per work-group on a GPU: a collective of `spread` bytes runs
/// on `spread / GPU_BYTES_PER_GROUP` work-groups (at least one, at most the multiprocessor
/// count). Below twice this, one work-group, as before: a small call pays nothing for the grid
/// (no grid slot is touched on one work-group). 8 KiB is two 4-byte elements or half a 16-byte
/// word per thread of a 1024-thread work-group; a first choice, to be tuned on the H200 pair.
pub const GPU_BYTES_PER_GROUP: u64 = 8 << 10;
/// The same on the host platform, where every thread is a CPU thread started per launch: a
/// few work-groups of 32 threads, so that the host tests run the multi-work-group kernels.
pub const HOST_BYTES_PER_GROUP: u64 = 4 << 10;
/// At most this many work-groups per call on the host platform.
pub const HOST_MAX_GROUPS: u32 = 4;

/// Work-groups for a collective kernel that may spread `spread` bytes over the grid (0 for
/// every other kernel, and for in-place reductions, which stay on one work-group): one per
/// `per_group` bytes, at least 1, at most `max`.
pub fn groups(spread: u64, per_group: u64, max: u32) -> u32 {
    (spread / per_group.max(1)).clamp(1, u64::from(max.max(1))) as u32
}

/// Where a putmem/getmem of this many bytes becomes a copy on the stream (a GPU's copy engine)
/// instead of a kernel. One work-group of stores is faster below (no copy-engine start-up),
/// the copy engine above; see docs/streams.md.
pub const COPY_THRESHOLD: usize = 32 << 10;

/// One stream operation.
pub enum Work {
    /// Run helper kernel `name` with `args`; a collective spreads `spread` bytes over several
    /// work-groups ([`groups`]), 0: one work-group.
    Kernel { name: String, args: StreamArgs, spread: u64 },
    /// Copy `len` bytes from `src` to `dst` (any two addresses of this process), in order.
    Copy { dst: *mut u8, src: *const u8, len: usize },
}

// SAFETY: as StreamArgs.
unsafe impl Send for Work {}

/// Enqueues `work` on `stream` (NULL: the default stream) for `call`; returns at once.
///
/// # Safety
/// `stream` must be NULL or a stream of the platform (a host queue on the host platform); the
/// memory the work names must stay valid until the stream has run it.
pub unsafe fn enqueue(rt: &Runtime, call: &'static str, stream: *mut c_void, work: Work) -> Result<()> {
    let platform = rt.gpu.platform();
    if platform == Platform::Host {
        return host::enqueue(call, stream as usize, work);
    }
    if host::is_queue(stream as usize) {
        return Err(Error::invalid(format!(
            "stream {stream:p} is a host-platform queue (rocshmem_host_stream_create), but this process runs the {} \
             platform: pass one of its streams (cudaStream_t / hipStream_t, or NULL)",
            platform.name()
        )));
    }
    // SAFETY: the caller's stream and memory.
    unsafe {
        match work {
            Work::Kernel { name, args, spread } => {
                let blocks = groups(spread, GPU_BYTES_PER_GROUP, rt.gpu.stream_max_groups());
                rt.gpu.stream_launch(stream, &name, &args, blocks, threads(platform, &name, args.count))
            }
            Work::Copy { dst, src, len } => rt.gpu.stream_copy(stream, dst, src, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collectives_spread_by_size() {
        // Small calls (and every non-collective kernel: spread 0) stay on one work-group.
        for spread in [0, 8, 4096, 2 * GPU_BYTES_PER_GROUP - 1] {
            assert_eq!(groups(spread, GPU_BYTES_PER_GROUP, 132), 1, "{spread}");
        }
        assert_eq!(groups(2 * GPU_BYTES_PER_GROUP, GPU_BYTES_PER_GROUP, 132), 2);
        assert_eq!(groups(1 << 20, GPU_BYTES_PER_GROUP, 132), 128);
        assert_eq!(groups(64 << 20, GPU_BYTES_PER_GROUP, 132), 132);
        assert_eq!(groups(1 << 20, GPU_BYTES_PER_GROUP, 0), 1, "an unknown multiprocessor count");
        assert_eq!(groups(1 << 20, HOST_BYTES_PER_GROUP, HOST_MAX_GROUPS), HOST_MAX_GROUPS);
    }
}
