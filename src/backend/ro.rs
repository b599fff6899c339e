//! The RO backend (reverse offload): PEs this process does not map are reached with MPI
//! one-sided operations on a window over every PE's segment, and collectives on teams with
//! such members run as MPI collectives. Device code hands its operations to a proxy thread
//! through the queues of `device_abi` (`rocshmem_ro_*`); host calls use MPI directly from the
//! calling thread. Design and protocol: docs/ro.md.

use super::mpi::{IN_PLACE, MAX_CHUNK, MpiRma, count};
use crate::device_abi::*;
use crate::error::{Error, Result};
use crate::gpu::GpuRuntime;
use crate::pe_set::PeSet;
use crate::scalar::{Arith, BFloat16, Half};
use crate::transport::AmoOp;
use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Win};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type MResult<T> = std::result::Result<T, String>;

/// Host buffer size for staging GPU memory outside the heap (puts from and gets into it).
const STAGE_BYTES: usize = 4 << 20;

/// How the RO backend is set up (from the environment and the job).
pub struct RoConfig {
    /// `mapped[pe]`: this process maps PE pe's segment (same node, mixed IPC allowed).
    pub mapped: Vec<bool>,
    pub n_queues: usize,
    /// Idle sleep of the proxy (`ROCSHMEM_RO_PROGRESS_DELAY`, microseconds; 0: yield).
    pub progress_delay_us: u64,
    /// The GPU runtime (queue memory, staging of GPU buffers).
    pub gpu: Arc<dyn GpuRuntime>,
}

/// The queues device code writes, in one block of host memory the GPU maps at the same address
/// (`GpuRuntime::alloc_host_mapped`): the device block, the queues, their commands (slot i
/// starts with seq i) and their ALLTOALLV argument blocks.
struct QueueMem {
    mem: crate::gpu::Segment,
}

impl QueueMem {
    fn new(gpu: &dyn GpuRuntime, n_queues: usize) -> Result<QueueMem> {
        use std::mem::size_of;
        let slots = ROCSHMEM_RO_QUEUE_SLOTS as usize;
        let queues_off = size_of::<rocshmem_ro_device>().next_multiple_of(64);
        let cmds_off = queues_off + n_queues * size_of::<rocshmem_ro_queue>();
        let args_off = cmds_off + n_queues * slots * size_of::<rocshmem_ro_cmd>();
        let len = args_off + n_queues * slots * size_of::<rocshmem_ro_alltoallv>();
        let mem = gpu.alloc_host_mapped(len)?;
        let base = mem.base;
        // SAFETY: the block is `len` zeroed, page-aligned bytes, laid out as computed above;
        // nothing else uses it yet.
        unsafe {
            let queues = base.add(queues_off).cast::<rocshmem_ro_queue>();
            let cmds = base.add(cmds_off).cast::<rocshmem_ro_cmd>();
            let args = base.add(args_off).cast::<rocshmem_ro_alltoallv>();
            for i in 0..n_queues * slots {
                cmds.add(i).write(rocshmem_ro_cmd { seq: (i % slots) as u64, ..Default::default() });
            }
            for q in 0..n_queues {
                queues.add(q).write(rocshmem_ro_queue {
                    tail: 0,
                    pad0: [0; 7],
                    head: 0,
                    pad1: [0; 7],
                    cmds: cmds.add(q * slots),
                    args: args.add(q * slots),
                    pad2: [0; 6],
                });
            }
            base.cast::<rocshmem_ro_device>().write(rocshmem_ro_device {
                n_queues: n_queues as u32,
                slots: slots as u32,
                queues,
                stopped: 0,
                reserved: 0,
            });
        }
        Ok(QueueMem { mem })
    }

    fn dev(&self) -> *mut rocshmem_ro_device {
        self.mem.base.cast()
    }
}

/// What the proxy thread and the host calls share.
struct Shared {
    m: MpiRma,
    my_pe: usize,
    win: MPI_Win,
    win_base: usize,
    win_len: usize,
    /// The RO world communicator (rank = PE): for MPI_Abort.
    world: MPI_Comm,
    /// Device communicator per team slot (null where the team has none).
    dev_comms: Mutex<Vec<MPI_Comm>>,
    /// Progress communicator of the proxy (MPI_Iprobe).
    probe: MPI_Comm,
    /// 2-byte contiguous type of the 16-bit floats, and our user operations (`red`): the
    /// 16-bit floats' sum/max/min/prod (half first, then bfloat16), then sum/prod of the 8- and
    /// 16-bit integers (i8, i16, u8, u16), which must wrap: Open MPI 4.1's AVX MPI_SUM/MPI_PROD
    /// saturate them (measured: char 100 + 100 gave 127).
    t16: MPI_Datatype,
    ops16: [MPI_Op; 16],
    /// An 8-byte compare-and-swap on this PE's own word is a CPU atomic, not an MPI call (see
    /// [`cpu_self_cas`]).
    cpu_self_cas: bool,
    /// Set when the job is going down on a fatal error (so a second error does not log again).
    dying: AtomicBool,
    /// The GPU runtime: local buffers in GPU memory are staged through host memory (the MPI
    /// library may not be able to read GPU memory; the heaps are host memory).
    gpu: Arc<dyn GpuRuntime>,
}

