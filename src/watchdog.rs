//! The hang watchdog (`ROCSHMEM_HANG_TIMEOUT`, off by default).
//!
//! A wait of the library (barrier, `wait_until`, collective, an init or finalize exchange, an RO
//! request) that lasts longer than the timeout tells the rendezvous hub, which asks every PE
//! where it waits (each PE's watcher thread answers from the table below), then ends the job
//! with one line naming each PE and the call it waits in, or saying that it did not answer
//! (stopped, or not running). If the job is not ended within a few seconds (the hub lives in a
//! process that cannot run either), the PE stops itself with its own report.
//!
//! Costs nothing when off; when on, one thread-local store per API call and a table entry per
//! wait that reached the sleeping phase (after ~200 µs).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The timeout (None: off), read once from the environment through the table.
fn timeout() -> Option<Duration> {
    static T: OnceLock<Option<Duration>> = OnceLock::new();
    *T.get_or_init(|| match crate::env::lookup("ROCSHMEM_HANG_TIMEOUT") {
        Some(crate::env::Value::Seconds(s)) if s > 0.0 => Some(Duration::from_secs_f64(s)),
        _ => None,
    })
}

/// Whether the watchdog is on.
#[inline]
pub fn on() -> bool {
    timeout().is_some()
}

thread_local! {
    static CALL: Cell<&'static str> = const { Cell::new("") };
}

/// Records the API call this thread is in (the API boundary calls it when the watchdog is on).
#[inline]
pub fn enter(call: &'static str) {
    CALL.with(|c| c.set(call));
}

struct Entry {
    id: u64,
    call: &'static str,
    since: Instant,
}

static WAITS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Sends (stuck, report) to the hub; false when it could not be sent.
pub type Sink = Arc<dyn Fn(bool, String) -> bool + Send + Sync>;
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Where reports go (the job's rendezvous connection), or None when there is none.
pub fn set_sink(sink: Option<Sink>) {
    *SINK.lock().unwrap_or_else(|e| e.into_inner()) = sink;
}

/// How long a PE that reported a stuck wait gives the hub to end the job before it stops
/// itself (the hub may live in a process that is stopped too).
const SELF_STOP_AFTER: Duration = Duration::from_secs(5);

/// One wait of one thread, watched while it lasts.
pub struct Wait {
    id: u64,
    since: Instant,
    limit: Duration,
    reported: Option<Instant>,
}

impl Wait {
    /// Starts watching a wait of the calling thread that began at `since` (None when the
    /// watchdog is off).
    pub fn begin(since: Instant) -> Option<Wait> {
        let limit = timeout()?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let call = CALL.with(Cell::get);
        WAITS.lock().unwrap_or_else(|e| e.into_inner()).push(Entry { id, call, since });
        Some(Wait { id, since, limit, reported: None })
    }

    /// Called now and then while waiting: past the timeout, reports once, then stops this PE if
    /// the job was not ended in time.
    pub fn check(&mut self) {
        if self.since.elapsed() < self.limit {
            return;
        }
        match self.reported {
            None => {
                self.reported = Some(Instant::now());
                let sink = SINK.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if !sink.is_some_and(|s| s(true, report())) {
                    stop_self("nothing else can end it (no rendezvous to tell)");
                }
            }
            Some(at) if at.elapsed() >= SELF_STOP_AFTER => {
                stop_self("the rendezvous did not end the job (its process may not be running either)")
            }
            Some(_) => {}
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        WAITS.lock().unwrap_or_else(|e| e.into_inner()).retain(|e| e.id != self.id);
    }
}

/// Where this PE waits, as the hub prints it after "PE <n> ".
pub fn report() -> String {
    let waits = WAITS.lock().unwrap_or_else(|e| e.into_inner());
    if waits.is_empty() {
        return "is not waiting in rocSHMEM (busy in the program, or between calls)".into();
    }
    let parts: Vec<String> = waits
        .iter()
        .map(|e| {
            let call = if e.call.is_empty() { "a rocSHMEM call" } else { e.call };
            format!("waits in {call} for {:.1} s", e.since.elapsed().as_secs_f64())
        })
        .collect();
    parts.join(", and ")
}

fn stop_self(why: &str) -> ! {
    let limit = timeout().map_or(0.0, |t| t.as_secs_f64());
    let reason = format!("this PE {} (ROCSHMEM_HANG_TIMEOUT={limit}) and {why}", report());
    crate::stop::abort(1, &reason, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_listed_while_they_last() {
        // The table works whether or not the watchdog is on; `begin` needs it on, so insert
        // directly as `begin` does.
        enter("rocshmem_barrier_all");
        WAITS.lock().unwrap().push(Entry { id: u64::MAX, call: CALL.with(Cell::get), since: Instant::now() });
        let r = report();
        assert!(r.contains("waits in rocshmem_barrier_all for 0."), "{r}");
        WAITS.lock().unwrap().retain(|e| e.id != u64::MAX);
    }
}
