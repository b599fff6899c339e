//! The process-wide runtime: what `rocshmem_init` builds and `rocshmem_finalize` tears down.

use crate::bootstrap::{self, Job, Method};
use crate::ctx::CtxTable;
use crate::device_abi::{
    ROCSHMEM_DEVICE_ABI_VERSION, ROCSHMEM_FAST_PES, rocshmem_ctx_device, rocshmem_device_fast, rocshmem_device_state,
};
use crate::env::Config;
use crate::error::{Error, Result};
use crate::gpu::{self, GpuRuntime, Mirror, Segment, host::segment_name};
use crate::heap::{ControlLayout, SymmetricHeap};
use crate::sync::{PeSet, SyncState};
use crate::team::{SHARED_SLOT, Team, TeamTable, WORLD_SLOT};
use crate::{log_error, log_info, log_warn};
use std::ffi::{c_int, c_void};
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
}

static PHASE: AtomicU8 = AtomicU8::new(Phase::Uninit as u8);
static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());

pub fn phase() -> Phase {
    match PHASE.load(Ordering::Acquire) {
        0 => Phase::Uninit,
        1 => Phase::Initializing,
        2 => Phase::Ready,
        3 => Phase::Finalizing,
        _ => Phase::Finalized,
    }
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
    pub sync: SyncState,
    pub teams: TeamTable,
    pub ctxs: CtxTable,
    pub stats: Stats,
    /// The host copy of the device-state block (on the host platform, the block itself).
    pub device_state: Box<StateHead>,
    /// Where device code reads the state (`rocshmem_ctx_device::state`): the device copy on a
    /// GPU platform, `device_state` otherwise.
    pub device_state_addr: usize,
    _heap_bases: Box<[u64]>,
    _state_mirror: Mirror,
    /// Buffers given to rocshmem_buffer_register: (address, length).
    pub registered: std::sync::Mutex<Vec<(usize, usize)>>,
    /// The RO backend, when selected (`ROCSHMEM_BACKEND=ro`).
    #[cfg(feature = "mpi")]
    pub ro: Option<Arc<crate::backend::ro::Ro>>,
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

    /// The RO backend, when it is active.
    #[cfg(feature = "mpi")]
    #[inline]
    pub fn ro(&self) -> Option<&crate::backend::ro::Ro> {
        self.ro.as_deref()
    }

    pub fn world(&self) -> Team {
        Team { set: PeSet::world(self.n_pes()), slot: WORLD_SLOT, my_idx: self.my_pe() }
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
            _ => Error::NotInitialized,
        });
    }
    // SAFETY: the pointer is a leaked Box, freed only by finalize after it is unpublished.
    Ok(unsafe { &*p })
}

