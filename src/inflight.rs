//! Host API calls in flight, so that `rocshmem_finalize` never unmaps under a running call.
//!
//! Every entry point of `api/` counts itself in on entry and out on return ([`enter`],
//! [`leave`]); finalize first makes the runtime refuse new calls (the phase becomes
//! `Finalizing`: a call that starts now fails with "called after rocshmem_finalize"), then
//! [`drain`]s: it waits until no call that saw the runtime ready is still running. A call
//! blocked waiting for other PEs (`wait_until`, a barrier) gives up when it sees [`draining`]
//! (it would otherwise hold finalize forever).
//!
//! The fast path must cost next to nothing: an atomic read-modify-write costs about 25 ns on the
//! virtual machines CI runs on (a whole small `get`), so each thread counts in a slot of its own
//! with plain stores. The ordering this needs (a caller stores its count, then loads the phase;
//! finalize stores the phase, then loads every count: either the caller sees `Finalizing` or
//! finalize sees the count) comes from an asymmetric fence: callers only stop the compiler from
//! reordering, and finalize runs `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which makes
//! every running thread of the process execute a full memory barrier. Where the kernel lacks
//! membarrier (or a seccomp filter refuses it) callers pay a real fence instead.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, compiler_fence, fence};
use std::time::Duration;

/// One thread's count of calls in flight (more than 1 when a call nests another), and the name
/// of its outermost call (address and length of a `&'static str`, read by the thread's own waits
/// for the hang report: plain stores to a line the count writes anyway), alone in 128 bytes (two
/// cache lines: the adjacent-line prefetcher pairs lines).
#[repr(align(128))]
struct Slot {
    depth: AtomicUsize,
    call_addr: AtomicUsize,
    call_len: AtomicUsize,
}

impl Slot {
    const fn new() -> Slot {
        Slot { depth: AtomicUsize::new(0), call_addr: AtomicUsize::new(0), call_len: AtomicUsize::new(0) }
    }

    fn name(&self, call: &'static str) {
        self.call_addr.store(call.as_ptr() as usize, Ordering::Relaxed);
        self.call_len.store(call.len(), Ordering::Relaxed);
    }
}

