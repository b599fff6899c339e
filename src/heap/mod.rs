//! The symmetric heap: one segment per PE, every peer's segment mapped, a deterministic
//! allocator for the user part.
//!
//! Each PE's segment starts with a control region the library uses to synchronise (see
//! [`Control`]), followed by `ROCSHMEM_HEAP_SIZE` bytes for `rocshmem_malloc`. A symmetric
//! address is translated to a peer by its offset from the local heap base.

pub mod alloc;

use crate::error::{Error, Result};
use crate::gpu::Segment;
use alloc::Allocator;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64};

const CONTROL_MAGIC: u64 = 0x726f_6373_686d_656d; // "rocshmem"

/// A futex word a PE sleeps on, and what writers need to know to wake it (see `sync`).
#[repr(C, align(64))]
pub struct Doorbell {
    /// Futex word: bumped (only when someone sleeps) after a write that may end a wait.
    pub word: AtomicU32,
    /// Threads of this PE sleeping on `word`.
    pub sleepers: AtomicU32,
    /// 1 once a writer rang for the current sleep period: later writers need not ring again
    /// (a sleeper clears it before each sleep).
    pub rung: AtomicU32,
    _pad: [u32; 13],
}

/// The first cache lines of a PE's control region.
#[repr(C, align(64))]
pub struct ControlHeader {
    pub magic: AtomicU64,
    _pad0: [u64; 7],
    /// Rung by writes into the user heap (puts, p, atomics): wakes `wait_until` sleepers.
    pub data_bell: Doorbell,
    /// Rung by synchronisation signals: wakes barrier sleepers. Separate, so that a stream
    /// of puts into a PE sleeping in a barrier does not wake it for nothing.
    pub sync_bell: Doorbell,
}

/// Where things are inside one PE's control region. Every PE computes the same layout from
/// the same inputs, so a peer's counters are found at the same offsets.
#[derive(Debug, Clone, Copy)]
pub struct ControlLayout {
    /// Synchronisation slots: one per team slot, plus one for active-set collectives.
    pub slots: usize,
    pub n_pes: usize,
    /// 64-bit words per slot in the exchange area.
    pub exchange_words: usize,
    exchange_off: usize,
    pair_off: usize,
    pub len: usize,
}

impl ControlLayout {
    pub fn new(slots: usize, n_pes: usize, exchange_words: usize) -> ControlLayout {
        let header = std::mem::size_of::<ControlHeader>();
        let exchange_off = header;
        let pair_off = (exchange_off + slots * exchange_words * 8).next_multiple_of(64);
        let end = pair_off + slots * n_pes * 8;
        ControlLayout { slots, n_pes, exchange_words, exchange_off, pair_off, len: end.next_multiple_of(4096) }
    }
}

/// Typed view of one PE's control region (ours or a peer's mapping of it).
#[derive(Clone, Copy)]
pub struct Control {
    base: *mut u8,
    layout: ControlLayout,
}

// SAFETY: everything reached through Control is an atomic in shared memory.
unsafe impl Send for Control {}
unsafe impl Sync for Control {}

impl Control {
    pub fn header(&self) -> &ControlHeader {
        // SAFETY: the region starts with a ControlHeader and is 4 KiB aligned.
        unsafe { &*(self.base as *const ControlHeader) }
    }

