//! Waiting and PE-to-PE synchronisation on the host platform.
//!
//! - [`wait_until`]: spin briefly, then yield, then sleep on this PE's doorbell futex. Peers that
//!   write into our heap ring the doorbell only when someone sleeps, so the fast path costs a
//!   fence and a load; 8 PEs on 2 cores do not busy-spin.
//! - [`barrier`]: a dissemination barrier over any set of PEs, built on monotonic per-pair
//!   counters in each PE's control region, one counter array per synchronisation slot (team).
//!   Counters never reset, so there is no reset race, and a slot can be reused by the next
//!   team: every signal sent in a barrier is consumed before that barrier ends.

use crate::error::{Error, Result};
use crate::heap::{Doorbell, SymmetricHeap};
use crate::pe_set::PeSet;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::{Duration, Instant};

/// How long to spin before yielding when every PE of the node has a CPU of its own, and to
/// yield before sleeping. With more PEs than CPUs a spinning PE holds the core the PE it waits
/// for needs, so waits go straight to yielding (see `set_spin`).
const SPIN_FOR: Duration = Duration::from_micros(20);
const YIELD_FOR: Duration = Duration::from_micros(200);
static SPIN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Chooses the wait policy for `local_pes` PEs on this node: spin only if they fit the CPUs
/// this process may run on.
pub fn set_spin(local_pes: usize) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    SPIN.store(local_pes <= cpus, Ordering::Relaxed);
}
/// Upper bound on one sleep: conditions changed without a doorbell (a plain store by another
/// thread, a store through rocshmem_ptr) are noticed within this time.
const SLEEP_MAX: Duration = Duration::from_millis(1);

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts =
        libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: `word` is a live 4-byte aligned atomic in shared memory (hence no FUTEX_PRIVATE).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            0usize,
            0u32,
        );
    }
}

fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: as above.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0usize, 0usize, 0u32);
    }
}

/// Tells the PE owning `target` that its memory changed (after the change is stored). Only the
/// first writer of a sleep period pays for the wake-up (`rung`); the others see it set. The
/// swap on `rung` orders this writer's stores before the sleeper's next check, which clears
/// `rung` with a swap too.
#[inline]
pub fn ring(bell: &Doorbell) {
    fence(Ordering::SeqCst);
    if bell.sleepers.load(Ordering::Relaxed) > 0 && bell.rung.swap(1, Ordering::SeqCst) == 0 {
        bell.word.fetch_add(1, Ordering::SeqCst);
        futex_wake_all(&bell.word);
    }
}

/// Blocks until `ready()` is true, sleeping (when it comes to that) on this PE's doorbell `me`
/// that the writers whose stores can make `ready()` true ring.
pub fn wait_until(me: &Doorbell, mut ready: impl FnMut() -> bool) {
    if ready() {
        return;
    }
    let start = Instant::now();
    let spin_for = if SPIN.load(Ordering::Relaxed) { SPIN_FOR } else { Duration::ZERO };
    let mut spins = 0u32;
    loop {
        if ready() {
            return;
        }
        spins += 1;
        if spins % 64 == 0 && start.elapsed() >= spin_for {
            break;
        }
        std::hint::spin_loop();
    }
    while start.elapsed() < YIELD_FOR {
        std::thread::yield_now();
        if ready() {
            return;
        }
    }
    let mut sleep = Duration::from_micros(50);
    // A wait this long is watched (ROCSHMEM_HANG_TIMEOUT; None when that is off).
    let mut watch = crate::watchdog::Wait::begin(start);
    loop {
        me.sleepers.fetch_add(1, Ordering::SeqCst);
        // A new sleep period: the next writer must ring again.
        me.rung.swap(0, Ordering::SeqCst);
        let seen = me.word.load(Ordering::SeqCst);
        if ready() {
            me.sleepers.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        futex_wait(&me.word, seen, sleep);
        me.sleepers.fetch_sub(1, Ordering::SeqCst);
        if ready() {
            return;
        }
        sleep = (sleep * 2).min(SLEEP_MAX);
        if let Some(w) = watch.as_mut() {
            w.check();
        }
    }
}

/// The IPC transport's barriers: per-PE bookkeeping of consumed signals: `consumed[slot * n_pes + from]`.
pub struct SyncState {
    n_pes: usize,
    consumed: Vec<AtomicU64>,
}

impl SyncState {
    pub fn new(slots: usize, n_pes: usize) -> SyncState {
        SyncState { n_pes, consumed: (0..slots * n_pes).map(|_| AtomicU64::new(0)).collect() }
    }

    /// Signals PE `to` on `slot`: bump its counter for us, then ring its doorbell.
    pub fn signal(&self, heap: &SymmetricHeap, slot: usize, to: usize) {
        let c = heap.control(to);
        c.pair(slot, heap.my_pe).fetch_add(1, Ordering::SeqCst);
        ring(&c.header().sync_bell);
    }

    /// Waits for the next signal from PE `from` on `slot`; gives up when `rocshmem_finalize`
    /// has begun on another thread of this process (see `inflight`).
    pub fn wait_signal(&self, heap: &SymmetricHeap, slot: usize, from: usize) -> Result<()> {
        let slot_from = &self.consumed[slot * self.n_pes + from];
        let want = slot_from.load(Ordering::Relaxed) + 1;
        let me = heap.control(heap.my_pe);
        let counter = me.pair(slot, from);
        let mut stopped = false;
        wait_until(&me.header().sync_bell, || {
            counter.load(Ordering::Acquire) >= want || {
                stopped = crate::inflight::draining();
                stopped
            }
        });
        if stopped {
            return Err(Error::FinalizedWhileWaiting);
        }
        slot_from.store(want, Ordering::Relaxed);
        Ok(())
    }

    /// Dissemination barrier over `set` on synchronisation slot `slot`. Completes every store
    /// this PE made before it (to any PE) before any member leaves.
    pub fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()> {
        self.barrier_with(heap, set, slot, |to| {
            self.signal(heap, slot, to);
            Ok(())
        })
    }

    /// [`Self::barrier`] with the signal to a PE sent by `signal` (a transport that does not map
    /// the peer: the GDA transport's NIC atomic on the peer's counter for this PE).
    pub fn barrier_with(
        &self,
        heap: &SymmetricHeap,
        set: PeSet,
        slot: usize,
        mut signal: impl FnMut(usize) -> Result<()>,
    ) -> Result<()> {
        let me = heap.my_pe;
        let idx = set.member_index(me)?;
        fence(Ordering::SeqCst);
        let n = set.size;
        let mut d = 1;
        while d < n {
            signal(set.pe((idx + d) % n))?;
            self.wait_signal(heap, slot, set.pe((idx + n - d) % n))?;
            d <<= 1;
        }
        fence(Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_wakes_on_ring_from_another_thread() {
        let hdr: &'static Doorbell = Box::leak(Box::new(unsafe { std::mem::zeroed::<Doorbell>() }));
        let flag: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            flag.store(1, Ordering::Release);
            ring(hdr);
        });
        let t0 = Instant::now();
        wait_until(hdr, || flag.load(Ordering::Acquire) == 1);
        assert!(t0.elapsed() < Duration::from_secs(1));
        t.join().unwrap();
    }
}