// SAFETY: MPI handles are process-global and MPI runs with MPI_THREAD_MULTIPLE; the mutex
// guards the communicator table.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// The window displacement of the local symmetric address `addr` (`len` bytes).
    fn disp(&self, addr: u64, len: u64) -> MResult<MPI_Aint> {
        let a = addr as usize;
        if a < self.win_base || len as usize > self.win_len || a - self.win_base > self.win_len - len as usize {
            return Err(format!("address {a:#x} (+{len} bytes) is not inside the symmetric heap"));
        }
        Ok((a - self.win_base) as MPI_Aint)
    }

    /// Ends the job: one line naming the PE, the operation and MPI's error, then MPI_Abort.
    fn fatal(&self, what: &str) -> ! {
        if !self.dying.swap(true, Ordering::SeqCst) {
            crate::log_error!("rocshmem RO", "PE {}: {what}; ending the job", self.my_pe);
        }
        // SAFETY: MPI_Abort ends every process of the job.
        unsafe { (self.m.f.abort)(self.world, 1) };
        crate::stop::exit_now(1)
    }

    /// Runs `op(offset, count)` over `len` bytes in pieces of at most MAX_CHUNK (MPI counts are
    /// `int`), stopping at the first error.
    fn in_chunks(&self, what: &str, len: usize, mut op: impl FnMut(usize, c_int) -> c_int) -> MResult<()> {
        let mut off = 0;
        while off < len {
            let n = (len - off).min(MAX_CHUNK);
            self.m.check(what, op(off, n as c_int))?;
            off += n;
        }
        Ok(())
    }

    fn put(&self, src: *const u8, len: usize, pe: usize, disp: MPI_Aint) -> MResult<()> {
        let b = self.m.h.byte;
        // SAFETY: `src` is readable for `len` bytes; the target range is inside the window.
        self.in_chunks("MPI_Put", len, |off, n| unsafe {
            (self.m.f.put)(src.add(off).cast(), n, b, pe as c_int, disp + off as MPI_Aint, n, b, self.win)
        })
    }

    fn get(&self, dst: *mut u8, len: usize, pe: usize, disp: MPI_Aint) -> MResult<()> {
        let b = self.m.h.byte;
        // SAFETY: `dst` is writable for `len` bytes; the source range is inside the window.
        self.in_chunks("MPI_Get", len, |off, n| unsafe {
            (self.m.f.get)(dst.add(off).cast(), n, b, pe as c_int, disp + off as MPI_Aint, n, b, self.win)
        })
    }

    /// Whether `addr` is GPU memory (staged through host buffers). This PE's segment is host
    /// memory by construction, and most sources and destinations lie in it: no driver call
    /// (`cudaPointerGetAttributes`) on the proxy's path for them.
    fn gpu_memory(&self, addr: usize) -> bool {
        !(addr >= self.win_base && addr - self.win_base < self.win_len) && self.gpu.is_device_memory(addr)
    }

    /// A put of `len` bytes of local `src` to PE `pe`: complete remotely at return with
    /// `flush`. A source in GPU memory goes through a host buffer, a piece at a time, each piece
    /// flushed before the buffer is reused (so it is always complete at return).
    fn put_any(&self, src: *const u8, len: usize, pe: usize, disp: MPI_Aint, flush: bool) -> MResult<()> {
        if !self.gpu_memory(src as usize) {
            self.put(src, len, pe, disp)?;
            return if flush { self.flush(pe) } else { Ok(()) };
        }
        let mut buf = vec![0u8; len.min(STAGE_BYTES)];
        for off in (0..len).step_by(STAGE_BYTES) {
            let n = (len - off).min(STAGE_BYTES);
            // SAFETY: the caller's source, `len` bytes; our buffer of at least `n`.
            unsafe { self.gpu.copy_beside_kernels(buf.as_mut_ptr(), src.add(off), n) }.map_err(|e| e.to_string())?;
            self.put(buf.as_ptr(), n, pe, disp + off as MPI_Aint)?;
            self.flush(pe)?;
        }
        Ok(())
    }

    /// A get of `len` bytes from PE `pe` into local `dst`, complete at return; a destination in
    /// GPU memory is filled from a host buffer, a piece at a time.
    fn get_any(&self, dst: *mut u8, len: usize, pe: usize, disp: MPI_Aint) -> MResult<()> {
        if !self.gpu_memory(dst as usize) {
            self.get(dst, len, pe, disp)?;
            return self.flush(pe);
        }
        let mut buf = vec![0u8; len.min(STAGE_BYTES)];
        for off in (0..len).step_by(STAGE_BYTES) {
            let n = (len - off).min(STAGE_BYTES);
            self.get(buf.as_mut_ptr(), n, pe, disp + off as MPI_Aint)?;
            self.flush(pe)?;
            // SAFETY: the caller's destination, `len` bytes; our buffer of at least `n`.
            unsafe { self.gpu.copy_beside_kernels(dst.add(off), buf.as_ptr(), n) }.map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// `n` words of a local array (an ALLTOALLV count or displacement array, which may be GPU
    /// memory).
    fn read_words(&self, p: *const usize, n: usize) -> MResult<Vec<usize>> {
        let mut v = vec![0usize; n];
        if self.gpu_memory(p as usize) {
            // SAFETY: the producer's array of `n` words; our vector of `n`.
            unsafe { self.gpu.copy_beside_kernels(v.as_mut_ptr().cast(), p.cast(), n * 8) }
                .map_err(|e| e.to_string())?;
        } else {
            // SAFETY: as above, host memory.
            unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), n) };
        }
        Ok(v)
    }

    /// Refuses a collective buffer in GPU memory: MPI reads and writes it in place, and
    /// collective buffers are symmetric (the heaps are host memory).
    fn host_buffer(&self, addr: u64, what: &str) -> MResult<()> {
        if addr != 0 && self.gpu_memory(addr as usize) {
            return Err(format!(
                "the {what} buffer {addr:#x} is GPU memory outside the symmetric heap (collectives take symmetric buffers)"
            ));
        }
        Ok(())
    }

    fn flush(&self, pe: usize) -> MResult<()> {
        // SAFETY: our window, locked with lock_all.
        self.m.check("MPI_Win_flush", unsafe { (self.m.f.win_flush)(pe as c_int, self.win) })
    }

    fn flush_all(&self) -> MResult<()> {
        // SAFETY: as above.
        self.m.check("MPI_Win_flush_all", unsafe { (self.m.f.win_flush_all)(self.win) })
    }

    /// An atomic on the `width`-byte word at displacement `disp` of PE `pe`, flushed; returns
    /// the old value (the current one for Fetch; 0 for the non-fetching forms).
    fn amo(&self, op: AmoOp, width: usize, v: u64, c: u64, pe: usize, disp: MPI_Aint) -> MResult<u64> {
        if width != 4 && width != 8 {
            return Err(format!("atomic on a {width}-byte word (4 or 8 only)"));
        }
        let dt = self.m.word(width);
        let h = &self.m.h;
        let (v, c) = if width == 4 { (v & 0xffff_ffff, c & 0xffff_ffff) } else { (v, c) };
        // Little-endian: the low 4 bytes of a u64 are the 4-byte value.
        let (vb, cb, mut old) = (v, c, 0u64);
        let one = 1u64;
        let (vp, cp, op_) = (
            &vb as *const u64 as *const c_void,
            &cb as *const u64 as *const c_void,
            &mut old as *mut u64 as *mut c_void,
        );
        if op == AmoOp::CompareSwap && pe == self.my_pe && width == 8 && self.cpu_self_cas {
            // See cpu_self_cas(): where an 8-byte MPI CAS to self crashes, a CPU CAS on our own
            // word (atomic with the other PEs' MPI CAS there). 4-byte CAS stays an MPI call.
            let at = self.win_base + disp as usize;
            // SAFETY: an aligned word of our own window (checked by disp(); alignment by callers).
            let old = unsafe {
                if width == 4 {
                    match std::sync::atomic::AtomicU32::from_ptr(at as *mut u32).compare_exchange(
                        c as u32,
                        v as u32,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    ) {
                        Ok(o) | Err(o) => o as u64,
                    }
                } else {
                    match AtomicU64::from_ptr(at as *mut u64).compare_exchange(c, v, Ordering::SeqCst, Ordering::SeqCst)
                    {
                        Ok(o) | Err(o) => o,
                    }
                }
            };
            return Ok(old);
        }
        let pe_ = pe as c_int;
        let w = self.win;
        // SAFETY: local words of 8 bytes (at least `width`); the target is inside the window.
        let rc = unsafe {
            match op {
                AmoOp::Fetch => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.no_op, w),
                AmoOp::Set => (self.m.f.accumulate)(vp, 1, dt, pe_, disp, 1, dt, h.replace, w),
                AmoOp::Swap => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.replace, w),
                AmoOp::CompareSwap => (self.m.f.compare_and_swap)(vp, cp, op_, dt, pe_, disp, w),
                AmoOp::FetchInc => {
                    (self.m.f.fetch_and_op)(&one as *const u64 as *const c_void, op_, dt, pe_, disp, h.sum, w)
                }
                AmoOp::Inc => {
                    (self.m.f.accumulate)(&one as *const u64 as *const c_void, 1, dt, pe_, disp, 1, dt, h.sum, w)
                }
                AmoOp::FetchAdd => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.sum, w),
                AmoOp::Add => (self.m.f.accumulate)(vp, 1, dt, pe_, disp, 1, dt, h.sum, w),
                AmoOp::FetchAnd => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.band, w),
                AmoOp::And => (self.m.f.accumulate)(vp, 1, dt, pe_, disp, 1, dt, h.band, w),
                AmoOp::FetchOr => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.bor, w),
                AmoOp::Or => (self.m.f.accumulate)(vp, 1, dt, pe_, disp, 1, dt, h.bor, w),
                AmoOp::FetchXor => (self.m.f.fetch_and_op)(vp, op_, dt, pe_, disp, h.bxor, w),
                AmoOp::Xor => (self.m.f.accumulate)(vp, 1, dt, pe_, disp, 1, dt, h.bxor, w),
            }
        };
        self.m.check(amo_name(op), rc)?;
        self.flush(pe)?;
        Ok(if width == 4 { old & 0xffff_ffff } else { old })
    }

    fn dev_comm(&self, slot: u64) -> MResult<MPI_Comm> {
        let comms = self.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        match comms.get(slot as usize) {
            Some(c) if !c.0.is_null() => Ok(*c),
            _ => Err(format!("team slot {slot} has no device communicator (not a team with remote members?)")),
        }
    }

    /// The MPI type and operation of a reduction (`dtype`, `sub` codes of the queue protocol).
    fn reduction(&self, dtype: u8, sub: u8) -> MResult<(MPI_Datatype, MPI_Op)> {
        let h = &self.m.h;
        let bad = || format!("reduction operation {sub} on element type {dtype} is not supported");
        if dtype == ROCSHMEM_RO_F16 || dtype == ROCSHMEM_RO_BF16 {
            if sub > 3 {
                return Err(bad());
            }
            let k = (dtype - ROCSHMEM_RO_F16) as usize * 4 + sub as usize;
            return Ok((self.t16, self.ops16[k]));
        }
        let t = *h.types.get(dtype as usize).ok_or_else(bad)?;
        let small = [ROCSHMEM_RO_I8, ROCSHMEM_RO_I16, ROCSHMEM_RO_U8, ROCSHMEM_RO_U16].iter().position(|d| *d == dtype);
        if let (Some(i), 0 | 3) = (small, sub) {
            return Ok((t, self.ops16[8 + i * 2 + usize::from(sub == 3)]));
        }
        let float = dtype == ROCSHMEM_RO_F32 || dtype == ROCSHMEM_RO_F64;
        let op = match sub {
            0 => h.sum,
            1 => h.max,
            2 => h.min,
            3 => h.prod,
            4 if !float => h.band,
            5 if !float => h.bor,
            6 if !float => h.bxor,
            _ => return Err(bad()),
        };
        Ok((t, op))
    }
}

