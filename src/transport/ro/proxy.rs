//! The RO proxy thread: takes the commands device code queued (`queues`), runs them with the
//! MPI layer, and completes them; collectives run as nonblocking MPI collectives that a queue
//! does not wait for (see `run`).

use super::mpi::{IN_PLACE, count};
use super::mpi_layer::{Shared, team_rank, team_size};
use super::queues::{complete, word};
use crate::device_abi::*;
use crate::error::{Error, Result};
use crate::transport::AmoOp;
use mpi_sys::MPI_Request;
use std::ffi::{c_int, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What an in-flight collective of the proxy needs when it completes.
enum After {
    Nothing,
    /// Broadcast root: the source also goes to dst (OpenSHMEM 1.5 team broadcast).
    Copy {
        dst: u64,
        src: u64,
        len: u64,
    },
    /// The alltoallv count and displacement arrays, which MPI reads until completion.
    Keep(Vec<c_int>),
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
pub(super) struct Proxy {
    sh: Arc<Shared>,
    /// Address of the `rocshmem_ro_device` (kept alive by `Ro` until the thread is joined).
    dev: usize,
    stop: Arc<AtomicBool>,
    delay: Duration,
}

// SAFETY: see `Shared`; `dev` points to queue memory that outlives the thread.
unsafe impl Send for Proxy {}

impl Proxy {
    pub(super) fn new(sh: Arc<Shared>, dev: *mut rocshmem_ro_device, stop: Arc<AtomicBool>, delay_us: u64) -> Proxy {
        Proxy { sh, dev: dev as usize, stop, delay: Duration::from_micros(delay_us) }
    }

    pub(super) fn run(self) {
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
                    match p.after {
                        // SAFETY: local buffers the producer keeps until done.
                        After::Copy { dst, src, len } => unsafe {
                            std::ptr::copy(src as *const u8, dst as *mut u8, len as usize)
                        },
                        // MPI is done with the arrays.
                        After::Keep(arrays) => drop(arrays),
                        After::Nothing => {}
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

    /// Runs one command: the point-to-point ones here, complete at return (flushed where the
    /// producer waits for completion), the collectives in [`Proxy::exec_collective`].
    fn exec(&self, c: &rocshmem_ro_cmd) -> Result<Outcome> {
        let sh = &*self.sh;
        let pe = c.pe as usize;
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
                let op = amo_op(c.sub).ok_or_else(|| Error::invalid(format!("unknown atomic {}", c.sub)))?;
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
            _ => self.exec_collective(c),
        }
    }

    /// Runs one collective command: started here, completed by `run` (MPI's nonblocking
    /// collectives on the team's device communicator).
    fn exec_collective(&self, c: &rocshmem_ro_cmd) -> Result<Outcome> {
        let sh = &*self.sh;
        let m = &sh.m;
        let b = m.h.byte;
        match c.op {
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
            ROCSHMEM_RO_ALLTOALLV => self.start_alltoallv(c),
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
            other => Err(Error::invalid(format!("unknown command code {other}"))),
        }
    }

    /// Starts an ALLTOALLV: its count and displacement arrays (elements, one entry per
    /// member, possibly in GPU memory) become MPI's byte counts, kept until completion.
    fn start_alltoallv(&self, c: &rocshmem_ro_cmd) -> Result<Outcome> {
        let sh = &*self.sh;
        let m = &sh.m;
        let b = m.h.byte;
        let comm = sh.dev_comm(c.cond)?;
        let size = team_size(m, comm)?;
        // SAFETY: the producer keeps the argument block alive until done.
        let a = unsafe { &*(c.src as *const rocshmem_ro_alltoallv) };
        let es = elem_size(c.dtype).ok_or_else(|| Error::invalid(format!("unknown element type {}", c.dtype)))?;
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

/// The atomic of an AMO command's `sub` (a `ROCSHMEM_RO_AMO_*` code of the queue protocol).
pub(super) fn amo_op(sub: u8) -> Option<AmoOp> {
    Some(match sub {
        ROCSHMEM_RO_AMO_FETCH => AmoOp::Fetch,
        ROCSHMEM_RO_AMO_SET => AmoOp::Set,
        ROCSHMEM_RO_AMO_SWAP => AmoOp::Swap,
        ROCSHMEM_RO_AMO_COMPARE_SWAP => AmoOp::CompareSwap,
        ROCSHMEM_RO_AMO_FETCH_INC => AmoOp::FetchInc,
        ROCSHMEM_RO_AMO_INC => AmoOp::Inc,
        ROCSHMEM_RO_AMO_FETCH_ADD => AmoOp::FetchAdd,
        ROCSHMEM_RO_AMO_ADD => AmoOp::Add,
        ROCSHMEM_RO_AMO_FETCH_AND => AmoOp::FetchAnd,
        ROCSHMEM_RO_AMO_AND => AmoOp::And,
        ROCSHMEM_RO_AMO_FETCH_OR => AmoOp::FetchOr,
        ROCSHMEM_RO_AMO_OR => AmoOp::Or,
        ROCSHMEM_RO_AMO_FETCH_XOR => AmoOp::FetchXor,
        ROCSHMEM_RO_AMO_XOR => AmoOp::Xor,
        _ => return None,
    })
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
    fn amo_codes_follow_the_device_order() {
        assert_eq!(amo_op(ROCSHMEM_RO_AMO_COMPARE_SWAP), Some(AmoOp::CompareSwap));
        assert_eq!(amo_op(ROCSHMEM_RO_AMO_XOR), Some(AmoOp::Xor));
        assert_eq!(amo_op(14), None);
        assert_eq!(op_name(ROCSHMEM_RO_REDUCE_SCATTER), "REDUCE_SCATTER");
        assert_eq!(elem_size(ROCSHMEM_RO_BF16), Some(2));
    }
}
