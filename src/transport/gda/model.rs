//! A NIC model for the host platform: one thread per PE that serves this PE's send queues in the
//! mlx5 format, the way a ConnectX does, so that the device posting code runs end to end in CI.
//!
//! It follows the doorbell protocol: a queue is looked at only when its doorbell register
//! changes; then the doorbell record says how far the producer is (16 bits, extended from the
//! model's own consumer index). Each WQE is checked (its index, QPN and size), executed between
//! the PEs' heaps (on the host platform every heap is mapped by every PE, so the requester side
//! can do the copy or the atomic itself), and answered with a CQE when it asks for one (owner
//! bit flipping on each pass of the CQ ring). Keys and bounds are checked as a NIC does: a bad
//! rkey or an address outside the peer's registration is a remote access error, a bad lkey a
//! local protection error. After an error CQE the queue pair is in the error state: later WQEs
//! are not executed, and those that ask for a completion get a flush error (as a NIC flushes).
//! A protocol violation by the producer (the doorbell record going backwards or past the ring, a
//! WQE with the wrong index or QPN) is counted and fails the queue pair.
//!
//! Test controls: an error injected into the n-th next WQE of a queue pair, holding queues until
//! they are full, and a reset. The model is started by init with `ROCSHMEM_BACKEND=gda
//! ROCSHMEM_GDA_PROVIDER=model` (transport/gda/host.rs), or by the GDA test entry points (src/test_hooks.rs).

use super::abi::*;
use super::layout::{PAGE, QpLayout, UAR_BF_OFFSET};
use super::mlx5::{self, Cqe};
use crate::error::{Error, Result};
use std::alloc::Layout;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A memory registration: `[base, base + len)` under `key`, at `here` in this process.
#[derive(Debug, Clone, Copy)]
pub struct Mr {
    pub base: u64,
    pub len: u64,
    pub key: u32,
    pub here: usize,
}

impl Mr {
    /// Where `[addr, addr + len)` is in this process, if `key` covers it.
    fn map(&self, addr: u64, len: u64, key: u32) -> Option<*mut u8> {
        let inside = addr >= self.base && len <= self.len && addr - self.base <= self.len - len;
        (key == self.key && inside).then(|| (self.here as u64 + (addr - self.base)) as *mut u8)
    }
}

/// How long a held queue that is not full waits for another doorbell before it is served.
const HOLD_IDLE: Duration = Duration::from_secs(2);

/// The model's side of one queue pair.
struct NicQp {
    desc: *mut rocshmem_gda_qp,
    qpn: u32,
    sq_depth: u64,
    cq_depth: u64,
    remote: Mr,
    /// Next WQEBB to execute, WQEBBs announced (extended from the doorbell record).
    ci: u64,
    pi: u64,
    last_db: u64,
    last_change: Instant,
    /// CQEs written.
    cq_pi: u64,
    /// WQEs handled since the start (or the last reset).
    seq: u64,
    inject: Option<(u64, u8)>,
    failed: bool,
    /// The current fill was already counted as a full queue.
    counted_full: bool,
}

// SAFETY: the descriptor and queue memory are owned by the Model, which outlives the thread.
unsafe impl Send for NicQp {}

