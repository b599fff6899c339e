//! The GDA transport, host side: the peers this process does not map are reached through RC
//! queue pairs, one per peer, whose WQEs the host posts with the device posting code itself
//! (`device/src/gda/qp.hpp`, compiled into the core by `src/cxx/gda_host.cpp`). The NIC here is
//! the NIC model (`gda/model.rs`, `ROCSHMEM_GDA_PROVIDER=model`, host platform): it maps
//! every peer's segment as a NIC reaches them by DMA, while this process maps only those the
//! route gives to IPC. Queue pairs on a NIC (`gda/setup.rs`) are not wired in yet.
//!
//! Per peer two queue pairs: one for device threads (the device table, `rocshmem_gda_device`)
//! and one owned by the host, so host calls never wait behind a kernel's reservations. Host
//! calls post under one lock (the registered bounce buffer they share) and wait for their
//! completion before returning, as the [`Transport`] contract says. The registration covers
//! this PE's whole segment (control region and heap), so barriers signal the peers' counters
//! with NIC atomics and collectives read the peers' exchange words with RDMA reads.

use super::abi::*;
use super::model::{Model, Mr, Peer};
use super::setup::Endpoint;
use crate::bootstrap::Job;
use crate::device_abi::rocshmem_gda_device;
use crate::env::Config;
use crate::error::{Error, Result};
use crate::gpu::Segment;
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;
use crate::sync::SyncState;
use crate::transport::{AmoOp, Group, Reduce, ReduceOp, Transport, combine};
use std::sync::{Arc, Mutex};

unsafe extern "C" {
    fn rocshmemi_gda_host_put(qp: *mut rocshmem_gda_qp, dest: *mut u8, src: *const u8, len: usize, lkey: u32) -> u32;
    fn rocshmemi_gda_host_get(qp: *mut rocshmem_gda_qp, dest: *mut u8, src: *const u8, len: usize, lkey: u32) -> u32;
    #[allow(clippy::too_many_arguments)]
    fn rocshmemi_gda_host_amo(
        qp: *mut rocshmem_gda_qp,
        op: u8,
        dest: *mut u8,
        size: u32,
        value: u64,
        cond: u64,
        result: *mut u8,
        lkey: u32,
        old: *mut u64,
    ) -> u32;
    fn rocshmemi_gda_host_quiet(qp: *mut rocshmem_gda_qp) -> u32;
}

/// Bytes of the registered bounce buffer host calls stage unregistered memory through.
const BOUNCE: usize = 1 << 20;

/// Registered fetch words of the device table (fetching atomics and `g` of device threads):
/// more than the threads that can wait on one at once on the host platform.
const FETCH_WORDS: usize = 1 << 14;

/// `lkey` of the host entry points meaning the heap's key (qp.hpp's `kHeapKey`).
const HEAP_KEY: u32 = u32::MAX;

/// The registered bounce buffer (8-byte aligned).
struct Bounce(Box<[u64]>);

impl Bounce {
    fn ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
}

/// The GDA transport of this PE.
pub struct Gda {
    me: usize,
    n: usize,
    /// Stopped at shutdown; dropped before the segments it reaches.
    model: Mutex<Option<Model>>,
    /// `2 * n` descriptors, owned by the model: `[0, n)` device, `[n, 2n)` host.
    qps: *mut rocshmem_gda_qp,
    /// This PE's registration: `[base, base + len)` of its segment.
    reg_base: usize,
    reg_len: usize,
    bounce: Mutex<Bounce>,
    bounce_key: u32,
    /// Barrier bookkeeping, shared with IPC (a slot's counters are consumed by whichever
    /// transport a barrier goes through).
    sync: Arc<SyncState>,
    /// The first error reported (each queue pair's error is reported once).
    reported: Mutex<Vec<bool>>,
    /// The device table and what it points to.
    table: Box<rocshmem_gda_device>,
    _fetch: Box<[u64]>,
    _fetch_busy: Box<[u32]>,
    /// The peers' segments as the NIC model reaches them (kept until the model has stopped).
    _nic: Vec<Segment>,
}

