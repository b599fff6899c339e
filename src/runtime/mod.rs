//! The process-wide runtime: what `rocshmem_init` builds and `rocshmem_finalize` tears down.
//!
//! - this file: [`Runtime`], the phases of the life cycle and the aborts;
//! - `lifecycle`: init, finalize and global exit (they name `build`, which names this file,
//!   so they live beside it rather than here: no import cycle);
//! - `build`: init's steps after the configuration is read (rendezvous, platform, heap,
//!   transports, tables), each a named function;
//! - `device`: the device-state block device code reads, and how modules and programs get it.

mod build;
mod device;
pub mod lifecycle;

pub use device::StateHead;

use crate::bootstrap::{self, Job};
use crate::ctx::CtxTable;
use crate::env::Config;
use crate::error::{Error, Result};
use crate::gpu::mirror::Mirror;
use crate::gpu::{self, GpuRuntime, host::segment_name};
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::team::{Team, TeamTable, WORLD_SLOT};
use crate::transport::route::Transports;
use crate::{log_error, log_info};
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// Where the process is in the init/finalize life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Uninit = 0,
    Initializing = 1,
    Ready = 2,
    Finalizing = 3,
    Finalized = 4,
    /// A child of `fork()` of a process that initialised (see [`forked_child`]).
    Forked = 5,
}

static PHASE: AtomicU8 = AtomicU8::new(Phase::Uninit as u8);
static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());

pub fn phase() -> Phase {
    match PHASE.load(Ordering::Acquire) {
        0 => Phase::Uninit,
        1 => Phase::Initializing,
        2 => Phase::Ready,
        3 => Phase::Finalizing,
        4 => Phase::Finalized,
        _ => Phase::Forked,
    }
}

/// The pid of the process that initialised (0: none yet).
static INIT_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Runs in the child of every `fork()` of this process (registered at init): the child is a
/// copy, not a PE, and must not touch the job (its finalize would run the parent's finalize
/// protocol on the shared control region and stop the parent's job). Every call of the child
/// fails from now on, at no cost to the parent's calls: the phase they read anyway says so.
extern "C" fn forked_child() {
    if PHASE.load(Ordering::Relaxed) != Phase::Uninit as u8 {
        PHASE.store(Phase::Forked as u8, Ordering::SeqCst);
        RUNTIME.store(std::ptr::null_mut(), Ordering::SeqCst);
        crate::interrupt::forget_in_child();
    }
}

/// The error of every call in a forked child.
fn forked_error() -> Error {
    Error::ForkedChild { parent: INIT_PID.load(Ordering::Relaxed), child: std::process::id() }
}

/// Operation counters for rocshmem_dump_stats.
#[derive(Default)]
pub struct Stats {
    pub puts: AtomicU64,
    pub put_bytes: AtomicU64,
    pub gets: AtomicU64,
    pub get_bytes: AtomicU64,
    pub atomics: AtomicU64,
    pub waits: AtomicU64,
    pub barriers: AtomicU64,
    pub collectives: AtomicU64,
    pub allocs: AtomicU64,
    pub frees: AtomicU64,
}

