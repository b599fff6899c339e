//! What a stream operation is and the grid it runs on: the helper kernels, the threads and
//! work-groups of a launch, a queued [`Work`]. Used by the GPU launch path (`src/stream.rs`) and
//! the host-platform queues (`gpu/host_streams.rs`), and needs nothing of the runtime.

use super::stream_args::StreamArgs;
use crate::gpu::Platform;

/// The helper kernels of the untyped calls (device/stream/kernels.hpp, same order); the typed
/// reductions are `reduce_<type>_<op>`.
pub const CORE_KERNELS: [&str; 14] = [
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
    "amo",
];

/// Threads of each work-group a kernel runs on. Waits, signals, quiet and amo need one thread;
/// barriers one wave; data movement a full work-group on a GPU, or for a small put/get one
/// thread per 16 bytes in whole waves (a 1024-thread block costs more to start and to sync
/// than an 8-byte put: 3.5 us against NVSHMEM's 1.7 us per call on the H200 pair). On the
/// host platform every thread is a CPU thread started per launch, so fewer.
pub fn threads(platform: Platform, kernel: &str, bytes: u64) -> u32 {
    let single = matches!(kernel, "signal_wait_until" | "signal_add" | "signal_set" | "quiet" | "amo");
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