#[derive(Default)]
struct Stats {
    wqes: AtomicU64,
    wqebbs: AtomicU64,
    doorbells: AtomicU64,
    cqes: AtomicU64,
    error_cqes: AtomicU64,
    flush_cqes: AtomicU64,
    max_wqe_index: AtomicU64,
    full_events: AtomicU64,
    protocol_errors: AtomicU64,
    bytes: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

struct Shared {
    qps: Mutex<Vec<NicQp>>,
    local: Vec<Mr>,
    hold: bool,
    run: AtomicBool,
    stats: Stats,
}

/// An allocation of whole pages, zeroed.
struct Pages {
    ptr: *mut u8,
    layout: Layout,
}

impl Pages {
    fn new(bytes: usize) -> Result<Pages> {
        let layout = Layout::from_size_align(bytes.max(PAGE), PAGE).map_err(|e| Error::invalid(e.to_string()))?;
        // SAFETY: non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::Os { what: format!("GDA model: allocating {bytes} bytes of queue memory"), errno: 12 });
        }
        Ok(Pages { ptr, layout })
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated in new with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// What a PE knows of a peer after the exchange: its heap registration as the peer sees it,
/// and where that heap is mapped here.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    pub base: u64,
    pub len: u64,
    pub rkey: u32,
    pub here: usize,
}

/// The NIC model of this PE: its queue pairs (one per peer) and the thread serving them.
pub struct Model {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
    descs: Box<[rocshmem_gda_qp]>,
    layout: QpLayout,
    _blocks: Vec<Pages>,
    _uars: Vec<Pages>,
}

// SAFETY: the raw pointers are to memory the Model owns; the thread is joined on drop.
unsafe impl Send for Model {}

/// Default inline limit and maximum message (mlx5: 28 bytes; 1 GiB).
pub const INLINE_DEFAULT: u32 = 28;
pub const MAX_MSG_DEFAULT: u32 = 1 << 30;

impl Model {
    /// Builds one queue pair per entry of `peers` (queue pair `i` reaches `peers[i]`; this PE is
    /// `me`, its heap registered as `local_heap`, and `extra` more local registrations, e.g. a
    /// bounce buffer) and starts the serving thread.
    pub fn start(
        me: usize,
        cfg: &rocshmem_gda_model_config,
        local_heap: Mr,
        extra: &[Mr],
        peers: &[Peer],
    ) -> Result<Model> {
        let layout = QpLayout::new(cfg.sq_depth, cfg.cq_depth)?;
        let n = peers.len();
        let mut blocks = Vec::with_capacity(n);
        let mut uars = Vec::with_capacity(n);
        let mut locals = vec![local_heap];
        locals.extend_from_slice(extra);
        let mut descs: Vec<rocshmem_gda_qp> = Vec::with_capacity(n);
        for (p, peer) in peers.iter().enumerate() {
            let block = Pages::new(layout.bytes)?;
            let uar = Pages::new(PAGE)?;
            let b = block.ptr;
            let scratch = b as u64 + layout.scratch_off as u64;
            let scratch_key = 0x5c00_0000 | ((me as u32 & 0xfff) << 12) | p as u32 & 0xfff;
            locals.push(Mr { base: scratch, len: 64, key: scratch_key, here: scratch as usize });
            // SAFETY: the block is ours and big enough; fields are plain data.
            let d = unsafe {
                rocshmem_gda_qp {
                    sq: b.add(layout.sq_off),
                    cq: b.add(layout.cq_off),
                    sq_dbrec: b.add(layout.sq_dbrec_off) as *mut u32,
                    cq_dbrec: b.add(layout.cq_dbrec_off) as *mut u32,
                    db: uar.ptr.add(UAR_BF_OFFSET) as *mut u64,
                    qpn: qpn_of(me, p),
                    vendor: ROCSHMEM_GDA_VENDOR_MLX5,
                    sq_depth: layout.sq_depth,
                    cq_depth: layout.cq_depth,
                    flags: 0,
                    max_msg: if cfg.max_msg == 0 { MAX_MSG_DEFAULT } else { cfg.max_msg },
                    inline_max: if cfg.no_inline != 0 {
                        0
                    } else if cfg.inline_max == 0 {
                        INLINE_DEFAULT
                    } else {
                        cfg.inline_max.min(INLINE_DEFAULT)
                    },
                    peer: p as i32,
                    lkey: local_heap.key,
                    rkey: peer.rkey,
                    local_base: local_heap.base,
                    remote_base: peer.base,
                    heap_len: local_heap.len,
                    scratch,
                    scratch_lkey: scratch_key,
                    ..zeroed_qp()
                }
            };
            init_cq(b, &layout);
            descs.push(d);
            blocks.push(block);
            uars.push(uar);
        }
        let mut descs = descs.into_boxed_slice();
        let qps = descs
            .iter_mut()
            .zip(peers)
            .map(|(d, peer)| NicQp {
                desc: d as *mut rocshmem_gda_qp,
                qpn: d.qpn,
                sq_depth: layout.sq_depth as u64,
                cq_depth: layout.cq_depth as u64,
                remote: Mr { base: peer.base, len: peer.len, key: peer.rkey, here: peer.here },
                ci: 0,
                pi: 0,
                last_db: 0,
                last_change: Instant::now(),
                cq_pi: 0,
                seq: 0,
                inject: None,
                failed: false,
                counted_full: false,
            })
            .collect();
        let shared = Arc::new(Shared {
            qps: Mutex::new(qps),
            local: locals,
            hold: cfg.hold_until_full != 0,
            run: AtomicBool::new(true),
            stats: Stats::default(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("rocshmem-gda-model-{me}"))
            .spawn(move || serve(&s))
            .map_err(|e| Error::Os { what: format!("GDA model: starting its thread: {e}"), errno: 0 })?;
        Ok(Model { shared, thread: Some(thread), descs, layout, _blocks: blocks, _uars: uars })
    }

    /// The device descriptors, one per peer (index = peer PE).
    pub fn descriptors(&mut self) -> *mut rocshmem_gda_qp {
        self.descs.as_mut_ptr()
    }

    /// Makes the `n`-th next WQE (0: the next) of the queue pair to `peer` fail with `syndrome`.
    pub fn inject(&self, peer: usize, n: u64, syndrome: u8) -> Result<()> {
        let mut qps = self.shared.qps.lock().unwrap();
        let q = qps.get_mut(peer).ok_or_else(|| Error::invalid(format!("GDA model: no queue pair to PE {peer}")))?;
        q.inject = Some((q.seq + n, syndrome));
        Ok(())
    }

    /// Returns every queue pair to its first state (queues empty, counters and errors cleared).
    /// Only while no kernel posts to them.
    pub fn reset(&self) {
        let mut qps = self.shared.qps.lock().unwrap();
        for q in qps.iter_mut() {
            // SAFETY: the descriptor and its memory are ours; nobody posts now (the caller's
            // contract), and the model thread waits for the lock we hold.
            unsafe {
                let d = &mut *q.desc;
                std::ptr::write_bytes(d.sq, 0, self.layout.sq_depth as usize * mlx5::BLOCK);
                init_cq(d.sq.sub(self.layout.sq_off), &self.layout);
                d.sq_dbrec.write_volatile(0);
                d.cq_dbrec.write_volatile(0);
                d.db.write_volatile(0);
                for w in
                    [&mut d.resv_head, &mut d.ready_head, &mut d.prod_idx, &mut d.done, &mut d.cq_ci, &mut d.full_waits]
                {
                    AtomicU64::from_ptr(w).store(0, Ordering::Relaxed);
                }
                for w in [&mut d.post_lock, &mut d.cq_lock, &mut d.error, &mut d.err_info, &mut d.stopped] {
                    AtomicU32::from_ptr(w).store(0, Ordering::Relaxed);
                }
            }
            *q = NicQp {
                ci: 0,
                pi: 0,
                last_db: 0,
                cq_pi: 0,
                seq: 0,
                inject: None,
                failed: false,
                counted_full: false,
                ..*q
            };
        }
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    pub fn stats(&self) -> rocshmem_gda_model_stats {
        let s = &self.shared.stats;
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        rocshmem_gda_model_stats {
            wqes: g(&s.wqes),
            wqebbs: g(&s.wqebbs),
            doorbells: g(&s.doorbells),
            cqes: g(&s.cqes),
            error_cqes: g(&s.error_cqes),
            flush_cqes: g(&s.flush_cqes),
            max_wqe_index: g(&s.max_wqe_index),
            full_events: g(&s.full_events),
            protocol_errors: g(&s.protocol_errors),
            bytes: g(&s.bytes),
        }
    }

    /// Stops the thread and tells waiting device threads to give up.
    pub fn stop(&mut self) {
        self.shared.run.store(false, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for d in self.descs.iter_mut() {
            // SAFETY: a 4-byte word of the descriptor; device threads read it atomically.
            unsafe { AtomicU32::from_ptr(&mut d.stopped).store(1, Ordering::Release) };
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The QPN of PE `me`'s queue pair to `peer` (24 bits, unique in a job of up to 4096 PEs).
fn qpn_of(me: usize, peer: usize) -> u32 {
    0x80_0000 | ((me as u32 & 0x7ff) << 12) | (peer as u32 & 0xfff)
}

fn zeroed_qp() -> rocshmem_gda_qp {
    // SAFETY: all-zero is a valid value of this plain C structure (null pointers, zero counters).
    unsafe { std::mem::zeroed() }
}

/// Every CQE starts invalid and hardware-owned for the first pass.
fn init_cq(block: *mut u8, l: &QpLayout) {
    for i in 0..l.cq_depth as usize {
        // SAFETY: inside the block's CQ.
        unsafe {
            let cqe = block.add(l.cq_off + i * mlx5::CQE_BYTES);
            std::ptr::write_bytes(cqe, 0, mlx5::CQE_BYTES);
            cqe.add(mlx5::CQE_BYTES - 1).write(mlx5::CQE_OP_OWN_INIT);
        }
    }
}

fn serve(s: &Shared) {
    let mut idle: u32 = 0;
    while s.run.load(Ordering::Acquire) {
        let mut busy = false;
        {
            let mut qps = s.qps.lock().unwrap();
            for q in qps.iter_mut() {
                busy |= q.poll(s);
            }
        }
        if busy {
            idle = 0;
        } else {
            idle = idle.saturating_add(1);
            if idle < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(u64::from((idle - 63).min(100))));
            }
        }
    }
}

impl NicQp {
    fn desc(&self) -> &rocshmem_gda_qp {
        // SAFETY: owned by the Model for the thread's life; only immutable fields are read here.
        unsafe { &*self.desc }
    }

    /// Fails the queue pair for a producer protocol violation.
    fn protocol_error(&mut self, s: &Shared) {
        bump(&s.stats.protocol_errors, 1);
        self.failed = true;
    }

    /// One look at the queue: the doorbell, then every announced WQE. True if anything moved.
    fn poll(&mut self, s: &Shared) -> bool {
        let (db_reg, sq_dbrec) = (self.desc().db, self.desc().sq_dbrec);
        // SAFETY: the doorbell register and record are 8- and 4-byte aligned words of ours.
        let db = unsafe { AtomicU64::from_ptr(db_reg).load(Ordering::Acquire) };
        if db != self.last_db {
            self.last_db = db;
            self.last_change = Instant::now();
            bump(&s.stats.doorbells, 1);
            // SAFETY: as above.
            let rec = u32::from_be(unsafe { AtomicU32::from_ptr(sq_dbrec).load(Ordering::Acquire) });
            let (db_idx, db_qpn) = mlx5::doorbell_index(db);
            let ahead = (rec as u16).wrapping_sub(self.ci as u16) as u64;
            let pi = self.ci + ahead;
            let db_ahead = db_idx.wrapping_sub(self.ci as u16) as u64;
            if db_qpn != self.qpn || rec > 0xffff || ahead > self.sq_depth || pi < self.pi || db_ahead > ahead {
                self.protocol_error(s);
            } else {
                self.pi = pi;
            }
        }
        if self.ci == self.pi {
            self.counted_full = false;
            return false;
        }
        if s.hold && !self.failed {
            if self.pi - self.ci < self.sq_depth && self.last_change.elapsed() < HOLD_IDLE {
                return false;
            }
            if self.pi - self.ci == self.sq_depth && !self.counted_full {
                self.counted_full = true;
                bump(&s.stats.full_events, 1);
            }
        }
        let mut budget = 256;
        while self.ci < self.pi && budget > 0 {
            budget -= 1;
            self.step(s);
        }
        true
    }

    /// Copies the blocks of the WQE at `ci` out of the ring (it may wrap).
    fn read_wqe(&self, buf: &mut [u8; 2 * mlx5::BLOCK]) -> usize {
        let d = self.desc();
        let block = |i: u64, out: &mut [u8]| {
            let at = (i & (self.sq_depth - 1)) as usize * mlx5::BLOCK;
            // SAFETY: inside the ring; the producer published these blocks before the doorbell.
            unsafe { std::ptr::copy_nonoverlapping(d.sq.add(at), out.as_mut_ptr(), mlx5::BLOCK) };
        };
        block(self.ci, &mut buf[..mlx5::BLOCK]);
        let (_, _, _, _, ds) = mlx5::parse_ctrl(buf);
        let nbb = mlx5::blocks(ds);
        if nbb > 1 && self.ci + 1 < self.pi {
            block(self.ci + 1, &mut buf[mlx5::BLOCK..]);
        }
        nbb
    }

    /// Executes (or flushes) the WQE at `ci`, writes its CQE, moves `ci` past it.
    fn step(&mut self, s: &Shared) {
        let mut buf = [0u8; 2 * mlx5::BLOCK];
        let nbb = self.read_wqe(&mut buf);
        let (opcode, _, idx, qpn, _) = mlx5::parse_ctrl(&buf);
        let signaled = buf[11] & mlx5::CTRL_CQ_UPDATE != 0;
        bump(&s.stats.wqebbs, nbb as u64);
        s.stats.max_wqe_index.fetch_max(self.ci, Ordering::Relaxed);
        let seq = self.seq;
        self.seq += 1;
        let outcome = if self.failed {
            Err(mlx5::SYND_WR_FLUSH)
        } else if idx != self.ci as u16 || qpn != self.qpn || self.ci + nbb as u64 > self.pi {
            bump(&s.stats.protocol_errors, 1);
            Err(mlx5::SYND_LOCAL_QP_OP)
        } else if self.inject.is_some_and(|(at, _)| at == seq) {
            Err(self.inject.take().map_or(mlx5::SYND_LOCAL_QP_OP, |(_, synd)| synd))
        } else {
            mlx5::parse_wqe(&buf[..nbb * mlx5::BLOCK]).and_then(|w| self.execute(s, &w))
        };
        let flush = self.failed;
        let mut cqe = Cqe {
            opcode: mlx5::CQE_REQ,
            owner: 0,
            wqe_counter: idx,
            wqe_opcode: opcode,
            qpn: self.qpn,
            byte_cnt: 0,
            syndrome: 0,
            vendor_syndrome: 0,
        };
        match outcome {
            Ok(bytes) => {
                bump(&s.stats.wqes, 1);
                cqe.byte_cnt = bytes;
                if signaled {
                    self.write_cqe(s, cqe);
                }
            }
            Err(synd) => {
                self.failed = true;
                cqe.opcode = mlx5::CQE_REQ_ERR;
                cqe.syndrome = synd;
                // The failing WQE always completes (with its error); flushed ones when they ask.
                if !flush || signaled {
                    bump(if flush { &s.stats.flush_cqes } else { &s.stats.error_cqes }, 1);
                    self.write_cqe(s, cqe);
                }
            }
        }
        self.ci += nbb as u64;
    }

    /// Writes a CQE at the producer index with this pass's owner bit; the last word last.
    fn write_cqe(&mut self, s: &Shared, mut c: Cqe) {
        let (cq, cq_dbrec) = (self.desc().cq, self.desc().cq_dbrec);
        // SAFETY: the CQ doorbell record is a 4-byte word of ours.
        let cons24 = u32::from_be(unsafe { AtomicU32::from_ptr(cq_dbrec).load(Ordering::Acquire) }) & 0xff_ffff;
        let used = (self.cq_pi as u32).wrapping_sub(cons24) & 0xff_ffff;
        if used as u64 >= self.cq_depth {
            // The consumer fell a whole ring behind: a NIC would raise a CQ error.
            self.protocol_error(s);
            return;
        }
        c.owner = ((self.cq_pi / self.cq_depth) & 1) as u8;
        let mut bytes = [0u8; mlx5::CQE_BYTES];
        let tail = mlx5::encode_cqe(&c, &mut bytes);
        let at = (self.cq_pi & (self.cq_depth - 1)) as usize * mlx5::CQE_BYTES;
        // SAFETY: inside the CQ ring; the entry is ours to write (checked against the consumer).
        unsafe {
            let cqe = cq.add(at);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), cqe, 60);
            AtomicU32::from_ptr(cqe.add(60) as *mut u32).store(tail, Ordering::Release);
        }
        self.cq_pi += 1;
        bump(&s.stats.cqes, 1);
    }

    /// Does what a parsed WQE says; returns the byte count, or the error syndrome.
    fn execute(&self, s: &Shared, w: &rocshmem_gda_wqe_desc) -> std::result::Result<u32, u8> {
        let local = |addr: u64, len: u64, key: u32| {
            s.local.iter().find_map(|m| m.map(addr, len, key)).ok_or(mlx5::SYND_LOCAL_PROT)
        };
        let remote = |addr: u64, len: u64| self.remote.map(addr, len, w.rkey).ok_or(mlx5::SYND_REMOTE_ACCESS);
        // An mlx5 byte count of 0 means 2 GiB.
        let count = |bc: u32| if bc == 0 { 1u64 << 31 } else { bc as u64 };
        match w.opcode as u8 {
            mlx5::OP_NOP => Ok(0),
            mlx5::OP_RDMA_WRITE => {
                let len = count(w.byte_count);
                let dst = remote(w.raddr, len)?;
                let src =
                    if w.inline_len > 0 { w.inline_data.as_ptr() } else { local(w.laddr, len, w.lkey)? as *const u8 };
                // SAFETY: both ranges were checked against their registrations.
                unsafe { std::ptr::copy(src, dst, len as usize) };
                bump(&s.stats.bytes, len);
                Ok(len as u32)
            }
            mlx5::OP_RDMA_READ => {
                let len = count(w.byte_count);
                let src = remote(w.raddr, len)?;
                let dst = local(w.laddr, len, w.lkey)?;
                // SAFETY: as above.
                unsafe { std::ptr::copy(src, dst, len as usize) };
                bump(&s.stats.bytes, len);
                Ok(len as u32)
            }
            _ => {
                let size = mlx5::atomic_size(w);
                if w.byte_count != size {
                    return Err(mlx5::SYND_LOCAL_LENGTH);
                }
                if w.raddr % size as u64 != 0 {
                    return Err(mlx5::SYND_REMOTE_INVAL_REQ);
                }
                let target = remote(w.raddr, size as u64)?;
                let result = local(w.laddr, size as u64, w.lkey)?;
                let old = atomic(target, size, w);
                // SAFETY: checked registration; 8-byte results in host order, 4-byte ones
                // big-endian (as ConnectX returns extended atomics; NVSHMEM swaps them back).
                unsafe {
                    if size == 8 {
                        (result as *mut u64).write_unaligned(old);
                    } else {
                        (result as *mut u32).write_unaligned((old as u32).to_be());
                    }
                }
                Ok(size)
            }
        }
    }
}

/// Adds `b` to `a` with carries stopped above every bit set in `boundary` (mlx5 masked
/// fetch-add); `bits` wide.
pub fn masked_add(a: u64, b: u64, boundary: u64, bits: u32) -> u64 {
    let mut r = 0u64;
    let mut carry = 0u64;
    for i in 0..bits {
        let sum = ((a >> i) & 1) + ((b >> i) & 1) + carry;
        r |= (sum & 1) << i;
        carry = if (boundary >> i) & 1 != 0 { 0 } else { sum >> 1 };
    }
    r
}

/// Performs an atomic WQE on `size` bytes at `p`; returns the old value.
fn atomic(p: *mut u8, size: u32, w: &rocshmem_gda_wqe_desc) -> u64 {
    let bits = size * 8;
    let ones = if size == 8 { u64::MAX } else { 0xffff_ffff };
    let new_value = |old: u64| -> Option<u64> {
        match w.opcode as u8 {
            mlx5::OP_ATOMIC_FA => Some(old.wrapping_add(w.swap_add)),
            mlx5::OP_ATOMIC_CS => (old == w.compare).then_some(w.swap_add),
            mlx5::OP_ATOMIC_MASKED_FA => Some(masked_add(old, w.swap_add, w.swap_mask, bits)),
            _ => ((old ^ w.compare) & w.compare_mask & ones == 0)
                .then_some((old & !w.swap_mask) | (w.swap_add & w.swap_mask)),
        }
        .map(|v| v & ones)
    };
    // SAFETY: `p` is an aligned word inside a registered heap, shared with other processes;
    // atomic accesses are the only kind the model makes to it.
    unsafe {
        if size == 8 {
            let a = AtomicU64::from_ptr(p as *mut u64);
            let mut old = a.load(Ordering::SeqCst);
            loop {
                let Some(v) = new_value(old) else { return old };
                match a.compare_exchange(old, v, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => return old,
                    Err(now) => old = now,
                }
            }
        } else {
            let a = AtomicU32::from_ptr(p as *mut u32);
            let mut old = a.load(Ordering::SeqCst);
            loop {
                let Some(v) = new_value(old as u64) else { return old as u64 };
                match a.compare_exchange(old, v as u32, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => return old as u64,
                    Err(now) => old = now,
                }
            }
        }
    }
}

/// A registration key no other PE is likely to use (keys are checked by the model like rkeys).
pub(crate) fn fresh_key(me: usize) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(me);
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    (h.finish() as u32) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_add_boundaries() {
        assert_eq!(masked_add(5, 7, 0, 64), 12);
        assert_eq!(masked_add(0xf0f0, 0xff00, u64::MAX, 64), 0xf0f0 ^ 0xff00);
        // Two 4-bit fields: 0xf + 1 does not carry into the upper field.
        assert_eq!(masked_add(0x1f, 0x01, 0x08, 8), 0x10);
        assert_eq!(masked_add(0xffff_ffff, 1, 0, 32), 0);
    }

    #[test]
    fn registration_bounds() {
        let m = Mr { base: 0x1000, len: 0x100, key: 7, here: 0x9000 };
        assert_eq!(m.map(0x1000, 0x100, 7), Some(0x9000 as *mut u8));
        assert_eq!(m.map(0x10f8, 8, 7), Some(0x90f8 as *mut u8));
        assert_eq!(m.map(0x10f9, 8, 7), None);
        assert_eq!(m.map(0x1000, 8, 8), None);
        assert_eq!(m.map(0xff8, 8, 7), None);
    }
}
