//! One-line diagnostics on stderr, filtered by `ROCSHMEM_DEBUG_LEVEL`.
//!
//! Format: `rocshmem: PE <n>: <call>: <message>`; before the PE number is known, `PE ?`.
//! Levels follow upstream: NONE < ERROR < WARN < ENV < VERSION < INFO < API < TRACE, and a level
//! enables everything at or below it. Modifiers `:no<level>` switch one category off and `:env`
//! switches the environment dump on whatever the level; `:stats` turns on the operation
//! counters of `rocshmem_dump_stats`.

use once_cell::sync::Lazy;
use std::cell::Cell;
use std::cell::RefCell;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None = 0,
    Error = 1,
    Warn = 2,
    Env = 3,
    Version = 4,
    Info = 5,
    Api = 6,
    Trace = 7,
}

const NAMES: [(&str, Level); 8] = [
    ("NONE", Level::None),
    ("ERROR", Level::Error),
    ("WARN", Level::Warn),
    ("ENV", Level::Env),
    ("VERSION", Level::Version),
    ("INFO", Level::Info),
    ("API", Level::Api),
    ("TRACE", Level::Trace),
];

/// Which categories print, and whether operation statistics are counted (`:stats`).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    enabled: [bool; 8],
    stats: bool,
}

impl Filter {
    /// Parses `ROCSHMEM_DEBUG_LEVEL` text, e.g. `WARN`, `INFO:nowarn`, `ERROR:env`.
    /// Unknown words are ignored with the default kept, so a typo never silences errors.
    pub fn parse(text: &str) -> Filter {
        let mut parts = text.split(':').map(|s| s.trim().to_ascii_uppercase());
        let level =
            parts.next().and_then(|w| NAMES.iter().find(|(n, _)| *n == w).map(|(_, l)| *l)).unwrap_or(Level::Error);
        let mut enabled = [false; 8];
        for (_, l) in NAMES.iter().skip(1) {
            enabled[*l as usize] = *l <= level;
        }
        let mut stats = false;
        for word in parts {
            if word == "STATS" {
                stats = true;
            } else if let Some(rest) = word.strip_prefix("NO") {
                if let Some((_, l)) = NAMES.iter().find(|(n, _)| *n == rest) {
                    enabled[*l as usize] = false;
                }
            } else if let Some((_, l)) = NAMES.iter().find(|(n, _)| *n == word) {
                enabled[*l as usize] = true;
            }
        }
        Filter { enabled, stats }
    }

    pub fn on(&self, level: Level) -> bool {
        level != Level::None && self.enabled[level as usize]
    }
}

static FILTER: Lazy<Filter> =
    Lazy::new(|| Filter::parse(&std::env::var("ROCSHMEM_DEBUG_LEVEL").unwrap_or_else(|_| "ERROR".into())));

static MY_PE: AtomicI32 = AtomicI32::new(-1);

