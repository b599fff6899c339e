//! How this PE stops: at once ([`exit_now`]), or with the job ([`abort`], [`global_exit`]).
//!
//! The layers below the runtime (the watchdog, the heap agreement, the RO backend) must be able
//! to end the job without importing the runtime, which is above them: the runtime installs
//! its two ways of ending the job here when init starts ([`install`]). Before that (or in unit
//! tests) they log and exit this process only.

use std::sync::OnceLock;

/// `abort(status, reason, is_error)`: this PE leaves because the job ended (sweeps its heap names).
pub type AbortFn = fn(i32, &str, bool) -> !;
/// `global_exit(status)`: ends every PE of the job.
pub type GlobalExitFn = fn(i32) -> !;

static HOOKS: OnceLock<(AbortFn, GlobalExitFn)> = OnceLock::new();

/// Installs the runtime's ways of ending the job (once per process; later calls are no-ops).
pub fn install(abort: AbortFn, global_exit: GlobalExitFn) {
    let _ = HOOKS.set((abort, global_exit));
}

/// Ends this PE because the job ended or cannot go on: says why, lets the runtime clean up.
pub fn abort(status: i32, reason: &str, is_error: bool) -> ! {
    match HOOKS.get() {
        Some((f, _)) => f(status, reason, is_error),
        None => {
            crate::log_error!("rocshmem", "{reason}; stopping this PE");
            exit_now(status)
        }
    }
}

/// Ends every PE of the job with `status` (`rocshmem_global_exit`).
pub fn global_exit(status: i32) -> ! {
    match HOOKS.get() {
        Some((_, f)) => f(status),
        None => exit_now(status),
    }
}

/// Flushes C and Rust stdio and ends the process immediately (other threads may be blocked).
pub fn exit_now(status: i32) -> ! {
    use std::io::Write;
    crate::log::summarize_repeats(false);
    crate::log::flush_untaken();
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: fflush(NULL) flushes every C stream; _exit never returns.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}