/// What to check when MPI_Win_create fails: Open MPI's osc/rdma needs a transport with
/// one-sided support, which on one node is btl/vader with a single-copy mechanism (measured on
/// an Open MPI 4.1.6 whose environment set OMPI_MCA_btl_vader_single_copy_mechanism=none: every
/// osc component refused the window; with cma it works).
fn win_create_hint() -> String {
    const VAR: &str = "OMPI_MCA_btl_vader_single_copy_mechanism";
    match std::env::var(VAR) {
        Ok(v) if v.trim() == "none" => format!(
            " ({VAR}=none in the environment leaves Open MPI no one-sided transport between the PEs of a node: \
             set it to cma, or to emulated where process_vm_readv is not allowed)"
        ),
        _ => " (the MPI library found no one-sided transport for this window: with Open MPI, check that osc/rdma \
              or osc/ucx can run, for example --mca osc_base_verbose 100)"
            .into(),
    }
}

/// Whether an 8-byte compare-and-swap on the calling PE's own word must be a CPU atomic
/// instead of `MPI_Compare_and_swap`: only for Open MPI before 4.1.6. Measured with a two-PE
/// program where PE 0 CAS-increments its own word while PE 1 does so with MPI
/// (`ctests/ro/cas_contention.c` does the same through rocSHMEM):
/// - Open MPI 4.1.4 (Debian 12): an 8-byte MPI CAS to self crashes osc/rdma over btl/vader, in
///   every single-copy mode (open-mpi/ompi#7027 is the same crash); a CPU CAS is atomic with
///   the peers' MPI CAS (vader runs them as CPU atomics at the target).
/// - Open MPI 4.1.6 (the H200 machine, cma or emulated): MPI CAS to self works and is atomic;
///   a CPU CAS is not atomic with the peers' MPI CAS (lost updates: the device amo-standard
///   test failed on 8-byte types).
///
/// Which 4.1 release changed this was not measured; 4.1.5 takes the 4.1.4 path.
fn cpu_self_cas(library: &str) -> bool {
    matches!(super::mpi::open_mpi_version(library), Some(v) if v < (4, 1, 6))
}

fn amo_name(op: AmoOp) -> &'static str {
    match op {
        AmoOp::Set | AmoOp::Inc | AmoOp::Add | AmoOp::And | AmoOp::Or | AmoOp::Xor => "MPI_Accumulate",
        AmoOp::CompareSwap => "MPI_Compare_and_swap",
        _ => "MPI_Fetch_and_op",
    }
}

