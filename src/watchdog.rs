//! Waits that last too long: the hang report (`ROCSHMEM_HANG_REPORT_TIMEOUT`, 60 s by default)
//! and the hang timeout (`ROCSHMEM_HANG_TIMEOUT`, off by default).
//!
//! A wait of the library (barrier, `wait_until`, collective, an init or finalize exchange, an RO
//! request) that reached its sleeping phase is listed in a table while it lasts. When it has
//! lasted longer than the report timeout it asks the rendezvous hub, once, for a report: the hub
//! asks every PE where it waits (each PE's watcher thread answers from the table, whatever the
//! program's threads do) and sends the answers back, which this PE prints in one line; the job
//! keeps waiting. Past the hang timeout the hub ends the job with the same report instead. If
//! the job is not ended within a few seconds (the hub lives in a process that cannot run either),
//! the PE stops itself with its own report. `interrupt` asks for the same report on Ctrl-C.
//!
//! Costs nothing on the fast path: the name of the call a thread is in rides on the count of
//! calls in flight (`inflight`), and a wait is listed only once it sleeps (after ~200 µs); it
//! then looks at the clock once per sleep (at most 1 ms).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The two limits, read once from the environment through the table (None: off).
struct Limits {
    report: Option<Duration>,
    stop: Option<Duration>,
}

fn limits() -> &'static Limits {
    static L: OnceLock<Limits> = OnceLock::new();
    L.get_or_init(|| {
        let seconds = |name| match crate::env::lookup(name) {
            Some(crate::env::Value::Seconds(s)) if s > 0.0 => Some(Duration::from_secs_f64(s)),
            _ => None,
        };
        Limits { report: seconds("ROCSHMEM_HANG_REPORT_TIMEOUT"), stop: seconds("ROCSHMEM_HANG_TIMEOUT") }
    })
}

/// What a PE asks the hub for (or tells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Ask {
    /// The answer to the hub's query: where this PE waits.
    Answer = 0,
    /// A wait passed the report timeout: send the report back, the job goes on.
    Report = 1,
    /// A wait passed `ROCSHMEM_HANG_TIMEOUT`: end the job with the report.
    Stop = 2,
    /// This PE got SIGINT (Ctrl-C): end the job with the report.
    Interrupt = 3,
    /// This PE got SIGTERM (what mpirun sends on Ctrl-C): end the job with the report.
    Terminate = 4,
}

impl Ask {
    const ALL: [Ask; 5] = [Ask::Answer, Ask::Report, Ask::Stop, Ask::Interrupt, Ask::Terminate];

    pub fn from_u8(v: u8) -> Option<Ask> {
        Ask::ALL.into_iter().find(|a| *a as u8 == v)
    }

    /// The ask of a PE that got signal `sig` (`interrupt`).
    pub fn for_signal(sig: i32) -> Ask {
        if sig == libc::SIGTERM { Ask::Terminate } else { Ask::Interrupt }
    }

    /// For a signal's ask: the exit status of a process it killed, and what happened in words.
    pub fn signal(self) -> Option<(i32, &'static str)> {
        match self {
            Ask::Interrupt => Some((128 + libc::SIGINT, "interrupted (SIGINT)")),
            Ask::Terminate => Some((128 + libc::SIGTERM, "terminated (SIGTERM)")),
            _ => None,
        }
    }
}

struct Entry {
    id: u64,
    call: &'static str,
    since: Instant,
}

static WAITS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Sends (what, how long this PE has waited, where it waits) to the hub; false when it could
/// not be sent.
pub type Sink = Arc<dyn Fn(Ask, Duration, String) -> bool + Send + Sync>;
static SINK: Mutex<Option<Sink>> = Mutex::new(None);

/// Where reports go (the job's rendezvous connection), or None when there is none.
pub fn set_sink(sink: Option<Sink>) {
    *SINK.lock().unwrap_or_else(|e| e.into_inner()) = sink;
}

/// Sends `ask` to the hub; false when there is no hub or it could not be sent.
pub fn tell_hub(ask: Ask, waited: Duration) -> bool {
    let sink = SINK.lock().unwrap_or_else(|e| e.into_inner()).clone();
    sink.is_some_and(|s| s(ask, waited, report()))
}

