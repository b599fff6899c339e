//! The IPC transport: every peer's heap is mapped into this process, so a put is a copy into
//! the peer's mapping and a get a copy out of it (a GPU runtime copy when the heaps are GPU
//! memory), atomics are CPU atomics on the peer's word (atomic with every other PE's atomics on
//! it: the heaps are shared memory), and barriers count on the peers' control regions
//! ([`SyncState`]). Every operation is complete when it returns; `quiet` is a memory fence.
//!
//! Collectives: members read each other's sources directly between barriers, and combine them
//! in member order, so every PE computes bitwise-identical results (floating point included).
//!
//! When the heaps are GPU memory the host cannot load from or store to them: the runtime then
//! gives this transport an executor at init ([`GpuHeap`], `gpu_heap.rs`), which runs atomics
//! and the team collectives as stream helper kernels; puts and gets stay copies.

use super::gpu_heap::GpuHeap;
use super::{AmoOp, Group, Reduce, ReduceOp, Transport, combine};
use crate::error::Result;
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;
use crate::sync::{SyncState, ring};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, Ordering::SeqCst};

/// Sizes at which a reduction splits the work (reduce-scatter, then all-gather) instead of
/// every member combining everything.
const SPLIT_BYTES: usize = 32 * 1024;

/// The IPC transport of this PE: its barrier bookkeeping (the heaps are the caller's).
pub struct Ipc {
    /// Shared with the GDA transport: a slot's counters are consumed by whichever transport
    /// a barrier goes through.
    pub sync: std::sync::Arc<SyncState>,
    /// Atomics and team collectives on a heap of GPU memory (set at init, [`Ipc::use_gpu_heap`]).
    gpu: Option<GpuHeap>,
}

macro_rules! apply {
    ($a:expr, $op:expr, $v:expr, $cond:expr, $one:expr) => {
        match $op {
            AmoOp::Fetch => $a.load(SeqCst),
            AmoOp::Set => {
                $a.store($v, SeqCst);
                0
            }
            AmoOp::Swap => $a.swap($v, SeqCst),
            AmoOp::CompareSwap => match $a.compare_exchange($cond, $v, SeqCst, SeqCst) {
                Ok(old) | Err(old) => old,
            },
            AmoOp::FetchInc | AmoOp::Inc => $a.fetch_add($one, SeqCst),
            AmoOp::FetchAdd | AmoOp::Add => $a.fetch_add($v, SeqCst),
            AmoOp::FetchAnd | AmoOp::And => $a.fetch_and($v, SeqCst),
            AmoOp::FetchOr | AmoOp::Or => $a.fetch_or($v, SeqCst),
            AmoOp::FetchXor | AmoOp::Xor => $a.fetch_xor($v, SeqCst),
        }
    };
}

impl Ipc {
    pub fn new(slots: usize, n_pes: usize) -> Ipc {
        Ipc { sync: std::sync::Arc::new(SyncState::new(slots, n_pes)), gpu: None }
    }

    /// From now on atomics and team collectives run through `exec` (the heaps are GPU memory).
    pub fn use_gpu_heap(&mut self, exec: GpuHeap) {
        self.gpu = Some(exec);
    }

    /// Where offset `off` of PE `pe`'s heap is mapped here (the route gives this transport
    /// mapped peers only).
    #[inline]
    fn at(heap: &SymmetricHeap, off: usize, pe: usize) -> *mut u8 {
        (heap.user_base(pe) + off) as *mut u8
    }
}

impl Transport for Ipc {
    #[inline]
    unsafe fn put(&self, heap: &SymmetricHeap, off: usize, src: *const u8, len: usize, pe: usize) -> Result<()> {
        // SAFETY: the target is inside PE `pe`'s mapped heap for `len`; `src` is the caller's
        // readable buffer. They may overlap when pe is this PE, hence a memmove (or, when the
        // heap is GPU memory, a GPU runtime copy, complete when it returns).
        unsafe { heap.copy(Self::at(heap, off, pe), src, len)? };
        ring(&heap.control(pe).header().data_bell);
        Ok(())
    }

    #[inline]
    unsafe fn get(&self, heap: &SymmetricHeap, dst: *mut u8, off: usize, len: usize, pe: usize) -> Result<()> {
        // SAFETY: as in put, reversed.
        unsafe { heap.copy(dst, Self::at(heap, off, pe), len) }
    }