    /// Exchange word `w` of slot `slot`: a small value a PE publishes for its peers to read.
    pub fn exchange(&self, slot: usize, w: usize) -> &AtomicU64 {
        assert!(slot < self.layout.slots && w < self.layout.exchange_words);
        let off = self.layout.exchange_off + (slot * self.layout.exchange_words + w) * 8;
        // SAFETY: in bounds of the region, 8-byte aligned.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    /// How many times PE `from` signalled this PE on sync slot `slot` (monotonic).
    pub fn pair(&self, slot: usize, from: usize) -> &AtomicU64 {
        assert!(slot < self.layout.slots && from < self.layout.n_pes);
        let off = self.layout.pair_off + (slot * self.layout.n_pes + from) * 8;
        // SAFETY: in bounds of the region, 8-byte aligned.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }
}

pub struct SymmetricHeap {
    pub my_pe: usize,
    pub n_pes: usize,
    /// Segment of every PE, as mapped in this process (ours at `my_pe`).
    segments: Vec<Segment>,
    pub control: ControlLayout,
    /// Bytes for user allocations (ROCSHMEM_HEAP_SIZE).
    pub user_len: usize,
    /// The largest power of two A such that every PE's user heap base has the same remainder
    /// modulo A (agreed at init): alignments up to A can be honoured on every PE at once.
    pub common_align: usize,
    alloc: Mutex<Allocator>,
}

/// Every heap base is page aligned, whatever the mapping.
pub(crate) const PAGE_ALIGN: usize = 4096;

/// The largest power of two (from 4 KiB to 1 GiB) modulo which all `bases` are congruent.
pub fn common_alignment(bases: &[usize]) -> usize {
    let mut a = 1usize << 30;
    while a > PAGE_ALIGN && bases.iter().any(|b| b % a != bases[0] % a) {
        a >>= 1;
    }
    a
}

impl SymmetricHeap {
    pub fn segment_len(control: &ControlLayout, user_len: usize) -> Option<usize> {
        control.len.checked_add(user_len.next_multiple_of(4096))
    }

    /// `segments[p]` is PE p's segment as mapped here; ours was created by this PE.
    pub fn new(my_pe: usize, segments: Vec<Segment>, control: ControlLayout, user_len: usize) -> SymmetricHeap {
        let n_pes = segments.len();
        let heap = SymmetricHeap {
            my_pe,
            n_pes,
            segments,
            control,
            user_len,
            common_align: PAGE_ALIGN,
            alloc: Mutex::new(Allocator::new(user_len)),
        };
        heap.control(my_pe).header().magic.store(CONTROL_MAGIC, std::sync::atomic::Ordering::Relaxed);
        heap
    }

    pub fn control(&self, pe: usize) -> Control {
        Control { base: self.segments[pe].base, layout: self.control }
    }

    /// Start of PE `pe`'s user heap in this process.
    pub fn user_base(&self, pe: usize) -> usize {
        self.segments[pe].base as usize + self.control.len
    }

    /// Offset of `[addr, addr+len)` in this PE's user heap, or the error naming `what`.
    pub fn offset_of(&self, addr: usize, len: usize, what: &'static str) -> Result<usize> {
        let base = self.user_base(self.my_pe);
        if addr >= base && len <= self.user_len && addr - base <= self.user_len - len {
            Ok(addr - base)
        } else if addr == 0 {
            Err(Error::NullPointer(what))
        } else {
            Err(Error::NotSymmetric { addr, len, what })
        }
    }

    /// The address in PE `pe`'s heap of the object at local symmetric address `addr`.
    pub fn peer_addr(&self, addr: usize, len: usize, pe: usize, what: &'static str) -> Result<*mut u8> {
        let off = self.offset_of(addr, len, what)?;
        Ok((self.user_base(pe) + off) as *mut u8)
    }

    /// A block of `len` bytes whose address is a multiple of `align` on every PE.
    pub fn alloc(&self, len: usize, align: usize) -> Result<*mut u8> {
        if align > self.common_align {
            return Err(Error::invalid(format!(
                "alignment={align} cannot be honoured on every PE: the PEs' heaps are mapped with a common \
                 alignment of {} bytes",
                self.common_align
            )));
        }
        let base = self.user_base(self.my_pe);
        let mut a = self.alloc.lock().unwrap();
        match a.alloc_shifted(len, align, base % align.max(alloc::MIN_ALIGN)) {
            Some(off) => Ok((self.user_base(self.my_pe) + off) as *mut u8),
            None => Err(Error::HeapExhausted { requested: len, largest_free: a.largest_free(), heap_size: a.size() }),
        }
    }

    /// Frees a block; the error says why the pointer is not one of ours.
    pub fn free(&self, addr: usize) -> Result<()> {
        let off = self.offset_of(addr, 1, "rocshmem_free")?;
        self.alloc.lock().unwrap().free(off).map(|_| ()).ok_or_else(|| {
            Error::invalid(format!("{addr:#x} is inside the symmetric heap but is not the start of a live allocation"))
        })
    }

    pub fn block_len(&self, addr: usize) -> Option<usize> {
        let off = self.offset_of(addr, 1, "").ok()?;
        self.alloc.lock().unwrap().block_len(off)
    }

    pub fn usage(&self) -> (usize, usize, usize) {
        let a = self.alloc.lock().unwrap();
        (a.used_bytes(), a.live_blocks(), a.size())
    }

    /// This PE's own segment.
    pub fn own_segment(&self) -> &Segment {
        &self.segments[self.my_pe]
    }
}
