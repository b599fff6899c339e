//! The RO backend's host side: [`Transport`] for the peers this PE does not map, run from the
//! calling thread. Puts, gets and atomics are MPI one-sided operations, each flushed (complete
//! at return); barriers and collectives are MPI collectives on the member set's host
//! communicator, created by the members on first use.

use super::Ro;
use super::mpi::count;
use crate::error::Result;
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;
use crate::transport::{AmoOp, Group, Reduce, ReduceOp, Transport, combine};
use mpi_sys::{MPI_Comm, MPI_Request};
use std::ffi::c_int;

impl Ro {
    /// The local address of offset `off` of the heap (the window displacement is taken from it).
    fn addr(heap: &SymmetricHeap, off: usize) -> u64 {
        (heap.user_base(heap.my_pe) + off) as u64
    }

    /// Completes every host operation of this PE (quiet / fence); an MPI failure ends the job.
    pub fn flush_all(&self) {
        if let Err(e) = self.sh.flush_all() {
            self.sh.fatal(&format!("quiet: {e}"));
        }
    }

    /// The host communicator of `set`, created collectively by its members on first use.
    fn host_comm(&self, set: PeSet) -> Result<MPI_Comm> {
        let key = (set.start, set.stride, set.size);
        let mut comms = self.host_comms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = comms.get(&key) {
            return Ok(*c);
        }
        let ranks: Vec<c_int> = (0..set.size).map(|i| set.pe(i) as c_int).collect();
        let tag = ((set.start * 131 + set.stride * 17 + set.size) % 16384) as c_int;
        let c = self.sh.m.create_group(self.host_parent, &ranks, tag)?;
        comms.insert(key, c);
        Ok(c)
    }

    fn run_host(&self, what: &str, start: impl FnOnce(*mut MPI_Request) -> c_int) -> Result<()> {
        let mut req = MPI_Request(std::ptr::null_mut());
        let m = &self.sh.m;
        m.check(what, start(&mut req)).and_then(|_| m.wait(&mut req, what))
    }

    /// `len` bytes of member `root`'s `buf` into every member's `buf`.
    ///
    /// # Safety
    /// `buf` valid for `len` bytes.
    unsafe fn bcast(&self, set: PeSet, buf: *mut u8, len: usize, root: usize) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = count(len, "broadcast")?;
        let b = self.sh.m.h.byte;
        // SAFETY: the caller's buffer.
        self.run_host("MPI_Ibcast", |r| unsafe { (self.sh.m.f.ibcast)(buf.cast(), n, b, root as c_int, c, r) })
    }

    /// Every member's `len` bytes at `src`, in member order, into `dst` (`len` × members).
    ///
    /// # Safety
    /// Buffers valid for their lengths, not overlapping.
    pub unsafe fn allgather(&self, set: PeSet, src: *const u8, dst: *mut u8, len: usize) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = count(len, "all-gather")?;
        let b = self.sh.m.h.byte;
        // SAFETY: the caller's buffers.
        self.run_host("MPI_Iallgather", |r| unsafe {
            (self.sh.m.f.iallgather)(src.cast(), n, b, dst.cast(), n, b, c, r)
        })
    }

    /// Block k of `src` (`len` bytes each) to member k; block j of `dst` from member j.
    ///
    /// # Safety
    /// Buffers valid for `len` × members bytes, not overlapping.
    unsafe fn alltoall(&self, set: PeSet, src: *const u8, dst: *mut u8, len: usize) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = count(len, "all-to-all")?;
        let b = self.sh.m.h.byte;
        // SAFETY: the caller's buffers.
        self.run_host("MPI_Ialltoall", |r| unsafe { (self.sh.m.f.ialltoall)(src.cast(), n, b, dst.cast(), n, b, c, r) })
    }
}

impl Transport for Ro {
    unsafe fn put(&self, heap: &SymmetricHeap, off: usize, src: *const u8, len: usize, pe: usize) -> Result<()> {
        let sh = &self.sh;
        sh.disp(Self::addr(heap, off), len as u64).and_then(|d| sh.put_any(src, len, pe, d, true))
    }

    unsafe fn get(&self, heap: &SymmetricHeap, dst: *mut u8, off: usize, len: usize, pe: usize) -> Result<()> {
        let sh = &self.sh;
        sh.disp(Self::addr(heap, off), len as u64).and_then(|d| sh.get_any(dst, len, pe, d))
    }