/// The runtime for a host API call: only while it is ready, so that a call that starts once
/// finalize has begun fails with "called after rocshmem_finalize" (the phase is read after the
/// call was counted in flight: see `inflight`).
pub fn get_ready() -> Result<&'static Runtime> {
    match PHASE.load(Ordering::SeqCst) {
        x if x == Phase::Ready as u8 => get(),
        x if x == Phase::Finalizing as u8 || x == Phase::Finalized as u8 => Err(Error::Finalized),
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

/// Flushes C and Rust stdio and ends the process immediately (other threads may be blocked).
pub fn exit_now(status: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: fflush(NULL) flushes every C stream; _exit never returns.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// `rocshmem_init*`: bootstrap, heap, teams, contexts.
pub fn init(method: Method) -> Result<&'static Runtime> {
    if let Err(cur) =
        PHASE.compare_exchange(Phase::Uninit as u8, Phase::Initializing as u8, Ordering::AcqRel, Ordering::Acquire)
    {
        return Err(match cur {
            x if x == Phase::Finalized as u8 || x == Phase::Finalizing as u8 => Error::invalid(
                "rocshmem_init after rocshmem_finalize is not supported (OpenSHMEM allows one init per process)",
            ),
            _ => Error::AlreadyInitialized,
        });
    }
    ABORT_NPES.store(0, Ordering::Relaxed);
    // Calls in flight are counted cheaply once finalize can fence every thread (see inflight).
    crate::inflight::setup();
    if crate::watchdog::on() {
        crate::watchdog::enter("rocshmem_init");
    }
    match build(method) {
        Ok(rt) => {
            let p = Box::into_raw(Box::new(rt));
            RUNTIME.store(p, Ordering::Release);
            let pending = {
                let mut pending = PENDING_ABORT.lock().unwrap_or_else(|e| e.into_inner());
                PHASE.store(Phase::Ready as u8, Ordering::Release);
                pending.take()
            };
            if let Some((status, reason, is_error)) = pending {
                // A peer died (or called global_exit) after the last init exchange: going on
                // would wait for it forever.
                abort_now(status, &reason, is_error);
            }
            // SAFETY: just published.
            Ok(unsafe { &*p })
        }
        Err(e) => {
            let mut pending = PENDING_ABORT.lock().unwrap_or_else(|e| e.into_inner());
            PHASE.store(Phase::Uninit as u8, Ordering::Release);
            *pending = None;
            // The PE number stays in the log prefix: the caller reports this failure next.
            // Every PE of a job whose init failed fails too (they fail together, or a peer died):
            // nobody will map this job's heaps, so sweep every name of the job, also those of a
            // peer that was killed before it could unlink its own.
            sweep_job_names();
            ABORT_NPES.store(0, Ordering::Relaxed);
            Err(e)
        }
    }
}

/// Wall time of init's phases, for `ROCSHMEM_DEBUG_LEVEL=INFO` (where init's time goes).
struct Phases {
    start: std::time::Instant,
    last: std::time::Instant,
    done: Vec<(&'static str, f64)>,
}

impl Phases {
    fn new() -> Phases {
        let now = std::time::Instant::now();
        Phases { start: now, last: now, done: Vec::new() }
    }
    /// Ends phase `name` (it began where the previous one ended).
    fn mark(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        self.done.push((name, (now - self.last).as_secs_f64() * 1e3));
        self.last = now;
    }
    fn describe(&self) -> String {
        let parts: Vec<String> = self.done.iter().map(|(n, ms)| format!("{n} {ms:.1}")).collect();
        format!("{:.1} ms: {}", self.start.elapsed().as_secs_f64() * 1e3, parts.join(", "))
    }
}

fn build(method: Method) -> Result<Runtime> {
    let mut phases = Phases::new();
    // A PE started by rocshmem-run knows its number before the rendezvous: say it in errors.
    if let Some(crate::env::Value::Int(pe)) = crate::env::lookup("ROCSHMEM_RUN_RANK") {
        crate::log::set_pe(pe as i32);
    }
    // A malformed variable the rendezvous needs fails here, alone; any other failure of this PE
    // is told to the others once it has joined (see below), so that every PE says which PE
    // failed and why instead of waiting for it.
    let (cfg, bad) = Config::from_env_lenient();
    if let Some((_, e)) = bad.iter().find(|(name, _)| crate::env::needed_by_bootstrap(name)) {
        return Err(e.clone());
    }
    let early = match bad.into_iter().next() {
        Some((_, e)) => Err(e),
        None => choose_backend(&cfg, &method),
    };
    let job = bootstrap::start(method, &cfg, abort_hook())?;
    phases.mark("bootstrap");
    crate::log::set_pe(job.my_pe as i32);
    ABORT_TAG.store(job.job_tag, Ordering::Relaxed);
    ABORT_NPES.store(job.n_pes as u64, Ordering::Relaxed);
    let mut slot = Some(job);
    let r = early.and_then(|use_ro| build_on(cfg, &mut slot, use_ro, phases));
    if let (Err(e), Some(job)) = (&r, &slot) {
        // Before this PE leaves (and sweeps the job's heap names): the others end their init
        // with this PE's number and reason.
        job.report_init_failure(e);
    }
    r
}

/// Whether the RO backend runs (`ROCSHMEM_BACKEND`), or why the choice cannot run.
fn choose_backend(cfg: &Config, method: &Method) -> Result<bool> {
    let backend = cfg.backend.trim().to_ascii_lowercase();
    let use_ro = match backend.as_str() {
        "" | "ipc" => false,
        "ro" if cfg!(feature = "mpi") => true,
        "gda" => return Err(Error::Unsupported(crate::backend::gda::not_routed_message(cfg))),
        _ => {
            return Err(Error::Unsupported(format!(
                "ROCSHMEM_BACKEND={backend}: this build provides the ipc and ro backends{} (gda: not routed yet)",
                if cfg!(feature = "mpi") { "" } else { " (ro needs the `mpi` feature)" }
            )));
        }
    };
    if use_ro {
        let mpi_start = match method {
            Method::MpiComm(_) => true,
            Method::Auto => cfg.run_uniqueid.is_empty() && bootstrap::launched_by_mpi(),
            Method::UniqueId { .. } => false,
        };
        if !mpi_start {
            return Err(Error::Unsupported(
                "ROCSHMEM_BACKEND=ro needs MPI: start the PEs with mpirun (or initialise with \
                 ROCSHMEM_INIT_WITH_MPI_COMM); rocshmem-run, unique-id init and single processes cannot use it"
                    .into(),
            ));
        }
    }
    Ok(use_ro)
}

/// Init after the rendezvous. `slot` holds the job until the runtime takes it, so that the
/// caller can still report a failure through it.
fn build_on(cfg: Config, slot: &mut Option<Job>, use_ro: bool, mut phases: Phases) -> Result<Runtime> {
    let job = slot.as_ref().expect("the job");
    // The table's ranges (src/env.rs) were checked when the configuration was read.
    let max_teams = cfg.max_num_teams as usize;
    let host_ctxs = cfg.max_num_host_contexts as usize;
    let sharing = gpu::share::Policy::parse(&cfg.gpu_sharing)?;
    let (me, n) = (job.my_pe, job.n_pes);

    // IPC maps every peer's heap: all PEs must share a node. RO maps the PEs of this node
    // (only this PE with ROCSHMEM_DISABLE_MIXED_IPC=1) and reaches the others through MPI.
    let my_host = &job.infos[me].host_id;
    if !use_ro {
        if let Some((pe, other)) = job.infos.iter().enumerate().find(|(_, i)| &i.host_id != my_host) {
            return Err(Error::Unsupported(format!(
                "PE {pe} runs on '{}' and PE {me} on '{my_host}': the IPC backend needs every PE on one node \
                 (multi-node runs: ROCSHMEM_BACKEND=ro under mpirun)",
                other.host_id
            )));
        }
    }
    let mapped: Vec<bool> =
        (0..n).map(|p| p == me || (!(use_ro && cfg.disable_mixed_ipc) && &job.infos[p].host_id == my_host)).collect();

    // Spin in waits only if this node's PEs fit its CPUs.
    crate::sync::set_spin(job.infos.iter().filter(|i| i.host_id == job.infos[me].host_id).count());
    // The platform, chosen by every PE; all must agree (a mix cannot map each other's heaps).
    let local_rank = job.infos[..me].iter().filter(|i| i.host_id == job.infos[me].host_id).count();
    let gpu = gpu::open(&cfg.gpu, local_rank);
    phases.mark("gpu open");
    // With the platform, each PE's GPU identity: several PEs on one GPU run or fail here.
    let chosen = gpu.as_ref().map_err(Error::clone).and_then(|g| {
        let mut b = g.platform().name().as_bytes().to_vec();
        if let Some(id) = gpu::share::GpuIdentity::fake(&cfg.test_fake_gpu)?.or_else(|| g.identity()) {
            b.push(0);
            b.extend(id.encode());
        }
        Ok(b)
    });
    let parts = exchange_status(job, chosen, "choosing the GPU platform (ROCSHMEM_GPU)")?;
    let gpu = gpu?;
    phases.mark("platform exchange");
    let platforms: Vec<&[u8]> = parts.iter().map(|p| p.split(|b| *b == 0).next().unwrap_or(&[])).collect();
    if let Some((pe, p)) = platforms.iter().enumerate().find(|(_, p)| **p != platforms[me]) {
        return Err(Error::invalid(format!(
            "PE {pe} runs the {} platform and PE {me} the {}: set ROCSHMEM_GPU to the same value on every PE",
            String::from_utf8_lossy(p),
            gpu.platform().name()
        )));
    }
    let gpus = parts
        .iter()
        .zip(&platforms)
        .map(|(p, name)| p.get(name.len() + 1..).map(gpu::share::GpuIdentity::decode).transpose())
        .collect::<Result<Vec<_>>>()?;
    let hosts: Vec<&str> = job.infos.iter().map(|i| i.host_id.as_str()).collect();
    match gpu::share::check(&hosts, &gpus, sharing, !use_ro)? {
        gpu::share::Verdict::Runs { line, warn: true } => log_warn!("rocshmem_init", "{line}"),
        gpu::share::Verdict::Runs { line, .. } => log_info!("rocshmem_init", "{line}"),
        gpu::share::Verdict::Alone => {}
    }
    // RO: the heaps are host memory the GPU maps, so that an MPI library that cannot read GPU
    // memory can run one-sided operations on them (docs/ro.md, "GPUs").
    if use_ro {
        gpu.use_host_heap()?;
    }
    let slots = max_teams + 1;
    let control = ControlLayout::new(slots, n, crate::team::exchange_words(max_teams), gpu.separate_device_segment());
    let (seg_len, dev_len) = control
        .segment_lens(cfg.heap_size)
        .ok_or_else(|| Error::invalid(format!("ROCSHMEM_HEAP_SIZE={} is too large", cfg.heap_size)))?;
    gpu::host::set_backing(gpu::host::Backing::parse(&cfg.shm_backing)?);
    // Create ours (host control segment, and the device segment where it is separate); tell
    // everyone whether it worked, so all PEs fail together, not one by one.
    let local_pes = job.infos.iter().filter(|i| i.host_id == job.infos[me].host_id).count();
    let own = gpu::host::check_room(seg_len, local_pes, &cfg)
        .and_then(|()| gpu.create_segment(&segment_name(job.job_tag, me), seg_len));
    // Until it is sealed, a failed init must not leave our segment's name behind (no launcher
    // sweeps after unique-id or MPI init).
    let name_guard = NameGuard { gpu: gpu.as_ref(), name: own.is_ok().then(|| segment_name(job.job_tag, me)) };
    let own_dev = match (&own, dev_len) {
        (Ok(_), Some(len)) => gpu.create_device_segment(len).map(Some),
        _ => Ok(None),
    };
    // Each PE's payload: its heap size (must be equal everywhere) and its segment handles.
    let payload = match (&own, &own_dev) {
        (Ok(s), Ok(d)) => Ok(encode_handles(cfg.heap_size as u64, &s.handle, d.as_ref().map(|d| &d.handle[..]))),
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
    };
    phases.mark("heap create");
    let parts = exchange_status(job, payload, "creating the symmetric heap")?;
    phases.mark("handle exchange");
    let parts = parts.iter().map(|p| decode_handles(p)).collect::<Result<Vec<_>>>()?;
    if let Some((pe, (theirs, _, _))) = parts.iter().enumerate().find(|(_, p)| p.0 != cfg.heap_size as u64) {
        return Err(Error::invalid(format!(
            "ROCSHMEM_HEAP_SIZE differs between PEs (PE {pe}: {theirs}, PE {me}: {}); set the same value on every PE",
            cfg.heap_size
        )));
    }
    let (own, own_dev) = (own?, own_dev?);
    let mut segments: Vec<Option<Segment>> = (0..n).map(|_| None).collect();
    let mut dev_segments: Vec<Option<Segment>> = (0..n).map(|_| None).collect();
    let mut failure = None;
    for (pe, (_, h, dh)) in parts.iter().enumerate() {
        if pe == me || !mapped[pe] {
            continue;
        }
        let opened = gpu.open_peer_segment(h, seg_len).and_then(|s| {
            let d = match (dev_len, dh) {
                (Some(len), Some(dh)) => Some(gpu.open_peer_device_segment(dh, len)?),
                (Some(_), None) => return Err(Error::invalid(format!("PE {pe} sent no device heap handle"))),
                _ => None,
            };
            Ok((s, d))
        });
        match opened {
            Ok((s, d)) => {
                segments[pe] = Some(s);
                dev_segments[pe] = d;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    exchange_status(job, failure.map_or(Ok(Vec::new()), Err), "mapping the peers' heaps")?;
    phases.mark("peer mapping");
    segments[me] = Some(own);
    dev_segments[me] = own_dev;
    let dev_segments: Option<Vec<Option<Segment>>> = dev_len.map(|_| dev_segments);
    // Everyone has mapped everyone: the names can go.
    gpu.seal_segment(segments[me].as_ref().expect("own segment"))?;
    std::mem::forget(name_guard);

    let mut heap = SymmetricHeap::new(me, segments, dev_segments, control, cfg.heap_size, Arc::clone(&gpu))?;
    let sync = SyncState::new(slots, n);
    let world = Team { set: PeSet::world(n), slot: WORLD_SLOT, my_idx: me };
    let shared = shared_team(job);
    #[cfg(feature = "mpi")]
    let ro = if use_ro { Some(Arc::new(start_ro(job, &cfg, &heap, mapped, gpu.platform())?)) } else { None };
    let teams = TeamTable::new(max_teams, world, shared, Mirror::new(&gpu, TeamTable::bytes(max_teams))?)?;
    let device_ctxs = cfg.max_num_contexts as usize;
    let ctx_bytes = (1 + host_ctxs + device_ctxs) * std::mem::size_of::<rocshmem_ctx_device>();
    let ctxs = CtxTable::new(host_ctxs, device_ctxs, teams.handle(WORLD_SLOT).cast(), Mirror::new(&gpu, ctx_bytes)?);
    let (pool_start, pool_len) = ctxs.device_pool();
    let heap_bases: Box<[u64]> = (0..n).map(|p| heap.device_base(p) as u64).collect();
    let state_mirror = Mirror::new(&gpu, STATE_HEAD + n * 8)?;
    let state_addr = state_mirror.base(std::ptr::null());
    // Where device code finds the heap bases: after the head of the state mirror on a GPU, the
    // host array otherwise.
    let bases_addr = if state_mirror.is_separate() { state_addr + STATE_HEAD } else { heap_bases.as_ptr() as usize };
    let mut device_state = Box::new(StateHead {
        state: rocshmem_device_state {
            abi_version: ROCSHMEM_DEVICE_ABI_VERSION,
            platform: match gpu.platform() {
                gpu::Platform::Host => 0,
                gpu::Platform::Amd => 1,
                gpu::Platform::Nvidia => 2,
            },
            my_pe: me as i32,
            n_pes: n as i32,
            control_len: heap.control.len as u64,
            heap_size: cfg.heap_size as u64,
            heap_bases: bases_addr as *mut u64,
            teams: teams.entries_ptr(),
            max_teams: max_teams as i32,
            max_ctxs: ctxs.len() as i32,
            ctxs: ctxs.entries_ptr(),
            dev_sync_off: heap.control.dev_sync_off as u64,
            dev_sync_slot_bytes: heap.control.dev_sync_slot_bytes as u64,
            dev_scratch_bytes: heap.control.dev_scratch_bytes as u64,
            ctx_pool_start: pool_start as i32,
            ctx_pool_len: pool_len as i32,
            ro: std::ptr::null_mut(),
        },
        globals: [0; 4],
        fast: rocshmem_device_fast::default(),
    });
    // The state device code reads: the mirror's on a GPU, the host block otherwise.
    let state_ptr = if state_mirror.is_separate() { state_addr } else { &device_state.state as *const _ as usize };
    ctxs.set_state(state_ptr as *mut rocshmem_device_state)?;
    // The values of ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD and ROCSHMEM_TEAM_SHARED, which
    // rocshmem_hipmodule_init copies into modules from the device copy of these 32 bytes.
    device_state.globals = [
        ctxs.opaque(0) as u64,
        teams.handle(WORLD_SLOT) as u64,
        teams.handle(WORLD_SLOT) as u64,
        teams.handle(SHARED_SLOT) as u64,
    ];
    #[cfg(feature = "mpi")]
    if let Some(ro) = &ro {
        device_state.state.ro = ro.device_ptr();
        device_state.fast.flags = crate::device_abi::ROCSHMEM_FAST_RO;
        for t in [world, shared] {
            ro.team_created(t.slot, t.set)?;
            teams.set_ro_remote(t.slot, ro.remote_in(t.set))?;
        }
        sync.set_ro(Arc::clone(ro));
    }
    let fast = &mut device_state.fast;
    fast.my_pe = me as i32;
    fast.n_pes = n as i32;
    fast.n_bases = n.min(ROCSHMEM_FAST_PES) as i32;
    fast.default_ctx = ctxs.opaque(0).cast();
    fast.heap_base = heap_bases[me];
    fast.world_team = teams.handle(WORLD_SLOT).cast();
    fast.world_sync_off = (heap.control.dev_sync_off + WORLD_SLOT * heap.control.dev_sync_slot_bytes) as u64;
    fast.heap_bases[..n.min(ROCSHMEM_FAST_PES)].copy_from_slice(&heap_bases[..n.min(ROCSHMEM_FAST_PES)]);
    // SAFETY: plain-data views of the head and of the bases array.
    let (head, bases) = unsafe {
        (
            std::slice::from_raw_parts((&*device_state as *const StateHead).cast::<u8>(), STATE_HEAD),
            std::slice::from_raw_parts(heap_bases.as_ptr().cast::<u8>(), n * 8),
        )
    };
    state_mirror.push(0, head)?;
    state_mirror.push(STATE_HEAD, bases)?;
    // Programs linked with the device library get their device globals now.
    let globals = if gpu.platform() == gpu::Platform::Host {
        Ok(Vec::new())
    } else {
        set_device_globals(&device_state.globals, &device_state.fast).map(|()| Vec::new())
    };
    exchange_status(job, globals, "setting the device globals of the program")?;
    // The helper kernels of the *_on_stream calls (NVIDIA: their modules, loaded off the
    // critical path; see docs/streams.md).
    phases.mark("tables and device globals");
    gpu.stream_kernels_start();
    // Every PE's own heap base, so that rocshmem_align gives addresses aligned on every PE
    // (the mappings are only page aligned, and each process places them where it can). This
    // all-gather is also the barrier after which peers may touch our control region.
    let bases = job.allgather(&(heap.user_base(me) as u64).to_be_bytes())?;
    let bases: Vec<usize> =
        bases.iter().map(|b| b.as_slice().try_into().map(|b| u64::from_be_bytes(b) as usize).unwrap_or(0)).collect();
    heap.common_align = crate::heap::common_alignment(&bases);
    phases.mark("final exchange");
    log_info!(
        "rocshmem_init",
        "PE {me} of {n} ready ({}, {}, heap {} MiB) in {}",
        job.how,
        gpu.describe(),
        cfg.heap_size >> 20,
        phases.describe()
    );
    if me == 0 {
        // ROCSHMEM_DEBUG_LEVEL=VERSION / ENV (or the :env modifier): say what runs, and how.
        use crate::log::{Level, enabled, write};
        if enabled(Level::Version) {
            let v = format!(
                "rocSHMEM {} ({}), {n} PEs, {}",
                crate::VERSION,
                crate::api::ROCSHMEM_VENDOR_STRING,
                gpu.describe()
            );
            write(Level::Version, "rocshmem_init", format_args!("{v}"));
        }
        if enabled(Level::Env) {
            write(Level::Env, "rocshmem_init", format_args!("environment:\n{}", crate::env::describe(false)));
        }
    }
    Ok(Runtime {
        cfg,
        job: slot.take().expect("the job"),
        heap,
        sync,
        teams,
        ctxs,
        stats: Stats::default(),
        device_state,
        device_state_addr: state_ptr,
        _heap_bases: heap_bases,
        _state_mirror: state_mirror,
        registered: std::sync::Mutex::new(Vec::new()),
        #[cfg(feature = "mpi")]
        ro,
        gpu,
    })
}

/// Sets up the RO backend: MPI from the bootstrap (which must have been through MPI), the
/// window over this PE's segment, the queues and the proxy thread.
#[cfg(feature = "mpi")]
fn start_ro(
    job: &Job,
    cfg: &Config,
    heap: &SymmetricHeap,
    mapped: Vec<bool>,
    platform: gpu::Platform,
) -> Result<crate::backend::ro::Ro> {
    if !heap.host_accessible() {
        return Err(Error::Unsupported(format!(
            "ROCSHMEM_BACKEND=ro: the {} platform's heap is not in host memory",
            platform.name()
        )));
    }
    let (mpi, comm) = job
        .mpi()
        .ok_or_else(|| Error::Unsupported("ROCSHMEM_BACKEND=ro needs MPI: start the PEs with mpirun".into()))?;
    if mpi.flavour != crate::bootstrap::mpi::Flavour::OpenMpi {
        return Err(Error::Unsupported(format!(
            "ROCSHMEM_BACKEND=ro needs Open MPI, and this MPI is {} ({}); the MPI bootstrap with the ipc backend \
             (unset ROCSHMEM_BACKEND) works with it",
            mpi.flavour.name(),
            mpi.describe
        )));
    }
    let me = job.my_pe;
    let seg_base = heap.device_base(me);
    let seg_len = heap.control.len + heap.user_len.next_multiple_of(4096);
    let rc = crate::backend::ro::RoConfig {
        mapped,
        // In range: checked against the table when the configuration was read.
        n_queues: cfg.ro_queues as usize,
        progress_delay_us: cfg.ro_progress_delay as u64,
        gpu: Arc::clone(&heap.gpu),
    };
    let ro = crate::backend::ro::Ro::new(mpi, comm, me, job.n_pes, seg_base, seg_len, rc)?;
    log_info!(
        "rocshmem_init",
        "RO backend: PE {me} maps {} of {} PEs, the others through MPI",
        ro.mapped.iter().filter(|m| **m).count(),
        job.n_pes
    );
    Ok(ro)
}

/// The head of the device-state block: the state, then the 32 bytes of the module globals
/// (`ROCSHMEM_CTX_DEFAULT` = {ctx, team}, `ROCSHMEM_TEAM_WORLD`, `ROCSHMEM_TEAM_SHARED`), then
/// the value of `rocshmemi_device_fast`. On a GPU its device copy is followed by the heap bases.
#[repr(C)]
pub struct StateHead {
    pub state: rocshmem_device_state,
    pub globals: [u64; 4],
    pub fast: rocshmem_device_fast,
}

/// Bytes of [`StateHead`] (where the heap bases start in the device copy).
const STATE_HEAD: usize = std::mem::size_of::<StateHead>();

/// Signature of `rocshmemi_device_globals_set`, the device library's host glue linked into
/// programs: sets the program's `ROCSHMEM_CTX_DEFAULT` (16 bytes), `ROCSHMEM_TEAM_WORLD` and
/// `ROCSHMEM_TEAM_SHARED` (8 bytes each) and `rocshmemi_device_fast` (its size is the last
/// argument, checked by the glue) from the host values pointed to; 0 on success.
type DeviceGlobalsSet =
    unsafe extern "C" fn(*const c_void, *const c_void, *const c_void, *const c_void, usize) -> c_int;

unsafe extern "C" {
    /// The C++ shim's weak reference to the glue (src/cxx/shim_core.cpp): its address when the
    /// program was linked with it (statically, or exported to librocshmem.so), else NULL.
    fn rocshmemi_device_globals_set_linked() -> *mut c_void;
}

/// Calls the program's `rocshmemi_device_globals_set` if it has one: the glue linked into the
/// same executable as this library (librocshmem.a), else found with dlsym in the global scope
/// (the executable exports it when it links librocshmem.so, which refers to it, or `-rdynamic`).
fn set_device_globals(globals: &[u64; 4], fast: &rocshmem_device_fast) -> Result<()> {
    // SAFETY: the shim's accessor has no preconditions; dlsym with a NUL-terminated name.
    let mut f = unsafe { rocshmemi_device_globals_set_linked() };
    if f.is_null() {
        // SAFETY: as above.
        f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"rocshmemi_device_globals_set".as_ptr()) };
    }
    if f.is_null() {
        log_info!(
            "rocshmem_init",
            "the program has no rocshmemi_device_globals_set (not linked with librocshmem_device.a, or the symbol \
             is not exported): kernels must be initialised with rocshmem_hipmodule_init"
        );
        return Ok(());
    }
    // SAFETY: the device library's glue has this signature.
    let f: DeviceGlobalsSet = unsafe { std::mem::transmute::<*mut c_void, DeviceGlobalsSet>(f) };
    // SAFETY: 16 + 8 + 8 readable bytes of host memory, and the fast block with its size.
    let rc = unsafe {
        f(
            globals.as_ptr().cast(),
            globals[2..].as_ptr().cast(),
            globals[3..].as_ptr().cast(),
            (fast as *const rocshmem_device_fast).cast(),
            std::mem::size_of::<rocshmem_device_fast>(),
        )
    };
    if rc != 0 {
        return Err(Error::Gpu(format!("rocshmemi_device_globals_set (the device library's glue) returned {rc}")));
    }
    log_info!("rocshmem_init", "device globals of the program set");
    Ok(())
}

/// The init payload: heap size, host segment handle, and the device segment handle if any.
fn encode_handles(heap_size: u64, host: &[u8], device: Option<&[u8]>) -> Vec<u8> {
    let mut v = heap_size.to_be_bytes().to_vec();
    v.extend_from_slice(&(host.len() as u32).to_be_bytes());
    v.extend_from_slice(host);
    if let Some(d) = device {
        v.push(1);
        v.extend_from_slice(d);
    } else {
        v.push(0);
    }
    v
}

/// Inverse of [`encode_handles`].
#[allow(clippy::type_complexity)]
fn decode_handles(b: &[u8]) -> Result<(u64, Vec<u8>, Option<Vec<u8>>)> {
    let bad = || Error::Bootstrap("a peer's heap handles are malformed (mixed rocSHMEM versions?)".into());
    let heap = u64::from_be_bytes(b.get(..8).ok_or_else(bad)?.try_into().unwrap());
    let hl = u32::from_be_bytes(b.get(8..12).ok_or_else(bad)?.try_into().unwrap()) as usize;
    let host = b.get(12..12 + hl).ok_or_else(bad)?.to_vec();
    let device = match b.get(12 + hl).ok_or_else(bad)? {
        0 => None,
        _ => Some(b[13 + hl..].to_vec()),
    };
    Ok((heap, host, device))
}

impl Runtime {
    /// `rocshmem_hipmodule_init`: copies the device globals into the GPU module `module`
    /// (a `CUmodule` on NVIDIA), stream-ordered on `stream`, without synchronising.
    ///
    /// # Safety
    /// `module` must be NULL or a loaded module, `stream` NULL or a stream, of the GPU runtime.
    pub unsafe fn module_init(&self, module: *mut c_void, stream: *mut c_void) -> Result<()> {
        if self.gpu.platform() != gpu::Platform::Host && module.is_null() {
            return Err(Error::NullPointer("module"));
        }
        let g = self.device_state_addr + std::mem::offset_of!(StateHead, globals);
        let src = g as *const u8;
        // SAFETY: the caller's module and stream; `src` is the device copy of the 32 bytes.
        if !unsafe { self.gpu.module_global_copy(module, stream, "ROCSHMEM_CTX_DEFAULT", src, 16)? } {
            return Err(Error::invalid(
                "the module has no ROCSHMEM_CTX_DEFAULT global: was it built with the rocSHMEM device library?",
            ));
        }
        // Modules that use no team handle may lack these globals.
        // SAFETY: offsets inside the 32 bytes of globals.
        unsafe {
            self.gpu.module_global_copy(module, stream, "ROCSHMEM_TEAM_WORLD", src.add(16), 8)?;
            self.gpu.module_global_copy(module, stream, "ROCSHMEM_TEAM_SHARED", src.add(24), 8)?;
        }
        // The device library's address table (constant memory); every module that holds an RMA,
        // AMO or signal function of the library has it.
        let fast = (self.device_state_addr + std::mem::offset_of!(StateHead, fast)) as *const u8;
        // SAFETY: the device copy of the fast block, inside the state mirror.
        unsafe {
            self.gpu.module_global_copy(
                module,
                stream,
                "rocshmemi_device_fast",
                fast,
                std::mem::size_of::<rocshmem_device_fast>(),
            )?;
        }
        Ok(())
    }
}

/// Unlinks a segment name when dropped (init failed before the name was sealed).
struct NameGuard<'a> {
    gpu: &'a dyn GpuRuntime,
    name: Option<String>,
}

impl Drop for NameGuard<'_> {
    fn drop(&mut self) {
        if let Some(name) = &self.name {
            self.gpu.discard_segment_name(name);
        }
    }
}

/// All-gathers "ok + payload" or "failed + reason"; if any PE failed, every PE returns the
/// first failure, naming the PE.
fn exchange_status(job: &Job, mine: Result<Vec<u8>>, step: &str) -> Result<Vec<Vec<u8>>> {
    let msg = match &mine {
        Ok(payload) => [&[0u8][..], payload].concat(),
        Err(e) => [&[1u8][..], e.to_string().as_bytes()].concat(),
    };
    let parts = job.allgather(&msg)?;
    if let Some((pe, p)) = parts.iter().enumerate().find(|(_, p)| p.first() != Some(&0)) {
        mine?;
        return Err(Error::PeerFailed(format!("PE {pe} failed {step}: {}", String::from_utf8_lossy(&p[1..]))));
    }
    Ok(parts.into_iter().map(|mut p| p.split_off(1)).collect())
}

/// ROCSHMEM_TEAM_SHARED: the PEs on this PE's node, when they form a strided set; otherwise
/// (an unusual placement) just this PE.
fn shared_team(job: &Job) -> Team {
    let me = job.my_pe;
    let host = &job.infos[me].host_id;
    let local: Vec<usize> = (0..job.n_pes).filter(|p| &job.infos[*p].host_id == host).collect();
    let stride = if local.len() > 1 { local[1] - local[0] } else { 1 };
    let strided = local.windows(2).all(|w| w[1] - w[0] == stride);
    let set = if strided {
        PeSet { start: local[0], stride, size: local.len() }
    } else {
        PeSet { start: me, stride: 1, size: 1 }
    };
    Team { set, slot: SHARED_SLOT, my_idx: set.index_of(me).unwrap_or(0) }
}

/// `rocshmem_finalize`: refuse new calls, wait for those in flight, complete, synchronise,
/// disconnect, unmap. Not itself counted in flight (see `inflight`).
pub fn finalize() -> Result<()> {
    // Once: a second finalize, also one racing this one on another thread, is refused.
    if let Err(cur) =
        PHASE.compare_exchange(Phase::Ready as u8, Phase::Finalizing as u8, Ordering::SeqCst, Ordering::SeqCst)
    {
        return Err(if cur == Phase::Finalizing as u8 || cur == Phase::Finalized as u8 {
            Error::Finalized
        } else {
            Error::NotInitialized
        });
    }
    let rt = get()?;
    // Calls other threads of this process are still making finish before anything goes away
    // (those starting from now on fail with "called after rocshmem_finalize").
    crate::inflight::drain();
    // The stream-kernel loader thread uses the runtime: it finishes first.
    rt.gpu.stream_kernels_wait();
    // Operations still queued on host-platform streams run before the heaps go away.
    crate::stream::host::drain_all();
    std::sync::atomic::fence(Ordering::SeqCst);
    // The world barrier, which also checks that every PE made as many heap calls (a PE still
    // in a malloc or free another skipped stops the job with a message: heap/agree.rs).
    crate::heap::agree::agree(&rt.heap, &rt.sync, crate::heap::agree::HeapCall::Finalize, None)?;
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.ro() {
        // Before MPI_Finalize (job.finalize): the proxy drains and stops, the window goes.
        ro.shutdown();
    }
    let r = rt.job.finalize();
    let p = RUNTIME.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: `p` was leaked by init and is no longer reachable through RUNTIME.
    drop(unsafe { Box::from_raw(p) });
    PHASE.store(Phase::Finalized as u8, Ordering::Release);
    r
}

/// `rocshmem_global_exit`: end every PE with `status`.
pub fn global_exit(status: i32) -> ! {
    if let Ok(rt) = get() {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        unsafe { libc::fflush(std::ptr::null_mut()) };
        rt.job.global_exit(status);
    }
    exit_now(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_payloads_round_trip() {
        let host = b"/rocshmem-00ff-3".to_vec();
        let dev = vec![0xabu8; 64];
        let with = encode_handles(1 << 30, &host, Some(&dev));
        assert_eq!(decode_handles(&with).unwrap(), (1 << 30, host.clone(), Some(dev)));
        let without = encode_handles(5, &host, None);
        assert_eq!(decode_handles(&without).unwrap(), (5, host, None));
        assert!(decode_handles(&with[..10]).is_err());
    }

    #[test]
    fn state_head_layout() {
        assert_eq!(STATE_HEAD, 136 + std::mem::size_of::<rocshmem_device_fast>());
        assert_eq!(std::mem::offset_of!(StateHead, globals), 104);
        assert_eq!(std::mem::offset_of!(StateHead, fast), 136);
    }
}
