//! The symmetric heap: one segment per PE, every peer's segment mapped, a deterministic
//! allocator for the user part.
//!
//! Each PE's segment starts with a control region the library uses to synchronise (see
//! [`Control`]), followed by `ROCSHMEM_HEAP_SIZE` bytes for `rocshmem_malloc`. A symmetric
//! address is translated to a peer by its offset from the local heap base. On a GPU platform
//! the part device code uses (device synchronisation area and user heap) is GPU memory of its
//! own and the host control part stays in shared memory (see [`ControlLayout`]).

pub mod alloc;

use crate::error::{Error, Result};
use crate::gpu::{GpuRuntime, Segment};
use alloc::Allocator;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};

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
    /// This PE's record of its heap calls (rocshmem_malloc, _align, _calloc, _free, and
    /// finalize), two deep (by the parity of the call's number): peers compare theirs with it
    /// after the call's barrier (`crate::heap_agree`, which lives above teams and transports).
    pub heap_calls: [HeapCallRecord; 2],
}

/// One record of a heap call as stored in a control header (a cache line; its words are
/// `crate::heap_agree`'s).
#[repr(C, align(64))]
pub struct HeapCallRecord(pub [AtomicU64; 8]);

/// Where things are inside one PE's control region. Every PE computes the same layout from
/// the same inputs, so a peer's counters are found at the same offsets.
///
/// A PE has a host control part (header, exchange words, pair counters: the CPU's
/// synchronisation) and a device part (the device synchronisation area, then the user heap).
/// On the host platform both are one segment: the device synchronisation area follows the
/// host part. When the device part is a segment of its own (GPU memory), it starts with the
/// device synchronisation area, rounded up to [`DEVICE_HEAP_ALIGN`].
#[derive(Debug, Clone, Copy)]
pub struct ControlLayout {
    /// Synchronisation slots: one per team slot, plus one for active-set collectives.
    pub slots: usize,
    pub n_pes: usize,
    /// 64-bit words per slot in the exchange area.
    pub exchange_words: usize,
    exchange_off: usize,
    pair_off: usize,
    /// Bytes of the host control part.
    pub host_len: usize,
    /// The device synchronisation area, from the start of the device segment (see
    /// `rocshmem_device_state::dev_sync_off`).
    pub dev_sync_off: usize,
    pub dev_sync_slot_bytes: usize,
    pub dev_scratch_bytes: usize,
    /// Bytes from the start of the device segment to the user heap
    /// (`rocshmem_device_state::control_len`).
    pub len: usize,
    /// Whether the device part is a segment of its own.
    pub separate_device: bool,
}

/// Collective scratch per team slot for device collectives (in-place reductions stage through
/// it in chunks of this size).
pub const DEV_SCRATCH_BYTES: usize = 64 << 10;

/// Where the device part is a segment of its own, its user heap starts at a multiple of this
/// (2 MiB: GPU allocations are 2 MiB aligned, so the user heap bases agree modulo it).
pub const DEVICE_HEAP_ALIGN: usize = 2 << 20;

impl ControlLayout {
    pub fn new(slots: usize, n_pes: usize, exchange_words: usize, separate_device: bool) -> ControlLayout {
        let header = std::mem::size_of::<ControlHeader>();
        let exchange_off = header;
        let pair_off = (exchange_off + slots * exchange_words * 8).next_multiple_of(64);
        let host_len = (pair_off + slots * n_pes * 8).next_multiple_of(4096);
        let header = crate::device_abi::ROCSHMEM_DEV_SYNC_HEADER as usize;
        let dev_scratch_bytes = DEV_SCRATCH_BYTES;
        let dev_sync_slot_bytes =
            (header + (n_pes * 8).next_multiple_of(64) + dev_scratch_bytes).next_multiple_of(4096);
        let sync_len = slots * dev_sync_slot_bytes;
        let (dev_sync_off, len) = if separate_device {
            (0, sync_len.next_multiple_of(DEVICE_HEAP_ALIGN))
        } else {
            (host_len, (host_len + sync_len).next_multiple_of(4096))
        };
        ControlLayout {
            slots,
            n_pes,
            exchange_words,
            exchange_off,
            pair_off,
            host_len,
            dev_sync_off,
            dev_sync_slot_bytes,
            dev_scratch_bytes,
            len,
            separate_device,
        }
    }

