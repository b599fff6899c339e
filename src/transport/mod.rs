//! The transports: how this PE reaches the symmetric heaps of the other PEs from the host.
//!
//! [`Transport`] is the host side of one transport: put, get, atomics, quiet, barrier, and the
//! data movement of the collectives. Each transport lives in its own place here:
//! - `ipc.rs`, [`ipc::Ipc`]: the peer's heap is mapped into this process (shared memory, or GPU
//!   IPC handles): loads, stores, CPU atomics and copies, barriers on counters in the peers'
//!   control regions; when the heaps are GPU memory, its executor `gpu_heap.rs`
//!   ([`gpu_heap::GpuHeap`]) runs what cannot be a copy (atomics, team collectives) as stream
//!   helper kernels;
//! - `ro/` (feature `mpi`), `ro::Ro`: MPI one-sided operations on a window over every PE's
//!   segment, and MPI collectives, for the peers this process does not map; its proxy thread
//!   runs what device code queues (docs/ro.md);
//! - `gda/`, [`gda::host::Gda`]: RC queue pairs to the peers this process does not map, posted
//!   by the host with the device posting code (NIC atomics, RDMA reads and writes), with the
//!   NIC-side pieces (layouts, verbs, discovery, dma-buf; docs/gda.md).
//!
//! This file names none of them (they build on it), so the folder has no import cycle.
//!
//! [`route::Transports`] chooses one per peer at init (and per member set for collectives) and
//! hands the operations a [`route::Via`], a `match` over the transports in use (static calls,
//! no indirect call on the hot path). The operations (`rma`, `amo`, `coll`, the barriers of
//! `api::sync`) check their arguments, count, and call the transport; they have no branch of
//! their own per backend. docs/design.md, "Transports", says how a transport plugs in.
//!
//! Addresses cross this interface as offsets into the symmetric heap, already checked by the
//! operation: a transport only moves data.

pub mod gda;
pub mod gpu_heap;
pub mod ipc;
#[cfg(feature = "mpi")]
pub mod ro;
pub mod route;

use crate::error::Result;
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;

/// An atomic operation on a 4- or 8-byte word. Its number is the device library's `AmoOp`
/// (device/src/amo.hpp), which the stream helper kernel `amo` takes; each transport maps it to
/// its own codes (RO's queue codes: `transport::ro::proxy::amo_op`; MPI operations and NIC
/// atomics: in their transports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum AmoOp {
    Fetch = 0,
    Set = 1,
    Swap = 2,
    CompareSwap = 3,
    FetchInc = 4,
    Inc = 5,
    FetchAdd = 6,
    Add = 7,
    FetchAnd = 8,
    And = 9,
    FetchOr = 10,
    Or = 11,
    FetchXor = 12,
    Xor = 13,
}

/// The members of a collective: a team, or an OpenSHMEM active set, with the synchronisation
/// slot it uses and this PE's index in it.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub set: PeSet,
    pub slot: usize,
    pub my_idx: usize,
    /// The team's handle, the address of its entry in the table device code reads (what a
    /// stream helper kernel takes as its team); NULL for an active set, and in the library's own
    /// exchanges (team creation, heap agreement), which run no kernel.
    pub team: *mut u64,
}

/// A reduction's operation: how two elements combine (`f`, a type parameter, so each reduction
/// gets its own loop: see [`combine`]), and the stream helper kernel of this type and operation
/// (`reduce_<type>_<op>`; empty where there is none) for a heap of GPU memory
/// ([`gpu_heap::GpuHeap`]).
#[derive(Clone, Copy)]
pub struct ReduceOp<'a, F> {
    pub f: F,
    pub kernel: &'a str,
}

/// Which reduction [`Transport::reduce`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    /// Every member gets the whole result (`reduce`).
    All,
    /// Member k gets block k of it (`reduce_scatter`).
    Scatter,
}

/// The host side of one transport. Every operation is complete when it returns (the `_nbi`
/// forms are the blocking ones), except that stores become visible to other PEs' observers in
/// order only after [`Transport::quiet`]. `heap` is this PE's view of the symmetric heaps.
pub trait Transport {
    /// Copies `len` bytes from local `src` to offset `off` of PE `pe`'s heap.
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes; `off..off + len` lies in the heap (checked).
    unsafe fn put(&self, heap: &SymmetricHeap, off: usize, src: *const u8, len: usize, pe: usize) -> Result<()>;