/// How long a PE that reported a stuck wait gives the hub to end the job before it stops
/// itself (the hub may live in a process that is stopped too).
pub const SELF_STOP_AFTER: Duration = Duration::from_secs(5);

/// One wait of one thread, watched while it lasts.
pub struct Wait {
    id: u64,
    since: Instant,
    report_asked: bool,
    stop_asked: Option<Instant>,
}

impl Wait {
    /// Starts watching a wait of the calling thread that began at `since` (None when both the
    /// report and the stop are off).
    pub fn begin(since: Instant) -> Option<Wait> {
        let l = limits();
        if l.report.is_none() && l.stop.is_none() {
            return None;
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let call = crate::inflight::current_call();
        WAITS.lock().unwrap_or_else(|e| e.into_inner()).push(Entry { id, call, since });
        Some(Wait { id, since, report_asked: false, stop_asked: None })
    }

    /// Called now and then while waiting: past the report timeout, asks for the report once;
    /// past the hang timeout, asks the hub to stop the job, then stops this PE if the job was
    /// not ended in time.
    pub fn check(&mut self) {
        let l = limits();
        let waited = self.since.elapsed();
        if let Some(stop) = l.stop.filter(|s| waited >= *s) {
            match self.stop_asked {
                None => {
                    self.stop_asked = Some(Instant::now());
                    if !tell_hub(Ask::Stop, waited) {
                        stop_self(stop, "nothing else can end it (no rendezvous to tell)");
                    }
                }
                Some(at) if at.elapsed() >= SELF_STOP_AFTER => {
                    stop_self(stop, "the rendezvous did not end the job (its process may not be running either)")
                }
                Some(_) => {}
            }
            return;
        }
        if !self.report_asked && l.report.is_some_and(|r| waited >= r) {
            self.report_asked = true;
            // The hub answers with the report (`print_report`); without one, this PE's own.
            if !tell_hub(Ask::Report, waited) {
                print_own_report(self.since);
            }
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

/// Prints the report the hub gathered for this PE's ask (`where_pes`: "PE 0 waits in ...;
/// PE 1 ..."), as one line, whatever `ROCSHMEM_DEBUG_LEVEL` says short of NONE.
pub fn print_report(where_pes: &str) {
    let limit = limits().report.map_or(0.0, |r| r.as_secs_f64());
    crate::log::notice(
        "rocshmem",
        format_args!(
            "a wait has lasted longer than ROCSHMEM_HANG_REPORT_TIMEOUT={limit} s (a deadlock?): {where_pes}; \
             the job keeps waiting (reported once; set ROCSHMEM_HANG_TIMEOUT=<s> to stop it instead)"
        ),
    );
}

/// Without a rendezvous (a single PE): this PE's own report, unless one was printed while this
/// wait (begun at `since`) was already in progress.
fn print_own_report(since: Instant) {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if last.is_some_and(|t| t >= since) {
        return;
    }
    *last = Some(Instant::now());
    drop(last);
    print_report(&format!("this PE {}", report()));
}

fn stop_self(limit: Duration, why: &str) -> ! {
    let reason = format!("this PE {} (ROCSHMEM_HANG_TIMEOUT={}) and {why}", report(), limit.as_secs_f64());
    crate::stop::abort(1, &reason, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_listed_while_they_last() {
        // `begin` needs the limits of the environment, so insert directly as `begin` does.
        crate::inflight::name_call("rocshmem_barrier_all");
        let call = crate::inflight::current_call();
        WAITS.lock().unwrap().push(Entry { id: u64::MAX, call, since: Instant::now() });
        let r = report();
        assert!(r.contains("waits in rocshmem_barrier_all for 0."), "{r}");
        WAITS.lock().unwrap().retain(|e| e.id != u64::MAX);
    }

    #[test]
    fn asks_round_trip_through_their_byte() {
        for a in Ask::ALL {
            assert_eq!(Ask::from_u8(a as u8), Some(a));
        }
        assert_eq!(Ask::from_u8(9), None);
        assert!(Ask::Interrupt > Ask::Stop && Ask::Stop > Ask::Report, "the stronger ask wins a round");
    }
}