/// Records this process's PE number for the log prefix.
pub fn set_pe(pe: i32) {
    MY_PE.store(pe, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    FILTER.on(level)
}

/// Whether operation statistics are counted (`ROCSHMEM_DEBUG_LEVEL=...:stats`).
#[inline]
pub fn stats_on() -> bool {
    FILTER.stats
}

thread_local! {
    /// The last error line this thread wrote (or would have written, had the filter allowed
    /// it) since `take_last_error` last took it.
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether this thread's caller takes its error lines (`rocshmemi_errors_to_caller`):
    /// then they are kept for `take_last_error` and not printed.
    static CALLER_TAKES: Cell<bool> = const { Cell::new(false) };
}

/// Error lines kept for a caller that takes them, not printed, and not taken yet: printed by
/// [`flush_untaken`] if the process ends first (so an error that stops the job is never lost).
static UNTAKEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Takes the last error line this thread reported (without the newline), leaving none.
pub fn take_last_error() -> Option<String> {
    let line = LAST_ERROR.try_with(|e| e.borrow_mut().take()).ok().flatten();
    if let Some(l) = &line {
        if let Ok(mut u) = UNTAKEN.lock() {
            if let Some(i) = u.iter().position(|x| x == l) {
                u.remove(i);
            }
        }
    }
    line
}

/// Makes this thread's error lines go to its caller only (`on`), or to stderr as well (the
/// default); returns the previous setting. For bindings that raise each error as an
/// exception carrying the line (the Python package), so that it is shown once.
pub fn set_caller_takes(on: bool) -> bool {
    CALLER_TAKES.with(|c| c.replace(on))
}

/// Prints the error lines a caller was to take but did not (the process is ending).
pub fn flush_untaken() {
    let lines = match UNTAKEN.lock() {
        Ok(mut u) => std::mem::take(&mut *u),
        Err(_) => return,
    };
    for l in lines {
        let _ = std::io::stderr().lock().write_all(format!("{l}\n").as_bytes());
    }
}

/// Writes one line if `level` is enabled. Use the `log_*!` macros. Error lines are also kept
/// for `take_last_error`, whatever the filter says.
pub fn write(level: Level, call: &str, msg: std::fmt::Arguments<'_>) {
    let keep = level == Level::Error;
    if !enabled(level) && !keep {
        return;
    }
    let line = format_line(level, call, msg);
    if keep {
        let kept = line.trim_end_matches('\n').to_string();
        if CALLER_TAKES.with(|c| c.get()) {
            // The caller raises it (once); kept in UNTAKEN until taken, in case the process ends.
            if let Ok(mut u) = UNTAKEN.lock() {
                u.retain(|x| x != &kept);
                u.push(kept.clone());
            }
            // One call reported two errors: the caller takes the last, so the earlier one is
            // printed now rather than lost.
            if let Some(older) = LAST_ERROR.with(|e| e.borrow_mut().replace(kept)) {
                let still = UNTAKEN.lock().map(|mut u| match u.iter().position(|x| x == &older) {
                    Some(i) => {
                        u.remove(i);
                        true
                    }
                    None => false,
                });
                if still.unwrap_or(false) && enabled(level) {
                    let _ = std::io::stderr().lock().write_all(format!("{older}\n").as_bytes());
                }
            }
            return;
        }
        keep_last(&line);
    }
    if enabled(level) {
        // One write call per line keeps lines from different PEs whole.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// A line every user must see that is not an error (the hang report, after which the job goes
/// on): printed whenever errors are, tagged `warning`.
pub fn notice(call: &str, msg: std::fmt::Arguments<'_>) {
    if enabled(Level::Error) {
        let _ = std::io::stderr().lock().write_all(format_line(Level::Warn, call, msg).as_bytes());
    }
}

/// Keeps an error line for `take_last_error` without printing it (errors reported once per
/// process still fail each call for callers that look, such as the Python package).
pub fn remember_error(call: &str, msg: std::fmt::Arguments<'_>) {
    keep_last(&format_line(Level::Error, call, msg));
}

/// Keeps `line` as this thread's last error (not at all while the thread's storage is going
/// away: at exit, or in a thread-local destructor).
fn keep_last(line: &str) {
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = Some(line.trim_end_matches('\n').to_string()));
}

/// Before init (or a failed one) tells this process's PE number: the one rocshmem-run gave it
/// (`ROCSHMEM_RUN_RANK`), or -1.
fn launcher_pe() -> i32 {
    static PE: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *PE.get_or_init(|| match crate::env::lookup("ROCSHMEM_RUN_RANK") {
        Some(crate::env::Value::Int(pe)) if pe >= 0 => pe as i32,
        _ => -1,
    })
}

fn format_line(level: Level, call: &str, msg: std::fmt::Arguments<'_>) -> String {
    let pe = match MY_PE.load(Ordering::Relaxed) {
        -1 => launcher_pe(),
        pe => pe,
    };
    let tag = match level {
        Level::Error => "error",
        Level::Warn => "warning",
        _ => "info",
    };
    if pe >= 0 {
        format!("rocshmem: PE {pe}: {tag}: {call}: {msg}\n")
    } else {
        format!("rocshmem: PE ?: {tag}: {call}: {msg}\n")
    }
}

/// Lines printed for errors of one kind from one entry point before further ones are only
/// counted (a loop that keeps failing would otherwise print a line per call: 136,024 lines in
/// 0.2 s from a thread calling after finalize).
pub const REPEATS_SHOWN: u64 = 3;

/// The errors of one kind from one entry point (the same text up to numbers and addresses): how
/// many there were, and those held back since the last summary (with the last one's text).
struct Repeats {
    seen: u64,
    held: u64,
    last: String,
}

type RepeatKey = (&'static str, u64);

/// What makes errors "the same": their text with every number and address (a run of letters and
/// digits that starts with a digit) taken out.
fn same_error_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut in_number = false;
    for c in text.chars() {
        in_number = c.is_ascii_digit() || (in_number && c.is_ascii_alphanumeric());
        if !in_number {
            c.hash(&mut h);
        }
    }
    h.finish()
}
static REPEATS: Lazy<std::sync::Mutex<std::collections::HashMap<RepeatKey, Repeats>>> = Lazy::new(Default::default);

/// Reports a failed call (one line), unless the same error from the same entry point was already
/// printed [`REPEATS_SHOWN`] times: then it is counted, and the count printed by
/// [`summarize_repeats`] (at finalize and at exit). Every error is kept for `take_last_error`.
pub fn error_limited(call: &'static str, e: &crate::error::Error) {
    let text = e.to_string();
    let key = (call, same_error_key(&text));
    let seen = {
        let mut table = REPEATS.lock().unwrap_or_else(|p| p.into_inner());
        let r = table.entry(key).or_insert(Repeats { seen: 0, held: 0, last: String::new() });
        r.seen += 1;
        if r.seen > REPEATS_SHOWN {
            r.held += 1;
            r.last.clone_from(&text);
        }
        r.seen
    };
    match seen {
        n if n < REPEATS_SHOWN => write(Level::Error, call, format_args!("{text}")),
        REPEATS_SHOWN => {
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a function of this library that takes no arguments.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(summarize_at_exit);
            });
            write(
                Level::Error,
                call,
                format_args!(
                    "{text} ({call} failed like this {REPEATS_SHOWN} times: further such errors are counted, not \
                     printed; the count is printed at rocshmem_finalize and at exit)"
                ),
            )
        }
        _ => remember_error(call, format_args!("{text}")),
    }
}