    /// Copies `len` bytes from offset `off` of PE `pe`'s heap to local `dst`.
    ///
    /// # Safety
    /// `dst` must be writable for `len` bytes; `off..off + len` lies in the heap (checked).
    unsafe fn get(&self, heap: &SymmetricHeap, dst: *mut u8, off: usize, len: usize, pe: usize) -> Result<()>;

    /// Stores one element at offset `off` of PE `pe`'s heap.
    fn p<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, value: T, pe: usize) -> Result<()> {
        // SAFETY: a local copy of the value.
        unsafe { self.put(heap, off, (&value as *const T).cast(), std::mem::size_of::<T>(), pe) }
    }

    /// Loads one element from offset `off` of PE `pe`'s heap.
    fn g<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, pe: usize) -> Result<T> {
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: local storage of one element; every bit pattern is a value of T (plain scalars).
        unsafe {
            self.get(heap, v.as_mut_ptr().cast(), off, std::mem::size_of::<T>(), pe)?;
            Ok(v.assume_init())
        }
    }

    /// Runs `op` on the `width`-byte word (4 or 8, aligned: checked) at offset `off` of PE
    /// `pe`'s heap; returns the old value (the current one for `Fetch`).
    #[allow(clippy::too_many_arguments)]
    fn amo(&self, heap: &SymmetricHeap, op: AmoOp, off: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64>;

    /// Completes this PE's operations through this transport and orders them for observers.
    fn quiet(&self);

    /// Barrier over `set` (this PE is a member) on synchronisation slot `slot`; completes every
    /// operation this PE made before it.
    fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()>;

    /// `bytes` of member `root`'s `src` into every member's `dst` (and the root's too when
    /// `to_root`). Collective over `g`.
    ///
    /// # Safety
    /// `dst` and `src` are symmetric ranges of `bytes` (checked), not partly overlapping.
    #[allow(clippy::too_many_arguments)]
    unsafe fn broadcast(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut u8,
        src: *const u8,
        bytes: usize,
        root: usize,
        to_root: bool,
    ) -> Result<()>;

    /// A reduction over the members in member order (bitwise the same result everywhere),
    /// collective over `g`. [`Reduce::All`]: `dst[i] = op(src_0[i], ..., src_{m-1}[i])` on
    /// every member; [`Reduce::Scatter`]: member `k` gets `dst[i] = op over members of
    /// src_m[k*n + i]`.
    ///
    /// # Safety
    /// `dst` is a symmetric array of `n` elements, `src` of `n` (All) or `n` × members
    /// (Scatter) elements (checked).
    #[allow(clippy::too_many_arguments)]
    unsafe fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut T,
        src: *const T,
        n: usize,
        op: ReduceOp<'_, F>,
        kind: Reduce,
    ) -> Result<()>;

    /// Every member's `mine` (a few words, the same count on every member), in member order
    /// (team creation). Collective over `g`.
    fn allgather_words(&self, heap: &SymmetricHeap, g: &Group, mine: &[u64]) -> Result<Vec<Vec<u64>>>;

    /// A team was created in `slot` over `set` (collective over its members): per-team state of
    /// the transport.
    fn team_created(&self, _slot: usize, _set: PeSet) -> Result<()> {
        Ok(())
    }

    /// The team of `slot` is being destroyed.
    fn team_destroyed(&self, _slot: usize) {}
}

/// Elements `lo..hi` combined over all sources, in source order: the arithmetic of every
/// transport's reductions, so that their results match bit for bit. `op` is a type parameter,
/// not a function pointer, so each reduction gets its own loop, which the compiler vectorises
/// (an indirect call per element made host reductions 2x slower than Open MPI's OpenSHMEM).
///
/// # Safety
/// Every source pointer covers at least `hi` elements that nobody writes meanwhile.
pub unsafe fn combine<T: Scalar, F: Fn(T, T) -> T + Copy>(sources: &[*const T], lo: usize, hi: usize, op: F) -> Vec<T> {
    // SAFETY: as the caller promised.
    let first = unsafe { std::slice::from_raw_parts(sources[0].add(lo), hi - lo) };
    let mut acc = first.to_vec();
    for s in &sources[1..] {
        let other = unsafe { std::slice::from_raw_parts(s.add(lo), hi - lo) };
        for (a, b) in acc.iter_mut().zip(other) {
            *a = op(*a, *b);
        }
    }
    acc
}
