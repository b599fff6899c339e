//! The IPC transport's executor for a heap of GPU memory ([`GpuHeap`], held by `ipc::Ipc`):
//! puts, gets, `p` and `g` stay copies (`SymmetricHeap::copy`), but what cannot be a copy runs
//! as a stream helper kernel (`device/stream/kernels.hpp`, the kernels of the `*_on_stream`
//! calls) on the library's own stream, and the host waits for it:
//! - every atomic: the `amo` kernel, one system-scope atomic of 4 or 8 bytes on the peer's mapped
//!   word (atomic with the device API's atomics on it), whose old value comes back through a word
//!   of device memory;
//! - the team broadcast (`broadcastmem`) and reductions (`reduce_<type>_<op>`).
//!
//! The forms without a kernel (reduce-scatter, the active-set collectives) fail with a message
//! saying they are not supported on the platform yet.
//!
//! The runtime gives IPC this executor at init (`runtime/build.rs`) when the heaps are GPU
//! memory, and on the host platform when the tests-only `ROCSHMEM_TEST_GPU_HEAP_ROUTE=1` asks for
//! it (the kernels then run at once on the host launcher's threads, as a host queue's worker runs
//! them), so that this path runs in CI without a GPU. No other module decides between the two.

use super::{AmoOp, Group, Reduce};
use crate::error::{Error, Result};
use crate::gpu::host_streams as host;
use crate::gpu::stream_args::StreamArgs;
use crate::gpu::stream_plan::{GPU_BYTES_PER_GROUP, Work, groups, threads};
use crate::gpu::{GpuRuntime, Platform, Segment};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Host operations on a heap of GPU memory, as stream helper kernels on the library's stream.
pub struct GpuHeap {
    gpu: Arc<dyn GpuRuntime>,
    /// The default context's handle (`rocshmem_ctx_device` as device code reads it): every
    /// kernel's `ctx_opaque`.
    ctx: usize,
    /// The word of device memory the amo kernel writes an atomic's old value to (allocated by the
    /// first atomic; freed with the transport), held for the atomic's duration. Stays None on the
    /// host platform (the kernel writes host memory).
    amo_result: Mutex<Option<Segment>>,
}

impl GpuHeap {
    /// The executor over `gpu`'s stream kernels; `default_ctx`: the default context's handle.
    pub fn new(gpu: Arc<dyn GpuRuntime>, default_ctx: *mut c_void) -> GpuHeap {
        GpuHeap { gpu, ctx: default_ctx as usize, amo_result: Mutex::new(None) }
    }

    /// Runs one atomic (`op` on the `width`-byte word at symmetric address `dest` on PE `pe`)
    /// with the amo kernel and waits for it; returns the old value (for `Fetch`, the current one).
    pub fn amo(&self, op: AmoOp, dest: usize, width: usize, value: u64, cond: u64, pe: usize) -> Result<u64> {
        let mut old = 0u64;
        let mut result = self.amo_result.lock().unwrap_or_else(|e| e.into_inner());
        if result.is_none() {
            // None on the host platform: the kernel then writes `old` itself.
            *result = self.gpu.alloc_device(8)?;
        }
        let sig_addr = result.as_ref().map_or(&mut old as *mut u64, |s| s.base.cast());
        let args = StreamArgs {
            dest: dest as *mut c_void,
            count: width as u64,
            sig_addr,
            value,
            cond,
            op: op as i32,
            pe: pe as i32,
            ..Default::default()
        };
        self.run_and_wait("amo", args, 0)?;
        if let Some(s) = result.as_ref() {
            // SAFETY: our 8-byte result word, written by the kernel that has finished.
            unsafe { self.gpu.copy((&mut old as *mut u64).cast(), s.base, 8)? };
        }
        Ok(old)
    }

    /// The `broadcastmem` kernel: `bytes` of member `root`'s `src` into every member's `dst`.
    /// Only the team form (`to_root`, OpenSHMEM 1.5) has a kernel.
    ///
    /// # Safety
    /// `dst` and `src` are symmetric ranges of `bytes` (checked).
    pub unsafe fn broadcast(
        &self,
        g: &Group,
        dst: *mut u8,
        src: *const u8,
        bytes: usize,
        root: usize,
        to_root: bool,
    ) -> Result<()> {
        // The 1.4 active-set form (root's dest untouched) has no kernel.
        let team = self.team(g, (!to_root).then_some("host active-set collectives"))?;
        let args = StreamArgs {
            team,
            dest: dst.cast(),
            source: src.cast(),
            count: bytes as u64,
            pe: root as i32,
            ..Default::default()
        };
        self.run_and_wait("broadcastmem", args, bytes as u64)
    }