// SAFETY: the descriptors are shared with the model thread and device threads by design: every
// field they change is changed with atomics (qp.hpp); the rest is written before any use.
unsafe impl Send for Gda {}
unsafe impl Sync for Gda {}

/// What init hands to [`Gda::start`].
pub struct GdaSetup<'a> {
    pub job: &'a Job,
    pub cfg: &'a Config,
    pub heap: &'a SymmetricHeap,
    /// Per peer: its segment opened for the NIC model when this process does not map it.
    pub nic: Vec<Option<Segment>>,
    pub sync: Arc<SyncState>,
}

/// The qp.hpp operation code of a transport atomic, and its operand.
fn nic_op(op: AmoOp, v: u64) -> (u8, u64, bool) {
    // qp.hpp's AmoOp: fetch, set, swap, cswap, fetch_add, add, fetch_and, and, fetch_or, or,
    // fetch_xor, xor.
    match op {
        AmoOp::Fetch => (0, 0, true),
        AmoOp::Set => (1, v, false),
        AmoOp::Swap => (2, v, true),
        AmoOp::CompareSwap => (3, v, true),
        AmoOp::FetchInc => (4, 1, true),
        AmoOp::Inc => (5, 1, false),
        AmoOp::FetchAdd => (4, v, true),
        AmoOp::Add => (5, v, false),
        AmoOp::FetchAnd => (6, v, true),
        AmoOp::And => (7, v, false),
        AmoOp::FetchOr => (8, v, true),
        AmoOp::Or => (9, v, false),
        AmoOp::FetchXor => (10, v, true),
        AmoOp::Xor => (11, v, false),
    }
}

impl Gda {
    /// Collective: registers this PE's segment and a bounce buffer, exchanges the endpoints
    /// through the bootstrap, builds the queue pairs and starts the NIC model.
    pub fn start(s: GdaSetup) -> Result<Gda> {
        let heap = s.heap;
        let (me, n) = (heap.my_pe, heap.n_pes);
        if n > 2048 {
            return Err(Error::Unsupported(format!(
                "ROCSHMEM_BACKEND=gda: the NIC model serves up to 2048 PEs, not {n}"
            )));
        }
        let reg_base = heap.device_base(me);
        let reg_len = heap.control.len + heap.user_len.next_multiple_of(4096);
        let key = super::model::fresh_key(me);
        // The model's endpoint: the registration (queue pair numbers, LIDs and GIDs are a NIC's).
        let ep = Endpoint {
            qpn: 0,
            lid: 0,
            mtu: 5,
            link: 0,
            gid: [0; 16],
            mac: [0; 6],
            rkey: key,
            heap_base: reg_base as u64,
        };
        let all = s.job.allgather(&ep.to_bytes())?;
        let eps =
            all.iter().map(|b| Endpoint::from_bytes(b)).collect::<Option<Vec<_>>>().ok_or_else(|| {
                Error::Bootstrap("a peer's GDA endpoint is malformed (mixed rocSHMEM versions?)".into())
            })?;
        let here = |p: usize| match &s.nic[p] {
            Some(seg) => seg.base as usize,
            None => heap.device_base(p),
        };
        let peers: Vec<Peer> = (0..2 * n)
            .map(|i| {
                let p = i % n;
                Peer { base: eps[p].heap_base, len: reg_len as u64, rkey: eps[p].rkey, here: here(p) }
            })
            .collect();
        let mut bounce = Bounce(vec![0u64; BOUNCE / 8].into_boxed_slice());
        let b = bounce.ptr() as u64;
        let bounce_mr = Mr { base: b, len: BOUNCE as u64, key: key ^ 0x00ff_0000, here: b as usize };
        let mut fetch = vec![0u64; FETCH_WORDS].into_boxed_slice();
        let f = fetch.as_mut_ptr() as u64;
        let fetch_mr = Mr { base: f, len: (FETCH_WORDS * 8) as u64, key: key ^ 0x00ee_0000, here: f as usize };
        let local = Mr { base: reg_base as u64, len: reg_len as u64, key, here: reg_base };
        let cfg =
            rocshmem_gda_model_config { sq_depth: u32::try_from(s.cfg.gda_sq_size).unwrap_or(0), ..Default::default() };
        let mut model = Model::start(me, &cfg, local, &[bounce_mr, fetch_mr], &peers)?;
        let qps = model.descriptors();
        for i in 0..2 * n {
            // SAFETY: 2n descriptors, not used by anyone yet.
            unsafe { (*qps.add(i)).peer = (i % n) as i32 };
        }
        let nic = s.nic.into_iter().flatten().collect();
        let mut fetch_busy = vec![0u32; FETCH_WORDS].into_boxed_slice();
        let table = Box::new(rocshmem_gda_device {
            qps: qps.cast(),
            n_pes: n as i32,
            qps_per_pe: 1,
            fetch: fetch.as_mut_ptr(),
            fetch_busy: fetch_busy.as_mut_ptr(),
            n_fetch: FETCH_WORDS as u32,
            fetch_lkey: fetch_mr.key,
        });
        Ok(Gda {
            me,
            n,
            model: Mutex::new(Some(model)),
            qps,
            reg_base,
            reg_len,
            bounce: Mutex::new(bounce),
            bounce_key: bounce_mr.key,
            sync: s.sync,
            reported: Mutex::new(vec![false; 2 * n]),
            table,
            _fetch: fetch,
            _fetch_busy: fetch_busy,
            _nic: nic,
        })
    }

