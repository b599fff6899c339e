//! `rocshmem_init`'s steps after the configuration is read: the rendezvous, the backend and
//! platform choice, the symmetric heap, the transports, the tables and the device state. Each
//! step that can fail on one PE tells every PE (`exchange_status`), so that all PEs fail
//! together, naming the PE and its reason, instead of waiting for it.

use super::device::{self, DeviceState};
use super::{ABORT_NPES, ABORT_TAG, Runtime, Stats, abort_hook};
use crate::bootstrap::{self, Job, Method};
use crate::ctx::CtxTable;
use crate::device_abi::rocshmem_ctx_device;
use crate::env::Config;
use crate::error::{Error, Result};
use crate::gpu::mirror::Mirror;
use crate::gpu::{self, GpuRuntime, Segment, host::segment_name};
use crate::heap::{ControlLayout, SymmetricHeap};
use crate::pe_set::PeSet;
use crate::team::{SHARED_SLOT, Team, TeamTable, WORLD_SLOT};
#[cfg(feature = "test-doubles")]
use crate::transport::gda::host::{Gda, GdaSetup};
use crate::transport::gpu_heap::GpuHeap;
use crate::transport::route::Transports;
use crate::{log_info, log_warn};
use std::sync::Arc;
use std::sync::atomic::Ordering;

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

pub(super) fn build(method: Method) -> Result<Runtime> {
    let mut phases = Phases::new();
    // A PE started by rocshmem-run, an MPI launcher or with a unique id knows its number before
    // the rendezvous: say it in errors.
    if let Some(pe) = bootstrap::rank_before_rendezvous(&method) {
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
    let r = early.and_then(|backend| build_on(cfg, &mut slot, backend, phases));
    if let (Err(e), Some(job)) = (&r, &slot) {
        // Before this PE leaves (and sweeps the job's heap names): the others end their init
        // with this PE's number and reason.
        job.report_init_failure(e);
    }
    r
}

/// The backend of this PE (`ROCSHMEM_BACKEND`): which transport reaches the peers it does not map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Ipc,
    Ro,
    /// GDA against the NIC model (`ROCSHMEM_GDA_PROVIDER=model`).
    Gda,
}

