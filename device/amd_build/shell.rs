//! The build's contact with the outside: environment variables (each a rerun trigger), PATH
//! lookups, running tools (alone or side by side), and cargo's warning lines.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) fn warn(msg: &str) {
    // cargo shows one line per cargo:warning; keep every message on one line.
    println!("cargo:warning=rocshmem: {}", msg.replace('\n', " | "));
}

pub(super) fn env(k: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={k}");
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

pub(super) fn which(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|p| p.is_file())
}

pub(super) fn run_ok(cmd: &mut Command) -> Result<String, String> {
    // The program and its source / bitcode inputs (the whole command is long).
    let inputs: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a.ends_with(".cpp") || (a.ends_with(".bc") && !a.starts_with('-')))
        .map(|a| Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or(a))
        .collect();
    let shown = format!("{} {}", cmd.get_program().to_string_lossy(), inputs.join(" "));
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let first: Vec<&str> = err.lines().filter(|l| l.contains("error")).take(3).collect();
            let first = if first.is_empty() { err.lines().take(3).collect::<Vec<_>>() } else { first };
            Err(format!("{shown} failed: {}", first.join(" | ")))
        }
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

pub(super) fn jobs() -> usize {
    std::env::var("NUM_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(4usize).max(1)
}

/// Calls `f` on each item on up to `n` threads; returns the first error.
pub(super) fn parallel_each<T: Send>(
    items: Vec<T>,
    n: usize,
    f: impl Fn(T) -> Result<(), String> + Sync,
) -> Result<(), String> {
    let queue = std::sync::Mutex::new(items);
    let errors = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                loop {
                    let Some(item) = queue.lock().unwrap().pop() else { break };
                    if let Err(e) = f(item) {
                        errors.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    match errors.into_inner().unwrap().into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
