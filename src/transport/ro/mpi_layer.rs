//! The RO backend's MPI layer: one-sided operations on the window over every PE's segment
//! (puts, gets and atomics, GPU buffers staged through host memory), the reductions' MPI types
//! and user operations, and the Open MPI facts the backend depends on. Used by the host calls
//! (`Ro`) and by the proxy thread alike.

use super::mpi::{MAX_CHUNK, MpiRma};
use crate::device_abi::*;
use crate::error::{Error, Result};
use crate::gpu::GpuRuntime;
use crate::scalar::{Arith, BFloat16, Half};
use crate::transport::AmoOp;
use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Op, MPI_Win};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Host buffer size for staging GPU memory outside the heap (puts from and gets into it).
const STAGE_BYTES: usize = 4 << 20;

/// What the proxy thread and the host calls share.
pub(super) struct Shared {
    pub(super) m: MpiRma,
    pub(super) my_pe: usize,
    pub(super) win: MPI_Win,
    pub(super) win_base: usize,
    pub(super) win_len: usize,
    /// The RO world communicator (rank = PE): for MPI_Abort.
    pub(super) world: MPI_Comm,
    /// Device communicator per team slot (null where the team has none).
    pub(super) dev_comms: Mutex<Vec<MPI_Comm>>,
    /// Progress communicator of the proxy (MPI_Iprobe).
    pub(super) probe: MPI_Comm,
    /// 2-byte contiguous type of the 16-bit floats, and our user operations (`red`): the
    /// 16-bit floats' sum/max/min/prod (half first, then bfloat16), then sum/prod of the 8- and
    /// 16-bit integers (i8, i16, u8, u16), which must wrap: Open MPI 4.1's AVX MPI_SUM/MPI_PROD
    /// saturate them (measured: char 100 + 100 gave 127).
    pub(super) t16: MPI_Datatype,
    pub(super) ops16: [MPI_Op; 16],
    /// An 8-byte compare-and-swap on this PE's own word is a CPU atomic, not an MPI call (see
    /// [`cpu_self_cas`]).
    pub(super) cpu_self_cas: bool,
    /// Set when the job is going down on a fatal error (so a second error does not log again).
    pub(super) dying: AtomicBool,
    /// The GPU runtime: local buffers in GPU memory are staged through host memory (the MPI
    /// library may not be able to read GPU memory; the heaps are host memory).
    pub(super) gpu: Arc<dyn GpuRuntime>,
}

