//! Init, finalize and global exit: the transitions of the runtime's life cycle (the phases,
//! the published runtime and the abort hooks they drive are in `mod.rs`).

use super::{
    ABORT_NPES, INIT_PID, PENDING_ABORT, PHASE, Phase, RUNTIME, Runtime, abort_now, build, forked_child, forked_error,
    get, phase, sweep_job_names,
};
use crate::bootstrap::Method;
use crate::error::{Error, Result};
use crate::log_error;
use crate::stop::exit_now;
use std::sync::atomic::Ordering;

/// How long init waits for the stream kernels' core module (`GpuRuntime::stream_kernels_settle`):
/// loading it took 2-6 ms on the H200 with SASS, a cold JIT from PTX 366-449 ms (docs/streams.md).
const STREAM_SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_millis(50);

/// `rocshmem_init*`: bootstrap, heap, teams, contexts.
pub fn init(method: Method) -> Result<&'static Runtime> {
    if let Err(cur) =
        PHASE.compare_exchange(Phase::Uninit as u8, Phase::Initializing as u8, Ordering::AcqRel, Ordering::Acquire)
    {
        return Err(match cur {
            x if x == Phase::Finalized as u8 || x == Phase::Finalizing as u8 => Error::invalid(
                "rocshmem_init after rocshmem_finalize is not supported (OpenSHMEM allows one init per process)",
            ),
            x if x == Phase::Forked as u8 => forked_error(),
            _ => Error::AlreadyInitialized,
        });
    }
    INIT_PID.store(std::process::id(), Ordering::Relaxed);
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a handler that only stores to atomics.
    AT_FORK.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(forked_child));
    });
    ABORT_NPES.store(0, Ordering::Relaxed);
    // The layers below the runtime end the job through these (see `stop`).
    crate::stop::install(abort_now, global_exit);
    // Calls in flight are counted cheaply once finalize can fence every thread (see inflight).
    crate::inflight::setup();
    // Init's exchanges are watched (hang report) under this name.
    crate::inflight::name_call("rocshmem_init");
    match build::build(method) {
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
            // Ctrl-C from now on prints where every PE waits before the job ends.
            crate::interrupt::install();
            // SAFETY: just published.
            let rt = unsafe { &*p };
            // The stream kernels' core module, filled by its loader thread now that the runtime
            // is up: a few ms with code for this GPU in the library, kept out of the first
            // *_on_stream call; a PTX JIT (no such code) stays in the background past the bound.
            rt.gpu.stream_kernels_settle(STREAM_SETTLE_LIMIT);
            Ok(rt)
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

/// `rocshmem_finalize`: refuse new calls, wait for those in flight, complete, synchronise,
/// disconnect, unmap. Not itself counted in flight (see `inflight`).
pub fn finalize() -> Result<()> {
    // Once: a second finalize, also one racing this one on another thread, is refused.
    if let Err(cur) =
        PHASE.compare_exchange(Phase::Ready as u8, Phase::Finalizing as u8, Ordering::SeqCst, Ordering::SeqCst)
    {
        return Err(match cur {
            x if x == Phase::Finalizing as u8 || x == Phase::Finalized as u8 => Error::Finalized,
            x if x == Phase::Forked as u8 => forked_error(),
            _ => Error::NotInitialized,
        });
    }
    let rt = get()?;
    crate::inflight::name_call("rocshmem_finalize");
    // Calls other threads of this process are still making finish before anything goes away
    // (those starting from now on fail with "called after rocshmem_finalize").
    crate::inflight::drain();
    // The stream-kernel loader thread uses the runtime: it finishes first.
    rt.gpu.stream_kernels_wait();
    // Operations still queued on host-platform streams run before the heaps go away.
    crate::gpu::host_streams::drain_all();
    std::sync::atomic::fence(Ordering::SeqCst);
    // The world barrier, which also checks that every PE made as many heap calls (a PE still
    // in a malloc or free another skipped stops the job with a message: heap/agree.rs).
    crate::heap_agree::agree(&rt.heap, &rt.net, crate::heap_agree::HeapCall::Finalize, None)?;
    // Before MPI_Finalize (job.finalize): RO's proxy drains and stops, its window goes.
    rt.net.shutdown();
    let r = rt.job.finalize();
    let p = RUNTIME.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: `p` was leaked by init and is no longer reachable through RUNTIME.
    drop(unsafe { Box::from_raw(p) });
    PHASE.store(Phase::Finalized as u8, Ordering::Release);
    crate::interrupt::uninstall();
    r
}

/// `rocshmem_global_exit`: end every PE with `status`.
pub fn global_exit(status: i32) -> ! {
    if phase() == Phase::Forked {
        // The parent's job is not the child's to end.
        log_error!("rocshmem_global_exit", "{}; this child exits alone, with status {status}", forked_error());
        exit_now(status);
    }
    if let Ok(rt) = get() {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        unsafe { libc::fflush(std::ptr::null_mut()) };
        rt.job.global_exit(status);
    }
    exit_now(status)
}