    /// The reduction kernel `kernel` (`reduce_<type>_<op>`) over `n` elements of `T`; only
    /// [`Reduce::All`] has a kernel.
    ///
    /// # Safety
    /// `dst` and `src` are symmetric arrays of `n` elements (checked).
    pub unsafe fn reduce<T>(
        &self,
        g: &Group,
        dst: *mut T,
        src: *const T,
        n: usize,
        how: Reduce,
        kernel: &str,
    ) -> Result<()> {
        let team = self.team(g, (how == Reduce::Scatter).then_some("host reduce-scatter collectives"))?;
        let args = StreamArgs { team, dest: dst.cast(), source: src.cast(), count: n as u64, ..Default::default() };
        // In place: one work-group, as rocshmem_ctx_<T>_<op>_reduce_on_stream.
        let spread = if std::ptr::eq(dst, src) { 0 } else { (n * std::mem::size_of::<T>()) as u64 };
        self.run_and_wait(kernel, args, spread)
    }

    /// The team of `g` for a kernel; the error for a set that is no team (an active set), or
    /// for a form without a kernel (`no_kernel` names it).
    fn team(&self, g: &Group, no_kernel: Option<&str>) -> Result<*mut u64> {
        if let Some(what) = no_kernel {
            return Err(self.unsupported(what));
        }
        if g.team.is_null() {
            return Err(self.unsupported("host active-set collectives"));
        }
        Ok(g.team)
    }

    /// The error saying that `what` is not supported on a heap of GPU memory yet.
    fn unsupported(&self, what: &str) -> Error {
        Error::Unsupported(format!(
            "{what} on the symmetric heap are not supported on the {} platform yet: the heap is GPU memory \
             (use the device API, or ROCSHMEM_GPU=host)",
            self.gpu.platform().name()
        ))
    }

    /// Runs kernel `name` with `args` (a collective spreading `spread` bytes, 0: one work-group)
    /// on the library's own stream and waits for it. On the host platform the kernel runs at
    /// once on the host launcher's threads, as a queue's worker runs it.
    fn run_and_wait(&self, name: &str, mut args: StreamArgs, spread: u64) -> Result<()> {
        args.ctx_opaque = self.ctx as *mut c_void;
        let platform = self.gpu.platform();
        if platform == Platform::Host {
            return host::run(Work::Kernel { name: name.to_string(), args, spread });
        }
        let blocks = groups(spread, GPU_BYTES_PER_GROUP, self.gpu.stream_max_groups());
        // SAFETY: the memory the arguments name was checked by the caller and outlives the wait.
        unsafe { self.gpu.stream_run_and_wait(name, &args, blocks, threads(platform, name, args.count)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pe_set::PeSet;

    #[test]
    fn forms_without_a_kernel_say_so() {
        let exec = GpuHeap::new(crate::gpu::fake::gpu(), std::ptr::null_mut());
        let active_set = Group { set: PeSet::world(2), slot: 0, my_idx: 0, team: std::ptr::null_mut() };
        let (dst, src) = (std::ptr::null_mut::<u32>(), std::ptr::null::<u32>());
        // SAFETY: every call below fails before it touches memory.
        let e = unsafe { exec.broadcast(&active_set, dst.cast(), src.cast(), 8, 0, true) }.unwrap_err().to_string();
        assert!(e.contains("host active-set collectives") && e.contains("nvidia platform"), "{e}");
        let team = Group { team: 0x1000 as *mut u64, ..active_set };
        let e = unsafe { exec.broadcast(&team, dst.cast(), src.cast(), 8, 0, false) }.unwrap_err().to_string();
        assert!(e.contains("host active-set collectives"), "{e}");
        let e = unsafe { exec.reduce(&team, dst, src, 2, Reduce::Scatter, "") }.unwrap_err().to_string();
        assert!(e.contains("host reduce-scatter collectives") && e.contains("GPU memory"), "{e}");
    }
}