/// `inout[i] = in[i] op inout[i]` with the host reductions' arithmetic (16-bit floats through
/// f32, integers wrapping); OP 0 sum, 1 max, 2 min, 3 prod.
unsafe extern "C" fn red<T: Arith, const OP: u8>(
    inv: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    _dt: *mut MPI_Datatype,
) {
    // SAFETY: MPI passes `*len` elements of T in each buffer (the op is only used with T's type).
    unsafe {
        let n = (*len).max(0) as usize;
        let a = std::slice::from_raw_parts(inv as *const T, n);
        let b = std::slice::from_raw_parts_mut(inout as *mut T, n);
        for (x, y) in a.iter().zip(b.iter_mut()) {
            *y = match OP {
                0 => T::sum(*x, *y),
                1 => T::max(*x, *y),
                2 => T::min(*x, *y),
                _ => T::prod(*x, *y),
            };
        }
    }
}

/// The RO backend of this process.
pub struct Ro {
    sh: Arc<Shared>,
    pub mapped: Vec<bool>,
    /// Parents of the host and device team communicators (duplicates of the RO world).
    host_parent: MPI_Comm,
    dev_parent: MPI_Comm,
    /// Host communicators, by member set (created on first use, collectively by the members).
    host_comms: Mutex<HashMap<(usize, usize, usize), MPI_Comm>>,
    queues: QueueMem,
    stop: Arc<AtomicBool>,
    proxy: Mutex<Option<std::thread::JoinHandle<()>>>,
    down: AtomicBool,
}

// SAFETY: see `Shared`; the queue memory is shared with device code by design (atomics).
unsafe impl Send for Ro {}
unsafe impl Sync for Ro {}

impl Ro {
    /// Collective over every PE: builds the RO world (rank = PE) from `comm`, the window over
    /// this PE's segment `[seg_base, seg_base + seg_len)`, the communicators, the queues, and
    /// starts the proxy thread.
    pub fn new(
        mpi: &crate::bootstrap::mpi::Mpi,
        comm: MPI_Comm,
        my_pe: usize,
        n_pes: usize,
        seg_base: usize,
        seg_len: usize,
        cfg: RoConfig,
    ) -> Result<Ro> {
        if cfg.mapped.len() != n_pes || my_pe >= n_pes {
            return Err(Error::invalid(format!("RO backend: {} mapping entries for {n_pes} PEs", cfg.mapped.len())));
        }
        let m = MpiRma::load(mpi)?;
        let library = m.library_version();
        let e = Error::Mpi;
        // PE p is rank p of the bootstrap communicator; split keyed by PE keeps that true
        // whatever communicator the job was started on.
        let mut world = MPI_Comm(std::ptr::null_mut());
        // SAFETY: `comm` is the communicator the bootstrap ran on.
        m.check("MPI_Comm_split", unsafe { (m.f.comm_split)(comm, 0, my_pe as c_int, &mut world) }).map_err(e)?;
        m.check("MPI_Comm_set_errhandler", unsafe { (m.f.comm_set_errhandler)(world, m.h.errors_return) })
            .map_err(e)?;
        let mut rank: c_int = -1;
        unsafe { (m.f.comm_rank)(world, &mut rank) };
        if rank != my_pe as c_int {
            return Err(Error::Mpi(format!("RO world: PE {my_pe} got MPI rank {rank}")));
        }
        let host_parent = m.dup(world).map_err(e)?;
        let dev_parent = m.dup(world).map_err(e)?;
        let probe = m.dup(world).map_err(e)?;
        let mut win = MPI_Win(std::ptr::null_mut());
        // SAFETY: our whole segment, mapped for the life of the runtime; displacement unit 1.
        unsafe {
            m.check(
                "MPI_Win_create",
                (m.f.win_create)(seg_base as *mut c_void, seg_len as MPI_Aint, 1, m.h.info_null, world, &mut win),
            )
            .map_err(|msg| Error::Mpi(format!("{msg}{}", win_create_hint())))?;
            m.check("MPI_Win_set_errhandler", (m.f.win_set_errhandler)(win, m.h.errors_return)).map_err(e)?;
            m.check("MPI_Win_lock_all", (m.f.win_lock_all)(0, win)).map_err(e)?;
        }
        let mut t16 = MPI_Datatype(std::ptr::null_mut());
        // SAFETY: a new committed type of two bytes.
        unsafe {
            m.check("MPI_Type_contiguous", (m.f.type_contiguous)(2, m.h.byte, &mut t16)).map_err(e)?;
            m.check("MPI_Type_commit", (m.f.type_commit)(&mut t16)).map_err(e)?;
        }
        let fns: [super::mpi::UserFn; 16] = [
            red::<Half, 0>,
            red::<Half, 1>,
            red::<Half, 2>,
            red::<Half, 3>,
            red::<BFloat16, 0>,
            red::<BFloat16, 1>,
            red::<BFloat16, 2>,
            red::<BFloat16, 3>,
            red::<i8, 0>,
            red::<i8, 3>,
            red::<i16, 0>,
            red::<i16, 3>,
            red::<u8, 0>,
            red::<u8, 3>,
            red::<u16, 0>,
            red::<u16, 3>,
        ];
        let mut ops16 = [MPI_Op(std::ptr::null_mut()); 16];
        for (f, o) in fns.iter().zip(ops16.iter_mut()) {
            // SAFETY: a commutative user operation.
            m.check("MPI_Op_create", unsafe { (m.f.op_create)(*f, 1, o) }).map_err(e)?;
        }
        let sh = Arc::new(Shared {
            m,
            my_pe,
            win,
            win_base: seg_base,
            win_len: seg_len,
            world,
            dev_comms: Mutex::new(Vec::new()),
            probe,
            t16,
            ops16,
            cpu_self_cas: cpu_self_cas(&library),
            dying: AtomicBool::new(false),
            gpu: cfg.gpu,
        });
        crate::log_info!(
            "rocshmem_init",
            "RO: MPI is {}; 8-byte compare-and-swap on this PE's own words: {}",
            library.lines().next().unwrap_or("unknown"),
            if sh.cpu_self_cas { "CPU atomic" } else { "MPI_Compare_and_swap" }
        );
        let queues = QueueMem::new(sh.gpu.as_ref(), cfg.n_queues.clamp(1, 4096))?;
        let ro = Ro {
            sh,
            mapped: cfg.mapped,
            host_parent,
            dev_parent,
            host_comms: Mutex::new(HashMap::new()),
            queues,
            stop: Arc::new(AtomicBool::new(false)),
            proxy: Mutex::new(None),
            down: AtomicBool::new(false),
        };
        let proxy = Proxy {
            sh: Arc::clone(&ro.sh),
            dev: ro.queues.dev() as usize,
            stop: Arc::clone(&ro.stop),
            delay: Duration::from_micros(cfg.progress_delay_us),
        };
        let h = std::thread::Builder::new()
            .name("rocshmem-ro-proxy".into())
            .spawn(move || proxy.run())
            .map_err(|err| Error::Mpi(format!("cannot start the RO proxy thread: {err}")))?;
        *ro.proxy.lock().unwrap() = Some(h);
        Ok(ro)
    }