    #[inline]
    fn p<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, value: T, pe: usize) -> Result<()> {
        heap.write(Self::at(heap, off, pe) as *mut T, value)?;
        ring(&heap.control(pe).header().data_bell);
        Ok(())
    }

    #[inline]
    fn g<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, pe: usize) -> Result<T> {
        heap.read(Self::at(heap, off, pe) as *const T)
    }

    fn amo(&self, heap: &SymmetricHeap, op: AmoOp, off: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        if let Some(exec) = &self.gpu {
            return exec.amo(op, heap.user_base(heap.my_pe) + off, width, v, c, pe);
        }
        let remote = Self::at(heap, off, pe);
        // SAFETY: `remote` is an aligned (checked by the caller), mapped word of the right width.
        let old = unsafe {
            if width == 4 {
                let a = AtomicU32::from_ptr(remote.cast());
                apply!(a, op, v as u32, c as u32, 1u32) as u64
            } else {
                let a = AtomicU64::from_ptr(remote.cast());
                apply!(a, op, v, c, 1u64)
            }
        };
        if op != AmoOp::Fetch {
            ring(&heap.control(pe).header().data_bell);
        }
        Ok(old)
    }

    #[inline]
    fn quiet(&self) {
        std::sync::atomic::fence(SeqCst);
    }

    fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()> {
        self.sync.barrier(heap, set, slot)
    }

    unsafe fn broadcast(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut u8,
        src: *const u8,
        bytes: usize,
        root: usize,
        to_root: bool,
    ) -> Result<()> {
        if let Some(exec) = &self.gpu {
            // SAFETY: the caller's checked ranges.
            return unsafe { exec.broadcast(g, dst, src, bytes, root, to_root) };
        }
        self.barrier(heap, g.set, g.slot)?;
        if bytes > 0 && (g.my_idx != root || (to_root && !std::ptr::eq(dst, src))) {
            let from = heap.peer_addr(src as usize, bytes, g.set.pe(root), "source")?;
            // SAFETY: both ranges were checked inside the heaps; memmove handles overlap.
            unsafe { std::ptr::copy(from as *const u8, dst, bytes) };
        }
        self.barrier(heap, g.set, g.slot)
    }

    unsafe fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut T,
        src: *const T,
        n: usize,
        op: ReduceOp<'_, F>,
        kind: Reduce,
    ) -> Result<()> {
        if let Some(exec) = &self.gpu {
            // SAFETY: the caller's checked arrays.
            return unsafe { exec.reduce(g, dst, src, n, kind, op.kernel) };
        }
        let op = op.f;
        self.barrier(heap, g.set, g.slot)?;
        if n == 0 {
            return self.barrier(heap, g.set, g.slot);
        }
        let bytes = n * std::mem::size_of::<T>();
        // The elements this member combines: all of them, or its block of the sources.
        let (lo, src_bytes) = match kind {
            Reduce::All => (0, bytes),
            Reduce::Scatter => (g.my_idx * n, bytes * g.set.size),
        };
        let sources = member_copies(heap, g, src, src_bytes)?;
        if kind == Reduce::Scatter || bytes < SPLIT_BYTES || g.set.size < 3 {
            // This member combines its n elements into a private buffer, then overwrites dst
            // once every member has finished reading (dst may be src: in-place reductions).
            // SAFETY: every member's source holds lo + n elements, unwritten until the barrier.
            let acc = unsafe { combine(&sources, lo, lo + n, op) };
            self.barrier(heap, g.set, g.slot)?;
            // SAFETY: dst[0..n] checked by the caller; acc has n elements.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
            return Ok(());
        }
        // Member k combines chunk k into its own dst, then everyone gathers the chunks. Chunk k
        // of a source is read only by member k in the first step, so in-place works.
        let chunks = g.set.size;
        let bounds = |k: usize| (n * k / chunks, n * (k + 1) / chunks);
        let (lo, hi) = bounds(g.my_idx);
        // SAFETY: as above, for [lo, hi).
        let mine = unsafe { combine(&sources, lo, hi, op) };
        // SAFETY: [lo, hi) is inside dst[0..n].
        unsafe { std::ptr::copy_nonoverlapping(mine.as_ptr(), dst.add(lo), hi - lo) };
        self.barrier(heap, g.set, g.slot)?;
        for k in (0..chunks).filter(|k| *k != g.my_idx) {
            let (lo, hi) = bounds(k);
            let theirs = heap.peer_addr(dst as usize, bytes, g.set.pe(k), "dest")? as *const T;
            // SAFETY: chunk k of member k's dst is final and not written until the next barrier.
            unsafe { std::ptr::copy_nonoverlapping(theirs.add(lo), dst.add(lo), hi - lo) };
        }
        self.barrier(heap, g.set, g.slot)
    }

    /// Through the exchange words of the group's slot, between two barriers (nobody overwrites
    /// a word before every member has read it).
    fn allgather_words(&self, heap: &SymmetricHeap, g: &Group, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
        let n = mine.len();
        let me = heap.control(heap.my_pe);
        for (w, v) in mine.iter().enumerate() {
            me.exchange(g.slot, w).store(*v, Ordering::Relaxed);
        }
        self.barrier(heap, g.set, g.slot)?;
        let rows = (0..g.set.size)
            .map(|i| {
                let peer = heap.control(g.set.pe(i));
                (0..n).map(|w| peer.exchange(g.slot, w).load(Ordering::Relaxed)).collect()
            })
            .collect();
        self.barrier(heap, g.set, g.slot)?;
        Ok(rows)
    }
}

/// Where each member's copy of the symmetric array `src` (`bytes` long) is mapped here.
fn member_copies<T>(heap: &SymmetricHeap, g: &Group, src: *const T, bytes: usize) -> Result<Vec<*const T>> {
    (0..g.set.size).map(|i| heap.peer_addr(src as usize, bytes, g.set.pe(i), "source").map(|p| p as *const T)).collect()
}
