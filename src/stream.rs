//! The stream-ordered host API (`rocshmem_*_on_stream`): every call enqueues one helper kernel
//! (device/stream/grid.hpp) on the caller's stream and returns at once: one work-group, or for
//! a large collective (alltoall, broadcast, reduction) several ([`groups`]).
//!
//! - Host platform: a stream is an ordered host queue owned by the core (`gpu::host_streams`): a worker
//!   thread per queue runs its operations in order, each on the host launcher's CPU threads;
//!   NULL is a per-process default queue.
//! - NVIDIA: the kernels are PTX embedded at build time, loaded by the CUDA runtime layer and
//!   launched with `cuLaunchKernel` on the caller's stream; large putmem/getmem are a copy on
//!   the stream instead ([`GpuRuntime::stream_launch`], [`GpuRuntime::stream_copy`]).
//!
//! Nothing here synchronises the device or touches the legacy stream, so the calls can be
//! captured in a CUDA/HIP graph. See docs/streams.md. (The blocking host API on a heap of GPU
//! memory runs some of the same kernels on the library's own stream and waits for them:
//! `transport::gpu_heap`.)

pub use crate::gpu::stream_args::StreamArgs;
pub use crate::gpu::stream_plan::{
    COPY_THRESHOLD, CORE_KERNELS, GPU_BYTES_PER_GROUP, HOST_BYTES_PER_GROUP, HOST_MAX_GROUPS, Work, groups, threads,
};

use crate::error::{Error, Result};
use crate::gpu::Platform;
use crate::gpu::host_streams as host;
use crate::runtime::Runtime;
use std::ffi::c_void;

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