/// Prints, for each entry point and kind of error held back since the last summary, how many
/// were not printed and the last one. `wait`: take the table's lock even if another thread holds
/// it (at finalize); at exit only if it is free.
pub fn summarize_repeats(wait: bool) {
    let mut table = match REPEATS.try_lock() {
        Ok(t) => t,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) if wait => REPEATS.lock().unwrap_or_else(|p| p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    let mut held: Vec<(&'static str, u64, String)> = table
        .iter_mut()
        .filter(|(_, r)| r.held > 0)
        .map(|((call, _), r)| (*call, std::mem::take(&mut r.held), std::mem::take(&mut r.last)))
        .collect();
    drop(table);
    held.sort();
    for (call, n, last) in held {
        write(Level::Error, call, format_args!("{n} more error(s) like the above were not printed; the last: {last}"));
    }
}

extern "C" fn summarize_at_exit() {
    // A panic must not cross into C (it would abort the exiting process).
    let _ = std::panic::catch_unwind(|| summarize_repeats(false));
}

#[macro_export]
macro_rules! log_error { ($call:expr, $($a:tt)*) => { $crate::log::write($crate::log::Level::Error, $call, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_warn { ($call:expr, $($a:tt)*) => { $crate::log::write($crate::log::Level::Warn, $call, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_info { ($call:expr, $($a:tt)*) => { $crate::log::write($crate::log::Level::Info, $call, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_trace { ($call:expr, $($a:tt)*) => { $crate::log::write($crate::log::Level::Trace, $call, format_args!($($a)*)) } }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_enable_everything_below() {
        let f = Filter::parse("WARN");
        assert!(f.on(Level::Error) && f.on(Level::Warn) && !f.on(Level::Info));
        let f = Filter::parse("none");
        assert!(!f.on(Level::Error));
        let f = Filter::parse("TRACE:nowarn");
        assert!(f.on(Level::Trace) && !f.on(Level::Warn) && f.on(Level::Error));
        let f = Filter::parse("ERROR:env");
        assert!(f.on(Level::Env) && !f.on(Level::Warn));
        assert!(Filter::parse("ERROR:stats").stats && !Filter::parse("ERROR").stats);
        let f = Filter::parse("bogus");
        assert!(f.on(Level::Error) && !f.on(Level::Warn), "unknown level keeps the default");
    }

    #[test]
    fn errors_are_the_same_up_to_numbers_and_addresses() {
        let k = same_error_key;
        assert_eq!(
            k("atomic target 0x7f00001 is not aligned to 8 bytes"),
            k("atomic target 0x55a1 is not aligned to 8 bytes")
        );
        assert_eq!(k("timed out after 2.0 s"), k("timed out after 31.5 s"));
        assert_ne!(k("wrong secret: this unique id belongs to another job"), k("timed out after 2.0 s"));
        assert_ne!(k("invalid PE 9"), k("invalid argument: dest 0x10 overlaps"));
    }

    #[test]
    fn the_last_error_line_is_kept_per_thread_and_taken_once() {
        assert_eq!(take_last_error(), None);
        write(Level::Warn, "rocshmem_x", format_args!("only a warning"));
        assert_eq!(take_last_error(), None, "warnings are not errors");
        write(Level::Error, "rocshmem_x", format_args!("first"));
        write(Level::Error, "rocshmem_y", format_args!("second: raise ROCSHMEM_HEAP_SIZE"));
        let other = std::thread::spawn(take_last_error).join().unwrap();
        assert_eq!(other, None, "another thread sees none of this thread's errors");
        let line = take_last_error().unwrap();
        assert!(line.ends_with(": error: rocshmem_y: second: raise ROCSHMEM_HEAP_SIZE"), "{line}");
        assert!(line.starts_with("rocshmem: PE "), "{line}");
        assert_eq!(take_last_error(), None, "taken once");
    }

    #[test]
    fn errors_the_caller_takes_are_not_printed_until_the_process_ends() {
        std::thread::spawn(|| {
            assert!(!set_caller_takes(true), "off by default");
            write(Level::Error, "rocshmem_z", format_args!("taken by the caller"));
            let untaken = |needle: &str| UNTAKEN.lock().unwrap().iter().any(|l| l.contains(needle));
            assert!(untaken("taken by the caller"), "kept in case the process ends before it is taken");
            let line = take_last_error().unwrap();
            assert!(line.ends_with(": error: rocshmem_z: taken by the caller"), "{line}");
            assert!(!untaken("taken by the caller"), "taken: never printed");
            write(Level::Error, "rocshmem_z", format_args!("never taken"));
            assert!(untaken("never taken"));
            flush_untaken();
            assert!(!untaken("never taken"), "printed by flush_untaken");
            assert!(set_caller_takes(false));
            let _ = take_last_error();
        })
        .join()
        .unwrap();
    }
}