    fn amo(&self, heap: &SymmetricHeap, op: AmoOp, off: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        let sh = &self.sh;
        let old = sh.disp(Self::addr(heap, off), width as u64).and_then(|d| sh.amo(op, width, v, c, pe, d))?;
        if op != AmoOp::Fetch && heap.mapped(pe) {
            crate::sync::ring(&heap.control(pe).header().data_bell);
        }
        Ok(old)
    }

    fn quiet(&self) {
        self.flush_all();
    }

    /// Completes this PE's operations, then MPI_Ibarrier.
    fn barrier(&self, _heap: &SymmetricHeap, set: PeSet, _slot: usize) -> Result<()> {
        self.flush_all();
        let c = self.host_comm(set)?;
        // SAFETY: a valid communicator.
        self.run_host("MPI_Ibarrier", |r| unsafe { (self.sh.m.f.ibarrier)(c, r) })
    }

    unsafe fn broadcast(
        &self,
        _heap: &SymmetricHeap,
        g: &Group,
        dst: *mut u8,
        src: *const u8,
        bytes: usize,
        root: usize,
        to_root: bool,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let buf = if g.my_idx == root { src as *mut u8 } else { dst };
        // SAFETY: checked symmetric buffers; at the root MPI only reads `src`.
        unsafe { self.bcast(g.set, buf, bytes, root)? };
        if g.my_idx == root && to_root && !std::ptr::eq(dst, src) {
            // SAFETY: both ranges checked; memmove handles overlap.
            unsafe { std::ptr::copy(src, dst, bytes) };
        }
        Ok(())
    }

    /// Every member's source (all-gather), or this member's block of each (all-to-all),
    /// combined here in member order.
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
        if n == 0 {
            return self.barrier(heap, g.set, g.slot);
        }
        let members = g.set.size;
        let mut blocks: Vec<T> = Vec::with_capacity(n * members);
        let (s, d, len) = (src.cast(), blocks.as_mut_ptr().cast(), n * std::mem::size_of::<T>());
        // SAFETY: `blocks` has room for n elements from every member; src is checked.
        unsafe {
            match kind {
                Reduce::All => self.allgather(g.set, s, d, len)?,
                Reduce::Scatter => self.alltoall(g.set, s, d, len)?,
            }
            blocks.set_len(n * members);
        }
        let sources: Vec<*const T> = blocks.chunks_exact(n).map(|b| b.as_ptr()).collect();
        // SAFETY: every block holds n elements of our own vector.
        let acc = unsafe { combine(&sources, 0, n, op.f) };
        // SAFETY: dst[0..n] checked by the caller; acc has n.
        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
        Ok(())
    }

    /// An MPI all-gather.
    fn allgather_words(&self, _heap: &SymmetricHeap, g: &Group, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
        let n = mine.len();
        let mut all = vec![0u64; n * g.set.size];
        // SAFETY: `mine` holds n words, `all` n per member.
        unsafe { self.allgather(g.set, mine.as_ptr().cast(), all.as_mut_ptr().cast(), n * 8)? };
        Ok(all.chunks_exact(n).map(<[u64]>::to_vec).collect())
    }

    /// Gives a team with remote members a device communicator (the proxy runs the device
    /// collectives of the team on it).
    fn team_created(&self, slot: usize, set: PeSet) -> Result<()> {
        if self.remote_in(set) == 0 {
            return Ok(());
        }
        let ranks: Vec<c_int> = (0..set.size).map(|i| set.pe(i) as c_int).collect();
        let c = self.sh.m.create_group(self.dev_parent, &ranks, slot as c_int)?;
        let mut comms = self.sh.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        if comms.len() <= slot {
            comms.resize(slot + 1, MPI_Comm(std::ptr::null_mut()));
        }
        let mut old = std::mem::replace(&mut comms[slot], c);
        self.sh.m.free_comm(&mut old);
        Ok(())
    }

    /// Frees the team's device communicator.
    fn team_destroyed(&self, slot: usize) {
        let mut comms = self.sh.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = comms.get_mut(slot) {
            self.sh.m.free_comm(c);
        }
    }
}