/// The backend (`ROCSHMEM_BACKEND`), or why the choice cannot run.
fn choose_backend(cfg: &Config, method: &Method) -> Result<Backend> {
    let backend = cfg.backend.trim().to_ascii_lowercase();
    let chosen = match backend.as_str() {
        "" | "ipc" => Backend::Ipc,
        "ro" if cfg!(feature = "mpi") => Backend::Ro,
        "gda" if crate::transport::gda::wants_model(cfg) => Backend::Gda,
        "gda" => return Err(Error::Unsupported(crate::transport::gda::refusal(cfg))),
        _ => {
            return Err(Error::Unsupported(format!(
                "ROCSHMEM_BACKEND={backend}: this build provides the ipc, ro and gda backends{}",
                if cfg!(feature = "mpi") { "" } else { " (ro needs the `mpi` feature)" }
            )));
        }
    };
    if chosen == Backend::Ro {
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
    Ok(chosen)
}

/// Init after the rendezvous, step by step. `slot` holds the job until the runtime takes it,
/// so that the caller can still report a failure through it.
fn build_on(cfg: Config, slot: &mut Option<Job>, backend: Backend, mut phases: Phases) -> Result<Runtime> {
    let job = slot.as_ref().expect("the job");
    let (me, n) = (job.my_pe, job.n_pes);
    let mapped = placement(job, &cfg, backend)?;
    let gpu = choose_platform(job, &cfg, backend != Backend::Ipc, &mut phases)?;
    if backend == Backend::Gda {
        let ok = if gpu.platform() == gpu::Platform::Host {
            Ok(Vec::new())
        } else {
            Err(Error::Unsupported(format!(
                "ROCSHMEM_GDA_PROVIDER=model: the NIC model runs on the host platform (ROCSHMEM_GPU=host), not on {}",
                gpu.platform().name()
            )))
        };
        exchange_status(job, ok, "starting GDA")?;
    }
    // The table's ranges (src/env.rs) were checked when the configuration was read.
    let max_teams = cfg.max_num_teams as usize;
    let (mut heap, nic) = create_heap(job, &cfg, &gpu, &mapped, backend == Backend::Gda, max_teams + 1, &mut phases)?;
    let mut net = start_transports(job, &cfg, &heap, mapped, nic, max_teams + 1, backend)?;
    let world = Team { set: PeSet::world(n), slot: WORLD_SLOT, my_idx: me };
    let shared = shared_team(job);
    let teams = TeamTable::new(max_teams, world, shared, Mirror::new(&gpu, TeamTable::bytes(max_teams))?)?;
    let (host_ctxs, device_ctxs) = (cfg.max_num_host_contexts as usize, cfg.max_num_contexts as usize);
    let ctx_bytes = (1 + host_ctxs + device_ctxs) * std::mem::size_of::<rocshmem_ctx_device>();
    let ctxs = CtxTable::new(host_ctxs, device_ctxs, teams.handle(WORLD_SLOT).cast(), Mirror::new(&gpu, ctx_bytes)?);
    let device = device::build(&gpu, &heap, &teams, &ctxs, &net)?;
    // A heap of GPU memory (only IPC runs on one: RO and GDA refuse it): IPC runs atomics and team
    // collectives as stream kernels; tests take that path on the host platform too.
    let forced = cfg.test_gpu_heap_route && gpu.platform() == gpu::Platform::Host && backend == Backend::Ipc;
    if !heap.host_accessible() || forced {
        net.ipc.use_gpu_heap(GpuHeap::new(Arc::clone(&gpu), ctxs.opaque(0)));
    }
    for t in [world, shared] {
        let remote = net.team_created(t.slot, t.set)?;
        if remote > 0 {
            teams.set_remote_members(t.slot, remote)?;
        }
    }
    // Programs linked with the device library get their device globals now.
    let globals = if gpu.platform() == gpu::Platform::Host {
        Ok(Vec::new())
    } else {
        device::set_device_globals(&device.head.globals, &device.head.fast).map(|()| Vec::new())
    };
    exchange_status(job, globals, "setting the device globals of the program")?;
    // The helper kernels of the *_on_stream calls (NVIDIA: their modules, loaded off the
    // critical path; see docs/streams.md).
    phases.mark("tables and device globals");
    // With RO the stream kernels may wait for the proxy thread, whose CUDA calls would wait for
    // a module loading meanwhile: every module and kernel is loaded now (gpu/modules.rs).
    gpu.stream_kernels_start(std::sync::Arc::new(super::fill_module_globals), backend == Backend::Ro);
    heap.common_align = common_alignment(job, &heap)?;
    phases.mark("final exchange");
    log_info!(
        "rocshmem_init",
        "PE {me} of {n} ready ({}, {}, heap {} MiB) in {}",
        job.how,
        gpu.describe(),
        heap.user_len >> 20,
        phases.describe()
    );
    let DeviceState { head, addr, heap_bases, routes, mirror } = device;
    Ok(Runtime {
        cfg,
        job: slot.take().expect("the job"),
        heap,
        net,
        teams,
        ctxs,
        stats: Stats::default(),
        device_state: head,
        device_state_addr: addr,
        _heap_bases: heap_bases,
        _routes: routes,
        _state_mirror: mirror,
        registered: std::sync::Mutex::new(Vec::new()),
        gpu,
    })
}

/// Which PEs this PE maps: IPC maps every peer's heap, so all PEs must share a node; RO and
/// GDA map the PEs of this node (only this PE with ROCSHMEM_DISABLE_MIXED_IPC=1) and reach the
/// others through MPI or queue pairs. Also sets the wait policy: spin only if this node's PEs
/// fit its CPUs.
fn placement(job: &Job, cfg: &Config, backend: Backend) -> Result<Vec<bool>> {
    let me = job.my_pe;
    let my_host = &job.infos[me].host_id;
    let remote = backend != Backend::Ipc;
    if !remote {
        if let Some((pe, other)) = job.infos.iter().enumerate().find(|(_, i)| &i.host_id != my_host) {
            return Err(Error::Unsupported(format!(
                "PE {pe} runs on '{}' and PE {me} on '{my_host}': the IPC backend needs every PE on one node \
                 (multi-node runs: ROCSHMEM_BACKEND=ro under mpirun)",
                other.host_id
            )));
        }
    }
    crate::sync::set_spin(local_pes(job));
    Ok((0..job.n_pes)
        .map(|p| p == me || (!(remote && cfg.disable_mixed_ipc) && &job.infos[p].host_id == my_host))
        .collect())
}

/// PEs on this PE's node.
fn local_pes(job: &Job) -> usize {
    job.infos.iter().filter(|i| i.host_id == job.infos[job.my_pe].host_id).count()
}

/// The platform, chosen by every PE; all must agree (a mix cannot map each other's heaps).
/// With it, each PE's GPU identity: several PEs on one GPU run or fail here
/// (`ROCSHMEM_GPU_SHARING`).
fn choose_platform(job: &Job, cfg: &Config, use_ro: bool, phases: &mut Phases) -> Result<Arc<dyn GpuRuntime>> {
    let me = job.my_pe;
    let sharing = gpu::share::Policy::parse(&cfg.gpu_sharing)?;
    let local_rank = job.infos[..me].iter().filter(|i| i.host_id == job.infos[me].host_id).count();
    let gpu = gpu::select::open(&cfg.gpu, local_rank);
    phases.mark("gpu open");
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
    Ok(gpu)
}

/// The symmetric heap: this PE's segments created, every PE's handles and heap size
/// exchanged and checked, the mapped peers' segments opened, the names sealed. With `nic_all`
/// (the GDA NIC model) every other peer's segment is opened too, for the model alone: the
/// second value, per PE.
fn create_heap(
    job: &Job,
    cfg: &Config,
    gpu: &Arc<dyn GpuRuntime>,
    mapped: &[bool],
    nic_all: bool,
    slots: usize,
    phases: &mut Phases,
) -> Result<(SymmetricHeap, Segments)> {
    let (me, n) = (job.my_pe, job.n_pes);
    let control = ControlLayout::new(slots, n, crate::team::exchange_words(slots - 1), gpu.separate_device_segment());
    let (seg_len, dev_len) = control
        .segment_lens(cfg.heap_size)
        .ok_or_else(|| Error::invalid(format!("ROCSHMEM_HEAP_SIZE={} is too large", cfg.heap_size)))?;
    gpu::host::set_backing(gpu::host::Backing::parse(&cfg.shm_backing)?);
    // Create ours (host control segment, and the device segment where it is separate); tell
    // everyone whether it worked, so all PEs fail together, not one by one.
    // Every segment this PE will map must fit in its address space (checked before any is made,
    // so that the error names the variable).
    let maps = if nic_all { n } else { mapped.iter().filter(|m| **m).count() };
    let own = gpu::host::check_address_space(cfg.heap_size, seg_len, maps)
        .and_then(|()| gpu::host::check_room(seg_len, local_pes(job), cfg))
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
    let (mut segments, mut dev_segments, nic) = map_peers(job, gpu, mapped, nic_all, &parts, seg_len, dev_len)?;
    phases.mark("peer mapping");
    segments[me] = Some(own?);
    dev_segments[me] = own_dev?;
    let dev_segments: Option<Vec<Option<Segment>>> = dev_len.map(|_| dev_segments);
    // Everyone has mapped everyone: the names can go.
    gpu.seal_segment(segments[me].as_ref().expect("own segment"))?;
    std::mem::forget(name_guard);
    Ok((SymmetricHeap::new(me, segments, dev_segments, control, cfg.heap_size, Arc::clone(gpu))?, nic))
}

/// Per PE: its segment as mapped here, if it is.
type Segments = Vec<Option<Segment>>;

/// A PE's init payload: its heap size, host segment handle, and device segment handle if any.
type Handles = (u64, Vec<u8>, Option<Vec<u8>>);

/// Host and device segments of every PE this PE maps (other than itself), opened from the
/// handles they sent, and with `nic_all` the host segments of the others (for the GDA NIC
/// model); collective (every PE says whether its mapping worked).
fn map_peers(
    job: &Job,
    gpu: &Arc<dyn GpuRuntime>,
    mapped: &[bool],
    nic_all: bool,
    parts: &[Handles],
    seg_len: usize,
    dev_len: Option<usize>,
) -> Result<(Segments, Segments, Segments)> {
    let mut segments: Segments = (0..job.n_pes).map(|_| None).collect();
    let mut dev_segments: Segments = (0..job.n_pes).map(|_| None).collect();
    let mut nic: Segments = (0..job.n_pes).map(|_| None).collect();
    let mut failure = None;
    for (pe, (_, h, dh)) in parts.iter().enumerate() {
        if pe == job.my_pe {
            continue;
        }
        if !mapped[pe] {
            if nic_all {
                match gpu.open_peer_segment(h, seg_len) {
                    Ok(s) => nic[pe] = Some(s),
                    Err(e) => {
                        failure = Some(Error::Unsupported(format!(
                            "the GDA NIC model maps every PE's heap, and PE {pe}'s cannot be opened here (the model \
                             needs every PE on this machine): {e}"
                        )));
                        break;
                    }
                }
            }
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
    Ok((segments, dev_segments, nic))
}

/// The transports: IPC to the mapped peers, and the RO or GDA backend for the others when it
/// runs.
fn start_transports(
    job: &Job,
    cfg: &Config,
    heap: &SymmetricHeap,
    mapped: Vec<bool>,
    nic: Segments,
    slots: usize,
    backend: Backend,
) -> Result<Transports> {
    #[cfg_attr(not(any(feature = "mpi", feature = "test-doubles")), allow(unused_mut))]
    let mut net = Transports::ipc(slots, job.n_pes);
    // Without the NIC model no build chooses GDA (`choose_backend`); without either remote
    // transport, IPC is all there is.
    #[cfg(not(feature = "test-doubles"))]
    let _ = nic;
    #[cfg(not(any(feature = "mpi", feature = "test-doubles")))]
    let _ = (cfg, heap, backend);
    #[cfg(feature = "test-doubles")]
    if backend == Backend::Gda {
        let setup = GdaSetup { job, cfg, heap, nic, sync: Arc::clone(&net.ipc.sync) };
        let gda = Gda::start(setup);
        exchange_status(job, gda.as_ref().map(|_| Vec::new()).map_err(Error::clone), "starting GDA")?;
        net.use_gda(Arc::new(gda?), &mapped);
        log_info!(
            "rocshmem_init",
            "GDA backend (NIC model): PE {} maps {} of {} PEs, the others through queue pairs",
            job.my_pe,
            mapped.iter().filter(|m| **m).count(),
            job.n_pes
        );
    }
    #[cfg(feature = "mpi")]
    if backend == Backend::Ro {
        net.use_ro(Arc::new(start_ro(job, cfg, heap, mapped)?));
    }
    #[cfg(not(feature = "mpi"))]
    let _ = mapped;
    Ok(net)
}

/// Every PE's own heap base, so that rocshmem_align gives addresses aligned on every PE (the
/// mappings are only page aligned, and each process places them where it can). This
/// all-gather is also the barrier after which peers may touch our control region.
fn common_alignment(job: &Job, heap: &SymmetricHeap) -> Result<usize> {
    let bases = job.allgather(&(heap.user_base(job.my_pe) as u64).to_be_bytes())?;
    let bases: Vec<usize> =
        bases.iter().map(|b| b.as_slice().try_into().map(|b| u64::from_be_bytes(b) as usize).unwrap_or(0)).collect();
    Ok(crate::heap::common_alignment(&bases))
}

/// Sets up the RO backend: MPI from the bootstrap (which must have been through MPI), the
/// window over this PE's segment, the queues and the proxy thread.
#[cfg(feature = "mpi")]
fn start_ro(job: &Job, cfg: &Config, heap: &SymmetricHeap, mapped: Vec<bool>) -> Result<crate::transport::ro::Ro> {
    if !heap.host_accessible() {
        return Err(Error::Unsupported(format!(
            "ROCSHMEM_BACKEND=ro: the {} platform's heap is not in host memory",
            heap.gpu.platform().name()
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
    let rc = crate::transport::ro::RoConfig {
        mapped,
        // In range: checked against the table when the configuration was read.
        n_queues: cfg.ro_queues as usize,
        progress_delay_us: cfg.ro_progress_delay as u64,
        gpu: Arc::clone(&heap.gpu),
    };
    let ro = crate::transport::ro::Ro::new(mpi, comm, me, job.n_pes, seg_base, seg_len, rc)?;
    log_info!(
        "rocshmem_init",
        "RO backend: PE {me} maps {} of {} PEs, the others through MPI",
        ro.mapped.iter().filter(|m| **m).count(),
        job.n_pes
    );
    Ok(ro)
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
fn decode_handles(b: &[u8]) -> Result<Handles> {
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
}