    /// The device table (`rocshmem_device_state::gda`). On the host platform device threads
    /// read it where it is.
    pub fn device_table(&self) -> *mut rocshmem_gda_device {
        &*self.table as *const rocshmem_gda_device as *mut rocshmem_gda_device
    }

    /// The device queue pairs, one per world PE (the device table's).
    pub fn device_qps(&self) -> *mut rocshmem_gda_qp {
        self.qps
    }

    /// Number of device queue pairs per peer (`ROCSHMEM_GDA_NUM_QPS_PER_PE_*` are read; one is
    /// built).
    pub fn qps_per_peer(&self) -> usize {
        1
    }

    fn host_qp(&self, pe: usize) -> *mut rocshmem_gda_qp {
        // SAFETY: pe < n (a valid PE: checked by the operation).
        unsafe { self.qps.add(self.n + pe) }
    }

    /// Whether `[p, p + len)` lies in this PE's registration.
    fn registered(&self, p: usize, len: usize) -> bool {
        p >= self.reg_base && len <= self.reg_len && p - self.reg_base <= self.reg_len - len
    }

    /// `Ok`, or the one-line error of a queue pair's status (reported once per queue pair).
    fn check(&self, status: u32, qp: usize) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: qp < 2n; err_info is set before error by the device code (read after).
        let info = unsafe { std::ptr::read_volatile(&(*self.qps.add(qp)).err_info) };
        let side = if qp < self.n { "device" } else { "host" };
        Err(Error::Gda(super::describe_status(status, info, side, qp % self.n)))
    }

    /// Puts from any local memory: directly when it is registered, else through the bounce buffer.
    fn put_at(&self, dest: *mut u8, src: *const u8, len: usize, pe: usize) -> Result<()> {
        let qp = self.host_qp(pe);
        let mut b = self.bounce.lock().unwrap();
        // SAFETY: a descriptor of ours; inline_max is set before any use.
        let inline = len <= unsafe { (*qp).inline_max } as usize;
        if inline || self.registered(src as usize, len) {
            // SAFETY: registered (or inline) source; `dest` is a symmetric address of this PE.
            return self.check(unsafe { rocshmemi_gda_host_put(qp, dest, src, len, HEAP_KEY) }, self.n + pe);
        }
        let mut off = 0;
        while off < len {
            let k = (len - off).min(BOUNCE);
            // SAFETY: `src` is readable for len bytes (the caller's), the bounce buffer for BOUNCE.
            unsafe { std::ptr::copy_nonoverlapping(src.add(off), b.ptr(), k) };
            // SAFETY: registered source; the destination is symmetric.
            let s = unsafe { rocshmemi_gda_host_put(qp, dest.add(off), b.ptr(), k, self.bounce_key) };
            self.check(s, self.n + pe)?;
            off += k;
        }
        Ok(())
    }

    /// Gets into any local memory: directly when registered, else through the bounce buffer.
    fn get_at(&self, dst: *mut u8, src: *const u8, len: usize, pe: usize) -> Result<()> {
        let qp = self.host_qp(pe);
        let mut b = self.bounce.lock().unwrap();
        if self.registered(dst as usize, len) {
            // SAFETY: registered destination; `src` is a symmetric address of this PE.
            return self.check(unsafe { rocshmemi_gda_host_get(qp, dst, src, len, HEAP_KEY) }, self.n + pe);
        }
        let mut off = 0;
        while off < len {
            let k = (len - off).min(BOUNCE);
            // SAFETY: as in put_at, reversed.
            let s = unsafe { rocshmemi_gda_host_get(qp, b.ptr(), src.add(off), k, self.bounce_key) };
            self.check(s, self.n + pe)?;
            unsafe { std::ptr::copy_nonoverlapping(b.ptr(), dst.add(off), k) };
            off += k;
        }
        Ok(())
    }

    /// An atomic on the `width`-byte word at symmetric address `dest` of PE `pe`.
    #[allow(clippy::too_many_arguments)]
    fn amo_at(&self, op: AmoOp, dest: *mut u8, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        let (code, value, fetch) = nic_op(op, v);
        let mut b = self.bounce.lock().unwrap();
        let result = if fetch { b.ptr() } else { std::ptr::null_mut() };
        let mut old = 0u64;
        // SAFETY: an aligned symmetric word (checked by the operation); registered result.
        let (qp, key) = (self.host_qp(pe), self.bounce_key);
        let s = unsafe { rocshmemi_gda_host_amo(qp, code, dest, width as u32, value, c, result, key, &mut old) };
        self.check(s, self.n + pe)?;
        Ok(old)
    }

    /// Completes every queue pair (host ones, then what device threads published so far), and
    /// reports each queue pair's first error once.
    fn quiet_all(&self) -> Result<()> {
        let mut first = Ok(());
        for i in (0..2 * self.n).rev() {
            // SAFETY: a descriptor of ours; quiet is safe with concurrent posters.
            let s = unsafe { rocshmemi_gda_host_quiet(self.qps.add(i)) };
            if s != 0 && s != ROCSHMEM_GDA_ERR_STOPPED {
                let mut r = self.reported.lock().unwrap();
                if !r[i] {
                    r[i] = true;
                    if first.is_ok() {
                        first = self.check(s, i);
                    }
                }
            }
        }
        first
    }

    /// Finalize: completes what is posted, then stops the model; waiting device threads give
    /// up (`stopped`).
    pub fn shutdown(&self) {
        if let Err(e) = self.quiet_all() {
            crate::log_error!("rocshmem_finalize", "{e}");
        }
        if let Some(mut m) = self.model.lock().unwrap().take() {
            m.stop();
        }
    }

    /// Address in this PE's segment of heap offset `off`.
    fn sym(&self, heap: &SymmetricHeap, off: usize) -> *mut u8 {
        (heap.user_base(self.me) + off) as *mut u8
    }
}