/// Every slot ever made (finalize reads them all) and those whose thread has ended.
struct Registry {
    all: Vec<&'static Slot>,
    free: Vec<&'static Slot>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { all: Vec::new(), free: Vec::new() });

/// For calls made while this thread's slot is being destroyed (a thread-local destructor
/// calling the library at thread exit): shared, so counted with atomic adds.
static SHARED: Slot = Slot::new();

/// Whether finalize can fence every thread with membarrier (set once at init).
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);
static DRAINING: AtomicBool = AtomicBool::new(false);

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// This thread's slot; returned to the registry when the thread ends.
struct Mine(&'static Slot);

impl Mine {
    fn claim() -> Mine {
        let mut r = registry();
        let slot = r.free.pop().unwrap_or_else(|| {
            let s: &'static Slot = Box::leak(Box::new(Slot::new()));
            r.all.push(s);
            s
        });
        Mine(slot)
    }
}

impl Drop for Mine {
    fn drop(&mut self) {
        registry().free.push(self.0);
    }
}

thread_local! {
    static MINE: Mine = Mine::claim();
}

// linux/membarrier.h
const MEMBARRIER_CMD_QUERY: libc::c_long = 0;
const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> libc::c_long {
    // SAFETY: membarrier takes (cmd, flags, cpu_id) and touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_long, 0 as libc::c_long) }
}

/// Called once the runtime is up: registers this process for expedited membarriers, so that
/// calls from now on need no fence of their own.
pub fn setup() {
    if ASYMMETRIC.load(Ordering::Relaxed) {
        return;
    }
    let cmds = membarrier(MEMBARRIER_CMD_QUERY);
    let want = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    if cmds >= 0 && cmds & want == want && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 {
        ASYMMETRIC.store(true, Ordering::SeqCst);
    }
}

/// The token [`leave`] takes.
pub struct Token(&'static Slot);

/// Counts call `call` in. The caller reads the phase after this (SeqCst).
#[inline]
pub fn enter(call: &'static str) -> Token {
    let token = match MINE.try_with(|m| m.0) {
        Ok(slot) => {
            // Only this thread writes its slot.
            let depth = slot.depth.load(Ordering::Relaxed);
            if depth == 0 {
                slot.name(call);
            }
            slot.depth.store(depth + 1, Ordering::Relaxed);
            Token(slot)
        }
        Err(_) => {
            SHARED.depth.fetch_add(1, Ordering::SeqCst);
            Token(&SHARED)
        }
    };
    // The store above before the caller's load of the phase: finalize's membarrier supplies the
    // hardware barrier; without it, a fence of our own.
    if ASYMMETRIC.load(Ordering::Relaxed) {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
    token
}

/// Counts a call out.
#[inline]
pub fn leave(token: Token) {
    let slot = token.0;
    if std::ptr::eq(slot, &SHARED) {
        SHARED.depth.fetch_sub(1, Ordering::Release);
    } else {
        // Release: the call's accesses to the runtime happen before finalize sees it leave.
        slot.depth.store(slot.depth.load(Ordering::Relaxed) - 1, Ordering::Release);
    }
}

/// Names the call this thread is in for the hang report, for the calls that are not counted in
/// flight (`rocshmem_init`, `rocshmem_finalize`).
pub fn name_call(call: &'static str) {
    let _ = MINE.try_with(|m| m.0.name(call));
}

/// The outermost call this thread is in (or was in last), "" if none: for the hang report.
pub fn current_call() -> &'static str {
    MINE.try_with(|m| {
        let (addr, len) = (m.0.call_addr.load(Ordering::Relaxed), m.0.call_len.load(Ordering::Relaxed));
        if addr == 0 {
            return "";
        }
        // SAFETY: only this thread writes its slot's name, always from a `&'static str`.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(addr as *const u8, len)) }
    })
    .unwrap_or("")
}

/// Whether finalize is waiting for the calls in flight: a wait that has not ended yet gives up.
#[inline]
pub fn draining() -> bool {
    DRAINING.load(Ordering::Relaxed)
}

/// Waits until no call is in flight. The caller has already made new calls fail (phase
/// `Finalizing`, stored SeqCst) and is not itself counted in.
pub fn drain() {
    DRAINING.store(true, Ordering::SeqCst);
    // Every thread's count store (before its phase load) is now visible, or that thread sees
    // `Finalizing`. If the expedited command fails (it cannot once registered), the global one
    // waits for every CPU to pass a barrier; callers fenced themselves when neither was there.
    if ASYMMETRIC.load(Ordering::Relaxed) && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 {
        membarrier(MEMBARRIER_CMD_GLOBAL);
    }
    let slots: Vec<&'static Slot> = registry().all.clone();
    let mut pause = Duration::from_micros(20);
    while std::iter::once(&&SHARED).chain(slots.iter()).any(|s| s.depth.load(Ordering::Acquire) != 0) {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
    DRAINING.store(false, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_waits_for_calls_in_flight() {
        setup();
        let t = enter("rocshmem_test");
        assert_eq!(current_call(), "rocshmem_test");
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let d = std::sync::Arc::clone(&done);
        let h = std::thread::spawn(move || {
            // A thread that made calls and ended: its slot is counted out and reused.
            let t = enter("rocshmem_other");
            leave(t);
            drain();
            d.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(30));
        assert!(draining(), "finalize is waiting");
        assert!(!done.load(Ordering::SeqCst), "drain returned with a call in flight");
        leave(t);
        h.join().unwrap();
        assert!(done.load(Ordering::SeqCst) && !draining());
    }
}
