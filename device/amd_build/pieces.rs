//! The second level of the products' cache: single steps kept by the hash of what they read.
//!
//! The first level (`cache`) keeps the products whole, by a hash of every file under device/: any
//! change there rebuilds them. But what costs is the optimiser and the code generator (`opt -O3`
//! of each arch's linked library, each stream kernel's code object: about 90 CPU seconds per
//! arch), and their input is the front end's output, which many changes leave as it was (a
//! comment, a host-only or NVIDIA-only file, code no source instantiates). So each of those steps
//! is kept here by the hash of its input bitcode, its tool and its flags: such a change costs the
//! front end of every source (a few seconds each); a change to the code costs the optimiser of
//! the modules it reaches (each arch's library, and each stream module it changes). The front
//! end's output is the same in every checkout folder because sources are named relative to the
//! root and each gets a fixed `-cuid`
//! (plan::source_args).

use super::cache::cache_dir;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Entries kept (the newest by use): a run with a change makes at most three per arch (the
/// library and two stream modules: 17 with five arches and HIP 5.2's two), 0.2-10 MB each.
const KEEP: usize = 80;

pub(super) struct Pieces {
    dir: Option<PathBuf>,
    hits: Mutex<(usize, usize)>,
}

impl Pieces {
    /// The pieces' folder of the device cache (none without one: everything is made).
    pub(super) fn open() -> Pieces {
        let dir = cache_dir("amd-pieces");
        if let Some(d) = &dir {
            let _ = std::fs::create_dir_all(d);
        }
        Pieces { dir, hits: Mutex::new((0, 0)) }
    }

    /// Puts in `dest` the output of the step keyed `key`: from the cache, else made by `make`
    /// (which writes `dest`) and then kept.
    pub(super) fn get_or_make(
        &self,
        key: &str,
        dest: &Path,
        make: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let kept = self.dir.as_ref().map(|d| d.join(key));
        if let Some(k) = kept.as_ref().filter(|k| k.is_file()) {
            if std::fs::copy(k, dest).is_ok() {
                // The newest by use are kept (`trim`).
                let _ = std::fs::File::options().append(true).open(k).and_then(|f| f.set_modified(now()));
                self.hits.lock().unwrap().0 += 1;
                return Ok(());
            }
        }
        make()?;
        self.hits.lock().unwrap().1 += 1;
        if let Some(k) = kept {
            // Written beside, then renamed: a build beside this one never reads half a file.
            let tmp = k.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::copy(dest, &tmp).is_ok() {
                let _ = std::fs::rename(&tmp, &k);
            }
            let _ = std::fs::remove_file(&tmp);
        }
        Ok(())
    }

    /// "N of M reused", for the products' warning lines.
    pub(super) fn summary(&self) -> String {
        let (hit, made) = *self.hits.lock().unwrap();
        format!("{hit} of {} optimised pieces reused", hit + made)
    }

    /// Removes all but the `KEEP` newest entries.
    pub(super) fn trim(&self) {
        let Some(d) = &self.dir else { return };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        entries.sort();
        for (_, old) in entries.iter().rev().skip(KEEP) {
            let _ = std::fs::remove_file(old);
        }
    }
}

fn now() -> std::time::SystemTime {
    std::time::SystemTime::now()
}

/// The key of a step: its kind, the tool (path and `--version`), its arguments with the source
/// root written as `.` (every checkout folder gives the same key), and the bytes of its input.
pub(super) fn key(kind: &str, tool: &Path, args: &[String], root: &Path, input: &Path) -> Result<String, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    kind.hash(&mut h);
    tool_id(tool).hash(&mut h);
    let root = root.to_string_lossy();
    for a in args {
        a.replace(root.as_ref(), ".").hash(&mut h);
    }
    std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?.hash(&mut h);
    Ok(format!("{kind}-{:016x}", h.finish()))
}

/// The arguments of a command as text (for `key`).
pub(super) fn args_of(c: &Command) -> Vec<String> {
    c.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
}

/// A tool's path and version text, asked once per tool and build.
fn tool_id(tool: &Path) -> String {
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(v) = seen.lock().unwrap().get(tool) {
        return v.clone();
    }
    let version = Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let id = format!("{}\n{version}", tool.display());
    seen.lock().unwrap().insert(tool.to_path_buf(), id.clone());
    id
}