// SAFETY: MPI handles are process-global and MPI runs with MPI_THREAD_MULTIPLE; the mutex
// guards the communicator table.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    /// Collective over every PE: the RO world (rank = PE) from `comm`, the window over this PE's
    /// segment `[seg_base, seg_base + seg_len)` (locked for passive-target access), the progress
    /// communicator, and the 16-bit type with the user operations.
    pub(super) fn open(
        mpi: &crate::bootstrap::mpi::Mpi,
        comm: MPI_Comm,
        my_pe: usize,
        seg_base: usize,
        seg_len: usize,
        gpu: Arc<dyn GpuRuntime>,
    ) -> Result<Shared> {
        let m = MpiRma::load(mpi)?;
        let library = m.library_version();
        // PE p is rank p of the bootstrap communicator; split keyed by PE keeps that true
        // whatever communicator the job was started on.
        let mut world = MPI_Comm(std::ptr::null_mut());
        // SAFETY: `comm` is the communicator the bootstrap ran on.
        m.check("MPI_Comm_split", unsafe { (m.f.comm_split)(comm, 0, my_pe as c_int, &mut world) })?;
        m.check("MPI_Comm_set_errhandler", unsafe { (m.f.comm_set_errhandler)(world, m.h.errors_return) })?;
        let mut rank: c_int = -1;
        unsafe { (m.f.comm_rank)(world, &mut rank) };
        if rank != my_pe as c_int {
            return Err(Error::Mpi(format!("RO world: PE {my_pe} got MPI rank {rank}")));
        }
        let probe = m.dup(world)?;
        let mut win = MPI_Win(std::ptr::null_mut());
        // SAFETY: our whole segment, mapped for the life of the runtime; displacement unit 1.
        unsafe {
            m.check(
                "MPI_Win_create",
                (m.f.win_create)(seg_base as *mut c_void, seg_len as MPI_Aint, 1, m.h.info_null, world, &mut win),
            )
            .map_err(|e| match e {
                Error::Mpi(msg) => Error::Mpi(format!("{msg}{}", win_create_hint())),
                e => e,
            })?;
            m.check("MPI_Win_set_errhandler", (m.f.win_set_errhandler)(win, m.h.errors_return))?;
            m.check("MPI_Win_lock_all", (m.f.win_lock_all)(0, win))?;
        }
        let (t16, ops16) = user_ops(&m)?;
        let cpu_self_cas = cpu_self_cas(&library);
        crate::log_info!(
            "rocshmem_init",
            "RO: MPI is {}; 8-byte compare-and-swap on this PE's own words: {}",
            library.lines().next().unwrap_or("unknown"),
            if cpu_self_cas { "CPU atomic" } else { "MPI_Compare_and_swap" }
        );
        Ok(Shared {
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
            cpu_self_cas,
            dying: AtomicBool::new(false),
            gpu,
        })
    }

    /// The window displacement of the local symmetric address `addr` (`len` bytes).
    pub(super) fn disp(&self, addr: u64, len: u64) -> Result<MPI_Aint> {
        let a = addr as usize;
        if a < self.win_base || len as usize > self.win_len || a - self.win_base > self.win_len - len as usize {
            return Err(Error::NotSymmetric { addr: a, len: len as usize, what: "RO target" });
        }
        Ok((a - self.win_base) as MPI_Aint)
    }

    /// Ends the job: one line naming the PE, the operation and MPI's error, then MPI_Abort.
    pub(super) fn fatal(&self, what: &str) -> ! {
        if !self.dying.swap(true, Ordering::SeqCst) {
            crate::log_error!("rocshmem RO", "PE {}: {what}; ending the job", self.my_pe);
        }
        // SAFETY: MPI_Abort ends every process of the job.
        unsafe { (self.m.f.abort)(self.world, 1) };
        crate::stop::exit_now(1)
    }

    /// Runs `op(offset, count)` over `len` bytes in pieces of at most MAX_CHUNK (MPI counts are
    /// `int`), stopping at the first error.
    pub(super) fn in_chunks(&self, what: &str, len: usize, mut op: impl FnMut(usize, c_int) -> c_int) -> Result<()> {
        let mut off = 0;
        while off < len {
            let n = (len - off).min(MAX_CHUNK);
            self.m.check(what, op(off, n as c_int))?;
            off += n;
        }
        Ok(())
    }

    pub(super) fn put(&self, src: *const u8, len: usize, pe: usize, disp: MPI_Aint) -> Result<()> {
        let b = self.m.h.byte;
        // SAFETY: `src` is readable for `len` bytes; the target range is inside the window.
        self.in_chunks("MPI_Put", len, |off, n| unsafe {
            (self.m.f.put)(src.add(off).cast(), n, b, pe as c_int, disp + off as MPI_Aint, n, b, self.win)
        })
    }

    pub(super) fn get(&self, dst: *mut u8, len: usize, pe: usize, disp: MPI_Aint) -> Result<()> {
        let b = self.m.h.byte;
        // SAFETY: `dst` is writable for `len` bytes; the source range is inside the window.
        self.in_chunks("MPI_Get", len, |off, n| unsafe {
            (self.m.f.get)(dst.add(off).cast(), n, b, pe as c_int, disp + off as MPI_Aint, n, b, self.win)
        })
    }

    /// Whether `addr` is GPU memory (staged through host buffers). This PE's segment is host
    /// memory by construction, and most sources and destinations lie in it: no driver call
    /// (`cudaPointerGetAttributes`) on the proxy's path for them.
    pub(super) fn gpu_memory(&self, addr: usize) -> bool {
        !(addr >= self.win_base && addr - self.win_base < self.win_len) && self.gpu.is_device_memory(addr)
    }

    /// A put of `len` bytes of local `src` to PE `pe`: complete remotely at return with
    /// `flush`. A source in GPU memory goes through a host buffer, a piece at a time, each piece
    /// flushed before the buffer is reused (so it is always complete at return).
    pub(super) fn put_any(&self, src: *const u8, len: usize, pe: usize, disp: MPI_Aint, flush: bool) -> Result<()> {
        if !self.gpu_memory(src as usize) {
            self.put(src, len, pe, disp)?;
            return if flush { self.flush(pe) } else { Ok(()) };
        }
        let mut buf = vec![0u8; len.min(STAGE_BYTES)];
        for off in (0..len).step_by(STAGE_BYTES) {
            let n = (len - off).min(STAGE_BYTES);
            // SAFETY: the caller's source, `len` bytes; our buffer of at least `n`.
            unsafe { self.gpu.copy_beside_kernels(buf.as_mut_ptr(), src.add(off), n) }?;
            self.put(buf.as_ptr(), n, pe, disp + off as MPI_Aint)?;
            self.flush(pe)?;
        }
        Ok(())
    }

    /// A get of `len` bytes from PE `pe` into local `dst`, complete at return; a destination in
    /// GPU memory is filled from a host buffer, a piece at a time.
    pub(super) fn get_any(&self, dst: *mut u8, len: usize, pe: usize, disp: MPI_Aint) -> Result<()> {
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
            unsafe { self.gpu.copy_beside_kernels(dst.add(off), buf.as_ptr(), n) }?;
        }
        Ok(())
    }

    /// `n` words of a local array (an ALLTOALLV count or displacement array, which may be GPU
    /// memory).
    pub(super) fn read_words(&self, p: *const usize, n: usize) -> Result<Vec<usize>> {
        let mut v = vec![0usize; n];
        if self.gpu_memory(p as usize) {
            // SAFETY: the producer's array of `n` words; our vector of `n`.
            unsafe { self.gpu.copy_beside_kernels(v.as_mut_ptr().cast(), p.cast(), n * 8) }?;
        } else {
            // SAFETY: as above, host memory.
            unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), n) };
        }
        Ok(v)
    }

    /// Refuses a collective buffer in GPU memory: MPI reads and writes it in place, and
    /// collective buffers are symmetric (the heaps are host memory).
    pub(super) fn host_buffer(&self, addr: u64, what: &str) -> Result<()> {
        if addr != 0 && self.gpu_memory(addr as usize) {
            return Err(Error::invalid(format!(
                "the {what} buffer {addr:#x} is GPU memory outside the symmetric heap (collectives take symmetric buffers)"
            )));
        }
        Ok(())
    }

    pub(super) fn flush(&self, pe: usize) -> Result<()> {
        // SAFETY: our window, locked with lock_all.
        self.m.check("MPI_Win_flush", unsafe { (self.m.f.win_flush)(pe as c_int, self.win) })
    }

    pub(super) fn flush_all(&self) -> Result<()> {
        // SAFETY: as above.
        self.m.check("MPI_Win_flush_all", unsafe { (self.m.f.win_flush_all)(self.win) })
    }

    /// An atomic on the `width`-byte word at displacement `disp` of PE `pe`, flushed; returns
    /// the old value (the current one for Fetch; 0 for the non-fetching forms).
    pub(super) fn amo(&self, op: AmoOp, width: usize, v: u64, c: u64, pe: usize, disp: MPI_Aint) -> Result<u64> {
        if width != 4 && width != 8 {
            return Err(Error::invalid(format!("atomic on a {width}-byte word (4 or 8 only)")));
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

    pub(super) fn dev_comm(&self, slot: u64) -> Result<MPI_Comm> {
        let comms = self.dev_comms.lock().unwrap_or_else(|e| e.into_inner());
        match comms.get(slot as usize) {
            Some(c) if !c.0.is_null() => Ok(*c),
            _ => Err(Error::invalid(format!(
                "team slot {slot} has no device communicator (not a team with remote members?)"
            ))),
        }
    }

    /// The MPI type and operation of a reduction (`dtype`, `sub` codes of the queue protocol).
    pub(super) fn reduction(&self, dtype: u8, sub: u8) -> Result<(MPI_Datatype, MPI_Op)> {
        let h = &self.m.h;
        let bad = || Error::invalid(format!("reduction operation {sub} on element type {dtype} is not supported"));
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

/// The 2-byte type of the 16-bit floats and the user operations of [`Shared::ops16`] (in its
/// order).
fn user_ops(m: &MpiRma) -> Result<(MPI_Datatype, [MPI_Op; 16])> {
    let mut t16 = MPI_Datatype(std::ptr::null_mut());
    // SAFETY: a new committed type of two bytes.
    unsafe {
        m.check("MPI_Type_contiguous", (m.f.type_contiguous)(2, m.h.byte, &mut t16))?;
        m.check("MPI_Type_commit", (m.f.type_commit)(&mut t16))?;
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
        m.check("MPI_Op_create", unsafe { (m.f.op_create)(*f, 1, o) })?;
    }
    Ok((t16, ops16))
}

/// What to check when MPI_Win_create fails: Open MPI's osc/rdma needs a transport with
/// one-sided support, which on one node is btl/vader with a single-copy mechanism (measured on
/// an Open MPI 4.1.6 whose environment set OMPI_MCA_btl_vader_single_copy_mechanism=none: every
/// osc component refused the window; with cma it works).
pub(super) fn win_create_hint() -> String {
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
pub(super) fn cpu_self_cas(library: &str) -> bool {
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

pub(super) fn team_rank(m: &MpiRma, comm: MPI_Comm) -> Result<c_int> {
    let mut r: c_int = 0;
    // SAFETY: a valid communicator.
    m.check("MPI_Comm_rank", unsafe { (m.f.comm_rank)(comm, &mut r) })?;
    Ok(r)
}

pub(super) fn team_size(m: &MpiRma, comm: MPI_Comm) -> Result<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_cas_path_follows_the_open_mpi_release() {
        assert!(cpu_self_cas("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"));
        assert!(cpu_self_cas("Open MPI v4.0.3, package: Open MPI"));
        assert!(!cpu_self_cas("Open MPI v4.1.6, package: Open MPI Distribution"));
        assert!(!cpu_self_cas("Open MPI v5.0.3, package: Open MPI"));
        assert!(!cpu_self_cas("MPICH Version: 4.2.0"));
    }
}
