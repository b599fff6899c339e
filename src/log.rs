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
    let line = LAST_ERROR.with(|e| e.borrow_mut().take());
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
        LAST_ERROR.with(|e| *e.borrow_mut() = Some(kept));
    }
    if enabled(level) {
        // One write call per line keeps lines from different PEs whole.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// Keeps an error line for `take_last_error` without printing it (errors reported once per
/// process still fail each call for callers that look, such as the Python package).
pub fn remember_error(call: &str, msg: std::fmt::Arguments<'_>) {
    let line = format_line(Level::Error, call, msg);
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(line.trim_end_matches('\n').to_string()));
}

fn format_line(level: Level, call: &str, msg: std::fmt::Arguments<'_>) -> String {
    let pe = MY_PE.load(Ordering::Relaxed);
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