    /// Bytes of a PE's host segment and, when separate, of its device segment, for a user heap
    /// of `user_len` bytes; None on overflow.
    pub fn segment_lens(&self, user_len: usize) -> Option<(usize, Option<usize>)> {
        let device = self.len.checked_add(user_len.checked_next_multiple_of(4096)?)?;
        Some(if self.separate_device { (self.host_len, Some(device)) } else { (device, None) })
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
    /// Host control segment of every PE, as mapped in this process (ours at `my_pe`); None
    /// for a peer this process does not map (RO backend: reached through MPI).
    host: Vec<Option<Segment>>,
    /// Device segment of every PE (device synchronisation area + user heap) when it is not the
    /// host segment: GPU memory, mapped here through IPC handles.
    device: Option<Vec<Option<Segment>>>,
    pub control: ControlLayout,
    /// Bytes for user allocations (ROCSHMEM_HEAP_SIZE).
    pub user_len: usize,
    /// The largest power of two A such that every PE's user heap base has the same remainder
    /// modulo A (agreed at init): alignments up to A can be honoured on every PE at once.
    pub common_align: usize,
    alloc: Mutex<Allocator>,
    /// Heap calls this PE has made (numbers the records of `crate::heap_agree`).
    pub(crate) calls: AtomicU64,
    /// Copies and fills of device segments.
    pub gpu: Arc<dyn GpuRuntime>,
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
    /// `host[p]` is PE p's host control segment as mapped here, `device[p]` (when the device
    /// part is separate) its device segment; ours were created by this PE. A separate device
    /// segment of ours is zeroed here (GPU allocations are not).
    pub fn new(
        my_pe: usize,
        host: Vec<Option<Segment>>,
        device: Option<Vec<Option<Segment>>>,
        control: ControlLayout,
        user_len: usize,
        gpu: Arc<dyn GpuRuntime>,
    ) -> Result<SymmetricHeap> {
        let n_pes = host.len();
        if device.is_some() != control.separate_device || device.as_ref().is_some_and(|d| d.len() != n_pes) {
            return Err(Error::invalid("symmetric heap: device segments do not match the control layout"));
        }
        let heap = SymmetricHeap {
            my_pe,
            n_pes,
            host,
            device,
            control,
            user_len,
            common_align: PAGE_ALIGN,
            alloc: Mutex::new(Allocator::new(user_len)),
            calls: AtomicU64::new(0),
            gpu,
        };
        if heap.host.get(my_pe).is_none_or(Option::is_none) || heap.device.as_ref().is_some_and(|d| d[my_pe].is_none())
        {
            return Err(Error::invalid("symmetric heap: this PE's own segment is missing"));
        }
        if let Some(Some(d)) = heap.device.as_ref().map(|d| &d[my_pe]) {
            // SAFETY: our whole device segment.
            unsafe { heap.gpu.fill(d.base, 0, d.len)? };
        }
        heap.control(my_pe).header().magic.store(CONTROL_MAGIC, std::sync::atomic::Ordering::Relaxed);
        Ok(heap)
    }

    /// PE `pe`'s control region as mapped here. Only for mapped PEs (see [`Self::mapped`]).
    pub fn control(&self, pe: usize) -> Control {
        let seg = self.host[pe].as_ref().expect("the control region of a PE this process does not map");
        Control { base: seg.base, layout: self.control }
    }

    /// Whether this process maps PE `pe`'s segments (always on IPC; RO: same-node peers).
    pub fn mapped(&self, pe: usize) -> bool {
        self.host.get(pe).is_some_and(Option::is_some)
    }

    /// Start of PE `pe`'s device segment in this process (`rocshmem_device_state::heap_bases`),
    /// 0 when this process does not map it.
    pub fn device_base(&self, pe: usize) -> usize {
        let seg = match &self.device {
            Some(d) => d[pe].as_ref(),
            None => self.host[pe].as_ref(),
        };
        seg.map_or(0, |s| s.base as usize)
    }

    /// Whether this process can load from and store to the user heaps (false when they are GPU
    /// memory: host operations then copy through the GPU runtime, and the IPC transport runs
    /// atomics and collectives with its executor `transport::gpu_heap`).
    pub fn host_accessible(&self) -> bool {
        self.device.is_none()
    }

    /// Copies `len` bytes between host memory and heap memory (either side may be either).
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes (heap ranges checked by the caller).
    pub unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // On a GPU platform the other side may be GPU memory even when the heaps are host
        // memory (RO), so the GPU runtime copies.
        if self.gpu.platform() == crate::gpu::Platform::Host {
            // SAFETY: the caller's contract; memmove allows overlap.
            unsafe { std::ptr::copy(src, dst, len) };
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { self.gpu.copy(dst, src, len) }
    }

    /// One element of heap memory at `p` (aligned, checked by the caller): a single-copy
    /// atomic load, or on a heap of GPU memory a copy through the GPU runtime.
    pub fn read<T: crate::scalar::Scalar>(&self, p: *const T) -> Result<T> {
        if self.host_accessible() {
            return Ok(T::load(p));
        }
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: one element of the heap into local storage of that size; every bit pattern
        // the heap holds is a value of T (plain scalars).
        unsafe {
            self.copy(v.as_mut_ptr().cast(), p.cast(), std::mem::size_of::<T>())?;
            Ok(v.assume_init())
        }
    }

    /// Stores one element of heap memory at `p` (aligned, checked by the caller): a single-copy
    /// atomic store, or on a heap of GPU memory a copy through the GPU runtime.
    pub fn write<T: crate::scalar::Scalar>(&self, p: *mut T, value: T) -> Result<()> {
        if self.host_accessible() {
            T::store(p, value);
            return Ok(());
        }
        // SAFETY: one element of the heap, from a local copy of the value.
        unsafe { self.copy(p.cast(), (&value as *const T).cast(), std::mem::size_of::<T>()) }
    }

    /// Sets `len` bytes of heap memory at `dst` to `byte`.
    ///
    /// # Safety
    /// The range must be valid for `len` bytes (checked by the caller).
    pub unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
        if self.host_accessible() {
            // SAFETY: the caller's contract.
            unsafe { std::ptr::write_bytes(dst, byte, len) };
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { self.gpu.fill(dst, byte, len) }
    }

    /// Zeroes this PE's device synchronisation header and flags of `slot` (see `device/src/sync.hpp`).
    pub fn clear_device_slot(&self, slot: usize) -> Result<()> {
        let c = &self.control;
        let len = crate::device_abi::ROCSHMEM_DEV_SYNC_HEADER as usize + c.n_pes * 8;
        let at = self.device_base(self.my_pe) + c.dev_sync_off + slot * c.dev_sync_slot_bytes;
        // SAFETY: inside our own device synchronisation area; no peer writes this slot now (see
        // the caller).
        unsafe { self.fill(at as *mut u8, 0, len) }
    }

    /// Start of PE `pe`'s user heap in this process.
    pub fn user_base(&self, pe: usize) -> usize {
        self.device_base(pe) + self.control.len
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

    /// The address in PE `pe`'s heap of the object at local symmetric address `addr`; an error
    /// when this process does not map PE `pe` (RO backend: callers go through MPI instead).
    pub fn peer_addr(&self, addr: usize, len: usize, pe: usize, what: &'static str) -> Result<*mut u8> {
        let off = self.offset_of(addr, len, what)?;
        if !self.mapped(pe) {
            return Err(Error::Unsupported(format!(
                "PE {pe} is not mapped by this PE (RO backend: reached through MPI)"
            )));
        }
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

    /// Whether `addr` is the start of a live allocation (what `free` needs).
    pub fn is_block(&self, addr: usize) -> bool {
        self.block_len(addr).is_some()
    }

    pub fn block_len(&self, addr: usize) -> Option<usize> {
        let off = self.offset_of(addr, 1, "").ok()?;
        self.alloc.lock().unwrap().block_len(off)
    }

    pub fn usage(&self) -> (usize, usize, usize) {
        let a = self.alloc.lock().unwrap();
        (a.used_bytes(), a.live_blocks(), a.size())
    }

    /// This PE's own host control segment.
    pub fn own_segment(&self) -> &Segment {
        self.host[self.my_pe].as_ref().expect("own segment")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_combined_and_separate() {
        let one = ControlLayout::new(41, 2, 1, false);
        assert_eq!(one.dev_sync_off, one.host_len, "host platform: the sync area follows the host part");
        assert_eq!(one.len, (one.host_len + 41 * one.dev_sync_slot_bytes).next_multiple_of(4096));
        assert_eq!(one.segment_lens(1 << 20), Some((one.len + (1 << 20), None)));
        let two = ControlLayout::new(41, 2, 1, true);
        assert_eq!(two.dev_sync_off, 0, "GPU: the device segment starts with the sync area");
        assert_eq!(two.len % DEVICE_HEAP_ALIGN, 0, "user heap 2 MiB aligned in the device segment");
        assert!(two.len >= 41 * two.dev_sync_slot_bytes);
        assert_eq!(two.host_len, one.host_len);
        assert_eq!(two.segment_lens(1000), Some((two.host_len, Some(two.len + 4096))));
        assert_eq!(two.segment_lens(usize::MAX - 10), None);
    }

    #[test]
    fn separate_device_segments() {
        let gpu = crate::gpu::fake::gpu();
        let control = ControlLayout::new(5, 2, 1, true);
        let (h, d) = control.segment_lens(1 << 20).unwrap();
        let d = d.unwrap();
        let host: Vec<Option<Segment>> = (0..2).map(|_| gpu.create_segment("", h).ok()).collect();
        let dev: Vec<Option<Segment>> = (0..2).map(|_| gpu.create_device_segment(d).ok()).collect();
        let dev_bases: Vec<usize> = dev.iter().map(|s| s.as_ref().unwrap().base as usize).collect();
        let host_base = host[1].as_ref().unwrap().base as usize;
        assert!(SymmetricHeap::new(1, Vec::new(), None, control, 1 << 20, gpu.clone()).is_err());
        let heap = SymmetricHeap::new(1, host, Some(dev), control, 1 << 20, gpu).unwrap();
        assert!(!heap.host_accessible());
        assert_eq!(heap.device_base(0), dev_bases[0]);
        assert_eq!(heap.user_base(1), dev_bases[1] + control.len);
        assert_eq!(heap.control(1).header().magic.load(std::sync::atomic::Ordering::Relaxed), CONTROL_MAGIC);
        assert_eq!(heap.own_segment().base as usize, host_base, "control stays in the host segment");
        let p = heap.alloc(64, 8).unwrap() as usize;
        assert_eq!(
            heap.peer_addr(p, 64, 0, "x").unwrap() as usize,
            dev_bases[0] + control.len + (p - heap.user_base(1))
        );
        heap.clear_device_slot(3).unwrap();
    }
}