    /// `rocshmem_device_state::ro`.
    pub fn device_ptr(&self) -> *mut rocshmem_ro_device {
        self.queues.dev()
    }

    pub fn is_mapped(&self, pe: usize) -> bool {
        self.mapped[pe]
    }

    /// Members of `set` this PE does not map (`rocshmem_team_device::ro_remote`).
    pub fn remote_in(&self, set: PeSet) -> usize {
        (0..set.size).filter(|i| !self.mapped[set.pe(*i)]).count()
    }

    fn host_err(&self, what: MResult<()>) -> Result<()> {
        what.map_err(Error::Mpi)
    }

    /// Host put of `len` bytes to symmetric `dst` (local address) on PE `pe`, complete at return.
    ///
    /// # Safety
    /// `src` readable for `len` bytes.
    pub unsafe fn put(&self, dst: usize, src: *const u8, len: usize, pe: usize) -> Result<()> {
        let sh = &self.sh;
        self.host_err(sh.disp(dst as u64, len as u64).and_then(|d| sh.put_any(src, len, pe, d, true)))
    }

    /// Host get of `len` bytes from symmetric `src` on PE `pe`, complete at return.
    ///
    /// # Safety
    /// `dst` writable for `len` bytes.
    pub unsafe fn get(&self, dst: *mut u8, src: usize, len: usize, pe: usize) -> Result<()> {
        let sh = &self.sh;
        self.host_err(sh.disp(src as u64, len as u64).and_then(|d| sh.get_any(dst, len, pe, d)))
    }

    /// Host atomic on the `width`-byte word at symmetric `addr` of PE `pe`.
    pub fn amo(&self, op: AmoOp, addr: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        let sh = &self.sh;
        sh.disp(addr as u64, width as u64).and_then(|d| sh.amo(op, width, v, c, pe, d)).map_err(Error::Mpi)
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
        let c = self.sh.m.create_group(self.host_parent, &ranks, tag).map_err(Error::Mpi)?;
        comms.insert(key, c);
        Ok(c)
    }

    fn run_host(&self, what: &str, start: impl FnOnce(*mut MPI_Request) -> c_int) -> Result<()> {
        let mut req = MPI_Request(std::ptr::null_mut());
        let m = &self.sh.m;
        m.check(what, start(&mut req)).and_then(|_| m.wait(&mut req, what)).map_err(Error::Mpi)
    }

    /// Host barrier over `set`: completes this PE's operations, then MPI_Ibarrier.
    pub fn barrier(&self, set: PeSet) -> Result<()> {
        self.flush_all();
        let c = self.host_comm(set)?;
        // SAFETY: a valid communicator.
        self.run_host("MPI_Ibarrier", |r| unsafe { (self.sh.m.f.ibarrier)(c, r) })
    }

    /// `len` bytes of member `root`'s `buf` into every member's `buf`.
    ///
    /// # Safety
    /// `buf` valid for `len` bytes.
    pub unsafe fn bcast(&self, set: PeSet, buf: *mut u8, len: usize, root: usize) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = count(len, "broadcast").map_err(Error::Mpi)?;
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
        let n = count(len, "all-gather").map_err(Error::Mpi)?;
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
    pub unsafe fn alltoall(&self, set: PeSet, src: *const u8, dst: *mut u8, len: usize) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = count(len, "all-to-all").map_err(Error::Mpi)?;
        let b = self.sh.m.h.byte;
        // SAFETY: the caller's buffers.
        self.run_host("MPI_Ialltoall", |r| unsafe { (self.sh.m.f.ialltoall)(src.cast(), n, b, dst.cast(), n, b, c, r) })
    }

    /// Bitwise AND of `words` over the members of `set`, in place (team creation).
    pub fn allreduce_and(&self, set: PeSet, words: &mut [u64]) -> Result<()> {
        let c = self.host_comm(set)?;
        let n = words.len() as c_int;
        let (t, op) = (self.sh.m.h.u64, self.sh.m.h.band);
        let p = words.as_mut_ptr();
        // SAFETY: `words` in place.
        self.run_host("MPI_Iallreduce", |r| unsafe { (self.sh.m.f.iallreduce)(IN_PLACE, p.cast(), n, t, op, c, r) })
    }

    /// A team was created in `slot` over `set` (collective over its members): gives it a
    /// device communicator when it has remote members.
    pub fn team_created(&self, slot: usize, set: PeSet) -> Result<()> {
        if self.remote_in(set) == 0 {
            return Ok(());
        }
        let ranks: Vec<c_int> = (0..set.size).map(|i| set.pe(i) as c_int).collect();
        let c = self.sh.m.create_group(self.dev_parent, &ranks, slot as c_int).map_err(Error::Mpi)?;
        let mut comms = self.sh.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        if comms.len() <= slot {
            comms.resize(slot + 1, MPI_Comm(std::ptr::null_mut()));
        }
        let mut old = std::mem::replace(&mut comms[slot], c);
        self.sh.m.free_comm(&mut old);
        Ok(())
    }

    /// The team of `slot` was destroyed: frees its device communicator.
    pub fn team_destroyed(&self, slot: usize) {
        let mut comms = self.sh.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = comms.get_mut(slot) {
            self.sh.m.free_comm(c);
        }
    }

    /// Finalize (collective): the proxy drains its queues and stops, every PE completes its
    /// operations, the window and communicators are freed (before MPI_Finalize).
    pub fn shutdown(&self) {
        if self.down.swap(true, Ordering::SeqCst) {
            return;
        }
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.proxy.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
        // SAFETY: `stopped` is read by producers with atomics.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.queues.dev()).stopped).store(1, Ordering::SeqCst) };
        let sh = &self.sh;
        let m = &sh.m;
        let mut win = sh.win;
        // SAFETY: nothing uses the window or the communicators any more; Win_free is collective
        // and synchronises the PEs.
        unsafe {
            let r = m
                .check("MPI_Win_flush_all", (m.f.win_flush_all)(win))
                .and_then(|_| m.check("MPI_Win_unlock_all", (m.f.win_unlock_all)(win)))
                .and_then(|_| m.check("MPI_Win_free", (m.f.win_free)(&mut win)));
            if let Err(e) = r {
                sh.fatal(&format!("finalize: {e}"));
            }
            for c in sh.dev_comms.lock().unwrap_or_else(|e| e.into_inner()).iter_mut() {
                m.free_comm(c);
            }
            for c in self.host_comms.lock().unwrap_or_else(|e| e.into_inner()).values_mut() {
                m.free_comm(c);
            }
            let mut t = sh.t16;
            (m.f.type_free)(&mut t);
            for o in sh.ops16 {
                let mut o = o;
                (m.f.op_free)(&mut o);
            }
            for mut c in [self.host_parent, self.dev_parent, sh.probe, sh.world] {
                m.free_comm(&mut c);
            }
        }
    }
}