impl Stats {
    /// Counts only when statistics are on (`ROCSHMEM_DEBUG_LEVEL=...:stats`, as upstream): the
    /// counters are shared by the PE's threads, and an atomic add per call is not free.
    #[inline]
    pub fn add(c: &AtomicU64, n: u64) {
        if crate::log::stats_on() {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    fn all(&self) -> [(&'static str, &AtomicU64); 10] {
        [
            ("puts", &self.puts),
            ("put_bytes", &self.put_bytes),
            ("gets", &self.gets),
            ("get_bytes", &self.get_bytes),
            ("atomics", &self.atomics),
            ("waits", &self.waits),
            ("barriers", &self.barriers),
            ("collectives", &self.collectives),
            ("allocs", &self.allocs),
            ("frees", &self.frees),
        ]
    }

    pub fn dump(&self, pe: usize) -> String {
        if !crate::log::stats_on() {
            return format!(
                "rocshmem stats PE {pe}: statistics are off; run with ROCSHMEM_DEBUG_LEVEL=<level>:stats to count"
            );
        }
        let body: Vec<String> = self.all().iter().map(|(n, c)| format!("{n}={}", c.load(Ordering::Relaxed))).collect();
        format!("rocshmem stats PE {pe}: {}", body.join(" "))
    }

    pub fn reset(&self) {
        for (_, c) in self.all() {
            c.store(0, Ordering::Relaxed);
        }
    }
}

pub struct Runtime {
    pub cfg: Config,
    pub job: Job,
    pub heap: SymmetricHeap,
    /// The transports, and which one reaches which PE.
    pub net: Transports,
    pub teams: TeamTable,
    pub ctxs: CtxTable,
    pub stats: Stats,
    /// The host copy of the device-state block (on the host platform, the block itself).
    pub device_state: Box<StateHead>,
    /// Where device code reads the state (`rocshmem_ctx_device::state`): the device copy on a
    /// GPU platform, `device_state` otherwise.
    pub device_state_addr: usize,
    _heap_bases: Box<[u64]>,
    /// The device state's route tables (where device code reads them on the host platform).
    _routes: Box<[u8]>,
    _state_mirror: Mirror,
    /// Buffers given to rocshmem_buffer_register: (address, length).
    pub registered: std::sync::Mutex<Vec<(usize, usize)>>,
    /// Last: the device memory above is released through it.
    pub gpu: Arc<dyn GpuRuntime>,
}

impl Runtime {
    pub fn my_pe(&self) -> usize {
        self.job.my_pe
    }

    pub fn n_pes(&self) -> usize {
        self.job.n_pes
    }

    pub fn world(&self) -> Team {
        Team { set: PeSet::world(self.n_pes()), slot: WORLD_SLOT, my_idx: self.my_pe() }
    }

    /// `rocshmem_hipmodule_init`: copies the device globals into the GPU module `module`
    /// (a `CUmodule` on NVIDIA), stream-ordered on `stream`, without synchronising.
    ///
    /// # Safety
    /// `module` must be NULL or a loaded module, `stream` NULL or a stream, of the GPU runtime.
    pub unsafe fn module_init(&self, module: *mut std::ffi::c_void, stream: *mut std::ffi::c_void) -> Result<()> {
        // SAFETY: the caller's module and stream.
        unsafe { device::module_init(self.gpu.as_ref(), self.device_state_addr, module, stream) }
    }

    /// Checks a world PE number.
    pub fn check_pe(&self, pe: i64) -> Result<usize> {
        if pe < 0 || pe as usize >= self.n_pes() {
            return Err(Error::InvalidPe { pe, n_pes: self.n_pes() });
        }
        Ok(pe as usize)
    }
}

/// The runtime, if initialised.
pub fn get() -> Result<&'static Runtime> {
    let p = RUNTIME.load(Ordering::Acquire);
    if p.is_null() {
        return Err(match phase() {
            Phase::Finalizing | Phase::Finalized => Error::Finalized,
            Phase::Forked => forked_error(),
            _ => Error::NotInitialized,
        });
    }
    // SAFETY: the pointer is a leaked Box, freed only by finalize after it is unpublished.
    Ok(unsafe { &*p })
}

/// Fills the device globals of stream-kernel module `module` on `stream` once the runtime is
/// up (the stream kernels' loader thread calls it: `gpu::modules::FillGlobals`).
fn fill_module_globals(module: usize, stream: usize) -> Result<()> {
    let rt = loop {
        match phase() {
            Phase::Ready => break get()?,
            Phase::Initializing => std::thread::sleep(std::time::Duration::from_millis(1)),
            // A program that finalizes right after init (before the loader got here): the
            // module is not needed any more, and the log should say why it was not filled.
            Phase::Finalizing | Phase::Finalized => return Err(Error::Finalized),
            Phase::Uninit => return Err(Error::NotInitialized),
            Phase::Forked => return Err(forked_error()),
        }
    };
    // SAFETY: a module of the stream kernels and the library's stream.
    unsafe { rt.module_init(module as *mut std::ffi::c_void, stream as *mut std::ffi::c_void) }
}

/// The runtime for a host API call: only while it is ready, so that a call that starts once
/// finalize has begun fails with "called after rocshmem_finalize" (the phase is read after the
/// call was counted in flight: see `inflight`).
pub fn get_ready() -> Result<&'static Runtime> {
    match PHASE.load(Ordering::SeqCst) {
        x if x == Phase::Ready as u8 => get(),
        x if x == Phase::Finalizing as u8 || x == Phase::Finalized as u8 => Err(Error::Finalized),
        x if x == Phase::Forked as u8 => Err(forked_error()),
        _ => Err(Error::NotInitialized),
    }
}

/// Job identity the abort hook needs to sweep segment names (set right after the rendezvous).
static ABORT_TAG: AtomicU64 = AtomicU64::new(0);
static ABORT_NPES: AtomicU64 = AtomicU64::new(0);

/// An abort that arrived while `init` was still running: acted on when init succeeds (the peer
/// is gone, so the job cannot go on), dropped when init fails (the caller gets the error).
/// The lock also orders the hook against init's phase changes.
static PENDING_ABORT: std::sync::Mutex<Option<(i32, String, bool)>> = std::sync::Mutex::new(None);

/// Called by the bootstrap watcher when a peer died or someone called global_exit: ends this
/// process. If that happens before every PE mapped the heaps, segment names may remain: sweep.
/// During init it only records the abort (init then fails, or exits once it is done); after a
/// failed init (phase Uninit) the old job is none of our business.
fn abort_hook() -> bootstrap::client::AbortHook {
    Arc::new(|status, reason, is_error| {
        {
            let mut pending = PENDING_ABORT.lock().unwrap_or_else(|e| e.into_inner());
            match phase() {
                Phase::Initializing => {
                    pending.get_or_insert((status, reason, is_error));
                    return;
                }
                Phase::Uninit => return,
                _ => {}
            }
        }
        abort_now(status, &reason, is_error)
    })
}

/// Ends this PE because the job ended: says why, sweeps the job's heap names, exits.
pub(crate) fn abort_now(status: i32, reason: &str, is_error: bool) -> ! {
    if is_error {
        log_error!("rocshmem", "{reason}; stopping this PE");
    } else {
        log_info!("rocshmem", "{reason}");
    }
    sweep_job_names();
    // The job's end may be on its way to the other PEs from a hub in this process.
    crate::bootstrap::hub::settle_hosted(std::time::Duration::from_secs(1));
    exit_now(status)
}

/// Unlinks the heap names of every PE of the current job (those already unlinked are skipped).
fn sweep_job_names() {
    let tag = ABORT_TAG.load(Ordering::Relaxed);
    let host = gpu::host::HostRuntime::new();
    for pe in 0..ABORT_NPES.load(Ordering::Relaxed) as usize {
        gpu::GpuRuntime::discard_segment_name(&host, &segment_name(tag, pe));
    }
}

pub use crate::stop::exit_now;
