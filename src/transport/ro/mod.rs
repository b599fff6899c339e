//! The RO backend (reverse offload): PEs this process does not map are reached with MPI
//! one-sided operations on a window over every PE's segment, and collectives on teams with
//! such members run as MPI collectives. Device code hands its operations to a proxy thread
//! through the queues of `device_abi` (`rocshmem_ro_*`); host calls use MPI directly from the
//! calling thread. Design and protocol: docs/ro.md.
//!
//! - this file: [`Ro`], the backend of this process (set-up, shutdown);
//! - `host`: its host side, the `transport::Transport` of the peers this PE does not map;
//! - `queues`: the queue memory device code writes, and the completion of its commands;
//! - `proxy`: the proxy thread, which runs the commands;
//! - `mpi_layer`: the one-sided operations, reductions and Open MPI facts both use.

mod host;
pub mod mpi;
mod mpi_layer;
mod proxy;
mod queues;

use crate::device_abi::*;
use crate::error::{Error, Result};
use crate::gpu::GpuRuntime;
use crate::pe_set::PeSet;
use mpi_layer::Shared;
use mpi_sys::MPI_Comm;
use proxy::Proxy;
use queues::QueueMem;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

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
        let sh = Arc::new(Shared::open(mpi, comm, my_pe, seg_base, seg_len, cfg.gpu)?);
        let host_parent = sh.m.dup(sh.world)?;
        let dev_parent = sh.m.dup(sh.world)?;
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
        let proxy = Proxy::new(Arc::clone(&ro.sh), ro.queues.dev(), Arc::clone(&ro.stop), cfg.progress_delay_us);
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

    /// Members of `set` this PE does not map (`rocshmem_team_device::remote_members`).
    pub fn remote_in(&self, set: PeSet) -> usize {
        (0..set.size).filter(|i| !self.mapped[set.pe(*i)]).count()
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