/// What an in-flight collective of the proxy needs when it completes.
enum After {
    Nothing,
    /// Broadcast root: the source also goes to dst (OpenSHMEM 1.5 team broadcast).
    Copy {
        dst: u64,
        src: u64,
        len: u64,
    },
    /// Keeps the alltoallv count and displacement arrays alive.
    Keep(#[allow(dead_code)] Vec<c_int>),
}

struct Pending {
    ticket: u64,
    req: MPI_Request,
    after: After,
    what: &'static str,
}

enum Outcome {
    Done(u64),
    InFlight(MPI_Request, After, &'static str),
}

/// The proxy thread.
struct Proxy {
    sh: Arc<Shared>,
    /// Address of the `rocshmem_ro_device` (kept alive by `Ro` until the thread is joined).
    dev: usize,
    stop: Arc<AtomicBool>,
    delay: Duration,
}

// SAFETY: see `Shared`; `dev` points to queue memory that outlives the thread.
unsafe impl Send for Proxy {}

/// A queue word as an atomic.
fn word(p: *const u64) -> &'static AtomicU64 {
    // SAFETY: 8-byte aligned words of the queue memory, alive while the proxy runs.
    unsafe { AtomicU64::from_ptr(p as *mut u64) }
}

impl Proxy {
    fn run(self) {
        // SAFETY: the device block outlives the proxy (Ro joins the thread before dropping it).
        let dev = unsafe { &*(self.dev as *const rocshmem_ro_device) };
        if let Err(e) = self.sh.gpu.bind_thread() {
            self.sh.fatal(&format!("the proxy thread cannot use the GPU: {e}"));
        }
        unpin_proxy_thread();
        let nq = dev.n_queues as usize;
        let slots = dev.slots as u64;
        let mut head = vec![0u64; nq];
        // Collectives in flight, per queue. A queue does not wait for its in-flight collective:
        // the producer of a collective waits for it, so the commands after it in the queue
        // come from other producers (other waves of the work-group). Two waves on two teams
        // may queue their collectives in different orders on different PEs; waiting at the
        // head of the queue deadlocked them (coll-multi-team, 2 waves per work-group).
        let mut pending: Vec<Vec<Pending>> = (0..nq).map(|_| Vec::new()).collect();
        let mut idle_since: Option<Instant> = None;
        loop {
            let mut did = false;
            for q in 0..nq {
                // SAFETY: queue q of the device block.
                let queue = unsafe { &*dev.queues.add(q) };
                let mut i = 0;
                while i < pending[q].len() {
                    let p = &mut pending[q][i];
                    match self.sh.m.test(&mut p.req, p.what) {
                        Ok(false) => {
                            i += 1;
                            continue;
                        }
                        Ok(true) => {}
                        Err(e) => self.sh.fatal(&format!("queue {q}: {e}")),
                    }
                    let p = pending[q].swap_remove(i);
                    if let After::Copy { dst, src, len } = p.after {
                        // SAFETY: local buffers the producer keeps until done.
                        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len as usize) };
                    }
                    // SAFETY: the command's slot (it stays taken until completed).
                    let c = unsafe { &mut *queue.cmds.add((p.ticket % slots) as usize) };
                    complete(queue, c, p.ticket, slots, 0);
                    did = true;
                }
                for _ in 0..16 {
                    let t = head[q];
                    // SAFETY: slot t % slots of queue q.
                    let c = unsafe { &mut *queue.cmds.add((t % slots) as usize) };
                    if word(&c.seq).load(Ordering::Acquire) != t + 1 {
                        break;
                    }
                    did = true;
                    match self.exec(c) {
                        Ok(Outcome::Done(r)) => complete(queue, c, t, slots, r),
                        Ok(Outcome::InFlight(req, after, what)) => {
                            pending[q].push(Pending { ticket: t, req, after, what })
                        }
                        Err(e) => self.sh.fatal(&format!("device operation {} (queue {q}): {e}", op_name(c.op))),
                    }
                    head[q] += 1;
                    word(&queue.head).store(head[q], Ordering::Relaxed);
                }
            }
            if did {
                idle_since = None;
                continue;
            }
            if self.stop.load(Ordering::Acquire) && pending.iter().all(Vec::is_empty) {
                if let Err(e) = self.sh.flush_all() {
                    self.sh.fatal(&format!("finalize: {e}"));
                }
                return;
            }
            // Idle: drive MPI's progress (passive-target operations of other PEs on our
            // window), then yield, or sleep when asked to / when idle for a while.
            let mut flag: c_int = 0;
            // SAFETY: our communicator; MPI_ANY_SOURCE / MPI_ANY_TAG are -1, status ignored.
            unsafe { (self.sh.m.f.iprobe)(-1, -1, self.sh.probe, &mut flag, std::ptr::null_mut()) };
            let since = *idle_since.get_or_insert_with(Instant::now);
            if !self.delay.is_zero() {
                std::thread::sleep(self.delay);
            } else if since.elapsed() > Duration::from_millis(2) {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Runs one command.
    fn exec(&self, c: &rocshmem_ro_cmd) -> MResult<Outcome> {
        let sh = &*self.sh;
        let m = &sh.m;
        let pe = c.pe as usize;
        let b = m.h.byte;
        let done = Ok(Outcome::Done(0));
        match c.op {
            ROCSHMEM_RO_NOP => done,
            ROCSHMEM_RO_PUT | ROCSHMEM_RO_PUT_NBI => {
                let d = sh.disp(c.dst, c.len)?;
                sh.put_any(c.src as *const u8, c.len as usize, pe, d, c.op == ROCSHMEM_RO_PUT)?;
                done
            }
            ROCSHMEM_RO_P => {
                let d = sh.disp(c.dst, c.len)?;
                let v = c.value;
                sh.put(&v as *const u64 as *const u8, (c.len as usize).min(8), pe, d)?;
                sh.flush(pe)?;
                done
            }
            ROCSHMEM_RO_GET => {
                let d = sh.disp(c.src, c.len)?;
                sh.get_any(c.dst as *mut u8, c.len as usize, pe, d)?;
                done
            }
            ROCSHMEM_RO_G => {
                let d = sh.disp(c.src, c.len)?;
                let mut v = 0u64;
                sh.get(&mut v as *mut u64 as *mut u8, (c.len as usize).min(8), pe, d)?;
                sh.flush(pe)?;
                Ok(Outcome::Done(v))
            }
            ROCSHMEM_RO_AMO => {
                let op = amo_op(c.sub).ok_or_else(|| format!("unknown atomic {}", c.sub))?;
                let d = sh.disp(c.dst, c.len)?;
                sh.amo(op, c.len as usize, c.value, c.cond, pe, d).map(Outcome::Done)
            }
            ROCSHMEM_RO_PUT_SIGNAL => {
                let d = sh.disp(c.dst, c.len)?;
                sh.put_any(c.src as *const u8, c.len as usize, pe, d, true)?;
                let sd = sh.disp(c.cond, 8)?;
                let op = if c.sub == 0 { AmoOp::Set } else { AmoOp::Add };
                sh.amo(op, 8, c.value, 0, pe, sd)?;
                done
            }
            ROCSHMEM_RO_FENCE | ROCSHMEM_RO_QUIET => {
                sh.flush_all()?;
                done
            }
            ROCSHMEM_RO_BARRIER | ROCSHMEM_RO_SYNC => {
                if c.op == ROCSHMEM_RO_BARRIER {
                    sh.flush_all()?;
                }
                let comm = sh.dev_comm(c.cond)?;
                let mut r = MPI_Request(std::ptr::null_mut());
                // SAFETY: a valid communicator.
                m.check("MPI_Ibarrier", unsafe { (m.f.ibarrier)(comm, &mut r) })?;
                Ok(Outcome::InFlight(r, After::Nothing, "MPI_Ibarrier"))
            }
            ROCSHMEM_RO_BROADCAST => {
                sh.host_buffer(c.src, "source")?;
                sh.host_buffer(c.dst, "destination")?;
                let comm = sh.dev_comm(c.cond)?;
                let me = team_rank(m, comm)?;
                let n = count(c.len as usize, "broadcast")?;
                let root = me == c.pe;
                let buf = if root { c.src } else { c.dst };
                let mut r = MPI_Request(std::ptr::null_mut());
                // SAFETY: the producer's buffers, alive until done.
                m.check("MPI_Ibcast", unsafe { (m.f.ibcast)(buf as *mut c_void, n, b, c.pe, comm, &mut r) })?;
                let after = if root && c.dst != c.src {
                    After::Copy { dst: c.dst, src: c.src, len: c.len }
                } else {
                    After::Nothing
                };
                Ok(Outcome::InFlight(r, after, "MPI_Ibcast"))
            }
            ROCSHMEM_RO_FCOLLECT | ROCSHMEM_RO_ALLTOALL => {
                sh.host_buffer(c.src, "source")?;
                sh.host_buffer(c.dst, "destination")?;
                let comm = sh.dev_comm(c.cond)?;
                let n = count(c.len as usize, "collect")?;
                let (s, d) = (c.src as *const c_void, c.dst as *mut c_void);
                let mut r = MPI_Request(std::ptr::null_mut());
                // SAFETY: the producer's buffers, alive until done.
                let (rc, what) = unsafe {
                    if c.op == ROCSHMEM_RO_FCOLLECT {
                        ((m.f.iallgather)(s, n, b, d, n, b, comm, &mut r), "MPI_Iallgather")
                    } else {
                        ((m.f.ialltoall)(s, n, b, d, n, b, comm, &mut r), "MPI_Ialltoall")
                    }
                };
                m.check(what, rc)?;
                Ok(Outcome::InFlight(r, After::Nothing, what))
            }
            ROCSHMEM_RO_ALLTOALLV => {
                let comm = sh.dev_comm(c.cond)?;
                let size = team_size(m, comm)?;
                // SAFETY: the producer keeps the argument block alive until done.
                let a = unsafe { &*(c.src as *const rocshmem_ro_alltoallv) };
                let es = elem_size(c.dtype).ok_or_else(|| format!("unknown element type {}", c.dtype))?;
                // counts/displacements in bytes: [scounts, sdispls, rcounts, rdispls]
                sh.host_buffer(a.source, "source")?;
                sh.host_buffer(a.dest, "destination")?;
                let mut v: Vec<c_int> = Vec::with_capacity(4 * size);
                for arr in [a.source_nelems, a.source_displs, a.dest_nelems, a.dest_displs] {
                    // Arrays of one entry per member.
                    for x in sh.read_words(arr, size)? {
                        v.push(count(x * es, "alltoallv")?);
                    }
                }
                let p = v.as_ptr();
                let mut r = MPI_Request(std::ptr::null_mut());
                // SAFETY: the producer's buffers; `v` is kept until completion.
                m.check("MPI_Ialltoallv", unsafe {
                    (m.f.ialltoallv)(
                        a.source as *const c_void,
                        p,
                        p.add(size),
                        b,
                        a.dest as *mut c_void,
                        p.add(2 * size),
                        p.add(3 * size),
                        b,
                        comm,
                        &mut r,
                    )
                })?;
                Ok(Outcome::InFlight(r, After::Keep(v), "MPI_Ialltoallv"))
            }
            ROCSHMEM_RO_REDUCE | ROCSHMEM_RO_REDUCE_SCATTER => {
                sh.host_buffer(c.src, "source")?;
                sh.host_buffer(c.dst, "destination")?;
                let comm = sh.dev_comm(c.cond)?;
                let (t, op) = sh.reduction(c.dtype, c.sub)?;
                let n = count(c.len as usize, "reduction")?;
                let src = if c.src == c.dst { IN_PLACE as *const c_void } else { c.src as *const c_void };
                let mut r = MPI_Request(std::ptr::null_mut());
                // SAFETY: the producer's buffers, alive until done.
                let (rc, what) = unsafe {
                    if c.op == ROCSHMEM_RO_REDUCE {
                        ((m.f.iallreduce)(src, c.dst as *mut c_void, n, t, op, comm, &mut r), "MPI_Iallreduce")
                    } else {
                        (
                            (m.f.ireduce_scatter_block)(src, c.dst as *mut c_void, n, t, op, comm, &mut r),
                            "MPI_Ireduce_scatter_block",
                        )
                    }
                };
                m.check(what, rc)?;
                Ok(Outcome::InFlight(r, After::Nothing, what))
            }
            other => Err(format!("unknown command code {other}")),
        }
    }
}

/// Marks ticket `t`'s command finished: done with a result for a waiting producer, else free;
/// then wakes whoever waits on the slot (the futex protocol in `device_abi`).
fn complete(queue: &rocshmem_ro_queue, c: &mut rocshmem_ro_cmd, t: u64, slots: u64, result: u64) {
    if c.flags & ROCSHMEM_RO_FLAG_WAIT != 0 {
        c.result = result;
        word(&c.seq).store(t + 2, Ordering::Release);
    } else {
        word(&c.seq).store(t + slots, Ordering::Release);
        // The store before the load (a producer takes its ticket, then reads seq).
        std::sync::atomic::fence(Ordering::SeqCst);
        if word(&queue.tail).load(Ordering::Relaxed) <= t + slots {
            return; // nobody waits for this slot
        }
    }
    // SAFETY: a futex wake on our own word (its low half); no memory is written.
    unsafe {
        libc::syscall(libc::SYS_futex, &c.seq as *const u64, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

fn team_rank(m: &MpiRma, comm: MPI_Comm) -> MResult<c_int> {
    let mut r: c_int = 0;
    // SAFETY: a valid communicator.
    m.check("MPI_Comm_rank", unsafe { (m.f.comm_rank)(comm, &mut r) })?;
    Ok(r)
}

fn team_size(m: &MpiRma, comm: MPI_Comm) -> MResult<usize> {
    // Members of the team communicator (through its group: MPI_Comm_size is the bootstrap's).
    let mut g = mpi_sys::MPI_Group(std::ptr::null_mut());
    // SAFETY: a valid communicator; the group is freed below.
    m.check("MPI_Comm_group", unsafe { (m.f.comm_group)(comm, &mut g) })?;
    let mut size: c_int = 0;
    let r = unsafe { (m.f.group_size)(g, &mut size) };
    unsafe { (m.f.group_free)(&mut g) };
    m.check("MPI_Group_size", r)?;
    Ok(size as usize)
}

fn elem_size(dtype: u8) -> Option<usize> {
    Some(match dtype {
        ROCSHMEM_RO_I8 | ROCSHMEM_RO_U8 => 1,
        ROCSHMEM_RO_I16 | ROCSHMEM_RO_U16 | ROCSHMEM_RO_F16 | ROCSHMEM_RO_BF16 => 2,
        ROCSHMEM_RO_I32 | ROCSHMEM_RO_U32 | ROCSHMEM_RO_F32 => 4,
        ROCSHMEM_RO_I64 | ROCSHMEM_RO_U64 | ROCSHMEM_RO_F64 => 8,
        _ => return None,
    })
}

fn amo_op(sub: u8) -> Option<AmoOp> {
    use AmoOp::*;
    const OPS: [AmoOp; 14] =
        [Fetch, Set, Swap, CompareSwap, FetchInc, Inc, FetchAdd, Add, FetchAnd, And, FetchOr, Or, FetchXor, Xor];
    OPS.get(sub as usize).copied()
}

fn op_name(op: u8) -> &'static str {
    const NAMES: [&str; 18] = [
        "NOP",
        "PUT",
        "PUT_NBI",
        "P",
        "GET",
        "G",
        "AMO",
        "PUT_SIGNAL",
        "FENCE",
        "QUIET",
        "BARRIER",
        "SYNC",
        "BROADCAST",
        "FCOLLECT",
        "ALLTOALL",
        "ALLTOALLV",
        "REDUCE",
        "REDUCE_SCATTER",
    ];
    NAMES.get(op as usize).copied().unwrap_or("?")
}

/// A PE bound to a single CPU (Open MPI's default for `-np 1` and `-np 2` is one core per rank)
/// would leave the proxy sharing that CPU with the application thread, which spins in
/// `cudaStreamSynchronize` or a wait loop while its kernel waits for the proxy: every device
/// command then waits for a scheduler time slice (measured on the H200: p + quiet > 0.4 ms).
/// So the proxy thread alone, when it inherits a one-CPU mask, asks for every CPU; the kernel
/// keeps it inside the job's cpuset. A mask of two or more CPUs is the user's choice and kept.
fn unpin_proxy_thread() {
    // SAFETY: cpu_set_t is plain data; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0
            || libc::CPU_COUNT(&set) != 1
        {
            return;
        }
        let mut all: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..libc::CPU_SETSIZE as usize {
            libc::CPU_SET(cpu, &mut all);
        }
        let widened = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &all) == 0
            && libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0;
        let n = if widened { libc::CPU_COUNT(&set) } else { 1 };
        if n > 1 {
            crate::log_info!("rocshmem_init", "RO: this PE is bound to one CPU; its proxy thread runs on any of {n}");
        } else {
            crate::log_warn!(
                "rocshmem_init",
                "RO: this PE may use one CPU only, so its proxy thread shares it with the application: device \
                 operations will wait for the scheduler (milliseconds each); give each PE two or more CPUs \
                 (mpirun --bind-to none, or --map-by slot:PE=2)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_start_free() {
        let q = QueueMem::new(&crate::gpu::host::HostRuntime::new(), 3).unwrap();
        // SAFETY: the block QueueMem laid out.
        let dev = unsafe { &*q.dev() };
        assert_eq!(dev.n_queues, 3);
        assert_eq!(dev.slots, ROCSHMEM_RO_QUEUE_SLOTS);
        let slots = ROCSHMEM_RO_QUEUE_SLOTS as usize;
        for i in 0..3 {
            // SAFETY: queue i of three.
            let queue = unsafe { &*dev.queues.add(i) };
            assert_eq!(queue.tail, 0);
            for s in 0..slots {
                assert_eq!(unsafe { (*queue.cmds.add(s)).seq }, s as u64);
            }
            // Every queue's commands and argument blocks lie inside the block, apart.
            let end = q.mem.base as usize + q.mem.len;
            assert!(queue.cmds as usize + slots * 64 <= end);
            assert!(queue.args as usize + slots * std::mem::size_of::<rocshmem_ro_alltoallv>() <= end);
            if i > 0 {
                let prev = unsafe { &*dev.queues.add(i - 1) };
                assert_eq!(queue.cmds as usize - prev.cmds as usize, slots * 64);
                assert!(queue.cmds as usize > dev.queues as usize);
            }
        }
    }

    #[test]
    fn amo_codes_follow_the_device_order() {
        assert_eq!(amo_op(ROCSHMEM_RO_AMO_COMPARE_SWAP), Some(AmoOp::CompareSwap));
        assert_eq!(amo_op(ROCSHMEM_RO_AMO_XOR), Some(AmoOp::Xor));
        assert_eq!(amo_op(14), None);
        assert_eq!(op_name(ROCSHMEM_RO_REDUCE_SCATTER), "REDUCE_SCATTER");
        assert_eq!(elem_size(ROCSHMEM_RO_BF16), Some(2));
    }

    #[test]
    fn self_cas_path_follows_the_open_mpi_release() {
        assert!(cpu_self_cas("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"));
        assert!(cpu_self_cas("Open MPI v4.0.3, package: Open MPI"));
        assert!(!cpu_self_cas("Open MPI v4.1.6, package: Open MPI Distribution"));
        assert!(!cpu_self_cas("Open MPI v5.0.3, package: Open MPI"));
        assert!(!cpu_self_cas("MPICH Version: 4.2.0"));
    }
}