impl Drop for Gda {
    fn drop(&mut self) {
        if let Some(mut m) = self.model.lock().unwrap().take() {
            m.stop();
        }
    }
}

impl Transport for Gda {
    unsafe fn put(&self, heap: &SymmetricHeap, off: usize, src: *const u8, len: usize, pe: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.put_at(self.sym(heap, off), src, len, pe)
    }

    unsafe fn get(&self, heap: &SymmetricHeap, dst: *mut u8, off: usize, len: usize, pe: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.get_at(dst, self.sym(heap, off), len, pe)
    }

    fn amo(&self, heap: &SymmetricHeap, op: AmoOp, off: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        self.amo_at(op, self.sym(heap, off), width, v, c, pe)
    }

    fn quiet(&self) {
        if let Err(e) = self.quiet_all() {
            crate::log_error!("rocshmem_quiet", "{e}");
        }
    }

    /// The dissemination barrier of IPC, its signals NIC atomics on the peers' counters (the
    /// waiting side polls its own counter; the NIC rings no doorbell, so a sleeping waiter
    /// notices within 1 ms).
    fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()> {
        self.quiet_all()?;
        let mine = heap.control(self.me).pair(slot, self.me).as_ptr() as *mut u8;
        self.sync.barrier_with(heap, set, slot, |to| self.amo_at(AmoOp::Add, mine, 8, 1, 0, to).map(drop))
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
        self.barrier(heap, g.set, g.slot)?;
        if bytes > 0 && (g.my_idx != root || (to_root && !std::ptr::eq(dst, src))) {
            self.get_at(dst, src, bytes, g.set.pe(root))?;
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
        self.barrier(heap, g.set, g.slot)?;
        if n == 0 {
            return self.barrier(heap, g.set, g.slot);
        }
        let size = std::mem::size_of::<T>();
        // This member's elements of every member's source, read with RDMA reads.
        let lo = if kind == Reduce::Scatter { g.my_idx * n } else { 0 };
        let mut copies: Vec<Vec<T>> = Vec::with_capacity(g.set.size);
        for i in 0..g.set.size {
            let mut v: Vec<T> = Vec::with_capacity(n);
            // SAFETY: symmetric source of lo + n elements on every member (checked by the caller).
            self.get_at(v.as_mut_ptr().cast(), unsafe { src.add(lo) }.cast(), n * size, g.set.pe(i))?;
            // SAFETY: n elements were written (plain scalars).
            unsafe { v.set_len(n) };
            copies.push(v);
        }
        let sources: Vec<*const T> = copies.iter().map(|v| v.as_ptr()).collect();
        // SAFETY: every copy holds n elements.
        let acc = unsafe { combine(&sources, 0, n, op.f) };
        // dst may be src (in place): written once every member has read.
        self.barrier(heap, g.set, g.slot)?;
        // SAFETY: dst[0..n] checked by the caller.
        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
        Ok(())
    }

    /// Through the exchange words of the group's slot, read with RDMA reads between two barriers
    /// (in rounds of as many words as the slot has).
    fn allgather_words(&self, heap: &SymmetricHeap, g: &Group, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
        let me = heap.control(self.me);
        let per = heap.control.exchange_words.max(1);
        let mut rows = vec![Vec::with_capacity(mine.len()); g.set.size];
        let mut first = 0;
        loop {
            let k = (mine.len() - first).min(per);
            for (w, v) in mine[first..first + k].iter().enumerate() {
                me.exchange(g.slot, w).store(*v, std::sync::atomic::Ordering::Relaxed);
            }
            self.barrier(heap, g.set, g.slot)?;
            let at = me.exchange(g.slot, 0).as_ptr() as *mut u8;
            for (i, row) in rows.iter_mut().enumerate() {
                let mut part = vec![0u64; k];
                if k > 0 {
                    self.get_at(part.as_mut_ptr().cast(), at, k * 8, g.set.pe(i))?;
                }
                row.extend_from_slice(&part);
            }
            self.barrier(heap, g.set, g.slot)?;
            first += k;
            if first >= mine.len() {
                return Ok(rows);
            }
        }
    }
}
