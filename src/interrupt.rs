//! Ctrl-C during a job: the report of where every PE waits, then the job ends.
//!
//! While the runtime is up, a process that left SIGINT (or SIGTERM) at its default gets a
//! handler that only writes the signal's number to a pipe; a thread of the library reads it and
//! asks the rendezvous hub to end the job with the report (`watchdog::Ask::Interrupt`): every PE
//! then prints the reason, "PE 0 waits in rocshmem_int_wait_until for 12.0 s; PE 1 ...", and
//! exits with 128 + the signal, as a PE killed by it would. SIGTERM too, because that is what a
//! PE gets when Ctrl-C reaches mpirun (Open MPI gives each rank a process group of its own, so
//! the terminal's SIGINT reaches only mpirun, which terminates the ranks), a batch system's time
//! limit or `timeout`. Without a hub (a single PE), or if the hub does not end the job within a
//! few seconds, the PE prints its own report and stops. A program with its own handler for the
//! signal (or one that ignores it) is left alone, and so is a forked child (`forget_in_child`).

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The signals handled.
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// The pipe's write end while the handler is installed (-1: not installed).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) and errno are async-signal-safe; the byte is ours.
        unsafe {
            let saved = *libc::__errno_location();
            libc::write(fd, [sig as u8].as_ptr().cast(), 1);
            *libc::__errno_location() = saved;
        }
    }
}

/// The disposition of `sig` now.
fn current(sig: libc::c_int) -> Option<libc::sigaction> {
    // SAFETY: sigaction with a NULL new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(sig, std::ptr::null(), &mut old) == 0).then_some(old)
    }
}

/// Whether `sig` is handled by [`on_signal`] now.
fn ours(sig: libc::c_int) -> bool {
    current(sig).is_some_and(|a| a.sa_sigaction == on_signal as *const () as libc::sighandler_t)
}

/// Installs the handler for each signal left at its default (called when the runtime is up).
pub fn install() {
    let free: Vec<libc::c_int> =
        SIGNALS.into_iter().filter(|s| current(*s).is_some_and(|a| a.sa_sigaction == libc::SIG_DFL)).collect();
    if PIPE_WRITE.load(Ordering::Relaxed) >= 0 || free.is_empty() {
        return;
    }
    let mut fds = [0; 2];
    // SAFETY: a new pipe into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let read_end = fds[0];
    let started = std::thread::Builder::new().name("rocshmem-signal".into()).spawn(move || wait_for_signal(read_end));
    if started.is_err() {
        // SAFETY: our own descriptors.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return;
    }
    PIPE_WRITE.store(fds[1], Ordering::SeqCst);
    for sig in free {
        // SAFETY: a handler that only writes to a pipe; SA_RESTART keeps the program's system
        // calls from failing with EINTR.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Puts each signal whose handler is still ours back to its default. Only async-signal-safe
/// calls (also used in a forked child).
fn restore_defaults() {
    for sig in SIGNALS {
        if ours(sig) {
            // SAFETY: back to the default disposition.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
    }
}

/// Puts the signals back to their default, and ends the reading thread (at finalize).
pub fn uninstall() {
    restore_defaults();
    let fd = PIPE_WRITE.swap(-1, Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: our descriptor; the reader sees end of file and returns.
        unsafe { libc::close(fd) };
    }
}

/// In a forked child (no reading thread there, and the pipe is the parent's): the signals go
/// back to their default.
pub fn forget_in_child() {
    restore_defaults();
    PIPE_WRITE.store(-1, Ordering::SeqCst);
}

/// How long an interrupted PE waits for the hub to end the job (it gathers every PE's answer
/// for up to 2 s) before it stops with its own report.
const HUB_ENDS_JOB_WITHIN: Duration = Duration::from_secs(4);

fn wait_for_signal(read_end: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte of our pipe into `byte`.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        // SAFETY: our descriptor (the write end was closed: finalize).
        unsafe { libc::close(read_end) };
        return;
    }
    let ask = crate::watchdog::Ask::for_signal(libc::c_int::from(byte));
    // The hub asks every PE where it waits and ends the job with the report; more signals (the
    // terminal's and the launcher's) change nothing meanwhile.
    let t0 = Instant::now();
    if crate::watchdog::tell_hub(ask, Duration::ZERO) {
        while t0.elapsed() < HUB_ENDS_JOB_WITHIN {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let (status, what) = ask.signal().expect("a signal's ask");
    crate::stop::abort(status, &format!("{what}: this PE {}", crate::watchdog::report()), true)
}
